//! State that outlives one request: the task store ([`tasks`], calls
//! answered with a handle and fetched later) and the signed `requestState`
//! of 2026-07-28 input rounds ([`request_state`]).
//!
//! Each store is plain data with its bounds (no threads, no I/O but the
//! request-state key file); the engine decides when to use them.
//!
//! May use: [`crate::protocol`] and [`crate::util`] (the ids it shares with
//! the engine, such as [`crate::util::ids::JobId`], live there).

pub mod request_state;
pub mod tasks;
