//! Small predicates on R values shared by the definition checks, and the
//! convention for handing errors back to R.
//!
//! Errors travel to R as values (a list of class `mcpserver_rust_error`)
//! and are raised by R itself, so no message ever reaches extendr's error
//! path, which treats it as a printf format (extendr 0.9.0: a `%s` in a
//! user's text would crash R).

use crate::rvalue::RValue;
use crate::to_json;
use extendr_api::prelude::*;
use extendr_ffi::{LOGICAL, REAL, SEXPTYPE};
use std::collections::HashSet;
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

pub fn is_single_string(x: RValue) -> bool {
    x.as_single_string().is_some()
}

pub fn is_non_empty_string(x: RValue) -> bool {
    x.as_single_string().is_some_and(|s| !s.is_empty())
}

/// `TRUE` or `FALSE` (not `NA`).
pub fn is_flag(x: RValue) -> bool {
    // SAFETY: reading one element of a length-1 logical vector.
    x.kind() == SEXPTYPE::LGLSXP && x.len() == 1 && unsafe { *LOGICAL(x.0) } != i32::MIN
}

pub fn flag_value(x: RValue) -> bool {
    is_flag(x) && unsafe { *LOGICAL(x.0) } == 1
}

/// A single finite number (integer or double).
pub fn single_number(x: RValue) -> Option<f64> {
    if x.len() != 1 || x.has_class() {
        return None;
    }
    // SAFETY: one element of a vector of the matching type.
    let v = match x.kind() {
        SEXPTYPE::REALSXP => unsafe { *REAL(x.0) },
        SEXPTYPE::INTSXP => match unsafe { *extendr_ffi::INTEGER(x.0) } {
            i32::MIN => return None,
            i => i as f64,
        },
        _ => return None,
    };
    v.is_finite().then_some(v)
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

pub fn is_list(x: RValue) -> bool {
    x.kind() == SEXPTYPE::VECSXP
}

/// A list that is empty or whose elements all have non-empty names.
pub fn is_named_list(x: RValue) -> bool {
    is_list(x) && (x.len() == 0 || names_complete(x))
}

fn names_complete(x: RValue) -> bool {
    let names = x.names();
    names.kind() == SEXPTYPE::STRSXP
        && (0..names.len()).all(|i| names.string(i).is_some_and(|n| !n.is_empty()))
}

fn names_unique(x: RValue) -> bool {
    let names = x.names();
    let mut seen = HashSet::new();
    (0..names.len()).all(|i| seen.insert(names.string(i).unwrap_or_default().into_owned()))
}

/// What becomes a JSON object: an unclassed list, empty or with unique,
/// non-empty names.
pub fn is_json_object(x: RValue) -> bool {
    is_list(x) && !x.has_class() && (x.len() == 0 || (names_complete(x) && names_unique(x)))
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
                plain_schema_list(crate::types::element(x, i), what)?;
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
