//! Routing a request: authorisation, then POST (2026-07-28 requests and
//! legacy session messages), GET and DELETE by method and headers, and the
//! answer to a POST (one JSON body, or an event stream).

use super::body;
use super::connections;
use super::limits;
use super::modern;
use super::responses::{
    accepts, busy, empty, error_response, full, header_text, modern_status, preflight, prm_url,
    rpc_error, sse_response,
};
use super::security;
use super::security::Refusal;
use super::state::Accepts;
use super::state::{Body, Caller, Hub, Pending, Session, PRM_PATH};
use super::streams;
use super::streams::{EventLog, OnDrop, Piece, Postbox, SseBody, StreamRx};
use super::tokens;
use crate::protocol::jsonrpc::{self, Line, Message, RequestId};
use crate::protocol::revision::Revision;
use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// What choosing between the eras needs from a POST's body.
#[derive(Default)]
pub(super) struct BodyRouting {
    /// The params of a request whose `params._meta` names a protocol
    /// version (2026-07-28's envelope), read whole: the modern path needs
    /// them, and so does not read them again.
    pub(super) params: Option<Value>,
    /// The method is `initialize`.
    pub(super) initialize: bool,
}

/// Reads [`BodyRouting`] off the message `jsonrpc::parse_line` made of the
/// body, so that a request is not parsed a second time: its params' `_meta`
/// is looked into, and only enveloped params are read whole. A body that is
/// valid JSON but not a request or notification is read again as plain
/// JSON, on its way to an error, so that it is routed by the same rule.
/// (One difference from reading the whole body as a value: a number beyond
/// `f64` in a top-level member the envelope ignores no longer hides the
/// envelope.)
pub(super) fn body_routing(line: &Line, body: &[u8]) -> BodyRouting {
    match line {
        Line::Single(
            Message::Request { method, params, .. } | Message::Notification { method, params },
        ) => BodyRouting {
            params: params
                .as_deref()
                .filter(|p| names_version(p))
                .and_then(|p| serde_json::from_str(p).ok()),
            initialize: method == "initialize",
        },
        Line::Single(Message::Response { .. } | Message::Invalid { .. }) => {
            match serde_json::from_slice::<Value>(body) {
                Ok(value) => BodyRouting {
                    params: value
                        .get("params")
                        .filter(|p| p.get("_meta").is_some_and(meta_names_version))
                        .cloned(),
                    initialize: value.get("method").and_then(Value::as_str) == Some("initialize"),
                },
                Err(_) => BodyRouting::default(),
            }
        }
        // A batch, or no JSON at all.
        _ => BodyRouting::default(),
    }
}

/// Whether params' `_meta` names a protocol version. Params that are not an
/// object are read whole, to answer exactly as for any other JSON.
pub(super) fn names_version(text: &str) -> bool {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: Option<&'a RawValue>,
    }
    if text.starts_with('{') {
        if let Ok(Params { meta }) = serde_json::from_str::<Params>(text) {
            return meta.is_some_and(|m| {
                serde_json::from_str::<Value>(m.get()).is_ok_and(|m| meta_names_version(&m))
            });
        }
    }
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|p| p.get("_meta").map(meta_names_version))
        .unwrap_or(false)
}

pub(super) fn meta_names_version(meta: &Value) -> bool {
    meta.get(modern::META_VERSION).is_some()
}

/// A request's params as a value (`Null` when it has none).
pub(super) fn params_value(params: Option<&str>) -> Value {
    params
        .and_then(|p| serde_json::from_str(p).ok())
        .unwrap_or(Value::Null)
}

/// Whether a POST is a 2026-07-28 request: its body names a version in
/// `params._meta`, or its `MCP-Protocol-Version` header is not a
/// handshake-era revision.
pub(super) fn is_modern(headers: &HeaderMap, body: &BodyRouting) -> bool {
    if body.params.is_some() {
        return true;
    }
    if body.initialize {
        return false;
    }
    match header_text(headers, "mcp-protocol-version") {
        Some(v) => Revision::parse(v.trim()).is_none_or(|r| r.is_modern()),
        None => false,
    }
}

