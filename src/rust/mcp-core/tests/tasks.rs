//! Tasks (2025-11-25 core and the 2026-07-28 extension) and input-required
//! rounds, with every message checked against the wire schemas.

mod common;

use common::{check_message, done_text};
use mcp_core::engine::registry::Registry;
use mcp_core::engine::{Config, Engine, InputMode, Job, Outcome, Output};
use mcp_core::protocol::revision::Revision;
use mcp_core::protocol::tool::{TaskSupport, ToolDef};
use mcp_core::stores::tasks::{MAX_TASKS, MAX_WAITING, MAX_WAITING_PER_TASK};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

fn tool(name: &str, task: TaskSupport) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: Some(name.into()),
        input_schema: json!({"type":"object","properties":{"n":{"type":"number"}}}),
        task_support: task,
        ..ToolDef::default()
    }
}

struct H {
    engine: Engine,
    registry: Arc<Registry>,
    jobs: Vec<Job>,
    cancels: Vec<u64>,
    answers: Vec<(u64, Result<Value, String>)>,
    alarms: Vec<Duration>,
    /// `Output::TaskStatus`: task id and its params.
    statuses: Vec<(String, Value)>,
    /// `Output::WatchTasks` and `UnwatchTasks`, as `(subscription, tasks)`
    /// and `(subscription, [])`.
    watches: Vec<(String, Vec<String>)>,
    elsewhere: Vec<u64>,
}

