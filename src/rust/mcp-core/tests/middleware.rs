//! List methods through R middleware (`engine/middleware.rs`): with a list
//! handler in the catalog, a list request becomes a job for R, and what R
//! keeps (by identity) is what the client gets; without one, lists are
//! answered at once, as ever.

mod common;

use common::harness::Harness;
use mcp_core::engine::registry::Registry;
use mcp_core::engine::result::ToolResult;
use mcp_core::engine::{Config, Outcome};
use mcp_core::protocol::revision::Revision;
use mcp_core::protocol::tool::ToolDef;
use serde_json::value::RawValue;
use serde_json::{json, Value};

fn def(name: &str) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: Some(format!("tool {name}")),
        input_schema: json!({"type": "object"}),
        ..ToolDef::default()
    }
}

/// Tools `a` and `b`, a resource, and (with `middleware`) the list handler.
fn registry(middleware: bool) -> Registry {
    let defs = vec![def("a"), def("b"), def("read"), def("lists")];
    let mut catalog = json!({
        "handlersFrom": 2,
        "resources": [
            {"uri": "data://one", "name": "one", "handler": 2},
            {"uri": "data://two", "name": "two", "handler": 2}
        ]
    });
    if middleware {
        catalog["listHandler"] = json!(3);
    }
    Registry::with_catalog(defs, &catalog.to_string()).unwrap()
}

fn harness(middleware: bool, rev: Revision) -> Harness {
    let mut h = Harness::new(Config::default(), registry(middleware));
    h.rev = rev;
    h.check_written = true;
    if !rev.is_modern() {
        h.request(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": rev.as_str(), "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        );
    }
    h
}

/// What the R side sends back: the identities it kept.
fn kept(keep: Value) -> Outcome {
    let structured = json!({ "keep": keep }).to_string();
    Outcome::Done(ToolResult {
        content: Vec::new(),
        structured: Some(RawValue::from_string(structured).unwrap().into()),
        is_error: false,
        meta: None,
        vouched: Default::default(),
    })
}

fn names(response: &Value, key: &str, field: &str) -> Vec<String> {
    response["result"][key]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[field].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn without_a_list_handler_lists_are_answered_at_once() {
    for rev in [Revision::LATEST_LEGACY, Revision::LATEST] {
        let mut h = harness(false, rev);
        let listed = h.rpc(1, "tools/list", json!({}));
        assert_eq!(names(&listed, "tools", "name"), ["a", "b"]);
        assert!(h.jobs.is_empty());
    }
}

#[test]
fn a_list_runs_as_a_job_and_sends_what_r_kept_in_its_order() {
    for rev in [Revision::LATEST_LEGACY, Revision::LATEST] {
        let mut h = harness(true, rev);
        let msg = h.msg(1, "tools/list", json!({}));
        assert!(h.send(msg).is_empty(), "answered only once R has run");
        let job = h.jobs.remove(0);
        assert_eq!(job.tool, 3);
        assert_eq!(job.arguments["method"], "tools/list");
        let items: Value = serde_json::from_str(job.arguments["items"].as_str().unwrap()).unwrap();
        assert_eq!(items.as_array().unwrap().len(), 2);
        // Unknown names are dropped, repeats sent once.
        let got = h.complete(job.id, kept(json!(["b", "nope", "a", "b"])));
        assert_eq!(got.len(), 1);
        assert_eq!(names(&got[0], "tools", "name"), ["b", "a"]);
        assert_eq!(got[0]["result"]["tools"][0]["description"], "tool b");
        if rev.is_modern() {
            assert_eq!(got[0]["result"]["cacheScope"], "private");
            assert_eq!(got[0]["result"]["resultType"], "complete");
        } else {
            assert!(got[0]["result"].get("cacheScope").is_none());
        }
    }
}

#[test]
fn resource_lists_are_filtered_by_uri() {
    let mut h = harness(true, Revision::LATEST);
    let msg = h.msg(1, "resources/list", json!({}));
    assert!(h.send(msg).is_empty());
    let job = h.jobs.remove(0);
    assert_eq!(job.arguments["method"], "resources/list");
    let got = h.complete(job.id, kept(json!(["data://two"])));
    assert_eq!(names(&got[0], "resources", "uri"), ["data://two"]);
}

#[test]
fn a_failing_middleware_is_an_internal_error_and_a_bad_answer_too() {
    let mut h = harness(true, Revision::LATEST_LEGACY);
    h.send(h.msg(1, "tools/list", json!({})));
    let job = h.jobs.remove(0);
    let got = h.complete(job.id, Outcome::Failed("Middleware failed: no".into()));
    assert_eq!(got[0]["error"]["code"], -32603);
    assert!(got[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Middleware failed: no"));
    h.send(h.msg(2, "tools/list", json!({})));
    let job = h.jobs.remove(0);
    let got = h.complete(job.id, Outcome::Done(ToolResult::error("x")));
    assert_eq!(got[0]["error"]["code"], -32603);
}

#[test]
fn the_control_plane_does_not_wait_for_a_list_in_r() {
    let mut h = harness(true, Revision::LATEST_LEGACY);
    h.send(h.msg(1, "tools/list", json!({})));
    assert_eq!(h.jobs.len(), 1);
    let pong = h.rpc(2, "ping", json!({}));
    assert_eq!(pong["id"], 2);
    // A cursor is refused at once, as without middleware.
    let refused = h.rpc(3, "tools/list", json!({"cursor": "x"}));
    assert_eq!(refused["error"]["code"], -32602);
    assert_eq!(h.jobs.len(), 1);
}