pub(super) fn version_supported(params: &Value) -> bool {
    params
        .get("_meta")
        .and_then(|m| m.get(modern::META_VERSION))
        .and_then(Value::as_str)
        .and_then(Revision::parse)
        .is_some_and(Revision::is_modern)
}

pub(super) fn is_tool_call(line: &Line) -> bool {
    matches!(line, Line::Single(Message::Request { method, .. }) if method == "tools/call")
}

/// The ids of the requests in a message or batch (what will be answered).
pub(super) fn request_ids(line: &Line) -> Vec<RequestId> {
    let id_of = |m: &Message| match m {
        Message::Request { id, .. } => Some(id.clone()),
        // An unreadable answer to one of the server's own requests is not
        // answered: the tool waiting for it learns why instead.
        Message::Invalid { id: Some(id), .. } if !id.as_json().starts_with("\"mcpserver-ask-") => {
            Some(id.clone())
        }
        _ => None,
    };
    match line {
        Line::Single(m) => id_of(m).into_iter().collect(),
        Line::Batch(ms) => ms.iter().filter_map(id_of).collect(),
        _ => Vec::new(),
    }
}

impl Hub {
    pub(super) async fn handle(
        self: Arc<Self>,
        request: Request<Incoming>,
        peer: SocketAddr,
    ) -> Response<Body> {
        let headers = request.headers();
        if let Err(refusal) = self.policy.check_request(request.uri(), headers) {
            return self.refused(refusal);
        }
        // The origin passed the check: its page may read every answer,
        // refusals included (a 401's `WWW-Authenticate` starts OAuth).
        let origin = header_text(request.headers(), header::ORIGIN)
            .and_then(|o| HeaderValue::from_str(o).ok());
        let mut response = self.route(request, peer).await;
        let h = response.headers_mut();
        h.insert("x-accel-buffering", HeaderValue::from_static("no"));
        if let Some(origin) = origin {
            h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
            h.insert(header::VARY, HeaderValue::from_static("Origin"));
            h.insert(
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                HeaderValue::from_static("Mcp-Session-Id, WWW-Authenticate, Retry-After"),
            );
        }
        response
    }

    /// A request from an accepted host and origin, to its route.
    pub(super) async fn route(
        self: Arc<Self>,
        request: Request<Incoming>,
        peer: SocketAddr,
    ) -> Response<Body> {
        let headers = request.headers();
        let path = request.uri().path().to_string();
        if path == PRM_PATH || path == format!("{PRM_PATH}{}", self.options.path) {
            return self.resource_metadata(request.method());
        }
        if path != self.options.path {
            return full(
                StatusCode::NOT_FOUND,
                "text/plain",
                "Not found: the MCP endpoint is elsewhere\n",
            );
        }
        // A browser page (an allowed origin, checked above) asks first
        // whether it may send the MCP headers; it sends no token for that.
        let origin = header_text(headers, header::ORIGIN).map(str::to_string);
        if request.method() == Method::OPTIONS {
            return preflight(headers, origin.as_deref());
        }
        let authorization = header_text(headers, header::AUTHORIZATION).map(str::to_string);
        let caller = match self.authorize(authorization.as_deref(), peer.ip()).await {
            Ok(caller) => caller.at(peer).traced(headers),
            Err(refusal) => return self.refused(refusal),
        };
        match *request.method() {
            Method::POST => self.post(request, caller).await,
            Method::GET => self.get(request.headers(), &caller),
            Method::DELETE => self.delete(request.headers(), &caller),
            _ => {
                let mut r = empty(StatusCode::METHOD_NOT_ALLOWED);
                r.headers_mut().insert(
                    header::ALLOW,
                    HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
                );
                r
            }
        }
    }

