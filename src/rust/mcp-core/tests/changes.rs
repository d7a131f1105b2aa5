//! Tools, resources and prompts changing while the server serves: what
//! requests see, who hears of it and when, caching hints, and calls that
//! outlive their tool. Every message is checked against its revision's
//! wire schema.

mod common;

use common::done_text;
use mcp_core::engine::registry::{Entry, Kinds, Live, Registry};
use mcp_core::engine::{Config, Engine, Shared, CHANGED_LIST_TTL_MS};
use mcp_core::protocol::revision::Revision;
use mcp_core::protocol::tool::ToolDef;
use serde_json::{json, Value};
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

fn def(name: &str) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: Some(format!("the {name} tool")),
        input_schema: json!({"type": "object", "properties": {}}),
        ..ToolDef::default()
    }
}

/// Tools named `names`, keyed by position, and no catalog.
fn tools(names: &[&str]) -> Registry {
    Registry::new(names.iter().map(|n| def(n)).collect()).unwrap()
}

/// `names` as a new registry replacing `old`: names `old` serves keep
/// their compiled entry (by key), others are new with fresh keys.
fn tools_after(old: &Registry, names: &[&str], catalog: Option<&Value>) -> Registry {
    let mut next_key = old.keys().max().map_or(0, |k| k + 1);
    let mut entries: Vec<Entry> = names
        .iter()
        .map(|name| match old.find(name) {
            Some(i) => Entry::Kept {
                key: old.tool(i).key,
            },
            None => {
                next_key += 1;
                Entry::New {
                    key: next_key,
                    def: def(name),
                }
            }
        })
        .collect();
    if let Some(catalog) = catalog {
        // One handler per resource or prompt, after the tools.
        let handlers = catalog["resources"].as_array().map_or(0, Vec::len)
            + catalog["prompts"].as_array().map_or(0, Vec::len);
        for i in 0..handlers {
            next_key += 1;
            entries.push(Entry::New {
                key: next_key,
                def: def(&format!("handler-{i}")),
            });
        }
    }
    let text = catalog.map(Value::to_string);
    Registry::build(entries, text.as_deref(), Some(old)).unwrap()
}

/// The shared harness on an engine whose registry can be replaced while it
/// serves, as `mcp_add()` does; every message checked against the schema.
struct Harness {
    base: common::harness::Harness,
    live: Arc<Live>,
}

impl Deref for Harness {
    type Target = common::harness::Harness;
    fn deref(&self) -> &Self::Target {
        &self.base
    }
}

impl DerefMut for Harness {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.base
    }
}

impl Harness {
    fn with(registry: Registry) -> Harness {
        let config = Arc::new(Config::default());
        let live = Live::new(Arc::new(registry));
        let engine = Engine::sharing(config.clone(), live.clone(), &Shared::new(&config));
        let mut base = common::harness::Harness::on(engine);
        base.check_written = true;
        Harness { base, live }
    }

    fn initialize(&mut self) {
        self.request(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name":"c","version":"1"}}}),
        );
    }

    fn initialized(&mut self) {
        assert!(self
            .send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
            .is_empty());
    }

    /// Serves `registry` from now on and announces what changed, as the
    /// server does; returns what the engine wrote.
    fn change(&mut self, registry: Registry) -> (Kinds, Vec<Value>) {
        let registry = Arc::new(registry);
        let old = self.live.replace(registry.clone());
        let changed = registry.changes_from(&old);
        let mut out = Vec::new();
        self.engine.on_lists_changed(changed, &mut out);
        (changed, self.collect(out))
    }

