//! Where the engine meets telemetry: a request's span starts when the
//! request is read and ends when its response is written (or when it is
//! cancelled, unanswered). With telemetry off nothing here allocates.

use super::state::{Engine, Session};
use super::wire::META_VERSION;
use crate::protocol::jsonrpc::RequestId;
use crate::stores::tasks::Status;
use crate::telemetry::spans::{Request, SpanIds};
use crate::telemetry::tasks::{End as TaskEnd, Phase};
use crate::telemetry::{RequestSpan, Transport};
use crate::util::ids::JobId;
use opentelemetry::KeyValue;
use serde_json::Value;

/// Spans in flight per engine at most; requests beyond are not traced.
const MAX_SPANS: usize = 10_000;

impl Engine {
    /// Starts the span of request `id`, if telemetry is on.
    /// `arguments`: a tool call's, as written, when kept out of `params`.
    pub(super) fn begin_span(
        &mut self,
        id: &RequestId,
        method: &str,
        params: &Value,
        arguments: Option<&str>,
    ) {
        let Some(telemetry) = &self.config.telemetry else {
            return;
        };
        if self.spans.len() >= MAX_SPANS {
            return;
        }
        let version = protocol_version(method, params, self.session.as_ref());
        let request = Request {
            method,
            ambient: self.ambient.as_ref(),
            id_json: id.as_json(),
            params,
            arguments,
            protocol_version: version.as_deref(),
            peer: &self.peer,
        };
        let span = RequestSpan::start(telemetry.tracer(), &request, telemetry.capture());
        self.spans.insert(id.clone(), span);
    }

    /// Ends the span of request `id` with the response it is sent: what
    /// is read from the response here is cheap, and the rest is done on
    /// the export thread.
    pub(super) fn end_span(&mut self, id: &RequestId, response: &str) {
        if self.spans.is_empty() {
            return;
        }
        let (Some(span), Some(telemetry)) = (self.spans.remove(id), &self.config.telemetry) else {
            return;
        };
        // Only an `initialize` response is searched for the revision.
        let version = span.is_initialize().then(|| negotiated(response)).flatten();
        telemetry.end(span.ending(response, id.as_json(), version));
    }

    /// Ends the span of request `id`, which gets no response.
    pub(super) fn end_span_unanswered(&mut self, id: &RequestId, why: &'static str) {
        if let (Some(span), Some(telemetry)) = (self.spans.remove(id), &self.config.telemetry) {
            telemetry.end(span.ending_unanswered(why));
        }
    }

    /// The handshake-era session ends (a new `initialize`, or the engine
    /// goes): its duration is recorded.
    pub(super) fn end_session_span(&mut self) {
        let (Some(telemetry), Some(session)) = (&self.config.telemetry, &self.session) else {
            return;
        };
        let mut kv = vec![
            KeyValue::new("mcp.protocol.version", session.revision.as_str()),
            KeyValue::new(
                "network.transport",
                match self.peer.transport {
                    Transport::Pipe => "pipe",
                    Transport::Tcp => "tcp",
                },
            ),
        ];
        if self.peer.transport == Transport::Tcp {
            kv.push(KeyValue::new("network.protocol.name", "http"));
        }
        telemetry.session_ended(session.started.elapsed().as_secs_f64(), &kv);
    }

    /// Records an event on request `id`'s span.
    pub(super) fn span_event(&mut self, id: &RequestId, name: &'static str, kv: Vec<KeyValue>) {
        if self.spans.is_empty() {
            return;
        }
        if let Some(span) = self.spans.get_mut(id) {
            span.event(name, kv);
        }
    }

    /// The handler of `job` adds attributes to its request's span, or an
    /// event with them (`mcp_span_annotate()` in R).
    pub fn on_span_annotate(
        &mut self,
        job: JobId,
        attributes: Vec<KeyValue>,
        event: Option<String>,
    ) {
        let Some(state) = self.jobs.get(&job) else {
            return;
        };
        if let Some(span) = self.spans.get_mut(&state.request_id) {
            match event {
                Some(name) => span.event(name, attributes),
                None => span.set_all(attributes),
            }
        } else if let (Some(task_id), Some(telemetry)) = (&state.task, &self.config.telemetry) {
            // A task's call was answered with its handle: the task's span
            // is the one its tool is running in.
            telemetry.tasks().annotate(task_id, attributes, event);
        }
    }

    /// The span a job's tool runs in, parent of the spans it opens: its
    /// request's, or, for a task (whose call was answered with its
    /// handle), the task's.
    pub(super) fn job_trace(&self, request_id: &RequestId, task: Option<&str>) -> Option<SpanIds> {
        if let Some(span) = self.spans.get(request_id) {
            return Some(span.context());
        }
        let telemetry = self.config.telemetry.as_ref()?;
        let ids = telemetry.tasks().context(task?);
        ids
    }