impl H {
    fn new() -> H {
        let registry = Registry::new(vec![
            tool("plain", TaskSupport::Forbidden),
            tool("maybe", TaskSupport::Optional),
            tool("always", TaskSupport::Required),
            ToolDef {
                output_schema: Some(
                    json!({"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}),
                ),
                ..tool("typed", TaskSupport::Optional)
            },
        ])
        .unwrap();
        let config = Config {
            request_state_key: Some(b"test key".to_vec()),
            ..Config::default()
        };
        let registry = Arc::new(registry);
        H {
            engine: Engine::new(Arc::new(config), registry.clone()),
            registry,
            jobs: Vec::new(),
            cancels: Vec::new(),
            answers: Vec::new(),
            alarms: Vec::new(),
            statuses: Vec::new(),
            watches: Vec::new(),
            elsewhere: Vec::new(),
        }
    }

    fn collect(&mut self, out: Vec<Output>) -> Vec<Value> {
        let mut written = Vec::new();
        for o in out {
            match o {
                Output::Write(line) | Output::ToListener(_, line) => {
                    written.push(serde_json::from_str(&line).unwrap())
                }
                // As the server's poll does: arguments that fail their
                // schema answer the call, which never runs.
                Output::Run(mut job) => match job.read_arguments(&self.registry) {
                    Ok(()) => self.jobs.push(*job),
                    Err(refusal) => {
                        let mut more = Vec::new();
                        self.engine
                            .on_completed(job.id, Outcome::Done(refusal), &mut more);
                        written.extend(self.collect(more));
                    }
                },
                Output::Cancel(job) => self.cancels.push(job),
                Output::Answer(job, a) => self.answers.push((job, a)),
                Output::ProgressDue(..) => {}
                Output::TaskAlarm(delay) => self.alarms.push(delay),
                Output::CancelElsewhere(job) => self.elsewhere.push(job),
                Output::TaskStatus { task, params } => self.statuses.push((task, params)),
                Output::WatchTasks {
                    subscription,
                    tasks,
                } => self.watches.push((subscription.to_string(), tasks)),
                Output::UnwatchTasks(subscription) => {
                    self.watches.push((subscription.to_string(), Vec::new()))
                }
            }
        }
        written
    }

    fn send(&mut self, msg: Value) -> Vec<Value> {
        let mut out = Vec::new();
        self.engine.on_line(msg.to_string().as_bytes(), &mut out);
        self.collect(out)
    }

    fn one(&mut self, msg: Value) -> Value {
        let mut got = self.send(msg.clone());
        assert_eq!(got.len(), 1, "{msg} -> {got:?}");
        got.remove(0)
    }

    fn complete(&mut self, job: u64, outcome: Outcome) -> Vec<Value> {
        let mut out = Vec::new();
        self.engine.on_completed(job, outcome, &mut out);
        self.collect(out)
    }

    fn ask(&mut self, job: u64, key: &str) -> Vec<Value> {
        let mut out = Vec::new();
        let request = json!({"method":"elicitation/create","params":{"message":"Your name?",
            "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}});
        self.engine.on_ask(job, key.into(), request, &mut out);
        self.collect(out)
    }

    fn init(&mut self, version: &str, capabilities: Value) {
        let r = self.one(json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":version,"capabilities":capabilities,"clientInfo":{"name":"t","version":"1"}}}));
        check_message(
            Revision::parse(version).unwrap(),
            &r,
            Some("InitializeResult"),
        );
    }
}

fn call(id: Value, name: &str, extra: Value) -> Value {
    let mut params = json!({"name": name, "arguments": {"n": 1}});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params})
}

fn modern_meta(caps: Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": caps})
}

const REV: Revision = Revision::V2025_11_25;
const MODERN: Revision = Revision::V2026_07_28;

#[test]
fn core_tasks_run_and_deliver_their_result() {
    let mut h = H::new();
    h.init("2025-11-25", json!({}));
    let caps = h.one(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    let tools = caps["result"]["tools"].as_array().unwrap();
    assert!(tools[0].get("execution").is_none());
    assert_eq!(tools[1]["execution"], json!({"taskSupport":"optional"}));
    assert_eq!(tools[2]["execution"], json!({"taskSupport":"required"}));
    check_message(REV, &caps, Some("ListToolsResult"));

    let created = h.one(call(json!(2), "maybe", json!({"task":{"ttl":60000}})));
    check_message(REV, &created, Some("CreateTaskResult"));
    let task = created["result"]["task"].clone();
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60000);
    let task_id = task["taskId"].as_str().unwrap().to_string();
    let job = h.jobs.pop().unwrap();
    assert_eq!(job.context.task.as_deref(), Some(task_id.as_str()));

    let got =
        h.one(json!({"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":task_id}}));
    assert_eq!(got["result"]["status"], "working");
    check_message(REV, &got, Some("GetTaskResult"));
    assert!(
        h.send(json!({"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":task_id}}))
            .is_empty(),
        "tasks/result waits for the end"
    );
    // A notifications/cancelled for the original request does not touch the task.
    h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}));
    assert!(h.cancels.is_empty());

    let finished = h.complete(job.id, done_text("done"));
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["id"], 4);
    assert_eq!(finished[0]["result"]["content"][0]["text"], "done");
    assert_eq!(
        finished[0]["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        task_id
    );
    check_message(REV, &finished[0], Some("CallToolResult"));
    let got =
        h.one(json!({"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":task_id}}));
    assert_eq!(got["result"]["status"], "completed");
    let again =
        h.one(json!({"jsonrpc":"2.0","id":6,"method":"tasks/result","params":{"taskId":task_id}}));
    assert_eq!(again["result"]["content"][0]["text"], "done");
    let list = h.one(json!({"jsonrpc":"2.0","id":7,"method":"tasks/list"}));
    assert_eq!(list["result"]["tasks"][0]["taskId"], task_id);
    check_message(REV, &list, Some("ListTasksResult"));
}