    /// Checks the request's token, if the server requires one: against the
    /// configured tokens, or with the R function (see [`tokens`]).
    pub(super) async fn authorize(
        self: &Arc<Self>,
        authorization: Option<&str>,
        peer: IpAddr,
    ) -> Result<Caller, Refusal> {
        let Some(checker) = &self.checker else {
            let principal = self.policy.check_token(authorization)?;
            return Ok(Caller::new(principal, None, peer));
        };
        let Some(token) = security::bearer_token(authorization) else {
            return Err(Refusal::Token {
                sent: authorization.is_some(),
            });
        };
        let hash = security::token_hash(token);
        match checker.check(&self.front, hash, token, peer).await {
            tokens::Checked::Verdict(tokens::Verdict::Allow(identity)) => {
                Ok(Caller::new(Some(hash), identity, peer))
            }
            tokens::Checked::Verdict(tokens::Verdict::Deny) => Err(Refusal::Token { sent: true }),
            tokens::Checked::Failed => Err(Refusal::CheckFailed),
            tokens::Checked::Unavailable => Err(Refusal::CheckUnavailable),
            tokens::Checked::TooMany => Err(Refusal::TooManyChecks),
        }
    }

    pub(super) fn refused(&self, refusal: Refusal) -> Response<Body> {
        match refusal {
            Refusal::CheckFailed => rpc_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                None,
                -32000,
                "Internal Server Error: the server could not check the bearer token",
            ),
            Refusal::CheckUnavailable => busy(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                "Service Unavailable: the bearer token could not be checked in time; retry shortly",
            ),
            Refusal::TooManyChecks => busy(
                StatusCode::TOO_MANY_REQUESTS,
                None,
                "Too Many Requests: this client has several new bearer tokens being checked \
                 already; retry shortly",
            ),
            Refusal::BadHost(why) => rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                -32000,
                &format!("Bad Request: {why}"),
            ),
            Refusal::Origin(origin) => rpc_error(
                StatusCode::FORBIDDEN,
                None,
                -32000,
                &format!("Forbidden: origin {origin:?} is not allowed"),
            ),
            Refusal::Host(host) => rpc_error(
                StatusCode::MISDIRECTED_REQUEST,
                None,
                -32000,
                &format!("Misdirected request: host {host:?} is not served here"),
            ),
            Refusal::Token { sent } => {
                let mut challenge = String::from("Bearer");
                if let Some(resource) = &self.options.resource {
                    challenge.push_str(&format!(
                        " resource_metadata=\"{}\"",
                        prm_url(resource, &self.options.path)
                    ));
                }
                if sent {
                    let sep = if challenge == "Bearer" { " " } else { ", " };
                    challenge.push_str(sep);
                    challenge.push_str("error=\"invalid_token\"");
                }
                let mut r = rpc_error(
                    StatusCode::UNAUTHORIZED,
                    None,
                    -32000,
                    "Unauthorized: a valid bearer token is required",
                );
                if let Ok(value) = HeaderValue::from_str(&challenge) {
                    r.headers_mut().insert(header::WWW_AUTHENTICATE, value);
                }
                r
            }
        }
    }

    /// RFC 9728 protected-resource metadata, when a resource is configured.
    pub(super) fn resource_metadata(&self, method: &Method) -> Response<Body> {
        let Some(resource) = &self.options.resource else {
            return full(StatusCode::NOT_FOUND, "text/plain", "Not found\n");
        };
        if method != Method::GET {
            return empty(StatusCode::METHOD_NOT_ALLOWED);
        }
        let doc = json!({
            "resource": resource,
            "authorization_servers": self.options.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        let mut r = full(StatusCode::OK, "application/json", doc.to_string());
        r.headers_mut().insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        r
    }

    pub(super) async fn post(
        self: &Arc<Self>,
        request: Request<Incoming>,
        caller: Caller,
    ) -> Response<Body> {
        let (parts, body) = request.into_parts();
        let headers = parts.headers;
        let accepts = accepts(&headers);
        if !accepts.json && !accepts.sse {
            return rpc_error(
                StatusCode::NOT_ACCEPTABLE,
                None,
                -32000,
                "Not Acceptable: the client must accept application/json and text/event-stream",
            );
        }
        if let Err(refused) = body::check_framing(&headers) {
            return refused;
        }
        let limit = self.options.max_body_bytes;
        let declared =
            header_text(&headers, header::CONTENT_LENGTH).and_then(|v| v.parse::<usize>().ok());
        if declared.is_some_and(|n| n > limit) {
            return self.too_large(limit);
        }
        let watch = parts.extensions.get::<connections::BodyWatch>();
        let read = body::read_watched(body, limit, self.options.body_timeout, watch);
        let bytes = match read.await {
            Ok(bytes) => bytes,
            Err(body::BodyError::TooLarge) => return self.too_large(limit),
            Err(body::BodyError::TimedOut) => return body::timed_out(self.options.body_timeout),
            Err(body::BodyError::Broken) => return empty(StatusCode::BAD_REQUEST),
        };
        let line = jsonrpc::parse_line(&bytes[..]);
        let routing = body_routing(&line, &bytes);
        if is_modern(&headers, &routing) {
            return self
                .post_modern(&headers, line, routing.params, accepts, caller)
                .await;
        }
        self.post_legacy(&headers, line, accepts, caller).await
    }

    pub(super) fn too_large(&self, limit: usize) -> Response<Body> {
        rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            jsonrpc::INVALID_REQUEST,
            &format!("Payload Too Large: the limit is {limit} bytes"),
        )
    }

    /// Takes a place among the long-lived streams for `caller`, if its
    /// share and the server's have one: 429 or 503 (with `Retry-After`)
    /// if not.
    // The refusal is the response itself, made once per refused request.
    #[allow(clippy::result_large_err)]
    pub(super) fn stream_place(&self, caller: &Caller) -> Result<limits::Place, Response<Body>> {
        limits::take_place(
            &self.streams,
            self.options.max_streams,
            &self.stream_shares,
            caller.client,
        )
        .map_err(|no| match no {
            limits::NoPlace::Client(limit) => busy(
                StatusCode::TOO_MANY_REQUESTS,
                None,
                &format!(
                    "Too Many Requests: this client holds {limit} open streams already, the \
                     most one client may; close one or retry shortly"
                ),
            ),
            limits::NoPlace::Server(limit) => busy(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                &format!("Service Unavailable: {limit} streams are open already; retry shortly"),
            ),
        })
    }

    pub(super) async fn post_modern(
        self: &Arc<Self>,
        headers: &HeaderMap,
        line: Line,
        parsed_params: Option<Value>,
        accepts: Accepts,
        caller: Caller,
    ) -> Response<Body> {
        let (id, method, params) = match &line {
            Line::Single(Message::Request { id, method, params }) => {
                let params = parsed_params.unwrap_or_else(|| params_value(params.as_deref()));
                (id.clone(), method.clone(), params)
            }
            Line::Single(Message::Notification { .. }) => return empty(StatusCode::ACCEPTED),
            Line::ParseError(_) | Line::Blank | Line::NotUtf8 { .. } => {
                return rpc_error(StatusCode::BAD_REQUEST, None, jsonrpc::PARSE_ERROR, "Parse error")
            }
            _ => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    None,
                    jsonrpc::INVALID_REQUEST,
                    "Invalid Request: protocol revision 2026-07-28 takes one request or notification per POST",
                )
            }
        };
        let checked = modern::check_envelope(None, &params)
            .and_then(|_| modern::check_routing(headers, &method, &params))
            .and_then(|_| {
                if method == "tools/call" && version_supported(&params) {
                    modern::check_param_headers(headers, &self.front.registry(), &params)
                } else {
                    Ok(())
                }
            });
        if let Err(error) = checked {
            return error_response(StatusCode::BAD_REQUEST, Some(&id), &error);
        }
        // A listen stream stays open: it takes one of the places of
        // long-lived streams. Other requests end with their answer.
        let place = if method == "subscriptions/listen" {
            match self.stream_place(&caller) {
                Ok(place) => Some(place),
                Err(r) => return r,
            }
        } else {
            None
        };
        let postbox = Arc::new(Postbox::default());
        let peer = caller.peer();
        let caller_ambient = caller.ambient.clone();
        let slot = self
            .front
            .request_slot(postbox.clone(), caller.identity, caller.owner, peer);
        self.in_flight.track(&postbox, &slot);
        if method == "subscriptions/listen" {
            // It hears of changes and resource updates while it is open.
            self.front.follow(&slot);
        }
        let (tx, rx) = streams::stream();
        postbox.open(&id, tx);
        // Closing the response stream cancels the request (and a
        // subscription), and nothing more is sent for it.
        let guard = {
            let front = self.front.clone();
            let slot = slot.clone();
            let id = id.clone();
            OnDrop::new(move || front.cancel(&slot, &id))
        };
        let long_lived = method == "tools/call" || method == "subscriptions/listen";
        self.front
            .inbound_with(&slot, Some(id), line, caller_ambient.clone());
        let pending = Pending {
            rx,
            guard,
            place,
            stream_after: long_lived.then_some(self.options.stream_after),
            accepts,
            modern: true,
            log: None,
        };
        self.answer(pending).await
    }

    pub(super) async fn post_legacy(
        self: &Arc<Self>,
        headers: &HeaderMap,
        line: Line,
        accepts: Accepts,
        caller: Caller,
    ) -> Response<Body> {
        // Messages that cannot be handed to an engine are answered here.
        match &line {
            Line::Blank | Line::ParseError(_) => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    None,
                    jsonrpc::PARSE_ERROR,
                    "Parse error",
                )
            }
            Line::NotUtf8 {
                id,
                response: false,
                ..
            } => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    Some(id),
                    jsonrpc::PARSE_ERROR,
                    "Parse error: the body is not UTF-8",
                )
            }
            Line::Single(Message::Invalid { id: None, reason }) => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    None,
                    jsonrpc::INVALID_REQUEST,
                    &format!("Invalid Request: {reason}"),
                )
            }
            _ => {}
        }
        if let Line::Single(Message::Request { id, method, .. }) = &line {
            if method == "initialize" {
                let id = id.clone();
                return self.initialize(id, line, accepts, caller).await;
            }
        }
        let session = match self.session_of(headers, &caller) {
            Ok(s) => s,
            Err(r) => return r,
        };
        if let Some(version) = header_text(headers, "mcp-protocol-version") {
            // A handshake-era revision other than the session's is let
            // through (the SDK servers do the same, and the official
            // conformance suite sends 2025-03-26 on 2025-11-25 sessions):
            // the session's revision is what the answers follow.
            if Revision::parse(version.trim()).is_none_or(|r| r.is_modern()) {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    None,
                    -32000,
                    &format!("Bad Request: unsupported MCP-Protocol-Version {version:?}"),
                );
            }
        }
        if let Line::Batch(_) = &line {
            if !session.revision.allows_batches() {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    None,
                    jsonrpc::INVALID_REQUEST,
                    "Invalid Request: JSON-RPC batches are only part of protocol revision 2025-03-26",
                );
            }
        }
        session.touch();
        let ids = request_ids(&line);
        if ids.is_empty() {
            // Notifications and responses (answers to the server's requests).
            self.front
                .inbound_with(&session.slot, None, line, caller.ambient.clone());
            return empty(StatusCode::ACCEPTED);
        }
        let opened = if accepts.sse {
            self.open_resumable(&session, &ids)
        } else {
            self.open_plain(&session, &ids)
        };
        let Some((rx, guard, log)) = opened else {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                ids.first(),
                jsonrpc::INVALID_REQUEST,
                "Invalid Request: a request with this id is still being answered",
            );
        };
        let single = matches!(line, Line::Single(_));
        let long_lived = single && is_tool_call(&line);
        let cause = if single { ids.first().cloned() } else { None };
        self.front
            .inbound_with(&session.slot, cause, line, caller.ambient.clone());
        let pending = Pending {
            rx,
            guard,
            place: None,
            stream_after: long_lived.then_some(self.options.stream_after),
            accepts,
            modern: false,
            log,
        };
        self.answer(pending).await
    }

    /// The stream of a POST whose client reads only JSON: what precedes
    /// the response is dropped.
    pub(super) fn open_plain(
        &self,
        session: &Session,
        ids: &[RequestId],
    ) -> Option<(StreamRx, OnDrop, Option<Arc<EventLog>>)> {
        let (tx, rx) = streams::stream();
        for (n, id) in ids.iter().enumerate() {
            if !session.postbox.open(id, tx.clone()) {
                ids[..n]
                    .iter()
                    .for_each(|opened| session.postbox.forget(opened));
                return None;
            }
        }
        // A client that goes away before its answer is not cancelling
        // (handshake-era clients send notifications/cancelled for that);
        // what the engine still sends for the request is dropped.
        let guard = {
            let postbox = session.postbox.clone();
            let ids = ids.to_vec();
            OnDrop::new(move || ids.iter().for_each(|id| postbox.forget(id)))
        };
        Some((rx, guard, None))
    }

    /// The resumable stream of a POST whose client reads event streams:
    /// a client that goes away before its answer may come back for it
    /// (GET with `Last-Event-ID`), so the call's messages are kept.
    pub(super) fn open_resumable(
        &self,
        session: &Session,
        ids: &[RequestId],
    ) -> Option<(StreamRx, OnDrop, Option<Arc<EventLog>>)> {
        // Older clients take an event without data for a broken message.
        let primed = session.revision >= Revision::V2025_11_25;
        let (log, rx) = session.postbox.open_logged(ids, primed)?;
        let guard = {
            let log = log.clone();
            OnDrop::new(move || log.detach_connection(streams::FIRST_CONNECTION))
        };
        Some((rx, guard, Some(log)))
    }

    /// Sends what the engine answers: JSON if the response comes first,
    /// an event stream if anything precedes it or it takes a while.
    pub(super) async fn answer(&self, pending: Pending) -> Response<Body> {
        let Pending {
            mut rx,
            mut guard,
            place,
            stream_after,
            accepts,
            modern,
            log,
        } = pending;
        // `None` once `stream_after` has passed with nothing to send yet.
        let first = match (stream_after, accepts.sse) {
            (Some(after), true) => tokio::time::timeout(after, rx.recv()).await.ok(),
            _ => Some(rx.recv().await),
        };
        // `Some(None)`: the call was cancelled (or the server is stopping),
        // so nothing will be sent, and an event stream ends empty.
        let first = first.flatten();
        let status_of = |answer: &Bytes| {
            if modern {
                modern_status(streams::error_code(answer))
            } else {
                StatusCode::OK
            }
        };
        if let Some(Piece::Final(answer, _)) = &first {
            guard.disarm();
            if let Some(log) = &log {
                if accepts.json {
                    log.discard();
                }
            }
            return if accepts.json {
                full(status_of(answer), "application/json", answer.clone())
            } else {
                full(
                    status_of(answer),
                    "text/event-stream",
                    streams::sse_event(answer, None),
                )
            };
        }
        if !accepts.sse {
            // JSON only: what precedes the response cannot be sent.
            loop {
                match rx.recv().await {
                    Some(Piece::Final(answer, _)) => {
                        guard.disarm();
                        return full(status_of(&answer), "application/json", answer);
                    }
                    Some(Piece::Note(..)) => continue,
                    None => {
                        guard.disarm();
                        return empty(StatusCode::NO_CONTENT);
                    }
                }
            }
        }
        let mut body = SseBody::new(first, rx, self.options.keepalive, guard, place);
        if let Some(start) = log.as_ref().and_then(|log| log.priming()) {
            body = body.primed(start, self.options.reconnect_after);
        }
        sse_response(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule as it read the body when it was parsed a second time, whole.
    fn routing_of_whole_body(body: &[u8]) -> (bool, bool) {
        let Ok(value) = serde_json::from_slice::<Value>(body) else {
            return (false, false);
        };
        let enveloped = value
            .get("params")
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(modern::META_VERSION))
            .is_some();
        let initialize = value.get("method").and_then(Value::as_str) == Some("initialize");
        (enveloped, initialize)
    }

    #[test]
    fn routing_read_off_the_parsed_message_agrees_with_the_whole_body() {
        let bodies = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":null}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":null}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[{"io.modelcontextprotocol/protocolVersion":"x"}]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"x"},"_meta":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":1e400,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{not json"#,
            "",
            "   ",
        ];
        for body in bodies {
            let line = jsonrpc::parse_line(body.as_bytes());
            let routing = body_routing(&line, body.as_bytes());
            assert_eq!(
                (routing.params.is_some(), routing.initialize),
                routing_of_whole_body(body.as_bytes()),
                "{body}"
            );
        }
    }
}
