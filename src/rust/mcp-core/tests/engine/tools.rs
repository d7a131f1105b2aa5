//! `tools/list` and `tools/call`: rendering per revision, arguments and
//! output schemas, timeouts, failures and cancellation.

use super::*;

#[test]
fn tools_list_is_one_page_downgraded_per_revision() {
    for version in LEGACY {
        let mut h = harness();
        h.initialize(version);
        let r = h.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
        check_message(h.rev, &r, Some("ListToolsResult"));
        let result = r["result"].as_object().unwrap();
        assert_eq!(
            result.keys().collect::<Vec<_>>(),
            ["tools"],
            "no nextCursor key"
        );
        let tools = result["tools"].as_array().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["add", "stats", "series"]);
        assert_eq!(
            tools[0]["annotations"].is_object(),
            version >= "2025-03-26",
            "{version}"
        );
        assert_eq!(
            tools[0].get("title").is_some(),
            version >= "2025-06-18",
            "{version}"
        );
        assert_eq!(
            tools[1].get("outputSchema").is_some(),
            version >= "2025-06-18",
            "{version}"
        );
        assert_eq!(
            tools[2].get("icons").is_some(),
            version >= "2025-11-25",
            "{version}"
        );
        if version >= "2025-06-18" {
            assert_eq!(
                tools[2]["outputSchema"]["type"], "object",
                "array roots are wrapped"
            );
        }
        for params in [json!({}), json!(null), json!({"cursor": null})] {
            let r =
                h.request(json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":params}));
            assert!(r["result"]["tools"].is_array(), "{params}");
        }
        let r = h.request(
            json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"page-2"}}),
        );
        assert_eq!(r["error"]["code"], -32602);
        check_message(h.rev, &r, None);
    }
}

#[test]
fn tools_call_runs_a_job_and_answers_with_its_result() {
    for version in LEGACY {
        let mut h = harness();
        h.initialize(version);
        let sent = h.send(json!({"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{
            "name":"add","arguments":{"x":1.5,"y":2},"_meta":{"progressToken":12345678901234567890u128}}}));
        assert!(sent.is_empty(), "the answer waits for R");
        let job = h.jobs.pop().unwrap();
        assert_eq!(job.tool, 0);
        assert_eq!(Value::Object(job.arguments.clone()), json!({"x":1.5,"y":2}));
        assert_eq!(
            job.context.progress_token.as_deref(),
            Some("12345678901234567890")
        );
        assert_eq!(job.context.revision.as_str(), version);
        assert_eq!(
            job.context.client_info.as_ref().unwrap()["name"],
            "test-client"
        );
        assert_eq!(h.engine.pending_jobs(), 1);
        let r = h.complete(job.id, Outcome::Done(text_result("3.5")));
        assert_eq!(r.len(), 1);
        assert_eq!(r[0]["id"], "c1");
        assert_eq!(r[0]["result"]["content"][0]["text"], "3.5");
        assert_eq!(r[0]["result"]["isError"], false);
        check_message(h.rev, &r[0], Some("CallToolResult"));
        assert_eq!(h.engine.pending_jobs(), 0);
        // A late second outcome for the same job is ignored.
        assert!(h
            .complete(job.id, Outcome::Done(text_result("again")))
            .is_empty());
    }
}

#[test]
fn tools_call_refuses_bad_requests() {
    let mut h = harness();
    h.initialize("2025-11-25");
    for params in [
        json!(null),
        json!({}),
        json!({"name":["add"]}),
        json!({"name":"add","arguments":[1,2]}),
        json!({"name":"add","arguments":"x"}),
    ] {
        let r = h.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":params}));
        assert_eq!(r["error"]["code"], -32602, "{params}");
        check_message(h.rev, &r, None);
    }
    for name in ["nope", "", "ad", "ADD"] {
        let r =
            h.request(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":name}}));
        assert_eq!(r["error"]["code"], -32602);
        assert_eq!(r["error"]["message"], format!("Unknown tool: {name}"));
    }
    assert!(h.jobs.is_empty());
}

#[test]
fn invalid_arguments_are_a_tool_error_the_model_can_read() {
    let mut h = harness();
    h.initialize("2025-11-25");
    let r = h.request(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"add","arguments":{"x":"three","y":2}}}),
    );
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        r["result"]["content"][0]["text"],
        "Invalid arguments for tool \"add\": x: expected a number, got \"three\""
    );
    check_message(h.rev, &r, Some("CallToolResult"));
    let r = h.request(
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{
        "name":"add","arguments":{"x":1,"val":2}}}),
    );
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("missing required argument \"y\""), "{text}");
    assert!(text.contains("unexpected argument \"val\""), "{text}");
    assert!(h.jobs.is_empty(), "R never sees invalid arguments");
}

