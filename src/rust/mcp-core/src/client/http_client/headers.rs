//! What a message needs on the wire: its kind (request, notification,
//! response) and the 2026-07-28 routing headers (`Mcp-Method`, `Mcp-Name`,
//! `Mcp-Param-*`, learnt from each tool's `x-mcp-header` arguments).

use super::state::{lock, Kind, Outgoing, ParamHeader, Shared};
use base64::Engine as _;
use bytes::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use serde_json::{Map, Value};

pub(super) fn header(
    name: &str,
    value: &str,
    what: &str,
) -> Result<(HeaderName, HeaderValue), String> {
    let name = HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| format!("{what}: `{name}` is not a valid header name"))?;
    let value = HeaderValue::from_str(value)
        .map_err(|_| format!("{what}: the value has characters a header cannot carry"))?;
    Ok((name, value))
}

pub(super) fn classify(line: &[u8]) -> Outgoing {
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
pub(super) fn modern_headers(
    method: &str,
    message: &Map<String, Value>,
) -> Option<Vec<(String, String)>> {
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
pub(super) fn param_headers(shared: &Shared, out: &Outgoing) -> Vec<(String, String)> {
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
pub(super) fn learn_param_headers(shared: &Shared, result: &Value) {
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

pub(super) fn collect_param_headers(
    schema: &Value,
    path: &mut Vec<String>,
    found: &mut Vec<ParamHeader>,
) {
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
