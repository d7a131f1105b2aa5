//! Small helpers with no MCP in them: calendar arithmetic ([`time`]) and
//! threads that never die silently ([`threads`]).
//!
//! May use: outside crates only; every other layer may use it.

pub mod threads;
pub mod time;
