//! One request's SERVER span, by the OpenTelemetry semantic conventions
//! for MCP: its name (`{mcp.method.name} {target}`), its attributes, its
//! parent (the W3C context in `params._meta`), and how its response sets
//! `error.type` and the status.
//!
//! Only names, ids and URIs are recorded: never arguments, results,
//! tokens or request state.

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, Span};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::net::SocketAddr;

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
    /// The request id as JSON text (a string id keeps its quotes).
    pub id_json: &'a str,
    pub params: &'a Value,
    /// The revision the request is served in, if known.
    pub protocol_version: Option<&'a str>,
    pub peer: &'a Peer,
}

/// The span of a request the engine has not answered yet.
pub struct RequestSpan {
    span: Span,
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
pub fn verdict(response: &str) -> Verdict {
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
    pub fn start(tracer: &SdkTracer, request: &Request) -> RequestSpan {
        let parent = parent_of(request.params);
        let span = tracer
            .span_builder(span_name(request.method, request.params))
            .with_kind(SpanKind::Server)
            .with_attributes(attributes(request))
            .start_with_context(tracer, &parent);
        RequestSpan { span }
    }

    /// The trace and span ids, in hex (for R's `mcp_request()`).
    pub fn ids(&self) -> (String, String) {
        let context = self.span.span_context();
        (
            context.trace_id().to_string(),
            context.span_id().to_string(),
        )
    }

    /// Records something that happened during the request.
    pub fn event(&mut self, name: &'static str, attributes: Vec<KeyValue>) {
        self.span.add_event(name, attributes);
    }

    /// Adds an attribute learnt after the start (the negotiated revision).
    pub fn set(&mut self, attribute: KeyValue) {
        self.span.set_attribute(attribute);
    }

    /// Ends the span with the response the client is sent.
    pub fn end_with(mut self, response: &str) {
        match verdict(response) {
            Verdict::Ok => {}
            Verdict::RpcError(code, message) => {
                self.span
                    .set_attribute(KeyValue::new("error.type", code.to_string()));
                self.span
                    .set_attribute(KeyValue::new("rpc.response.status_code", code.to_string()));
                self.span.set_status(Status::error(message));
            }
            Verdict::ToolError => {
                self.span
                    .set_attribute(KeyValue::new("error.type", "tool_error"));
                self.span
                    .set_status(Status::error("the tool reported an error"));
            }
        }
        self.span.end();
    }

    /// Ends the span of a request that gets no response (cancelled).
    pub fn end_unanswered(mut self, why: &'static str) {
        self.span.add_event(why, Vec::new());
        self.span.end();
    }

    /// Whether the span's context came from the request (tests).
    pub fn has_remote_parent(params: &Value) -> bool {
        parent_of(params).span().span_context().is_remote()
    }
}
