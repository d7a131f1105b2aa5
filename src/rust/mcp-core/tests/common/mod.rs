//! Helpers shared by the integration tests: checking what the server writes
//! against the official wire schema of each protocol revision.

#![allow(dead_code)]

pub mod harness;

use jsonschema::Validator;
use mcp_core::engine::result::{Block, ToolResult};
use mcp_core::engine::Outcome;
use mcp_core::protocol::revision::Revision;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// The official wire schemas, kept in the repository (see the README
/// there): `tests/testthat/schemas/<revision>/schema.json`.
pub fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/testthat/schemas")
}

type Cache = Mutex<HashMap<(Revision, String), std::sync::Arc<Validator>>>;
static VALIDATORS: OnceLock<Cache> = OnceLock::new();

/// A validator for one definition (`CallToolResult`, `JSONRPCError`, ...)
/// of one revision's schema. A missing schema fails the test.
pub fn definition(rev: Revision, name: &str) -> std::sync::Arc<Validator> {
    let cache = VALIDATORS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache.lock().unwrap();
    let key = (rev, name.to_string());
    if let Some(v) = cache.get(&key) {
        return v.clone();
    }
    let path = schema_dir().join(rev.as_str()).join("schema.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("wire schema {} is missing: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text).unwrap();
    let defs_key = if doc.get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    };
    let mut root = json!({ "$ref": format!("#/{defs_key}/{name}") });
    root[defs_key] = doc[defs_key].clone();
    if let Some(dialect) = doc.get("$schema") {
        root["$schema"] = dialect.clone();
    }
    assert!(
        doc[defs_key].get(name).is_some(),
        "{rev} has no definition {name}"
    );
    let v = std::sync::Arc::new(jsonschema::validator_for(&root).unwrap());
    cache.insert(key, v.clone());
    v
}

/// Asserts that `value` is a valid `name` of revision `rev`.
pub fn assert_valid(rev: Revision, name: &str, value: &Value) {
    let v = definition(rev, name);
    let errors: Vec<String> = v
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path().as_str()))
        .collect();
    assert!(
        errors.is_empty(),
        "{rev} {name} rejects {}:\n{}",
        truncate(&value.to_string()),
        errors.join("\n")
    );
}

fn truncate(s: &str) -> String {
    s.chars().take(600).collect()
}

/// Checks a message the server wrote. `result_type` names the definition
/// its `result` must satisfy (e.g. `CallToolResult`); errors are checked as
/// error responses of the revision.
pub fn check_message(rev: Revision, msg: &Value, result_type: Option<&str>) {
    if msg.get("error").is_some() {
        // Revisions before 2025-11-25 require an id even on errors, which a
        // response to an unreadable request cannot have: JSON-RPC says null.
        if msg["id"].is_null() && rev < Revision::V2025_11_25 {
            return;
        }
        let name = if rev >= Revision::V2025_11_25 {
            "JSONRPCErrorResponse"
        } else {
            "JSONRPCError"
        };
        let mut m = msg.clone();
        if m["id"].is_null() {
            m.as_object_mut().unwrap().remove("id");
        }
        assert_valid(rev, name, &m);
        return;
    }
    if let Some(result) = msg.get("result") {
        let envelope = if rev >= Revision::V2025_11_25 {
            "JSONRPCResultResponse"
        } else {
            "JSONRPCResponse"
        };
        assert_valid(rev, envelope, msg);
        if let Some(t) = result_type {
            assert_valid(rev, t, result);
        }
        return;
    }
    assert_valid(rev, "JSONRPCNotification", msg);
    if let Some(t) = result_type {
        assert_valid(rev, t, msg);
    }
}

/// A tool result with one text block.
pub fn text_result(text: &str) -> ToolResult {
    ToolResult {
        content: vec![Block::text(text)],
        structured: None,
        is_error: false,
        meta: None,
        vouched: Default::default(),
    }
}

/// A tool that finished with one text block.
pub fn done_text(text: &str) -> Outcome {
    Outcome::Done(text_result(text))
}

/// The `initialize` request of the test client ("t", version "1"), asking
/// for `version` with `capabilities`.
pub fn initialize_request(version: &str, capabilities: Value) -> Value {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":version,"capabilities":capabilities,"clientInfo":{"name":"t","version":"1"}}})
}

/// `notifications/initialized`.
pub fn initialized_notification() -> Value {
    json!({"jsonrpc":"2.0","method":"notifications/initialized"})
}

/// Runs `attempt` up to `tries` times, `pause` apart, until `done` holds
/// for what it gave; returns the last thing it gave (for the caller to
/// assert on, so a failure shows it).
pub fn retry<T>(
    tries: usize,
    pause: std::time::Duration,
    mut attempt: impl FnMut() -> T,
    done: impl Fn(&T) -> bool,
) -> T {
    let mut last = attempt();
    for _ in 1..tries {
        if done(&last) {
            break;
        }
        std::thread::sleep(pause);
        last = attempt();
    }
    last
}
