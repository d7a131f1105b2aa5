//! Whether what the directed writer wrote for a value conforms to the
//! output schema, told from the R value itself: a data frame by the type of
//! each column, a vector by its type, a named list field by field. So a
//! 100,000-row table is checked with one look per column, instead of its
//! 20 MB of JSON being read again and checked node by node.
//!
//! It answers only where the answer is certain: for parts whose schema is
//! exact (see [`crate::output::Node::exact`]) and values the writer maps
//! one way. Everything else is "not known", and the engine checks the
//! JSON against the schema as before. It relies on what the writer has
//! already refused: a missing value where the schema allows no `null` is
//! an error or a field left out, never a `null` written (see
//! [`super::to_json_directed`]), so only the JSON types matter here.

use super::atoms::{is_plain_vector, Atomic};
use crate::output::{Kind, Node, Object, Scalar};
use crate::rvalue::{element, RValue};
use extendr_ffi::SEXPTYPE;

/// Whether the JSON [`super::to_json_directed`] wrote for `x` under `plan`
/// certainly conforms to the schema the plan was made from. Call it only
/// for a value that was written without error.
pub fn conforms(x: RValue, plan: &Node) -> bool {
    if !plan.exact {
        return false;
    }
    if x.is_null() {
        // `[]` for an array, `null` where allowed; otherwise refused.
        return true;
    }
    match &plan.kind {
        Kind::Any => false,
        Kind::Scalar(scalar) => is_plain_vector(x) && x.len() == 1 && column_is(x, *scalar),
        Kind::Array(items) => array_conforms(x, items),
        Kind::Object(object) => object_conforms(x, object),
    }
}

fn array_conforms(x: RValue, items: &Node) -> bool {
    if !items.exact {
        return false;
    }
    if is_plain_vector(x) {
        return matches!(items.kind, Kind::Scalar(scalar) if column_is(x, scalar));
    }
    if x.kind() != SEXPTYPE::VECSXP || x.inherits("POSIXlt") {
        return false;
    }
    if x.inherits("data.frame") {
        return matches!(&items.kind, Kind::Object(object) if rows_conform(x, object));
    }
    // A list of items: each as its node says (`NULL` items are `null` or
    // refused by the writer).
    x.names().is_null() && (0..x.len()).all(|i| conforms(element(x, i), items))
}

/// A data frame written as rows: each declared column of a scalar field is
/// of its type, undeclared ones are allowed, required fields are columns.
fn rows_conform(x: RValue, object: &Object) -> bool {
    let names = x.names();
    let keys: Vec<String> = (0..x.len())
        .filter_map(|j| names.string(j).map(|s| s.into_owned()))
        .collect();
    if keys.len() != x.len() {
        return false;
    }
    let columns_fit = keys.iter().enumerate().all(|(j, key)| {
        let column = element(x, j);
        match object.field(key) {
            None => !object.closed,
            Some(field) => match field.node.kind {
                Kind::Scalar(scalar) => {
                    field.node.exact && is_plain_vector(column) && column_is(column, scalar)
                }
                _ => false,
            },
        }
    });
    columns_fit && required_present(object, &keys)
}

/// A named list written as an object: each member conforms to its field.
fn object_conforms(x: RValue, object: &Object) -> bool {
    if x.kind() != SEXPTYPE::VECSXP || x.inherits("data.frame") || x.inherits("POSIXlt") {
        return false;
    }
    let names = x.names();
    if names.is_null() {
        // `list()` is written as `{}`.
        return x.len() == 0 && required_present(object, &[]);
    }
    let keys: Vec<String> = (0..x.len())
        .filter_map(|i| names.string(i).map(|s| s.into_owned()))
        .collect();
    if keys.len() != x.len() {
        return false;
    }
    let members_fit = keys
        .iter()
        .enumerate()
        .all(|(i, key)| match object.field(key) {
            None => !object.closed,
            Some(field) => conforms(element(x, i), &field.node),
        });
    // A required field given as `NULL` is written as `null` or refused; an
    // optional one left out. So presence by name is enough.
    members_fit && required_present(object, &keys)
}

fn required_present(object: &Object, keys: &[String]) -> bool {
    object
        .fields
        .iter()
        .filter(|f| f.required)
        .all(|f| keys.contains(&f.name))
}

/// Whether every element of an atomic vector is written as a JSON value of
/// the scalar type (missing ones as `null`, which the writer allows only
/// where the schema does).
fn column_is(x: RValue, scalar: Scalar) -> bool {
    match (Atomic::new(x), scalar) {
        (Atomic::Double(_) | Atomic::Integer(_), Scalar::Number) => true,
        (Atomic::Integer(_), Scalar::Integer) => true,
        // Integral doubles below 1e17 are written as integer literals.
        (Atomic::Double(values), Scalar::Integer) => values
            .iter()
            .all(|v| !v.is_finite() || (v.fract() == 0.0 && v.abs() < 1e17)),
        (Atomic::String(_) | Atomic::Factor(..), Scalar::String) => true,
        (Atomic::Logical(_), Scalar::Boolean) => true,
        _ => false,
    }
}