#[test]
fn null_means_omitted_for_optional_arguments() {
    let mut h = harness();
    h.initialize("2025-11-25");
    h.send(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"add","arguments":{"x":1,"y":2,"z":null}}}),
    );
    let job = h
        .jobs
        .pop()
        .expect("an optional null is dropped, not refused");
    assert_eq!(Value::Object(job.arguments), json!({"x":1,"y":2}));
    let r = h.request(
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{
        "name":"add","arguments":{"x":null,"y":2}}}),
    );
    assert_eq!(
        r["result"]["content"][0]["text"],
        "Invalid arguments for tool \"add\": x: expected a number, got null"
    );
}

#[test]
fn output_schemas_are_enforced() {
    let mut h = harness();
    h.initialize("2025-11-25");
    h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stats"}}));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Done(text_result("no structure")));
    assert_eq!(r[0]["error"]["code"], -32603);
    assert_eq!(r[0]["error"]["data"]["tool"], "stats");
    check_message(h.rev, &r[0], None);

    h.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stats"}}));
    let job = h.jobs.pop().unwrap();
    let mut good = text_result(r#"{"mean":2.5}"#);
    good.structured = raw(r#"{"mean":2.5}"#);
    let r = h.complete(job.id, Outcome::Done(good));
    assert_eq!(r[0]["result"]["structuredContent"], json!({"mean":2.5}));
    check_message(h.rev, &r[0], Some("CallToolResult"));

    // An error result needs no structured content.
    h.send(json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"stats"}}));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Done(ToolResult::error("failed")));
    assert_eq!(r[0]["result"]["isError"], true);
}

#[test]
fn array_results_are_wrapped_for_legacy_clients_and_bare_for_modern_ones() {
    let mut h = harness();
    h.initialize("2025-06-18");
    let mut series = text_result("[1,2,3]");
    series.structured = raw("[1,2,3]");
    h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"series"}}));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Done(series.clone()));
    assert_eq!(
        r[0]["result"]["structuredContent"],
        json!({"result":[1,2,3]})
    );
    check_message(h.rev, &r[0], Some("CallToolResult"));

    h.send(modern(2, "tools/call", json!({"name":"series"})));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Done(series));
    assert_eq!(r[0]["result"]["structuredContent"], json!([1, 2, 3]));
    check_message(Revision::V2026_07_28, &r[0], Some("CallToolResult"));
}

#[test]
fn new_content_types_are_refused_whole_for_old_revisions() {
    let audio = ToolResult {
        content: vec![Block {
            content: Content::Audio {
                data: "UklGRg==".into(),
                mime_type: "audio/wav".into(),
            },
            annotations: None,
            meta: None,
        }],
        structured: None,
        is_error: false,
        meta: None,
        vouched: Default::default(),
    };
    let mut h = harness();
    h.initialize("2024-11-05");
    h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Done(audio.clone()));
    assert_eq!(r[0]["result"]["isError"], true);
    check_message(h.rev, &r[0], Some("CallToolResult"));
    let mut h = harness();
    h.initialize("2025-03-26");
    h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Done(audio));
    assert_eq!(r[0]["result"]["content"][0]["type"], "audio");
    check_message(h.rev, &r[0], Some("CallToolResult"));
}

#[test]
fn timeouts_and_failures_are_reported() {
    let mut h = harness();
    h.initialize("2025-11-25");
    h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::TimedOut(Duration::from_millis(2500)));
    assert_eq!(r[0]["result"]["isError"], true);
    assert_eq!(
        r[0]["result"]["content"][0]["text"],
        "Tool \"add\" timed out after 2.5 seconds and was stopped."
    );
    h.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Failed("no R".into()));
    assert_eq!(r[0]["error"]["code"], -32603);
    check_message(h.rev, &r[0], None);
}

