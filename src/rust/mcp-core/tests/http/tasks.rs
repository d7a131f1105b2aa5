//! Tasks over HTTP: outliving their request, cancelled, answered over
//! several requests, bound to their token or session.

use super::*;

#[test]
fn stateless_tasks_outlive_the_request_that_created_them() {
    let h = start(options());
    let discover = post(
        h.address,
        &modern_headers("server/discover", None),
        &with_tasks(1, "server/discover", json!({})),
    )
    .json();
    assert!(
        discover["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"]
            .is_object(),
        "{discover}"
    );
    let task = create_task(h.address, 2, "task_only");
    // Each later request has an engine of its own, and finds the task.
    let done = poll_task(h.address, &task, "completed");
    assert_eq!(done["result"]["taskId"], task.as_str());
    assert_eq!(done["result"]["result"]["content"][0]["text"], "ok");
    // The task id travels in Mcp-Name, for load balancers to route on.
    let mut params = with_tasks(3, "tasks/get", json!({"taskId": task}));
    let wrong = post(
        h.address,
        &modern_headers("tasks/get", Some("another-task")),
        &params,
    );
    assert_eq!(wrong.status, 400);
    assert_eq!(wrong.json()["error"]["code"], -32020);
    let missing = post(h.address, &modern_headers("tasks/get", None), &params);
    assert_eq!(missing.status, 400);
    // A request that does not declare the extension cannot reach it.
    params["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    let undeclared = post(
        h.address,
        &modern_headers("tasks/get", Some(task.as_str())),
        &params,
    );
    assert_eq!(undeclared.status, 400);
    assert_eq!(undeclared.json()["error"]["code"], -32021);
    let unknown = task_method(h.address, 4, "tasks/get", "no-such-task", json!({}));
    assert_eq!(unknown.status, 400);
    assert_eq!(unknown.json()["error"]["code"], -32602);
    // Without the extension a task-only tool is refused, naming it.
    let refused = post(
        h.address,
        &modern_headers("tools/call", Some("task_only")),
        &modern(
            5,
            "tools/call",
            json!({"name": "task_only", "arguments": {}}),
        ),
    );
    assert_eq!(refused.status, 400);
    let error = refused.json();
    check_message(Revision::V2026_07_28, &error, None);
    assert_eq!(error["error"]["code"], -32021);
    assert!(error["error"]["data"]["requiredCapabilities"]["extensions"]
        ["io.modelcontextprotocol/tasks"]
        .is_object());
}

#[test]
fn closing_the_creating_stream_leaves_the_task_and_tasks_cancel_stops_it() {
    let h = start(options());
    let reply = post(
        h.address,
        &modern_headers("tools/call", Some("task_slow")),
        &with_tasks(
            7,
            "tools/call",
            json!({"name": "task_slow", "arguments": {}}),
        ),
    );
    // The client reads the handle and goes away at once.
    let task = reply.json()["result"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        h.seen.recv_timeout(Duration::from_millis(400)).is_err(),
        "closing the stream that created a task must not cancel it"
    );
    poll_task(h.address, &task, "working");
    let ack = task_method(h.address, 8, "tasks/cancel", &task, json!({})).json();
    check_message(Revision::V2026_07_28, &ack, Some("Result"));
    assert_eq!(ack["result"]["resultType"], "complete");
    assert!(ack["result"].get("status").is_none());
    // The job, which runs for the engine of the creating request, stops.
    assert_eq!(h.seen.recv_timeout(WAIT), Ok(Seen::Cancelled("7".into())));
    poll_task(h.address, &task, "cancelled");
    // Cancelling again is acknowledged the same way.
    let again = task_method(h.address, 9, "tasks/cancel", &task, json!({}));
    assert_eq!(again.status, 200);
    assert_eq!(again.json()["result"]["resultType"], "complete");
}

