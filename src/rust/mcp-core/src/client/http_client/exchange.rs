//! One exchange with the server: building and sending the POST (or the
//! DELETE at the end), reading a JSON answer, adopting the session it
//! names, and turning an HTTP failure into a JSON-RPC error for the
//! request that met it.

use super::headers::{learn_param_headers, param_headers};
use super::state::{lock, problem, Kind, Outgoing, Shared, ERROR_BODY_KEPT, TRANSPORT_ERROR};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;
use tokio::task::AbortHandle;

/// A response and the task driving its connection, which ends (closing the
/// socket) when this is dropped.
pub(super) struct Exchange {
    pub(super) response: Response<Incoming>,
    pub(super) _connection: AbortOnDrop,
}

pub(super) struct AbortOnDrop(pub(super) AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Why an exchange did not deliver its answer.
pub(super) struct Failure {
    pub(super) message: String,
    pub(super) status: Option<u16>,
    /// The server's own JSON-RPC error object, when its answer had one.
    pub(super) error: Option<Value>,
}

impl Failure {
    pub(super) fn new(message: String) -> Failure {
        Failure {
            message,
            status: None,
            error: None,
        }
    }
}

/// How many cancelled request ids the client remembers.
pub(super) const MAX_REMEMBERED_CANCELS: usize = 256;

/// Tells the caller: an error response for a request (so nothing waits for
/// ever), a problem otherwise.
pub(super) async fn fail(shared: &Shared, out: &Outgoing, failure: Failure) {
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

pub(super) fn base_request(shared: &Shared, method: Method) -> hyper::http::request::Builder {
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
pub(super) fn session_headers(
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

pub(super) async fn post(shared: &Shared, out: &Outgoing) -> Result<Exchange, String> {
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

pub(super) async fn send_request(
    shared: &Shared,
    request: Request<Full<Bytes>>,
) -> Result<Exchange, String> {
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

pub(super) async fn delete(shared: &Shared, session: &str) -> Result<(), String> {
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

pub(super) fn content_type(response: &Response<Incoming>) -> String {
    response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Takes the session id the server assigned with its `InitializeResult`.
pub(super) fn adopt_session(shared: &Shared, out: &Outgoing, response: &Response<Incoming>) {
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
pub(super) async fn refused(shared: &Shared, out: &Outgoing, exchange: Exchange) -> Failure {
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

pub(super) async fn read_body(exchange: Exchange, limit: usize) -> Result<Vec<u8>, Failure> {
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
pub(super) async fn deliver_json(
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
pub(super) async fn deliver(
    shared: &Shared,
    out: &Outgoing,
    message: Value,
    awaited: Option<&str>,
) -> bool {
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
pub(super) fn note_result(shared: &Shared, out: &Outgoing, result: &Value) {
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
