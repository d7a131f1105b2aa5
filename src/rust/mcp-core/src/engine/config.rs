//! How an engine is configured: the server's name and version, its bounds
//! ([`Limits`]) and the settings every engine of a server shares ([`Config`]).

use crate::protocol::revision::Revision;
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::time::Duration;

/// The bounds on what one client may make the server hold (the transport
/// keeps them: see [`crate::transport::backpressure`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of output waiting for the client to read them before the
    /// server stops reading. 4 MiB holds thousands of ordinary responses
    /// (a `tools/list` of a few dozen tools is a few KiB), so only a client
    /// that has stopped reading ever meets it.
    pub max_queued_output: usize,
    /// Tool calls accepted and not yet answered (the running one included;
    /// calls run as tasks are bounded by the task store instead, as their
    /// client is answered at once and goes on talking) before the server
    /// stops reading; over it (possible only while a tool
    /// waits for input) a call is refused. R runs one call at a time, so a
    /// few hundred waiting is far more than any client needs to keep R busy.
    pub max_queued_calls: usize,
    /// `subscriptions/listen` streams open at once; one more is refused.
    /// The tool list never changes, so a client needs one or two at most.
    pub max_subscriptions: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_queued_output: 4 * 1024 * 1024,
            max_queued_calls: 256,
            max_subscriptions: 64,
        }
    }
}

/// Who the server says it is.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
    pub title: Option<String>,
}

/// Settings fixed for the life of a server.
#[derive(Debug, Clone)]
pub struct Config {
    pub info: ServerInfo,
    pub instructions: Option<String>,
    /// Longest line accepted, in bytes.
    pub max_message_bytes: usize,
    /// How long clients may cache `tools/list` and `server/discover` (2026-07-28).
    pub list_ttl_ms: u64,
    /// How long clients may cache a `resources/read` result (2026-07-28);
    /// 0 by default, as a resource's R function may answer differently
    /// each time.
    pub read_ttl_ms: u64,
    /// Limit for tools that set none of their own.
    pub default_timeout: Option<Duration>,
    /// How long a call may wait for R to take it (R busy with the user's
    /// command, in a session serving in the background, or with calls
    /// ahead of it) before it is answered with a tool error saying nothing
    /// ran; `None` waits as long as it takes. Tasks are never cut short.
    pub queue_timeout: Option<Duration>,
    /// Key for signing the state of input-required rounds; a random key
    /// when `None` (state then only verifies within this process).
    pub request_state_key: Option<Vec<u8>>,
    /// A directory where the processes sharing `request_state_key` record
    /// the states they accepted, so each is accepted once among them all
    /// (see `request_state`); `None` records them in memory, per process.
    pub request_state_store: Option<PathBuf>,
    /// What one client may make the server hold.
    pub limits: Limits,
    /// Arguments too large to be read early (see
    /// [`crate::engine::arguments::EARLY_ARGUMENTS_MAX`]) are checked
    /// without building their tree and handed over as the checked text
    /// ([`crate::engine::Job::sent_arguments`]), for an embedder that reads
    /// them straight into its own values. Off: they arrive read, in
    /// [`crate::engine::Job::arguments`].
    pub arguments_as_text: bool,
    /// Spans of requests, when telemetry is on (see [`crate::telemetry`]).
    pub telemetry: Option<std::sync::Arc<crate::telemetry::Telemetry>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            info: ServerInfo {
                name: "mcpserver".into(),
                version: "0.0.0".into(),
                title: None,
            },
            instructions: None,
            max_message_bytes: 16 * 1024 * 1024,
            list_ttl_ms: 300_000,
            read_ttl_ms: 0,
            default_timeout: None,
            queue_timeout: None,
            request_state_key: None,
            request_state_store: None,
            limits: Limits::default(),
            arguments_as_text: false,
            telemetry: None,
        }
    }
}

pub(super) fn server_info(info: &ServerInfo, rev: Revision) -> Value {
    let mut map = Map::new();
    map.insert("name".into(), Value::from(info.name.as_str()));
    if let (Some(title), true) = (&info.title, rev.has_structured_output()) {
        map.insert("title".into(), Value::from(title.as_str()));
    }
    map.insert("version".into(), Value::from(info.version.as_str()));
    Value::Object(map)
}