#[test]
fn a_task_takes_its_answers_over_several_requests_and_listeners_hear_of_it() {
    let h = start(options());
    let task = create_task(h.address, 1, "task_ask");
    let waiting = poll_task(h.address, &task, "input_required");
    let asked = waiting["result"]["inputRequests"].as_object().unwrap();
    assert_eq!(
        asked.keys().collect::<Vec<_>>(),
        ["first", "last"],
        "both questions are asked at once"
    );
    assert_eq!(asked["first"]["method"], "elicitation/create");
    // A listen stream follows the task, from another request.
    let mut listen = post(
        h.address,
        &modern_headers("subscriptions/listen", None),
        &with_tasks(
            2,
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [task, "unknown-task"]}}),
        ),
    );
    assert!(listen.is_sse());
    let ack = listen.event().unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([task]),
        "only live tasks are followed"
    );
    let now = listen.event().unwrap();
    assert_eq!(now["method"], "notifications/tasks");
    assert_eq!(now["params"]["status"], "input_required");
    assert_eq!(
        now["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        2
    );
    check_message(Revision::V2026_07_28, &now, None);
    // One answer now: the task still waits, for the other only.
    let name = |n: &str| json!({"action": "accept", "content": {"name": n}});
    let ack = task_method(
        h.address,
        3,
        "tasks/update",
        &task,
        json!({"inputResponses": {"first": name("Ada"), "never-asked": name("x")}}),
    );
    assert_eq!(ack.status, 200);
    assert_eq!(ack.json()["result"]["resultType"], "complete");
    let still = task_method(h.address, 4, "tasks/get", &task, json!({})).json();
    assert_eq!(still["result"]["status"], "input_required");
    let left: Vec<&String> = still["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(left, ["last"]);
    let partial = listen.event().unwrap();
    assert_eq!(partial["params"]["status"], "input_required");
    assert_eq!(
        partial["params"]["inputRequests"]
            .as_object()
            .unwrap()
            .len(),
        1
    );
    // A bad answer is refused, and loses nothing.
    let bad = task_method(
        h.address,
        5,
        "tasks/update",
        &task,
        json!({"inputResponses": {"last": {"action": "maybe"}}}),
    );
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["error"]["code"], -32602);
    let still = task_method(h.address, 6, "tasks/get", &task, json!({})).json();
    assert!(still["result"]["inputRequests"].get("last").is_some());
    // The last answer resumes the tool, which gets both.
    task_method(
        h.address,
        7,
        "tasks/update",
        &task,
        json!({"inputResponses": {"last": name("Lovelace")}}),
    );
    let done = poll_task(h.address, &task, "completed");
    assert_eq!(
        done["result"]["result"]["content"][0]["text"],
        "Hello, Ada Lovelace!"
    );
    let mut statuses = Vec::new();
    while let Some(note) = listen.event() {
        assert_eq!(note["method"], "notifications/tasks");
        let status = note["params"]["status"].as_str().unwrap().to_string();
        statuses.push(status.clone());
        if status == "completed" {
            assert_eq!(
                note["params"]["result"]["content"][0]["text"],
                "Hello, Ada Lovelace!"
            );
            break;
        }
    }
    assert_eq!(statuses, ["working", "completed"]);
    // Following tasks needs the extension on the listen request.
    let refused = post(
        h.address,
        &modern_headers("subscriptions/listen", None),
        &modern(
            8,
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [task]}}),
        ),
    );
    assert_eq!(refused.status, 400);
    assert_eq!(refused.json()["error"]["code"], -32021);
}

#[test]
fn task_ids_start_with_the_replica_prefix_for_load_balancers() {
    let h = start(Options {
        task_id_prefix: "r7-".into(),
        ..options()
    });
    let task = create_task(h.address, 1, "task_only");
    assert!(task.starts_with("r7-") && task.len() == 35, "{task}");
    poll_task(h.address, &task, "completed");
}

