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

use hyper::StatusCode;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, Notify, Semaphore};

mod events;
mod exchange;
mod headers;
mod options;
mod state;

use events::{read_stream, resume, start_listening};
use exchange::{
    adopt_session, content_type, delete, deliver_json, fail, post, read_body, refused, Exchange,
    Failure, MAX_REMEMBERED_CANCELS,
};
pub use headers::header_text;
use headers::{classify, header};
pub use options::{Endpoint, Options};
use state::{lock, problem, Kind, Outgoing, Running, Shared, INCOMING_QUEUE, INITIALIZE_WAIT};
pub use state::{Received, TRANSPORT_ERROR};

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

#[cfg(test)]
mod tests {
    use super::*;
    use headers::{learn_param_headers, param_headers};

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
