//! What the HTTP front keeps: the [`Hub`] every connection shares (the
//! server's front, the sessions, the policy and bounds), a legacy
//! [`Session`], the [`Caller`] of a request, and the [`Stopper`] that ends
//! serving.

use super::limits;
use super::options::Options;
use super::security;
use super::security::{Policy, Principal};
use super::streams::{EventLog, OnDrop, Postbox, StreamRx};
use super::tokens;
use crate::protocol::revision::Revision;
use crate::transport::slots::{Front, Slot};
use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use serde_json::Value;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, Semaphore};

pub(super) type Body = UnsyncBoxBody<Bytes, Infallible>;

pub(super) const SESSION_HEADER: &str = "mcp-session-id";

pub(super) const PRM_PATH: &str = "/.well-known/oauth-protected-resource";

pub(super) use crate::util::threads::lock;

/// A handshake-era session.
pub(super) struct Session {
    pub(super) slot: Arc<Slot>,
    pub(super) postbox: Arc<Postbox>,
    pub(super) revision: Revision,
    /// The token it was opened with (its hash): a request with another
    /// token does not find it.
    pub(super) principal: Option<Principal>,
    /// Its holder, whose share of the sessions it counts against.
    pub(super) owner: Option<crate::stores::tasks::Owner>,
    pub(super) last_used: Mutex<Instant>,
}

impl Session {
    pub(super) fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }
}

/// The state every request handler shares.
pub(super) struct Hub {
    pub(super) front: Front,
    pub(super) options: Options,
    pub(super) policy: Policy,
    pub(super) sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Places among the long-lived streams, the server's and each client's.
    pub(super) streams: Arc<Semaphore>,
    pub(super) stream_shares: Arc<limits::Shares>,
    /// Runs the R function that checks tokens, if one was given.
    pub(super) checker: Option<Arc<tokens::Checker>>,
    /// The 2026-07-28 requests being answered (see [`shutdown`]).
    pub(super) in_flight: InFlight,
    /// True once the server is stopping (see [`shutdown`]).
    pub(super) stopping: tokio::sync::watch::Sender<bool>,
}

/// Who sent a request, once its token (if any is required) passed.
#[derive(Clone)]
pub(super) struct Caller {
    /// The token's hash: what a handshake-era session is bound to.
    pub(super) principal: Option<Principal>,
    /// What the token function said about the caller, for tools.
    pub(super) identity: Option<Value>,
    /// Whose tasks the request reaches (see [`security::task_owner`]).
    pub(super) owner: Option<crate::stores::tasks::Owner>,
    /// Who its share of the server's limits is counted against.
    pub(super) client: limits::Client,
    /// Where the request came from (for spans).
    pub(super) address: Option<std::net::SocketAddr>,
    /// The W3C trace context in the request's headers (for span links).
    pub(super) ambient: Option<crate::telemetry::Ambient>,
}

impl Caller {
    pub(super) fn new(
        principal: Option<Principal>,
        identity: Option<Value>,
        peer: IpAddr,
    ) -> Caller {
        let owner = principal.map(|hash| security::task_owner(hash, identity.as_ref()));
        Caller {
            principal,
            identity,
            owner,
            client: limits::Client::of(owner, peer),
            address: None,
            ambient: None,
        }
    }

    /// The same caller, known to come from `address`.
    pub(super) fn at(mut self, address: std::net::SocketAddr) -> Caller {
        self.address = Some(address);
        self
    }

    /// The same caller, its request carrying `traceparent` (and
    /// `tracestate`) headers.
    pub(super) fn traced(mut self, headers: &hyper::HeaderMap) -> Caller {
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        self.ambient = text("traceparent").map(|traceparent| crate::telemetry::Ambient {
            traceparent: traceparent.to_string(),
            tracestate: text("tracestate").map(str::to_string),
        });
        self
    }

    /// The caller as its requests' spans describe it.
    pub(super) fn peer(&self) -> crate::telemetry::Peer {
        crate::telemetry::Peer {
            transport: crate::telemetry::Transport::Tcp,
            address: self.address,
            session: None,
        }
    }
}

/// Tells a [`Listener`] to stop, from any thread (see [`shutdown`]).
#[derive(Clone)]
pub struct Stopper(pub(super) Arc<StopState>);

pub(super) struct StopState {
    pub(super) stop: Notify,
    /// Every request waiting for an answer has had its stopping error.
    pub(super) answered: Mutex<bool>,
    pub(super) answered_changed: std::sync::Condvar,
}

impl Stopper {
    pub(super) fn new() -> Stopper {
        Stopper(Arc::new(StopState {
            stop: Notify::new(),
            answered: Mutex::new(false),
            answered_changed: std::sync::Condvar::new(),
        }))
    }

    pub fn stop(&self) {
        self.0.stop.notify_one();
    }

    /// Stops, and waits (at most `wait`) until every request that was
    /// waiting for its answer has had its stopping error, so that what
    /// the caller does next (interrupting R's call) cannot end a request's
    /// stream without an answer first.
    pub fn stop_and_wait(&self, wait: Duration) {
        self.stop();
        let answered = lock(&self.0.answered);
        let _ = self
            .0
            .answered_changed
            .wait_timeout_while(answered, wait, |answered| !*answered);
    }

    pub(super) fn answered(&self) {
        *lock(&self.0.answered) = true;
        self.0.answered_changed.notify_all();
    }
}

/// A request the engine is answering, and how its answer is to be sent.
pub(super) struct Pending {
    pub(super) rx: StreamRx,
    /// The client's way of saying it went away (the stream was dropped).
    pub(super) guard: OnDrop,
    /// Its place among the long-lived streams, if it is one.
    pub(super) place: Option<limits::Place>,
    /// Answer as a stream once this long has passed without a response.
    pub(super) stream_after: Option<Duration>,
    pub(super) accepts: Accepts,
    /// 2026-07-28: errors get their own HTTP status.
    pub(super) modern: bool,
    /// The resumable stream it goes through, if any.
    pub(super) log: Option<Arc<EventLog>>,
}

/// What the client accepts, from its `Accept` header (absent: anything).
pub(super) struct Accepts {
    pub(super) json: bool,
    pub(super) sse: bool,
}

/// The engines of the 2026-07-28 requests being answered, for a stopping
/// server to answer them.
#[derive(Default)]
pub(super) struct InFlight {
    pub(super) requests: Mutex<Vec<(Weak<Postbox>, Weak<Slot>)>>,
}
