//! The bridge between R's main thread and the protocol engine.
//!
//! R drives the loop (see `R/server.R`): `poll()` waits in Rust for the next
//! tool call, R runs the handler, and `complete_*()` hands the outcome back.
//! Only this thread touches R; the engine's threads exchange plain Rust data.

use crate::check;
use crate::from_json;
use crate::result;
use crate::rvalue::RValue;
use crate::tool::{plan, ToolPlan};
use crate::types::field;
use extendr_api::prelude::*;
use mcp_core::board::Interrupt;
use mcp_core::engine::{Config, InputMode, Job, JobId, Outcome, Progress, ServerInfo};
use mcp_core::logging::LogLevel;
use mcp_core::registry::Registry;
use mcp_core::result::ToolResult;
use mcp_core::server::{Polled, Server};
use std::cell::RefCell;
use std::os::raw::{c_int, c_void};
use std::time::Duration;

extern "C" {
    fn R_ToplevelExec(fun: Option<unsafe extern "C" fn(*mut c_void)>, data: *mut c_void) -> c_int;
    fn R_CheckUserInterrupt();
}

unsafe extern "C" fn check_interrupt(_: *mut c_void) {
    R_CheckUserInterrupt();
}

/// Whether an interrupt (Ctrl-C, or one the server sent) is pending. The
/// check consumes it; R's jump ends inside `R_ToplevelExec`, so no Rust
/// frame is skipped.
pub fn interrupt_pending() -> bool {
    // SAFETY: called on R's main thread from inside a .Call.
    unsafe { R_ToplevelExec(Some(check_interrupt), std::ptr::null_mut()) == 0 }
}

/// How often a waiting `poll()` looks for Ctrl-C.
const INTERRUPT_TICK: Duration = Duration::from_millis(20);

/// What the server holds per tool besides the engine's definition.
struct ToolCall {
    shapes: Vec<(String, from_json::Shape)>,
    structured_output: bool,
}

/// A running server, owned by the R session that started it.
/// @noRd
#[extendr]
pub struct McpServer {
    server: Option<Server>,
    tools: Vec<ToolCall>,
    /// The call R is running, for `mcp_request()`.
    current: RefCell<Option<Box<Job>>>,
    /// The input request a 2026-07-28 call stopped at, for its
    /// `input_required` result.
    needs_input: RefCell<Option<(String, serde_json::Value)>>,
}

/// The server settings `mcp_server()` passes as a named list (checked
/// there): `name`, `version`, `title`, `instructions`, `max_message_size`,
/// `timeout`, `request_state_key`, `request_state_store`.
fn config_from(options: RValue) -> Config {
    let text = |name: &str| {
        field(options, name)
            .as_single_string()
            .map(|s| s.into_owned())
    };
    let number = |name: &str| check::single_number(field(options, name));
    Config {
        info: ServerInfo {
            name: text("name").unwrap_or_default(),
            version: text("version").unwrap_or_default(),
            title: text("title"),
        },
        instructions: text("instructions"),
        max_message_bytes: number("max_message_size")
            .map_or(Config::default().max_message_bytes, |n| n as usize),
        default_timeout: number("timeout").map(check::seconds),
        request_state_key: text("request_state_key").map(String::into_bytes),
        request_state_store: text("request_state_store").map(std::path::PathBuf::from),
        ..Config::default()
    }
}

