//! The convention for handing errors back to R, and the checks on
//! definitions shared by several modules. The predicates on single R values
//! (`is_flag()`, `is_named_list()`, ...) live beside `RValue` in rvalue.rs.
//!
//! Errors travel to R as values (a list of class `mcpserver_rust_error`)
//! and are raised by R itself, so no message ever reaches extendr's error
//! path, which treats it as a printf format (extendr 0.9.0: a `%s` in a
//! user's text would crash R).

use crate::rvalue::{element, RValue};
use crate::to_json;
use extendr_api::prelude::*;
use extendr_ffi::SEXPTYPE;
use std::time::Duration;

/// An error for R to raise with `stop()`.
pub fn fail(message: impl Into<String>) -> Robj {
    let message: String = message.into();
    let mut out = List::from_pairs(vec![("message", Robj::from(message))]).into_robj();
    // Setting a class on a fresh list cannot fail.
    let _ = out.set_class(&["mcpserver_rust_error"]);
    out
}

/// `NULL` for success, or the error.
pub fn outcome(result: Result<(), String>) -> Robj {
    match result {
        Ok(()) => ().into_robj(),
        Err(e) => fail(e),
    }
}

/// A span of seconds as a `Duration`. The R side checked it is a positive
/// number; anything past ~30 years is held there, which is never in
/// practice, and keeps `Instant + Duration` and `from_secs_f64` from panicking.
pub fn seconds(secs: f64) -> Duration {
    const LONGEST: f64 = 1e9;
    Duration::from_secs_f64(if secs.is_nan() {
        0.0
    } else {
        secs.clamp(0.0, LONGEST)
    })
}

/// Checks that a value can be written as JSON; the error names the path.
pub fn serialisable(x: RValue, what: &str) -> Result<(), String> {
    to_json::to_json(x)
        .map(|_| ())
        .map_err(|e| format!("`{what}` must be JSON serializable: {e}"))
}

/// Checks for `function`/`environment` values and classed lists anywhere
/// inside a schema given as an R list.
pub fn plain_schema_list(x: RValue, what: &str) -> Result<(), String> {
    match x.kind() {
        SEXPTYPE::VECSXP => {
            if x.has_class() {
                return Err(format!(
                    "`{what}` contains an unsupported classed list container."
                ));
            }
            for i in 0..x.len() {
                plain_schema_list(element(x, i), what)?;
            }
            Ok(())
        }
        SEXPTYPE::ENVSXP | SEXPTYPE::CLOSXP | SEXPTYPE::BUILTINSXP | SEXPTYPE::SPECIALSXP => {
            Err(format!(
            "`{what}` must be JSON serializable; functions and environments are not JSON values."
        ))
        }
        _ => Ok(()),
    }
}
