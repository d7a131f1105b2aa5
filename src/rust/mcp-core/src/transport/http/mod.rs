//! Streamable HTTP: one endpoint (`/mcp` by default) serving both eras.
//!
//! - **Handshake era** (2025-03-26, 2025-06-18, 2025-11-25): `initialize`
//!   creates a session with its own engine (its own negotiated revision,
//!   log level and client capabilities) and an unguessable
//!   `Mcp-Session-Id`; later POSTs carry the id (missing: 400, unknown or
//!   ended: 404). A request is answered as `application/json`, or as a
//!   `text/event-stream` when it sends anything before its response
//!   (progress, logs, `elicitation/create`) or takes longer than a moment;
//!   the client answers the server's requests by POST (202). GET opens the
//!   session's standalone stream, for messages no request stream can take;
//!   DELETE ends the session and cancels its calls.
//! - **2026-07-28**: no session. Each request gets an engine of its own for
//!   its lifetime, after the HTTP checks of the validation ladder (see
//!   [`modern`]); error responses carry the HTTP status the revision asks
//!   for (400, or 404 for an unknown method). Closing the response stream
//!   cancels the call. `subscriptions/listen` is a long-lived stream.
//!   Tasks of the `io.modelcontextprotocol/tasks` extension outlive the
//!   request that created them: they live in a store all these engines
//!   share (bounded, expiring), so any later request of the process finds
//!   them (`tasks/get`, `tasks/update`, `tasks/cancel`, listen streams
//!   following `taskIds`); the creating request's stream ends with the
//!   task's handle, and closing it never cancels the task. With tokens
//!   configured, a task belongs to the credentials that created it (see
//!   [`security::task_owner`]): to anyone else it is an unknown id.
//! - The 2024-11-05 HTTP+SSE transport (GET `/sse` + POST `/messages`) is
//!   not served: deprecated since 2025-03-26, absent from the conformance
//!   suite and dropped by the TypeScript SDK, while every maintained client
//!   speaks Streamable HTTP; 2024-11-05 clients reach the server over stdio.
//!
//! Every engine queues its tool calls to the one R thread through the same
//! [`Server::poll`](crate::transport::server::Server::poll) interface as stdio; job ids
//! are unique server-wide. See [`streams`] for how each message finds the
//! stream it belongs on, and [`security`] for Host/Origin checks and tokens.
//!
//! Built on hyper 1 (HTTP/1.1 server only) rather than axum: the endpoint
//! routes on headers and bodies, not paths, so a routing framework would
//! add dependencies without removing code, while hyper gives the two
//! things this needs directly: streaming response bodies (SSE) that notice
//! a client going away when dropped, and limits on the request head.
//! Everything runs on one thread with a current-thread tokio runtime; no
//! request waits for R there (only for channels), so one thread keeps up
//! with many clients.

pub mod body;
pub mod connections;
pub mod limits;
pub mod modern;
pub mod security;
mod shutdown;
pub mod streams;
pub mod tokens;

use crate::protocol::jsonrpc::{self, Line, Message, RequestId};
use crate::protocol::revision::Revision;
use crate::transport::slots::{Front, Slot};
use crate::util::threads;
use bytes::Bytes;
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use security::{Allowed, Policy, Principal, Refusal};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::{IpAddr, SocketAddr, TcpListener as StdListener, ToSocketAddrs};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use streams::{EventId, EventLog, OnDrop, Piece, Postbox, SseBody, StreamRx};
use tokio::sync::{Notify, Semaphore};

type Body = UnsyncBoxBody<Bytes, Infallible>;

const SESSION_HEADER: &str = "mcp-session-id";
const PRM_PATH: &str = "/.well-known/oauth-protected-resource";