    fn tool_names(&mut self, id: u64) -> Vec<String> {
        let r = self.rpc(id, "tools/list", json!({}));
        r["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }
}

fn methods(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("(response)"))
        .collect()
}

#[test]
fn a_session_hears_of_changes_once_initialized_and_sees_the_new_set() {
    let mut h = Harness::with(tools(&["a"]));
    h.initialize();
    let current = h.live.current();
    let (changed, written) = h.change(tools_after(&current, &["a", "b"], None));
    assert_eq!(
        changed,
        Kinds {
            tools: true,
            ..Kinds::default()
        }
    );
    assert!(
        written.is_empty(),
        "nothing before notifications/initialized"
    );
    assert_eq!(h.tool_names(1), ["a", "b"]);
    h.initialized();
    let current = h.live.current();
    let (_, written) = h.change(tools_after(&current, &["b"], None));
    assert_eq!(methods(&written), ["notifications/tools/list_changed"]);
    assert!(written[0].get("params").is_none());
    assert_eq!(h.tool_names(2), ["b"]);
}

#[test]
fn a_change_that_leaves_a_list_as_it_was_is_not_announced() {
    let mut h = Harness::with(tools(&["a", "b"]));
    h.initialize();
    h.initialized();
    let current = h.live.current();
    let (changed, written) = h.change(tools_after(&current, &["a", "b"], None));
    assert!(changed.is_empty() && written.is_empty());
}

#[test]
fn a_session_hears_only_of_the_lists_it_was_told_about() {
    let mut h = Harness::with(tools(&["a"]));
    h.initialize();
    h.initialized();
    let prompts = json!({"handlersFrom": 1, "prompts": [
        {"name": "p", "description": "a prompt", "handler": 1}]});
    let current = h.live.current();
    let (changed, written) = h.change(tools_after(&current, &["a"], Some(&prompts)));
    assert!(changed.prompts && !changed.tools);
    assert!(
        written.is_empty(),
        "initialize declared no prompts: {written:?}"
    );
    // A session that starts now is told about prompts, and hears of them.
    h.initialize();
    h.initialized();
    let r = h.initialize_caps();
    assert_eq!(r["prompts"], json!({"listChanged": true}));
    let current = h.live.current();
    let (_, written) = h.change(tools_after(&current, &["a"], None));
    assert_eq!(methods(&written), ["notifications/prompts/list_changed"]);
    // The capability, once declared, stays: the list is empty, not gone.
    let r = h.rpc(5, "prompts/list", json!({}));
    assert_eq!(r["result"]["prompts"], json!([]));
}

impl Harness {
    fn initialize_caps(&mut self) -> Value {
        let r = self.request(
            json!({"jsonrpc":"2.0","id":9,"method":"initialize","params":{
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name":"c","version":"1"}}}),
        );
        self.initialized();
        r["result"]["capabilities"].clone()
    }
}

#[test]
fn listen_streams_hear_of_the_lists_they_asked_for_tagged() {
    let mut h = Harness::with(tools(&["a"]));
    h.rev = Revision::V2026_07_28;
    let ack = h.rpc(
        7,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true}}),
    );
    // No prompts are served: only the tools' changes are honoured.
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    let ack = h.rpc(
        8,
        "subscriptions/listen",
        json!({"notifications": {"resourcesListChanged": true}}),
    );
    assert_eq!(ack["params"]["notifications"], json!({}));
    let current = h.live.current();
    let (_, written) = h.change(tools_after(&current, &["a", "b"], None));
    assert_eq!(methods(&written), ["notifications/tools/list_changed"]);
    assert_eq!(
        written[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    // A cancelled stream hears nothing more.
    h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}));
    let current = h.live.current();
    let (_, written) = h.change(tools_after(&current, &["a"], None));
    assert!(written.is_empty());
}

