//! What a Streamable HTTP server is started with ([`Options`]): its address,
//! endpoint, security policy, tokens and bounds.

use super::security::Allowed;
use super::tokens;
use std::time::Duration;

/// How the HTTP server listens and what it accepts.
#[derive(Debug, Clone)]
pub struct Options {
    /// Host name or address to bind (`127.0.0.1` by default).
    pub host: String,
    /// Port; 0 lets the system choose a free one.
    pub port: u16,
    /// The endpoint's path.
    pub path: String,
    /// Names accepted in `Host`; `None` means loopback names on a loopback
    /// address, and is refused for any other address.
    pub allowed_hosts: Option<Allowed>,
    /// Origins accepted in `Origin`; `None` as for hosts.
    pub allowed_origins: Option<Allowed>,
    /// Bearer tokens accepted; empty means no authentication (unless
    /// `token_check` is set).
    pub bearer_tokens: Vec<String>,
    /// Tokens checked by an R function instead (see [`tokens`]).
    pub token_check: Option<tokens::TokenCheck>,
    /// The canonical URL of the endpoint, for RFC 9728 protected-resource
    /// metadata (served only when set).
    pub resource: Option<String>,
    /// Authorization servers named in that metadata.
    pub authorization_servers: Vec<String>,
    /// Largest request body, in bytes (413 beyond).
    pub max_body_bytes: usize,
    /// Largest request head (request line and headers), in bytes (431).
    pub max_header_bytes: usize,
    /// Open handshake-era sessions. When full, the least recently used
    /// idle one (no call running, no stream open) ends to make room; with
    /// none idle, one more `initialize` gets 503.
    pub max_sessions: usize,
    /// Sessions one token holder keeps open (with tokens required): one
    /// more ends the holder's least recently used idle one, or gets 429.
    pub max_sessions_per_client: usize,
    /// Long-lived streams open at once: GET streams (resumptions included)
    /// and 2026-07-28 `subscriptions/listen` (503 beyond). Other requests
    /// are not counted: they end with their answer.
    pub max_streams: usize,
    /// Long-lived streams one client holds (the token holder, or without
    /// tokens the peer address; 429 beyond).
    pub max_streams_per_client: usize,
    /// Open connections. When a new one comes, the one that has waited
    /// longest (for a request head or the rest of a body) is closed to make
    /// room (see [`connections`]); only when none has waited
    /// [`connections::EVICTABLE_AFTER`] does the new one wait.
    pub max_connections: usize,
    /// How long a connection may wait for a complete request head: after it
    /// opens, or after its last answer (kept alive). Then it is closed.
    pub idle_timeout: Duration,
    /// How long a request's body may take once its head is in, plus one
    /// second per [`body::BODY_MIN_RATE`] bytes received (408 beyond).
    pub body_timeout: Duration,
    /// A session without requests or open streams for this long ends.
    pub session_idle: Duration,
    /// A tool call not answered within this long is answered as an event
    /// stream, so the client sees the response is coming.
    pub stream_after: Duration,
    /// How often an open event stream gets a keep-alive comment.
    pub keepalive: Duration,
    /// How long a client the server lets go waits before it reconnects
    /// (`retry:` of the priming event).
    pub reconnect_after: Duration,
    /// What every task id starts with: this replica's name, for a load
    /// balancer to route a task's requests on (`Mcp-Name` carries the id).
    pub task_id_prefix: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            host: "127.0.0.1".into(),
            port: 8000,
            path: "/mcp".into(),
            allowed_hosts: None,
            allowed_origins: None,
            bearer_tokens: Vec::new(),
            token_check: None,
            resource: None,
            authorization_servers: Vec::new(),
            max_body_bytes: 4 * 1024 * 1024,
            max_header_bytes: 64 * 1024,
            max_sessions: 100,
            max_sessions_per_client: 25,
            max_streams: 256,
            max_streams_per_client: 32,
            max_connections: 512,
            idle_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            session_idle: Duration::from_secs(30 * 60),
            stream_after: Duration::from_millis(500),
            keepalive: Duration::from_secs(15),
            reconnect_after: Duration::from_secs(1),
            task_id_prefix: String::new(),
        }
    }
}
