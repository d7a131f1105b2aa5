//! The R bindings of mcpserver (extendr). The protocol engine lives in the
//! `mcp-core` crate; this crate converts between R and JSON, checks tool
//! definitions, and runs tool handlers on R's main thread.

use extendr_api::prelude::*;

mod background;
mod bridge;
mod check;
mod client;
mod compact_numbers;
mod content;
mod from_json;
mod from_json_text;
mod input;
mod interrupt;
mod json;
mod output;
mod resource;
mod result;
mod rvalue;
mod server;
mod to_json;
mod tool;
mod types;

extendr_module! {
    mod mcpserver;
    use background;
    use bridge;
    use client;
    use content;
    use interrupt;
    use json;
    use resource;
    use result;
    use server;
    use tool;
    use types;
}