/// How the HTTP server listens and what it accepts.
#[derive(Debug, Clone)]
pub struct Options {
    /// Host name or address to bind (`127.0.0.1` by default).
    pub host: String,
    /// Port; 0 lets the system choose a free one.
    pub port: u16,
    /// The endpoint's path.
    pub path: String,
    /// Names accepted in `Host`; `None` means loopback names on a loopback
    /// address, and is refused for any other address.
    pub allowed_hosts: Option<Allowed>,
    /// Origins accepted in `Origin`; `None` as for hosts.
    pub allowed_origins: Option<Allowed>,
    /// Bearer tokens accepted; empty means no authentication (unless
    /// `token_check` is set).
    pub bearer_tokens: Vec<String>,
    /// Tokens checked by an R function instead (see [`tokens`]).
    pub token_check: Option<tokens::TokenCheck>,
    /// The canonical URL of the endpoint, for RFC 9728 protected-resource
    /// metadata (served only when set).
    pub resource: Option<String>,
    /// Authorization servers named in that metadata.
    pub authorization_servers: Vec<String>,
    /// Largest request body, in bytes (413 beyond).
    pub max_body_bytes: usize,
    /// Largest request head (request line and headers), in bytes (431).
    pub max_header_bytes: usize,
    /// Open handshake-era sessions. When full, the least recently used
    /// idle one (no call running, no stream open) ends to make room; with
    /// none idle, one more `initialize` gets 503.
    pub max_sessions: usize,
    /// Sessions one token holder keeps open (with tokens required): one
    /// more ends the holder's least recently used idle one, or gets 429.
    pub max_sessions_per_client: usize,
    /// Long-lived streams open at once: GET streams (resumptions included)
    /// and 2026-07-28 `subscriptions/listen` (503 beyond). Other requests
    /// are not counted: they end with their answer.
    pub max_streams: usize,
    /// Long-lived streams one client holds (the token holder, or without
    /// tokens the peer address; 429 beyond).
    pub max_streams_per_client: usize,
    /// Open connections. When a new one comes, the one that has waited
    /// longest (for a request head or the rest of a body) is closed to make
    /// room (see [`connections`]); only when none has waited
    /// [`connections::EVICTABLE_AFTER`] does the new one wait.
    pub max_connections: usize,
    /// How long a connection may wait for a complete request head: after it
    /// opens, or after its last answer (kept alive). Then it is closed.
    pub idle_timeout: Duration,
    /// How long a request's body may take once its head is in, plus one
    /// second per [`body::BODY_MIN_RATE`] bytes received (408 beyond).
    pub body_timeout: Duration,
    /// A session without requests or open streams for this long ends.
    pub session_idle: Duration,
    /// A tool call not answered within this long is answered as an event
    /// stream, so the client sees the response is coming.
    pub stream_after: Duration,
    /// How often an open event stream gets a keep-alive comment.
    pub keepalive: Duration,
    /// How long a client the server lets go waits before it reconnects
    /// (`retry:` of the priming event).
    pub reconnect_after: Duration,
    /// What every task id starts with: this replica's name, for a load
    /// balancer to route a task's requests on (`Mcp-Name` carries the id).
    pub task_id_prefix: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            host: "127.0.0.1".into(),
            port: 8000,
            path: "/mcp".into(),
            allowed_hosts: None,
            allowed_origins: None,
            bearer_tokens: Vec::new(),
            token_check: None,
            resource: None,
            authorization_servers: Vec::new(),
            max_body_bytes: 4 * 1024 * 1024,
            max_header_bytes: 64 * 1024,
            max_sessions: 100,
            max_sessions_per_client: 25,
            max_streams: 256,
            max_streams_per_client: 32,
            max_connections: 512,
            idle_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            session_idle: Duration::from_secs(30 * 60),
            stream_after: Duration::from_millis(500),
            keepalive: Duration::from_secs(15),
            reconnect_after: Duration::from_secs(1),
            task_id_prefix: String::new(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A handshake-era session.
struct Session {
    slot: Arc<Slot>,
    postbox: Arc<Postbox>,
    revision: Revision,
    /// The token it was opened with (its hash): a request with another
    /// token does not find it.
    principal: Option<Principal>,
    /// Its holder, whose share of the sessions it counts against.
    owner: Option<crate::stores::tasks::Owner>,
    last_used: Mutex<Instant>,
}

impl Session {
    fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }
}

/// The state every request handler shares.
struct Hub {
    front: Front,
    options: Options,
    policy: Policy,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Places among the long-lived streams, the server's and each client's.
    streams: Arc<Semaphore>,
    stream_shares: Arc<limits::Shares>,
    /// Runs the R function that checks tokens, if one was given.
    checker: Option<Arc<tokens::Checker>>,
    /// The 2026-07-28 requests being answered (see [`shutdown`]).
    in_flight: shutdown::InFlight,
    /// True once the server is stopping (see [`shutdown`]).
    stopping: tokio::sync::watch::Sender<bool>,
}

/// Who sent a request, once its token (if any is required) passed.
#[derive(Clone)]
struct Caller {
    /// The token's hash: what a handshake-era session is bound to.
    principal: Option<Principal>,
    /// What the token function said about the caller, for tools.
    identity: Option<Value>,
    /// Whose tasks the request reaches (see [`security::task_owner`]).
    owner: Option<crate::stores::tasks::Owner>,
    /// Who its share of the server's limits is counted against.
    client: limits::Client,
}

impl Caller {
    fn new(principal: Option<Principal>, identity: Option<Value>, peer: IpAddr) -> Caller {
        let owner = principal.map(|hash| security::task_owner(hash, identity.as_ref()));
        Caller {
            principal,
            identity,
            owner,
            client: limits::Client::of(owner, peer),
        }
    }
}

/// The running HTTP front: its thread and how to stop it.
pub struct Listener {
    address: SocketAddr,
    stop: Stopper,
    thread: Option<JoinHandle<()>>,
}

/// Tells a [`Listener`] to stop, from any thread (see [`shutdown`]).
#[derive(Clone)]
pub struct Stopper(Arc<StopState>);

struct StopState {
    stop: Notify,
    /// Every request waiting for an answer has had its stopping error.
    answered: Mutex<bool>,
    answered_changed: std::sync::Condvar,
}

impl Stopper {
    fn new() -> Stopper {
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

    fn answered(&self) {
        *lock(&self.0.answered) = true;
        self.0.answered_changed.notify_all();
    }
}

impl Listener {
    /// Binds the address (errors, such as a port in use, are returned
    /// here) and serves on a thread of its own.
    pub fn start(options: Options, front: Front) -> io::Result<Listener> {
        let address = (options.host.as_str(), options.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "no address for the host")
            })?;
        let policy = policy_for(&options, address)?;
        let listener = StdListener::bind(address)?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let stop = Stopper::new();
        let stopped = stop.clone();
        let checker = options
            .token_check
            .clone()
            .map(|check| Arc::new(tokens::Checker::new(check, &front)));
        let hub = Arc::new(Hub {
            checker,
            front,
            streams: Arc::new(Semaphore::new(options.max_streams)),
            stream_shares: limits::Shares::new(options.max_streams_per_client),
            options,
            policy,
            sessions: Mutex::new(HashMap::new()),
            in_flight: shutdown::InFlight::default(),
            stopping: tokio::sync::watch::Sender::new(false),
        });
        let failed = hub.front.clone();
        let thread = threads::spawn(
            "http",
            move |message| failed.fail("http", message),
            move || runtime.block_on(serve(listener, hub, stopped)),
        )?;
        Ok(Listener {
            address,
            stop,
            thread: Some(thread),
        })
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// How to stop it from another thread.
    pub fn stopper(&self) -> Stopper {
        self.stop.clone()
    }

