//! Big arrays of small whole numbers, held compactly.
//!
//! `[0,1,0,...]` sent for a `type_array(type_number())` argument is two
//! bytes of text per item, but eight as an R double: reading it would grow
//! the process by five times the message (the line and the vector are
//! alive together). Here such an array becomes an ALTREP vector whose items
//! are stored in the narrowest integer type that holds every one of them
//! (one, two or four bytes), so the vector costs less than its text.
//!
//! To R it is an ordinary double (or integer) vector: `typeof()`, `[`,
//! `sum()`, `length()`, `identical()` behave as for a plain one. Reading an
//! item goes through `Elt`/`Get_region`; code that asks for the data
//! pointer (arithmetic, most C code) gets a plain vector made once, kept in
//! `data2`, after which the compact items are let go. Copies are plain
//! vectors, and serialisation writes a plain vector (R's default when the
//! class gives no serialized state), so `saveRDS()`, `future` workers and
//! processes without mcpserver loaded read it as any other vector.
//!
//! extendr's ALTREP wrappers are not used: their `Elt` keeps reading the
//! compact items after a writable data pointer was handed out (so writes
//! would be lost to `x[i]`), their `Duplicate` drops attributes, and their
//! serialized state is `NULL` rather than none, which R would write as an
//! ALTREP object that reads back as `NULL`.

use extendr_ffi::{
    R_NilValue, R_altrep_class_t, R_altrep_data1, R_altrep_data2, R_make_altinteger_class,
    R_make_altreal_class, R_new_altrep, R_set_altinteger_Elt_method,
    R_set_altinteger_Get_region_method, R_set_altinteger_No_NA_method, R_set_altreal_Elt_method,
    R_set_altreal_Get_region_method, R_set_altreal_No_NA_method, R_set_altrep_Duplicate_method,
    R_set_altrep_Inspect_method, R_set_altrep_Length_method, R_set_altrep_data1,
    R_set_altrep_data2, R_set_altvec_Dataptr_method, R_set_altvec_Dataptr_or_null_method, R_xlen_t,
    Rboolean, Rf_allocVector, Rf_protect, Rf_unprotect, Rprintf, INTEGER, RAW, REAL, SEXP,
    SEXPTYPE, XLENGTH,
};
use std::cell::RefCell;
use std::ffi::{c_int, c_void, CString};

/// Arrays shorter than this stay plain: an ALTREP object and its raw
/// vector cost two headers where a plain vector costs one.
const MIN_ITEMS: usize = 1024;

/// What `[n,n,...]` looks like: how many items, how many digits the
/// longest has.
#[derive(Debug, PartialEq)]
struct Scan {
    items: usize,
    digits: usize,
}

/// Scans the text of an array of whole numbers written without fraction
/// or exponent (`[1,-20, 3]`). Anything else (`null`, `1.5`, `1e3`, `-0`,
/// a leading zero, more than nine digits) gives `None`: such arrays are
/// read as plain vectors.
fn scan(text: &str) -> Option<Scan> {
    let bytes = text.trim_matches(is_space).as_bytes();
    let inner = bytes.strip_prefix(b"[")?.strip_suffix(b"]")?;
    let (mut items, mut digits) = (0, 0);
    for item in inner.split(|&c| c == b',') {
        let number = trim(item);
        let unsigned = number.strip_prefix(b"-").unwrap_or(number);
        let zero_led = unsigned.len() > 1 && unsigned[0] == b'0';
        let negative_zero = unsigned.len() < number.len() && unsigned == b"0";
        if unsigned.is_empty()
            || unsigned.len() > 9
            || zero_led
            || negative_zero
            || !unsigned.iter().all(u8::is_ascii_digit)
        {
            return None;
        }
        items += 1;
        digits = digits.max(unsigned.len());
    }
    Some(Scan { items, digits })
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if !is_space(*first as char) {
            break;
        }
        s = rest;
    }
    while let [rest @ .., last] = s {
        if !is_space(*last as char) {
            break;
        }
        s = rest;
    }
    s
}