#[test]
fn a_stateless_task_is_reached_only_with_the_token_that_created_it() {
    let h = start(Options {
        bearer_tokens: vec!["alice".into(), "bob".into()],
        ..options()
    });
    let (alice, bob) = ("Bearer alice", "Bearer bob");
    let task = create_task_as(h.address, Some(alice), 1, "task_ask");
    let as_alice =
        |id, method: &str, extra| task_method_as(h.address, Some(alice), id, method, &task, extra);
    let status_for_alice =
        |id| as_alice(id, "tasks/get", json!({})).json()["result"]["status"].clone();
    for _ in 0..200 {
        if status_for_alice(2) == "input_required" {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(status_for_alice(3), "input_required");
    let name = |n: &str| json!({"action": "accept", "content": {"name": n}});
    let answers = json!({"inputResponses": {"first": name("Eve"), "last": name("Evil")}});
    // To bob, every method finds no such task, word for word.
    for (id, method, extra) in [
        (10, "tasks/get", json!({})),
        (11, "tasks/update", answers.clone()),
        (12, "tasks/cancel", json!({})),
    ] {
        let reply = task_method_as(h.address, Some(bob), id, method, &task, extra.clone());
        let status = reply.status;
        let answer = reply.json();
        assert_eq!(
            (status, answer.clone()),
            unknown_answer(h.address, bob, id, method, &task, extra),
            "{method} by another token must look like an unknown id"
        );
        assert_eq!(status, 400, "{answer}");
    }
    // Nor did bob's update or cancel touch it.
    assert_eq!(status_for_alice(13), "input_required");
    // Bob's listen stream follows none of it; alice's does.
    let listen_as = |authorization, id| {
        let mut headers = modern_headers("subscriptions/listen", None);
        headers.push(("Authorization", authorization));
        let mut reply = post(
            h.address,
            &headers,
            &with_tasks(
                id,
                "subscriptions/listen",
                json!({"notifications": {"taskIds": [task]}}),
            ),
        );
        assert!(reply.is_sse());
        let ack = reply.event().unwrap();
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        (reply, ack["params"]["notifications"]["taskIds"].clone())
    };
    let (mut bobs, followed) = listen_as(bob, 20);
    assert_eq!(
        followed,
        json!([]),
        "another's task is left out as an unknown one"
    );
    let (mut alices, followed) = listen_as(alice, 21);
    assert_eq!(followed, json!([task]));
    assert_eq!(
        alices.event().unwrap()["params"]["status"],
        "input_required"
    );
    // Alice answers: the task completes, and only her stream hears of it.
    let ack = as_alice(22, "tasks/update", answers);
    assert_eq!(ack.status, 200);
    // Working again, then completed (the stand-in for R answers at once).
    let mut completed = false;
    for _ in 0..5 {
        let heard = alices.event().unwrap();
        assert_eq!(heard["method"], "notifications/tasks");
        if heard["params"]["status"] == "completed" {
            completed = true;
            break;
        }
        assert_eq!(heard["params"]["status"], "working", "{heard}");
    }
    assert!(completed, "alice's stream heard the task complete");
    let done = as_alice(23, "tasks/get", json!({})).json();
    assert_eq!(done["result"]["status"], "completed", "{done}");
    let bob_heard = stream_text_within(&mut bobs, Duration::from_millis(300));
    assert!(
        !bob_heard.contains(&task),
        "bob's stream heard: {bob_heard}"
    );
    // Bob's own tasks are his, and alice's requests do not find them.
    let his = create_task_as(h.address, Some(bob), 30, "task_slow");
    let get = task_method_as(h.address, Some(bob), 31, "tasks/get", &his, json!({}));
    assert_eq!(get.status, 200);
    let by_alice = task_method_as(h.address, Some(alice), 32, "tasks/cancel", &his, json!({}));
    assert_eq!(by_alice.status, 400);
    let still = task_method_as(h.address, Some(bob), 33, "tasks/get", &his, json!({})).json();
    assert_eq!(still["result"]["status"], "working", "{still}");
    let _ = task_method_as(h.address, Some(bob), 34, "tasks/cancel", &his, json!({}));
}

#[test]
fn handshake_era_tasks_stay_in_their_session() {
    let h = start(Options {
        bearer_tokens: vec!["alice".into(), "bob".into()],
        ..options()
    });
    let open = |token: &str| {
        let auth = format!("Bearer {token}");
        let reply = post(
            h.address,
            &[("Authorization", auth.as_str())],
            &initialize_request("2025-11-25", json!({})),
        );
        assert_eq!(reply.status, 200);
        let session = reply.header("mcp-session-id").unwrap().to_string();
        let done = post(
            h.address,
            &[
                ("Authorization", auth.as_str()),
                ("Mcp-Session-Id", &session),
            ],
            &initialized_notification(),
        );
        assert_eq!(done.status, 202);
        (auth, session)
    };
    let in_session = |(auth, session): &(String, String), body: Value| {
        post(
            h.address,
            &[
                ("Authorization", auth.as_str()),
                ("Mcp-Session-Id", session),
            ],
            &body,
        )
        .json()
    };
    let alices = open("alice");
    let mut request = call(1, "task_only", json!({}));
    request["params"]["task"] = json!({});
    let created = in_session(&alices, request);
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let list = json!({"jsonrpc":"2.0","id":2,"method":"tasks/list"});
    let listed = in_session(&alices, list.clone());
    assert_eq!(listed["result"]["tasks"][0]["taskId"], task.as_str());
    // Bob (a session of his own; alice's is not found with his token) sees
    // none of it, through any method.
    let bobs = open("bob");
    assert!(in_session(&bobs, list)["result"]["tasks"]
        .as_array()
        .unwrap()
        .is_empty());
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let answer = in_session(
            &bobs,
            json!({"jsonrpc":"2.0","id":3,"method":method,"params":{"taskId":task}}),
        );
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
    }
    // Alice's own session still finds it.
    let get = in_session(
        &alices,
        json!({"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":task}}),
    );
    assert_eq!(get["result"]["taskId"], task.as_str(), "{get}");
}

