//! Small helpers with no MCP in them: the ids and random bytes several
//! layers share ([`ids`]), calendar arithmetic ([`time`]), threads that
//! never die silently ([`threads`]), timing spans for profiling
//! ([`spans`]), and slices of a shared line ([`shared_text`]).
//!
//! May use: outside crates only; every other layer may use it.

pub mod ids;
pub mod shared_text;
pub mod spans;
pub mod threads;
pub mod time;
