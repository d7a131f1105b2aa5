//! Reading R values through R's C API: types, attributes, classes and
//! strings. Everything here runs on R's main thread, inside a `.Call`.
//!
//! Reading never allocates R memory and never raises an R error, so no R
//! longjmp can cross Rust frames.

use extendr_ffi::{
    cetype_t, R_ClassSymbol, R_DimSymbol, R_LevelsSymbol, R_NaString, R_NamesSymbol, R_NilValue,
    Rf_getAttrib, Rf_install, Rf_xlength, LENGTH, R_CHAR, SEXP, SEXPTYPE, STRING_ELT, TYPEOF,
};
use std::borrow::Cow;
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