#[test]
fn core_task_policies_and_cancellation() {
    let mut h = H::new();
    h.init("2025-11-25", json!({}));
    let r = h.one(call(json!(1), "plain", json!({"task":{}})));
    assert_eq!(r["error"]["code"], -32601);
    let r = h.one(call(json!(2), "always", json!({})));
    assert_eq!(r["error"]["code"], -32601);
    check_message(REV, &r, None);
    assert!(h.jobs.is_empty());

    let created = h.one(call(json!(3), "always", json!({"task":{}})));
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let job = h.jobs.pop().unwrap();
    h.send(json!({"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":task_id}}));
    let mut cancelled =
        h.send(json!({"jsonrpc":"2.0","id":5,"method":"tasks/cancel","params":{"taskId":task_id}}));
    assert_eq!(h.cancels, vec![job.id]);
    let waiter = cancelled.remove(0);
    assert_eq!(waiter["id"], 4);
    assert_eq!(waiter["error"]["code"], -32602);
    assert_eq!(cancelled[0]["result"]["status"], "cancelled");
    check_message(REV, &cancelled[0], Some("CancelTaskResult"));
    assert!(h.complete(job.id, Outcome::Cancelled).is_empty());
    let r =
        h.one(json!({"jsonrpc":"2.0","id":6,"method":"tasks/cancel","params":{"taskId":task_id}}));
    assert_eq!(
        r["error"]["code"], -32602,
        "a finished task cannot be cancelled"
    );
    let r = h.one(json!({"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"nope"}}));
    assert_eq!(r["error"]["code"], -32602);
    check_message(REV, &r, None);
}

#[test]
fn core_task_failures_carry_the_json_rpc_error() {
    let mut h = H::new();
    h.init("2025-11-25", json!({}));
    let created = h.one(call(json!(1), "typed", json!({"task":{}})));
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let job = h.jobs.pop().unwrap();
    h.complete(job.id, done_text("no structured content"));
    let r =
        h.one(json!({"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":task_id}}));
    assert_eq!(r["error"]["code"], -32603);
    let got =
        h.one(json!({"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":task_id}}));
    assert_eq!(got["result"]["status"], "failed");
    check_message(REV, &got, Some("GetTaskResult"));
}

