//! The checks HTTP adds to a 2026-07-28 request before the engine sees it:
//! the `_meta` envelope (rung 1 of the validation ladder), the routing
//! headers `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` (rung 2;
//! on the tasks extension's methods `Mcp-Name` is the task id), and the `Mcp-Param-*` headers a tool's `x-mcp-header` arguments call for
//! (rung 4). The version itself (rung 3), unknown methods (rung 5) and
//! missing client capabilities (rung 6) are the engine's, as on stdio.
//!
//! Header names are case-insensitive; values are compared exactly, after
//! trimming spaces and tabs and decoding the `=?base64?…?=` form.

use crate::engine::registry::Registry;
use crate::protocol::jsonrpc;
use base64::Engine as _;
use hyper::HeaderMap;
use serde_json::{json, Value};

/// 2026-07-28: a routing header disagrees with the body, or is missing.
pub const HEADER_MISMATCH: i64 = -32020;

pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// A refusal: the JSON-RPC error object (sent with HTTP 400).
pub type Refused = Value;

fn mismatch(message: String) -> Refused {
    jsonrpc::error_object(HEADER_MISMATCH, &message, None)
}

/// The value of header `name`: `Ok(None)` when absent, an error when given
/// more than once (a request must say one thing).
fn single<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, Refused> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(mismatch(format!("Header `{name}` is given more than once")));
    }
    first
        .to_str()
        .map(|v| Some(v.trim_matches([' ', '\t'])))
        .map_err(|_| {
            mismatch(format!(
                "Header `{name}` is not visible ASCII; use the =?base64?…?= form"
            ))
        })
}

/// Decodes the `=?base64?<base64 of UTF-8>?=` form (strictly: canonical,
/// padded base64); any other value is taken literally.
pub fn decode_value(value: &str) -> Result<String, Refused> {
    let Some(inner) = value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    else {
        return Ok(value.to_string());
    };
    base64::engine::general_purpose::STANDARD
        .decode(inner)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| {
            mismatch(format!(
                "Header value `{value}` is not valid =?base64?…?= text"
            ))
        })
}

/// Rung 1: the envelope `_meta` must name a version and the client's
/// capabilities (-32602).
pub fn check_envelope(id: Option<&Value>, params: &Value) -> Result<(), Refused> {
    let meta = params.get("_meta").and_then(Value::as_object);
    let missing: Vec<String> = match meta {
        None => vec!["params._meta".into()],
        Some(meta) => [META_VERSION, META_CAPABILITIES]
            .into_iter()
            .filter(|key| !meta.contains_key(*key))
            .map(|key| format!("params._meta[\"{key}\"]"))
            .collect(),
    };
    if missing.is_empty() {
        return Ok(());
    }
    let _ = id;
    Err(jsonrpc::error_object(
        jsonrpc::INVALID_PARAMS,
        &format!("Invalid params: missing required {}", missing.join(" and ")),
        Some(&json!({ "missing": missing })),
    ))
}

/// Rung 2: the routing headers must repeat what the body says.
pub fn check_routing(headers: &HeaderMap, method: &str, params: &Value) -> Result<(), Refused> {
    let body_version = params
        .get("_meta")
        .and_then(|m| m.get(META_VERSION))
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
        .unwrap_or_default();
    match single(headers, "mcp-protocol-version")? {
        Some(v) if v == body_version => {}
        Some(v) => {
            return Err(mismatch(format!(
            "Header `MCP-Protocol-Version: {v}` does not match the body's version `{body_version}`"
        )))
        }
        None => return Err(mismatch("Header `MCP-Protocol-Version` is required".into())),
    }
    match single(headers, "mcp-method")? {
        Some(v) if v == method => {}
        Some(v) => {
            return Err(mismatch(format!(
                "Header `Mcp-Method: {v}` does not match the method `{method}`"
            )))
        }
        None => return Err(mismatch("Header `Mcp-Method` is required".into())),
    }
    // The tasks extension routes its methods on the task id, so that a
    // load balancer can send them to the process holding the task.
    let named = match method {
        "tools/call" | "prompts/get" => params.get("name"),
        "resources/read" => params.get("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => params.get("taskId"),
        _ => return Ok(()),
    };
    let Some(expected) = named.and_then(Value::as_str) else {
        // The engine answers a missing name as invalid params.
        return Ok(());
    };
    match single(headers, "mcp-name")? {
        Some(v) if decode_value(v)? == expected => Ok(()),
        Some(v) => Err(mismatch(format!(
            "Header `Mcp-Name: {v}` does not match `{expected}` in the body"
        ))),
        None => Err(mismatch(format!(
            "Header `Mcp-Name` is required for `{method}`"
        ))),
    }
}

/// The `x-mcp-header` arguments of a schema: header name (without the
/// `Mcp-Param-` prefix) and the path of properties leading to it.
fn param_headers(schema: &Value, path: &mut Vec<String>, found: &mut Vec<(String, Vec<String>)>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        path.push(name.clone());
        if let Some(header) = property.get("x-mcp-header").and_then(Value::as_str) {
            found.push((header.to_string(), path.clone()));
        }
        param_headers(property, path, found);
        path.pop();
    }
}

/// How an argument appears in its header, for comparison.
fn matches_argument(header: &str, argument: &Value) -> bool {
    match argument {
        Value::String(s) => header == s,
        Value::Bool(b) => header == if *b { "true" } else { "false" },
        Value::Number(n) => match (header.parse::<f64>(), n.as_f64()) {
            (Ok(h), Some(a)) => h == a,
            _ => false,
        },
        _ => false,
    }
}

