//! The `_meta` keys of the 2026-07-28 envelope and the error replies every
//! method family writes.

use crate::protocol::jsonrpc::{self, RequestId};
use serde_json::{json, Value};
use std::time::Duration;

pub(super) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(super) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub(super) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub(super) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
pub(super) const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
pub(super) const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";

/// A request id inside params, turned back into a JSON value.
pub(super) fn raw_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// -32600 with the reason in `data`.
pub(super) fn invalid_request(id: Option<&RequestId>, reason: &str) -> String {
    let data = json!({ "reason": reason });
    jsonrpc::error(id, jsonrpc::INVALID_REQUEST, "Invalid Request", Some(&data))
}

/// Lists have one page: no params, or params with no (or a null) cursor.
/// Otherwise the refusal, which says that `what` is all on one page.
pub(super) fn single_page(params: &Value, what: &str) -> Result<(), String> {
    match params {
        Value::Null => Ok(()),
        Value::Object(map) => match map.get("cursor") {
            None | Some(Value::Null) => Ok(()),
            Some(_) => Err(format!(
                "unknown cursor: this server lists {what} on one page"
            )),
        },
        _ => Err("params must be an object".into()),
    }
}

pub(super) fn invalid_params(id: &RequestId, reason: &str) -> String {
    jsonrpc::error(
        Some(id),
        jsonrpc::INVALID_PARAMS,
        &format!("Invalid params: {reason}"),
        None,
    )
}

pub(super) fn method_not_found(id: &RequestId, method: &str) -> String {
    jsonrpc::error(
        Some(id),
        jsonrpc::METHOD_NOT_FOUND,
        "Method not found",
        Some(&json!({ "method": method })),
    )
}

/// `2.5 seconds`, `1 second`, `90 seconds`.
pub(super) fn describe_duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    let text = if secs.fract() == 0.0 {
        format!("{}", secs as u64)
    } else {
        format!("{secs}")
    };
    let unit = if secs == 1.0 { "second" } else { "seconds" };
    format!("{text} {unit}")
}
