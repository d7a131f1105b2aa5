//! What a running server holds for R: the engine's server, the call plans
//! of its tools, the call R runs and what its input requests need. Its
//! methods for R are in `server/mod.rs`, asking for input in
//! `server/asking.rs`.

use crate::from_json;
use extendr_api::prelude::*;
use mcp_core::engine::{CallContext, Job, JobId};
use mcp_core::transport::server::Server;
use mcp_core::transport::slots::Answer;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::mpsc;

/// What the server holds per tool besides the engine's definition.
pub(super) struct ToolCall {
    pub(super) shapes: Vec<(String, from_json::Shape)>,
    /// How structured results are written, for a tool with an output schema.
    pub(super) output: Option<crate::output::Node>,
}

/// A running server, owned by the R session that started it.
/// @noRd
#[extendr]
pub struct McpServer {
    pub(super) server: Option<Server>,
    /// By the key of each entry the server serves, or a call still holds.
    pub(super) tools: RefCell<HashMap<usize, ToolCall>>,
    /// The call R is running, for `mcp_request()`.
    pub(super) current: RefCell<Option<Box<Job>>>,
    /// The input requests each 2026-07-28 call stopped at, by key, for its
    /// `input_required` result (the main thread's call; a worker call's
    /// until R completes it, at once).
    pub(super) needs_input: RefCell<HashMap<JobId, Vec<(String, serde_json::Value)>>>,
    /// The calls R runs on worker processes, by job: what their input
    /// requests need to know (how input is had, the answers given so far).
    pub(super) worker_calls: RefCell<HashMap<JobId, CallContext>>,
    /// Where the client's answer to a worker call's input request arrives.
    /// The call holds no R thread meanwhile: R looks here between polls.
    pub(super) worker_answers: RefCell<HashMap<JobId, mpsc::Receiver<Answer>>>,
    /// R runs calls while `mcp_client()` waits for this server (see
    /// `serving_nested()`): a call may not wait for its client's answers.
    pub(super) nested: std::cell::Cell<bool>,
    /// The spans the running call opened with `mcp_span()`, innermost last.
    pub(super) children: RefCell<mcp_core::telemetry::children::Children>,
}

impl McpServer {
    /// A call ends: nothing kept for it outlives it.
    pub(super) fn forget(&self, job: JobId) {
        let mut current = self.current.borrow_mut();
        let was_current = current.as_ref().is_some_and(|running| running.id == job);
        if was_current {
            current.take();
        }
        drop(current);
        if was_current {
            self.end_open_spans();
        }
        self.needs_input.borrow_mut().remove(&job);
        self.worker_calls.borrow_mut().remove(&job);
        self.worker_answers.borrow_mut().remove(&job);
    }
}

impl McpServer {
    /// The running server, for serving in the background (`background.rs`).
    pub(crate) fn engine(&self) -> Option<&Server> {
        self.server.as_ref()
    }
}
