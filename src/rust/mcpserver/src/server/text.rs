//! Text crossing between R and the client: R cannot hold a NUL in a
//! string, and the client's reader breaks on a line that is not UTF-8.

use crate::rvalue::RValue;
use extendr_api::prelude::*;

/// Text a client sent (say, why it could not ask the user) for R, which
/// cannot hold a NUL character in a string: NUL is shown escaped.
pub(super) fn client_text(text: &str) -> Robj {
    Robj::from(text.replace('\0', "\\u0000").as_str())
}

/// Text R hands over (an error or log message), as UTF-8: bytes that are not
/// are replaced, as `&str` arguments would take them on trust and a line
/// that is not UTF-8 breaks the client's reader. `None` for `NULL` or `NA`.
pub(super) fn r_text(value: &Robj) -> Option<String> {
    RValue::of(value)
        .as_single_string()
        .map(|text| text.into_owned())
}