    /// Stops gracefully (see [`shutdown`]) and waits until it has.
    pub fn stop(&mut self) {
        self.stop.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Hosts must be named on a non-loopback address, where clients reach the
/// server by names of their own. Origins default to the loopback ones
/// everywhere: pages of the machine itself may call it, other web pages
/// only when named (requests without `Origin`, from no web page, pass).
fn policy_for(options: &Options, address: SocketAddr) -> io::Result<Policy> {
    let hosts = options
        .allowed_hosts
        .clone()
        .or_else(|| Policy::default_for(address.ip()));
    let origins = options.allowed_origins.clone().unwrap_or(Allowed::Loopback);
    match hosts {
        Some(hosts) => Ok(Policy {
            hosts,
            origins,
            tokens: options.bearer_tokens.clone(),
        }),
        None => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "serving on {} (not a loopback address) needs the host names clients use, \
                 or an explicit opt-out of the check",
                address.ip()
            ),
        )),
    }
}

/// The accept loop, until `stopped`; idle sessions are swept meanwhile.
/// Then the server stops gracefully (see [`shutdown`]).
async fn serve(listener: StdListener, hub: Arc<Hub>, stopped: Stopper) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mcpserver: the HTTP listener failed: {e}");
            return;
        }
    };
    let connections = connections::Connections::new(connections::cap(hub.options.max_connections));
    let mut sweep = tokio::time::interval(
        (hub.options.session_idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30)),
    );
    let stop = stopped.0.stop.notified();
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            _ = &mut stop => break,
            _ = sweep.tick() => {
                hub.sweep_idle_sessions();
                continue;
            }
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, peer)) = accepted else {
            // Out of descriptors, say: try again in a moment, not in a spin.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let connection = loop {
            match connections.admit() {
                connections::Admission::Admitted(c) => break Some(c),
                connections::Admission::Full(room_at) => {
                    // Far off when no connection waits: then only one
                    // that starts waiting or closes makes room.
                    let room_at =
                        room_at.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
                    tokio::select! {
                        _ = &mut stop => break None,
                        _ = connections.room() => {}
                        _ = tokio::time::sleep_until(room_at.into()) => {}
                    }
                }
            }
        };
        let Some(connection) = connection else {
            break;
        };
        tokio::spawn(serve_connection(stream, peer.ip(), connection, hub.clone()));
    }
    drop(listener);
    hub.shut_down(&connections, &stopped).await;
}

