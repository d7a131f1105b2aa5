//! The protocol engine: a synchronous state machine that turns incoming lines
//! and finished tool calls into outgoing messages and jobs for R.
//!
//! Both eras are served side by side. A request is *modern* (2026-07-28,
//! stateless) when its `params._meta` names a protocol version; `initialize`
//! starts a *legacy* session; anything else belongs to that session. Nothing
//! here blocks or touches threads, so every rule is testable in `cargo test`.

mod arguments;
pub mod board;
mod calls;
pub mod catalog;
mod changes;
mod completion;
mod config;
mod dispatch;
mod events;
mod handlers;
mod input;
mod job;
mod lifecycle;
mod middleware;
mod prompts;
pub mod registry;
mod resources;
pub mod result;
mod spans;
mod state;
mod task_methods;
pub mod turns;
mod wire;

pub use crate::util::ids::JobId;
pub use calls::task_notification;
pub use changes::CHANGED_LIST_TTL_MS;
pub use config::{Config, Limits, ServerInfo};
pub use events::RenderPlan;
pub use events::PROGRESS_INTERVAL;
pub use input::{capability_for, input_mode, is_answer_to, INPUT_METHODS};
pub use job::{CallContext, InputMode, Job, Outcome, Output, Progress};
pub use resources::{not_found, RESOURCE_NOT_FOUND, URI_ARGUMENT};
pub use state::{Engine, Shared};
