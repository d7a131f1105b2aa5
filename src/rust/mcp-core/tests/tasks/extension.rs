//! The 2026-07-28 tasks extension: tasks the server chooses, input and
//! cancellation.

use super::*;

#[test]
fn extension_tasks_are_chosen_by_the_server() {
    let mut h = harness();
    let discover = h.request(json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":modern_meta(json!({}))}}));
    assert_eq!(
        discover["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    check_message(MODERN, &discover, Some("DiscoverResult"));

    let with_ext = json!({"extensions":{"io.modelcontextprotocol/tasks":{}}});
    let created = h.request(call(
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

    let get = |h: &mut Harness, id: u64| {
        h.request(json!({"jsonrpc":"2.0","id":id,"method":"tasks/get","params":{"taskId":task_id,"_meta":modern_meta(with_ext.clone())}}))
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
    let refused = h.request(call(
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
        let r = h.request(json!({"jsonrpc":"2.0","id":7,"method":method,"params":{"taskId":task_id,"_meta":modern_meta(json!({}))}}));
        assert_eq!(r["error"]["code"], -32601, "{method}");
    }
}

#[test]
fn extension_tasks_take_input_and_cancel() {
    let mut h = harness();
    let caps = json!({"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}});
    let created = h.request(call(json!(1), "maybe", json!({"_meta": modern_meta(caps)})));
    let task_id = created["result"]["taskId"].as_str().unwrap().to_string();
    let job = h.jobs.pop().unwrap();
    assert_eq!(job.context.input, InputMode::Ask);
    assert!(
        h.ask_name(job.id, "name").is_empty(),
        "listed by tasks/get, not sent"
    );
    let meta = modern_meta(json!({"extensions":{"io.modelcontextprotocol/tasks":{}}}));
    let waiting = h.request(json!({"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":task_id,"_meta":meta}}));
    assert_eq!(waiting["result"]["status"], "input_required");
    assert_eq!(
        waiting["result"]["inputRequests"]["name"]["method"],
        "elicitation/create"
    );
    check_message(MODERN, &waiting, None);
    let bad = h.request(
        json!({"jsonrpc":"2.0","id":3,"method":"tasks/update","params":{"taskId":task_id,
        "inputResponses":{"name":{"what":"no action"}},"_meta":meta}}),
    );
    assert_eq!(bad["error"]["code"], -32602);
    let ack = h.request(json!({"jsonrpc":"2.0","id":4,"method":"tasks/update","params":{"taskId":task_id,
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
    let working = h.request(json!({"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":task_id,"_meta":meta}}));
    assert_eq!(working["result"]["status"], "working");
    let ack = h.request(json!({"jsonrpc":"2.0","id":6,"method":"tasks/cancel","params":{"taskId":task_id,"_meta":meta}}));
    assert_eq!(ack["result"]["resultType"], "complete");
    assert_eq!(h.cancels, vec![job.id]);
    let cancelled = h.request(json!({"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":task_id,"_meta":meta}}));
    assert_eq!(cancelled["result"]["status"], "cancelled");
}
