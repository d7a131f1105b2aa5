//! The client side of MCP's Streamable HTTP transport, shared by
//! `mcp_client(url)` and the stdio-to-HTTP bridge (`mcp_bridge()`).
//!
//! The caller hands over JSON-RPC messages as lines, exactly as a stdio
//! client writes them, and takes back every message the server sends, as
//! single lines: responses, notifications and the server's own requests,
//! from JSON answers, from each POST's event stream and from the GET stream.
//! The client adds what HTTP needs and a stdio client does not know about:
//! the `Accept` and content headers, the `Mcp-Session-Id` the server assigned
//! at `initialize` (and `DELETE` at the end), `MCP-Protocol-Version`, the
//! 2026-07-28 routing headers (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), an
//! optional bearer token. HTTP failures become JSON-RPC errors for the
//! request that met them, so a caller waiting for an answer always gets one.
//!
//! Each message is its own exchange on its own connection, run as a task on
//! a small tokio runtime: a POST whose answer streams for minutes (a tool
//! asking the user a question) never holds up the next message, and a
//! 2026-07-28 request is cancelled the way that revision says, by closing
//! its stream. hyper (HTTP/1.1, client only) does the HTTP; it shares tokio
//! with the rest of the engine and lets a dropped exchange close its socket.
//! Plain `http://` only: the client is for servers on this machine or behind
//! a proxy that terminates TLS.
//!
//! Everything held is bounded: requests in flight, other messages in flight,
//! messages waiting for the caller, the size of any one message.

use crate::client::sse;
use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Map, Value};
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
const INCOMING_QUEUE: usize = 256;

/// How many problems (failures that no request is waiting on) are kept.
const PROBLEMS_KEPT: usize = 32;

/// How long an error answer's body may be before it is cut.
const ERROR_BODY_KEPT: usize = 64 * 1024;

/// Attempts to resume a stream, or reopen the GET stream, in a row without
/// receiving anything.
const RECONNECTS: u32 = 5;

/// How long the messages after `initialize` wait for its response to
/// begin (it carries the session id they need).
const INITIALIZE_WAIT: Duration = Duration::from_secs(30);

/// The reconnection delay when the server gave none.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// Where the server is: `http://host[:port]/path[?query]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    /// The request target: path and query.
    pub target: String,
    /// `host[:port]` as the URL spells it, for the `Host` header.
    pub authority: String,
}

impl Endpoint {
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let Some(rest) = url.strip_prefix("http://") else {
            if url.starts_with("https://") {
                return Err(format!(
                    "`{url}` is an https:// URL, and this client speaks plain http:// only: \
                     reach a remote server through a local proxy that adds TLS, or point \
                     the MCP client at the URL directly if it speaks HTTP"
                ));
            }
            return Err(format!("`{url}` is not an http:// URL"));
        };
        let rest = rest.split('#').next().unwrap_or_default();
        let split = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, target) = rest.split_at(split);
        let target = match target {
            "" => "/".to_string(),
            t if t.starts_with('?') => format!("/{t}"),
            t => t.to_string(),
        };
        if authority.contains('@') {
            return Err(format!(
                "`{url}` has a user name or password in it; give a bearer token instead"
            ));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let Some((host, after)) = v6.split_once(']') else {
                return Err(format!("`{url}` has an unterminated [IPv6] host"));
            };
            (host.to_string(), after.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host.to_string(), Some(port)),
                None => (authority.to_string(), None),
            }
        };
        if host.is_empty() {
            return Err(format!("`{url}` has no host"));
        }
        let port = match port {
            None => 80,
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| format!("`{url}` has an invalid port"))?,
        };
        if target.bytes().any(|b| !(0x21..=0x7e).contains(&b)) {
            return Err(format!(
                "`{url}` has spaces or other characters a URL must percent-encode"
            ));
        }
        Ok(Endpoint {
            host,
            port,
            target,
            authority: authority.to_string(),
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}{}", self.authority, self.target)
    }
}

/// How the client behaves.
#[derive(Debug, Clone)]
pub struct Options {
    /// Sent as `Authorization: Bearer <token>` on every request.
    pub bearer_token: Option<String>,
    /// More headers for every request (a proxy's own authentication, ...).
    pub headers: Vec<(String, String)>,
    /// The largest message accepted from the server (a JSON body, or one
    /// line of an event stream).
    pub max_message_size: usize,
    /// Requests awaiting their answers at once; sending another waits.
    pub max_requests: usize,
    /// Open the session's GET stream (for messages unrelated to a request)
    /// once the session is initialized, if the server offers one.
    pub listen: bool,
    pub connect_timeout: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            bearer_token: None,
            headers: Vec::new(),
            max_message_size: 32 * 1024 * 1024,
            max_requests: 64,
            listen: true,
            connect_timeout: Duration::from_secs(10),
        }
    }
}

/// What [`HttpClient::receive`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    Message(String),
    Timeout,
    Closed,
}

