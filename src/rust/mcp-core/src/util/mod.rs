//! Small helpers with no MCP in them: the ids and random bytes several
//! layers share ([`ids`]), calendar arithmetic ([`time`]), and threads that
//! never die silently ([`threads`]).
//!
//! May use: outside crates only; every other layer may use it.

pub mod ids;
pub mod threads;
pub mod time;
