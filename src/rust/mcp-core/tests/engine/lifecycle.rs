//! Initialisation and the basics of every session: revisions, ping, what
//! comes before `initialize`, malformed input, answers to our own questions.

use super::*;

#[test]
fn initialize_echoes_every_legacy_revision() {
    for version in LEGACY {
        let mut h = harness();
        let r = h.initialize(version);
        assert_eq!(r["id"], 0);
        let result = &r["result"];
        assert_eq!(result["protocolVersion"], version);
        assert_eq!(
            result["capabilities"],
            json!({"logging":{},"tools":{"listChanged":true}})
        );
        assert_eq!(result["serverInfo"]["name"], "test-server");
        assert_eq!(result["serverInfo"]["version"], "1.2.3");
        assert_eq!(
            result["instructions"], "Use add to add.",
            "instructions reach {version} too"
        );
        let has_title = result["serverInfo"].get("title").is_some();
        assert_eq!(has_title, version >= "2025-06-18", "{version}");
    }
}

#[test]
fn initialize_counter_offers_the_latest_legacy_revision() {
    for version in ["2024-10-07", "1999-01-01", "garbage", MODERN] {
        let mut h = harness();
        assert_eq!(
            h.initialize(version)["result"]["protocolVersion"],
            "2025-11-25",
            "{version}"
        );
    }
}

#[test]
fn initialize_checks_its_params() {
    let mut h = harness();
    for params in [
        json!(null),
        json!({"capabilities":{},"clientInfo":{"name":"a","version":"1"}}),
        json!({"protocolVersion":"","capabilities":{},"clientInfo":{"name":"a","version":"1"}}),
        json!({"protocolVersion":"2025-11-25","capabilities":[],"clientInfo":{"name":"a","version":"1"}}),
        json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a"}}),
    ] {
        let r = h.request(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":params}));
        assert_eq!(r["error"]["code"], -32602, "{params}");
        assert_eq!(r["error"]["message"], "Invalid initialize params");
    }
    // A failed initialize leaves the server uninitialised.
    let r = h.request(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
    assert_eq!(r["error"]["code"], -32600);
}

#[test]
fn ping_works_before_and_after_initialize() {
    let mut h = harness();
    let r = h.request(json!({"jsonrpc":"2.0","id":"p1","method":"ping"}));
    assert_eq!(r, json!({"jsonrpc":"2.0","id":"p1","result":{}}));
    h.initialize("2025-06-18");
    let r = h.request(json!({"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":1}}));
    assert_eq!(r["result"], json!({}));
    check_message(h.rev, &r, Some("EmptyResult"));
}

#[test]
fn requests_before_initialize_get_a_prompt_error() {
    let mut h = harness();
    for method in ["tools/list", "tools/call", "resources/list"] {
        let r = h.request(json!({"jsonrpc":"2.0","id":5,"method":method}));
        assert_eq!(r["id"], 5);
        assert_eq!(r["error"]["code"], -32600, "{method}");
        assert_eq!(r["error"]["message"], "Server not initialized");
        assert!(r["error"]["data"]["supported"].as_array().unwrap().len() == 5);
        check_message(Revision::V2025_11_25, &r, None);
    }
}

#[test]
fn notifications_and_client_responses_are_never_answered() {
    let mut h = harness();
    h.initialize("2025-11-25");
    for line in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{"a":1}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":2}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":6,"error":{"code":1,"message":"x"}}"#,
        "",
        "   ",
    ] {
        assert!(h.send_line(line).is_empty(), "{line}");
    }
    assert!(h.jobs.is_empty(), "a tools/call notification must not run");
}