/// Serves one connection until it closes, or until the server closes it
/// (to make room, or when stopping: then after the answer it is sending).
async fn serve_connection(
    stream: tokio::net::TcpStream,
    peer: IpAddr,
    connection: connections::Connection,
    hub: Arc<Hub>,
) {
    let _ = stream.set_nodelay(true);
    let connection = Arc::new(connection);
    let options = &hub.options;
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .max_header_size(options.max_header_bytes)
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(options.idle_timeout);
    let service = {
        let (connection, hub) = (connection.clone(), hub.clone());
        hyper::service::service_fn(move |mut request: Request<Incoming>| {
            let busy = connection.busy();
            request.extensions_mut().insert(connection.body_watch());
            let hub = hub.clone();
            async move {
                let response = tokio::select! {
                    biased;
                    response = hub.clone().handle(request, peer) => response,
                    _ = hub.stopped() => shutdown::refused_while_stopping(),
                };
                Ok::<_, Infallible>(response.map(|body| connections::Tracked::new(body, busy)))
            }
        })
    };
    let conn = builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::select! {
        biased;
        _ = conn.as_mut() => return,
        _ = connection.closing() => conn.as_mut().graceful_shutdown(),
    }
    let _ = conn.await;
}

fn full(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let mut response = Response::new(Full::new(body.into()).boxed_unsync());
    *response.status_mut() = status;
    if !content_type.is_empty() {
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_str(content_type).expect("a valid type"),
        );
    }
    response
}

fn empty(status: StatusCode) -> Response<Body> {
    full(status, "", Bytes::new())
}

/// How long a client refused for want of room waits before it tries again.
const RETRY_AFTER_SECS: &str = "1";

/// A refusal for want of room (429 for a client's share, 503 for the
/// server's), always with `Retry-After`.
fn busy(status: StatusCode, id: Option<&RequestId>, message: &str) -> Response<Body> {
    let mut r = rpc_error(status, id, -32000, message);
    r.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from_static(RETRY_AFTER_SECS),
    );
    r
}

/// A JSON-RPC error as the whole response, with `status`.
fn rpc_error(
    status: StatusCode,
    id: Option<&RequestId>,
    code: i64,
    message: &str,
) -> Response<Body> {
    full(
        status,
        "application/json",
        jsonrpc::error(id, code, message, None),
    )
}

fn error_response(status: StatusCode, id: Option<&RequestId>, error: &Value) -> Response<Body> {
    full(
        status,
        "application/json",
        jsonrpc::error_response(id, error),
    )
}

