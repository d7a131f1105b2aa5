//! One engine driven as the server drives it, for the engine tests: a line
//! goes in, and what the engine wrote comes back parsed, while what it asks
//! the server to do (run a job, cancel one, set a timer, deliver an answer,
//! follow a task) is recorded for the test to look at.
//!
//! A test file with helpers of its own wraps this one in its own `Harness`
//! and derefs to it, so `h.send(...)` and `h.jobs` read the same everywhere.

use mcp_core::engine::registry::Registry;
use mcp_core::engine::{Config, Engine, Job, JobId, Outcome, Output};
use mcp_core::protocol::revision::Revision;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

pub struct Harness {
    pub engine: Engine,
    /// The revision the test speaks (what [`Harness::check_written`] checks
    /// against, and what the file's own helpers use).
    pub rev: Revision,
    /// Check every message written against the wire schema of `rev`.
    pub check_written: bool,
    /// The client capabilities the test declares (what the file's own
    /// helpers send; `{}` unless set).
    pub caps: Value,
    /// Calls to run, in the order the engine handed them over.
    pub jobs: Vec<Job>,
    pub cancels: Vec<JobId>,
    /// Progress timers: the job and the delay.
    pub due: Vec<(JobId, Duration)>,
    /// Answers to input requests, by job.
    pub answers: Vec<(JobId, Result<Value, String>)>,
    /// Task alarms, each replacing the last.
    pub alarms: Vec<Duration>,
    /// `Output::TaskStatus`: task id and its params.
    pub statuses: Vec<(String, Value)>,
    /// `Output::WatchTasks` and `UnwatchTasks`, as `(subscription, tasks)`
    /// and `(subscription, [])`.
    pub watches: Vec<(String, Vec<String>)>,
    /// Jobs to cancel on another engine.
    pub elsewhere: Vec<JobId>,
}

impl Harness {
    /// An engine of its own serving `registry`.
    pub fn new(config: Config, registry: Registry) -> Harness {
        Harness::on(Engine::new(Arc::new(config), Arc::new(registry)))
    }

    /// An engine serving `registry` that signs `requestState` (with a test
    /// key), as the input-request and task tests need.
    pub fn with_request_state(registry: Registry) -> Harness {
        let config = Config {
            request_state_key: Some(b"test key".to_vec()),
            ..Config::default()
        };
        Harness::new(config, registry)
    }

    /// Drives `engine`, speaking the latest handshake-era revision.
    pub fn on(engine: Engine) -> Harness {
        Harness {
            engine,
            rev: Revision::LATEST_LEGACY,
            check_written: false,
            caps: Value::Object(Default::default()),
            jobs: Vec::new(),
            cancels: Vec::new(),
            due: Vec::new(),
            answers: Vec::new(),
            alarms: Vec::new(),
            statuses: Vec::new(),
            watches: Vec::new(),
            elsewhere: Vec::new(),
        }
    }

    /// What the engine wrote, parsed; the rest of `out` is recorded.
    pub fn collect(&mut self, out: Vec<Output>) -> Vec<Value> {
        let mut written = Vec::new();
        for o in out {
            match o {
                Output::Write(line) | Output::ToListener(_, line) => {
                    assert!(!line.contains('\n'), "a message spans lines: {line}");
                    let msg: Value = serde_json::from_str(&line).unwrap();
                    if self.check_written {
                        super::check_message(self.rev, &msg, None);
                    }
                    written.push(msg);
                }
                // The tests finish a streamed result's parts before it is
                // completed, so writing it here does not wait.
                Output::WriteStreamed(line) => {
                    let mut bytes = Vec::new();
                    line.write_to(&mut bytes).unwrap();
                    let text = String::from_utf8(bytes).unwrap();
                    let line = text.strip_suffix('\n').expect("a whole line");
                    written.extend(self.collect(vec![Output::Write(line.to_string())]));
                }
                // As the server's poll does: arguments that fail their
                // schema answer the call, which never runs.
                Output::Run(mut job) => {
                    let registry = job.registry.clone();
                    match job.read_arguments(&registry) {
                        Ok(()) => self.jobs.push(*job),
                        Err(refusal) => {
                            let mut more = Vec::new();
                            self.engine
                                .on_completed(job.id, Outcome::Done(refusal), &mut more);
                            written.extend(self.collect(more));
                        }
                    }
                }
                Output::Cancel(job) => self.cancels.push(job),
                Output::ProgressDue(job, delay) => self.due.push((job, delay)),
                Output::Answer(job, answer) => self.answers.push((job, answer)),
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

    pub fn send(&mut self, msg: Value) -> Vec<Value> {
        self.send_bytes(msg.to_string().as_bytes())
    }

    pub fn send_line(&mut self, line: &str) -> Vec<Value> {
        self.send_bytes(line.as_bytes())
    }

    pub fn send_bytes(&mut self, line: &[u8]) -> Vec<Value> {
        let mut out = Vec::new();
        self.engine.on_line(line, &mut out);
        self.collect(out)
    }

    /// Sends one request and returns its only response.
    pub fn request(&mut self, msg: Value) -> Value {
        let mut got = self.send(msg.clone());
        assert_eq!(got.len(), 1, "one response to {msg}, got {got:?}");
        got.remove(0)
    }

    /// R has finished `job`.
    pub fn complete(&mut self, job: JobId, outcome: Outcome) -> Vec<Value> {
        let mut out = Vec::new();
        self.engine.on_completed(job, outcome, &mut out);
        self.collect(out)
    }

    /// A request of the revision in use: on 2026-07-28 with the envelope
    /// naming the revision and `caps`.
    pub fn msg(&self, id: u64, method: &str, mut params: Value) -> Value {
        if self.rev.is_modern() {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": self.rev.as_str(),
                "io.modelcontextprotocol/clientCapabilities": self.caps,
            });
        }
        json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
    }

    /// Sends a request of the revision in use (see [`Harness::msg`]) and
    /// returns its only response.
    pub fn rpc(&mut self, id: u64, method: &str, params: Value) -> Value {
        let msg = self.msg(id, method, params);
        self.request(msg)
    }

    /// `job` asks the client for input under `key`.
    pub fn ask(&mut self, job: JobId, key: &str, request: Value) -> Vec<Value> {
        let mut out = Vec::new();
        self.engine.on_ask(job, key.into(), request, &mut out);
        self.collect(out)
    }
}
