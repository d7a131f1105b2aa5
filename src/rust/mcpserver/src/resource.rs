//! Checks for resource definitions made in R, so a bad one fails when it is
//! defined (the server checks the whole catalog again when it starts).

use crate::check;
use crate::rvalue::RValue;
use extendr_api::prelude::*;
use mcp_core::protocol::uri_template::UriTemplate;

/// The variables of a URI template, or the error for R to raise.
/// @noRd
#[extendr]
fn uri_template_variables_(template: Robj) -> Robj {
    let Some(text) = RValue::of(&template).as_single_string() else {
        return check::fail("`uri_template` must be a single string.");
    };
    match UriTemplate::parse(&text) {
        Ok(parsed) => {
            let names: Vec<String> = parsed.variables().iter().map(|v| v.to_string()).collect();
            names.into_robj()
        }
        Err(e) => check::fail(e),
    }
}

extendr_module! {
    mod resource;
    fn uri_template_variables_;
}
