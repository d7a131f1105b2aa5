//! Tasks (2025-11-25 core and the 2026-07-28 extension) and input-required
//! rounds, with every message checked against the wire schemas.

#[path = "../common/mod.rs"]
mod common;

use common::{check_message, done_text};

use mcp_core::engine::registry::Registry;

use mcp_core::engine::{Config, Engine, InputMode, Job, Outcome, Output};

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

struct H {
    engine: Engine,
    registry: Arc<Registry>,
    jobs: Vec<Job>,
    cancels: Vec<u64>,
    answers: Vec<(u64, Result<Value, String>)>,
    alarms: Vec<Duration>,
    /// `Output::TaskStatus`: task id and its params.
    statuses: Vec<(String, Value)>,
    /// `Output::WatchTasks` and `UnwatchTasks`, as `(subscription, tasks)`
    /// and `(subscription, [])`.
    watches: Vec<(String, Vec<String>)>,
    elsewhere: Vec<u64>,
}

impl H {
    fn new() -> H {
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
        let config = Config {
            request_state_key: Some(b"test key".to_vec()),
            ..Config::default()
        };
        let registry = Arc::new(registry);
        H {
            engine: Engine::new(Arc::new(config), registry.clone()),
            registry,
            jobs: Vec::new(),
            cancels: Vec::new(),
            answers: Vec::new(),
            alarms: Vec::new(),
            statuses: Vec::new(),
            watches: Vec::new(),
            elsewhere: Vec::new(),
        }
    }

    fn collect(&mut self, out: Vec<Output>) -> Vec<Value> {
        let mut written = Vec::new();
        for o in out {
            match o {
                Output::Write(line) | Output::ToListener(_, line) => {
                    written.push(serde_json::from_str(&line).unwrap())
                }
                // As the server's poll does: arguments that fail their
                // schema answer the call, which never runs.
                Output::Run(mut job) => match job.read_arguments(&self.registry) {
                    Ok(()) => self.jobs.push(*job),
                    Err(refusal) => {
                        let mut more = Vec::new();
                        self.engine
                            .on_completed(job.id, Outcome::Done(refusal), &mut more);
                        written.extend(self.collect(more));
                    }
                },
                Output::Cancel(job) => self.cancels.push(job),
                Output::Answer(job, a) => self.answers.push((job, a)),
                Output::ProgressDue(..) => {}
                Output::TaskAlarm(delay) => self.alarms.push(delay),
                Output::CancelElsewhere(job) => self.elsewhere.push(job),
                Output::TaskStatus { task, params } => self.statuses.push((task, params)),
                Output::WatchTasks {
                    subscription,
                    tasks,
                } => self.watches.push((subscription.to_string(), tasks)),
                Output::UnwatchTasks(subscription) => {
                    self.watches.push((subscription.to_string(), Vec::new()))
                }
            }
        }
        written
    }

    fn send(&mut self, msg: Value) -> Vec<Value> {
        let mut out = Vec::new();
        self.engine.on_line(msg.to_string().as_bytes(), &mut out);
        self.collect(out)
    }

    fn one(&mut self, msg: Value) -> Value {
        let mut got = self.send(msg.clone());
        assert_eq!(got.len(), 1, "{msg} -> {got:?}");
        got.remove(0)
    }

    fn complete(&mut self, job: u64, outcome: Outcome) -> Vec<Value> {
        let mut out = Vec::new();
        self.engine.on_completed(job, outcome, &mut out);
        self.collect(out)
    }

    fn ask(&mut self, job: u64, key: &str) -> Vec<Value> {
        let mut out = Vec::new();
        let request = json!({"method":"elicitation/create","params":{"message":"Your name?",
            "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}});
        self.engine.on_ask(job, key.into(), request, &mut out);
        self.collect(out)
    }

    fn init(&mut self, version: &str, capabilities: Value) {
        let r = self.one(json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
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
fn core_task(h: &mut H, id: u64, ttl_ms: u64) -> (String, u64) {
    let created = h.one(call(json!(id), "maybe", json!({"task":{"ttl":ttl_ms}})));
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_string();
    (task_id, h.jobs.pop().unwrap().id)
}

/// A `tasks/result` that the engine holds (nothing answered yet) on a new
/// task with a short time to live; retried should a stalled machine let the
/// time to live pass before the request is in.
fn waiting_task(h: &mut H, ttl_ms: u64) -> (String, u64) {
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
