//! Everything with threads, descriptors and sockets: the running server
//! ([`server`]: the threads around the engine and the interface R's main
//! thread drives), stdio ([`stdio`], [`backpressure`], [`forks`]),
//! Streamable HTTP ([`http`]), SIGTERM ([`signals`]), the stdio-to-HTTP
//! bridge ([`bridge`]), and diagnostics ([`trace`], [`memory`]).
//!
//! May use every layer below: [`crate::engine`] (the state machine it
//! drives), [`crate::client`] (the bridge), [`crate::stores`],
//! [`crate::protocol`] and [`crate::util`]. Only this layer blocks or
//! spawns.

pub mod backpressure;
pub mod bridge;
pub mod forks;
pub mod http;
pub mod memory;
pub mod server;
pub mod session_bridge;
pub mod signals;
pub mod slots;
pub mod stdio;
pub mod trace;