/// What kind of JSON-RPC message a line holds, and what HTTP needs from it.
#[derive(Debug, Clone)]
struct Outgoing {
    body: Bytes,
    kind: Kind,
    /// The request's id as JSON text.
    id: Option<String>,
    method: Option<String>,
    /// The 2026-07-28 headers, for a request in that revision's envelope.
    modern: Option<Vec<(String, String)>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Request,
    Notification,
    Response,
    /// A batch, or text that is not a JSON-RPC message (the server answers
    /// it, with a parse error for instance).
    Other,
}

#[derive(Default)]
struct Session {
    id: Option<String>,
    /// The revision `initialize` settled on.
    version: Option<String>,
    /// The id of the `initialize` request in flight.
    initialize_id: Option<String>,
    listening: bool,
}

/// A tool argument sent as a header: the header's name after `Mcp-Param-`,
/// and the argument's path in the arguments object.
type ParamHeader = (String, Vec<String>);

struct Shared {
    endpoint: Endpoint,
    options: Options,
    headers: Vec<(HeaderName, HeaderValue)>,
    session: Mutex<Session>,
    /// `x-mcp-header` arguments of each tool, learnt from `tools/list`:
    /// (header name suffix, property path).
    param_headers: Mutex<HashMap<String, Vec<ParamHeader>>>,
    out: mpsc::Sender<String>,
    problems: Mutex<VecDeque<String>>,
    /// 2026-07-28 requests in flight, by id: cancelled by closing them.
    cancellable: Mutex<HashMap<String, AbortHandle>>,
    /// Handshake-era requests the client cancelled (newest last, bounded):
    /// if their stream then ends unanswered, the client hears nothing, as
    /// it expects after a cancel.
    cancelled: Mutex<VecDeque<String>>,
    requests: Arc<Semaphore>,
    others: Arc<Semaphore>,
    active: AtomicUsize,
    idle: Notify,
    closing: AtomicBool,
}

/// A connection to one MCP server endpoint.
pub struct HttpClient {
    /// Taken (and shut down) by [`HttpClient::close`].
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    handle: tokio::runtime::Handle,
    shared: Arc<Shared>,
    incoming: Mutex<mpsc::Receiver<String>>,
}

impl HttpClient {
    /// A client for `url`. Nothing is sent yet.
    pub fn new(url: &str, options: Options) -> Result<HttpClient, String> {
        let endpoint = Endpoint::parse(url)?;
        let mut headers = Vec::new();
        if let Some(token) = &options.bearer_token {
            headers.push(header(
                "authorization",
                &format!("Bearer {token}"),
                "the bearer token",
            )?);
        }
        for (name, value) in &options.headers {
            headers.push(header(name, value, &format!("header `{name}`"))?);
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("mcp-http")
            .on_thread_start(crate::util::threads::block_signals_in_this_thread)
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| format!("could not start the HTTP client: {e}"))?;
        let (out, incoming) = mpsc::channel(INCOMING_QUEUE);
        let shared = Arc::new(Shared {
            endpoint,
            headers,
            session: Mutex::default(),
            param_headers: Mutex::default(),
            out,
            problems: Mutex::default(),
            cancellable: Mutex::default(),
            cancelled: Mutex::default(),
            requests: Arc::new(Semaphore::new(options.max_requests.max(1))),
            others: Arc::new(Semaphore::new(options.max_requests.max(1))),
            active: AtomicUsize::new(0),
            idle: Notify::new(),
            closing: AtomicBool::new(false),
            options,
        });
        Ok(HttpClient {
            handle: runtime.handle().clone(),
            runtime: Mutex::new(Some(runtime)),
            shared,
            incoming: Mutex::new(incoming),
        })
    }

    /// Passes `line` to the caller as if the server had sent it (the
    /// bridge's own error answers).
    pub fn inject(&self, line: String) {
        if !self.is_closed() {
            let _ = self.handle.block_on(self.shared.out.send(line));
        }
    }

    pub fn is_closed(&self) -> bool {
        self.shared.closing.load(Ordering::SeqCst)
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.shared.endpoint
    }

    /// The session the server assigned, if any.
    pub fn session_id(&self) -> Option<String> {
        lock(&self.shared.session).id.clone()
    }

    /// Sends one message (a line of JSON). Returns once the exchange has
    /// started; its answers arrive through [`HttpClient::receive`]. Waits
    /// while too many requests are in flight.
    pub fn send(&self, line: &[u8]) -> Result<(), String> {
        if self.is_closed() {
            return Err("the connection to the server is closed".into());
        }
        let out = classify(line);
        if self.cancel_modern(&out) {
            return Ok(());
        }
        self.note_cancel(&out);
        let initialize = out.kind == Kind::Request && out.method.as_deref() == Some("initialize");
        if initialize {
            lock(&self.shared.session).initialize_id = out.id.clone();
        }
        // Until `initialize` is answered there is no session id for the
        // messages that follow it: they wait for its response's headers.
        let (gate, gate_passed) = match initialize {
            true => {
                let (tx, rx) = tokio::sync::oneshot::channel::<()>();
                (Some(tx), Some(rx))
            }
            false => (None, None),
        };
        let pool = if out.kind == Kind::Request {
            &self.shared.requests
        } else {
            &self.shared.others
        };
        let permit = self
            .handle
            .block_on(pool.clone().acquire_owned())
            .map_err(|_| "the connection to the server is closed".to_string())?;
        let id = out.id.clone().filter(|_| out.modern.is_some());
        let running = Running::new(self.shared.clone(), id.clone(), permit);
        // The map is locked across the spawn so that the exchange's own
        // removal (when it ends) comes after this insertion.
        let mut cancellable = lock(&self.shared.cancellable);
        let task = self
            .handle
            .spawn(exchange(self.shared.clone(), out, running, gate));
        if let Some(id) = id {
            cancellable.insert(id, task.abort_handle());
        }
        drop(cancellable);
        if let Some(passed) = gate_passed {
            // Dropped (not sent) once the headers are in or the exchange
            // failed; a server that never answers is not waited for ever.
            let _ = self
                .handle
                .block_on(async { tokio::time::timeout(INITIALIZE_WAIT, passed).await });
        }
        Ok(())
    }