/// The items of a text that [`scan`] accepted, in order.
fn whole_numbers(text: &str) -> impl Iterator<Item = i32> + '_ {
    let inner = text.trim_matches(is_space);
    let inner = &inner.as_bytes()[1..inner.len() - 1];
    inner.split(|&c| c == b',').map(|item| {
        let number = trim(item);
        let (sign, digits) = match number.strip_prefix(b"-") {
            Some(digits) => (-1, digits),
            None => (1, number),
        };
        // At most nine digits (scan), so no overflow.
        sign * digits
            .iter()
            .fold(0i32, |n, d| n * 10 + i32::from(d - b'0'))
    })
}

/// The integer type the compact items are stored in.
trait Store: Copy + Into<i32> + TryFrom<i32> + 'static {
    /// How many decimal digits every value of the type can have.
    const DIGITS: usize;
    const NAME: &'static str;
}

impl Store for i8 {
    const DIGITS: usize = 2;
    const NAME: &'static str = "i8";
}

impl Store for i16 {
    const DIGITS: usize = 4;
    const NAME: &'static str = "i16";
}

impl Store for i32 {
    const DIGITS: usize = 9;
    const NAME: &'static str = "i32";
}

/// The R vector type the items are seen as: double or integer.
trait Item: Copy + 'static {
    const SEXPTYPE: SEXPTYPE;
    const NAME: &'static str;
    fn from_whole(x: i32) -> Self;
    /// # Safety
    /// `x` is a plain vector of `SEXPTYPE`.
    unsafe fn items(x: SEXP) -> *mut Self;
    /// # Safety
    /// R's main thread only.
    unsafe fn new_class<S: Store>(name: &CString) -> R_altrep_class_t;
}

impl Item for f64 {
    const SEXPTYPE: SEXPTYPE = SEXPTYPE::REALSXP;
    const NAME: &'static str = "doubles";
    fn from_whole(x: i32) -> f64 {
        f64::from(x)
    }
    unsafe fn items(x: SEXP) -> *mut f64 {
        REAL(x)
    }
    unsafe fn new_class<S: Store>(name: &CString) -> R_altrep_class_t {
        let class = R_make_altreal_class(name.as_ptr(), PACKAGE.as_ptr(), std::ptr::null_mut());
        R_set_altreal_Elt_method(class, Some(elt::<f64, S>));
        R_set_altreal_Get_region_method(class, Some(get_region::<f64, S>));
        R_set_altreal_No_NA_method(class, Some(no_na));
        class
    }
}

impl Item for i32 {
    const SEXPTYPE: SEXPTYPE = SEXPTYPE::INTSXP;
    const NAME: &'static str = "integers";
    fn from_whole(x: i32) -> i32 {
        x
    }
    unsafe fn items(x: SEXP) -> *mut i32 {
        INTEGER(x)
    }
    unsafe fn new_class<S: Store>(name: &CString) -> R_altrep_class_t {
        let class = R_make_altinteger_class(name.as_ptr(), PACKAGE.as_ptr(), std::ptr::null_mut());
        R_set_altinteger_Elt_method(class, Some(elt::<i32, S>));
        R_set_altinteger_Get_region_method(class, Some(get_region::<i32, S>));
        R_set_altinteger_No_NA_method(class, Some(no_na));
        class
    }
}

const PACKAGE: &std::ffi::CStr = c"mcpserver";

thread_local! {
    /// The classes made so far, by name. R keeps a class once made (its
    /// registry is preserved), and a package's classes are made on R's
    /// main thread, which this is.
    static CLASSES: RefCell<Vec<(String, R_altrep_class_t)>> = const { RefCell::new(Vec::new()) };
}

/// The ALTREP class of `I` items stored as `S`, made on first use. As
/// serialisation writes plain vectors, no process needs the class before
/// it makes a vector of it, so it need not be made when the package loads.
///
/// # Safety
/// R's main thread only.
unsafe fn class<I: Item, S: Store>() -> R_altrep_class_t {
    let name = format!("mcpserver_compact_{}_{}", I::NAME, S::NAME);
    if let Some(class) =
        CLASSES.with_borrow(|made| made.iter().find(|(n, _)| *n == name).map(|(_, c)| *c))
    {
        return class;
    }
    let cname = CString::new(name.as_str()).expect("class names hold no NUL");
    let class = I::new_class::<S>(&cname);
    R_set_altrep_Length_method(class, Some(length::<S>));
    R_set_altrep_Duplicate_method(class, Some(duplicate::<I, S>));
    R_set_altrep_Inspect_method(class, Some(inspect::<I, S>));
    R_set_altvec_Dataptr_method(class, Some(dataptr::<I, S>));
    R_set_altvec_Dataptr_or_null_method(class, Some(dataptr_or_null::<I>));
    CLASSES.with_borrow_mut(|made| made.push((name, class)));
    class
}

