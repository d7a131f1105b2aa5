//! 2025-11-25 core tasks: running, delivering, policies, cancellation,
//! failures, and revisions without tasks.

use super::*;

#[test]
fn core_tasks_run_and_deliver_their_result() {
    let mut h = harness();
    h.init("2025-11-25", json!({}));
    let caps = h.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    let tools = caps["result"]["tools"].as_array().unwrap();
    assert!(tools[0].get("execution").is_none());
    assert_eq!(tools[1]["execution"], json!({"taskSupport":"optional"}));
    assert_eq!(tools[2]["execution"], json!({"taskSupport":"required"}));
    check_message(REV, &caps, Some("ListToolsResult"));

    let created = h.request(call(json!(2), "maybe", json!({"task":{"ttl":60000}})));
    check_message(REV, &created, Some("CreateTaskResult"));
    let task = created["result"]["task"].clone();
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60000);
    let task_id = task["taskId"].as_str().unwrap().to_string();
    let job = h.jobs.pop().unwrap();
    assert_eq!(job.context.task.as_deref(), Some(task_id.as_str()));

    let got =
        h.request(json!({"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":task_id}}));
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
        h.request(json!({"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":task_id}}));
    assert_eq!(got["result"]["status"], "completed");
    let again = h.request(
        json!({"jsonrpc":"2.0","id":6,"method":"tasks/result","params":{"taskId":task_id}}),
    );
    assert_eq!(again["result"]["content"][0]["text"], "done");
    let list = h.request(json!({"jsonrpc":"2.0","id":7,"method":"tasks/list"}));
    assert_eq!(list["result"]["tasks"][0]["taskId"], task_id);
    check_message(REV, &list, Some("ListTasksResult"));
}

#[test]
fn core_task_policies_and_cancellation() {
    let mut h = harness();
    h.init("2025-11-25", json!({}));
    let r = h.request(call(json!(1), "plain", json!({"task":{}})));
    assert_eq!(r["error"]["code"], -32601);
    let r = h.request(call(json!(2), "always", json!({})));
    assert_eq!(r["error"]["code"], -32601);
    check_message(REV, &r, None);
    assert!(h.jobs.is_empty());

    let created = h.request(call(json!(3), "always", json!({"task":{}})));
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
    let r = h.request(
        json!({"jsonrpc":"2.0","id":6,"method":"tasks/cancel","params":{"taskId":task_id}}),
    );
    assert_eq!(
        r["error"]["code"], -32602,
        "a finished task cannot be cancelled"
    );
    let r =
        h.request(json!({"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"nope"}}));
    assert_eq!(r["error"]["code"], -32602);
    check_message(REV, &r, None);
}

#[test]
fn core_task_failures_carry_the_json_rpc_error() {
    let mut h = harness();
    h.init("2025-11-25", json!({}));
    let created = h.request(call(json!(1), "typed", json!({"task":{}})));
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let job = h.jobs.pop().unwrap();
    h.complete(job.id, done_text("no structured content"));
    let r = h.request(
        json!({"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":task_id}}),
    );
    assert_eq!(r["error"]["code"], -32603);
    let got =
        h.request(json!({"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":task_id}}));
    assert_eq!(got["result"]["status"], "failed");
    check_message(REV, &got, Some("GetTaskResult"));
}

#[test]
fn older_revisions_have_no_tasks() {
    let mut h = harness();
    h.init("2025-06-18", json!({}));
    let init_caps = h.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    assert!(init_caps["result"]["tools"][1].get("execution").is_none());
    let r = h.request(json!({"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"x"}}));
    assert_eq!(r["error"]["code"], -32601);
    // A task-only tool still runs, directly, for clients that cannot ask for tasks.
    assert!(h.send(call(json!(3), "always", json!({}))).is_empty());
    assert_eq!(h.jobs.len(), 1);
}

#[test]
fn a_task_result_is_never_streamed_since_it_is_stored() {
    let mut h = harness();
    h.init("2025-11-25", json!({}));
    h.request(call(json!(1), "maybe", json!({"task":{"ttl":60000}})));
    let job = h.jobs.pop().unwrap();
    assert!(!h.engine.can_stream(job.id));
    assert!(h.send(call(json!(2), "maybe", json!({}))).is_empty());
    let job = h.jobs.pop().unwrap();
    assert!(h.engine.can_stream(job.id), "the same call, not as a task");
}