    /// The HTTP request whose message is handled next carried this trace
    /// context in its headers (`None` again after it).
    pub fn set_ambient(&mut self, ambient: Option<crate::telemetry::Ambient>) {
        if self.config.telemetry.is_some() {
            self.ambient = ambient;
        }
    }

    /// The session ends with the server: its duration is recorded now,
    /// while the export thread can still send it.
    pub fn end_session(&mut self) {
        self.end_session_span();
        self.session = None;
    }

    /// Records an event on the span of the request `job` serves.
    pub(super) fn job_span_event(&mut self, job: JobId, name: &'static str, kv: Vec<KeyValue>) {
        if self.spans.is_empty() {
            return;
        }
        if let Some(id) = self.jobs.get(&job).map(|s| s.request_id.clone()) {
            self.span_event(&id, name, kv);
        }
    }

    /// Request `id`'s call of `tool` became task `task_id`: the task's
    /// span starts, a child of the call's, before the call's span ends
    /// with the task's handle.
    pub(super) fn begin_task_span(&self, id: &RequestId, tool: &str, task_id: &str) {
        let (Some(telemetry), Some(span)) = (&self.config.telemetry, self.spans.get(id)) else {
            return;
        };
        telemetry
            .tasks()
            .start(telemetry.tracer(), &span.context(), task_id, tool);
    }

    /// Task `task_id`'s status may have changed: its span records where
    /// it stands now, and ends when the task has ended.
    pub(super) fn trace_task(&self, task_id: &str) {
        let Some(telemetry) = &self.config.telemetry else {
            return;
        };
        let store = self.tasks();
        let Some(task) = store.get(task_id) else {
            return;
        };
        let mut spans = telemetry.tasks();
        match task.status {
            Status::Working => spans.phase(task_id, Phase::Working),
            Status::InputRequired => spans.phase(task_id, Phase::InputRequired),
            Status::Completed => {
                let tool_error = task.result.as_deref().is_some_and(reports_tool_error);
                spans.end(task_id, TaskEnd::Completed { tool_error });
            }
            Status::Failed => {
                let error = task.error.as_ref();
                let code = error.and_then(|e| e.get("code")).and_then(Value::as_i64);
                let message = error
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("the call failed");
                let failed = TaskEnd::Failed {
                    code: code.unwrap_or(crate::protocol::jsonrpc::INTERNAL_ERROR),
                    message: message.to_string(),
                };
                spans.end(task_id, failed);
            }
            Status::Cancelled => spans.end(task_id, TaskEnd::Cancelled),
        }
    }

    /// Task `task_id` was forgotten as its time to live passed.
    pub(super) fn task_span_expired(&self, task_id: &str) {
        if let Some(telemetry) = &self.config.telemetry {
            telemetry.tasks().end(task_id, TaskEnd::Expired);
        }
    }

    /// The trace and span ids of request `id`'s span, if it has one.
    pub fn trace_ids(&self, id: &RequestId) -> Option<(String, String)> {
        self.spans.get(id).map(RequestSpan::ids)
    }
}

/// Whether a stored tool result (a `CallToolResult` as the engine wrote
/// it) says `isError`. Inside a JSON string every quote is escaped, so the
/// member's text occurs only as a member (of the result, or of an object
/// in it: a label at worst, never a wrong answer).
fn reports_tool_error(result: &str) -> bool {
    result.contains("\"isError\":true")
}

impl Drop for Engine {
    /// An engine goes with its session (an HTTP session's end, DELETE or
    /// expiry): the session's duration is recorded.
    fn drop(&mut self) {
        self.end_session_span();
    }
}

/// The revision a request is served in: the session's, the envelope's
/// (2026-07-28), or the one `initialize` asks for.
fn protocol_version(method: &str, params: &Value, session: Option<&Session>) -> Option<String> {
    let named = |v: &Value| v.as_str().map(str::to_string);
    if let Some(version) = params.get("_meta").and_then(|m| m.get(META_VERSION)) {
        return named(version);
    }
    if method == "initialize" {
        return params.get("protocolVersion").and_then(named);
    }
    session.map(|s| s.revision.as_str().to_string())
}

/// The revision an `initialize` response settles on.
fn negotiated(response: &str) -> Option<String> {
    if !response.contains("\"protocolVersion\"") {
        return None;
    }
    let value: Value = serde_json::from_str(response).ok()?;
    value["result"]["protocolVersion"]
        .as_str()
        .map(str::to_string)
}
