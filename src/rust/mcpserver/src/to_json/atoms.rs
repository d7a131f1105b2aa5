//! Atomic R vectors written element by element: logicals, integers,
//! doubles (shortest round-trip), bit64 integers, strings, complex numbers,
//! factors (as labels), dates and times; `NA`, `NaN` and `Inf` as `null`.

use super::time::{format_instant, time_zone};
use crate::rvalue::{numeric_values, RValue};
use extendr_ffi::{Rcomplex, COMPLEX, INTEGER, LOGICAL, REAL, SEXPTYPE};
use jiff::tz::TimeZone;
use mcp_core::util::time::civil_from_days;
use std::fmt::Write as _;

/// Integral doubles below this magnitude are written as integer literals
/// (exactly: every integral double is an integer); larger ones in exponent
/// form, which is shorter.
const INTEGER_LITERAL_LIMIT: f64 = 1e17;

/// One atomic vector, classified once so each element is cheap to write.
pub enum Atomic {
    Logical(&'static [i32]),
    Integer(&'static [i32]),
    Double(&'static [f64]),
    /// bit64's integer64: doubles holding the bits of 64-bit integers.
    Integer64(&'static [i64]),
    String(RValue),
    Complex(&'static [Rcomplex]),
    Factor(&'static [i32], Vec<Option<String>>),
    Date(Vec<f64>),
    DateTime(Vec<f64>, TimeZone, bool),
    Empty,
}

impl Atomic {
    pub fn new(x: RValue) -> Atomic {
        let n = x.len();
        // SAFETY: each pointer is read for the vector's own type and length.
        unsafe {
            match x.kind() {
                SEXPTYPE::LGLSXP => Atomic::Logical(std::slice::from_raw_parts(LOGICAL(x.0), n)),
                SEXPTYPE::INTSXP if x.inherits("factor") => {
                    let levels = x.levels();
                    let labels = (0..levels.len())
                        .map(|i| levels.string(i).map(|s| s.into_owned()))
                        .collect();
                    Atomic::Factor(std::slice::from_raw_parts(INTEGER(x.0), n), labels)
                }
                SEXPTYPE::INTSXP | SEXPTYPE::REALSXP if x.inherits("Date") => {
                    Atomic::Date(numeric_values(x).unwrap_or_default())
                }
                SEXPTYPE::INTSXP | SEXPTYPE::REALSXP if x.inherits("POSIXct") => {
                    let (tz, utc) = time_zone(x);
                    Atomic::DateTime(numeric_values(x).unwrap_or_default(), tz, utc)
                }
                SEXPTYPE::INTSXP => Atomic::Integer(std::slice::from_raw_parts(INTEGER(x.0), n)),
                SEXPTYPE::REALSXP if x.inherits("integer64") => {
                    Atomic::Integer64(std::slice::from_raw_parts(REAL(x.0) as *const i64, n))
                }
                SEXPTYPE::REALSXP => Atomic::Double(std::slice::from_raw_parts(REAL(x.0), n)),
                SEXPTYPE::STRSXP => Atomic::String(x),
                SEXPTYPE::CPLXSXP => Atomic::Complex(std::slice::from_raw_parts(COMPLEX(x.0), n)),
                _ => Atomic::Empty,
            }
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Atomic::Logical(v) | Atomic::Integer(v) => v.len(),
            Atomic::Factor(v, _) => v.len(),
            Atomic::Double(v) => v.len(),
            Atomic::Integer64(v) => v.len(),
            Atomic::String(x) => x.len(),
            Atomic::Complex(v) => v.len(),
            Atomic::Date(v) | Atomic::DateTime(v, _, _) => v.len(),
            Atomic::Empty => 0,
        }
    }

    /// Whether element `i` is written as `null` (`NA`, `NaN`, `Inf`).
    pub fn is_missing(&self, i: usize) -> bool {
        match self {
            Atomic::Logical(v) | Atomic::Integer(v) => v[i] == i32::MIN,
            Atomic::Double(v) => !v[i].is_finite(),
            Atomic::Integer64(v) => v[i] == i64::MIN,
            Atomic::String(x) => x.string(i).is_none(),
            Atomic::Complex(v) => v[i].r.is_nan() || v[i].i.is_nan(),
            Atomic::Factor(codes, labels) => {
                let code = codes[i];
                code == i32::MIN
                    || usize::try_from(code - 1)
                        .ok()
                        .and_then(|k| labels.get(k))
                        .and_then(|l| l.as_deref())
                        .is_none()
            }
            Atomic::Date(v) | Atomic::DateTime(v, _, _) => !v[i].is_finite(),
            Atomic::Empty => true,
        }
    }

    /// What a missing element `i` is, for messages.
    pub fn missing_name(&self, i: usize) -> &'static str {
        match self {
            Atomic::Double(v) if v[i].is_infinite() => "infinite",
            Atomic::Double(v) if v[i].is_nan() && !is_r_na(v[i]) => "NaN",
            _ => "NA",
        }
    }

    pub fn write(&self, i: usize, out: &mut String) {
        match self {
            Atomic::Logical(v) => out.push_str(match v[i] {
                i32::MIN => "null",
                0 => "false",
                _ => "true",
            }),
            Atomic::Integer(v) => write_i32(out, v[i]),
            Atomic::Double(v) => write_f64(out, v[i]),
            Atomic::Integer64(v) => {
                // bit64 marks NA with the smallest 64-bit integer.
                if v[i] == i64::MIN {
                    out.push_str("null")
                } else {
                    out.push_str(itoa::Buffer::new().format(v[i]))
                }
            }
            Atomic::String(x) => match x.string(i) {
                Some(s) => write_str(out, &s),
                None => out.push_str("null"),
            },
            Atomic::Complex(v) => {
                let c = v[i];
                if c.r.is_nan() || c.i.is_nan() {
                    out.push_str("null");
                } else {
                    write_str(out, &format_complex(c.r, c.i));
                }
            }
            Atomic::Factor(codes, labels) => {
                let code = codes[i];
                match usize::try_from(code - 1)
                    .ok()
                    .and_then(|k| labels.get(k))
                    .and_then(|l| l.as_deref())
                {
                    Some(label) if code != i32::MIN => write_str(out, label),
                    _ => out.push_str("null"),
                }
            }
            Atomic::Date(days) => {
                let d = days[i];
                if d.is_finite() {
                    let (y, m, dd) = civil_from_days(d.floor() as i64);
                    write_str(out, &format!("{y:04}-{m:02}-{dd:02}"));
                } else {
                    out.push_str("null");
                }
            }
            Atomic::DateTime(secs, tz, utc) => {
                let s = secs[i];
                if !s.is_finite() {
                    out.push_str("null");
                    return;
                }
                write_str(out, &format_instant(s, tz, *utc));
            }
            Atomic::Empty => out.push_str("null"),
        }
    }
}

/// R's `NA_real_`: a NaN whose low word is 1954 (R's `R_IsNA`).
fn is_r_na(v: f64) -> bool {
    v.is_nan() && (v.to_bits() & 0xffff_ffff) == 1954
}

fn format_complex(re: f64, im: f64) -> String {
    let mut s = String::new();
    write_f64(&mut s, re);
    s.push(if im < 0.0 || (im == 0.0 && im.is_sign_negative()) {
        '-'
    } else {
        '+'
    });
    write_f64(&mut s, im.abs());
    s.push('i');
    s
}

pub fn write_i32(out: &mut String, v: i32) {
    if v == i32::MIN {
        out.push_str("null");
    } else {
        out.push_str(itoa::Buffer::new().format(v));
    }
}

/// Shortest round-trip form; integral values without `.0`.
pub fn write_f64(out: &mut String, v: f64) {
    if !v.is_finite() {
        out.push_str("null");
    } else if v.fract() == 0.0 && v.abs() < INTEGER_LITERAL_LIMIT {
        out.push_str(itoa::Buffer::new().format(v as i64));
    } else {
        out.push_str(ryu::Buffer::new().format_finite(v));
    }
}

/// A JSON string literal.
pub fn write_str(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

pub(crate) fn is_atomic(x: RValue) -> bool {
    matches!(
        x.kind(),
        SEXPTYPE::LGLSXP
            | SEXPTYPE::INTSXP
            | SEXPTYPE::REALSXP
            | SEXPTYPE::STRSXP
            | SEXPTYPE::CPLXSXP
    )
}

/// A plain vector: atomic, without dimensions, not embedded JSON.
pub(crate) fn is_plain_vector(x: RValue) -> bool {
    is_atomic(x) && x.dim().is_null() && !(x.inherits("json") && x.kind() == SEXPTYPE::STRSXP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_are_shortest_and_integral_ones_plain() {
        let f = |v: f64| {
            let mut s = String::new();
            write_f64(&mut s, v);
            s
        };
        assert_eq!(f(std::f64::consts::PI), "3.141592653589793");
        assert_eq!(f(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(f(3.0), "3");
        assert_eq!(f(-0.0), "0");
        assert_eq!(f(1e15 + 0.5), "1000000000000000.5");
        assert_eq!(f(2f64.powi(53)), "9007199254740992");
        assert_eq!(f(1e20), "1e20");
        assert_eq!(f(1e300), "1e300");
        assert_eq!(f(f64::NAN), "null");
        assert_eq!(f(f64::INFINITY), "null");
    }

    #[test]
    fn strings_are_escaped() {
        let mut s = String::new();
        write_str(&mut s, "a\"b\\c\nd\u{1}é");
        assert_eq!(s, r#""a\"b\\c\nd\u0001é""#);
        let back: String = serde_json::from_str(&s).unwrap();
        assert_eq!(back, "a\"b\\c\nd\u{1}é");
    }

    #[test]
    fn complex_numbers_read_like_r() {
        assert_eq!(format_complex(1.0, 2.0), "1+2i");
        assert_eq!(format_complex(0.5, -1.5), "0.5-1.5i");
    }
}
