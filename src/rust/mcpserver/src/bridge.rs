//! `mcp_bridge()`: a stdio-to-HTTP bridge (see `mcp_core::transport::bridge`), run on
//! R's main thread until the client closes stdin, stops reading stdout, or
//! the user presses Ctrl-C.

use crate::check;
use crate::client::http_options;
use extendr_api::prelude::*;
use mcp_core::client::http_client::HttpClient;
use mcp_core::transport::bridge::{self, End};
use mcp_core::transport::stdio::StdioGuard;
use std::sync::Arc;

/// Bridges stdin and stdout to the server at `url`. Returns why it ended:
/// `"input ended"`, `"unanswered"` (input ended and the grace period ran
/// out), `"output closed"`, `"interrupted"`, or an error to raise.
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)]
fn bridge_run_(
    url: &str,
    token: Nullable<String>,
    header_names: Vec<String>,
    header_values: Vec<String>,
    max_message_size: f64,
    grace: f64,
) -> Robj {
    let options = http_options(token, header_names, header_values, max_message_size);
    let client = match HttpClient::new(url, options) {
        Ok(client) => Arc::new(client),
        Err(e) => return check::fail(e),
    };
    let (mut guard, input, output) = match StdioGuard::take() {
        Ok(taken) => taken,
        Err(e) => return check::fail(format!("could not take over stdin and stdout: {e}")),
    };
    let options = bridge::Options {
        max_message_size: max_message_size as usize,
        grace: check::seconds(grace),
        close_timeout: std::time::Duration::from_secs(5),
    };
    let end = bridge::run(
        client,
        input,
        output,
        options,
        crate::interrupt::interrupt_pending,
        |problem| eprintln!("mcp_bridge(): {problem}"),
    );
    guard.restore();
    match end {
        End::InputEnded { unanswered: 0 } => "input ended".into(),
        End::InputEnded { unanswered } => {
            vec!["unanswered".to_string(), unanswered.to_string()].into()
        }
        End::OutputClosed => "output closed".into(),
        End::Interrupted => "interrupted".into(),
        End::Failed(e) => check::fail(e),
    }
}

extendr_module! {
    mod bridge;
    fn bridge_run_;
}
