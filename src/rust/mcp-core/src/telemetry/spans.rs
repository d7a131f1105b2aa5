//! One request's SERVER span, by the OpenTelemetry semantic conventions
//! for MCP: its name (`{mcp.method.name} {target}`), its attributes, its
//! parent (the W3C context in `params._meta`), and how its response sets
//! `error.type` and the status.
//!
//! Only names, ids and URIs are recorded: never tokens or request state,
//! and a tool call's arguments and result only when the server opted in
//! ([`Capture`], as the conventions' `gen_ai.tool.call.arguments` and
//! `gen_ai.tool.call.result` are opt-in), bounded in size.

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, Span};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::net::SocketAddr;
use std::time::{Instant, SystemTime};

/// How the client reaches the server (`network.transport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transport {
    /// stdio.
    #[default]
    Pipe,
    /// HTTP.
    Tcp,
}

/// Who the client is, as far as spans say: the transport, its address
/// (HTTP) and its session (handshake-era HTTP).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Peer {
    pub transport: Transport,
    pub address: Option<SocketAddr>,
    pub session: Option<String>,
}

/// What a span is started from: the request as the engine read it.
pub struct Request<'a> {
    pub method: &'a str,
    /// The HTTP request's own trace context, linked to.
    pub ambient: Option<&'a Ambient>,
    /// The request id as JSON text (a string id keeps its quotes).
    pub id_json: &'a str,
    pub params: &'a Value,
    /// A tool call's `arguments` as the client wrote them, when they were
    /// kept as text (not in `params`).
    pub arguments: Option<&'a str>,
    /// The revision the request is served in, if known.
    pub protocol_version: Option<&'a str>,
    pub peer: &'a Peer,
}

/// What of a tool call's content its span records (the conventions'
/// opt-in attributes); nothing by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capture {
    /// `gen_ai.tool.call.arguments`: the call's `arguments`, as JSON.
    pub arguments: bool,
    /// `gen_ai.tool.call.result`: the call's result, as JSON.
    pub result: bool,
}

/// The most bytes of JSON text a captured attribute keeps; longer text is
/// cut there (at a character's boundary) and ends with [`TRUNCATED`].
pub const CAPTURE_LIMIT: usize = 8192;
/// What ends a captured text that was cut.
pub const TRUNCATED: &str = "...[truncated]";

/// `text`, or its first [`CAPTURE_LIMIT`] bytes and [`TRUNCATED`].
pub fn bounded(text: &str) -> String {
    if text.len() <= CAPTURE_LIMIT {
        return text.to_string();
    }
    let mut end = CAPTURE_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{TRUNCATED}", &text[..end])
}

/// The `result` member of a response's JSON text, as it was written:
/// the engine writes `{"jsonrpc":"2.0","id":<id>,"result":...}`, so the
/// text between is taken without parsing; another shape is parsed.
pub fn result_text<'a>(response: &'a str, id_json: &str) -> Option<std::borrow::Cow<'a, str>> {
    let head = "{\"jsonrpc\":\"2.0\",\"id\":";
    let written = response
        .strip_prefix(head)
        .and_then(|r| r.strip_prefix(id_json))
        .and_then(|r| r.strip_prefix(",\"result\":"))
        .and_then(|r| r.strip_suffix('}'));
    if let Some(result) = written {
        return Some(std::borrow::Cow::Borrowed(result));
    }
    let value: Value = serde_json::from_str(response).ok()?;
    value
        .get("result")
        .map(|r| std::borrow::Cow::Owned(r.to_string()))
}

/// Where a request's span is in its trace: what `mcp_request()` reports,
/// and the parent of the spans R opens inside the call (`mcp_span()`).
#[derive(Debug, Clone, PartialEq)]
pub struct SpanIds(pub opentelemetry::trace::SpanContext);

impl SpanIds {
    /// The trace id, 32 hex digits.
    pub fn trace_id(&self) -> String {
        self.0.trace_id().to_string()
    }

    /// The span id, 16 hex digits.
    pub fn span_id(&self) -> String {
        self.0.span_id().to_string()
    }

    /// Whether the trace is sampled (its spans are exported).
    pub fn sampled(&self) -> bool {
        self.0.is_sampled()
    }
}