    /// A 2026-07-28 request is cancelled by closing its stream, not by a
    /// notification: true if `out` was such a cancellation (now done).
    fn cancel_modern(&self, out: &Outgoing) -> bool {
        if out.method.as_deref() != Some("notifications/cancelled") {
            return false;
        }
        let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(&out.body) else {
            return false;
        };
        let Some(id) = message.get("params").and_then(|p| p.get("requestId")) else {
            return false;
        };
        let key = id.to_string();
        match lock(&self.shared.cancellable).remove(&key) {
            Some(task) => {
                task.abort();
                true
            }
            None => false,
        }
    }

    /// Remembers the request a handshake-era `notifications/cancelled`
    /// names (see `Shared::cancelled`).
    fn note_cancel(&self, out: &Outgoing) {
        if out.method.as_deref() != Some("notifications/cancelled") {
            return;
        }
        let Ok(message) = serde_json::from_slice::<Value>(&out.body) else {
            return;
        };
        let Some(id) = message.get("params").and_then(|p| p.get("requestId")) else {
            return;
        };
        let mut cancelled = lock(&self.shared.cancelled);
        if cancelled.len() == MAX_REMEMBERED_CANCELS {
            cancelled.pop_front();
        }
        cancelled.push_back(id.to_string());
    }

    /// The next message from the server, waiting up to `timeout`.
    pub fn receive(&self, timeout: Duration) -> Received {
        if self.is_closed() {
            return Received::Closed;
        }
        let mut incoming = lock(&self.incoming);
        match self
            .handle
            .block_on(async { tokio::time::timeout(timeout, incoming.recv()).await })
        {
            Ok(Some(line)) => Received::Message(line),
            Ok(None) => Received::Closed,
            Err(_) => Received::Timeout,
        }
    }

    /// Exchanges still running (requests awaiting answers, and others).
    pub fn busy(&self) -> usize {
        self.shared.active.load(Ordering::SeqCst)
    }

    /// Waits up to `timeout` for every exchange to end; true if they did.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        if self.is_closed() {
            return true;
        }
        let shared = &self.shared;
        self.handle.block_on(async {
            tokio::time::timeout(timeout, async {
                loop {
                    let idle = shared.idle.notified();
                    if shared.active.load(Ordering::SeqCst) == 0 {
                        return;
                    }
                    idle.await;
                }
            })
            .await
            .is_ok()
        })
    }

    /// Failures no request was waiting on (a notification the server
    /// refused, a GET stream that broke), oldest first, and forgets them.
    pub fn take_problems(&self) -> Vec<String> {
        lock(&self.shared.problems).drain(..).collect()
    }

    /// Ends the session (`DELETE`, waiting up to `timeout` for the server)
    /// and drops every exchange still running. Safe to call twice.
    pub fn close(&self, timeout: Duration) {
        let Some(runtime) = lock(&self.runtime).take() else {
            return;
        };
        self.shared.closing.store(true, Ordering::SeqCst);
        let session = lock(&self.shared.session).id.take();
        if let Some(session) = session {
            let shared = self.shared.clone();
            let deleted = runtime
                .block_on(async { tokio::time::timeout(timeout, delete(&shared, &session)).await });
            match deleted {
                Ok(Ok(())) => {}
                Ok(Err(e)) => problem(&self.shared, format!("ending the session: {e}")),
                Err(_) => problem(&self.shared, "ending the session: no answer in time".into()),
            }
        }
        self.shared.requests.close();
        self.shared.others.close();
        runtime.shutdown_timeout(Duration::from_millis(500));
    }
}