fn header_text(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// What the client accepts, from its `Accept` header (absent: anything).
struct Accepts {
    json: bool,
    sse: bool,
}

fn accepts(headers: &HeaderMap) -> Accepts {
    let values: Vec<String> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .collect();
    if values.is_empty() {
        return Accepts {
            json: true,
            sse: true,
        };
    }
    let any = values.iter().any(|v| v == "*/*");
    Accepts {
        json: any
            || values
                .iter()
                .any(|v| v == "application/json" || v == "application/*"),
        sse: any
            || values
                .iter()
                .any(|v| v == "text/event-stream" || v == "text/*"),
    }
}

/// The HTTP status of a 2026-07-28 error response.
fn modern_status(code: Option<i64>) -> StatusCode {
    match code {
        Some(jsonrpc::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(
            jsonrpc::PARSE_ERROR
            | jsonrpc::INVALID_REQUEST
            | jsonrpc::INVALID_PARAMS
            | modern::HEADER_MISMATCH
            | jsonrpc::MISSING_CLIENT_CAPABILITY
            | jsonrpc::UNSUPPORTED_VERSION,
        ) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// A fresh session id: 128 random bits in hex (visible ASCII).
fn new_session_id() -> String {
    let bytes = crate::util::ids::random_bytes::<16>();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A request the engine is answering, and how its answer is to be sent.
struct Pending {
    rx: StreamRx,
    /// The client's way of saying it went away (the stream was dropped).
    guard: OnDrop,
    /// Its place among the long-lived streams, if it is one.
    place: Option<limits::Place>,
    /// Answer as a stream once this long has passed without a response.
    stream_after: Option<Duration>,
    accepts: Accepts,
    /// 2026-07-28: errors get their own HTTP status.
    modern: bool,
    /// The resumable stream it goes through, if any.
    log: Option<Arc<EventLog>>,
}

impl Hub {
    async fn handle(self: Arc<Self>, request: Request<Incoming>, peer: IpAddr) -> Response<Body> {
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
    async fn route(self: Arc<Self>, request: Request<Incoming>, peer: IpAddr) -> Response<Body> {
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
        let caller = match self.authorize(authorization.as_deref(), peer).await {
            Ok(caller) => caller,
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
    async fn authorize(
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

    fn refused(&self, refusal: Refusal) -> Response<Body> {
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
    fn resource_metadata(&self, method: &Method) -> Response<Body> {
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

    async fn post(self: &Arc<Self>, request: Request<Incoming>, caller: Caller) -> Response<Body> {
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
        let line = jsonrpc::parse_line(&bytes);
        let routing = body_routing(&line, &bytes);
        if is_modern(&headers, &routing) {
            return self
                .post_modern(&headers, line, routing.params, accepts, caller)
                .await;
        }
        self.post_legacy(&headers, line, accepts, caller).await
    }

    fn too_large(&self, limit: usize) -> Response<Body> {
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
    fn stream_place(&self, caller: &Caller) -> Result<limits::Place, Response<Body>> {
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

    async fn post_modern(
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
        let slot = self
            .front
            .request_slot(postbox.clone(), caller.identity, caller.owner);
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
        self.front.inbound(&slot, Some(id), line);
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

    async fn post_legacy(
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
            self.front.inbound(&session.slot, None, line);
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
        self.front.inbound(&session.slot, cause, line);
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
    fn open_plain(
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
    fn open_resumable(
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

    async fn initialize(
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
        let slot = self
            .front
            .session_slot(postbox.clone(), caller.identity, caller.owner);
        let (tx, mut rx) = streams::stream();
        postbox.open(&id, tx);
        self.front.inbound(&slot, Some(id.clone()), line);
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
    fn make_room_for_session(&self, id: &RequestId, caller: &Caller) -> Result<(), Response<Body>> {
        let mut evicted = Vec::new();
        let made = self.evict_for_session(caller, &mut evicted);
        for session in evicted {
            self.front.close(&session.slot);
        }
        made.map_err(|(status, message)| busy(status, Some(id), &message))
    }

    /// The sessions [`Hub::make_room_for_session`] ends, into `evicted`;
    /// or why there is no room.
    fn evict_for_session(
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
    fn is_idle(&self, session: &Session) -> bool {
        !session.postbox.has_open_streams() && self.front.pending_calls(&session.slot) == 0
    }

    /// The session a request names: 400 without the header, 404 for an
    /// unknown or ended one.
    #[allow(clippy::result_large_err)]
    fn session_of(
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
    fn get(&self, headers: &HeaderMap, caller: &Caller) -> Response<Body> {
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
    fn resume(&self, session: &Session, last: &str, place: limits::Place) -> Response<Body> {
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
    fn delete(&self, headers: &HeaderMap, caller: &Caller) -> Response<Body> {
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
    fn sweep_idle_sessions(&self) {
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

    /// Sends what the engine answers: JSON if the response comes first,
    /// an event stream if anything precedes it or it takes a while.
    async fn answer(&self, pending: Pending) -> Response<Body> {
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

fn sse_response(body: SseBody) -> Response<Body> {
    let mut r = Response::new(BodyExt::boxed_unsync(body));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// The answer to a CORS preflight from an allowed origin: the methods and
/// the headers it asked for (MCP's own, `Authorization`, `Mcp-Param-*`).
fn preflight(headers: &HeaderMap, origin: Option<&str>) -> Response<Body> {
    let mut r = empty(StatusCode::NO_CONTENT);
    let h = r.headers_mut();
    if let Some(origin) = origin.and_then(|o| HeaderValue::from_str(o).ok()) {
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(header::VARY, HeaderValue::from_static("Origin"));
    }
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
    );
    if let Some(asked) = headers.get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
        h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, asked.clone());
    }
    h.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    r
}

fn prm_url(resource: &str, path: &str) -> String {
    // The metadata of `https://host/mcp` is at
    // `https://host/.well-known/oauth-protected-resource/mcp`.
    match resource.split_once("://") {
        Some((scheme, rest)) => {
            let authority = rest.split('/').next().unwrap_or(rest);
            format!("{scheme}://{authority}{PRM_PATH}{path}")
        }
        None => format!("{PRM_PATH}{path}"),
    }
}

/// What choosing between the eras needs from a POST's body.
#[derive(Default)]
struct BodyRouting {
    /// The params of a request whose `params._meta` names a protocol
    /// version (2026-07-28's envelope), read whole: the modern path needs
    /// them, and so does not read them again.
    params: Option<Value>,
    /// The method is `initialize`.
    initialize: bool,
}

/// Reads [`BodyRouting`] off the message `jsonrpc::parse_line` made of the
/// body, so that a request is not parsed a second time: its params' `_meta`
/// is looked into, and only enveloped params are read whole. A body that is
/// valid JSON but not a request or notification is read again as plain
/// JSON, on its way to an error, so that it is routed by the same rule.
/// (One difference from reading the whole body as a value: a number beyond
/// `f64` in a top-level member the envelope ignores no longer hides the
/// envelope.)
fn body_routing(line: &Line, body: &[u8]) -> BodyRouting {
    match line {
        Line::Single(
            Message::Request { method, params, .. } | Message::Notification { method, params },
        ) => BodyRouting {
            params: params
                .as_deref()
                .filter(|p| names_version(p))
                .and_then(|p| serde_json::from_str(p.get()).ok()),
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
fn names_version(params: &RawValue) -> bool {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: Option<&'a RawValue>,
    }
    let text = params.get();
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

fn meta_names_version(meta: &Value) -> bool {
    meta.get(modern::META_VERSION).is_some()
}

/// A request's params as a value (`Null` when it has none).
fn params_value(params: Option<&RawValue>) -> Value {
    params
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null)
}

/// Whether a POST is a 2026-07-28 request: its body names a version in
/// `params._meta`, or its `MCP-Protocol-Version` header is not a
/// handshake-era revision.
fn is_modern(headers: &HeaderMap, body: &BodyRouting) -> bool {
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

fn version_supported(params: &Value) -> bool {
    params
        .get("_meta")
        .and_then(|m| m.get(modern::META_VERSION))
        .and_then(Value::as_str)
        .and_then(Revision::parse)
        .is_some_and(Revision::is_modern)
}

fn is_tool_call(line: &Line) -> bool {
    matches!(line, Line::Single(Message::Request { method, .. }) if method == "tools/call")
}

/// The ids of the requests in a message or batch (what will be answered).
fn request_ids(line: &Line) -> Vec<RequestId> {
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
