//! Legacy (handshake-era) sessions: `initialize` makes one, bounded in number
//! (the idle are evicted first), GET opens or resumes its stream, DELETE
//! ends it, and idle ones are swept.

use super::limits;
use super::responses::{accepts, busy, empty, full, header_text, rpc_error, sse_response};
use super::state::Accepts;
use super::state::{lock, Body, Caller, Hub, Session, SESSION_HEADER};
use super::streams;
use super::streams::{EventId, OnDrop, Piece, Postbox, SseBody};
use crate::protocol::jsonrpc::{self, Line, RequestId};
use crate::protocol::revision::Revision;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A fresh session id: 128 random bits in hex (visible ASCII).
pub(super) fn new_session_id() -> String {
    let bytes = crate::util::ids::random_bytes::<16>();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Hub {
    pub(super) async fn initialize(
        self: &Arc<Self>,
        id: RequestId,
        line: Line,
        accepts: Accepts,
        caller: Caller,
    ) -> Response<Body> {
        if let Err(refused) = self.make_room_for_session(&id, &caller) {
            return refused;
        }
        let postbox = Arc::new(Postbox::default());
        let peer = caller.peer();
        let caller_ambient = caller.ambient.clone();
        let slot = self
            .front
            .session_slot(postbox.clone(), caller.identity, caller.owner, peer);
        let (tx, mut rx) = streams::stream();
        postbox.open(&id, tx);
        self.front
            .inbound_with(&slot, Some(id.clone()), line, caller_ambient);
        // `initialize` is answered at once, within the step above.
        let Ok(Piece::Final(answer, _)) = rx.try_recv() else {
            return rpc_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                Some(&id),
                jsonrpc::INTERNAL_ERROR,
                "initialize was not answered",
            );
        };
        let negotiated = serde_json::from_slice::<Value>(&answer).ok().and_then(|v| {
            v["result"]["protocolVersion"]
                .as_str()
                .and_then(Revision::parse)
        });
        let content_type = if accepts.json {
            "application/json"
        } else {
            "text/event-stream"
        };
        let body = if accepts.json {
            answer
        } else {
            streams::sse_event(&answer, None)
        };
        let mut response = full(StatusCode::OK, content_type, body);
        if let Some(revision) = negotiated {
            let session_id = new_session_id();
            lock(&slot.engine).set_session_id(&session_id);
            let session = Arc::new(Session {
                slot,
                postbox,
                revision,
                principal: caller.principal,
                owner: caller.owner,
                last_used: Mutex::new(Instant::now()),
            });
            lock(&self.sessions).insert(session_id.clone(), session);
            response.headers_mut().insert(
                SESSION_HEADER,
                HeaderValue::from_str(&session_id).expect("hex is a valid header value"),
            );
        }
        response
    }

    /// Makes room for one more session of `caller`: a holder at its share
    /// (with tokens) gives up its least recently used idle session, and a
    /// full server the least recently used idle one of any client. Sessions
    /// with a call running or a stream open are kept: with none idle, the
    /// `initialize` is refused (429 at the holder's share, 503 when full).
    /// No await lies between this and the new session's insertion, so on
    /// the one HTTP thread no other `initialize` takes the room meanwhile.
    #[allow(clippy::result_large_err)]
    pub(super) fn make_room_for_session(
        &self,
        id: &RequestId,
        caller: &Caller,
    ) -> Result<(), Response<Body>> {
        let mut evicted = Vec::new();
        let made = self.evict_for_session(caller, &mut evicted);
        for session in evicted {
            self.front.close(&session.slot);
        }
        made.map_err(|(status, message)| busy(status, Some(id), &message))
    }

    /// The sessions [`Hub::make_room_for_session`] ends, into `evicted`;
    /// or why there is no room.
    pub(super) fn evict_for_session(
        &self,
        caller: &Caller,
        evicted: &mut Vec<Arc<Session>>,
    ) -> Result<(), (StatusCode, String)> {
        let mut sessions = lock(&self.sessions);
        let idle_lru = |sessions: &HashMap<String, Arc<Session>>,
                        holder: Option<&crate::stores::tasks::Owner>| {
            sessions
                .iter()
                .filter(|(_, s)| holder.is_none() || s.owner.as_ref() == holder)
                .filter(|(_, s)| self.is_idle(s))
                .min_by_key(|(_, s)| *lock(&s.last_used))
                .map(|(key, _)| key.clone())
        };
        // `owner` is set only when tokens are required.
        if let Some(owner) = caller.owner {
            let held = sessions.values().filter(|s| s.owner == Some(owner)).count();
            if held >= self.options.max_sessions_per_client {
                let key = idle_lru(&sessions, Some(&owner)).ok_or_else(|| {
                    (
                        StatusCode::TOO_MANY_REQUESTS,
                        format!(
                            "Too Many Requests: this client has {held} sessions open and busy, \
                             the most one client may; end one (DELETE) or retry shortly"
                        ),
                    )
                })?;
                evicted.extend(sessions.remove(&key));
            }
        }
        if sessions.len() >= self.options.max_sessions {
            let key = idle_lru(&sessions, None).ok_or_else(|| {
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "Service Unavailable: {} sessions are open and busy, the most this \
                         server holds; retry shortly",
                        self.options.max_sessions
                    ),
                )
            })?;
            evicted.extend(sessions.remove(&key));
        }
        Ok(())
    }

    /// Whether a session has no call running and no stream open.
    pub(super) fn is_idle(&self, session: &Session) -> bool {
        !session.postbox.has_open_streams() && self.front.pending_calls(&session.slot) == 0
    }

    /// The session a request names: 400 without the header, 404 for an
    /// unknown or ended one.
    #[allow(clippy::result_large_err)]
    pub(super) fn session_of(
        &self,
        headers: &HeaderMap,
        caller: &Caller,
    ) -> Result<Arc<Session>, Response<Body>> {
        let Some(id) = header_text(headers, SESSION_HEADER) else {
            return Err(rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                -32000,
                "Bad Request: no Mcp-Session-Id header; send initialize first to start a session",
            ));
        };
        lock(&self.sessions)
            .get(id.trim())
            .filter(|session| session.principal == caller.principal)
            .cloned()
            .ok_or_else(|| {
                rpc_error(
                StatusCode::NOT_FOUND,
                None,
                -32001,
                "Session not found: it ended or never existed; send initialize to start a new one",
            )
            })
    }

    /// GET: the session's standalone stream.
    pub(super) fn get(&self, headers: &HeaderMap, caller: &Caller) -> Response<Body> {
        if header_text(headers, SESSION_HEADER).is_none() {
            let mut r = empty(StatusCode::METHOD_NOT_ALLOWED);
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST"));
            return r;
        }
        let session = match self.session_of(headers, caller) {
            Ok(s) => s,
            Err(r) => return r,
        };
        if !accepts(headers).sse {
            return rpc_error(
                StatusCode::NOT_ACCEPTABLE,
                None,
                -32000,
                "Not Acceptable: the client must accept text/event-stream",
            );
        }
        let place = match self.stream_place(caller) {
            Ok(p) => p,
            Err(r) => return r,
        };
        if let Some(last) = header_text(headers, "last-event-id") {
            return self.resume(&session, last, place);
        }
        let (tx, rx) = streams::stream();
        if !session.postbox.open_standalone(tx) {
            return rpc_error(
                StatusCode::CONFLICT,
                None,
                -32000,
                "Conflict: this session's GET stream is open already",
            );
        }
        session.touch();
        let body = SseBody::new(
            [],
            rx,
            self.options.keepalive,
            OnDrop::new(|| {}),
            Some(place),
        );
        sse_response(body)
    }

    /// GET with `Last-Event-ID`: the rest of a POST's stream, from the
    /// event after that one.
    pub(super) fn resume(
        &self,
        session: &Session,
        last: &str,
        place: limits::Place,
    ) -> Response<Body> {
        let resumed = EventId::parse(last).and_then(|after| session.postbox.resume(after));
        let Some(resumed) = resumed else {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                -32000,
                "Bad Request: no event stream is kept for this Last-Event-ID (it ended a while ago, or never existed)",
            );
        };
        session.touch();
        let (log, connection) = (resumed.log.clone(), resumed.connection);
        let guard = OnDrop::new(move || log.detach_connection(connection));
        let body = SseBody::resumed(resumed, self.options.keepalive, guard, Some(place));
        sse_response(body)
    }

    /// DELETE: ends the session, cancelling its calls.
    pub(super) fn delete(&self, headers: &HeaderMap, caller: &Caller) -> Response<Body> {
        let Some(id) = header_text(headers, SESSION_HEADER) else {
            let mut r = empty(StatusCode::METHOD_NOT_ALLOWED);
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST"));
            return r;
        };
        if let Err(refused) = self.session_of(headers, caller) {
            return refused;
        }
        let Some(session) = lock(&self.sessions).remove(id.trim()) else {
            return rpc_error(StatusCode::NOT_FOUND, None, -32001, "Session not found");
        };
        self.front.close(&session.slot);
        empty(StatusCode::OK)
    }

    /// Ends sessions idle for longer than the limit: no request for that
    /// long, no call running and no stream open.
    pub(super) fn sweep_idle_sessions(&self) {
        let now = Instant::now();
        let open: Vec<Arc<Session>> = lock(&self.sessions).values().cloned().collect();
        for session in open {
            session.postbox.sweep_logs(now);
        }
        let limit = self.options.session_idle;
        let idle: Vec<Arc<Session>> = {
            let mut sessions = lock(&self.sessions);
            let expired: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| lock(&s.last_used).elapsed() >= limit && self.is_idle(s))
                .map(|(id, _)| id.clone())
                .collect();
            expired
                .iter()
                .filter_map(|id| sessions.remove(id))
                .collect()
        };
        for session in idle {
            self.front.close(&session.slot);
        }
    }
}
