//! The MCP Apps extension (`io.modelcontextprotocol/ui`) on every revision:
//! what clients that declared it are sent and what the others are, with
//! every message checked against the revision's wire schema and the
//! extension's own fields against the extension's schema.

mod common;

use common::check_message;
use common::harness::Harness;
use mcp_core::engine::registry::Registry;
use mcp_core::engine::result::{Block, Content, ResourceBody, ToolResult};
use mcp_core::engine::{Config, Outcome, Output};
use mcp_core::protocol::app;
use mcp_core::protocol::revision::Revision;
use mcp_core::protocol::tool::{TaskSupport, ToolDef};
use serde_json::{json, Map, Value};
use std::path::PathBuf;

const CHART: &str = "ui://chart/app.html";
const HTML: &str = "<!DOCTYPE html><html><head></head><body>chart</body></html>";

fn def(name: &str, meta: Value) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: Some(format!("{name} tool")),
        input_schema: json!({"type": "object"}),
        meta: meta.as_object().cloned(),
        ..ToolDef::default()
    }
}

/// `chart` shows its results in the app, `page` is for the app only,
/// `plain` takes no part; the handler of the app's document comes last.
fn registry(task: bool) -> Registry {
    let mut chart = def(
        "chart",
        json!({"ui": {"resourceUri": CHART}, "ui/resourceUri": CHART, "owner": "r"}),
    );
    if task {
        chart.task_support = TaskSupport::Optional;
    }
    let defs = vec![
        chart,
        def(
            "page",
            json!({"ui": {"resourceUri": CHART, "visibility": ["app"]}}),
        ),
        def("plain", Value::Null),
        def("read-chart", Value::Null),
    ];
    let catalog = json!({
        "handlersFrom": 3,
        "resources": [{"uri": CHART, "name": "chart", "mimeType": app::MIME_TYPE,
                       "listed": false, "handler": 3}]
    });
    Registry::with_catalog(defs, &catalog.to_string()).unwrap()
}

fn ui_caps() -> Value {
    json!({"extensions": {app::EXTENSION: {"mimeTypes": [app::MIME_TYPE]}}})
}

/// A harness on `version` declaring `caps`, initialised unless it is
/// 2026-07-28.
fn harness(registry: Registry, version: &str, caps: Value) -> Harness {
    let mut h = Harness::new(Config::default(), registry);
    h.rev = Revision::parse(version).unwrap();
    h.caps = caps;
    if !h.rev.is_modern() {
        let r = h.request(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion": version, "capabilities": h.caps.clone(),
            "clientInfo": {"name":"c","version":"1"}}}),
        );
        check_message(h.rev, &r, Some("InitializeResult"));
    }
    h
}

/// What these tests do besides sending and collecting.
trait Steps {
    fn capabilities(&mut self) -> Value;
    fn tools(&mut self) -> Vec<Value>;
}

impl Steps for Harness {
    fn capabilities(&mut self) -> Value {
        if self.rev.is_modern() {
            let r = self.request(self.msg(1, "server/discover", json!({})));
            check_message(self.rev, &r, Some("DiscoverResult"));
            r["result"]["capabilities"].clone()
        } else {
            let version = self.rev.as_str();
            let r = self.request(
                json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
                "protocolVersion": version, "capabilities": self.caps.clone(),
                "clientInfo": {"name":"c","version":"1"}}}),
            );
            r["result"]["capabilities"].clone()
        }
    }

    fn tools(&mut self) -> Vec<Value> {
        let r = self.request(self.msg(2, "tools/list", json!({})));
        check_message(self.rev, &r, Some("ListToolsResult"));
        r["result"]["tools"].as_array().unwrap().clone()
    }
}

fn every_revision() -> [&'static str; 5] {
    [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ]
}

fn with_meta() -> impl Iterator<Item = &'static str> {
    every_revision()
        .into_iter()
        .filter(|v| app::offered_on(Revision::parse(v).unwrap()))
}