impl Drop for HttpClient {
    fn drop(&mut self) {
        self.close(Duration::from_secs(2));
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn header(name: &str, value: &str, what: &str) -> Result<(HeaderName, HeaderValue), String> {
    let name = HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| format!("{what}: `{name}` is not a valid header name"))?;
    let value = HeaderValue::from_str(value)
        .map_err(|_| format!("{what}: the value has characters a header cannot carry"))?;
    Ok((name, value))
}

fn problem(shared: &Shared, text: String) {
    let mut problems = lock(&shared.problems);
    if problems.len() == PROBLEMS_KEPT {
        problems.pop_front();
    }
    problems.push_back(text);
}

// ---- Reading the caller's messages --------------------------------------

fn classify(line: &[u8]) -> Outgoing {
    let body = Bytes::copy_from_slice(line);
    let other = |body| Outgoing {
        body,
        kind: Kind::Other,
        id: None,
        method: None,
        modern: None,
    };
    let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(line) else {
        return other(body);
    };
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .map(String::from);
    let id = message
        .get("id")
        .filter(|id| !id.is_null())
        .map(Value::to_string);
    let kind = match (&method, &id) {
        (Some(_), Some(_)) => Kind::Request,
        (Some(_), None) => Kind::Notification,
        (None, Some(_)) => Kind::Response,
        (None, None) => Kind::Other,
    };
    let modern = match (&method, kind) {
        (Some(method), Kind::Request) => modern_headers(method, &message),
        _ => None,
    };
    Outgoing {
        body,
        kind,
        id,
        method,
        modern,
    }
}

/// `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` for a request in the
/// 2026-07-28 envelope (its `_meta` names the revision), else `None`.
fn modern_headers(method: &str, message: &Map<String, Value>) -> Option<Vec<(String, String)>> {
    let params = message.get("params")?;
    let version = params
        .get("_meta")?
        .get("io.modelcontextprotocol/protocolVersion")?
        .as_str()?;
    let mut headers = vec![
        ("mcp-protocol-version".to_string(), header_text(version)),
        ("mcp-method".to_string(), header_text(method)),
    ];
    let name = match method {
        "tools/call" | "prompts/get" => params.get("name"),
        "resources/read" => params.get("uri"),
        _ => None,
    };
    if let Some(name) = name.and_then(Value::as_str) {
        headers.push(("mcp-name".to_string(), header_text(name)));
    }
    Some(headers)
}

/// A header value as the 2026-07-28 transport spells it: as is when it is
/// plain visible ASCII (inner spaces allowed), otherwise base64 of its UTF-8
/// between the `=?base64?` and `?=` markers.
pub fn header_text(value: &str) -> String {
    let visible = value
        .bytes()
        .all(|b| b == b' ' || (0x21..=0x7e).contains(&b));
    let edge_space = value.starts_with(' ') || value.ends_with(' ');
    let like_sentinel = value.starts_with("=?") && value.ends_with("?=");
    let plain = visible && !edge_space && !like_sentinel;
    if plain {
        value.to_string()
    } else {
        let encoded = base64::engine::general_purpose::STANDARD.encode(value.as_bytes());
        format!("=?base64?{encoded}?=")
    }
}

/// The `Mcp-Param-*` headers of a 2026-07-28 `tools/call`, from the tool's
/// `x-mcp-header` properties (learnt from `tools/list`).
fn param_headers(shared: &Shared, out: &Outgoing) -> Vec<(String, String)> {
    if out.method.as_deref() != Some("tools/call") || out.modern.is_none() {
        return Vec::new();
    }
    let Ok(message) = serde_json::from_slice::<Value>(&out.body) else {
        return Vec::new();
    };
    let params = &message["params"];
    let Some(tool) = params["name"].as_str() else {
        return Vec::new();
    };
    let known = lock(&shared.param_headers);
    let Some(wanted) = known.get(tool) else {
        return Vec::new();
    };
    let mut headers = Vec::new();
    for (name, path) in wanted {
        let mut value = &params["arguments"];
        for key in path {
            value = &value[key.as_str()];
        }
        let text = match value {
            Value::String(s) => header_text(s),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
            Value::Number(n) => match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 9e15 => format!("{}", f as i64),
                _ => continue,
            },
            _ => continue,
        };
        headers.push((format!("mcp-param-{name}"), text));
    }
    headers
}

/// Records the `x-mcp-header` properties of the tools in a `tools/list`
/// result, so calls can carry them.
fn learn_param_headers(shared: &Shared, result: &Value) {
    let Some(tools) = result.get("tools").and_then(Value::as_array) else {
        return;
    };
    let mut known = lock(&shared.param_headers);
    for tool in tools {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        let mut found = Vec::new();
        collect_param_headers(&tool["inputSchema"], &mut Vec::new(), &mut found);
        if found.is_empty() {
            known.remove(name);
        } else if known.len() < 10_000 || known.contains_key(name) {
            known.insert(name.to_string(), found);
        }
    }
}

fn collect_param_headers(schema: &Value, path: &mut Vec<String>, found: &mut Vec<ParamHeader>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, property) in properties {
        path.push(key.clone());
        if let Some(name) = property.get("x-mcp-header").and_then(Value::as_str) {
            found.push((name.to_ascii_lowercase(), path.clone()));
        }
        if path.len() < 16 {
            collect_param_headers(property, path, found);
        }
        path.pop();
    }
}

// ---- Exchanges ------------------------------------------------------------

/// Marks an exchange as over when it ends, however it ends (an abort too).
struct Running {
    shared: Arc<Shared>,
    id: Option<String>,
    _permit: OwnedSemaphorePermit,
}