#[test]
fn older_revisions_have_no_tasks() {
    let mut h = H::new();
    h.init("2025-06-18", json!({}));
    let init_caps = h.one(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    assert!(init_caps["result"]["tools"][1].get("execution").is_none());
    let r = h.one(json!({"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"x"}}));
    assert_eq!(r["error"]["code"], -32601);
    // A task-only tool still runs, directly, for clients that cannot ask for tasks.
    assert!(h.send(call(json!(3), "always", json!({}))).is_empty());
    assert_eq!(h.jobs.len(), 1);
}

#[test]
fn extension_tasks_are_chosen_by_the_server() {
    let mut h = H::new();
    let discover = h.one(json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":modern_meta(json!({}))}}));
    assert_eq!(
        discover["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    check_message(MODERN, &discover, Some("DiscoverResult"));

    let with_ext = json!({"extensions":{"io.modelcontextprotocol/tasks":{}}});
    let created = h.one(call(
        json!(2),
        "maybe",
        json!({"_meta": modern_meta(with_ext.clone())}),
    ));
    let result = &created["result"];
    assert_eq!(result["resultType"], "task");
    assert_eq!(result["status"], "working");
    assert!(result["ttlMs"].as_u64().is_some() && result["pollIntervalMs"].as_u64().is_some());
    check_message(MODERN, &created, None);
    let task_id = result["taskId"].as_str().unwrap().to_string();
    let job = h.jobs.pop().unwrap();

    let get = |h: &mut H, id: u64| {
        h.one(json!({"jsonrpc":"2.0","id":id,"method":"tasks/get","params":{"taskId":task_id,"_meta":modern_meta(with_ext.clone())}}))
    };
    let working = get(&mut h, 3);
    assert_eq!(working["result"]["resultType"], "complete");
    assert_eq!(working["result"]["status"], "working");
    assert!(
        h.complete(job.id, done_text("fine")).is_empty(),
        "nothing is pushed; the client polls"
    );
    let done = get(&mut h, 4);
    assert_eq!(done["result"]["status"], "completed");
    assert_eq!(done["result"]["result"]["content"][0]["text"], "fine");
    assert_eq!(done["result"]["result"]["resultType"], "complete");
    check_message(MODERN, &done, None);

    // Without the extension: optional tools answer directly, required ones refuse.
    assert!(h
        .send(call(
            json!(5),
            "maybe",
            json!({"_meta": modern_meta(json!({}))})
        ))
        .is_empty());
    assert!(h.jobs.pop().unwrap().context.task.is_none());
    let refused = h.one(call(
        json!(6),
        "always",
        json!({"_meta": modern_meta(json!({}))}),
    ));
    assert_eq!(refused["error"]["code"], -32021);
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]
            ["io.modelcontextprotocol/tasks"],
        json!({})
    );
    common::assert_valid(MODERN, "MissingRequiredClientCapabilityError", &refused);
    for method in ["tasks/result", "tasks/list"] {
        let r = h.one(json!({"jsonrpc":"2.0","id":7,"method":method,"params":{"taskId":task_id,"_meta":modern_meta(json!({}))}}));
        assert_eq!(r["error"]["code"], -32601, "{method}");
    }
}

#[test]
fn extension_tasks_take_input_and_cancel() {
    let mut h = H::new();
    let caps = json!({"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}});
    let created = h.one(call(json!(1), "maybe", json!({"_meta": modern_meta(caps)})));
    let task_id = created["result"]["taskId"].as_str().unwrap().to_string();
    let job = h.jobs.pop().unwrap();
    assert_eq!(job.context.input, InputMode::Ask);
    assert!(
        h.ask(job.id, "name").is_empty(),
        "listed by tasks/get, not sent"
    );
    let meta = modern_meta(json!({"extensions":{"io.modelcontextprotocol/tasks":{}}}));
    let waiting = h.one(json!({"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":task_id,"_meta":meta}}));
    assert_eq!(waiting["result"]["status"], "input_required");
    assert_eq!(
        waiting["result"]["inputRequests"]["name"]["method"],
        "elicitation/create"
    );
    check_message(MODERN, &waiting, None);
    let bad = h.one(
        json!({"jsonrpc":"2.0","id":3,"method":"tasks/update","params":{"taskId":task_id,
        "inputResponses":{"name":{"what":"no action"}},"_meta":meta}}),
    );
    assert_eq!(bad["error"]["code"], -32602);
    let ack = h.one(json!({"jsonrpc":"2.0","id":4,"method":"tasks/update","params":{"taskId":task_id,
        "inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}},"other":{"action":"accept"}},"_meta":meta}}));
    assert_eq!(ack["result"]["resultType"], "complete");
    check_message(MODERN, &ack, None);
    assert_eq!(
        h.answers,
        vec![(
            job.id,
            Ok(json!({"action":"accept","content":{"name":"Ada"}}))
        )]
    );
    let working = h.one(json!({"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":task_id,"_meta":meta}}));
    assert_eq!(working["result"]["status"], "working");
    let ack = h.one(json!({"jsonrpc":"2.0","id":6,"method":"tasks/cancel","params":{"taskId":task_id,"_meta":meta}}));
    assert_eq!(ack["result"]["resultType"], "complete");
    assert_eq!(h.cancels, vec![job.id]);
    let cancelled = h.one(json!({"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":task_id,"_meta":meta}}));
    assert_eq!(cancelled["result"]["status"], "cancelled");
}

fn mrtr_call(id: u64, extra: Value) -> Value {
    let mut params =
        json!({"name":"plain","arguments":{"n":1},"_meta":modern_meta(json!({"elicitation":{}}))});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params})
}

#[test]
fn input_required_rounds_carry_signed_state() {
    let mut h = H::new();
    assert!(h.send(mrtr_call(1, json!({}))).is_empty());
    let job = h.jobs.pop().unwrap();
    assert_eq!(job.context.input, InputMode::Retry);
    let request = json!({"method":"elicitation/create","params":{"message":"Your name?",
        "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}});
    let asked = h.complete(
        job.id,
        Outcome::InputRequired {
            key: "input-1".into(),
            request: request.clone(),
        },
    );
    let result = &asked[0]["result"];
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(result["inputRequests"]["input-1"], request);
    check_message(MODERN, &asked[0], Some("InputRequiredResult"));
    let state = result["requestState"].as_str().unwrap().to_string();

    // The retry: a new id, the answers, the state echoed.
    let answer = json!({"action":"accept","content":{"name":"Ada"}});
    assert!(h.send(mrtr_call(2, json!({"inputResponses":{"input-1":answer,"stray":{"action":"cancel"}},"requestState":state}))).is_empty());
    let retry = h.jobs.pop().unwrap();
    assert_eq!(retry.context.answers.get("input-1"), Some(&answer));
    assert!(
        retry.context.answers.get("stray").is_none(),
        "answers to keys never asked are ignored"
    );

    // A second round keeps the first answer inside its state.
    let asked = h.complete(
        retry.id,
        Outcome::InputRequired {
            key: "input-2".into(),
            request: request.clone(),
        },
    );
    let state2 = asked[0]["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(h
        .send(mrtr_call(
            3,
            json!({"inputResponses":{"input-2":{"action":"decline"}},"requestState":state2})
        ))
        .is_empty());
    let third = h.jobs.pop().unwrap();
    assert_eq!(third.context.answers.len(), 2);
    let done = h.complete(third.id, done_text("Hello, Ada"));
    assert_eq!(done[0]["result"]["resultType"], "complete");

    // Replayed, tampered, foreign: refused before any R code runs.
    let replay = h.one(mrtr_call(
        4,
        json!({"inputResponses":{},"requestState":state}),
    ));
    assert_eq!(replay["error"]["code"], -32602);
    assert_eq!(replay["error"]["data"]["reason"], "invalid_request_state");
    let tampered = format!("x{state2}");
    let r = h.one(mrtr_call(5, json!({"requestState":tampered})));
    assert_eq!(r["error"]["data"]["reason"], "invalid_request_state");
    check_message(MODERN, &r, None);
    assert!(h.send(mrtr_call(6, json!({}))).is_empty());
    let other = h.jobs.pop().unwrap();
    let asked = h.complete(
        other.id,
        Outcome::InputRequired {
            key: "input-1".into(),
            request,
        },
    );
    let state3 = asked[0]["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    let mut foreign = call(
        json!(7),
        "maybe",
        json!({"_meta": modern_meta(json!({"elicitation":{}})), "requestState": state3}),
    );
    foreign["params"]["arguments"] = json!({"n": 1});
    let r = h.one(foreign);
    assert_eq!(
        r["error"]["data"]["reason"], "invalid_request_state",
        "state of another tool"
    );
    let r = h.one(mrtr_call(8, json!({"inputResponses":[1]})));
    assert_eq!(r["error"]["code"], -32602);
    assert!(h.jobs.is_empty());
}

#[test]
fn input_modes_follow_what_the_client_declared() {
    let mut h = H::new();
    let no_caps = call(json!(1), "plain", json!({"_meta": modern_meta(json!({}))}));
    h.send(no_caps);
    assert_eq!(
        h.jobs.pop().unwrap().context.input,
        InputMode::MissingCapability
    );

    let mut h = H::new();
    h.init("2024-11-05", json!({"elicitation":{}}));
    h.send(call(json!(1), "plain", json!({})));
    assert!(matches!(
        h.jobs.pop().unwrap().context.input,
        InputMode::Unavailable(_)
    ));

    let mut h = H::new();
    h.init("2025-06-18", json!({}));
    h.send(call(json!(1), "plain", json!({})));
    assert!(matches!(
        h.jobs.pop().unwrap().context.input,
        InputMode::Unavailable(_)
    ));
}

#[test]
fn legacy_sessions_ask_the_client_while_the_tool_waits() {
    for version in ["2025-06-18", "2025-11-25"] {
        let mut h = H::new();
        h.init(version, json!({"elicitation":{}}));
        h.send(call(json!(1), "plain", json!({})));
        let job = h.jobs.pop().unwrap();
        assert_eq!(job.context.input, InputMode::Ask);
        let sent = h.ask(job.id, "input-1");
        assert_eq!(sent.len(), 1);
        let request = &sent[0];
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["message"], "Your name?");
        assert_eq!(
            request["params"].get("mode").is_some(),
            version == "2025-11-25"
        );
        common::assert_valid(Revision::parse(version).unwrap(), "ElicitRequest", request);
        let ask_id = request["id"].clone();
        h.send(json!({"jsonrpc":"2.0","id":ask_id,"result":{"action":"accept","content":{"name":"Ada"}}}));
        assert_eq!(
            h.answers.pop().unwrap(),
            (
                job.id,
                Ok(json!({"action":"accept","content":{"name":"Ada"}}))
            )
        );
        // A second question, refused by the client.
        let sent = h.ask(job.id, "input-2");
        let ask_id = sent[0]["id"].clone();
        h.send(json!({"jsonrpc":"2.0","id":ask_id,"error":{"code":-1,"message":"user closed the dialog"}}));
        let (_, answer) = h.answers.pop().unwrap();
        assert!(answer.unwrap_err().contains("user closed the dialog"));
        // Answers for requests never made are ignored.
        h.send(json!({"jsonrpc":"2.0","id":"mcpserver-ask-99","result":{"action":"accept"}}));
        assert!(h.answers.is_empty());
    }
}

fn task_request(id: Value, method: &str, task_id: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"taskId":task_id}})
}

/// A core task of the "maybe" tool with the given time to live.
fn core_task(h: &mut H, id: u64, ttl_ms: u64) -> (String, u64) {
    let created = h.one(call(json!(id), "maybe", json!({"task":{"ttl":ttl_ms}})));
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_string();
    (task_id, h.jobs.pop().unwrap().id)
}

#[test]
fn tasks_get_as_the_ttl_runs_out_is_answered_not_a_panic() {
    // Polls each task until it is gone, so some request meets the task in
    // the instant its time to live runs out.
    let mut h = H::new();
    h.init("2025-11-25", json!({}));
    for n in 0..300u64 {
        let (task_id, _) = core_task(&mut h, 1, 1);
        loop {
            let r = h.one(task_request(json!(2), "tasks/get", &task_id));
            if r.get("error").is_some() {
                assert_eq!(r["error"]["code"], -32602, "round {n}: {r}");
                break;
            }
            assert_eq!(r["result"]["taskId"], task_id);
        }
    }
}

/// A `tasks/result` that the engine holds (nothing answered yet) on a new
/// task with a short time to live; retried should a stalled machine let the
/// time to live pass before the request is in.
fn waiting_task(h: &mut H, ttl_ms: u64) -> (String, u64) {
    loop {
        let (task_id, job) = core_task(h, 1, ttl_ms);
        if h.send(task_request(json!(2), "tasks/result", &task_id))
            .is_empty()
        {
            return (task_id, job);
        }
    }
}

#[test]
fn tasks_result_waiting_on_a_task_that_expires_is_answered() {
    let mut h = H::new();
    h.init("2025-11-25", json!({}));
    let (task_id, job) = waiting_task(&mut h, 100);
    std::thread::sleep(Duration::from_millis(150));
    let answered = h.complete(job, done_text("too late"));
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(answered[0]["id"], 2);
    assert_eq!(answered[0]["error"]["code"], -32602);
    let message = answered[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("expired") && message.contains(&task_id),
        "{message}"
    );
    check_message(REV, &answered[0], None);
    let r = h.one(task_request(json!(3), "tasks/get", &task_id));
    assert_eq!(r["error"]["code"], -32602, "an expired task is forgotten");
}

#[test]
fn a_task_whose_job_is_cancelled_answers_its_waiters() {
    let mut h = H::new();
    h.init("2025-11-25", json!({}));
    let (task_id, job) = waiting_task(&mut h, 60_000);
    let answered = h.complete(job, Outcome::Cancelled);
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(answered[0]["id"], 2);
    assert_eq!(answered[0]["error"]["code"], -32602);
    check_message(REV, &answered[0], None);
    let r = h.one(task_request(json!(3), "tasks/get", &task_id));
    assert_eq!(r["result"]["status"], "cancelled");
}

#[test]
fn working_tasks_are_bounded_with_a_clear_error() {
    let mut h = H::new();
    h.init("2025-11-25", json!({}));
    let (_, first_job) = core_task(&mut h, 1, 60_000);
    for n in 1..MAX_TASKS as u64 {
        core_task(&mut h, n + 1, 60_000);
    }
    let refused = h.one(call(json!("over"), "maybe", json!({"task":{}})));
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("Too many tasks"), "{message}");
    assert_eq!(refused["error"]["data"]["limit"], MAX_TASKS);
    check_message(REV, &refused, None);
    assert!(h.jobs.is_empty(), "a refused task runs nothing");
    // The extension's tasks count too.
    let caps = json!({"extensions":{"io.modelcontextprotocol/tasks":{}}});
    let refused = h.one(call(
        json!("ext"),
        "maybe",
        json!({"_meta": modern_meta(caps)}),
    ));
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    check_message(MODERN, &refused, None);
    // A finished task makes room.
    h.complete(first_job, done_text("done"));
    let created = h.one(call(json!("room"), "maybe", json!({"task":{}})));
    check_message(REV, &created, Some("CreateTaskResult"));
}

#[test]
fn modern_task_methods_need_the_tasks_extension() {
    let mut h = H::new();
    let with_ext = json!({"extensions":{"io.modelcontextprotocol/tasks":{}}});
    let created = h.one(call(
        json!(1),
        "maybe",
        json!({"_meta": modern_meta(with_ext)}),
    ));
    let task_id = created["result"]["taskId"].as_str().unwrap().to_string();
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        for caps in [
            json!({}),
            json!({"extensions":{}}),
            json!({"extensions":{"other/ext":{}}}),
        ] {
            let r = h.one(json!({"jsonrpc":"2.0","id":2,"method":method,"params":{
                "taskId":task_id,"inputResponses":{},"_meta":modern_meta(caps)}}));
            assert_eq!(r["error"]["code"], -32021, "{method}: {r}");
            assert_eq!(
                r["error"]["data"]["requiredCapabilities"]["extensions"]
                    ["io.modelcontextprotocol/tasks"],
                json!({})
            );
            common::assert_valid(MODERN, "MissingRequiredClientCapabilityError", &r);
        }
    }
    assert!(h.cancels.is_empty(), "nothing was cancelled");
}

#[test]
fn requests_waiting_on_tasks_are_bounded() {
    let mut h = H::new();
    h.init("2025-11-25", json!({}));
    // Per task.
    let (task_id, job) = core_task(&mut h, 1, 60_000);
    for n in 0..MAX_WAITING_PER_TASK {
        let waiting = h.send(task_request(
            json!(format!("w{n}")),
            "tasks/result",
            &task_id,
        ));
        assert!(waiting.is_empty(), "{waiting:?}");
    }
    let refused = h.one(task_request(
        json!("one too many"),
        "tasks/result",
        &task_id,
    ));
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("tasks/get"));
    assert_eq!(refused["error"]["data"]["limit"], MAX_WAITING_PER_TASK);
    check_message(REV, &refused, None);
    let answered = h.complete(job, done_text("done"));
    assert_eq!(
        answered.len(),
        MAX_WAITING_PER_TASK,
        "every holder is answered"
    );
    // In all.
    let mut waiting = 0;
    let mut n = 0;
    while waiting < MAX_WAITING {
        let (task_id, _) = core_task(&mut h, 2, 60_000);
        for _ in 0..MAX_WAITING_PER_TASK.min(MAX_WAITING - waiting) {
            n += 1;
            assert!(h
                .send(task_request(json!(n), "tasks/result", &task_id))
                .is_empty());
            waiting += 1;
        }
    }
    let (task_id, _) = core_task(&mut h, 3, 60_000);
    let refused = h.one(task_request(json!("full"), "tasks/result", &task_id));
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert_eq!(refused["error"]["data"]["limit"], MAX_WAITING);
    let got = h.one(task_request(json!("poll"), "tasks/get", &task_id));
    assert_eq!(got["result"]["status"], "working", "polling still works");
}

#[test]
fn the_alarm_answers_a_waiter_when_the_ttl_runs_out() {
    let mut h = H::new();
    h.init("2025-11-25", json!({}));
    let (task_id, job) = waiting_task(&mut h, 100);
    let alarm = *h.alarms.last().expect("an alarm for the time to live");
    assert!(alarm <= Duration::from_millis(100), "{alarm:?}");
    std::thread::sleep(Duration::from_millis(150));
    let mut out = Vec::new();
    h.engine.on_task_alarm(&mut out);
    let answered = h.collect(out);
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(answered[0]["id"], 2);
    assert!(answered[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("expired"));
    assert_eq!(answered[0]["error"]["data"]["taskId"], task_id);
    assert_eq!(
        h.cancels,
        vec![job],
        "no one can fetch its result: the job stops"
    );
    assert!(h.complete(job, Outcome::Cancelled).is_empty());
    assert_eq!(
        h.engine.pending_jobs(),
        0,
        "nothing holds the server at EOF"
    );
}

fn question(text: &str) -> Value {
    json!({"method":"elicitation/create","params":{"message":text,
        "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}})
}

fn accept(name: &str) -> Value {
    json!({"action":"accept","content":{"name":name}})
}

#[test]
fn a_core_task_asks_several_questions_at_once_and_resumes_when_all_are_answered() {
    let mut h = H::new();
    h.init("2025-11-25", json!({"elicitation":{}}));
    let created = h.one(call(json!(1), "maybe", json!({"task":{}})));
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
    let status = |h: &mut H| {
        h.one(task_request(json!(9), "tasks/get", &task_id))["result"]["status"].clone()
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
    let mut h = H::new();
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
    let mut h = H::new();
    let ext = json!({"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}});
    let meta = modern_meta(ext.clone());
    let created = h.one(call(json!(1), "maybe", json!({"_meta": meta})));
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
    let update = |h: &mut H, id: u64, responses: Value| {
        h.one(
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
    let refused = h.one(
        json!({"jsonrpc":"2.0","id":6,"method":"subscriptions/listen","params":{
        "notifications":{"taskIds":[task_id]},"_meta":modern_meta(json!({}))}}),
    );
    assert_eq!(refused["error"]["code"], -32021);
}

#[test]
fn a_listen_naming_a_task_thousands_of_times_follows_it_once() {
    let mut h = H::new();
    let ext = json!({"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}});
    let meta = modern_meta(ext);
    let created = h.one(call(json!(1), "maybe", json!({"_meta": meta})));
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
    let mut h = H::new();
    let mut meta = modern_meta(json!({"extensions":{"io.modelcontextprotocol/tasks":{}}}));
    meta["progressToken"] = json!("p1");
    meta["io.modelcontextprotocol/logLevel"] = json!("debug");
    let created = h.one(call(json!(1), "maybe", json!({"_meta": meta})));
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