/// The compact vector of a `[n,n,...]` argument read as `double`s
/// (`integers` false) or integers, or `None` where it should stay plain:
/// short, not all whole numbers, or (for integers) no narrower than four
/// bytes anyway.
///
/// # Safety
/// R's main thread only. The result is unprotected.
pub unsafe fn read(text: &str, integers: bool) -> Option<SEXP> {
    let scan = scan(text).filter(|scan| scan.items >= MIN_ITEMS)?;
    match (integers, scan.digits) {
        (false, d) if d <= i8::DIGITS => Some(build::<f64, i8>(text, scan.items)),
        (false, d) if d <= i16::DIGITS => Some(build::<f64, i16>(text, scan.items)),
        (false, _) => Some(build::<f64, i32>(text, scan.items)),
        (true, d) if d <= i8::DIGITS => Some(build::<i32, i8>(text, scan.items)),
        (true, d) if d <= i16::DIGITS => Some(build::<i32, i16>(text, scan.items)),
        (true, _) => None,
    }
}

/// # Safety
/// R's main thread only; `text` passed [`scan`] with `n` items whose
/// digits fit `S`. The result is unprotected.
unsafe fn build<I: Item, S: Store>(text: &str, n: usize) -> SEXP {
    let class = class::<I, S>();
    let store = Rf_protect(Rf_allocVector(
        SEXPTYPE::RAWSXP,
        (n * std::mem::size_of::<S>()) as R_xlen_t,
    ));
    let stored = std::slice::from_raw_parts_mut(RAW(store).cast::<S>(), n);
    for (slot, x) in stored.iter_mut().zip(whole_numbers(text)) {
        // Fits: at most S::DIGITS digits.
        *slot = S::try_from(x).unwrap_or_else(|_| unreachable!());
    }
    let out = R_new_altrep(class, store, R_NilValue);
    Rf_unprotect(1);
    out
}

/// The compact items of `x`, or `None` once it is plain (in `data2`).
///
/// # Safety
/// `x` is a vector of one of this module's classes storing `S`.
unsafe fn compact<'a, S: Store>(x: SEXP) -> Option<&'a [S]> {
    let store = R_altrep_data1(x);
    (store != R_NilValue).then(|| {
        let n = XLENGTH(store) as usize / std::mem::size_of::<S>();
        std::slice::from_raw_parts(RAW(store).cast::<S>(), n)
    })
}

/// The plain vector `x` was turned into, if it was.
unsafe fn plain(x: SEXP) -> Option<SEXP> {
    let made = R_altrep_data2(x);
    (made != R_NilValue).then_some(made)
}

// The methods below are called by R on its main thread, each with a
// vector of the class they were set on. None of them can panic.

unsafe extern "C" fn length<S: Store>(x: SEXP) -> R_xlen_t {
    match plain(x) {
        Some(made) => XLENGTH(made),
        None => compact::<S>(x).map_or(0, |items| items.len() as R_xlen_t),
    }
}

unsafe extern "C" fn elt<I: Item, S: Store>(x: SEXP, i: R_xlen_t) -> I {
    let i = i as usize;
    match (plain(x), compact::<S>(x)) {
        (Some(made), _) => *I::items(made).add(i),
        (None, Some(items)) => I::from_whole(items.get(i).copied().map_or(0, Into::into)),
        (None, None) => I::from_whole(0),
    }
}

