//! The Streamable HTTP client: what `mcp_bridge()` and R's test client use
//! to reach an MCP server over HTTP ([`http_client`]), with its decoder of
//! server-sent events ([`sse`]).
//!
//! May use: [`crate::protocol`] and [`crate::util`]. It knows nothing of the
//! engine or the server: it only carries messages.

pub mod http_client;
pub mod sse;
