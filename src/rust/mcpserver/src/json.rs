//! JSON text in and out of R, for the R side's own use (schemas read by
//! `type_from_schema()`, printing definitions).

use crate::check;
use crate::from_json::{self, Shape};
use crate::rvalue::RValue;
use crate::to_json;
use extendr_api::prelude::*;
use serde_json::Value;

/// JSON text, indented for people or compact for the wire.
pub fn render(value: &Value, pretty: bool) -> String {
    if pretty {
        serde_json::to_string_pretty(value).unwrap_or_default()
    } else {
        value.to_string()
    }
}

/// An R value as JSON text (the mapping tool results use).
/// @noRd
#[extendr]
fn json_encode_(x: Robj, pretty: bool) -> Robj {
    match to_json::to_json(RValue::of(&x)) {
        Ok(text) if pretty => match serde_json::from_str::<Value>(&text) {
            Ok(v) => render(&v, true).into_robj(),
            Err(_) => text.into_robj(),
        },
        Ok(text) => text.into_robj(),
        Err(e) => check::fail(e.to_string()),
    }
}

/// JSON text as an R value, in mcplite's shapes (arrays as lists).
/// @noRd
#[extendr]
fn json_decode_(text: &str) -> Robj {
    match serde_json::from_str::<Value>(text) {
        // SAFETY: R's main thread, inside this .Call; the result is returned
        // straight to R.
        Ok(value) => unsafe { Robj::from_sexp(from_json::build(&value, &Shape::Raw)) },
        Err(e) => check::fail(format!("invalid JSON: {e}")),
    }
}

thread_local! {
    static VALIDATORS: std::cell::RefCell<std::collections::HashMap<String, jsonschema::Validator>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Problems found validating `instance` against `schema` (both JSON text),
/// for the tests that check every message against the MCP wire schemas.
/// Compiled schemas are kept, so repeated checks are cheap.
/// @noRd
#[extendr]
fn json_schema_problems_(schema: &str, instance: &str) -> Robj {
    let instance: Value = match serde_json::from_str(instance) {
        Ok(v) => v,
        Err(e) => return vec![format!("not JSON: {e}")].into_robj(),
    };
    VALIDATORS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if !cache.contains_key(schema) {
            let parsed: Value = match serde_json::from_str(schema) {
                Ok(v) => v,
                Err(e) => return vec![format!("schema is not JSON: {e}")].into_robj(),
            };
            match jsonschema::validator_for(&parsed) {
                Ok(v) => {
                    cache.insert(schema.to_string(), v);
                }
                Err(e) => return vec![format!("schema does not compile: {e}")].into_robj(),
            }
        }
        let validator = &cache[schema];
        let problems: Vec<String> = validator
            .iter_errors(&instance)
            .map(|e| format!("{} at `{}`", e, e.instance_path().as_str()))
            .collect();
        problems.into_robj()
    })
}

/// Base64 text of a raw vector (for image, audio and blob content).
/// @noRd
#[extendr]
fn base64_encode_(bytes: Raw) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes.as_slice())
}

extendr_module! {
    mod json;
    fn base64_encode_;
    fn json_encode_;
    fn json_decode_;
    fn json_schema_problems_;
}
