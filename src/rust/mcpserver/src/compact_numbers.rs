//! Big arrays of small numbers, held compactly.
//!
//! `[0,1,0,...]` sent for a `type_array(type_number())` argument is two
//! bytes of text per item, but eight as an R double: reading it would grow
//! the process by five times the message (the line and the vector are
//! alive together). Here an array of plain decimals (no exponent, at most
//! nine digits) becomes an ALTREP vector whose items are stored as
//! integers scaled by a power of ten common to the vector (`[1.5,0.25]`
//! as 150 and 25, two places), in the narrowest integer type that holds
//! every one of them (one, two or four bytes). Dividing back is exact
//! enough to give the very double a correct reader of the text gives.
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
use std::ffi::{c_int, c_void, CStr, CString};

/// Arrays shorter than this stay plain: an ALTREP object and its raw
/// vector cost two headers where a plain vector costs one.
const MIN_ITEMS: usize = 1024;

/// The most digits a compact item has (an `i32` holds every nine-digit
/// number), and so the most decimal places.
const MAX_DIGITS: usize = 9;

/// Exact powers of ten up to the most decimal places.
const POW10: [f64; MAX_DIGITS + 1] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

/// What an array of plain decimals looks like: how many items, how many
/// digits the longest whole part has, how many decimal places the longest
/// fraction has.
#[derive(Debug, PartialEq)]
struct Scan {
    items: usize,
    whole_digits: usize,
    places: usize,
}

impl Scan {
    /// Digits of the largest item once every item is scaled to `places`.
    fn digits(&self) -> usize {
        self.whole_digits + self.places
    }
}

/// One item of the array: its sign, whole digits and fraction digits.
struct Decimal<'a> {
    negative: bool,
    whole: &'a [u8],
    fraction: &'a [u8],
}

impl<'a> Decimal<'a> {
    /// A JSON number without exponent (`-12`, `0.25`), or `None`; also
    /// `None` for negative zero, which is not the zero an integer holds
    /// (1 / -0 is -Inf).
    fn parse(item: &'a [u8]) -> Option<Decimal<'a>> {
        let number = item.trim_ascii();
        let (negative, unsigned) = match number.strip_prefix(b"-") {
            Some(rest) => (true, rest),
            None => (false, number),
        };
        let (whole, fraction) = match unsigned.iter().position(|&c| c == b'.') {
            Some(dot) if dot + 1 < unsigned.len() => (&unsigned[..dot], &unsigned[dot + 1..]),
            Some(_) => return None,
            None => (unsigned, &b""[..]),
        };
        let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
        let zero = |s: &[u8]| s.iter().all(|&c| c == b'0');
        let well_formed = !whole.is_empty()
            && digits(whole)
            && digits(fraction)
            && (whole.len() == 1 || whole[0] != b'0');
        (well_formed && !(negative && zero(whole) && zero(fraction))).then_some(Decimal {
            negative,
            whole,
            fraction,
        })
    }

    /// The item times 10^places, as an integer; `places` is at least the
    /// fraction's length and the result has at most [`MAX_DIGITS`] digits.
    fn scaled(&self, places: usize) -> i32 {
        let padding = places - self.fraction.len();
        let digits = self.whole.iter().chain(self.fraction);
        let unscaled = digits.fold(0i32, |n, d| n * 10 + i32::from(d - b'0'));
        let magnitude = unscaled * 10i32.pow(padding as u32);
        if self.negative {
            -magnitude
        } else {
            magnitude
        }
    }
}

/// The items of an array's text, or `None` if it is not an array.
fn items(text: &str) -> Option<impl Iterator<Item = &[u8]>> {
    let bytes = text.as_bytes().trim_ascii();
    let inner = bytes.strip_prefix(b"[")?.strip_suffix(b"]")?;
    Some(inner.split(|&c| c == b','))
}

/// Scans the text of an array of numbers written without exponent
/// (`[1,-20, 3.25 ]`). Anything else (`null`, `1e3`, `-0`, a leading zero,
/// more than [`MAX_DIGITS`] digits once scaled) gives `None`: such arrays
/// are read as plain vectors.
fn scan(text: &str) -> Option<Scan> {
    let mut scan = Scan {
        items: 0,
        whole_digits: 0,
        places: 0,
    };
    for item in items(text)? {
        let decimal = Decimal::parse(item)?;
        scan.items += 1;
        scan.whole_digits = scan.whole_digits.max(decimal.whole.len());
        scan.places = scan.places.max(decimal.fraction.len());
        if scan.digits() > MAX_DIGITS {
            return None;
        }
    }
    Some(scan)
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
    const DIGITS: usize = MAX_DIGITS;
    const NAME: &'static str = "i32";
}

/// The R vector type the items are seen as: double or integer.
trait Item: Copy + 'static {
    const SEXPTYPE: SEXPTYPE;
    const NAME: &'static str;
    /// The item a stored integer scaled by 10^places stands for.
    fn unscaled(stored: i32, places: u8) -> Self;
    /// # Safety
    /// `x` is a plain vector of `SEXPTYPE`.
    unsafe fn items(x: SEXP) -> *mut Self;
    /// # Safety
    /// R's main thread only.
    unsafe fn new_class<S: Store>(name: &CStr) -> R_altrep_class_t;
}

