//! The wire: what MCP messages look like and how they are read, checked and
//! written, with no state and no I/O.
//!
//! Owns JSON-RPC messages and their classification ([`jsonrpc`]), splitting
//! a byte stream into lines ([`framing`]), the protocol revisions
//! ([`revision`]), a tool's definition and its per-revision form ([`tool`],
//! with the Apps extension's `_meta.ui` in [`app`]), log levels
//! ([`logging`]), elicitation forms ([`elicitation`]), URI templates
//! ([`uri_template`]), and JSON Schema compilation and validation
//! ([`schema`], [`validation`]), and a response line written while its
//! structured content is still being made ([`streamed`]).
//!
//! May use: [`crate::util`] and outside crates only. Everything above builds
//! on it, so it knows nothing of servers, sessions or stores.

pub mod app;
pub mod elicitation;
pub mod framing;
pub mod jsonrpc;
pub mod logging;
pub mod revision;
pub mod schema;
pub mod streamed;
pub mod tool;
pub mod uri_template;
pub mod validation;
