//! What a running tool does with its call's span (R/telemetry.R:
//! `mcp_span()`, `mcp_span_attributes()`, `mcp_span_event()`): spans it
//! opens inside the call, attributes and events on the innermost open
//! span or else on the call's own, and the spans a worker process reports.
//!
//! With telemetry off, or for a call that is not traced, each of these
//! finds no span and returns at once.

use super::state::McpServer;
use crate::rvalue::{element, single_number, RValue};
use extendr_api::prelude::*;
use extendr_ffi::{INTEGER, LOGICAL, SEXPTYPE};
use mcp_core::engine::JobId;
use mcp_core::telemetry::children::{Children, Value, WorkerSpan};
use mcp_core::telemetry::SpanIds;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

impl McpServer {
    /// The span of call `job`: the one R runs, or a worker's.
    fn call_span(&self, job: JobId) -> Option<SpanIds> {
        let current = self.current.borrow();
        if let Some(running) = current.as_ref().filter(|r| r.id == job) {
            return running.context.trace.clone();
        }
        drop(current);
        let workers = self.worker_calls.borrow();
        workers.get(&job).and_then(|c| c.trace.clone())
    }

    /// Opens a span named `name` inside call `job`; whether it is traced.
    pub(super) fn open_span(&self, job: JobId, name: &str, attributes: RValue) -> bool {
        let (Some(server), Some(call)) = (&self.server, self.call_span(job)) else {
            return false;
        };
        let Some(telemetry) = server.telemetry() else {
            return false;
        };
        self.children.borrow_mut().open(
            telemetry,
            &call,
            name.to_string(),
            attribute_values(attributes),
        )
    }

    /// Closes the innermost span R opened; `error`: the R error's message.
    pub(super) fn close_span(&self, error: Option<String>) {
        self.children.borrow_mut().close(error);
    }

    /// Attributes, or an event, for the innermost open span, else for the
    /// span of call `job`.
    pub(super) fn annotate_span(&self, job: JobId, attributes: RValue, event: Option<String>) {
        let Some(server) = &self.server else {
            return;
        };
        if server.telemetry().is_none() {
            return;
        }
        let values = attribute_values(attributes);
        // The spans R opened belong to the call it runs, not to a worker's.
        let running = self.current.borrow().as_ref().is_some_and(|r| r.id == job);
        let mut children = self.children.borrow_mut();
        if running && !children.is_empty() {
            children.annotate(values, event);
        } else {
            drop(children);
            server.annotate_span(job, values, event);
        }
    }

    /// A span worker call `job` ran: `list(name, start, end, attributes,
    /// events, error)`, times in seconds since the epoch, each event
    /// `list(name, time, attributes)`.
    pub(super) fn record_worker_span(&self, job: JobId, ran: RValue) {
        let (Some(server), Some(call)) = (&self.server, self.call_span(job)) else {
            return;
        };
        let Some(telemetry) = server.telemetry() else {
            return;
        };
        let Some(span) = worker_span(ran) else {
            return;
        };
        Children::record(telemetry, &call, span);
    }

    /// The call ends: spans R left open end with it.
    pub(super) fn end_open_spans(&self) {
        let mut children = self.children.borrow_mut();
        if !children.is_empty() {
            children.clear();
        }
    }
}

/// A named list of single values (checked by R) as attributes; values of
/// another shape are left out.
fn attribute_values(list: RValue) -> Vec<(String, Value)> {
    if list.kind() != SEXPTYPE::VECSXP {
        return Vec::new();
    }
    let names = list.names();
    (0..list.len())
        .filter_map(|i| {
            let name = names.string(i)?.into_owned();
            let value = single_value(element(list, i))?;
            (!name.is_empty()).then_some((name, value))
        })
        .collect()
}

fn single_value(x: RValue) -> Option<Value> {
    if x.len() != 1 {
        return None;
    }
    match x.kind() {
        SEXPTYPE::STRSXP => x.as_single_string().map(|s| Value::Text(s.into_owned())),
        // SAFETY: one element of a vector of the matching type.
        SEXPTYPE::LGLSXP => match unsafe { *LOGICAL(x.0) } {
            i32::MIN => None,
            b => Some(Value::Bool(b != 0)),
        },
        SEXPTYPE::INTSXP if !x.has_class() => match unsafe { *INTEGER(x.0) } {
            i32::MIN => None,
            i => Some(Value::Int(i64::from(i))),
        },
        SEXPTYPE::REALSXP => single_number(x).map(Value::Float),
        _ => None,
    }
}

/// Seconds since the epoch as a time.
fn time_of(x: RValue) -> Option<SystemTime> {
    let seconds = single_number(x).filter(|s| *s >= 0.0)?;
    UNIX_EPOCH.checked_add(Duration::from_secs_f64(seconds))
}

fn field(x: RValue, name: &str) -> RValue {
    crate::rvalue::field(x, name)
}

fn worker_span(ran: RValue) -> Option<WorkerSpan> {
    let name = field(ran, "name").as_single_string()?.into_owned();
    let start = time_of(field(ran, "start"))?;
    let end = time_of(field(ran, "end"))?;
    let events = field(ran, "events");
    let events = if events.kind() == SEXPTYPE::VECSXP {
        (0..events
            .len()
            .min(mcp_core::telemetry::children::MAX_ATTRIBUTES))
            .filter_map(|i| {
                let event = element(events, i);
                let name = field(event, "name").as_single_string()?.into_owned();
                let at = time_of(field(event, "time"))?;
                Some((name, at, attribute_values(field(event, "attributes"))))
            })
            .collect()
    } else {
        Vec::new()
    };
    Some(WorkerSpan {
        name,
        start,
        end,
        attributes: attribute_values(field(ran, "attributes")),
        events,
        error: field(ran, "error")
            .as_single_string()
            .map(|s| s.into_owned()),
    })
}

/// `Robj` is what extendr methods take; these read it as an `RValue`.
pub(super) fn value_of(x: &Robj) -> RValue {
    RValue::of(x)
}
