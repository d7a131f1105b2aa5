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

extendr_module! {
    mod json;
    fn json_encode_;
    fn json_decode_;
}