/// Starts serving on stdin/stdout. `specs` are the definitions `tool()`
/// stored. Returns the server, or an error for R to raise.
/// @noRd
#[extendr]
fn server_start_(specs: List, options: Robj) -> Robj {
    let mut defs = Vec::with_capacity(specs.len());
    let mut tools = Vec::with_capacity(specs.len());
    for spec in specs.values() {
        match plan(RValue::of(&spec)) {
            Ok(ToolPlan {
                def,
                arguments,
                structured_output,
            }) => {
                defs.push(def);
                tools.push(ToolCall {
                    shapes: arguments,
                    structured_output,
                });
            }
            Err(e) => return check::fail(e),
        }
    }
    let registry = match Registry::new(defs) {
        Ok(r) => r,
        Err(e) => return check::fail(e),
    };
    let config = config_from(RValue::of(&options));
    // SAFETY: pthread_self on R's main thread (this .Call runs there).
    let r_thread = unsafe { libc::pthread_self() };
    let interrupt = Box::new(move || {
        // SIGINT reaches R's own handler on its main thread, which sets
        // R's interrupt flag and wakes blocking calls such as Sys.sleep().
        // SAFETY: the R main thread outlives the server.
        unsafe {
            libc::pthread_kill(r_thread, libc::SIGINT);
        }
    });
    match Server::start_stdio(config, registry, interrupt) {
        Ok(server) => McpServer {
            server: Some(server),
            tools,
            current: RefCell::new(None),
            needs_input: RefCell::new(None),
        }
        .into(),
        Err(e) => check::fail(format!("could not take over stdin and stdout: {e}")),
    }
}

/// @noRd
#[extendr]
impl McpServer {
    /// The next tool call as `list(id, tool, arguments)`, `NULL` if none
    /// arrived within `timeout_ms`, `"finished"` / `"interrupted"`, or
    /// `c("failed", description)` after an internal error.
    /// @noRd
    fn poll(&self, timeout_ms: i32) -> Robj {
        let Some(server) = &self.server else {
            return "finished".into();
        };
        let timeout = Duration::from_millis(timeout_ms.max(0) as u64);
        loop {
            let polled = server.poll(timeout, INTERRUPT_TICK, || {
                // An interrupt the server sent for a job that has since
                // ended is not the user's Ctrl-C.
                interrupt_pending() && server.interrupt_reason().is_none()
            });
            let mut job = match polled {
                Polled::Job(job) => job,
                Polled::Idle => return ().into(),
                Polled::Interrupted => return "interrupted".into(),
                Polled::Finished => return "finished".into(),
                Polled::Failed(description) => {
                    return vec!["failed".to_string(), description].into()
                }
            };
            let tool = &self.tools[job.tool];
            let problems = from_json::check_arguments(&job.arguments, &tool.shapes);
            if !problems.is_empty() {
                let name = &server.registry().tool(job.tool).def.name;
                let message = format!(
                    "Invalid arguments for tool \"{name}\": {}",
                    problems.join("; ")
                );
                server.complete(job.id, Outcome::Done(ToolResult::error(message)));
                continue;
            }
            // SAFETY: R's main thread; the list is protected by Robj at once.
            let arguments =
                unsafe { Robj::from_sexp(from_json::arguments(&job.arguments, &tool.shapes)) };
            let listed = List::from_pairs(vec![
                ("id", Robj::from(job.id as f64)),
                ("tool", Robj::from(job.tool as i32 + 1)),
                ("arguments", arguments),
            ])
            .into();
            // R has its own copy now: free the JSON tree before the handler runs.
            job.arguments = Default::default();
            *self.current.borrow_mut() = Some(job);
            return listed;
        }
    }

    /// The handler returned `value`.
    /// @noRd
    fn complete_value(&self, job: f64, tool: i32, value: Robj) {
        self.current.borrow_mut().take();
        if let Some(server) = &self.server {
            let structured = self
                .tools
                .get((tool - 1) as usize)
                .is_some_and(|t| t.structured_output);
            let result = result::from_value(RValue::of(&value), structured);
            server.complete(job as JobId, Outcome::Done(result));
        }
    }

    /// The handler raised an R error with this message.
    /// @noRd
    fn complete_error(&self, job: f64, message: &str) {
        self.current.borrow_mut().take();
        if let Some(server) = &self.server {
            server.complete(job as JobId, Outcome::Done(ToolResult::error(message)));
        }
    }

