//! 2026-07-28 requests: served without a handshake, their envelope and its
//! errors, input, versions, and both eras in one process.

use super::*;

#[test]
fn modern_requests_are_served_without_a_handshake() {
    let mut h = harness();
    let r = h.request(modern(1, "server/discover", json!({})));
    let result = &r["result"];
    assert_eq!(result["supportedVersions"], json!([MODERN]));
    assert_eq!(
        result["capabilities"]["tools"],
        json!({"listChanged": true})
    );
    assert_eq!(result["instructions"], "Use add to add.");
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["cacheScope"], "public");
    assert!(result["ttlMs"].as_u64().is_some());
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "test-server"
    );
    check_message(Revision::V2026_07_28, &r, Some("DiscoverResult"));

    let r = h.request(modern(2, "tools/list", json!({})));
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["cacheScope"], "public");
    assert!(r["result"].get("nextCursor").is_none());
    assert!(r["result"]["tools"][2].get("execution").is_none());
    check_message(Revision::V2026_07_28, &r, Some("ListToolsResult"));

    h.send(modern(
        3,
        "tools/call",
        json!({"name":"add","arguments":{"x":1,"y":2}}),
    ));
    let job = h.jobs.pop().unwrap();
    assert_eq!(job.context.revision, Revision::V2026_07_28);
    assert_eq!(
        job.context.client_info.as_ref().unwrap()["name"],
        "modern-client"
    );
    assert!(job
        .context
        .meta
        .as_ref()
        .unwrap()
        .contains_key("io.modelcontextprotocol/protocolVersion"));
    let r = h.complete(job.id, Outcome::Done(text_result("3")));
    assert_eq!(r[0]["result"]["resultType"], "complete");
    assert_eq!(
        r[0]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
        "1.2.3"
    );
    check_message(Revision::V2026_07_28, &r[0], Some("CallToolResult"));

    let r = h.request(modern(
        4,
        "tools/call",
        json!({"name":"add","arguments":{"x":"a","y":2}}),
    ));
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(r["result"]["resultType"], "complete");
    check_message(Revision::V2026_07_28, &r, Some("CallToolResult"));
}

