//! The protocol engine, revision by revision, with every message it writes
//! checked against the official wire schema of the revision in use.

#[path = "../common/mod.rs"]
mod common;

use common::harness::Harness;
use common::{check_message, text_result};

use mcp_core::engine::registry::Registry;

use mcp_core::engine::result::{Block, Content, ToolResult};

use mcp_core::engine::{
    Config, InputMode, Job, Outcome, Output, Progress, ServerInfo, PROGRESS_INTERVAL,
};

use mcp_core::protocol::logging::LogLevel;

use mcp_core::protocol::revision::Revision;

use mcp_core::protocol::tool::ToolDef;

use serde_json::value::RawValue;

use serde_json::{json, Value};

use std::time::{Duration, Instant};

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

const MODERN: &str = "2026-07-28";

fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef {
            name: "add".into(),
            title: Some("Add numbers".into()),
            description: Some("Adds x and y".into()),
            input_schema: json!({"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},
                                 "required":["x","y"],"additionalProperties":false}),
            annotations: json!({"readOnlyHint": true}).as_object().cloned(),
            ..ToolDef::default()
        },
        ToolDef {
            name: "stats".into(),
            description: Some("Summary statistics".into()),
            input_schema: json!({"type":"object","properties":{},"additionalProperties":false}),
            output_schema: Some(
                json!({"type":"object","properties":{"mean":{"type":"number"}},"required":["mean"]}),
            ),
            ..ToolDef::default()
        },
        ToolDef {
            name: "series".into(),
            description: Some("A numeric series".into()),
            input_schema: json!({"type":"object","properties":{},"additionalProperties":false}),
            output_schema: Some(json!({"type":"array","items":{"type":"number"}})),
            icons: Some(json!([{"src":"https://example.com/icon.png","mimeType":"image/png"}])),
            ..ToolDef::default()
        },
    ]
}

/// The engine these tests drive: the tools above, a name, a version, a
/// title and instructions.
fn harness() -> Harness {
    let config = Config {
        info: ServerInfo {
            name: "test-server".into(),
            version: "1.2.3".into(),
            title: Some("Test Server".into()),
        },
        instructions: Some("Use add to add.".into()),
        ..Config::default()
    };
    Harness::new(config, Registry::new(tools()).unwrap())
}

/// What these tests do besides sending and collecting.
trait Steps {
    fn progress(&mut self, job: u64, value: f64, message: Option<&str>, now: Instant)
        -> Vec<Value>;
    fn log(&mut self, job: u64, level: LogLevel, text: &str) -> Vec<Value>;
    fn initialize(&mut self, version: &str) -> Value;
}

impl Steps for Harness {
    fn progress(
        &mut self,
        job: u64,
        value: f64,
        message: Option<&str>,
        now: Instant,
    ) -> Vec<Value> {
        let mut out = Vec::new();
        let update = Progress {
            progress: value,
            total: Some(10.0),
            message: message.map(str::to_string),
        };
        self.engine.on_progress(job, update, now, &mut out);
        self.collect(out)
    }

    fn log(&mut self, job: u64, level: LogLevel, text: &str) -> Vec<Value> {
        let mut out = Vec::new();
        self.engine.on_log(job, level, json!(text), &mut out);
        self.collect(out)
    }

    fn initialize(&mut self, version: &str) -> Value {
        let response = self.request(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name":"test-client","version":"9"}}}),
        );
        if let Some(rev) = response["result"]["protocolVersion"]
            .as_str()
            .and_then(Revision::parse)
        {
            self.rev = rev;
            check_message(rev, &response, Some("InitializeResult"));
        }
        self.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        response
    }
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name":"modern-client","version":"2"}
    })
}

fn modern(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
}

fn raw(text: &str) -> Option<mcp_core::engine::result::JsonText> {
    Some(RawValue::from_string(text.into()).unwrap().into())
}

/// A tool call waiting for the client's answer to its elicitation: the
/// harness, the job and the id of the server's request.
fn waiting_for_an_answer() -> (Harness, Job, Value) {
    let mut h = harness();
    h.request(
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},
        "clientInfo":{"name":"c","version":"1"}}}),
    );
    h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
                        "params":{"name":"add","arguments":{"x":1,"y":2}}}));
    let job = h.jobs.pop().unwrap();
    let mut out = Vec::new();
    let request = json!({"method":"elicitation/create","params":{"message":"Name?",
        "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}});
    h.engine.on_ask(job.id, "input-1".into(), request, &mut out);
    let ask_id = h.collect(out)[0]["id"].clone();
    (h, job, ask_id)
}

/// The one answer the waiting `job` got.
fn the_only_answer(h: &mut Harness, job: u64) -> Result<Value, String> {
    assert_eq!(h.answers.len(), 1);
    let (answered_job, answer) = h.answers.pop().unwrap();
    assert_eq!(answered_job, job);
    answer
}

/// A 2026-07-28 call of `add` whose request declared `caps`, stopped by its
/// handler at an input request; returns what the call was answered with.
fn modern_call_stopped_at_input(h: &mut Harness, id: u64, caps: Value) -> (Job, Vec<Value>) {
    let mut call = modern(
        id,
        "tools/call",
        json!({"name":"add","arguments":{"x":1,"y":2}}),
    );
    call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps;
    assert!(h.send(call).is_empty());
    let job = h.jobs.pop().unwrap();
    let request = json!({"method":"elicitation/create","params":{"message":"Name?",
        "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}});
    let key = "input-1".to_string();
    let answered = h.complete(job.id, Outcome::InputRequired { key, request });
    (job, answered)
}

/// The job a `tools/call` with these arguments becomes, as the engine hands
/// it out (before the tool's thread reads anything).
fn job_as_made(h: &mut Harness, id: u64, arguments: Value) -> Box<Job> {
    let call = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "name":"add","arguments":arguments}});
    let mut out = Vec::new();
    h.engine.on_line(call.to_string().as_bytes(), &mut out);
    out.into_iter()
        .find_map(|o| match o {
            Output::Run(job) => Some(job),
            _ => None,
        })
        .expect("the call becomes a job")
}

fn call_with_token(h: &mut Harness, id: u64, token: Value) -> Job {
    h.send(
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "name":"add","arguments":{"x":1,"y":1},"_meta":{"progressToken":token}}}),
    );
    h.jobs.pop().unwrap()
}

mod batches;
mod lifecycle;
mod limits;
mod modern;
mod progress;
mod tools;