#[test]
fn cancelling_a_call_silences_it() {
    let mut h = harness();
    h.initialize("2025-11-25");
    h.send(json!({"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    // Cancels for other ids are ignored.
    h.send_line(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"other"}}"#,
    );
    h.send_line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#);
    assert!(h.cancels.is_empty());
    h.send_line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"user"}}"#);
    assert_eq!(h.cancels, vec![job.id]);
    // Even a result that raced the cancel is not sent.
    assert!(h
        .complete(job.id, Outcome::Done(text_result("late")))
        .is_empty());
    assert_eq!(h.engine.pending_jobs(), 0);
    // The next call works normally.
    h.send(json!({"jsonrpc":"2.0","id":"next","method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    assert_eq!(h.complete(job.id, Outcome::Cancelled).len(), 0);
}

#[test]
fn small_arguments_are_read_as_the_job_is_made_and_large_ones_by_the_tool_thread() {
    let mut h = harness();
    let registry = Registry::new(tools()).unwrap();
    h.initialize("2025-11-25");
    let mut small = job_as_made(&mut h, 1, json!({"x": 1.5, "y": 2}));
    assert!(small.sent_arguments.is_none(), "read already");
    assert_eq!(
        Value::Object(small.arguments.clone()),
        json!({"x": 1.5, "y": 2})
    );
    assert!(small.read_arguments(&registry).is_ok());
    assert_eq!(
        Value::Object(small.arguments.clone()),
        json!({"x": 1.5, "y": 2})
    );
    // A refusal found early is what reading gives, once the tool's thread asks.
    let mut wrong = job_as_made(&mut h, 2, json!({"x": "one", "y": 2}));
    let refusal = wrong.read_arguments(&registry).unwrap_err();
    assert!(refusal.is_error);
    assert!(
        format!("{:?}", refusal.content).contains("Invalid arguments for tool \\\"add\\\""),
        "{:?}",
        refusal.content
    );
    // Large arguments stay text until then (and then are refused whole).
    let pad = "p".repeat(100_000);
    let mut large = job_as_made(&mut h, 3, json!({"x": 1, "y": 2, "pad": pad}));
    assert!(large.sent_arguments.is_some(), "left for the tool's thread");
    assert!(large.read_arguments(&registry).is_err());
    assert!(large.sent_arguments.is_none());
}

/// The `series` result `[1,2,3]` as a tool sends it whole: structured
/// content mirrored as its text block, vouched for as conforming.
fn series_whole() -> ToolResult {
    ToolResult {
        content: Vec::new(),
        structured: raw("[1,2,3]"),
        is_error: false,
        meta: None,
        vouched: mcp_core::engine::result::Vouched {
            conforms: true,
            mirrored: true,
        },
    }
}

/// The same result handed over in parts, already all written.
fn series_streamed() -> Outcome {
    let (sink, content) = mcp_core::protocol::streamed::json_stream();
    assert!(sink.send("[1,".into()));
    assert!(sink.send("2,3]".into()));
    sink.finish();
    Outcome::Streamed {
        content,
        meta: None,
        object: false,
    }
}

#[test]
fn a_streamed_result_is_the_answer_a_whole_one_would_be_in_every_revision() {
    for version in LEGACY.iter().copied().chain([MODERN]) {
        let mut h = harness();
        let call = |id: u64| {
            if version == MODERN {
                modern(id, "tools/call", json!({"name":"series"}))
            } else {
                json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"series"}})
            }
        };
        if version != MODERN {
            h.initialize(version);
        }
        h.send(call(1));
        let job = h.jobs.pop().unwrap();
        let whole = h.complete(job.id, Outcome::Done(series_whole()));
        h.send(call(2));
        let job = h.jobs.pop().unwrap();
        assert!(h.engine.can_stream(job.id), "{version}");
        let streamed = h.complete(job.id, series_streamed());
        let mut expected = whole[0].clone();
        expected["id"] = json!(2);
        assert_eq!(streamed[0], expected, "{version}");
        let rev = Revision::parse(version).unwrap();
        check_message(rev, &streamed[0], Some("CallToolResult"));
    }
}

#[test]
fn a_cancelled_call_drops_its_streamed_result_and_its_producer_learns_it() {
    let mut h = harness();
    h.initialize("2025-11-25");
    h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"series"}}));
    let job = h.jobs.pop().unwrap();
    h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}));
    assert!(!h.engine.can_stream(job.id));
    let (sink, content) = mcp_core::protocol::streamed::json_stream();
    let outcome = Outcome::Streamed {
        content,
        meta: None,
        object: false,
    };
    assert!(h.complete(job.id, outcome).is_empty());
    assert!(!sink.send("[1]".into()), "nobody reads the parts any more");
}

#[test]
fn batched_calls_are_never_streamed() {
    let mut h = harness();
    h.initialize("2025-03-26");
    h.send_line(r#"[{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"series"}},{"jsonrpc":"2.0","id":"b","method":"ping"}]"#);
    let job = h.jobs.pop().unwrap();
    assert!(!h.engine.can_stream(job.id));
    // Streamed all the same, it is refused with an error in its batch,
    // never written on a line of its own.
    let r = h.complete(job.id, series_streamed());
    let items = r[0].as_array().unwrap();
    assert!(items
        .iter()
        .any(|m| m["id"] == "a" && m["error"]["code"] == -32603));
}
