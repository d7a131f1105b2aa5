//! The protocol engine of the mcpserver R package.
//!
//! Everything here is plain Rust with no R: JSON-RPC framing, the MCP
//! revisions and their wire shapes, the tool registry, schema validation,
//! result rendering, and the stdio server with its threads. The R bindings
//! live in the `mcpserver` crate and talk to [`server::Server`].

pub mod app;
pub mod backpressure;
pub mod board;
pub mod bridge;
pub mod catalog;
pub mod elicitation;
pub mod engine;
pub mod forks;
pub mod framing;
pub mod http;
pub mod http_client;
pub mod jsonrpc;
pub mod logging;
pub mod memory;
pub mod registry;
pub mod request_state;
pub mod result;
pub mod revision;
pub mod schema;
pub mod server;
pub mod session_bridge;
pub mod signals;
pub mod sse;
pub mod tasks;
pub mod threads;
pub mod time;
pub mod tool;
pub mod trace;
pub mod transport;
pub mod turns;
pub mod uri_template;
pub mod validation;
