//! Bounds: open subscriptions, queued calls, ids reused across batches.

use super::*;

#[test]
fn open_subscriptions_are_bounded_with_an_error_naming_the_limit() {
    let mut h = harness();
    let limit = Config::default().limits.max_subscriptions;
    for id in 0..limit as u64 {
        let r = h.send(modern(
            id,
            "subscriptions/listen",
            json!({"notifications":{}}),
        ));
        assert_eq!(r[0]["method"], "notifications/subscriptions/acknowledged");
    }
    let over = limit as u64;
    let r = h.request(modern(
        over,
        "subscriptions/listen",
        json!({"notifications":{}}),
    ));
    assert_eq!(r["id"], over);
    assert_eq!(r["error"]["code"], -32603);
    assert_eq!(r["error"]["data"]["limit"], limit);
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains(&format!("at most {limit}")));
    check_message(Revision::V2026_07_28, &r, None);
    // Cancelling one makes room for another.
    h.send_line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#);
    let r = h.send(modern(
        over,
        "subscriptions/listen",
        json!({"notifications":{}}),
    ));
    assert_eq!(r[0]["method"], "notifications/subscriptions/acknowledged");
}

#[test]
fn tool_calls_over_the_queue_limit_are_refused_with_an_error_naming_it() {
    let mut h = harness();
    h.initialize("2025-11-25");
    let limit = Config::default().limits.max_queued_calls;
    let call = |id: usize| {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"add","arguments":{"x":1,"y":2}}})
    };
    for id in 1..=limit {
        assert!(h.send(call(id)).is_empty());
    }
    assert_eq!(h.jobs.len(), limit);
    let r = h.request(call(limit + 1));
    assert_eq!(r["id"], limit + 1);
    assert_eq!(r["error"]["code"], -32603);
    assert_eq!(r["error"]["data"]["limit"], limit);
    check_message(h.rev, &r, None);
    assert_eq!(h.jobs.len(), limit, "the refused call never became a job");
    // One finishes: the next call is taken.
    let first = h.jobs.remove(0).id;
    h.complete(first, Outcome::Done(text_result("3")));
    assert!(h.send(call(limit + 2)).is_empty());
    assert_eq!(h.jobs.len(), limit);
}

#[test]
fn a_batch_reusing_an_id_of_an_unanswered_batch_loses_no_response() {
    let mut h = harness();
    h.initialize("2025-03-26");
    let call = |id: u64| json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":2}}});
    // The first batch waits for its call; its ping is answered already.
    let first = json!([call(1), {"jsonrpc":"2.0","id":2,"method":"ping"}]);
    assert!(h.send(first).is_empty());
    // A second batch reuses id 1 while the first still waits for it.
    let r = h.send(json!([call(1)]));
    assert_eq!(r.len(), 1, "the reuse is refused at once: {r:?}");
    assert_eq!(r[0][0]["id"], 1);
    assert_eq!(r[0][0]["error"]["code"], -32600);
    let job = h.jobs.remove(0);
    let r = h.complete(job.id, Outcome::Done(text_result("3")));
    assert_eq!(r.len(), 1, "the first batch is answered whole: {r:?}");
    let items = r[0].as_array().expect("a batch response");
    assert_eq!(items.len(), 2, "{items:?}");
    assert!(items
        .iter()
        .any(|m| m["id"] == 2 && m["result"].is_object()));
    assert!(items
        .iter()
        .any(|m| m["id"] == 1 && m["result"]["content"][0]["text"] == "3"));
    common::assert_valid(Revision::V2025_03_26, "JSONRPCBatchResponse", &r[0]);
}
