//! Where the engine meets telemetry: a request's span starts when the
//! request is read and ends when its response is written (or when it is
//! cancelled, unanswered). With telemetry off nothing here allocates.

use super::state::{Engine, Session};
use super::wire::META_VERSION;
use crate::protocol::jsonrpc::RequestId;
use crate::telemetry::spans::Request;
use crate::telemetry::RequestSpan;
use opentelemetry::KeyValue;
use serde_json::Value;

/// Spans in flight per engine at most; requests beyond are not traced.
const MAX_SPANS: usize = 10_000;

impl Engine {
    /// Starts the span of request `id`, if telemetry is on.
    pub(super) fn begin_span(&mut self, id: &RequestId, method: &str, params: &Value) {
        let Some(telemetry) = &self.config.telemetry else {
            return;
        };
        if self.spans.len() >= MAX_SPANS {
            return;
        }
        let version = protocol_version(method, params, self.session.as_ref());
        let request = Request {
            method,
            id_json: id.as_json(),
            params,
            protocol_version: version.as_deref(),
            peer: &self.peer,
        };
        let span = RequestSpan::start(telemetry.tracer(), &request);
        self.spans.insert(id.clone(), span);
    }

    /// Ends the span of request `id` with the response it is sent.
    pub(super) fn end_span(&mut self, id: &RequestId, response: &str) {
        if self.spans.is_empty() {
            return;
        }
        if let Some(mut span) = self.spans.remove(id) {
            if let Some(version) = negotiated(response) {
                span.set(KeyValue::new("mcp.protocol.version", version));
            }
            span.end_with(response);
        }
    }

    /// Ends the span of request `id`, which gets no response.
    pub(super) fn end_span_unanswered(&mut self, id: &RequestId, why: &'static str) {
        if let Some(span) = self.spans.remove(id) {
            span.end_unanswered(why);
        }
    }

    /// Records an event on request `id`'s span.
    pub(super) fn span_event(&mut self, id: &RequestId, name: &'static str, kv: Vec<KeyValue>) {
        if let Some(span) = self.spans.get_mut(id) {
            span.event(name, kv);
        }
    }

    /// The trace and span ids of request `id`'s span, if it has one.
    pub fn trace_ids(&self, id: &RequestId) -> Option<(String, String)> {
        self.spans.get(id).map(RequestSpan::ids)
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
