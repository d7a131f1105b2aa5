//! `mcp_bridge()`: a stdio-to-HTTP bridge (see `mcp_core::transport::bridge`), run on
//! R's main thread until the client closes stdin, stops reading stdout, or
//! the user presses Ctrl-C.

use crate::check;
use crate::client::http_options;
use extendr_api::prelude::*;
use mcp_core::client::http_client::HttpClient;
use mcp_core::transport::bridge::{self, End};
use mcp_core::transport::session_bridge::{self, Polled, SessionBridge};
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

/// A running session bridge (`mcp_bridge()` without a URL, see
/// `mcp_core::transport::session_bridge`): R polls it for calls of the bridge's own
/// tools, answers them, and switches sessions.
/// @noRd
#[extendr]
pub struct SessionBridgeHandle {
    bridge: Option<SessionBridge>,
    guard: Option<StdioGuard>,
}

/// Takes over stdin and stdout and bridges them to the session at `url`.
/// `local_tools` is a JSON array of the definitions of the tools R answers.
/// @noRd
#[extendr]
fn session_bridge_start_(
    url: &str,
    token: Nullable<String>,
    local_tools: &str,
    note: String,
    max_message_size: f64,
    switch_timeout: f64,
) -> Robj {
    let local_tools = match serde_json::from_str::<Vec<serde_json::Value>>(local_tools) {
        Ok(tools) => tools,
        Err(e) => return check::fail(format!("the local tools are not a JSON array: {e}")),
    };
    let target = session_target(url, token, max_message_size);
    let (mut guard, input, output) = match StdioGuard::take() {
        Ok(taken) => taken,
        Err(e) => return check::fail(format!("could not take over stdin and stdout: {e}")),
    };
    let options = session_bridge::Options {
        max_message_size: max_message_size as usize,
        switch_timeout: check::seconds(switch_timeout),
        close_timeout: std::time::Duration::from_secs(5),
        note,
    };
    match SessionBridge::start(input, output, target, local_tools, options) {
        Ok(bridge) => SessionBridgeHandle {
            bridge: Some(bridge),
            guard: Some(guard),
        }
        .into(),
        Err(e) => {
            guard.restore();
            check::fail(e)
        }
    }
}

fn session_target(
    url: &str,
    token: Nullable<String>,
    max_message_size: f64,
) -> session_bridge::Target {
    session_bridge::Target {
        url: url.to_string(),
        options: http_options(token, Vec::new(), Vec::new(), max_message_size),
    }
}

#[extendr]
impl SessionBridgeHandle {
    /// Waits up to `timeout` seconds. `"running"`, `c("call", id, name,
    /// arguments as JSON)`, `c("input ended", <unanswered>)`, `"output
    /// closed"`, `"closed"`, or an error to raise. Problems go to stderr.
    /// @noRd
    fn poll(&mut self, timeout: f64) -> Robj {
        let Some(bridge) = self.bridge.as_mut() else {
            return "closed".into();
        };
        let polled = bridge.poll(check::seconds(timeout));
        for problem in bridge.take_problems() {
            eprintln!("mcp_bridge(): {problem}");
        }
        match polled {
            Polled::Running => "running".into(),
            Polled::Call {
                id,
                name,
                arguments,
            } => vec!["call".to_string(), id, name, arguments.to_string()].into(),
            Polled::InputEnded { unanswered } => {
                vec!["input ended".to_string(), unanswered.to_string()].into()
            }
            Polled::OutputClosed => "output closed".into(),
            Polled::Failed(why) => check::fail(why),
        }
    }

    /// Answers the local call `id` with a text result.
    /// @noRd
    fn answer(&self, id: &str, text: &str, is_error: bool) {
        if let Some(bridge) = self.bridge.as_ref() {
            bridge.answer(id, text, is_error);
        }
    }

    /// Connects the client to the session at `url` from now on: whether its
    /// tools differ from the last session's, or an error to raise (the
    /// client then stays where it was).
    /// @noRd
    fn switch_to(&self, url: &str, token: Nullable<String>, max_message_size: f64) -> Robj {
        let Some(bridge) = self.bridge.as_ref() else {
            return check::fail("the bridge has stopped");
        };
        match bridge.switch(session_target(url, token, max_message_size)) {
            Ok(switched) => switched.tools_changed.into(),
            Err(e) => check::fail(e),
        }
    }

    /// Tells the client its tool list changed.
    /// @noRd
    fn notify_tools_changed(&self) {
        if let Some(bridge) = self.bridge.as_ref() {
            bridge.notify_tools_changed();
        }
    }

    /// Stops bridging and gives stdin and stdout back. Safe to call twice.
    /// @noRd
    fn close(&mut self) {
        if let Some(bridge) = self.bridge.take() {
            bridge.close();
        }
        if let Some(mut guard) = self.guard.take() {
            guard.restore();
        }
    }
}

extendr_module! {
    mod bridge;
    fn bridge_run_;
    fn session_bridge_start_;
    impl SessionBridgeHandle;
}
