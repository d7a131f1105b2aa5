//! JSON values to R values: checked (integers R can hold), then built.
//!
//! Two modes. *Raw* keeps mcplite's shapes: arrays become lists and numbers
//! that fit become integers. *Shaped* follows the tool's declared types:
//! `type_number()` gives a double even for `3`, `type_integer()` an integer,
//! and an array of a scalar type an atomic vector (`sum(x)` just works).

use extendr_ffi::{
    cetype_t, R_NaInt, R_NaReal, R_NaString, R_NamesSymbol, R_NilValue, Rf_allocVector,
    Rf_mkCharLenCE, Rf_protect, Rf_setAttrib, Rf_unprotect, INTEGER, LOGICAL, REAL, SET_STRING_ELT,
    SET_VECTOR_ELT, SEXP, SEXPTYPE,
};
use serde_json::{Map, Value};
use std::fmt::Write;

/// How a JSON value of a declared type becomes an R value.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// mcplite's shapes (arrays as lists); for `type_from_schema()` parts
    /// and tools with `convert = FALSE`.
    Raw,
    Number,
    Integer,
    String,
    Boolean,
    Array(Box<Shape>),
    Object(Vec<(String, Shape)>),
}

impl Shape {
    pub(crate) fn property(&self, name: &str) -> &Shape {
        match self {
            Shape::Object(props) => props
                .iter()
                .find(|(n, _)| n == name)
                .map_or(&Shape::Raw, |(_, s)| s),
            _ => &Shape::Raw,
        }
    }

    fn item(&self) -> &Shape {
        match self {
            Shape::Array(item) => item,
            _ => &Shape::Raw,
        }
    }

    pub(crate) fn is_scalar(&self) -> bool {
        matches!(
            self,
            Shape::Number | Shape::Integer | Shape::String | Shape::Boolean
        )
    }
}

/// Checks that every value can become its R value before anything is
/// built, so building can neither fail half-way nor raise an R error (which
/// would unwind through Rust frames): integers of an integer shape must fit
/// R's range, and no string or name may hold a NUL character, which R
/// strings cannot. The error names the value's path.
pub fn check(value: &Value, shape: &Shape, path: &mut String) -> Result<(), String> {
    match (shape, value) {
        (Shape::Integer, Value::Number(n)) => integer_fits(n, path),
        (_, Value::String(s)) => no_nul(s, path),
        (_, Value::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                let len = path.len();
                let _ = write!(path, "[{i}]");
                check(v, shape.item(), path)?;
                path.truncate(len);
            }
            Ok(())
        }
        (_, Value::Object(map)) => {
            for (k, v) in map {
                let len = path.len();
                path.push('.');
                push_name(path, k);
                if k.contains('\0') {
                    return Err(format!("{path}: {NUL_IN_NAME}"));
                }
                check(v, shape.property(k), path)?;
                path.truncate(len);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

const NUL_IN_TEXT: &str = "text with a NUL character (\\u0000), which R strings cannot hold";
const NUL_IN_NAME: &str = "a name with a NUL character (\\u0000), which R names cannot hold";

fn no_nul(s: &str, path: &str) -> Result<(), String> {
    if s.contains('\0') {
        Err(format!("{path}: {NUL_IN_TEXT}"))
    } else {
        Ok(())
    }
}

fn integer_fits(n: &serde_json::Number, path: &str) -> Result<(), String> {
    let fits = match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => i > i32::MIN as i64 && i <= i32::MAX as i64,
        (None, Some(f)) => f.fract() == 0.0 && f > i32::MIN as f64 && f <= i32::MAX as f64,
        _ => false,
    };
    if fits {
        Ok(())
    } else {
        Err(format!("{path}: {n} does not fit in an R integer"))
    }
}

/// Appends a client's name to a path, NUL shown escaped: the path ends up
/// in messages that become R strings.
fn push_name(path: &mut String, name: &str) {
    for c in name.chars() {
        match c {
            '\0' => path.push_str("\\u0000"),
            c => path.push(c),
        }
    }
}

/// A value in mcplite's raw shapes, checked first (see [`check`]); `what`
/// names it in the error, and nothing is built then.
///
/// # Safety
/// R's main thread only. The result is unprotected.
pub unsafe fn build_raw(value: &Value, what: &str) -> Result<SEXP, String> {
    let mut path = what.to_string();
    check(value, &Shape::Raw, &mut path)?;
    Ok(build(value, &Shape::Raw))
}

/// The declared shape of one argument; undeclared ones are taken as sent.
fn shape_of<'a>(shapes: &'a [(String, Shape)], name: &str) -> &'a Shape {
    shapes
        .iter()
        .find(|(n, _)| n == name)
        .map_or(&Shape::Raw, |(_, s)| s)
}

