//! Spans a tool opens inside its call (`mcp_span()` in R): INTERNAL spans,
//! children of the call's SERVER span, or of the one opened around them.
//!
//! R's thread opens and closes them, so they live in a stack there (one
//! call runs at a time on it); a worker process, which has no telemetry of
//! its own, reports each span it ran when it ends, and the server records
//! it with the worker's start and end times ([`Children::record`]).

use super::spans::SpanIds;
use super::Telemetry;
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::Span;
use std::time::SystemTime;

/// Spans open at once at most (nested `mcp_span()` calls); deeper ones are
/// not traced.
pub const MAX_OPEN: usize = 64;
/// Attributes one span takes from R at most (the SDK's own limit is 128).
pub const MAX_ATTRIBUTES: usize = 64;

/// An attribute's value as R hands it over.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

/// Attributes as OpenTelemetry takes them (at most [`MAX_ATTRIBUTES`]).
pub fn key_values(attributes: Vec<(String, Value)>) -> Vec<KeyValue> {
    attributes
        .into_iter()
        .take(MAX_ATTRIBUTES)
        .map(|(key, value)| match value {
            Value::Text(s) => KeyValue::new(key, s),
            Value::Int(i) => KeyValue::new(key, i),
            Value::Float(f) => KeyValue::new(key, f),
            Value::Bool(b) => KeyValue::new(key, b),
        })
        .collect()
}

/// The spans R has open in the running call, innermost last.
#[derive(Default)]
pub struct Children {
    open: Vec<Span>,
}

impl std::fmt::Debug for Children {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Children({} open)", self.open.len())
    }
}

/// The context a child of `parent` starts in.
fn parent_context(parent: &SpanIds) -> Context {
    Context::new().with_remote_span_context(parent.0.clone())
}

impl Children {
    /// Opens a span named `name` inside the innermost open one, or inside
    /// the call's span `call`; `false` when it is not traced (too deep).
    pub fn open(
        &mut self,
        telemetry: &Telemetry,
        call: &SpanIds,
        name: String,
        attributes: Vec<(String, Value)>,
    ) -> bool {
        if self.open.len() >= MAX_OPEN {
            return false;
        }
        let parent = match self.open.last() {
            Some(span) => parent_context(&SpanIds(span.span_context().clone())),
            None => parent_context(call),
        };
        let tracer = telemetry.tracer();
        let span = tracer
            .span_builder(name)
            .with_kind(SpanKind::Internal)
            .with_attributes(key_values(attributes))
            .start_with_context(tracer, &parent);
        self.open.push(span);
        true
    }

    /// Closes the innermost open span; `error`: the R error that left it
    /// (its message is the status; `error.type` is `r_error`).
    pub fn close(&mut self, error: Option<String>) {
        if let Some(mut span) = self.open.pop() {
            if let Some(message) = error {
                span.set_attribute(KeyValue::new("error.type", "r_error"));
                span.set_status(Status::error(message));
            }
            span.end();
        }
    }

    /// Adds attributes, or an event with them, to the innermost open span;
    /// `false` when none is open (they are for the call's span then).
    pub fn annotate(&mut self, attributes: Vec<(String, Value)>, event: Option<String>) -> bool {
        let Some(span) = self.open.last_mut() else {
            return false;
        };
        let kv = key_values(attributes);
        match event {
            Some(name) => span.add_event(name, kv),
            None => span.set_attributes(kv),
        }
        true
    }

    /// The call ends: spans still open (R left them without closing) end.
    pub fn clear(&mut self) {
        while !self.open.is_empty() {
            self.close(None);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// Records a span a worker ran inside the call `call`: a child of the
    /// call's span, from `start` to `end`, with its attributes and events
    /// (name, time, attributes).
    pub fn record(telemetry: &Telemetry, call: &SpanIds, ran: WorkerSpan) {
        let tracer = telemetry.tracer();
        let mut span = tracer
            .span_builder(ran.name)
            .with_kind(SpanKind::Internal)
            .with_start_time(ran.start)
            .with_attributes(key_values(ran.attributes))
            .start_with_context(tracer, &parent_context(call));
        for (name, at, attributes) in ran.events {
            span.add_event_with_timestamp(name, at, key_values(attributes));
        }
        if let Some(message) = ran.error {
            span.set_attribute(KeyValue::new("error.type", "r_error"));
            span.set_status(Status::error(message));
        }
        span.end_with_timestamp(ran.end.max(ran.start));
    }
}

/// Attributes as R hands them over.
pub type Attributes = Vec<(String, Value)>;

/// An event a worker's span had: its name, time and attributes.
pub type WorkerEvent = (String, SystemTime, Attributes);

/// A span a worker process ran, as it reports it.
#[derive(Debug, Clone)]
pub struct WorkerSpan {
    pub name: String,
    pub start: SystemTime,
    pub end: SystemTime,
    pub attributes: Attributes,
    pub events: Vec<WorkerEvent>,
    pub error: Option<String>,
}