impl Running {
    fn new(shared: Arc<Shared>, id: Option<String>, permit: OwnedSemaphorePermit) -> Running {
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

/// A response and the task driving its connection, which ends (closing the
/// socket) when this is dropped.
struct Exchange {
    response: Response<Incoming>,
    _connection: AbortOnDrop,
}

struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn exchange(
    shared: Arc<Shared>,
    out: Outgoing,
    running: Running,
    gate: Option<tokio::sync::oneshot::Sender<()>>,
) {
    let _running = running;
    let outcome = match post(&shared, &out).await {
        Ok(exchange) => {
            if gate.is_some() && exchange.response.status().is_success() {
                adopt_session(&shared, &out, &exchange.response);
            }
            drop(gate); // the messages after `initialize` may go now
            answer(&shared, &out, exchange).await
        }
        Err(e) => Err(Failure::new(format!(
            "could not reach the server at {}: {e}",
            shared.endpoint.url()
        ))),
    };
    if let Err(failure) = outcome {
        fail(&shared, &out, failure).await;
    }
    if out.method.as_deref() == Some("notifications/initialized") {
        start_listening(&shared);
    }
}

/// Why an exchange did not deliver its answer.
struct Failure {
    message: String,
    status: Option<u16>,
    /// The server's own JSON-RPC error object, when its answer had one.
    error: Option<Value>,
}

impl Failure {
    fn new(message: String) -> Failure {
        Failure {
            message,
            status: None,
            error: None,
        }
    }
}

/// How many cancelled request ids the client remembers.
const MAX_REMEMBERED_CANCELS: usize = 256;

/// Tells the caller: an error response for a request (so nothing waits for
/// ever), a problem otherwise.
async fn fail(shared: &Shared, out: &Outgoing, failure: Failure) {
    let Some(id) = out.id.as_deref().filter(|_| out.kind == Kind::Request) else {
        if let (Kind::Other, Some(error)) = (out.kind, &failure.error) {
            // Text that was no message (a parse error, say): the server's
            // error goes back as it would over stdio, with a null id.
            let line = format!(r#"{{"jsonrpc":"2.0","id":null,"error":{error}}}"#);
            let _ = shared.out.send(line).await;
            return;
        }
        let what = out.method.as_deref().unwrap_or("a message");
        problem(shared, format!("sending {what}: {}", failure.message));
        return;
    };
    {
        let mut cancelled = lock(&shared.cancelled);
        if let Some(at) = cancelled.iter().position(|c| c == id) {
            // The client cancelled it: no answer is due.
            cancelled.remove(at);
            return;
        }
    }
    let error = match failure.error {
        Some(error) => error,
        None => {
            let mut error = serde_json::json!({
                "code": TRANSPORT_ERROR,
                "message": failure.message,
            });
            if let Some(status) = failure.status {
                error["data"] = serde_json::json!({ "httpStatus": status });
            }
            error
        }
    };
    let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#);
    let _ = shared.out.send(line).await;
}

fn base_request(shared: &Shared, method: Method) -> hyper::http::request::Builder {
    let mut builder = Request::builder()
        .method(method)
        .uri(shared.endpoint.target.as_str())
        .header("host", shared.endpoint.authority.as_str());
    for (name, value) in &shared.headers {
        builder = builder.header(name, value);
    }
    builder
}

/// The session headers of a handshake-era message.
fn session_headers(
    shared: &Shared,
    mut builder: hyper::http::request::Builder,
) -> hyper::http::request::Builder {
    let session = lock(&shared.session);
    if let Some(id) = &session.id {
        builder = builder.header("mcp-session-id", id.as_str());
    }
    // The header exists from 2025-06-18 on; older servers may not know it.
    if let Some(version) = session.version.as_deref().filter(|v| *v >= "2025-06-18") {
        builder = builder.header("mcp-protocol-version", version);
    }
    builder
}

async fn post(shared: &Shared, out: &Outgoing) -> Result<Exchange, String> {
    let mut builder = base_request(shared, Method::POST)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    match &out.modern {
        Some(headers) => {
            for (name, value) in headers.iter().chain(&param_headers(shared, out)) {
                builder = builder.header(name.as_str(), value.as_str());
            }
        }
        None => builder = session_headers(shared, builder),
    }
    let request = builder
        .body(Full::new(out.body.clone()))
        .map_err(|e| format!("could not build the request: {e}"))?;
    send_request(shared, request).await
}

async fn send_request(shared: &Shared, request: Request<Full<Bytes>>) -> Result<Exchange, String> {
    let endpoint = &shared.endpoint;
    let connect = tokio::net::TcpStream::connect((endpoint.host.as_str(), endpoint.port));
    let stream = match tokio::time::timeout(shared.options.connect_timeout, connect).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => return Err(e.to_string()),
        Err(_) => return Err("no connection within the time limit".into()),
    };
    let _ = stream.set_nodelay(true);
    let io = hyper_util::rt::TokioIo::new(stream);
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| e.to_string())?;
    let connection = AbortOnDrop(tokio::spawn(connection).abort_handle());
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Exchange {
        response,
        _connection: connection,
    })
}

