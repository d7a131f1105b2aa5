//! Batches (2025-03-26 only), subscriptions at end of input, oversized lines.

use super::*;

#[test]
fn batches_belong_to_2025_03_26() {
    let mut h = harness();
    h.initialize("2025-03-26");
    let r = h.send_line(
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#,
    );
    assert_eq!(r.len(), 1);
    let items = r[0].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["id"], 1);
    assert_eq!(items[1]["id"], 2);
    common::assert_valid(Revision::V2025_03_26, "JSONRPCBatchResponse", &r[0]);

    assert!(h
        .send_line(r#"[{"jsonrpc":"2.0","method":"notifications/x"}]"#)
        .is_empty());
    let r = h.send_line("[]");
    assert_eq!(r[0]["error"]["code"], -32600);

    // A batch holding a tool call is answered when the call finishes.
    let r = h.send_line(
        r#"[{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":2}}},{"jsonrpc":"2.0","id":"b","method":"ping"},5]"#,
    );
    assert!(r.is_empty());
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Done(text_result("3")));
    let items = r[0].as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert!(items
        .iter()
        .any(|m| m["id"] == "a" && m["result"]["content"][0]["text"] == "3"));
    assert!(items.iter().any(|m| m["id"] == "b"));
    assert!(items.iter().any(|m| m["error"]["code"] == -32600));

    let r = h.send_line(r#"[{"jsonrpc":"2.0","id":9,"method":"initialize","params":{}}]"#);
    assert_eq!(
        r[0][0]["error"]["code"], -32600,
        "initialize is never batched"
    );

    let mut h = harness();
    h.initialize("2025-06-18");
    let r = h.send_line(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    assert_eq!(r[0]["error"]["code"], -32600);
}

#[test]
fn a_batch_is_answered_whole_even_with_odd_members() {
    let mut h = harness();
    h.initialize("2025-03-26");
    // An id used twice: the first use is answered, the second refused, in
    // the one batch response.
    let r = h.send_line(
        r#"[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]"#,
    );
    assert_eq!(r.len(), 1, "{r:?}");
    let items = r[0].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert!(items
        .iter()
        .any(|m| m["id"] == 7 && m["result"].is_object()));
    assert!(items
        .iter()
        .any(|m| m["id"] == 7 && m["error"]["code"] == -32600));

    // A subscription in a batch is acknowledged, never answered: the batch
    // does not wait for it.
    let listen = modern(8, "subscriptions/listen", json!({"notifications":{}}));
    let batch = json!([{"jsonrpc":"2.0","id":9,"method":"ping"}, listen]);
    let r = h.send(batch);
    assert!(
        r.iter().any(|m| m
            .as_array()
            .is_some_and(|items| items.len() == 1 && items[0]["id"] == 9)),
        "the ping's batch response is sent: {r:?}"
    );
}

#[test]
fn subscriptions_are_acknowledged_and_closed_at_eof() {
    let mut h = harness();
    let r = h.send(modern(
        7,
        "subscriptions/listen",
        json!({"notifications":{"toolsListChanged":true}}),
    ));
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        r[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    check_message(
        Revision::V2026_07_28,
        &r[0],
        Some("SubscriptionsAcknowledgedNotification"),
    );
    let mut out = Vec::new();
    h.engine.on_eof(&mut out);
    let r = h.collect(out);
    assert_eq!(r[0]["id"], 7);
    assert_eq!(
        r[0]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    check_message(
        Revision::V2026_07_28,
        &r[0],
        Some("SubscriptionsListenResult"),
    );

    // A cancelled stream ends silently.
    h.send(modern(
        8,
        "subscriptions/listen",
        json!({"notifications":{}}),
    ));
    h.send_line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}"#);
    let mut out = Vec::new();
    h.engine.on_eof(&mut out);
    assert!(out.is_empty());
}

#[test]
fn oversized_lines_are_answered_with_their_id() {
    let mut h = harness();
    let mut out = Vec::new();
    h.engine.on_oversized(
        br#"{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"#,
        99_999_999,
        &mut out,
    );
    let r = h.collect(out);
    assert_eq!(r[0]["id"], 77);
    assert_eq!(r[0]["error"]["code"], -32600);
    assert!(r[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("99999999 bytes"));
}