/// The span of a request the engine has not answered yet, and what its
/// duration's measurement will carry.
pub struct RequestSpan {
    span: Span,
    started: Instant,
    metric: Vec<KeyValue>,
    /// An `initialize`, whose response settles the revision.
    initialize: bool,
    /// A tool call whose result the span records (opted in).
    capture_result: bool,
}

/// A request's span at its end, as the engine hands it to the export
/// thread: everything that costs (attributes, status, the span's data,
/// the measurement) is done there, not on the thread that answered.
pub struct Ending {
    span: RequestSpan,
    verdict: Verdict,
    /// The revision `initialize` settled on.
    version: Option<String>,
    /// The tool call's result, bounded, when it is captured.
    result: Option<String>,
    at: SystemTime,
    seconds: f64,
}

/// `params._meta` as a carrier of the W3C trace context.
struct MetaCarrier<'a>(Option<&'a Map<String, Value>>);

impl Extractor for MetaCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0?.get(key)?.as_str()
    }

    fn keys(&self) -> Vec<&str> {
        self.0
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

/// The parent a request names in `params._meta` (`traceparent`,
/// `tracestate`); none when it names none or names it badly.
pub fn parent_of(params: &Value) -> Context {
    let meta = params.get("_meta").and_then(Value::as_object);
    TraceContextPropagator::new().extract_with_context(&Context::new(), &MetaCarrier(meta))
}

/// The tool or prompt a request is about, which its span's name ends with.
fn target<'a>(method: &str, params: &'a Value) -> Option<&'a str> {
    match method {
        "tools/call" | "prompts/get" => params.get("name").and_then(Value::as_str),
        _ => None,
    }
}

/// The W3C trace context an HTTP request carried in its own headers
/// (`traceparent`, `tracestate`): the transport's context, which the
/// request's span links to (its parent is the one in `params._meta`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ambient {
    pub traceparent: String,
    pub tracestate: Option<String>,
}

struct AmbientCarrier<'a>(&'a Ambient);

impl Extractor for AmbientCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => Some(self.0.traceparent.as_str()),
            "tracestate" => self.0.tracestate.as_deref(),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate"]
    }
}

/// The span context `ambient` names, if it names one well.
pub fn link_of(ambient: &Ambient) -> Option<opentelemetry::trace::SpanContext> {
    let context = TraceContextPropagator::new()
        .extract_with_context(&Context::new(), &AmbientCarrier(ambient));
    let span = context.span().span_context().clone();
    span.is_valid().then_some(span)
}

/// `{mcp.method.name} {target}`, or the method alone.
pub fn span_name(method: &str, params: &Value) -> String {
    match target(method, params) {
        Some(target) => format!("{method} {target}"),
        None => method.to_string(),
    }
}

