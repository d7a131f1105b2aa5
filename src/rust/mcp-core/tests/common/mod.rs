//! Helpers shared by the integration tests: checking what the server writes
//! against the official wire schema of each protocol revision.

#![allow(dead_code)]

use jsonschema::Validator;
use mcp_core::engine::Outcome;
use mcp_core::result::{Block, ToolResult};
use mcp_core::revision::Revision;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// `../shared/mcp-schema` from the project root, or `$MCP_SCHEMA_DIR`.
pub fn schema_dir() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("MCP_SCHEMA_DIR") {
        return Some(PathBuf::from(dir)).filter(|p| p.is_dir());
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let dir = root.join("../shared/mcp-schema");
    dir.is_dir().then_some(dir)
}

static WARNED: OnceLock<()> = OnceLock::new();
type Cache = Mutex<HashMap<(Revision, String), std::sync::Arc<Validator>>>;
static VALIDATORS: OnceLock<Cache> = OnceLock::new();

/// A validator for one definition (`CallToolResult`, `JSONRPCError`, ...)
/// of one revision's schema, or `None` when the schemas are not available.
pub fn definition(rev: Revision, name: &str) -> Option<std::sync::Arc<Validator>> {
    let Some(dir) = schema_dir() else {
        WARNED.get_or_init(|| {
            eprintln!(
                "wire-schema checks skipped: ../shared/mcp-schema not found (set MCP_SCHEMA_DIR)"
            )
        });
        return None;
    };
    let cache = VALIDATORS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache.lock().unwrap();
    let key = (rev, name.to_string());
    if let Some(v) = cache.get(&key) {
        return Some(v.clone());
    }
    let text = std::fs::read_to_string(dir.join(rev.as_str()).join("schema.json")).unwrap();
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
    Some(v)
}

/// Asserts that `value` is a valid `name` of revision `rev`.
pub fn assert_valid(rev: Revision, name: &str, value: &Value) {
    let Some(v) = definition(rev, name) else {
        return;
    };
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
    }
}

/// A tool that finished with one text block.
pub fn done_text(text: &str) -> Outcome {
    Outcome::Done(text_result(text))
}
