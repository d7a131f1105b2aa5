//! Stopping the HTTP server gracefully (`$stop()`, Ctrl-C in the
//! foreground, SIGTERM: see [`crate::transport::signals`]).
//!
//! In that order: new connections are refused (the listening socket is
//! closed); every request still waiting for its answer gets a JSON-RPC
//! error saying the server is stopping, as its response (on its event
//! stream, which then ends with its terminating chunk, or as its JSON
//! answer), and the calls behind them are cancelled; GET streams end; a
//! request still on its way in (its body, its token check) gets 503;
//! idle connections close at once and busy ones as soon as their answer is
//! sent. Whatever is still being written after [`DRAIN`] (to a client
//! that does not read) is cut.

use super::connections::Connections;
use super::responses::rpc_error;
use super::state::{lock, Body, Hub, InFlight, Session, Stopper};
use super::streams::Postbox;
use crate::protocol::jsonrpc::{self, RequestId};
use crate::transport::slots::Slot;
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use std::sync::Arc;
use std::time::Duration;

/// How long a stopping server waits for its answers to be sent: the error
/// answers are small, so anything longer is a client that stopped reading.
pub const DRAIN: Duration = Duration::from_secs(2);

/// The code and message of the error a request gets when the server stops
/// before answering it.
pub const STOPPING_CODE: i64 = -32000;
pub const STOPPING_MESSAGE: &str =
    "Server stopping: the request was not completed; send it again once the server is back";

impl InFlight {
    pub(super) fn track(&self, postbox: &Arc<Postbox>, slot: &Arc<Slot>) {
        let mut requests = lock(&self.requests);
        // Answered requests are pruned when the list would grow: it holds
        // no more than about twice the requests being answered.
        if requests.len() == requests.capacity() {
            requests.retain(|(postbox, _)| postbox.strong_count() > 0);
        }
        requests.push((Arc::downgrade(postbox), Arc::downgrade(slot)));
    }

    fn take(&self) -> Vec<(Arc<Postbox>, Arc<Slot>)> {
        std::mem::take(&mut *lock(&self.requests))
            .into_iter()
            .filter_map(|(postbox, slot)| Some((postbox.upgrade()?, slot.upgrade()?)))
            .collect()
    }
}

/// The response of a request whose answer the stopping server cannot give.
fn stopping_error(id: &RequestId) -> String {
    jsonrpc::error(Some(id), STOPPING_CODE, STOPPING_MESSAGE, None)
}

/// What a request still coming in (not yet handed to an engine) gets.
pub(super) fn refused_while_stopping() -> Response<Body> {
    let mut r = rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        None,
        STOPPING_CODE,
        STOPPING_MESSAGE,
    );
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

impl Hub {
    /// Stops: see the module docs. Returns once every connection is closed,
    /// or after [`DRAIN`].
    pub(super) async fn shut_down(&self, connections: &Connections, stopper: &Stopper) {
        self.answer_in_flight();
        stopper.answered();
        // Requests still on their way in get `refused_while_stopping`.
        let _ = self.stopping.send(true);
        connections.close_all();
        let _ = tokio::time::timeout(DRAIN, connections.all_closed()).await;
    }

    /// Every waiting request of every session and 2026-07-28 request gets
    /// the stopping error; their calls are cancelled.
    fn answer_in_flight(&self) {
        let sessions: Vec<Arc<Session>> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        let requests = self.in_flight.take();
        let engines = sessions
            .iter()
            .map(|s| (&s.postbox, &s.slot))
            .chain(requests.iter().map(|(postbox, slot)| (postbox, slot)));
        for (postbox, slot) in engines {
            postbox.shut_down(stopping_error);
            self.front.close(slot);
        }
    }

    /// Resolves once the server is stopping.
    pub(super) async fn stopped(&self) {
        let mut stopping = self.stopping.subscribe();
        let _ = stopping.wait_for(|stopping| *stopping).await;
    }
}
