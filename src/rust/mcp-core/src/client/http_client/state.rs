//! What the client's tasks share: the queue of received messages, the
//! session the server assigned, the requests in flight and the bounds on
//! each (see the module above).

use super::options::{Endpoint, Options};
use bytes::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, Notify, OwnedSemaphorePermit, Semaphore};
use tokio::task::AbortHandle;

/// The JSON-RPC code of errors that stand for an HTTP failure (the range
/// -32000..-32099 is the implementation's; the SDKs use -32000 for a lost
/// connection too).
pub const TRANSPORT_ERROR: i64 = -32000;

/// Messages received and not yet taken by the caller, above which the
/// client stops reading from the server until the caller catches up.
pub(super) const INCOMING_QUEUE: usize = 256;

/// How many problems (failures that no request is waiting on) are kept.
pub(super) const PROBLEMS_KEPT: usize = 32;

/// How long an error answer's body may be before it is cut.
pub(super) const ERROR_BODY_KEPT: usize = 64 * 1024;

/// Attempts to resume a stream, or reopen the GET stream, in a row without
/// receiving anything.
pub(super) const RECONNECTS: u32 = 5;

/// How long the messages after `initialize` wait for its response to
/// begin (it carries the session id they need).
pub(super) const INITIALIZE_WAIT: Duration = Duration::from_secs(30);

/// The reconnection delay when the server gave none.
pub(super) const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// What [`HttpClient::receive`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    Message(String),
    Timeout,
    Closed,
}

/// What kind of JSON-RPC message a line holds, and what HTTP needs from it.
#[derive(Debug, Clone)]
pub(super) struct Outgoing {
    pub(super) body: Bytes,
    pub(super) kind: Kind,
    /// The request's id as JSON text.
    pub(super) id: Option<String>,
    pub(super) method: Option<String>,
    /// The 2026-07-28 headers, for a request in that revision's envelope.
    pub(super) modern: Option<Vec<(String, String)>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Request,
    Notification,
    Response,
    /// A batch, or text that is not a JSON-RPC message (the server answers
    /// it, with a parse error for instance).
    Other,
}

#[derive(Default)]
pub(super) struct Session {
    pub(super) id: Option<String>,
    /// The revision `initialize` settled on.
    pub(super) version: Option<String>,
    /// The id of the `initialize` request in flight.
    pub(super) initialize_id: Option<String>,
    pub(super) listening: bool,
}

/// A tool argument sent as a header: the header's name after `Mcp-Param-`,
/// and the argument's path in the arguments object.
pub(super) type ParamHeader = (String, Vec<String>);

pub(super) struct Shared {
    pub(super) endpoint: Endpoint,
    pub(super) options: Options,
    pub(super) headers: Vec<(HeaderName, HeaderValue)>,
    pub(super) session: Mutex<Session>,
    /// `x-mcp-header` arguments of each tool, learnt from `tools/list`:
    /// (header name suffix, property path).
    pub(super) param_headers: Mutex<HashMap<String, Vec<ParamHeader>>>,
    pub(super) out: mpsc::Sender<String>,
    pub(super) problems: Mutex<VecDeque<String>>,
    /// 2026-07-28 requests in flight, by id: cancelled by closing them.
    pub(super) cancellable: Mutex<HashMap<String, AbortHandle>>,
    /// Handshake-era requests the client cancelled (newest last, bounded):
    /// if their stream then ends unanswered, the client hears nothing, as
    /// it expects after a cancel.
    pub(super) cancelled: Mutex<VecDeque<String>>,
    pub(super) requests: Arc<Semaphore>,
    pub(super) others: Arc<Semaphore>,
    pub(super) active: AtomicUsize,
    pub(super) idle: Notify,
    pub(super) closing: AtomicBool,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub(super) fn problem(shared: &Shared, text: String) {
    let mut problems = lock(&shared.problems);
    if problems.len() == PROBLEMS_KEPT {
        problems.pop_front();
    }
    problems.push_back(text);
}

// ---- Reading the caller's messages --------------------------------------

/// Marks an exchange as over when it ends, however it ends (an abort too).
pub(super) struct Running {
    pub(super) shared: Arc<Shared>,
    pub(super) id: Option<String>,
    pub(super) _permit: OwnedSemaphorePermit,
}

impl Running {
    pub(super) fn new(
        shared: Arc<Shared>,
        id: Option<String>,
        permit: OwnedSemaphorePermit,
    ) -> Running {
        shared.active.fetch_add(1, Ordering::SeqCst);
        Running {
            shared,
            id,
            _permit: permit,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(id) = &self.id {
            lock(&self.shared.cancellable).remove(id);
        }
        if self.shared.active.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.shared.idle.notify_waiters();
        }
    }
}