    /// The handler was interrupted. Says why: `"cancelled"`, `"timeout"`,
    /// `"shutdown"` (the client left) or `"user"` (Ctrl-C at the console).
    /// @noRd
    fn complete_interrupted(&self, job: f64) -> &'static str {
        self.current.borrow_mut().take();
        let Some(server) = &self.server else {
            return "user";
        };
        let job = job as JobId;
        let (outcome, why) = match server.interrupt_reason() {
            Some((j, Interrupt::Cancel)) if j == job => (Outcome::Cancelled, "cancelled"),
            Some((j, Interrupt::Timeout(limit))) if j == job => {
                (Outcome::TimedOut(limit), "timeout")
            }
            Some((j, Interrupt::Shutdown)) if j == job => (Outcome::Cancelled, "shutdown"),
            _ => (
                Outcome::Done(ToolResult::error(
                    "The tool call was interrupted at the server, which is shutting down.",
                )),
                "user",
            ),
        };
        server.complete(job, outcome);
        why
    }

    /// The running call reports progress.
    /// @noRd
    fn progress(&self, job: f64, progress: f64, total: Nullable<f64>, message: Nullable<String>) {
        if let Some(server) = &self.server {
            let update = Progress {
                progress,
                total: total.into_option(),
                message: message.into_option(),
            };
            server.progress(job as JobId, update);
        }
    }

    /// The running call logs a message at `level` (checked by the R side).
    /// @noRd
    fn log(&self, job: f64, level: &str, message: &str) {
        if let (Some(server), Some(level)) = (&self.server, LogLevel::parse(level)) {
            server.log(job as JobId, level, serde_json::Value::from(message));
        }
    }

    /// Whether the client cancelled this call.
    /// @noRd
    fn cancelled(&self, job: f64) -> bool {
        self.server
            .as_ref()
            .is_some_and(|s| s.is_cancelled(job as JobId))
    }

    /// What a handler may know about the request it serves (`mcp_request()`).
    /// @noRd
    fn request_context(&self) -> Robj {
        let current = self.current.borrow();
        let (Some(job), Some(server)) = (current.as_ref(), &self.server) else {
            return ().into();
        };
        let context = &job.context;
        let raw = |text: &str| -> Robj {
            match serde_json::from_str::<serde_json::Value>(text) {
                // SAFETY: R's main thread; protected by Robj at once.
                Ok(v) => unsafe { Robj::from_sexp(from_json::build(&v, &from_json::Shape::Raw)) },
                Err(_) => ().into(),
            }
        };
        let value = |v: &Option<serde_json::Value>| -> Robj {
            match v {
                // SAFETY: as above.
                Some(v) => unsafe { Robj::from_sexp(from_json::build(v, &from_json::Shape::Raw)) },
                None => ().into(),
            }
        };
        let meta = context.meta.clone().map(serde_json::Value::Object);
        List::from_pairs(vec![
            ("request_id", raw(context.request_id.as_json())),
            (
                "tool",
                Robj::from(server.registry().tool(job.tool).def.name.as_str()),
            ),
            ("protocol_version", Robj::from(context.revision.as_str())),
            ("client", value(&context.client_info)),
            ("meta", value(&meta)),
            (
                "progress_token",
                context
                    .progress_token
                    .as_deref()
                    .map_or_else(|| ().into(), raw),
            ),
            (
                "log_level",
                context
                    .log_level
                    .map_or_else(|| ().into(), |l| Robj::from(l.as_str())),
            ),
        ])
        .into()
    }

    /// Asks the user for input through the client. Returns
    /// `list(status, value)`: `"answer"` with the answer (`list(action,
    /// content)`); `"needs_input"` when the call must end here (the engine
    /// answers it with an `input_required` result to retry, or with -32021
    /// when the request did not declare elicitation); `"unavailable"` or `"failed"`
    /// with the reason; `"interrupted"` when an interrupt arrived while
    /// waiting (R raises it again).
    /// @noRd
    fn elicit(&self, key: &str, message: &str, schema: Robj) -> Robj {
        let reply = |status: &str, value: Robj| -> Robj {
            List::from_pairs(vec![("status", Robj::from(status)), ("value", value)]).into()
        };
        let current = self.current.borrow();
        let (Some(job), Some(server)) = (current.as_ref(), &self.server) else {
            return reply("unavailable", "no tool call is running".into());
        };
        let requested = match crate::types::elicitation_schema(RValue::of(&schema)) {
            Ok(s) => s,
            Err(e) => return check::fail(e),
        };
        let request = serde_json::json!({
            "method": "elicitation/create",
            "params": { "message": message, "requestedSchema": requested },
        });
        let answer_value = |v: &serde_json::Value| -> Robj {
            // SAFETY: R's main thread; protected by Robj at once.
            unsafe { Robj::from_sexp(from_json::build(v, &from_json::Shape::Raw)) }
        };
        if let Some(answer) = job.context.answers.get(key) {
            return reply("answer", answer_value(answer));
        }
        match &job.context.input {
            InputMode::Unavailable(reason) => reply("unavailable", reason.as_str().into()),
            InputMode::Retry | InputMode::MissingCapability => {
                *self.needs_input.borrow_mut() = Some((key.to_string(), request));
                reply("needs_input", ().into())
            }
            InputMode::Ask => {
                let answers = server.ask(job.id, key.to_string(), request);
                loop {
                    match answers.recv_timeout(INTERRUPT_TICK) {
                        Ok(Ok(answer)) => return reply("answer", answer_value(&answer)),
                        Ok(Err(reason)) => return reply("failed", reason.into()),
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                            return reply("failed", "the server stopped".into())
                        }
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                            if interrupt_pending() {
                                return reply("interrupted", ().into());
                            }
                        }
                    }
                }
            }
        }
    }

    /// The handler stopped at an input request: answer with `input_required`.
    /// @noRd
    fn complete_input_required(&self, job: f64) {
        self.current.borrow_mut().take();
        let pending = self.needs_input.borrow_mut().take();
        if let (Some(server), Some((key, request))) = (&self.server, pending) {
            server.complete(job as JobId, Outcome::InputRequired { key, request });
        }
    }

    /// Whether the server itself sent the interrupt R just caught (a cancel
    /// or timeout whose job has ended), as opposed to Ctrl-C.
    /// @noRd
    fn interrupt_was_ours(&self) -> bool {
        self.server
            .as_ref()
            .is_some_and(|s| s.interrupt_reason().is_some())
    }

    /// Stops serving and restores stdin and stdout. Safe to call twice.
    /// @noRd
    fn stop(&mut self) {
        if let Some(mut server) = self.server.take() {
            server.stop();
        }
    }
}

/// The arguments of a job in R form, for tests of the mapping.
/// @noRd
#[extendr]
fn arguments_for_test_(specs: List, tool: i32, json: &str) -> Robj {
    let Some(spec) = specs.values().nth((tool - 1) as usize) else {
        return check::fail("no such tool");
    };
    let plan = match plan(RValue::of(&spec)) {
        Ok(p) => p,
        Err(e) => return check::fail(e),
    };
    let Ok(serde_json::Value::Object(args)) = serde_json::from_str::<serde_json::Value>(json)
    else {
        return check::fail("arguments must be a JSON object");
    };
    let problems = from_json::check_arguments(&args, &plan.arguments);
    if !problems.is_empty() {
        return check::fail(problems.join("; "));
    }
    // SAFETY: R's main thread; protected by Robj at once.
    unsafe { Robj::from_sexp(from_json::arguments(&args, &plan.arguments)) }
}

extendr_module! {
    mod server;
    impl McpServer;
    fn server_start_;
    fn arguments_for_test_;
}
