//! Questions over time: several at once, answers in parts, listeners,
//! engines sharing one store, deferred tools, nothing after a handle.

use super::*;

#[test]
fn a_core_task_asks_several_questions_at_once_and_resumes_when_all_are_answered() {
    let mut h = harness();
    h.init("2025-11-25", json!({"elicitation":{}}));
    let created = h.request(call(json!(1), "maybe", json!({"task":{}})));
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let job = h.jobs.pop().unwrap();
    let mut out = Vec::new();
    let asked = vec![
        ("first".to_string(), question("First?")),
        ("last".to_string(), question("Last?")),
    ];
    h.engine.on_ask_all(job.id, asked, &mut out);
    let sent = h.collect(out);
    assert_eq!(sent.len(), 2, "both requests go out at once");
    for request in &sent {
        common::assert_valid(REV, "ElicitRequest", request);
        assert_eq!(
            request["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            task_id.as_str()
        );
    }
    let status = |h: &mut Harness| {
        h.request(task_request(json!(9), "tasks/get", &task_id))["result"]["status"].clone()
    };
    assert_eq!(status(&mut h), "input_required");
    // Answered out of order: the tool waits for both.
    h.send(json!({"jsonrpc":"2.0","id":sent[1]["id"],"result":accept("Lovelace")}));
    assert!(h.answers.is_empty());
    assert_eq!(status(&mut h), "input_required");
    h.send(json!({"jsonrpc":"2.0","id":sent[0]["id"],"result":accept("Ada")}));
    assert_eq!(
        h.answers,
        vec![(
            job.id,
            Ok(json!({"first": accept("Ada"), "last": accept("Lovelace")}))
        )]
    );
    assert_eq!(status(&mut h), "working");
}

#[test]
fn a_failed_request_ends_the_wait_for_all_of_its_round() {
    let mut h = harness();
    h.init("2025-06-18", json!({"elicitation":{}}));
    h.send(call(json!(1), "plain", json!({})));
    let job = h.jobs.pop().unwrap();
    let mut out = Vec::new();
    let asked = vec![
        ("a".to_string(), question("A?")),
        ("b".to_string(), question("B?")),
    ];
    h.engine.on_ask_all(job.id, asked, &mut out);
    let sent = h.collect(out);
    h.send(
        json!({"jsonrpc":"2.0","id":sent[0]["id"],"error":{"code":-1,"message":"dialog closed"}}),
    );
    let (_, answer) = h.answers.pop().unwrap();
    assert!(answer.unwrap_err().contains("dialog closed"));
    // The other answer, arriving late, is for nobody.
    h.send(json!({"jsonrpc":"2.0","id":sent[1]["id"],"result":accept("x")}));
    assert!(h.answers.is_empty());
}

#[test]
fn an_extension_task_takes_answers_in_parts_and_tells_its_listeners() {
    let mut h = harness();
    let ext = json!({"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}});
    let meta = modern_meta(ext.clone());
    let created = h.request(call(json!(1), "maybe", json!({"_meta": meta})));
    let task_id = created["result"]["taskId"].as_str().unwrap().to_string();
    let job = h.jobs.pop().unwrap();
    // A listen stream follows the task; it hears where the task stands.
    let listen = json!({"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{
        "notifications":{"taskIds":[task_id]},"_meta":meta}});
    let written = h.send(listen);
    assert_eq!(written.len(), 2);
    assert_eq!(
        written[0]["params"]["notifications"]["taskIds"],
        json!([task_id])
    );
    assert_eq!(written[1]["method"], "notifications/tasks");
    assert_eq!(written[1]["params"]["status"], "working");
    check_message(MODERN, &written[1], None);
    assert_eq!(
        h.watches,
        vec![("\"sub\"".to_string(), vec![task_id.clone()])]
    );
    let mut out = Vec::new();
    let asked = vec![
        ("first".to_string(), question("First?")),
        ("last".to_string(), question("Last?")),
    ];
    h.engine.on_ask_all(job.id, asked, &mut out);
    assert!(h.collect(out).is_empty(), "listed by tasks/get, not sent");
    let (_, status) = h.statuses.pop().unwrap();
    assert_eq!(status["status"], "input_required");
    assert_eq!(status["inputRequests"].as_object().unwrap().len(), 2);
    let update = |h: &mut Harness, id: u64, responses: Value| {
        h.request(
            json!({"jsonrpc":"2.0","id":id,"method":"tasks/update","params":{
            "taskId":task_id,"inputResponses":responses,"_meta":meta}}),
        )
    };
    // A bad answer among good ones: refused whole, nothing is kept.
    let bad = update(
        &mut h,
        2,
        json!({"first": accept("Ada"), "last": {"action": 3}}),
    );
    assert_eq!(bad["error"]["code"], -32602);
    assert!(h.statuses.is_empty());
    let ack = update(&mut h, 3, json!({"first": accept("Ada")}));
    assert_eq!(ack["result"]["resultType"], "complete");
    assert!(h.answers.is_empty(), "the tool waits for the other answer");
    let (_, status) = h.statuses.pop().unwrap();
    assert_eq!(status["status"], "input_required");
    let left: Vec<&String> = status["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(left, ["last"]);
    // Answered again, or never asked: ignored.
    update(
        &mut h,
        4,
        json!({"first": accept("Eve"), "middle": accept("x")}),
    );
    assert!(h.statuses.is_empty() && h.answers.is_empty());
    update(&mut h, 5, json!({"last": accept("Lovelace")}));
    assert_eq!(
        h.answers,
        vec![(
            job.id,
            Ok(json!({"first": accept("Ada"), "last": accept("Lovelace")}))
        )]
    );
    assert_eq!(h.statuses.pop().unwrap().1["status"], "working");
    h.complete(job.id, done_text("Hello, Ada Lovelace!"));
    let (task, done) = h.statuses.pop().unwrap();
    assert_eq!(task, task_id);
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada Lovelace!");
    // Closing the stream stops the following.
    h.send(
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub"}}),
    );
    assert_eq!(h.watches.pop().unwrap(), ("\"sub\"".to_string(), vec![]));
    // A listen without the extension may not follow tasks.
    let refused = h.request(
        json!({"jsonrpc":"2.0","id":6,"method":"subscriptions/listen","params":{
        "notifications":{"taskIds":[task_id]},"_meta":modern_meta(json!({}))}}),
    );
    assert_eq!(refused["error"]["code"], -32021);
}

#[test]
fn a_listen_naming_a_task_thousands_of_times_follows_it_once() {
    let mut h = harness();
    let ext = json!({"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}});
    let meta = modern_meta(ext);
    let created = h.request(call(json!(1), "maybe", json!({"_meta": meta})));
    let task_id = created["result"]["taskId"].as_str().unwrap().to_string();
    // The same id many times over, and ids of no task: one task followed.
    let mut ids: Vec<Value> = vec![json!(task_id); 20_000];
    ids.extend((0..20_000).map(|n| json!(format!("no-such-task-{n}"))));
    let listen = json!({"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{
        "notifications":{"taskIds":ids},"_meta":meta}});
    let written = h.send(listen);
    assert_eq!(written.len(), 2, "the acknowledgement and one status");
    assert_eq!(
        written[0]["params"]["notifications"]["taskIds"],
        json!([task_id])
    );
    assert_eq!(written[1]["method"], "notifications/tasks");
    assert_eq!(
        h.watches,
        vec![("\"sub\"".to_string(), vec![task_id.clone()])]
    );
}

#[test]
fn engines_for_one_request_each_share_the_tasks_of_the_server() {
    use mcp_core::engine::Shared;
    let registry = mcp_core::engine::registry::Live::new(Arc::new(
        Registry::new(vec![tool("maybe", TaskSupport::Optional)]).unwrap(),
    ));
    let config = Arc::new(Config::default());
    let shared = Shared::new(&config);
    let engine = || Engine::for_one_request(config.clone(), registry.clone(), &shared);
    let meta = modern_meta(json!({"extensions":{"io.modelcontextprotocol/tasks":{}}}));
    let step = |engine: &mut Engine, message: Value| {
        let mut out = Vec::new();
        engine.on_line(message.to_string().as_bytes(), &mut out);
        out
    };
    let written = |out: &[Output]| -> Vec<Value> {
        out.iter()
            .filter_map(|o| match o {
                Output::Write(line) => Some(serde_json::from_str(line).unwrap()),
                _ => None,
            })
            .collect()
    };
    let mut creator = engine();
    let out = step(
        &mut creator,
        call(json!(1), "maybe", json!({"_meta": meta})),
    );
    let job = out
        .iter()
        .find_map(|o| match o {
            Output::Run(job) => Some(job.id),
            _ => None,
        })
        .unwrap();
    let task_id = written(&out)[0]["result"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    // Another request's engine finds the task...
    let mut other = engine();
    let get = json!({"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":task_id,"_meta":meta}});
    let got = written(&step(&mut other, get));
    assert_eq!(got[0]["result"]["status"], "working");
    // ...and cancels it, asking the creating engine to stop the job.
    let cancel = json!({"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":task_id,"_meta":meta}});
    let out = step(&mut engine(), cancel);
    assert!(out
        .iter()
        .any(|o| matches!(o, Output::CancelElsewhere(j) if *j == job)));
    assert!(!out.iter().any(|o| matches!(o, Output::Cancel(_))));
    let mut stopped = Vec::new();
    creator.cancel_job(job, &mut stopped);
    assert!(matches!(stopped[..], [Output::Cancel(j)] if j == job));
    creator.cancel_job(job, &mut stopped);
    assert_eq!(stopped.len(), 1, "stopped once");
    // A separate server does not see them.
    let elsewhere = Shared::new(&config);
    let mut stranger = Engine::for_one_request(config.clone(), registry.clone(), &elsewhere);
    let get = json!({"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":task_id,"_meta":meta}});
    assert_eq!(
        written(&step(&mut stranger, get))[0]["error"]["code"],
        -32602
    );
}

#[test]
fn a_deferred_tool_gathers_its_input_first_then_goes_on_as_a_task() {
    let registry = Arc::new(Registry::new(vec![tool("later", TaskSupport::Deferred)]).unwrap());
    let config = Config {
        request_state_key: Some(b"test key".to_vec()),
        ..Config::default()
    };
    let mut engine = Engine::new(Arc::new(config), registry);
    let step = |engine: &mut Engine, message: Value| {
        let mut out = Vec::new();
        engine.on_line(message.to_string().as_bytes(), &mut out);
        out
    };
    let split = |out: Vec<Output>| {
        let mut written: Vec<Value> = Vec::new();
        let mut jobs = Vec::new();
        for o in out {
            match o {
                Output::Write(line) => written.push(serde_json::from_str(&line).unwrap()),
                Output::Run(job) => jobs.push(*job),
                _ => {}
            }
        }
        (written, jobs)
    };
    let caps = json!({"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}});
    let later = |id: u64, extra: Value| {
        let mut params =
            json!({"name":"later","arguments":{"n":1},"_meta":modern_meta(caps.clone())});
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params})
    };
    // Round 1: a plain call, whose question is an input_required round.
    let (written, mut jobs) = split(step(&mut engine, later(1, json!({}))));
    assert!(written.is_empty(), "not a task yet: {written:?}");
    let job = jobs.pop().unwrap();
    assert!(job.context.task_later && job.context.task.is_none());
    assert_eq!(job.context.input, InputMode::Retry);
    let mut out = Vec::new();
    let question = json!({"method":"elicitation/create","params":{"message":"Name?",
        "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}});
    engine.on_completed(
        job.id,
        Outcome::InputRequired {
            key: "user_name".into(),
            request: question,
        },
        &mut out,
    );
    let (written, _) = split(out);
    let round = &written[0]["result"];
    assert_eq!(round["resultType"], "input_required");
    assert!(round.get("taskId").is_none());
    // Round 2: the answer comes back; the tool then goes on as a task.
    let retry = later(
        2,
        json!({"requestState": round["requestState"],
               "inputResponses": {"user_name": {"action":"accept","content":{"name":"Alice"}}}}),
    );
    let (written, mut jobs) = split(step(&mut engine, retry));
    assert!(written.is_empty());
    let job = jobs.pop().unwrap();
    assert_eq!(job.context.answers["user_name"]["content"]["name"], "Alice");
    let mut out = Vec::new();
    let task_id = engine.on_continue_as_task(job.id, &mut out).unwrap();
    let (written, _) = split(out);
    assert_eq!(written.len(), 1);
    assert_eq!(written[0]["id"], 2);
    let created = &written[0]["result"];
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["taskId"], task_id.as_str());
    assert!(created.get("requestState").is_none() && created.get("inputRequests").is_none());
    check_message(MODERN, &written[0], None);
    let mut again = Vec::new();
    assert_eq!(
        engine.on_continue_as_task(job.id, &mut again),
        Some(task_id.clone())
    );
    assert!(again.is_empty(), "answered once");
    // Its end is the task's, not a second answer to the call.
    let mut out = Vec::new();
    engine.on_completed(job.id, done_text("Hello, Alice!"), &mut out);
    assert!(split(out).0.is_empty());
    let get = json!({"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":task_id,"_meta":modern_meta(caps.clone())}});
    let (written, _) = split(step(&mut engine, get));
    assert_eq!(written[0]["result"]["status"], "completed");
    assert_eq!(
        written[0]["result"]["result"]["content"][0]["text"],
        "Hello, Alice!"
    );
    // Without the extension the call stays a plain call.
    let mut plain = later(4, json!({}));
    plain["params"]["_meta"] = modern_meta(json!({"elicitation":{}}));
    let (_, mut jobs) = split(step(&mut engine, plain));
    let job = jobs.pop().unwrap();
    assert!(!job.context.task_later);
    let mut out = Vec::new();
    assert_eq!(engine.on_continue_as_task(job.id, &mut out), None);
    assert!(out.is_empty());
    let mut out = Vec::new();
    engine.on_completed(job.id, done_text("plain"), &mut out);
    let (written, _) = split(out);
    assert_eq!(written[0]["result"]["content"][0]["text"], "plain");
    // A 2025-11-25 client sees an optional task tool.
    let init = json!({"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25",
        "capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    step(&mut engine, init);
    let (written, _) = split(step(
        &mut engine,
        json!({"jsonrpc":"2.0","id":6,"method":"tools/list"}),
    ));
    assert_eq!(
        written[0]["result"]["tools"][0]["execution"]["taskSupport"],
        "optional"
    );
}

#[test]
fn an_extension_task_sends_no_progress_or_logs_after_its_handle() {
    let mut h = harness();
    let mut meta = modern_meta(json!({"extensions":{"io.modelcontextprotocol/tasks":{}}}));
    meta["progressToken"] = json!("p1");
    meta["io.modelcontextprotocol/logLevel"] = json!("debug");
    let created = h.request(call(json!(1), "maybe", json!({"_meta": meta})));
    assert_eq!(created["result"]["resultType"], "task");
    let job = h.jobs.pop().unwrap();
    let mut out = Vec::new();
    let update = mcp_core::engine::Progress {
        progress: 1.0,
        total: None,
        message: None,
    };
    h.engine
        .on_progress(job.id, update, std::time::Instant::now(), &mut out);
    h.engine.on_log(
        job.id,
        mcp_core::protocol::logging::LogLevel::Info,
        json!("working"),
        &mut out,
    );
    assert!(h.collect(out).is_empty());
}
