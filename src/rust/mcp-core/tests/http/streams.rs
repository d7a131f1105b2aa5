//! Resuming a stream with `Last-Event-ID`, event ids, and what sessions and
//! listen streams hear of changes.

use super::*;

#[test]
fn a_call_whose_stream_the_server_lets_go_is_resumed_with_last_event_id() {
    let h = start(options());
    let session = initialize(h.address, json!({}));
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let reply = post(h.address, &headers, &call(1, "reconnect", json!({})));
    assert_eq!(reply.status, 200);
    assert!(reply.is_sse());
    // Only the priming event: an id, the reconnection delay, no message.
    let body = reply.body();
    let first = body.lines().next().unwrap_or_default();
    let last = first.strip_prefix("id: ").expect("an event id first");
    assert!(body.contains("\nretry: 1000\n"), "{body}");
    assert!(!body.contains("\"result\""), "{body}");
    let mut resumed = send(
        h.address,
        "GET",
        "/mcp",
        &[
            ("Mcp-Session-Id", &session),
            ("Last-Event-ID", last),
            ("Accept", "text/event-stream"),
        ],
        "",
    );
    assert_eq!(resumed.status, 200);
    assert!(resumed.is_sse());
    let events = resumed.events_until_response();
    let answer = events.last().expect("the response");
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "closed: true");
    check_message(Revision::V2025_11_25, answer, Some("CallToolResult"));
    // A stream the session does not keep is refused, not hung.
    let unknown = send(
        h.address,
        "GET",
        "/mcp",
        &[
            ("Mcp-Session-Id", &session),
            ("Last-Event-ID", "999:0"),
            ("Accept", "text/event-stream"),
        ],
        "",
    );
    assert_eq!(unknown.status, 400);
}

#[test]
fn events_of_a_2025_06_18_session_have_ids_but_no_priming() {
    let h = start(options());
    let reply = post(
        h.address,
        &[],
        &json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
    );
    let session = reply.header("mcp-session-id").unwrap().to_string();
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let reply = post(h.address, &headers, &call(1, "progress", json!({})));
    assert!(reply.is_sse());
    let body = reply.body();
    let first = body
        .lines()
        .find(|l| !l.is_empty() && !l.starts_with(':'))
        .unwrap_or_default();
    assert!(first.starts_with("id: 1:1"), "{body}");
    assert!(!body.contains("retry:"), "{body}");
    assert!(
        !body.contains("data:\n"),
        "no event without a message: {body}"
    );
    // Its server cannot let a stream go: the client could not resume it.
    let reply = post(h.address, &headers, &call(2, "reconnect", json!({})));
    let mut reply = reply;
    let events = reply.events_until_response();
    assert_eq!(
        events.last().unwrap()["result"]["content"][0]["text"],
        "closed: false"
    );
}

#[test]
fn sessions_and_listen_streams_hear_of_changes_and_resource_updates() {
    let h = start_with(options(), changing_registry(false, 0));
    let session = initialize(h.address, json!({}));
    let subscribed = post(
        h.address,
        &[("Mcp-Session-Id", &session)],
        &json!({"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://r"}}),
    )
    .json();
    assert_eq!(subscribed["result"], json!({}));
    let mut get = send(
        h.address,
        "GET",
        "/mcp",
        &[
            ("Mcp-Session-Id", &session),
            ("Accept", "text/event-stream"),
        ],
        "",
    );
    assert_eq!(get.status, 200);
    let mut listen = post(
        h.address,
        &modern_headers("subscriptions/listen", None),
        &modern(
            9,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["test://r"]}}),
        ),
    );
    let ack = listen.event().unwrap();
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://r"]})
    );
    // Prompts only: hears nothing of tools nor of the resource.
    let mut prompts_only = post(
        h.address,
        &modern_headers("subscriptions/listen", None),
        &modern(
            11,
            "subscriptions/listen",
            json!({"notifications": {"promptsListChanged": true}}),
        ),
    );
    assert_eq!(
        prompts_only.event().unwrap()["method"],
        "notifications/subscriptions/acknowledged"
    );
    let mut changed = post(
        h.address,
        &modern_headers("tools/call", Some("change")),
        &modern(10, "tools/call", json!({"name": "change", "arguments": {}})),
    );
    let events = if changed.is_sse() {
        changed.events_until_response()
    } else {
        vec![changed.json()]
    };
    assert_eq!(
        events.last().unwrap()["result"]["content"][0]["text"],
        "changed"
    );
    let mut session_heard = vec![get.event().unwrap(), get.event().unwrap()];
    let mut listen_heard = vec![listen.event().unwrap(), listen.event().unwrap()];
    for heard in [&mut session_heard, &mut listen_heard] {
        heard.sort_by_key(|m| m["method"].as_str().unwrap_or("").to_string());
    }
    assert_eq!(
        session_heard[0]["method"],
        "notifications/resources/updated"
    );
    assert_eq!(session_heard[0]["params"]["uri"], "test://r");
    assert_eq!(
        session_heard[1]["method"],
        "notifications/tools/list_changed"
    );
    for m in &session_heard {
        check_message(Revision::V2025_11_25, m, None);
    }
    assert_eq!(listen_heard[0]["method"], "notifications/resources/updated");
    assert_eq!(
        listen_heard[1]["method"],
        "notifications/tools/list_changed"
    );
    for m in &listen_heard {
        assert_eq!(
            m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            9
        );
        check_message(Revision::V2026_07_28, m, None);
    }
    // The new set is what a request sees now.
    let list = post(
        h.address,
        &[("Mcp-Session-Id", &session)],
        &json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
    )
    .json();
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"added"), "{names:?}");
    // The prompts-only stream got nothing but keep-alives meanwhile.
    prompts_only
        .reader
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut line = String::new();
    let mut seen = String::new();
    let until = std::time::Instant::now() + Duration::from_millis(300);
    while std::time::Instant::now() < until
        && prompts_only
            .reader
            .read_line(&mut line)
            .is_ok_and(|n| n > 0)
    {
        seen.push_str(&line);
        line.clear();
    }
    assert!(seen.contains(": ping"), "the stream is alive: {seen}");
    assert!(!seen.contains("data:"), "{seen}");
}