/// What keeps a call's arguments from becoming R values (integers R cannot
/// hold, NUL characters), one line per argument; empty when they all fit.
pub fn check_arguments(args: &Map<String, Value>, shapes: &[(String, Shape)]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut path = String::new();
    for (name, value) in args {
        path.clear();
        push_name(&mut path, name);
        let checked = if name.contains('\0') {
            Err(format!("{path}: {NUL_IN_NAME}"))
        } else {
            check(value, shape_of(shapes, name), &mut path)
        };
        if let Err(e) = checked {
            problems.push(e);
        }
    }
    problems
}

/// The named list of arguments for a tool call: each declared argument by
/// its shape, anything else raw. `null` arguments are left out so the R
/// default applies, except those declared with a type: a `null` reaching
/// here is one the schema allows for a required argument (the engine drops
/// optional ones), which arrives as `NA` of its type, or `NULL`.
///
/// # Safety
/// R's main thread only. The result is unprotected.
pub unsafe fn arguments(args: &Map<String, Value>, shapes: &[(String, Shape)]) -> SEXP {
    let present: Vec<(&String, &Value)> = args
        .iter()
        .filter(|(name, v)| !v.is_null() || *shape_of(shapes, name) != Shape::Raw)
        .collect();
    let list = Rf_protect(Rf_allocVector(SEXPTYPE::VECSXP, present.len() as isize));
    let names = Rf_protect(Rf_allocVector(SEXPTYPE::STRSXP, present.len() as isize));
    for (i, (name, value)) in present.iter().enumerate() {
        SET_STRING_ELT(names, i as isize, mk_char(name));
        SET_VECTOR_ELT(list, i as isize, build(value, shape_of(shapes, name)));
    }
    Rf_setAttrib(list, R_NamesSymbol, names);
    Rf_unprotect(2);
    list
}

/// `list(id =, tool =, arguments =)`, the tool call `poll()` hands R,
/// built with R's API alone: every extendr value made on the way would
/// cost an insert into, and a removal from, extendr's table of protected
/// objects, on R's thread, for each call.
///
/// # Safety
/// R's main thread only; `check_arguments` must have found no problem.
/// The result is unprotected.
pub unsafe fn tool_call(
    id: f64,
    tool: i32,
    args: &Map<String, Value>,
    shapes: &[(String, Shape)],
) -> SEXP {
    tool_call_of(id, tool, arguments(args, shapes))
}

/// `list(id =, tool =, arguments =)` around arguments already built.
///
/// # Safety
/// R's main thread only. `arguments` and the result are unprotected.
pub unsafe fn tool_call_of(id: f64, tool: i32, arguments: SEXP) -> SEXP {
    let arguments = Rf_protect(arguments);
    let call = Rf_protect(Rf_allocVector(SEXPTYPE::VECSXP, 3));
    SET_VECTOR_ELT(call, 0, real(id));
    SET_VECTOR_ELT(call, 1, integer(tool));
    SET_VECTOR_ELT(call, 2, arguments);
    let names = Rf_protect(Rf_allocVector(SEXPTYPE::STRSXP, 3));
    for (i, name) in ["id", "tool", "arguments"].iter().enumerate() {
        SET_STRING_ELT(names, i as isize, mk_char(name));
    }
    Rf_setAttrib(call, R_NamesSymbol, names);
    Rf_unprotect(3);
    call
}

