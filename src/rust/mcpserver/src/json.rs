//! JSON text in and out of R, for the R side's own use (schemas read by
//! `type_from_schema()`, printing definitions).

use crate::check;
use crate::from_json;
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

/// JSON text as an R value, in mcplite's shapes (arrays as lists), or an
/// error (invalid JSON, or text R cannot hold, such as a NUL character).
/// @noRd
#[extendr]
fn json_decode_(text: &str) -> Robj {
    let value = match serde_json::from_str::<Value>(text) {
        Ok(value) => value,
        Err(e) => return check::fail(format!("invalid JSON: {e}")),
    };
    // SAFETY: R's main thread, inside this .Call; the result is returned
    // straight to R.
    match unsafe { from_json::build_raw(&value, "$") } {
        Ok(built) => unsafe { Robj::from_sexp(built) },
        Err(e) => check::fail(format!("JSON that R cannot hold: {e}")),
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
    // The R vector is built after the cache's borrow has ended: no borrow
    // may be alive where R can raise an error.
    schema_problems(schema, instance).into_robj()
}

fn schema_problems(schema: &str, instance: &str) -> Vec<String> {
    let instance: Value = match serde_json::from_str(instance) {
        Ok(v) => v,
        Err(e) => return vec![format!("not JSON: {e}")],
    };
    VALIDATORS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if !cache.contains_key(schema) {
            let parsed: Value = match serde_json::from_str(schema) {
                Ok(v) => v,
                Err(e) => return vec![format!("schema is not JSON: {e}")],
            };
            match jsonschema::validator_for(&parsed) {
                Ok(v) => {
                    cache.insert(schema.to_string(), v);
                }
                Err(e) => return vec![format!("schema does not compile: {e}")],
            }
        }
        cache[schema]
            .iter_errors(&instance)
            .map(|e| format!("{} at `{}`", e, e.instance_path().as_str()))
            // Messages quote the instance, which may hold a NUL.
            .map(|p| p.replace('\0', "\\u0000"))
            .collect()
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