async fn delete(shared: &Shared, session: &str) -> Result<(), String> {
    let mut builder = base_request(shared, Method::DELETE).header("mcp-session-id", session);
    if let Some(version) = lock(&shared.session).version.clone() {
        builder = builder.header("mcp-protocol-version", version);
    }
    let request = builder
        .body(Full::new(Bytes::new()))
        .map_err(|e| e.to_string())?;
    let status = send_request(shared, request).await?.response.status();
    // 405: the server does not let clients end sessions; 404: already gone.
    if status.is_success()
        || status == StatusCode::METHOD_NOT_ALLOWED
        || status == StatusCode::NOT_FOUND
    {
        Ok(())
    } else {
        Err(format!("the server answered HTTP {status}"))
    }
}

fn content_type(response: &Response<Incoming>) -> String {
    response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Reads the server's answer to `out` and passes on what it carries.
async fn answer(shared: &Arc<Shared>, out: &Outgoing, exchange: Exchange) -> Result<(), Failure> {
    let status = exchange.response.status();
    if !status.is_success() {
        return Err(refused(shared, out, exchange).await);
    }
    if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
        return match out.kind {
            Kind::Request => Err(Failure {
                message: format!(
                    "the server accepted the request (HTTP {status}) but sent no answer"
                ),
                status: Some(status.as_u16()),
                error: None,
            }),
            _ => Ok(()),
        };
    }
    let kind = content_type(&exchange.response);
    let awaited = out.id.as_deref().filter(|_| out.kind == Kind::Request);
    if kind.starts_with("text/event-stream") {
        let mut decoder = sse::Decoder::new(shared.options.max_message_size);
        let answered = read_stream(shared, out, exchange, &mut decoder, awaited).await?;
        if answered || awaited.is_none() {
            return Ok(());
        }
        return resume(shared, out, decoder).await;
    }
    if kind.starts_with("application/json") {
        let body = read_body(exchange, shared.options.max_message_size).await?;
        let answered = deliver_json(shared, out, &body, awaited).await?;
        if answered || awaited.is_none() {
            return Ok(());
        }
        return Err(Failure::new(
            "the server's answer did not answer the request".into(),
        ));
    }
    Err(Failure {
        message: format!("the server answered with content of type `{kind}`, which is not JSON or an event stream"),
        status: Some(status.as_u16()),
        error: None,
    })
}

/// Takes the session id the server assigned with its `InitializeResult`.
fn adopt_session(shared: &Shared, out: &Outgoing, response: &Response<Incoming>) {
    let mut session = lock(&shared.session);
    if session.initialize_id != out.id {
        return;
    }
    let id = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    session.id = id.map(String::from);
    session.listening = false;
}

/// An HTTP error status, as the failure of `out`: the server's JSON-RPC
/// error when its body has one, else a description with the status.
async fn refused(shared: &Shared, out: &Outgoing, exchange: Exchange) -> Failure {
    let status = exchange.response.status();
    let challenge = exchange
        .response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    let had_session = out.modern.is_none() && lock(&shared.session).id.is_some();
    let body = read_body(exchange, ERROR_BODY_KEPT)
        .await
        .unwrap_or_default();
    let parsed = serde_json::from_slice::<Value>(&body).ok();
    let error = parsed
        .as_ref()
        .and_then(|v| v.get("error"))
        .filter(|e| {
            e.get("code").is_some_and(Value::is_i64)
                && e.get("message").is_some_and(Value::is_string)
        })
        .cloned();
    let mut message = format!(
        "the server at {} answered HTTP {status}",
        shared.endpoint.url()
    );
    match &error {
        Some(e) => message.push_str(&format!(": {}", e["message"].as_str().unwrap_or_default())),
        None if !body.is_empty() => {
            let text = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
            message.push_str(&format!(": {}", text.trim()));
        }
        None => {}
    }
    if status == StatusCode::UNAUTHORIZED {
        message.push_str(match &shared.options.bearer_token {
            Some(_) => " (the bearer token was refused)",
            None => " (the server wants a bearer token)",
        });
        if let Some(challenge) = challenge {
            message.push_str(&format!("; WWW-Authenticate: {challenge}"));
        }
    }
    if status == StatusCode::NOT_FOUND && had_session {
        // The session is over (ended by the server, or expired): a new
        // `initialize` starts another.
        let mut session = lock(&shared.session);
        session.id = None;
        message.push_str(" (the session has ended; initialize again)");
    }
    Failure {
        message,
        status: Some(status.as_u16()),
        error,
    }
}

async fn read_body(exchange: Exchange, limit: usize) -> Result<Vec<u8>, Failure> {
    let mut body = exchange.response.into_body();
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Failure::new(format!("reading the server's answer: {e}")))?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > limit {
                return Err(Failure::new(format!(
                    "the server's answer is longer than {limit} bytes"
                )));
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(bytes)
}

/// Passes on the messages of a JSON body (one message or an array of them);
/// true if one of them answers `awaited`.
async fn deliver_json(
    shared: &Shared,
    out: &Outgoing,
    body: &[u8],
    awaited: Option<&str>,
) -> Result<bool, Failure> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| Failure::new(format!("the server's answer is not JSON: {e}")))?;
    let messages = match value {
        Value::Array(items) => items,
        one => vec![one],
    };
    let mut answered = false;
    for message in messages {
        answered |= deliver(shared, out, message, awaited).await;
    }
    Ok(answered)
}

