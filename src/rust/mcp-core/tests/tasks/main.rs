//! Tasks (2025-11-25 core and the 2026-07-28 extension) and input-required
//! rounds, with every message checked against the wire schemas.

#[path = "../common/mod.rs"]
mod common;

use common::harness::Harness;
use common::{check_message, done_text};

use mcp_core::engine::registry::Registry;

use mcp_core::engine::{Config, Engine, InputMode, Outcome, Output};

use mcp_core::protocol::revision::Revision;

use mcp_core::protocol::tool::{TaskSupport, ToolDef};

use mcp_core::stores::tasks::{MAX_TASKS, MAX_WAITING, MAX_WAITING_PER_TASK};

use serde_json::{json, Value};

use std::sync::Arc;

use std::time::Duration;

fn tool(name: &str, task: TaskSupport) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: Some(name.into()),
        input_schema: json!({"type":"object","properties":{"n":{"type":"number"}}}),
        task_support: task,
        ..ToolDef::default()
    }
}

/// An engine serving the four tools above, with a request-state key.
fn harness() -> Harness {
    let registry = Registry::new(vec![
        tool("plain", TaskSupport::Forbidden),
        tool("maybe", TaskSupport::Optional),
        tool("always", TaskSupport::Required),
        ToolDef {
            output_schema: Some(
                json!({"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}),
            ),
            ..tool("typed", TaskSupport::Optional)
        },
    ])
    .unwrap();
    Harness::with_request_state(registry)
}

/// What these tests do besides sending and collecting.
trait Steps {
    /// The job asks the client for a name under `key`.
    fn ask_name(&mut self, job: u64, key: &str) -> Vec<Value>;
    fn init(&mut self, version: &str, capabilities: Value);
}

impl Steps for Harness {
    fn ask_name(&mut self, job: u64, key: &str) -> Vec<Value> {
        let request = json!({"method":"elicitation/create","params":{"message":"Your name?",
            "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}});
        self.ask(job, key, request)
    }

    fn init(&mut self, version: &str, capabilities: Value) {
        let r = self.request(json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":version,"capabilities":capabilities,"clientInfo":{"name":"t","version":"1"}}}));
        check_message(
            Revision::parse(version).unwrap(),
            &r,
            Some("InitializeResult"),
        );
    }
}

fn call(id: Value, name: &str, extra: Value) -> Value {
    let mut params = json!({"name": name, "arguments": {"n": 1}});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params})
}

fn modern_meta(caps: Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": caps})
}

const REV: Revision = Revision::V2025_11_25;

const MODERN: Revision = Revision::V2026_07_28;

fn mrtr_call(id: u64, extra: Value) -> Value {
    let mut params =
        json!({"name":"plain","arguments":{"n":1},"_meta":modern_meta(json!({"elicitation":{}}))});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params})
}

fn task_request(id: Value, method: &str, task_id: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"taskId":task_id}})
}

/// A core task of the "maybe" tool with the given time to live.
fn core_task(h: &mut Harness, id: u64, ttl_ms: u64) -> (String, u64) {
    let created = h.request(call(json!(id), "maybe", json!({"task":{"ttl":ttl_ms}})));
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_string();
    (task_id, h.jobs.pop().unwrap().id)
}

/// A `tasks/result` that the engine holds (nothing answered yet) on a new
/// task with a short time to live; retried should a stalled machine let the
/// time to live pass before the request is in.
fn waiting_task(h: &mut Harness, ttl_ms: u64) -> (String, u64) {
    loop {
        let (task_id, job) = core_task(h, 1, ttl_ms);
        if h.send(task_request(json!(2), "tasks/result", &task_id))
            .is_empty()
        {
            return (task_id, job);
        }
    }
}

fn question(text: &str) -> Value {
    json!({"method":"elicitation/create","params":{"message":text,
        "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}})
}

fn accept(name: &str) -> Value {
    json!({"action":"accept","content":{"name":name}})
}

mod core;
mod expiry;
mod extension;
mod input;
mod rounds;