/// Rung 4: each `x-mcp-header` argument present in the call must be
/// repeated in its `Mcp-Param-<name>` header, and an absent one must have
/// no header.
pub fn check_param_headers(
    headers: &HeaderMap,
    registry: &Registry,
    params: &Value,
) -> Result<(), Refused> {
    let Some(tool) = params
        .get("name")
        .and_then(Value::as_str)
        .and_then(|name| registry.find(name))
    else {
        return Ok(());
    };
    let mut found = Vec::new();
    param_headers(
        &registry.tool(tool).def.input_schema,
        &mut Vec::new(),
        &mut found,
    );
    let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
    for (header, path) in found {
        let name = format!("mcp-param-{}", header.to_ascii_lowercase());
        let argument = path
            .iter()
            .try_fold(&arguments, |v, key| v.get(key))
            .filter(|v| !v.is_null());
        match (argument, single(headers, &name)?) {
            (None, None) => {}
            (Some(argument), Some(value)) => {
                if !matches_argument(&decode_value(value)?, argument) {
                    return Err(mismatch(format!(
                        "Header `Mcp-Param-{header}` does not match argument `{}`",
                        path.join(".")
                    )));
                }
            }
            (Some(_), None) => {
                return Err(mismatch(format!(
                    "Header `Mcp-Param-{header}` is required: the call gives argument `{}`",
                    path.join(".")
                )))
            }
            (None, Some(_)) => {
                return Err(mismatch(format!(
                    "Header `Mcp-Param-{header}` is given, but the call has no argument `{}`",
                    path.join(".")
                )))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::{HeaderName, HeaderValue};

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        map
    }

    fn call(name: &str) -> Value {
        json!({"name": name, "_meta": {META_VERSION: "2026-07-28", META_CAPABILITIES: {}}})
    }

    fn code(r: Result<(), Refused>) -> Option<i64> {
        r.err().and_then(|e| e["code"].as_i64())
    }

    #[test]
    fn routing_headers_must_repeat_the_body() {
        let ok = headers(&[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("Mcp-Name", "  echo\t"),
        ]);
        assert_eq!(check_routing(&ok, "tools/call", &call("echo")), Ok(()));
        let cases: &[&[(&str, &str)]] = &[
            &[("mcp-method", "tools/call"), ("mcp-name", "echo")],
            &[("mcp-protocol-version", "2026-07-28"), ("mcp-name", "echo")],
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "TOOLS/CALL"),
                ("mcp-name", "echo"),
            ],
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
            ],
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "other"),
            ],
            &[
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "echo"),
            ],
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "echo"),
            ],
        ];
        for case in cases {
            assert_eq!(
                code(check_routing(&headers(case), "tools/call", &call("echo"))),
                Some(HEADER_MISMATCH),
                "{case:?}"
            );
        }
    }

    #[test]
    fn base64_values_decode_strictly() {
        assert_eq!(decode_value("=?base64?SGVsbG8=?=").unwrap(), "Hello");
        assert!(decode_value("=?base64?SGVsbG8?=").is_err());
        assert!(decode_value("=?base64?SGVs!!!bG8=?=").is_err());
        assert_eq!(
            decode_value("=?base64?SGVsbG8=").unwrap(),
            "=?base64?SGVsbG8="
        );
        let h = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?w6ljaG8=?="),
        ]);
        assert_eq!(check_routing(&h, "tools/call", &call("écho")), Ok(()));
    }

    #[test]
    fn the_envelope_needs_version_and_capabilities() {
        assert_eq!(check_envelope(None, &call("x")), Ok(()));
        let bare = json!({"_meta": {META_VERSION: "2026-07-28"}});
        assert_eq!(
            code(check_envelope(None, &bare)),
            Some(jsonrpc::INVALID_PARAMS)
        );
        assert_eq!(
            code(check_envelope(None, &json!({}))),
            Some(jsonrpc::INVALID_PARAMS)
        );
    }

    #[test]
    fn param_headers_follow_the_arguments() {
        use crate::protocol::tool::ToolDef;
        let registry = Registry::new(vec![ToolDef {
            name: "weather".into(),
            description: Some("w".into()),
            input_schema: json!({"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "opts": {"type": "object", "properties": {"days": {"type": "integer", "x-mcp-header": "Days"}}},
                "city": {"type": "string"}
            }}),
            ..ToolDef::default()
        }])
        .unwrap();
        let params = |args: Value| json!({"name": "weather", "arguments": args});
        let both = headers(&[("Mcp-Param-Region", "eu-west"), ("mcp-param-days", "3")]);
        let args = json!({"region": "eu-west", "opts": {"days": 3}});
        assert_eq!(
            check_param_headers(&both, &registry, &params(args.clone())),
            Ok(())
        );
        let wrong = headers(&[("Mcp-Param-Region", "us"), ("mcp-param-days", "3")]);
        assert_eq!(
            code(check_param_headers(
                &wrong,
                &registry,
                &params(args.clone())
            )),
            Some(HEADER_MISMATCH)
        );
        let missing = headers(&[("mcp-param-days", "3.0")]);
        assert_eq!(
            code(check_param_headers(&missing, &registry, &params(args))),
            Some(HEADER_MISMATCH)
        );
        let stray = headers(&[("Mcp-Param-Region", "eu")]);
        assert_eq!(
            code(check_param_headers(
                &stray,
                &registry,
                &params(json!({"city": "x"}))
            )),
            Some(HEADER_MISMATCH)
        );
        assert_eq!(
            check_param_headers(&HeaderMap::new(), &registry, &params(json!({"city": "x"}))),
            Ok(())
        );
    }
}