unsafe extern "C" fn get_region<I: Item, S: Store>(
    x: SEXP,
    start: R_xlen_t,
    n: R_xlen_t,
    buf: *mut I,
) -> R_xlen_t {
    let len = length::<S>(x);
    let (start, count) = (start.max(0), n.min(len - start.max(0)));
    if count <= 0 {
        return 0;
    }
    let out = std::slice::from_raw_parts_mut(buf, count as usize);
    let range = start as usize..(start + count) as usize;
    match (plain(x), compact::<S>(x)) {
        (Some(made), _) => {
            let items = std::slice::from_raw_parts(I::items(made), len as usize);
            out.copy_from_slice(&items[range]);
        }
        (None, Some(items)) => {
            for (slot, item) in out.iter_mut().zip(&items[range]) {
                *slot = I::from_whole((*item).into());
            }
        }
        (None, None) => return 0,
    }
    count
}

/// A plain vector of the same items (protected by the caller's use at once).
unsafe fn plain_copy<I: Item, S: Store>(x: SEXP) -> SEXP {
    let n = length::<S>(x);
    let out = Rf_protect(Rf_allocVector(I::SEXPTYPE, n));
    get_region::<I, S>(x, 0, n, I::items(out));
    Rf_unprotect(1);
    out
}

/// Makes the plain vector once and lets the compact items go: whoever
/// asked for the pointer may write through it, and later reads must see
/// what was written.
unsafe extern "C" fn dataptr<I: Item, S: Store>(x: SEXP, _writeable: Rboolean) -> *mut c_void {
    let made = match plain(x) {
        Some(made) => made,
        None => {
            let made = plain_copy::<I, S>(x);
            R_set_altrep_data2(x, made);
            R_set_altrep_data1(x, R_NilValue);
            made
        }
    };
    I::items(made).cast()
}

unsafe extern "C" fn dataptr_or_null<I: Item>(x: SEXP) -> *const c_void {
    plain(x).map_or(std::ptr::null(), |made| I::items(made).cast_const().cast())
}

/// A copy is a plain vector; R copies the attributes onto it.
unsafe extern "C" fn duplicate<I: Item, S: Store>(x: SEXP, _deep: Rboolean) -> SEXP {
    plain_copy::<I, S>(x)
}

/// Compact items are never `NA`; once plain, they may have been written.
unsafe extern "C" fn no_na(x: SEXP) -> c_int {
    c_int::from(plain(x).is_none())
}

unsafe extern "C" fn inspect<I: Item, S: Store>(
    x: SEXP,
    _pre: c_int,
    _deep: c_int,
    _pvec: c_int,
    _subtree: Option<unsafe extern "C" fn(SEXP, c_int, c_int, c_int)>,
) -> Rboolean {
    let state = if plain(x).is_some() {
        "plain"
    } else {
        "compact"
    };
    let line = format!(
        "mcpserver {} {} stored as {} (len={})\n",
        state,
        I::NAME,
        S::NAME,
        length::<S>(x)
    );
    if let Ok(line) = CString::new(line) {
        Rprintf(c"%s".as_ptr(), line.as_ptr());
    }
    Rboolean::TRUE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_takes_whole_numbers_only() {
        assert_eq!(
            scan("[1,-20, 3 ]"),
            Some(Scan {
                items: 3,
                digits: 2
            })
        );
        assert_eq!(
            scan(" [ 0 ,\n999999999] "),
            Some(Scan {
                items: 2,
                digits: 9
            })
        );
        for refused in [
            "[]",
            "[1.5]",
            "[1e3]",
            "[-0]",
            "[01]",
            "[null]",
            "[1,]",
            "[1000000000]",
            "[-]",
            "1",
            "[\"1\"]",
        ] {
            assert_eq!(scan(refused), None, "{refused}");
        }
    }

    #[test]
    fn whole_numbers_reads_what_scan_took() {
        let read: Vec<i32> = whole_numbers(" [1,-20, 3 ,999999999,-999999999] ").collect();
        assert_eq!(read, vec![1, -20, 3, 999_999_999, -999_999_999]);
    }

    #[test]
    fn each_store_holds_its_digits() {
        assert!(i8::try_from(-99i32).is_ok() && i8::try_from(99i32).is_ok());
        assert!(i16::try_from(-9999i32).is_ok() && i16::try_from(9999i32).is_ok());
        assert_eq!(i8::DIGITS, 2);
        assert_eq!(i16::DIGITS, 4);
    }
}
