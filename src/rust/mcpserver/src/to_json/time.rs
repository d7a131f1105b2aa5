//! Dates and times as ISO 8601 text: `POSIXct` in its time zone (`Z` for
//! UTC, else the zone's offset at that instant), `POSIXlt` from its fields.

use crate::rvalue::{field, numeric_values, RValue};
use extendr_ffi::SEXPTYPE;
use jiff::tz::TimeZone;
use mcp_core::util::time::civil_from_days;
use std::fmt::Write as _;

/// A time zone for POSIXct values: their `tzone` attribute, or the
/// session's zone when it is empty or missing.
fn tz_name(x: RValue) -> Option<String> {
    let tz = x.attr_named("tzone");
    if tz.kind() == SEXPTYPE::STRSXP && tz.len() >= 1 {
        tz.string(0)
            .map(|s| s.into_owned())
            .filter(|s| !s.is_empty())
    } else {
        None
    }
}

/// Zone names written with `Z`.
fn is_utc_name(name: &str) -> bool {
    matches!(name, "UTC" | "GMT" | "Etc/UTC" | "Etc/GMT" | "Z")
}

pub fn time_zone(x: RValue) -> (TimeZone, bool) {
    match tz_name(x).as_deref() {
        Some(name) if is_utc_name(name) => (TimeZone::UTC, true),
        Some(name) => (TimeZone::get(name).unwrap_or(TimeZone::UTC), false),
        None => (TimeZone::system(), false),
    }
}

/// `2024-01-02T03:04:05Z`, or with the zone's offset (`+01:00`).
pub fn format_instant(secs: f64, tz: &TimeZone, utc: bool) -> String {
    let whole = secs.floor();
    let frac = secs - whole;
    let offset = jiff::Timestamp::from_second(whole as i64)
        .map(|ts| tz.to_offset(ts).seconds())
        .unwrap_or(0);
    let local = whole as i64 + offset as i64;
    let days = local.div_euclid(86_400);
    let of_day = local.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (
        (of_day / 3600) as u32,
        ((of_day % 3600) / 60) as u32,
        (of_day % 60) as f64 + frac,
    );
    format_civil(y, m, d, hh, mm, ss, Some(offset), utc)
}

#[allow(clippy::too_many_arguments)]
fn format_civil(
    y: i64,
    m: u32,
    d: u32,
    hh: u32,
    mm: u32,
    ss: f64,
    offset: Option<i32>,
    utc: bool,
) -> String {
    let whole = ss.floor();
    let micros = ((ss - whole) * 1e6).round() as u32;
    let mut text = format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{:02}", whole as u32);
    if micros > 0 && micros < 1_000_000 {
        let digits = format!("{micros:06}");
        text.push('.');
        text.push_str(digits.trim_end_matches('0'));
    }
    match offset {
        Some(0) if utc => text.push('Z'),
        Some(off) => {
            let sign = if off < 0 { '-' } else { '+' };
            let off = off.unsigned_abs();
            let _ = write!(text, "{sign}{:02}:{:02}", off / 3600, (off % 3600) / 60);
        }
        None => {}
    }
    text
}

/// The ISO 8601 text of each element of a POSIXlt value, which holds its
/// fields in a list (`None` for a missing one); `None` if a field is missing.
pub fn posixlt_texts(x: RValue) -> Option<Vec<Option<String>>> {
    let numbers = |name: &str| numeric_values(field(x, name));
    let (sec, min, hour, mday, mon, year) = (
        numbers("sec")?,
        numbers("min")?,
        numbers("hour")?,
        numbers("mday")?,
        numbers("mon")?,
        numbers("year")?,
    );
    let gmtoff = numbers("gmtoff");
    let utc = tz_name(x).as_deref().is_some_and(is_utc_name);
    let text = |i: usize| {
        let parts = [
            year[i % year.len()],
            mon[i % mon.len()],
            mday[i % mday.len()],
            hour[i % hour.len()],
            min[i % min.len()],
            sec[i],
        ];
        if parts.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let offset = if utc {
            Some(0)
        } else {
            gmtoff
                .as_ref()
                .map(|g| g[i % g.len()])
                .filter(|g| g.is_finite())
                .map(|g| g as i32)
        };
        Some(format_civil(
            parts[0] as i64 + 1900,
            parts[1] as u32 + 1,
            parts[2] as u32,
            parts[3] as u32,
            parts[4] as u32,
            parts[5],
            offset,
            utc,
        ))
    };
    Some((0..sec.len()).map(text).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_carry_their_offset() {
        assert_eq!(
            format_instant(1704164645.0, &TimeZone::UTC, true),
            "2024-01-02T03:04:05Z"
        );
        assert_eq!(
            format_instant(1704164645.25, &TimeZone::UTC, true),
            "2024-01-02T03:04:05.25Z"
        );
        let paris = TimeZone::get("Europe/Paris").unwrap();
        assert_eq!(
            format_instant(1704164645.0, &paris, false),
            "2024-01-02T04:04:05+01:00"
        );
        let ny = TimeZone::get("America/New_York").unwrap();
        assert_eq!(
            format_instant(1719900000.0, &ny, false),
            "2024-07-02T02:00:00-04:00"
        );
    }
}