#[test]
fn modern_envelope_errors() {
    let mut h = harness();
    let mut no_caps = modern(1, "tools/list", json!({}));
    no_caps["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let r = h.request(no_caps);
    assert_eq!(r["error"]["code"], -32602);
    check_message(Revision::V2026_07_28, &r, None);

    let mut future = modern(2, "server/discover", json!({}));
    future["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let r = h.request(future);
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(r["error"]["data"]["requested"], "2099-01-01");
    assert_eq!(r["error"]["data"]["supported"], json!([MODERN]));
    check_message(Revision::V2026_07_28, &r, None);
    common::assert_valid(Revision::V2026_07_28, "UnsupportedProtocolVersionError", &r);

    // A modern-looking envelope naming a legacy revision is not a modern request.
    let mut legacy_in_meta = modern(3, "tools/list", json!({}));
    legacy_in_meta["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] =
        json!("2025-11-25");
    assert_eq!(h.request(legacy_in_meta)["error"]["code"], -32022);

    for method in ["ping", "logging/setLevel", "resources/subscribe"] {
        let r = h.request(modern(4, method, json!({})));
        assert_eq!(r["error"]["code"], -32601, "{method}");
    }
    let r = h.request(modern(5, "prompts/list", json!({})));
    assert_eq!(r["error"]["code"], -32601);
    let mut bad_level = modern(6, "tools/list", json!({}));
    bad_level["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("loud");
    assert_eq!(h.request(bad_level)["error"]["code"], -32602);
}

#[test]
fn modern_input_without_the_capability_is_a_missing_capability_error() {
    let mut h = harness();
    let (job, r) = modern_call_stopped_at_input(&mut h, 1, json!({}));
    assert_eq!(job.context.input, InputMode::MissingCapability);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["id"], 1);
    assert!(r[0].get("result").is_none(), "not a tool result: {}", r[0]);
    assert_eq!(r[0]["error"]["code"], -32021);
    assert_eq!(
        r[0]["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}})
    );
    check_message(Revision::V2026_07_28, &r[0], None);
    common::assert_valid(
        Revision::V2026_07_28,
        "MissingRequiredClientCapabilityError",
        &r[0],
    );
    // Declared, the same stop is an input_required round.
    let (job, r) = modern_call_stopped_at_input(&mut h, 2, json!({"elicitation": {}}));
    assert_eq!(job.context.input, InputMode::Retry);
    assert_eq!(r[0]["result"]["resultType"], "input_required");
    check_message(Revision::V2026_07_28, &r[0], Some("InputRequiredResult"));
    // Older revisions keep the tool error: the handler learns input is unavailable.
    h.initialize("2025-06-18");
    h.send(json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
                        "params":{"name":"add","arguments":{"x":1,"y":2}}}));
    assert!(matches!(
        h.jobs.pop().unwrap().context.input,
        InputMode::Unavailable(_)
    ));
}

#[test]
fn both_eras_share_one_process() {
    let mut h = harness();
    // A dual-era client probes first, then falls back to initialize.
    assert!(h.request(modern(1, "server/discover", json!({})))["result"].is_object());
    h.initialize("2025-06-18");
    let legacy = h.request(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
    assert!(legacy["result"].get("resultType").is_none());
    let modern_list = h.request(modern(3, "tools/list", json!({})));
    assert_eq!(modern_list["result"]["resultType"], "complete");
}

#[test]
fn an_unsupported_version_lists_only_versions_a_retry_can_use() {
    let mut h = harness();
    let advertised =
        h.request(modern(1, "server/discover", json!({})))["result"]["supportedVersions"].clone();
    for requested in ["2099-01-01", "2025-11-25", "2024-11-05"] {
        let mut probe = modern(2, "tools/list", json!({}));
        probe["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(requested);
        let r = h.request(probe);
        assert_eq!(r["error"]["code"], -32022, "{requested}");
        let supported = &r["error"]["data"]["supported"];
        assert_eq!(
            supported, &advertised,
            "{requested}: as server/discover says"
        );
        common::assert_valid(Revision::V2026_07_28, "UnsupportedProtocolVersionError", &r);
        // A client that retries with any listed version is served.
        for version in supported.as_array().unwrap() {
            let mut retry = modern(3, "tools/list", json!({}));
            retry["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = version.clone();
            let r = h.request(retry);
            assert!(
                r["result"]["tools"].is_array(),
                "{requested} -> {version}: {r}"
            );
        }
    }
}

#[test]
fn modern_only_requests_without_a_version_name_what_is_missing() {
    let version_key = "params._meta[\"io.modelcontextprotocol/protocolVersion\"]";
    let caps_key = "params._meta[\"io.modelcontextprotocol/clientCapabilities\"]";
    let caps_only = json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}});
    let info_only =
        json!({"_meta": {"io.modelcontextprotocol/clientInfo": {"name":"c","version":"1"}}});
    let cases = [
        ("server/discover", None, vec!["params._meta"]),
        ("server/discover", Some(json!({})), vec!["params._meta"]),
        (
            "server/discover",
            Some(caps_only.clone()),
            vec![version_key],
        ),
        (
            "server/discover",
            Some(info_only),
            vec![version_key, caps_key],
        ),
        (
            "subscriptions/listen",
            Some(json!({"notifications":{}})),
            vec!["params._meta"],
        ),
        (
            "tasks/update",
            Some(json!({"taskId":"t"})),
            vec!["params._meta"],
        ),
        // An ordinary method whose `_meta` has only modern keys means to be modern too.
        ("tools/list", Some(caps_only), vec![version_key]),
    ];
    for handshake in [false, true] {
        let mut h = harness();
        if handshake {
            h.initialize("2025-11-25");
        }
        for (method, params, missing) in &cases {
            let mut msg = json!({"jsonrpc":"2.0","id":7,"method":method});
            if let Some(params) = params {
                msg["params"] = params.clone();
            }
            let r = h.request(msg);
            assert_eq!(r["id"], 7);
            assert_eq!(r["error"]["code"], -32602, "{method} {params:?}: {r}");
            assert_eq!(r["error"]["data"]["missing"], json!(missing), "{method}");
            let message = r["error"]["message"].as_str().unwrap();
            for field in missing {
                assert!(message.contains(field), "{message} names {field}");
            }
            check_message(Revision::V2026_07_28, &r, None);
        }
    }
    // A request that may be either era still asks for the handshake.
    let mut h = harness();
    let r = h.request(json!({"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"progressToken":1}}}));
    assert_eq!(r["error"]["message"], "Server not initialized");
}

#[test]
fn an_enveloped_initialize_is_a_removed_method() {
    let mut h = harness();
    let handshake = json!({"protocolVersion":"2025-11-25","capabilities":{},
                           "clientInfo":{"name":"c","version":"1"}});
    let mut init = json!({"jsonrpc":"2.0","id":4,"method":"initialize","params":handshake});
    init["params"]["_meta"] = meta();
    let r = h.request(init.clone());
    assert_eq!(r["error"]["code"], -32601, "{r}");
    check_message(Revision::V2026_07_28, &r, None);
    // It started no session.
    let r = h.request(json!({"jsonrpc":"2.0","id":5,"method":"tools/list"}));
    assert_eq!(r["error"]["message"], "Server not initialized");
    // Enveloped, it passes the modern checks first, like any modern request.
    init["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    assert_eq!(h.request(init)["error"]["code"], -32022);
    // Without the envelope it is the handshake, even after all that.
    let plain = json!({"jsonrpc":"2.0","id":6,"method":"initialize","params":handshake});
    assert_eq!(h.request(plain)["result"]["protocolVersion"], "2025-11-25");
}
