//! Large arguments straight from their JSON text to R values, with no
//! `serde_json::Value` tree in between: an array of numbers becomes a
//! double vector allocated once at its length (counted on the text) and
//! filled as the numbers are read; arrays of objects and objects are read
//! member by member, each value built from its own slice of the text.
//!
//! The engine has checked the text against the tool's input schema already
//! (`mcp_core::engine::Job::check_arguments`). What [`crate::from_json::check`]
//! refuses beyond the schema (integers R cannot hold, NUL characters) and
//! anything this reader does not expect (a name given twice, an item of
//! another type) make it give up before the call reaches R: the caller
//! then reads the text the way small arguments are read, which finds the
//! same problems with the same messages.

use crate::compact_numbers;
use crate::from_json::{build, check, mk_char, Shape};
use extendr_ffi::{
    R_NaInt, R_NaReal, R_NaString, R_NamesSymbol, R_NilValue, Rf_allocVector, Rf_getAttrib,
    Rf_protect, Rf_setAttrib, Rf_unprotect, Rf_xlength, INTEGER, LOGICAL, REAL, R_CHAR,
    SET_STRING_ELT, SET_VECTOR_ELT, SEXP, SEXPTYPE, STRING_ELT, TYPEOF, VECTOR_ELT,
};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;
use std::fmt;

/// Reading straight from the text gave up; read it the small way instead.
#[derive(Debug)]
pub struct GiveUp;

/// Unprotects what it counts when dropped, on every way out.
struct Protected(i32);

impl Protected {
    /// # Safety
    /// R's main thread only.
    unsafe fn keep(&mut self, x: SEXP) -> SEXP {
        self.0 += 1;
        Rf_protect(x)
    }
}

impl Drop for Protected {
    fn drop(&mut self) {
        // SAFETY: balances this guard's own Rf_protect calls, on R's thread.
        unsafe { Rf_unprotect(self.0) }
    }
}

/// The named list of a call's arguments, read from the arguments object
/// as sent: optional arguments sent as `null` are left out (as the engine
/// leaves them out of arguments it reads), and so are undeclared `null`s
/// (as [`crate::from_json::arguments`] does).
///
/// # Safety
/// R's main thread only. The result is unprotected.
pub unsafe fn arguments(
    text: &str,
    shapes: &[(String, Shape)],
    required: &[String],
) -> Result<SEXP, GiveUp> {
    let shape_of = |name: &str| {
        shapes
            .iter()
            .find(|(n, _)| n == name)
            .map_or(&Shape::Raw, |(_, s)| s)
    };
    let members = members(text)?;
    let present: Vec<&(String, &RawValue)> = members
        .iter()
        .filter(|(name, value)| {
            let null = value.get() == "null";
            !null || (required.contains(name) && *shape_of(name) != Shape::Raw)
        })
        .collect();
    object_of(&present, |name| shape_of(name), R_NilValue)
}

/// An object's members in order, their values unread; a name given twice
/// or holding a NUL gives up.
fn members(text: &str) -> Result<Vec<(String, &RawValue)>, GiveUp> {
    let Members(members) = serde_json::from_str(text).map_err(|_| GiveUp)?;
    for (i, (name, _)) in members.iter().enumerate() {
        if name.contains('\0') || members[..i].iter().any(|(n, _)| n == name) {
            return Err(GiveUp);
        }
    }
    Ok(members)
}

struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(MembersVisitor)
    }
}

/// A named list of members, each built as its shape says. `like` is the
/// names vector of the previous item of the same array (or `R_NilValue`):
/// when the names are the same, in the same order, the list shares it, so
/// an array of many small objects holds one names vector, not one each
/// (R copies a shared vector before changing it).
///
/// # Safety
/// R's main thread only; `like` is protected. The result is unprotected.
unsafe fn object_of<'s, M: std::borrow::Borrow<(String, &'s RawValue)>>(
    members: &[M],
    shape_of: impl Fn(&str) -> &'s Shape,
    like: SEXP,
) -> Result<SEXP, GiveUp> {
    let mut guard = Protected(0);
    let n = members.len() as isize;
    let out = guard.keep(Rf_allocVector(SEXPTYPE::VECSXP, n));
    let shared = n > 0 && same_names(like, members);
    let names = if shared {
        like
    } else {
        guard.keep(Rf_allocVector(SEXPTYPE::STRSXP, n))
    };
    for (i, member) in members.iter().enumerate() {
        let (name, value) = member.borrow();
        if !shared {
            SET_STRING_ELT(names, i as isize, mk_char(name));
        }
        SET_VECTOR_ELT(out, i as isize, value_of(value.get(), shape_of(name))?);
    }
    Rf_setAttrib(out, R_NamesSymbol, names);
    Ok(out)
}

