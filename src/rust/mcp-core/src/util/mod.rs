//! Small helpers with no MCP in them: the ids and random bytes several
//! layers share ([`ids`]), calendar arithmetic ([`time`]), threads that
//! never die silently ([`threads`]), and timing spans for profiling
//! ([`spans`]).
//!
//! May use: outside crates only; every other layer may use it.

pub mod ids;
pub mod spans;
pub mod threads;
pub mod time;
