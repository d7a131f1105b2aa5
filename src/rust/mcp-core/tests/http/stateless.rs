//! 2026-07-28 requests without a session: the validation ladder, input
//! rounds, cancelling by closing the stream, listen streams.

use super::*;

#[test]
fn stateless_requests_follow_the_validation_ladder() {
    let h = start(options());
    let discover = post(
        h.address,
        &modern_headers("server/discover", None),
        &modern(1, "server/discover", json!({})),
    );
    assert_eq!(discover.status, 200);
    assert!(
        discover.header("mcp-session-id").is_none(),
        "no sessions in 2026-07-28"
    );
    let answer = discover.json();
    check_message(Revision::V2026_07_28, &answer, Some("DiscoverResult"));

    // Rung 1: the envelope.
    let bare = json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion": MODERN}}});
    let reply = post(h.address, &modern_headers("tools/list", None), &bare);
    assert_eq!(reply.status, 400);
    let error = reply.json();
    assert_eq!(error["error"]["code"], -32602);
    assert_eq!(error["id"], 2);
    // Rung 2 before rung 3: a header naming another version.
    let mut future = modern(3, "tools/list", json!({}));
    future["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let reply = post(h.address, &modern_headers("tools/list", None), &future);
    assert_eq!(
        (reply.status, reply.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    // Rung 3: agreeing headers, unsupported version.
    let reply = post(
        h.address,
        &[
            ("MCP-Protocol-Version", "v999.0.0"),
            ("Mcp-Method", "tools/list"),
        ],
        &future,
    );
    assert_eq!(reply.status, 400);
    let error = reply.json();
    check_message(Revision::V2026_07_28, &error, None);
    assert_eq!(error["error"]["code"], -32022);
    assert_eq!(error["error"]["data"]["requested"], "v999.0.0");
    // Mcp-Method mismatch, and case matters in values.
    let reply = post(
        h.address,
        &modern_headers("TOOLS/LIST", None),
        &modern(4, "tools/list", json!({})),
    );
    assert_eq!(
        (reply.status, reply.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    // Mcp-Name with spaces around it is accepted; a wrong one is not.
    let reply = post(
        h.address,
        &modern_headers("tools/call", Some("  echo  ")),
        &modern(5, "tools/call", json!({"name":"echo","arguments":{}})),
    );
    assert_eq!(reply.status, 200);
    let reply = post(
        h.address,
        &modern_headers("tools/call", Some("slow")),
        &modern(6, "tools/call", json!({"name":"echo","arguments":{}})),
    );
    assert_eq!(
        (reply.status, reply.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    // Rung 4: x-mcp-header arguments.
    let weather = modern(
        7,
        "tools/call",
        json!({"name":"weather","arguments":{"region":"eu"}}),
    );
    let mut headers = modern_headers("tools/call", Some("weather"));
    assert_eq!(post(h.address, &headers, &weather).status, 400);
    headers.push(("Mcp-Param-Region", "eu"));
    assert_eq!(post(h.address, &headers, &weather).status, 200);
    // Rung 5: removed and unknown methods are 404.
    for method in ["ping", "initialize", "logging/setLevel", "nope/nothing"] {
        let reply = post(
            h.address,
            &modern_headers(method, None),
            &modern(8, method, json!({})),
        );
        assert_eq!(reply.status, 404, "{method}");
        let error = reply.json();
        assert_eq!(error["error"]["code"], -32601);
        check_message(Revision::V2026_07_28, &error, None);
    }
    // Notifications are accepted and dropped; GET and DELETE are not served.
    let note = json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"_meta":envelope()}});
    assert_eq!(
        post(
            h.address,
            &modern_headers("notifications/cancelled", None),
            &note
        )
        .status,
        202
    );
    assert_eq!(
        send(
            h.address,
            "GET",
            "/mcp",
            &[("MCP-Protocol-Version", MODERN)],
            ""
        )
        .status,
        405
    );
}

#[test]
fn a_stateless_call_needing_input_is_answered_with_input_required_and_retried() {
    let h = start(options());
    let headers = modern_headers("tools/call", Some("ask"));
    let reply = post(
        h.address,
        &headers,
        &modern(1, "tools/call", json!({"name":"ask","arguments":{}})),
    );
    assert_eq!(reply.status, 200);
    let first = reply.json();
    check_message(Revision::V2026_07_28, &first, Some("InputRequiredResult"));
    assert_eq!(first["result"]["resultType"], "input_required");
    let state = first["result"]["requestState"].clone();
    // The retry is another request on another connection (another engine).
    let retry = modern(
        2,
        "tools/call",
        json!({"name":"ask","arguments":{},"requestState":state,
        "inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}}}),
    );
    let answer = post(h.address, &headers, &retry).json();
    check_message(Revision::V2026_07_28, &answer, Some("CallToolResult"));
    assert_eq!(answer["result"]["content"][0]["text"], "Hello, Ada!");
    // Used once only.
    let again = post(h.address, &headers, &retry);
    assert_eq!(again.status, 400);
}

#[test]
fn closing_a_stateless_response_stream_cancels_the_call() {
    let h = start(options());
    let mut reply = post(
        h.address,
        &modern_headers("tools/call", Some("slow")),
        &modern(42, "tools/call", json!({"name":"slow","arguments":{}})),
    );
    assert_eq!(reply.status, 200);
    assert!(reply.is_sse(), "a call that takes a while is streamed");
    // A keep-alive comment arrives; then the client goes away.
    let mut line = String::new();
    reply.reader.read_line(&mut line).unwrap();
    drop(reply);
    assert_eq!(h.seen.recv_timeout(WAIT), Ok(Seen::Cancelled("42".into())));
}

#[test]
fn a_listen_stream_is_acknowledged_and_held_open() {
    let h = start(options());
    let mut reply = post(
        h.address,
        &modern_headers("subscriptions/listen", None),
        &modern(
            9,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        ),
    );
    assert_eq!(reply.status, 200);
    assert!(reply.is_sse());
    let ack = reply.event().unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        9
    );
    check_message(Revision::V2026_07_28, &ack, None);
}