impl Item for f64 {
    const SEXPTYPE: SEXPTYPE = SEXPTYPE::REALSXP;
    const NAME: &'static str = "doubles";
    /// Both operands are exact (fewer than 2^53, and a power of ten that
    /// is), so the one division is correctly rounded: the double a correct
    /// reader of the decimal text gives, as serde_json's does.
    fn unscaled(stored: i32, places: u8) -> f64 {
        match POW10.get(usize::from(places)) {
            Some(&scale) if places > 0 => f64::from(stored) / scale,
            _ => f64::from(stored),
        }
    }
    unsafe fn items(x: SEXP) -> *mut f64 {
        REAL(x)
    }
    unsafe fn new_class<S: Store>(name: &CStr) -> R_altrep_class_t {
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
    /// Integers are whole: `places` is 0.
    fn unscaled(stored: i32, _places: u8) -> i32 {
        stored
    }
    unsafe fn items(x: SEXP) -> *mut i32 {
        INTEGER(x)
    }
    unsafe fn new_class<S: Store>(name: &CStr) -> R_altrep_class_t {
        let class = R_make_altinteger_class(name.as_ptr(), PACKAGE.as_ptr(), std::ptr::null_mut());
        R_set_altinteger_Elt_method(class, Some(elt::<i32, S>));
        R_set_altinteger_Get_region_method(class, Some(get_region::<i32, S>));
        R_set_altinteger_No_NA_method(class, Some(no_na));
        class
    }
}

const PACKAGE: &CStr = c"mcpserver";

thread_local! {
    /// The classes made so far, by name. R keeps a class once made (its
    /// registry is preserved), and a package's classes are made on R's
    /// main thread, which this is.
    static CLASSES: RefCell<Vec<(CString, R_altrep_class_t)>> = const { RefCell::new(Vec::new()) };
}

/// The ALTREP class of `I` items stored as `S`, made on first use. As
/// serialisation writes plain vectors, no process needs the class before
/// it makes a vector of it, so it need not be made when the package loads.
///
/// # Safety
/// R's main thread only.
unsafe fn class<I: Item, S: Store>() -> R_altrep_class_t {
    let name = format!("mcpserver_compact_{}_{}", I::NAME, S::NAME);
    let name = CString::new(name).expect("class names hold no NUL");
    let made = CLASSES.with_borrow(|made| made.iter().find(|(n, _)| *n == name).map(|(_, c)| *c));
    if let Some(class) = made {
        return class;
    }
    let class = I::new_class::<S>(&name);
    R_set_altrep_Length_method(class, Some(length::<S>));
    R_set_altrep_Duplicate_method(class, Some(duplicate::<I, S>));
    R_set_altrep_Inspect_method(class, Some(inspect::<I, S>));
    R_set_altvec_Dataptr_method(class, Some(dataptr::<I, S>));
    R_set_altvec_Dataptr_or_null_method(class, Some(dataptr_or_null::<I>));
    CLASSES.with_borrow_mut(|made| made.push((name, class)));
    class
}

/// The compact vector of an array argument read as doubles (`integers`
/// false) or integers, or `None` where it should stay plain: short, with
/// an item that is not a plain decimal (or, for integers, not whole), or
/// no narrower than R's own integers.
///
/// # Safety
/// R's main thread only. The result is unprotected.
pub unsafe fn read(text: &str, integers: bool) -> Option<SEXP> {
    let scan = scan(text).filter(|scan| scan.items >= MIN_ITEMS)?;
    match (integers, scan.digits()) {
        (true, _) if scan.places > 0 => None,
        (_, d) if d <= i8::DIGITS => Some(build_as::<i8>(text, &scan, integers)),
        (_, d) if d <= i16::DIGITS => Some(build_as::<i16>(text, &scan, integers)),
        (false, _) => Some(build::<f64, i32>(text, &scan)),
        (true, _) => None,
    }
}

unsafe fn build_as<S: Store>(text: &str, scan: &Scan, integers: bool) -> SEXP {
    if integers {
        build::<i32, S>(text, scan)
    } else {
        build::<f64, S>(text, scan)
    }
}

/// The compact store: a raw vector whose first [`HEADER`] bytes hold the
/// decimal places, then the items, each the number times 10^places.
const HEADER: usize = 8;

/// # Safety
/// R's main thread only; `text` passed [`scan`], which gave `scan`, whose
/// digits fit `S`. The result is unprotected.
unsafe fn build<I: Item, S: Store>(text: &str, scan: &Scan) -> SEXP {
    let class = class::<I, S>();
    let bytes = HEADER + scan.items * std::mem::size_of::<S>();
    let store = Rf_protect(Rf_allocVector(SEXPTYPE::RAWSXP, bytes as R_xlen_t));
    *RAW(store) = scan.places as u8;
    let stored = std::slice::from_raw_parts_mut(RAW(store).add(HEADER).cast::<S>(), scan.items);
    let decimals = items(text).into_iter().flatten().filter_map(Decimal::parse);
    for (slot, decimal) in stored.iter_mut().zip(decimals) {
        // Fits: the scan counted at most S::DIGITS digits once scaled.
        *slot = S::try_from(decimal.scaled(scan.places)).unwrap_or_else(|_| unreachable!());
    }
    let out = R_new_altrep(class, store, R_NilValue);
    Rf_unprotect(1);
    out
}

/// The compact items of a vector and the places they are scaled by.
struct Compact<'a, S> {
    places: u8,
    items: &'a [S],
}