/// Whether the character vector `names` holds the members' names in order.
///
/// # Safety
/// R's main thread only.
unsafe fn same_names<'s, M: std::borrow::Borrow<(String, &'s RawValue)>>(
    names: SEXP,
    members: &[M],
) -> bool {
    TYPEOF(names) == SEXPTYPE::STRSXP
        && Rf_xlength(names) == members.len() as isize
        && members.iter().enumerate().all(|(i, member)| {
            let name = STRING_ELT(names, i as isize);
            let bytes = std::ffi::CStr::from_ptr(R_CHAR(name)).to_bytes();
            bytes == member.borrow().0.as_bytes()
        })
}

/// One value from its text, as `shape` says.
///
/// # Safety
/// R's main thread only. The result is unprotected.
unsafe fn value_of(text: &str, shape: &Shape) -> Result<SEXP, GiveUp> {
    value_like(text, shape, R_NilValue)
}

/// One value from its text, as `shape` says; an object shares the names
/// vector `like` if its names are the same (see [`object_of`]).
///
/// # Safety
/// R's main thread only; `like` is protected. The result is unprotected.
unsafe fn value_like(text: &str, shape: &Shape, like: SEXP) -> Result<SEXP, GiveUp> {
    match shape {
        Shape::Array(item) if text.starts_with('[') && item.is_scalar() => atomic(text, item),
        Shape::Array(item) if text.starts_with('[') => list(text, item),
        Shape::Object(_) if text.starts_with('{') => {
            let members = members(text)?;
            object_of(&members, |name| shape.property(name), like)
        }
        // Scalars, `null`s and raw parts: small, or read as mcplite did.
        _ => {
            let value: Value = serde_json::from_str(text).map_err(|_| GiveUp)?;
            check(&value, shape, &mut String::new()).map_err(|_| GiveUp)?;
            Ok(build(&value, shape))
        }
    }
}

/// How many items the array `text` holds, counted on the text.
fn count_items(text: &str) -> usize {
    let (mut depth, mut commas, mut any) = (0usize, 0usize, false);
    let (mut in_string, mut escaped) = (false, false);
    for &c in text.as_bytes() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
            }
            continue;
        }
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {}
            b',' if depth == 1 => commas += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {
                any |= depth == 1;
                match c {
                    b'"' => in_string = true,
                    b'[' | b'{' => depth += 1,
                    _ => {}
                }
            }
        }
    }
    if any {
        commas + 1
    } else {
        0
    }
}

/// An atomic vector of the item type, allocated at the array's length and
/// filled as the items are read (`null` as `NA`); a long array of short
/// decimals is held compactly instead (see [`compact_numbers`]).
///
/// # Safety
/// R's main thread only; `item` is a scalar shape. The result is unprotected.
unsafe fn atomic(text: &str, item: &Shape) -> Result<SEXP, GiveUp> {
    let integers = match item {
        Shape::Number => Some(false),
        Shape::Integer => Some(true),
        _ => None,
    };
    if let Some(compact) = integers.and_then(|integers| compact_numbers::read(text, integers)) {
        return Ok(compact);
    }
    let n = count_items(text);
    let kind = match item {
        Shape::Number => SEXPTYPE::REALSXP,
        Shape::Integer => SEXPTYPE::INTSXP,
        Shape::Boolean => SEXPTYPE::LGLSXP,
        _ => SEXPTYPE::STRSXP,
    };
    let mut guard = Protected(0);
    let out = guard.keep(Rf_allocVector(kind, n as isize));
    let mut de = serde_json::Deserializer::from_str(text);
    let filled = de
        .deserialize_seq(Fill { out, item, n })
        .map_err(|_| GiveUp)?;
    de.end().map_err(|_| GiveUp)?;
    if filled != n {
        return Err(GiveUp);
    }
    Ok(out)
}

/// Fills an atomic vector from an array's items; gives the count read.
struct Fill<'a> {
    out: SEXP,
    item: &'a Shape,
    n: usize,
}

impl<'de> Visitor<'de> for Fill<'_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut i = 0;
        loop {
            if i == self.n {
                // One more than counted: refused by the caller.
                return Ok(i + usize::from(seq.next_element::<IgnoredAny>()?.is_some()));
            }
            let cell = Cell {
                out: self.out,
                item: self.item,
                i,
            };
            if seq.next_element_seed(cell)?.is_none() {
                return Ok(i);
            }
            i += 1;
        }
    }
}