#[test]
fn a_call_accepted_before_its_tool_is_removed_runs_and_is_answered() {
    let mut h = Harness::with(tools(&["a", "b"]));
    h.initialize();
    h.initialized();
    let call =
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b","arguments":{}}});
    assert!(h.send(call.clone()).is_empty());
    let job = h.jobs.pop().unwrap();
    let b_key = job.registry.tool(job.tool).key;
    let next = tools_after(&h.live.current(), &["a"], None);
    h.change(next);
    assert!(
        h.live.live_keys().contains(&b_key),
        "the running call holds b's key"
    );
    let mut out = Vec::new();
    if let mcp_core::engine::Outcome::Done(result) = done_text("done") {
        h.engine
            .on_completed(job.id, mcp_core::engine::Outcome::Done(result), &mut out);
    }
    let answer = h.collect(out);
    assert_eq!(answer[0]["result"]["content"][0]["text"], "done");
    drop(job);
    assert!(!h.live.live_keys().contains(&b_key), "no call holds it now");
    let r = h.request(json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"b"}}));
    assert_eq!(r["error"]["code"], -32602);
}

#[test]
fn changed_lists_carry_a_short_caching_hint() {
    let prompts = json!({"handlersFrom": 1, "prompts": [
        {"name": "p", "description": "a prompt", "handler": 1}]});
    let start = Registry::build(
        vec![
            Entry::New {
                key: 0,
                def: def("a"),
            },
            Entry::New {
                key: 1,
                def: def("handler"),
            },
        ],
        Some(&prompts.to_string()),
        None,
    )
    .unwrap();
    let mut h = Harness::with(start);
    h.rev = Revision::V2026_07_28;
    let ttl = |h: &mut Harness, id, method: &str| {
        let r = h.rpc(id, method, json!({}));
        r["result"]["ttlMs"].as_u64().unwrap()
    };
    let long = Config::default().list_ttl_ms;
    assert_eq!(ttl(&mut h, 1, "tools/list"), long);
    assert_eq!(ttl(&mut h, 2, "server/discover"), long);
    let current = h.live.current();
    let mut prompts_after = prompts.clone();
    prompts_after["handlersFrom"] = json!(2);
    prompts_after["prompts"][0]["handler"] = json!(2);
    h.change(tools_after(&current, &["a", "b"], Some(&prompts_after)));
    assert_eq!(ttl(&mut h, 3, "tools/list"), CHANGED_LIST_TTL_MS);
    assert_eq!(ttl(&mut h, 4, "server/discover"), CHANGED_LIST_TTL_MS);
    assert_eq!(
        ttl(&mut h, 5, "prompts/list"),
        long,
        "prompts did not change"
    );
}

#[test]
fn a_bad_definition_is_refused_and_reused_entries_are_not_recompiled() {
    let old = tools(&["a"]);
    let mut bad = def("b c");
    bad.description = None;
    let refused = Registry::build(
        vec![Entry::Kept { key: 0 }, Entry::New { key: 1, def: bad }],
        None,
        Some(&old),
    );
    assert!(refused.is_err());
    let twice = Registry::build(
        vec![
            Entry::Kept { key: 0 },
            Entry::New {
                key: 1,
                def: def("a"),
            },
        ],
        None,
        Some(&old),
    );
    assert!(twice.err().unwrap().contains("unique"));
    let next = Registry::build(
        vec![
            Entry::Kept { key: 0 },
            Entry::New {
                key: 4,
                def: def("z"),
            },
        ],
        None,
        Some(&old),
    )
    .unwrap();
    assert!(Arc::ptr_eq(
        &next.by_key(0).unwrap(),
        &old.by_key(0).unwrap()
    ));
    assert_eq!(next.keys().collect::<Vec<_>>(), [0, 4]);
}

#[test]
fn a_server_told_to_serve_resources_declares_them_before_it_has_any() {
    let catalog = json!({"handlersFrom": 1, "serves": {"resources": true}});
    let start = Registry::build(
        vec![Entry::New {
            key: 0,
            def: def("a"),
        }],
        Some(&catalog.to_string()),
        None,
    )
    .unwrap();
    let mut h = Harness::with(start);
    let caps = h.initialize_caps();
    assert_eq!(
        caps["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    assert!(caps.get("prompts").is_none());
    let r = h.rpc(2, "resources/list", json!({}));
    assert_eq!(r["result"]["resources"], json!([]));
}
