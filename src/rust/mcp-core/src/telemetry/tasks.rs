//! A task's own span. A tool call that becomes a task is answered at once
//! with the task's handle, so the call's SERVER span ends there while the
//! work goes on. Each task therefore gets an INTERNAL span, a child of its
//! call's span, from its creation to its end (completed, failed, cancelled
//! or expired), with an event for every status it passes through, so a
//! trace shows how long the task waited for input and how it ended.
//!
//! The semantic conventions for MCP say nothing of tasks yet; the names
//! here follow their style (`mcp.task.id`, `mcp.task.status`,
//! `error.type`). Open task spans are kept by task id, at most
//! [`MAX_OPEN`] (the task store's own bound); a task beyond is not traced.

use super::spans::SpanIds;
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{SdkTracer, Span};
use std::collections::HashMap;

/// Task spans open at once at most.
pub const MAX_OPEN: usize = 1000;

/// How a task ended, as its span records it.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    /// Its result was stored; `tool_error`: the result has `isError`.
    Completed {
        tool_error: bool,
    },
    /// Its call failed with this JSON-RPC error code and message.
    Failed {
        code: i64,
        message: String,
    },
    Cancelled,
    /// Its time to live passed before it ended.
    Expired,
    /// The server stopped while it was still running.
    Abandoned,
}

/// A task's status, as the span's events name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Working,
    InputRequired,
}

impl Phase {
    fn as_str(self) -> &'static str {
        match self {
            Phase::Working => "working",
            Phase::InputRequired => "input_required",
        }
    }
}

struct Open {
    span: Span,
    phase: Phase,
}

/// The spans of the tasks still running, by task id.
#[derive(Default)]
pub struct TaskSpans {
    open: HashMap<String, Open>,
}

impl std::fmt::Debug for TaskSpans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TaskSpans({} open)", self.open.len())
    }
}

impl TaskSpans {
    /// Starts the span of task `task_id`, made for a call of `tool` whose
    /// span is `call`; nothing when [`MAX_OPEN`] are open.
    pub fn start(&mut self, tracer: &SdkTracer, call: &SpanIds, task_id: &str, tool: &str) {
        if self.open.len() >= MAX_OPEN || self.open.contains_key(task_id) {
            return;
        }
        let parent = Context::new().with_remote_span_context(call.0.clone());
        let mut span = tracer
            .span_builder(format!("task {tool}"))
            .with_kind(SpanKind::Internal)
            .with_attributes([
                KeyValue::new("mcp.task.id", task_id.to_string()),
                KeyValue::new("gen_ai.tool.name", tool.to_string()),
            ])
            .start_with_context(tracer, &parent);
        span.add_event("task working", vec![status_kv("working")]);
        let open = Open {
            span,
            phase: Phase::Working,
        };
        self.open.insert(task_id.to_string(), open);
    }

    /// Task `task_id` now is in `phase`: an event when that is a change.
    pub fn phase(&mut self, task_id: &str, phase: Phase) {
        let Some(open) = self.open.get_mut(task_id) else {
            return;
        };
        if open.phase != phase {
            open.phase = phase;
            let name = format!("task {}", phase.as_str());
            open.span.add_event(name, vec![status_kv(phase.as_str())]);
        }
    }

    /// Task `task_id` ended: its span records how, and ends.
    pub fn end(&mut self, task_id: &str, end: End) {
        if let Some(open) = self.open.remove(task_id) {
            finish(open.span, end);
        }
    }

    /// The server stops: every task span still open ends, marked so.
    pub fn end_all(&mut self) {
        for (_, open) in self.open.drain() {
            finish(open.span, End::Abandoned);
        }
    }

    /// The ids of task `task_id`'s span: the parent of the spans its tool
    /// opens, as its call's span has ended with the task's handle.
    pub fn context(&self, task_id: &str) -> Option<SpanIds> {
        use opentelemetry::trace::Span as _;
        let open = self.open.get(task_id)?;
        Some(SpanIds(open.span.span_context().clone()))
    }

    /// Adds the tool's attributes, or an event, to task `task_id`'s span.
    pub fn annotate(&mut self, task_id: &str, attributes: Vec<KeyValue>, event: Option<String>) {
        let Some(open) = self.open.get_mut(task_id) else {
            return;
        };
        match event {
            Some(name) => open.span.add_event(name, attributes),
            None => open.span.set_attributes(attributes),
        }
    }

    pub fn len(&self) -> usize {
        self.open.len()
    }

    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }
}

fn status_kv(status: &'static str) -> KeyValue {
    KeyValue::new("mcp.task.status", status)
}

/// Records `end` on `span` (the final status, an event, and for an
/// unsuccessful end `error.type` and an ERROR status) and ends it.
fn finish(mut span: Span, end: End) {
    let (status, error): (&'static str, Option<(String, String)>) = match end {
        End::Completed { tool_error: false } => ("completed", None),
        End::Completed { tool_error: true } => (
            "completed",
            Some(("tool_error".into(), "the tool reported an error".into())),
        ),
        End::Failed { code, message } => ("failed", Some((code.to_string(), message))),
        End::Cancelled => ("cancelled", Some(("cancelled".into(), "cancelled".into()))),
        End::Expired => (
            "expired",
            Some(("expired".into(), "its time to live passed".into())),
        ),
        End::Abandoned => (
            "unfinished",
            Some(("unfinished".into(), "the server stopped".into())),
        ),
    };
    span.add_event(format!("task {status}"), vec![status_kv(status)]);
    span.set_attribute(status_kv(status));
    if let Some((error_type, message)) = error {
        span.set_attribute(KeyValue::new("error.type", error_type));
        span.set_status(Status::error(message));
    }
    span.end();
}