/// One item of an atomic vector, written in place.
struct Cell<'a> {
    out: SEXP,
    item: &'a Shape,
    i: usize,
}

impl<'de> DeserializeSeed<'de> for Cell<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

fn misfit<E: de::Error>() -> E {
    E::custom("not of the item type")
}

impl Cell<'_> {
    /// # Safety
    /// R's main thread only; `out` is a vector of the item's type longer than `i`.
    unsafe fn number(&self, x: f64) {
        *REAL(self.out).add(self.i) = x;
    }

    unsafe fn integer(&self, x: i32) {
        *INTEGER(self.out).add(self.i) = x;
    }

    fn fits_integer(x: f64) -> Option<i32> {
        (x.fract() == 0.0 && x > i32::MIN as f64 && x <= i32::MAX as f64).then_some(x as i32)
    }
}

impl<'de> Visitor<'de> for Cell<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a scalar")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        // SAFETY (every visit): R's main thread; `out` was allocated
        // with the item's type and the counted length, and `i` is below it.
        match self.item {
            Shape::Number => unsafe { self.number(v as f64) },
            Shape::Integer if v > i32::MIN as i64 && v <= i32::MAX as i64 => unsafe {
                self.integer(v as i32)
            },
            _ => return Err(misfit()),
        }
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        match self.item {
            Shape::Number => unsafe { self.number(v as f64) },
            Shape::Integer if v <= i32::MAX as u64 => unsafe { self.integer(v as i32) },
            _ => return Err(misfit()),
        }
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        match (self.item, Cell::fits_integer(v)) {
            (Shape::Number, _) => unsafe { self.number(v) },
            (Shape::Integer, Some(i)) => unsafe { self.integer(i) },
            _ => return Err(misfit()),
        }
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        match self.item {
            Shape::Boolean => unsafe { *LOGICAL(self.out).add(self.i) = i32::from(v) },
            _ => return Err(misfit()),
        }
        Ok(())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        match self.item {
            Shape::String if !v.contains('\0') => unsafe {
                SET_STRING_ELT(self.out, self.i as isize, mk_char(v))
            },
            _ => return Err(misfit()),
        }
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        unsafe {
            match self.item {
                Shape::Number => self.number(R_NaReal),
                Shape::Integer => self.integer(R_NaInt),
                Shape::Boolean => *LOGICAL(self.out).add(self.i) = R_NaInt,
                _ => SET_STRING_ELT(self.out, self.i as isize, R_NaString),
            }
        }
        Ok(())
    }
}

/// A list of an array's items, each built from its own text.
///
/// # Safety
/// R's main thread only. The result is unprotected.
unsafe fn list(text: &str, item: &Shape) -> Result<SEXP, GiveUp> {
    let n = count_items(text);
    let mut guard = Protected(0);
    let out = guard.keep(Rf_allocVector(SEXPTYPE::VECSXP, n as isize));
    let mut de = serde_json::Deserializer::from_str(text);
    let filled = de
        .deserialize_seq(Items { out, item, n })
        .map_err(|_| GiveUp)?;
    de.end().map_err(|_| GiveUp)?;
    if filled != n {
        return Err(GiveUp);
    }
    Ok(out)
}

struct Items<'a> {
    out: SEXP,
    item: &'a Shape,
    n: usize,
}

impl<'de> Visitor<'de> for Items<'_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut i = 0;
        while let Some(raw) = seq.next_element::<&'de RawValue>()? {
            if i == self.n {
                return Ok(i + 1);
            }
            // SAFETY: R's main thread; `out` is protected by the caller and
            // the item is stored before anything else is allocated. The
            // previous item's names are protected as a part of it.
            let like = match i {
                0 => unsafe { R_NilValue },
                _ => unsafe { Rf_getAttrib(VECTOR_ELT(self.out, i as isize - 1), R_NamesSymbol) },
            };
            let value = unsafe { value_like(raw.get(), self.item, like) }
                .map_err(|_| misfit::<A::Error>())?;
            unsafe { SET_VECTOR_ELT(self.out, i as isize, value) };
            i += 1;
        }
        Ok(i)
    }
}

#[cfg(test)]
mod tests {
    use super::count_items;

    #[test]
    fn items_are_counted_on_the_text() {
        assert_eq!(count_items("[]"), 0);
        assert_eq!(count_items("[ ]"), 0);
        assert_eq!(count_items("[0]"), 1);
        assert_eq!(count_items("[0,0, 0]"), 3);
        assert_eq!(count_items(r#"["a,b","c\"],d",{"x":[1,2]},[3,4]]"#), 4);
        assert_eq!(count_items(r#"["\\",","]"#), 2);
    }
}