/// The attributes a request's span starts with.
pub fn attributes(request: &Request) -> Vec<KeyValue> {
    let mut kv = vec![
        KeyValue::new("mcp.method.name", request.method.to_string()),
        KeyValue::new("jsonrpc.request.id", id_text(request.id_json)),
        KeyValue::new(
            "network.transport",
            match request.peer.transport {
                Transport::Pipe => "pipe",
                Transport::Tcp => "tcp",
            },
        ),
    ];
    if let Some(version) = request.protocol_version {
        kv.push(KeyValue::new("mcp.protocol.version", version.to_string()));
    }
    if let Some(session) = &request.peer.session {
        kv.push(KeyValue::new("mcp.session.id", session.clone()));
    }
    if let Some(address) = request.peer.address {
        kv.push(KeyValue::new("client.address", address.ip().to_string()));
        kv.push(KeyValue::new("client.port", i64::from(address.port())));
    }
    if request.peer.transport == Transport::Tcp {
        kv.push(KeyValue::new("network.protocol.name", "http"));
    }
    let name = target(request.method, request.params).map(str::to_string);
    match (request.method, name) {
        ("tools/call", Some(name)) => {
            kv.push(KeyValue::new("gen_ai.tool.name", name));
            kv.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        ("prompts/get", Some(name)) => kv.push(KeyValue::new("gen_ai.prompt.name", name)),
        _ => {}
    }
    if request.method.starts_with("resources/") {
        if let Some(uri) = request.params.get("uri").and_then(Value::as_str) {
            kv.push(KeyValue::new("mcp.resource.uri", uri.to_string()));
        }
    }
    kv
}

/// A request id as the attribute shows it: a string id without its quotes.
fn id_text(id_json: &str) -> String {
    match serde_json::from_str::<Value>(id_json) {
        Ok(Value::String(s)) => s,
        _ => id_json.to_string(),
    }
}

/// What a response says about how the request went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    /// A JSON-RPC error: its code and message.
    RpcError(i64, String),
    /// A tool result with `isError: true`.
    ToolError,
    /// No response was sent: why (`cancelled`).
    Unanswered(&'static str),
}

#[derive(Deserialize)]
struct Reply {
    error: Option<ReplyError>,
    result: Option<ReplyResult>,
}

#[derive(Deserialize)]
struct ReplyError {
    code: i64,
    #[serde(default)]
    message: String,
}

#[derive(Deserialize)]
struct ReplyResult {
    #[serde(rename = "isError", default)]
    is_error: bool,
}

/// Reads the verdict from a response's JSON text (what the engine writes).
///
/// The engine writes `{"jsonrpc":"2.0","id":<id>,` and then `"error":` or
/// `"result":`; a tool result starts `{"content":[` and says `isError`
/// after its content. So only an error is parsed (it is small), and a tool
/// result is scanned for `],"isError":true` (unescaped quotes cannot occur
/// inside a string, and the flag comes before `structuredContent`); any
/// other shape is parsed whole.
pub fn verdict(response: &str, id_json: &str) -> Verdict {
    let head = "{\"jsonrpc\":\"2.0\",\"id\":";
    let rest = response
        .strip_prefix(head)
        .and_then(|r| r.strip_prefix(id_json));
    match rest {
        Some(r) if r.starts_with(",\"error\":") => parsed_verdict(response),
        Some(r) if r.starts_with(",\"result\":{\"content\":[") => match r.find("],\"isError\":") {
            Some(at) if r[at..].starts_with("],\"isError\":true") => Verdict::ToolError,
            Some(_) => Verdict::Ok,
            None => parsed_verdict(response),
        },
        Some(r) if r.starts_with(",\"result\":") => Verdict::Ok,
        _ => parsed_verdict(response),
    }
}

/// The verdict of a response of a shape [`verdict`] does not know.
fn parsed_verdict(response: &str) -> Verdict {
    match serde_json::from_str::<Reply>(response) {
        Ok(Reply {
            error: Some(error), ..
        }) => Verdict::RpcError(error.code, error.message),
        Ok(Reply {
            result: Some(ReplyResult { is_error: true }),
            ..
        }) => Verdict::ToolError,
        _ => Verdict::Ok,
    }
}

impl RequestSpan {
    /// Starts the SERVER span of `request`, a child of the context its
    /// `_meta` carries.
    pub fn start(tracer: &SdkTracer, request: &Request, capture: Capture) -> RequestSpan {
        let parent = parent_of(request.params);
        let mut attributes = attributes(request);
        let metric = super::metrics::operation_attributes(&attributes);
        let tool_call = request.method == "tools/call";
        if tool_call && capture.arguments {
            let text = match (request.arguments, request.params.get("arguments")) {
                (Some(written), _) => Some(bounded(written)),
                (None, Some(read)) => Some(bounded(&read.to_string())),
                (None, None) => None,
            };
            if let Some(text) = text {
                attributes.push(KeyValue::new("gen_ai.tool.call.arguments", text));
            }
        }
        let mut builder = tracer
            .span_builder(span_name(request.method, request.params))
            .with_kind(SpanKind::Server)
            .with_attributes(attributes);
        if let Some(link) = request.ambient.and_then(link_of) {
            builder = builder.with_links(vec![opentelemetry::trace::Link::with_context(link)]);
        }
        let span = builder.start_with_context(tracer, &parent);
        RequestSpan {
            span,
            started: Instant::now(),
            metric,
            initialize: request.method == "initialize",
            capture_result: tool_call && capture.result,
        }
    }

    /// The trace and span ids, in hex (for R's `mcp_request()`).
    pub fn ids(&self) -> (String, String) {
        let context = self.span.span_context();
        (
            context.trace_id().to_string(),
            context.span_id().to_string(),
        )
    }

    /// Whether it is the span of an `initialize`.
    pub fn is_initialize(&self) -> bool {
        self.initialize
    }

    /// The span's place in its trace.
    pub fn context(&self) -> SpanIds {
        SpanIds(self.span.span_context().clone())
    }

    /// Records something that happened during the request.
    pub fn event(
        &mut self,
        name: impl Into<std::borrow::Cow<'static, str>>,
        attributes: Vec<KeyValue>,
    ) {
        self.span.add_event(name, attributes);
    }

    /// Adds attributes the handler chose (`mcp_span_annotate()` in R).
    pub fn set_all(&mut self, attributes: Vec<KeyValue>) {
        self.span.set_attributes(attributes);
    }

    /// Adds an attribute learnt after the start (the negotiated revision).
    pub fn set(&mut self, attribute: KeyValue) {
        self.span.set_attribute(attribute);
    }

    /// The span's end, now, with the response the client is sent (and
    /// the revision `initialize` settled on): cheap, for the thread that
    /// answers; [`Ending::finish`] does the rest.
    pub fn ending(self, response: &str, id_json: &str, version: Option<String>) -> Ending {
        let verdict = verdict(response, id_json);
        let result = self
            .capture_result
            .then(|| result_text(response, id_json))
            .flatten()
            .map(|text| bounded(&text));
        let mut ending = self.ending_with(verdict, version);
        ending.result = result;
        ending
    }

    /// The span's end, now, for a request that gets no response (`why`:
    /// it was cancelled).
    pub fn ending_unanswered(self, why: &'static str) -> Ending {
        self.ending_with(Verdict::Unanswered(why), None)
    }

    fn ending_with(self, verdict: Verdict, version: Option<String>) -> Ending {
        let seconds = self.started.elapsed().as_secs_f64();
        Ending {
            span: self,
            verdict,
            version,
            result: None,
            at: SystemTime::now(),
            seconds,
        }
    }

    /// Ends the span at once, on this thread (when no export thread can
    /// take it).
    pub fn end_with(self, response: &str, id_json: &str) {
        self.ending(response, id_json, None).finish(None);
    }

    /// Whether the span's context came from the request (tests).
    pub fn has_remote_parent(params: &Value) -> bool {
        parent_of(params).span().span_context().is_remote()
    }
}

impl Ending {
    /// Sets the attributes and status the response decides, records the
    /// request's duration in `metrics`, and ends the span when the request
    /// was answered.
    pub fn finish(self, metrics: Option<&super::metrics::Metrics>) {
        let Ending {
            span: request,
            verdict,
            version,
            result,
            at,
            seconds,
        } = self;
        let RequestSpan {
            mut span,
            mut metric,
            ..
        } = request;
        if let Some(version) = version {
            let kv = KeyValue::new("mcp.protocol.version", version);
            metric.retain(|m| m.key != kv.key);
            metric.push(kv.clone());
            span.set_attribute(kv);
        }
        if let Some(result) = result {
            span.set_attribute(KeyValue::new("gen_ai.tool.call.result", result));
        }
        match verdict {
            Verdict::Ok => {}
            Verdict::RpcError(code, message) => {
                let code = code.to_string();
                let kv = [
                    KeyValue::new("error.type", code.clone()),
                    KeyValue::new("rpc.response.status_code", code),
                ];
                metric.extend(kv.iter().cloned());
                span.set_attributes(kv);
                span.set_status(Status::error(message));
            }
            Verdict::ToolError => {
                let kv = KeyValue::new("error.type", "tool_error");
                metric.push(kv.clone());
                span.set_attribute(kv);
                span.set_status(Status::error("the tool reported an error"));
            }
            Verdict::Unanswered(why) => {
                let kv = KeyValue::new("error.type", why);
                metric.push(kv.clone());
                span.set_attribute(kv);
                span.add_event(why, Vec::new());
                span.set_status(Status::error(why));
            }
        }
        if let Some(metrics) = metrics {
            metrics.operation(seconds, &metric);
        }
        span.end_with_timestamp(at);
    }
}

impl std::fmt::Debug for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ending")
            .field("verdict", &self.verdict)
            .field("seconds", &self.seconds)
            .finish_non_exhaustive()
    }
}
