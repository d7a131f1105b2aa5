//! The HTTP responses the front writes: plain and JSON-RPC errors, busy
//! answers with `Retry-After`, event streams, CORS preflight, and what a
//! request's headers accept.

use super::modern;
use super::state::{Accepts, Body, PRM_PATH};
use super::streams::SseBody;
use crate::protocol::jsonrpc::{self, RequestId};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::Value;

pub(super) fn full(
    status: StatusCode,
    content_type: &str,
    body: impl Into<Bytes>,
) -> Response<Body> {
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

pub(super) fn empty(status: StatusCode) -> Response<Body> {
    full(status, "", Bytes::new())
}

/// How long a client refused for want of room waits before it tries again.
pub(super) const RETRY_AFTER_SECS: &str = "1";

/// A refusal for want of room (429 for a client's share, 503 for the
/// server's), always with `Retry-After`.
pub(super) fn busy(status: StatusCode, id: Option<&RequestId>, message: &str) -> Response<Body> {
    let mut r = rpc_error(status, id, -32000, message);
    r.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from_static(RETRY_AFTER_SECS),
    );
    r
}

/// A JSON-RPC error as the whole response, with `status`.
pub(super) fn rpc_error(
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

pub(super) fn error_response(
    status: StatusCode,
    id: Option<&RequestId>,
    error: &Value,
) -> Response<Body> {
    full(
        status,
        "application/json",
        jsonrpc::error_response(id, error),
    )
}

pub(super) fn header_text(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

pub(super) fn accepts(headers: &HeaderMap) -> Accepts {
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
pub(super) fn modern_status(code: Option<i64>) -> StatusCode {
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

pub(super) fn sse_response(body: SseBody) -> Response<Body> {
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
pub(super) fn preflight(headers: &HeaderMap, origin: Option<&str>) -> Response<Body> {
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

pub(super) fn prm_url(resource: &str, path: &str) -> String {
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