impl<S: Store> Compact<'_, S> {
    fn get<I: Item>(&self, i: usize) -> Option<I> {
        let stored = self.items.get(i).copied()?;
        Some(I::unscaled(stored.into(), self.places))
    }
}

/// The compact items of `x`, or `None` once it is plain (in `data2`).
///
/// # Safety
/// `x` is a vector of one of this module's classes storing `S`.
unsafe fn compact<'a, S: Store>(x: SEXP) -> Option<Compact<'a, S>> {
    let store = R_altrep_data1(x);
    (store != R_NilValue).then(|| {
        let n = (XLENGTH(store) as usize - HEADER) / std::mem::size_of::<S>();
        Compact {
            places: *RAW(store),
            items: std::slice::from_raw_parts(RAW(store).add(HEADER).cast::<S>(), n),
        }
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
        None => compact::<S>(x).map_or(0, |c| c.items.len() as R_xlen_t),
    }
}

unsafe extern "C" fn elt<I: Item, S: Store>(x: SEXP, i: R_xlen_t) -> I {
    match (plain(x), compact::<S>(x)) {
        (Some(made), _) => *I::items(made).add(i as usize),
        (None, Some(compact)) => compact.get(i as usize).unwrap_or(I::unscaled(0, 0)),
        (None, None) => I::unscaled(0, 0),
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
        (None, Some(compact)) => {
            for (slot, i) in out.iter_mut().zip(range) {
                *slot = compact.get(i).unwrap_or(I::unscaled(0, 0));
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
    let line = match compact::<S>(x) {
        Some(c) if plain(x).is_none() => format!(
            "mcpserver compact {} stored as {}, {} places (len={})\n",
            I::NAME,
            S::NAME,
            c.places,
            c.items.len()
        ),
        _ => format!("mcpserver plain {} (len={})\n", I::NAME, length::<S>(x)),
    };
    if let Ok(line) = CString::new(line) {
        Rprintf(c"%s".as_ptr(), line.as_ptr());
    }
    Rboolean::TRUE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanned(text: &str) -> Option<(usize, usize, usize)> {
        scan(text).map(|s| (s.items, s.whole_digits, s.places))
    }

    #[test]
    fn scan_takes_plain_decimals_only() {
        assert_eq!(scanned("[1,-20, 3 ]"), Some((3, 2, 0)));
        assert_eq!(scanned(" [ 0 ,\n999999999] "), Some((2, 9, 0)));
        assert_eq!(scanned("[0.5,-12.25,3]"), Some((3, 2, 2)));
        assert_eq!(scanned("[0.00000001]"), Some((1, 1, 8)));
        let refused = [
            "[]",
            "[1e3]",
            "[1E3]",
            "[-0]",
            "[-0.0]",
            "[01]",
            "[1.]",
            "[.5]",
            "[null]",
            "[1,]",
            "[1000000000]",
            "[12345.12345]",
            "[0.0000000001]",
            "[-]",
            "1",
            "[\"1\"]",
            "[1 2]",
        ];
        for text in refused {
            assert_eq!(scanned(text), None, "{text}");
        }
    }

    #[test]
    fn items_are_scaled_to_the_longest_fraction() {
        let text = " [1,-20, 3.5 ,0.25,-999999.99] ";
        let places = scan(text).unwrap().places;
        let scaled: Vec<i32> = items(text)
            .unwrap()
            .map(|item| Decimal::parse(item).unwrap().scaled(places))
            .collect();
        assert_eq!(scaled, vec![100, -2000, 350, 25, -99999999]);
    }

    #[test]
    fn unscaled_doubles_are_the_doubles_of_their_text() {
        for (text, stored, places) in [
            ("0.1", 1, 1),
            ("0.3", 30, 2),
            ("-2.675", -2675, 3),
            ("123456.789", 123456789, 3),
        ] {
            assert_eq!(
                f64::unscaled(stored, places),
                text.parse::<f64>().unwrap(),
                "{text}"
            );
            let parsed: f64 = serde_json::from_str(text).unwrap();
            assert_eq!(f64::unscaled(stored, places), parsed, "{text}");
        }
    }

    #[test]
    fn each_store_holds_every_number_of_its_digits() {
        fn holds<S: Store>() -> bool {
            let largest = 10i32.pow(S::DIGITS as u32) - 1;
            S::try_from(largest).is_ok() && S::try_from(-largest).is_ok()
        }
        assert!(holds::<i8>() && holds::<i16>() && holds::<i32>());
    }
}