/// Builds one R value.
///
/// # Safety
/// R's main thread only; `check` must have passed. The result is unprotected.
pub unsafe fn build(value: &Value, shape: &Shape) -> SEXP {
    match (shape, value) {
        (Shape::Number, Value::Number(n)) => real(n.as_f64().unwrap_or(f64::NAN)),
        (Shape::Integer, Value::Number(n)) => integer(n.as_f64().unwrap_or(0.0) as i32),
        (Shape::Array(item), Value::Array(items)) if item.is_scalar() => {
            atomic_vector(items, item).unwrap_or_else(|| list(items, item))
        }
        (Shape::Array(item), Value::Array(items)) => list(items, item),
        (Shape::Object(_), Value::Object(map)) => object(map, shape),
        // `null` where the schema allows it (`nullable = TRUE`): NA of the type.
        (item, Value::Null) if item.is_scalar() => {
            atomic_vector(std::slice::from_ref(value), item).unwrap_or(R_NilValue)
        }
        _ => raw(value),
    }
}

/// mcplite's mapping.
unsafe fn raw(value: &Value) -> SEXP {
    match value {
        Value::Null => R_NilValue,
        Value::Bool(b) => logical(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) if i > i32::MIN as i64 && i <= i32::MAX as i64 => integer(i as i32),
            _ => real(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => string(s),
        Value::Array(items) => list(items, &Shape::Raw),
        Value::Object(map) => object(map, &Shape::Raw),
    }
}

unsafe fn list(items: &[Value], item: &Shape) -> SEXP {
    let out = Rf_protect(Rf_allocVector(SEXPTYPE::VECSXP, items.len() as isize));
    for (i, v) in items.iter().enumerate() {
        SET_VECTOR_ELT(out, i as isize, build(v, item));
    }
    Rf_unprotect(1);
    out
}

unsafe fn object(map: &Map<String, Value>, shape: &Shape) -> SEXP {
    let out = Rf_protect(Rf_allocVector(SEXPTYPE::VECSXP, map.len() as isize));
    let names = Rf_protect(Rf_allocVector(SEXPTYPE::STRSXP, map.len() as isize));
    for (i, (k, v)) in map.iter().enumerate() {
        SET_STRING_ELT(names, i as isize, mk_char(k));
        SET_VECTOR_ELT(out, i as isize, build(v, shape.property(k)));
    }
    // An empty object keeps `names = character(0)`, which tells it from `[]`.
    Rf_setAttrib(out, R_NamesSymbol, names);
    Rf_unprotect(2);
    out
}

/// An atomic vector from an array of scalars (`null` becomes `NA`); `None`
/// if some element is not of the item type.
unsafe fn atomic_vector(items: &[Value], item: &Shape) -> Option<SEXP> {
    let n = items.len() as isize;
    let fits = items.iter().all(|v| {
        matches!(
            (item, v),
            (_, Value::Null)
                | (Shape::Number | Shape::Integer, Value::Number(_))
                | (Shape::String, Value::String(_))
                | (Shape::Boolean, Value::Bool(_))
        )
    });
    if !fits {
        return None;
    }
    Some(match item {
        Shape::Number => {
            let out = Rf_allocVector(SEXPTYPE::REALSXP, n);
            let data = std::slice::from_raw_parts_mut(REAL(out), items.len());
            for (slot, v) in data.iter_mut().zip(items) {
                *slot = v.as_f64().unwrap_or(R_NaReal);
            }
            out
        }
        Shape::Integer => {
            let out = Rf_allocVector(SEXPTYPE::INTSXP, n);
            let data = std::slice::from_raw_parts_mut(INTEGER(out), items.len());
            for (slot, v) in data.iter_mut().zip(items) {
                *slot = v.as_f64().map_or(R_NaInt, |f| f as i32);
            }
            out
        }
        Shape::Boolean => {
            let out = Rf_allocVector(SEXPTYPE::LGLSXP, n);
            let data = std::slice::from_raw_parts_mut(LOGICAL(out), items.len());
            for (slot, v) in data.iter_mut().zip(items) {
                *slot = v.as_bool().map_or(R_NaInt, i32::from);
            }
            out
        }
        _ => {
            let out = Rf_protect(Rf_allocVector(SEXPTYPE::STRSXP, n));
            for (i, v) in items.iter().enumerate() {
                let c = v.as_str().map_or(R_NaString, |s| mk_char(s));
                SET_STRING_ELT(out, i as isize, c);
            }
            Rf_unprotect(1);
            out
        }
    })
}

pub(crate) unsafe fn mk_char(s: &str) -> SEXP {
    Rf_mkCharLenCE(s.as_ptr() as *const _, s.len() as i32, cetype_t::CE_UTF8)
}

unsafe fn string(s: &str) -> SEXP {
    let out = Rf_protect(Rf_allocVector(SEXPTYPE::STRSXP, 1));
    SET_STRING_ELT(out, 0, mk_char(s));
    Rf_unprotect(1);
    out
}

unsafe fn real(x: f64) -> SEXP {
    let out = Rf_allocVector(SEXPTYPE::REALSXP, 1);
    *REAL(out) = x;
    out
}

unsafe fn integer(x: i32) -> SEXP {
    let out = Rf_allocVector(SEXPTYPE::INTSXP, 1);
    *INTEGER(out) = x;
    out
}

unsafe fn logical(x: bool) -> SEXP {
    let out = Rf_allocVector(SEXPTYPE::LGLSXP, 1);
    *LOGICAL(out) = i32::from(x);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn checked(value: Value, shape: Shape) -> Result<(), String> {
        check(&value, &shape, &mut "x".to_string())
    }

    #[test]
    fn integers_must_fit_in_r() {
        assert!(checked(json!(5), Shape::Integer).is_ok());
        assert!(checked(json!(5.0), Shape::Integer).is_ok());
        assert!(checked(json!(2147483647), Shape::Integer).is_ok());
        assert_eq!(
            checked(json!(3000000000u64), Shape::Integer).unwrap_err(),
            "x: 3000000000 does not fit in an R integer"
        );
        assert!(
            checked(json!(-2147483648i64), Shape::Integer).is_err(),
            "that is NA_integer_"
        );
        let nested = Shape::Object(vec![("n".into(), Shape::Array(Box::new(Shape::Integer)))]);
        assert_eq!(
            checked(json!({"n":[1, 2, 1e10]}), nested).unwrap_err(),
            "x.n[2]: 10000000000.0 does not fit in an R integer"
        );
    }

    #[test]
    fn nul_characters_are_refused_wherever_they_are_with_their_path() {
        assert!(checked(json!({"a": ["ok", {"b": "fine"}]}), Shape::Raw).is_ok());
        assert_eq!(
            checked(json!("a\0b"), Shape::String).unwrap_err(),
            "x: text with a NUL character (\\u0000), which R strings cannot hold"
        );
        let deep = json!({"a": [1, {"b": ["ok", "no\0"]}]});
        assert_eq!(
            checked(deep.clone(), Shape::Raw).unwrap_err(),
            "x.a[1].b[1]: text with a NUL character (\\u0000), which R strings cannot hold"
        );
        let shaped = Shape::Object(vec![("a".into(), Shape::Array(Box::new(Shape::Raw)))]);
        assert!(
            checked(deep, shaped).is_err(),
            "shaped values are checked too"
        );
        let tags = Shape::Array(Box::new(Shape::String));
        assert_eq!(
            checked(json!(["a", "\0"]), tags).unwrap_err(),
            "x[1]: text with a NUL character (\\u0000), which R strings cannot hold"
        );
        // The name itself is shown escaped: the message becomes an R string.
        assert_eq!(
            checked(json!({"ok": 1, "k\0ey": 2}), Shape::Raw).unwrap_err(),
            "x.k\\u0000ey: a name with a NUL character (\\u0000), which R names cannot hold"
        );
    }

    #[test]
    fn argument_names_and_values_with_nul_are_problems_not_crashes() {
        let args = json!({"te\0xt": "a", "fine": "b", "value": {"k": "c\0"}});
        let Value::Object(args) = args else {
            unreachable!()
        };
        let problems = check_arguments(&args, &[]);
        assert_eq!(
            problems,
            vec![
                "te\\u0000xt: a name with a NUL character (\\u0000), which R names cannot hold",
                "value.k: text with a NUL character (\\u0000), which R strings cannot hold",
            ]
        );
        assert!(problems.iter().all(|p| !p.contains('\0')));
    }
}
