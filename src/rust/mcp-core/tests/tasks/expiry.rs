//! Time to live and bounds: expiring tasks, waiters answered, limits on
//! working tasks and waiting requests, the extension's method checks.

use super::*;

#[test]
fn tasks_get_as_the_ttl_runs_out_is_answered_not_a_panic() {
    // Polls each task until it is gone, so some request meets the task in
    // the instant its time to live runs out.
    let mut h = harness();
    h.init("2025-11-25", json!({}));
    for n in 0..300u64 {
        let (task_id, _) = core_task(&mut h, 1, 1);
        loop {
            let r = h.request(task_request(json!(2), "tasks/get", &task_id));
            if r.get("error").is_some() {
                assert_eq!(r["error"]["code"], -32602, "round {n}: {r}");
                break;
            }
            assert_eq!(r["result"]["taskId"], task_id);
        }
    }
}

#[test]
fn tasks_result_waiting_on_a_task_that_expires_is_answered() {
    let mut h = harness();
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
    let r = h.request(task_request(json!(3), "tasks/get", &task_id));
    assert_eq!(r["error"]["code"], -32602, "an expired task is forgotten");
}

#[test]
fn a_task_whose_job_is_cancelled_answers_its_waiters() {
    let mut h = harness();
    h.init("2025-11-25", json!({}));
    let (task_id, job) = waiting_task(&mut h, 60_000);
    let answered = h.complete(job, Outcome::Cancelled);
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(answered[0]["id"], 2);
    assert_eq!(answered[0]["error"]["code"], -32602);
    check_message(REV, &answered[0], None);
    let r = h.request(task_request(json!(3), "tasks/get", &task_id));
    assert_eq!(r["result"]["status"], "cancelled");
}

#[test]
fn working_tasks_are_bounded_with_a_clear_error() {
    let mut h = harness();
    h.init("2025-11-25", json!({}));
    let (_, first_job) = core_task(&mut h, 1, 60_000);
    for n in 1..MAX_TASKS as u64 {
        core_task(&mut h, n + 1, 60_000);
    }
    let refused = h.request(call(json!("over"), "maybe", json!({"task":{}})));
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("Too many tasks"), "{message}");
    assert_eq!(refused["error"]["data"]["limit"], MAX_TASKS);
    check_message(REV, &refused, None);
    assert!(h.jobs.is_empty(), "a refused task runs nothing");
    // The extension's tasks count too.
    let caps = json!({"extensions":{"io.modelcontextprotocol/tasks":{}}});
    let refused = h.request(call(
        json!("ext"),
        "maybe",
        json!({"_meta": modern_meta(caps)}),
    ));
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    check_message(MODERN, &refused, None);
    // A finished task makes room.
    h.complete(first_job, done_text("done"));
    let created = h.request(call(json!("room"), "maybe", json!({"task":{}})));
    check_message(REV, &created, Some("CreateTaskResult"));
}

#[test]
fn modern_task_methods_need_the_tasks_extension() {
    let mut h = harness();
    let with_ext = json!({"extensions":{"io.modelcontextprotocol/tasks":{}}});
    let created = h.request(call(
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
            let r = h.request(json!({"jsonrpc":"2.0","id":2,"method":method,"params":{
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
    let mut h = harness();
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
    let refused = h.request(task_request(
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
    let refused = h.request(task_request(json!("full"), "tasks/result", &task_id));
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert_eq!(refused["error"]["data"]["limit"], MAX_WAITING);
    let got = h.request(task_request(json!("poll"), "tasks/get", &task_id));
    assert_eq!(got["result"]["status"], "working", "polling still works");
}

#[test]
fn the_alarm_answers_a_waiter_when_the_ttl_runs_out() {
    let mut h = harness();
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