/// Passes one message on, as one line; true if it answers `awaited`.
async fn deliver(shared: &Shared, out: &Outgoing, message: Value, awaited: Option<&str>) -> bool {
    let is_response = message.get("method").is_none();
    let id = message.get("id").map(Value::to_string);
    let answers = is_response && id.is_some() && id.as_deref() == awaited;
    if answers {
        if let Some(result) = message.get("result") {
            note_result(shared, out, result);
        }
    }
    let _ = shared.out.send(message.to_string()).await;
    answers
}

/// What the client learns from a result it relays: the revision
/// `initialize` settled on, the tools' `x-mcp-header` arguments.
fn note_result(shared: &Shared, out: &Outgoing, result: &Value) {
    match out.method.as_deref() {
        Some("initialize") => {
            let mut session = lock(&shared.session);
            if session.initialize_id == out.id {
                session.version = result
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .map(String::from);
            }
        }
        Some("tools/list") => learn_param_headers(shared, result),
        _ => {}
    }
}

/// Passes on the messages of an event stream until it ends, or until the
/// answer to `awaited` (when given) has come; true if it came.
async fn read_stream(
    shared: &Shared,
    out: &Outgoing,
    exchange: Exchange,
    decoder: &mut sse::Decoder,
    awaited: Option<&str>,
) -> Result<bool, Failure> {
    let mut body = exchange.response.into_body();
    let mut events = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Ok(false); // the connection broke: resume if possible
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        events.clear();
        decoder.feed(&data, &mut events).map_err(Failure::new)?;
        for event in events.drain(..) {
            if event.kind != "message" || event.data.is_empty() {
                continue;
            }
            let message = match serde_json::from_str::<Value>(&event.data) {
                Ok(m) => m,
                Err(e) => {
                    problem(
                        shared,
                        format!("the server sent an event that is not JSON: {e}"),
                    );
                    continue;
                }
            };
            if deliver(shared, out, message, awaited).await {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// A POST's stream ended before its answer: ask for the rest with
/// `Last-Event-ID` on a GET, as the server's event ids allow (2025-11-25
/// servers may close a stream on purpose and let the client poll).
async fn resume(
    shared: &Arc<Shared>,
    out: &Outgoing,
    mut decoder: sse::Decoder,
) -> Result<(), Failure> {
    let awaited = out.id.as_deref();
    let mut attempts = 0;
    loop {
        let (Some(last), Some(_)) = (
            decoder.last_id().map(String::from),
            lock(&shared.session).id.clone(),
        ) else {
            return Err(Failure::new(
                "the server closed the stream before it answered the request".into(),
            ));
        };
        if attempts == RECONNECTS || shared.closing.load(Ordering::SeqCst) {
            return Err(Failure::new(format!(
                "the server's stream broke {attempts} times before it answered the request"
            )));
        }
        attempts += 1;
        tokio::time::sleep(retry_delay(&decoder)).await;
        let Ok(exchange) = open_stream(shared, Some(&last)).await else {
            continue;
        };
        let status = exchange.response.status();
        if !status.is_success() {
            return Err(refused(shared, out, exchange).await);
        }
        let before = decoder.last_id().map(String::from);
        if read_stream(shared, out, exchange, &mut decoder, awaited).await? {
            return Ok(());
        }
        if decoder.last_id().map(String::from) != before {
            attempts = 0; // progress: this was not a failed attempt
        }
    }
}

fn retry_delay(decoder: &sse::Decoder) -> Duration {
    decoder
        .retry_ms()
        .map(|ms| Duration::from_millis(ms.min(60_000)))
        .unwrap_or(DEFAULT_RETRY)
}

/// A GET of the session's stream, resuming after `last_event` if given.
async fn open_stream(shared: &Shared, last_event: Option<&str>) -> Result<Exchange, String> {
    let mut builder = base_request(shared, Method::GET).header("accept", "text/event-stream");
    builder = session_headers(shared, builder);
    if let Some(last) = last_event {
        builder = builder.header("last-event-id", last);
    }
    let request = builder
        .body(Full::new(Bytes::new()))
        .map_err(|e| e.to_string())?;
    send_request(shared, request).await
}

/// Opens the session's GET stream once, after `notifications/initialized`.
fn start_listening(shared: &Arc<Shared>) {
    {
        let mut session = lock(&shared.session);
        if !shared.options.listen || session.id.is_none() || session.listening {
            return;
        }
        session.listening = true;
    }
    tokio::spawn(listen(shared.clone()));
}

/// Keeps the session's GET stream open, reconnecting (with `Last-Event-ID`)
/// when it breaks, until the session ends or the server says it offers
/// none.
async fn listen(shared: Arc<Shared>) {
    let out = Outgoing {
        body: Bytes::new(),
        kind: Kind::Other,
        id: None,
        method: Some("GET".into()),
        modern: None,
    };
    let mut decoder = sse::Decoder::new(shared.options.max_message_size);
    let mut failures = 0;
    let session = lock(&shared.session).id.clone();
    while !shared.closing.load(Ordering::SeqCst) && lock(&shared.session).id == session {
        let last = decoder.last_id().map(String::from);
        match open_stream(&shared, last.as_deref()).await {
            Ok(exchange) => {
                let status = exchange.response.status();
                // 405: the server offers no GET stream, which is fine.
                if status == StatusCode::METHOD_NOT_ALLOWED {
                    return;
                }
                if !status.is_success() {
                    let failure = refused(&shared, &out, exchange).await;
                    problem(&shared, format!("the GET stream: {}", failure.message));
                    return;
                }
                match read_stream(&shared, &out, exchange, &mut decoder, None).await {
                    Ok(_) if decoder.last_id().map(String::from) != last => failures = 0,
                    Ok(_) => failures += 1,
                    Err(failure) => {
                        problem(&shared, format!("the GET stream: {}", failure.message));
                        return;
                    }
                }
            }
            Err(e) => {
                failures += 1;
                if failures == RECONNECTS {
                    problem(&shared, format!("the GET stream: {e}"));
                }
            }
        }
        if failures >= RECONNECTS {
            return;
        }
        tokio::time::sleep(retry_delay(&decoder)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_split_into_host_port_and_target() {
        let e = Endpoint::parse("http://127.0.0.1:8000/mcp").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.target.as_str()),
            ("127.0.0.1", 8000, "/mcp")
        );
        assert_eq!(e.authority, "127.0.0.1:8000");
        let e = Endpoint::parse("http://localhost").unwrap();
        assert_eq!((e.port, e.target.as_str()), (80, "/"));
        let e = Endpoint::parse("http://[::1]:9/a/b?x=1#frag").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.target.as_str()),
            ("::1", 9, "/a/b?x=1")
        );
        let e = Endpoint::parse("http://h?q").unwrap();
        assert_eq!(e.target, "/?q");
        for bad in [
            "https://x/mcp",
            "ftp://x",
            "http://:80/",
            "http://h:0/",
            "http://h:99999/",
            "http://u:p@h/",
            "http://h/a b",
            "http://[::1/",
        ] {
            assert!(Endpoint::parse(bad).is_err(), "{bad}");
        }
        assert!(Endpoint::parse("https://x/mcp")
            .unwrap_err()
            .contains("plain http://"));
    }

    #[test]
    fn header_values_that_are_not_plain_ascii_are_base64_encoded() {
        assert_eq!(header_text("tools/call"), "tools/call");
        assert_eq!(header_text("a name"), "a name");
        assert_eq!(header_text("héllo"), "=?base64?aMOpbGxv?=");
        assert_eq!(header_text(" x"), "=?base64?IHg=?=");
        assert_eq!(header_text("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
        assert_eq!(header_text("tab\there"), "=?base64?dGFiCWhlcmU=?=");
    }

    #[test]
    fn messages_are_classified_with_their_routing_headers() {
        let out = classify(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#);
        assert_eq!((out.kind, out.id.as_deref()), (Kind::Request, Some("7")));
        assert_eq!(
            out.modern.unwrap(),
            vec![
                ("mcp-protocol-version".to_string(), "2026-07-28".to_string()),
                ("mcp-method".to_string(), "tools/call".to_string()),
                ("mcp-name".to_string(), "add".to_string()),
            ]
        );
        let out = classify(br#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#);
        assert!(out.modern.is_none());
        assert_eq!(out.id.as_deref(), Some("\"a\""));
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).kind,
            Kind::Notification
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).kind,
            Kind::Response
        );
        assert_eq!(classify(b"[{}]").kind, Kind::Other);
        assert_eq!(classify(b"not json").kind, Kind::Other);
    }

    #[test]
    fn x_mcp_header_arguments_become_param_headers() {
        let (out, _) = mpsc::channel(1);
        let shared = Shared {
            endpoint: Endpoint::parse("http://h/").unwrap(),
            options: Options::default(),
            headers: Vec::new(),
            session: Mutex::default(),
            param_headers: Mutex::default(),
            out,
            problems: Mutex::default(),
            cancellable: Mutex::default(),
            cancelled: Mutex::default(),
            requests: Arc::new(Semaphore::new(1)),
            others: Arc::new(Semaphore::new(1)),
            active: AtomicUsize::new(0),
            idle: Notify::new(),
            closing: AtomicBool::new(false),
        };
        learn_param_headers(
            &shared,
            &serde_json::json!({"tools": [{"name": "weather", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "opts": {"type": "object", "properties": {"days": {"type": "integer", "x-mcp-header": "Days"}}},
                "metric": {"type": "boolean", "x-mcp-header": "Metric"},
                "note": {"type": "string"}
            }}}]}),
        );
        let call = classify(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"weather","arguments":{"region":"Zürich","opts":{"days":3.0},"metric":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#.as_bytes(),
        );
        let mut headers = param_headers(&shared, &call);
        headers.sort();
        assert_eq!(
            headers,
            vec![
                ("mcp-param-days".to_string(), "3".to_string()),
                ("mcp-param-metric".to_string(), "true".to_string()),
                (
                    "mcp-param-region".to_string(),
                    "=?base64?WsO8cmljaA==?=".to_string()
                ),
            ]
        );
    }
}