/// The extension's schema (tests/testthat/schemas/ext-apps, see its
/// README): checks `value` as its definition `name`. A missing schema
/// fails the test.
fn assert_ext_valid(name: &str, value: &Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../tests/testthat/schemas/ext-apps/schema.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("the extension's schema {} is missing: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text).unwrap();
    // Each definition is a schema of its own (with its own `$schema` and `$defs`).
    let definition = doc["$defs"]
        .get(name)
        .unwrap_or_else(|| panic!("no definition {name}"));
    let validator = jsonschema::validator_for(definition).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{name} rejects {value}: {errors:?}");
}

fn names(tools: &[Value]) -> Vec<&str> {
    tools.iter().map(|t| t["name"].as_str().unwrap()).collect()
}

#[test]
fn the_extension_is_declared_in_both_eras_where_tools_carry_meta() {
    for version in every_revision() {
        for caps in [json!({}), ui_caps()] {
            let mut h = harness(registry(false), version, caps);
            let got = h.capabilities();
            let declared = got["extensions"].get(app::EXTENSION).cloned();
            let offered = app::offered_on(h.rev);
            assert_eq!(declared, offered.then(|| json!({})), "{version}: {got}");
            // Its document is a resource: reading it is a declared capability.
            assert!(got["resources"].is_object(), "{version}");
        }
    }
    // A server of plain tools declares no extension.
    let plain = Registry::new(vec![def("plain", Value::Null)]).unwrap();
    let mut h = harness(plain, "2026-07-28", ui_caps());
    assert!(h.capabilities().get("extensions").is_none());
}

#[test]
fn the_extension_sits_beside_the_tasks_extension() {
    let mut h = harness(registry(true), "2026-07-28", ui_caps());
    let caps = h.capabilities();
    assert_eq!(
        caps["extensions"],
        json!({"io.modelcontextprotocol/tasks": {}, app::EXTENSION: {}})
    );
    let mut h = harness(registry(true), "2025-11-25", ui_caps());
    let caps = h.capabilities();
    assert_eq!(caps["extensions"], json!({app::EXTENSION: {}}));
    assert!(caps["tasks"].is_object());
}

#[test]
fn hosts_that_declared_it_see_the_ui_metadata_and_the_app_only_tools() {
    for version in with_meta() {
        let mut h = harness(registry(false), version, ui_caps());
        let tools = h.tools();
        assert_eq!(names(&tools), ["chart", "page", "plain"], "{version}");
        assert_eq!(
            tools[0]["_meta"],
            json!({"ui": {"resourceUri": CHART}, "ui/resourceUri": CHART, "owner": "r"})
        );
        assert_eq!(tools[1]["_meta"]["ui"]["visibility"], json!(["app"]));
        assert!(tools[2].get("_meta").is_none());
        for tool in &tools[..2] {
            assert_ext_valid("McpUiToolMeta", &tool["_meta"]["ui"]);
        }
    }
}

#[test]
fn other_clients_see_the_plain_tools_unchanged() {
    for version in every_revision() {
        for caps in [
            json!({}),
            json!({"extensions": {app::EXTENSION: {}}}),
            json!({"extensions": {app::EXTENSION: {"mimeTypes": ["text/html"]}}}),
        ] {
            let mut h = harness(registry(false), version, caps.clone());
            let tools = h.tools();
            assert_eq!(names(&tools), ["chart", "plain"], "{version} {caps}");
            let expected: Map<String, Value> = json!({"owner": "r"}).as_object().unwrap().clone();
            if h.rev.has_structured_output() {
                assert_eq!(tools[0]["_meta"], Value::Object(expected));
            } else {
                assert!(tools[0].get("_meta").is_none());
            }
        }
    }
    // Before 2025-06-18 even a host that declared it gets the plain tools.
    for version in ["2024-11-05", "2025-03-26"] {
        let mut h = harness(registry(false), version, ui_caps());
        assert_eq!(names(&h.tools()), ["chart", "plain"]);
    }
}

#[test]
fn a_2026_client_is_answered_by_the_capabilities_of_each_request() {
    let mut h = harness(registry(false), "2026-07-28", ui_caps());
    assert_eq!(names(&h.tools()), ["chart", "page", "plain"]);
    h.caps = json!({});
    assert_eq!(names(&h.tools()), ["chart", "plain"]);
}

#[test]
fn the_app_document_is_read_but_not_listed() {
    for version in with_meta() {
        let mut h = harness(registry(false), version, ui_caps());
        let r = h.request(h.msg(3, "resources/list", json!({})));
        check_message(h.rev, &r, Some("ListResourcesResult"));
        assert_eq!(r["result"]["resources"], json!([]));
        let got = h.send(h.msg(4, "resources/read", json!({"uri": CHART})));
        assert!(got.is_empty(), "{got:?}");
        let job = h.jobs.pop().expect("the read runs its handler");
        assert_eq!(job.tool, 3);
        let ui =
            json!({"csp": {"resourceDomains": ["https://cdn.example.com"]}, "prefersBorder": true});
        let block = Block {
            content: Content::Resource {
                uri: CHART.into(),
                mime_type: Some(app::MIME_TYPE.into()),
                body: ResourceBody::Text(HTML.into()),
            },
            annotations: None,
            meta: json!({"ui": ui}).as_object().cloned(),
        };
        let outcome = Outcome::Done(ToolResult {
            content: vec![block],
            structured: None,
            is_error: false,
            meta: None,
            vouched: Default::default(),
        });
        let mut out = Vec::new();
        h.engine.on_completed(job.id, outcome, &mut out);
        let Some(Output::Write(line)) = out.into_iter().find(|o| matches!(o, Output::Write(_)))
        else {
            panic!("no answer to the read");
        };
        let r: Value = serde_json::from_str(&line).unwrap();
        check_message(h.rev, &r, Some("ReadResourceResult"));
        let content = &r["result"]["contents"][0];
        assert_eq!(content["mimeType"], app::MIME_TYPE);
        assert_eq!(content["text"], HTML);
        assert_ext_valid("McpUiResourceMeta", &content["_meta"]["ui"]);
    }
}