#[test]
fn malformed_input_gets_json_rpc_errors() {
    let mut h = harness();
    let r = h.send_line("{not json");
    assert_eq!(r[0]["error"]["code"], -32700);
    assert_eq!(r[0]["id"], Value::Null);
    let r = h.send_line(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#);
    assert_eq!(r[0]["error"]["code"], -32600);
    assert_eq!(r[0]["id"], Value::Null);
    let r = h.send_line(r#"{"jsonrpc":"1.0","id":"abc","method":"ping"}"#);
    assert_eq!(r[0]["error"]["code"], -32600);
    assert_eq!(r[0]["id"], "abc");
    let r = h.send_line("null");
    assert_eq!(r[0]["error"]["code"], -32600);
    let r = h.send_line(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    assert_eq!(
        r[0]["error"]["code"], -32600,
        "no batches without 2025-03-26"
    );
    for msg in &r {
        check_message(Revision::V2025_11_25, msg, None);
    }
}

#[test]
fn invalid_utf8_in_a_string_is_answered_on_the_request_id() {
    let mut h = harness();
    h.initialize("2025-06-18");
    let line = b"{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"x\":\"\xff\"}}}";
    let r = h.send_bytes(line);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["id"], 41, "{}", r[0]);
    assert_eq!(r[0]["error"]["code"], -32700);
    assert!(r[0]["error"]["data"]["reason"]
        .as_str()
        .unwrap()
        .contains("invalid UTF-8"));
    check_message(h.rev, &r[0], None);
    assert!(h.jobs.is_empty(), "nothing ran on the lossy text");
    // An id that is itself not UTF-8 is never guessed at.
    let r = h.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}");
    assert_eq!(r[0]["id"], Value::Null);
    assert_eq!(r[0]["error"]["code"], -32700);
    // The server goes on serving.
    let r = h.request(json!({"jsonrpc":"2.0","id":42,"method":"ping"}));
    assert_eq!(r["result"], json!({}));
}

#[test]
fn an_unreadable_answer_to_our_question_ends_the_wait() {
    let (mut h, job, ask_id) = waiting_for_an_answer();
    // The user's answer holds a byte that is not UTF-8.
    let mut bad = format!(
        r#"{{"jsonrpc":"2.0","id":{ask_id},"result":{{"action":"accept","content":{{"name":"#
    )
    .into_bytes();
    bad.extend_from_slice(b"\"\xff\"}}}");
    assert!(
        h.send_bytes(&bad).is_empty(),
        "a response is never answered"
    );
    let answer = the_only_answer(&mut h, job.id);
    assert!(answer.unwrap_err().contains("could not be read"));
}

#[test]
fn an_answer_to_our_question_too_large_to_read_ends_the_wait() {
    let (mut h, job, ask_id) = waiting_for_an_answer();
    // The user's answer is longer than the server reads: only its start is
    // seen. The tool waiting for it learns why, and the client gets no
    // error for a request it never sent.
    let prefix = format!(r#"{{"jsonrpc":"2.0","id":{ask_id},"result":{{"action":"accept","#);
    let mut out = Vec::new();
    h.engine
        .on_oversized(prefix.as_bytes(), 64 * 1024 * 1024, &mut out);
    assert!(h.collect(out).is_empty(), "a response is never answered");
    let answer = the_only_answer(&mut h, job.id);
    assert!(answer.unwrap_err().contains("too large"));
}

#[test]
fn an_answer_to_our_question_of_the_wrong_shape_ends_the_wait() {
    let (mut h, job, ask_id) = waiting_for_an_answer();
    // Our id, but neither `result` nor `error`: no answer can be read from
    // it. The tool learns so, and the client gets no error for a request it
    // never sent.
    assert!(
        h.send(json!({"jsonrpc":"2.0","id":ask_id,"outcome":{"action":"accept"}}))
            .is_empty(),
        "a response is never answered"
    );
    let answer = the_only_answer(&mut h, job.id);
    assert!(answer.unwrap_err().contains("could not be read"));
}

#[test]
fn ids_round_trip_exactly_in_responses() {
    let mut h = harness();
    for id in [
        "9007199254740993",
        "123456789012345678901234567890",
        "-3",
        "\"ünï\\u00e7ode\"",
    ] {
        let mut out = Vec::new();
        h.engine.on_line(
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).as_bytes(),
            &mut out,
        );
        let Output::Write(line) = &out[0] else {
            panic!()
        };
        let expected_id = if id.starts_with('"') {
            "\"ünïçode\"".to_string()
        } else {
            id.to_string()
        };
        assert!(line.contains(&format!("\"id\":{expected_id},")), "{line}");
    }
}