#[test]
fn without_tokens_configured_any_request_reaches_a_task() {
    let h = start(options());
    let task = create_task(h.address, 1, "task_slow");
    // An Authorization header means nothing to a server that checks none.
    for (id, authorization) in [(2, None), (3, Some("Bearer anyone")), (4, Some("Basic x"))] {
        let reply = task_method_as(h.address, authorization, id, "tasks/get", &task, json!({}));
        assert_eq!(reply.status, 200, "{authorization:?}");
        assert_eq!(reply.json()["result"]["status"], "working");
    }
    let cancel = task_method_as(
        h.address,
        Some("Bearer other"),
        5,
        "tasks/cancel",
        &task,
        json!({}),
    );
    assert_eq!(cancel.status, 200);
    poll_task(h.address, &task, "cancelled");
}

#[test]
fn a_request_state_serves_only_the_token_holder_it_was_issued_to() {
    let h = start(Options {
        bearer_tokens: vec!["alice".into(), "mallory".into()],
        ..options()
    });
    let mut headers = modern_headers("tools/call", Some("ask"));
    headers.push(("Authorization", "Bearer alice"));
    let first = post(
        h.address,
        &headers,
        &modern(1, "tools/call", json!({"name":"ask","arguments":{}})),
    )
    .json();
    let state = first["result"]["requestState"].clone();
    assert!(state.is_string(), "{first}");
    let retry_as = |name: &str| {
        let retry = modern(
            2,
            "tools/call",
            json!({"name":"ask","arguments":{},"requestState":state,
            "inputResponses":{"name":{"action":"accept","content":{"name":name}}}}),
        );
        let mut headers = modern_headers("tools/call", Some("ask"));
        let token = format!("Bearer {}", name.to_lowercase());
        headers.push(("Authorization", &token));
        post(h.address, &headers, &retry)
    };
    let stolen = retry_as("Mallory");
    assert_eq!(stolen.status, 400);
    let refusal = stolen.json();
    assert_eq!(refusal["error"]["data"]["reason"], "invalid_request_state");
    // Refusing it did not use it up: its holder's retry goes through.
    let answer = retry_as("Alice").json();
    assert_eq!(answer["result"]["content"][0]["text"], "Hello, Alice!");
}
