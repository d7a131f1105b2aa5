//! The protocol engine of the mcpserver R package.
//!
//! Everything here is plain Rust with no R. The crate is laid out by layer,
//! each a folder whose module doc says what it owns and what it may use;
//! dependencies point one way, from the top of this list to the bottom
//! (`tools/module-cycles.py --layers` checks it):
//!
//! - [`transport`]: the running server ([`transport::server::Server`], which
//!   the R bindings in the `mcpserver` crate drive), stdio, Streamable HTTP
//!   and the stdio-to-HTTP bridge; the only layer that owns threads and
//!   sockets.
//! - [`client`]: the Streamable HTTP client (the bridge's and R's
//!   `mcp_connect()`).
//! - [`engine`]: the sans-IO state machine that answers every MCP method,
//!   and what it serves (registry, catalog, rendered results).
//! - [`stores`]: state kept between requests (tasks, request state).
//! - [`telemetry`]: OpenTelemetry spans of requests and their export.
//! - [`protocol`]: the wire: JSON-RPC, framing, revisions, tool definitions,
//!   schemas and their validation.
//! - [`util`]: small helpers with no MCP in them (ids, calendar, threads).

pub mod client;
pub mod engine;
pub mod protocol;
pub mod stores;
pub mod telemetry;
pub mod transport;
pub mod util;
