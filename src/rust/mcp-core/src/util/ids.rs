//! The ids every layer shares, and the random bytes unguessable ids and
//! keys are made of.
//!
//! They live here, below the stores and the engine, because both name them:
//! a task remembers the job that runs it, and the engine hands jobs to R.

/// A job: one tool call (or token check) the engine hands to R, numbered in
/// the order the engine made them.
pub type JobId = u64;

/// Random bytes from the operating system.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    bytes
}
