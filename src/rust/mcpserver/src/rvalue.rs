//! Reading R values through R's C API: types, attributes, classes,
//! strings, list fields and the predicates on single values. Everything
//! here runs on R's main thread, inside a `.Call`.
//!
//! Reading never allocates R memory and never raises an R error, so no R
//! longjmp can cross Rust frames.

use extendr_ffi::{
    cetype_t, R_ClassSymbol, R_DimSymbol, R_LevelsSymbol, R_NaString, R_NamesSymbol, R_NilValue,
    Rf_getAttrib, Rf_install, Rf_xlength, INTEGER, LENGTH, LOGICAL, REAL, R_CHAR, SEXP, SEXPTYPE,
    STRING_ELT, TYPEOF, VECTOR_ELT,
};
use std::borrow::Cow;
use std::collections::HashSet;
use std::ffi::CString;

#[allow(improper_ctypes)]
extern "C" {
    fn Rf_getCharCE(x: SEXP) -> cetype_t;
}

/// A borrowed R value. Copyable: it is only valid while the `.Call` that
/// received it runs (R keeps it alive as an argument or a child of one).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RValue(pub SEXP);

impl RValue {
    /// The value an extendr argument holds.
    pub fn of(x: &extendr_api::Robj) -> RValue {
        // SAFETY: the Robj keeps the SEXP protected while it lives, which
        // spans the .Call that received it.
        RValue(unsafe { extendr_api::GetSexp::get(x) })
    }

    pub fn kind(self) -> SEXPTYPE {
        // SAFETY: every SEXP has a type.
        unsafe { TYPEOF(self.0) }
    }

    pub fn is_null(self) -> bool {
        self.kind() == SEXPTYPE::NILSXP
    }

    pub fn len(self) -> usize {
        // SAFETY: Rf_xlength accepts any SEXP.
        unsafe { Rf_xlength(self.0) as usize }
    }

    pub fn attr(self, symbol: SEXP) -> RValue {
        // SAFETY: reading an attribute. For `row.names` R may allocate the
        // expanded form, which is returned unprotected but not kept.
        RValue(unsafe { Rf_getAttrib(self.0, symbol) })
    }

    pub fn attr_named(self, name: &str) -> RValue {
        self.attr(symbol(name))
    }

    pub fn names(self) -> RValue {
        // SAFETY: R_NamesSymbol is initialised once R runs.
        self.attr(unsafe { R_NamesSymbol })
    }

    pub fn class(self) -> RValue {
        self.attr(unsafe { R_ClassSymbol })
    }

    pub fn dim(self) -> RValue {
        self.attr(unsafe { R_DimSymbol })
    }

    pub fn levels(self) -> RValue {
        self.attr(unsafe { R_LevelsSymbol })
    }

    /// `inherits(x, class)` for S3 classes.
    pub fn inherits(self, class: &str) -> bool {
        let classes = self.class();
        classes.kind() == SEXPTYPE::STRSXP
            && (0..classes.len()).any(|i| classes.string(i).as_deref() == Some(class))
    }

    pub fn has_class(self) -> bool {
        !self.class().is_null()
    }

    /// Element `i` of a character vector, in UTF-8; `None` for `NA`.
    pub fn string(self, i: usize) -> Option<Cow<'static, str>> {
        // SAFETY: the caller checked that self is a STRSXP longer than i.
        unsafe { char_to_str(STRING_ELT(self.0, i as isize)) }
    }

    /// A length-1, non-NA character vector's value.
    pub fn as_single_string(self) -> Option<Cow<'static, str>> {
        if self.kind() == SEXPTYPE::STRSXP && self.len() == 1 {
            self.string(0)
        } else {
            None
        }
    }
}

/// An R symbol by name (R keeps symbols forever, so no protection needed).
pub fn symbol(name: &str) -> SEXP {
    let c = CString::new(name).expect("symbol names have no NUL");
    // SAFETY: Rf_install copies the name into R's symbol table.
    unsafe { Rf_install(c.as_ptr()) }
}

pub fn null() -> RValue {
    // SAFETY: R_NilValue is initialised once R runs.
    RValue(unsafe { R_NilValue })
}

/// A CHARSXP as UTF-8. Strings marked latin1 are converted; anything else is
/// taken as UTF-8 (R's native encoding on the platforms we build for), with
/// invalid bytes replaced rather than trusted.
///
/// # Safety
/// `c` must be a CHARSXP that outlives the returned value's use.
pub unsafe fn char_to_str(c: SEXP) -> Option<Cow<'static, str>> {
    if c == R_NaString {
        return None;
    }
    let len = LENGTH(c) as usize;
    let bytes: &'static [u8] = std::slice::from_raw_parts(R_CHAR(c) as *const u8, len);
    if Rf_getCharCE(c) == cetype_t::CE_LATIN1 {
        return Some(Cow::Owned(bytes.iter().map(|&b| b as char).collect()));
    }
    Some(match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    })
}

/// Field `name` of an R list, or `NULL`.
pub fn field(x: RValue, name: &str) -> RValue {
    let names = x.names();
    if x.kind() != SEXPTYPE::VECSXP || names.kind() != SEXPTYPE::STRSXP {
        return null();
    }
    for i in 0..names.len() {
        if names.string(i).as_deref() == Some(name) {
            // SAFETY: x is a VECSXP longer than i.
            return RValue(unsafe { VECTOR_ELT(x.0, i as isize) });
        }
    }
    null()
}

/// Element `i` of an R list.
pub fn element(x: RValue, i: usize) -> RValue {
    // SAFETY: callers pass a VECSXP longer than i.
    RValue(unsafe { VECTOR_ELT(x.0, i as isize) })
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
        SEXPTYPE::INTSXP => match unsafe { *INTEGER(x.0) } {
            i32::MIN => return None,
            i => i as f64,
        },
        _ => return None,
    };
    v.is_finite().then_some(v)
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

/// The numbers of an integer or double vector as doubles (integer `NA` as
/// `NaN`); `None` for any other type.
pub fn numeric_values(x: RValue) -> Option<Vec<f64>> {
    match x.kind() {
        SEXPTYPE::REALSXP => {
            Some(unsafe { std::slice::from_raw_parts(REAL(x.0), x.len()) }.to_vec())
        }
        SEXPTYPE::INTSXP => Some(
            unsafe { std::slice::from_raw_parts(INTEGER(x.0), x.len()) }
                .iter()
                .map(|&v| if v == i32::MIN { f64::NAN } else { v as f64 })
                .collect(),
        ),
        _ => None,
    }
}

/// A readable name for an R type in error messages.
pub fn describe_type(x: RValue) -> &'static str {
    match x.kind() {
        SEXPTYPE::ENVSXP => "an environment",
        SEXPTYPE::CLOSXP | SEXPTYPE::BUILTINSXP | SEXPTYPE::SPECIALSXP => "a function",
        SEXPTYPE::EXTPTRSXP => "an external pointer",
        SEXPTYPE::LANGSXP => {
            if x.inherits("formula") {
                "a formula"
            } else {
                "a call"
            }
        }
        SEXPTYPE::SYMSXP => "a symbol",
        SEXPTYPE::EXPRSXP => "an expression vector",
        SEXPTYPE::LISTSXP | SEXPTYPE::DOTSXP => "a pairlist",
        SEXPTYPE::PROMSXP => "a promise",
        SEXPTYPE::BCODESXP => "byte code",
        SEXPTYPE::WEAKREFSXP => "a weak reference",
        _ => "an S4 object",
    }
}
