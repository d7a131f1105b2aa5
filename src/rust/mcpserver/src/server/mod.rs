//! The bridge between R's main thread and the protocol engine.
//!
//! R drives the loop (see `R/server.R`): `poll()` waits in Rust for the next
//! tool call, R runs the handler, and `complete_*()` hands the outcome back.
//! Only this thread touches R; the engine's threads exchange plain Rust data.

mod asking;
mod options;
mod state;
mod telemetry;
mod text;

use crate::check;
use crate::from_json;
use crate::from_json_text;
use crate::interrupt::{interrupt_pending, r_interrupter, INTERRUPT_TICK};
use crate::result;
use crate::rvalue::{field, RValue};
use crate::to_json;
use crate::tool::{plan, ToolPlan};
use asking::answer_reply;
use extendr_api::prelude::*;
use mcp_core::engine::board::Interrupt;
use mcp_core::engine::registry::{Entry, Registry};
use mcp_core::engine::result::ToolResult;
use mcp_core::engine::{InputMode, JobId, Outcome, Progress};
use mcp_core::protocol::logging::LogLevel;
use mcp_core::transport::server::{Polled, Server};
use options::{config_from, http_options_from};
pub use state::McpServer;
use state::ToolCall;
use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;
use text::r_text;

/// How long an HTTP server that is ending with its process gives the last
/// answer to leave (its connections close when it stops).
const HTTP_PARTING: Duration = Duration::from_millis(500);

/// The engine's definitions and the bridge's call plans of `specs` (the
/// definitions `tool()` stored), or the error for R to raise.
/// The registry of the tools in `specs` and, when `mcp_server()` wrote a
/// catalog, of resources, templates and prompts, whose handlers follow the
/// tools in `specs`.
fn plan_tools(specs: List, options: &Robj) -> Result<(Registry, HashMap<usize, ToolCall>), String> {
    let mut defs = Vec::with_capacity(specs.len());
    let mut tools = HashMap::with_capacity(specs.len());
    for (key, spec) in specs.values().enumerate() {
        let (def, call) = plan_one(&spec)?;
        defs.push(def);
        tools.insert(key, call);
    }
    let catalog = field(RValue::of(options), "catalog")
        .as_single_string()
        .map(|s| s.into_owned());
    let registry = match catalog {
        Some(catalog) => Registry::with_catalog(defs, &catalog)?,
        None => Registry::new(defs)?,
    };
    Ok((registry, tools))
}

/// The engine's definition and the bridge's call plan of one spec.
fn plan_one(spec: &Robj) -> Result<(mcp_core::protocol::tool::ToolDef, ToolCall), String> {
    let ToolPlan {
        def,
        arguments,
        output,
    } = plan(RValue::of(spec))?;
    Ok((
        def,
        ToolCall {
            shapes: arguments,
            output,
        },
    ))
}

/// A string, or `NULL`.
fn optional_text(text: Option<&str>) -> Robj {
    text.map_or_else(|| ().into(), Robj::from)
}

fn serving(server: Server, tools: HashMap<usize, ToolCall>) -> Robj {
    McpServer {
        server: Some(server),
        tools: RefCell::new(tools),
        current: RefCell::new(None),
        needs_input: RefCell::new(HashMap::new()),
        worker_calls: RefCell::new(HashMap::new()),
        worker_answers: RefCell::new(HashMap::new()),
        nested: std::cell::Cell::new(false),
        children: RefCell::new(Default::default()),
    }
    .into()
}

/// Starts serving on stdin/stdout. `specs` are the definitions `tool()`
/// stored. Returns the server, or an error for R to raise.
/// @noRd
#[extendr]
fn server_start_(specs: List, options: Robj) -> Robj {
    let (registry, tools) = match plan_tools(specs, &options) {
        Ok(planned) => planned,
        Err(e) => return check::fail(e),
    };
    let config = config_from(RValue::of(&options));
    match Server::start_stdio(config, registry, r_interrupter()) {
        Ok(server) => serving(server, tools),
        Err(e) => check::fail(format!("could not take over stdin and stdout: {e}")),
    }
}

/// Starts serving Streamable HTTP. Returns the server, or an error for R
/// to raise (a port in use, a host that cannot be bound).
/// @noRd
#[extendr]
fn server_start_http_(specs: List, options: Robj, http: Robj) -> Robj {
    let (registry, tools) = match plan_tools(specs, &options) {
        Ok(planned) => planned,
        Err(e) => return check::fail(e),
    };
    let config = config_from(RValue::of(&options));
    let options = http_options_from(RValue::of(&http));
    let address = format!("{}:{}", options.host, options.port);
    match Server::start_http(config, registry, options, r_interrupter()) {
        Ok(mut server) => {
            // SIGTERM stops it gracefully, in the foreground and in the
            // background alike (see mcp_core::transport::signals); SIGINT stays R's.
            if let Err(e) = server.stop_on_sigterm() {
                server.stop();
                return check::fail(format!("could not handle SIGTERM: {e}"));
            }
            serving(server, tools)
        }
        Err(e) => check::fail(format!("could not serve HTTP on {address}: {e}")),
    }
}

/// @noRd
#[extendr]
impl McpServer {
    /// The next tool call as `list(id, tool, arguments)`, `NULL` if none
    /// arrived within `timeout_ms`, `"finished"` / `"interrupted"` /
    /// `"terminated"` (SIGTERM), or
    /// `c("failed", description)` after an internal error.
    /// @noRd
    fn poll(&self, timeout_ms: i32) -> Robj {
        let Some(server) = &self.server else {
            return "finished".into();
        };
        let timeout = Duration::from_millis(timeout_ms.max(0) as u64);
        loop {
            // No job runs while R waits here, and the server's interrupts
            // never outlive their job: any interrupt now is Ctrl-C.
            let polled = server.poll(timeout, INTERRUPT_TICK, interrupt_pending);
            let mut job = match polled {
                Polled::Job(job) => job,
                Polled::Idle => return ().into(),
                Polled::Interrupted => return "interrupted".into(),
                Polled::Finished => return "finished".into(),
                Polled::Terminated => return "terminated".into(),
                Polled::Failed(description) => {
                    return vec!["failed".to_string(), description].into()
                }
            };
            let key = job.registry.tool(job.tool).key;
            let tools = self.tools.borrow();
            let Some(tool) = tools.get(&key) else {
                drop(tools);
                let message = "The tool is not served any more.";
                server.complete(job.id, Outcome::Done(ToolResult::error(message)));
                continue;
            };
            // Large arguments come as checked text: read straight into R
            // values, or, where that gives up, the way small ones are.
            let span = mcp_core::util::spans::span("R thread: arguments to R values", 0);
            if let Some(text) = job.sent_arguments.take() {
                let required = job.registry.tool(job.tool).input_validator.required();
                // SAFETY: R's main thread; protected by Robj at once.
                let built = unsafe { from_json_text::arguments(&text, &tool.shapes, required) };
                if let Ok(arguments) = built {
                    let listed = unsafe {
                        Robj::from_sexp(from_json::tool_call_of(
                            job.id as f64,
                            key as i32 + 1,
                            arguments,
                        ))
                    };
                    drop(span);
                    drop(tools);
                    *self.current.borrow_mut() = Some(job);
                    return listed;
                }
                let _whole =
                    mcp_core::util::spans::span("R thread: read whole instead", text.len());
                job.arguments = read_checked(&text, required);
            }
            let problems = from_json::check_arguments(&job.arguments, &tool.shapes);
            if !problems.is_empty() {
                drop(tools);
                let name = &job.registry.tool(job.tool).def.name;
                let message = format!(
                    "Invalid arguments for tool \"{name}\": {}",
                    problems.join("; ")
                );
                server.complete(job.id, Outcome::Done(ToolResult::error(message)));
                continue;
            }
            // SAFETY: R's main thread, arguments checked; the list is
            // protected by Robj at once. R finds the entry's function by
            // its key (1-based there).
            let listed = unsafe {
                Robj::from_sexp(from_json::tool_call(
                    job.id as f64,
                    key as i32 + 1,
                    &job.arguments,
                    &tool.shapes,
                ))
            };
            drop(span);
            drop(tools);
            // R has its own copy now: free the JSON tree before the handler runs.
            job.arguments = Default::default();
            *self.current.borrow_mut() = Some(job);
            return listed;
        }
    }

    /// The handler returned `value`.
    /// @noRd
    fn complete_value(&self, job: f64, tool: i32, value: Robj) {
        self.forget(job as JobId);
        if let Some(server) = &self.server {
            // Converting reads R values only (it runs no R code), so the
            // borrow cannot meet another.
            let tools = self.tools.borrow();
            let output = tools
                .get(&((tool - 1) as usize))
                .and_then(|t| t.output.as_ref());
            let value = RValue::of(&value);
            if let Some(plan) = output.filter(|plan| to_json::streamable(value, plan)) {
                if let Some(sink) = server.complete_streamed(job as JobId, None, false) {
                    let _span = mcp_core::util::spans::span("R thread: rows to JSON, in parts", 0);
                    if to_json::to_json_in_parts(value, plan, &mut |part| sink.send(part)) {
                        sink.finish();
                    }
                    return;
                }
            }
            let span = mcp_core::util::spans::span("R thread: R value to a result", 0);
            let result = result::from_value(value, output);
            drop(span);
            let checked = output.is_none() || result.vouched.conforms;
            drop(tools);
            if let Some(result) = send_written(server, job as JobId, result, checked) {
                server.complete(job as JobId, Outcome::Done(result));
            }
        }
    }

    /// The handler raised an R error with this message.
    /// @noRd
    fn complete_error(&self, job: f64, message: Robj) {
        self.forget(job as JobId);
        if let Some(server) = &self.server {
            let message = r_text(&message).unwrap_or_default();
            server.complete(job as JobId, Outcome::Done(ToolResult::error(message)));
        }
    }

    /// R code around the handler (middleware, see `R/middleware.R`) raised
    /// an R error with this message: the request fails with -32603, unlike
    /// a handler's own error, which is a tool error (`isError`).
    /// @noRd
    fn complete_failed(&self, job: f64, message: Robj) {
        self.forget(job as JobId);
        if let Some(server) = &self.server {
            let message = r_text(&message).unwrap_or_default();
            server.complete(job as JobId, Outcome::Failed(message));
        }
    }

    /// R caught an interrupt, in a handler or in its loop. Ends the call R
    /// is running, if any, the way the server's interrupt for it says, and
    /// tells R why: `"cancelled"`, `"timeout"`, `"shutdown"` (the client
    /// left), or `"user"` for any other interrupt (Ctrl-C at the console),
    /// which stops serving. Race-free: the server interrupts only the job
    /// that is running, and settles that interrupt as the job ends.
    /// @noRd
    fn interrupted(&self) -> &'static str {
        let job = self.current.borrow_mut().take();
        let (Some(server), Some(job)) = (&self.server, job) else {
            return "user";
        };
        let (outcome, why) = match server.interrupt_reason() {
            Some((j, Interrupt::Cancel)) if j == job.id => (Outcome::Cancelled, "cancelled"),
            Some((j, Interrupt::Timeout(limit))) if j == job.id => {
                (Outcome::TimedOut(limit), "timeout")
            }
            Some((j, Interrupt::Shutdown)) if j == job.id => (Outcome::Cancelled, "shutdown"),
            _ => (
                Outcome::Done(ToolResult::error(
                    "The tool call was interrupted at the server, which is shutting down.",
                )),
                "user",
            ),
        };
        server.complete(job.id, outcome);
        why
    }

    /// The running call reports progress.
    /// @noRd
    fn progress(&self, job: f64, progress: f64, total: Nullable<f64>, message: Robj) {
        if let Some(server) = &self.server {
            let update = Progress {
                progress,
                total: total.into_option(),
                message: r_text(&message),
            };
            server.progress(job as JobId, update);
        }
    }

    /// The running call logs a message at `level` (checked by the R side).
    /// @noRd
    fn log(&self, job: f64, level: &str, message: Robj) {
        if let (Some(server), Some(level)) = (&self.server, LogLevel::parse(level)) {
            let message = r_text(&message).unwrap_or_default();
            server.log(job as JobId, level, serde_json::Value::from(message));
        }
    }

    /// A resource changed (`mcp_resource_updated()`): subscribers are told.
    /// @noRd
    fn resource_updated(&self, uri: Robj) {
        if let (Some(server), Some(uri)) = (&self.server, r_text(&uri)) {
            server.resource_updated(&uri);
        }
    }

    /// Serves the entries `specs` from now on (tools, then the handlers of
    /// `catalog`, as at start), keyed by `keys` (1-based): an entry whose
    /// key the server knows keeps its compiled definition, others are
    /// checked and compiled as at start. `during_call`: clients hear of the
    /// change when the running call ends, else shortly. Returns
    /// `list(changed, live)`: which lists changed (`tools`, `resources`,
    /// `prompts`) and the keys still in use (served now, or held by a call
    /// not yet ended); or an error for R to raise, and nothing changes.
    /// @noRd
    fn change(&self, specs: List, keys: Vec<i32>, catalog: Robj, during_call: bool) -> Robj {
        let Some(server) = &self.server else {
            return check::fail("the server has stopped");
        };
        if keys.len() != specs.len() || keys.iter().any(|&k| k < 1) {
            return check::fail("internal: one positive key per entry is needed");
        }
        let current = server.registry();
        let mut entries = Vec::with_capacity(specs.len());
        let mut planned = Vec::new();
        for (spec, &key) in specs.values().zip(&keys) {
            let key = (key - 1) as usize;
            if current.by_key(key).is_some() && self.tools.borrow().contains_key(&key) {
                entries.push(Entry::Kept { key });
                continue;
            }
            match plan_one(&spec) {
                Ok((def, call)) => {
                    entries.push(Entry::New { key, def });
                    planned.push((key, call));
                }
                Err(e) => return check::fail(e),
            }
        }
        let catalog = r_text(&catalog);
        let registry = match Registry::build(entries, catalog.as_deref(), Some(&current)) {
            Ok(r) => r,
            Err(e) => return check::fail(e),
        };
        drop(current);
        self.tools.borrow_mut().extend(planned);
        let changed = server.change(registry, during_call);
        let live = server.live_keys();
        self.tools.borrow_mut().retain(|key, _| live.contains(key));
        let live: Vec<i32> = live.iter().map(|&k| k as i32 + 1).collect();
        List::from_pairs(vec![
            (
                "changed",
                List::from_pairs(vec![
                    ("tools", Robj::from(changed.tools)),
                    ("resources", Robj::from(changed.resources)),
                    ("prompts", Robj::from(changed.prompts)),
                ])
                .into(),
            ),
            ("live", Robj::from(live)),
        ])
        .into()
    }

    /// The keys (1-based) of the entries served now or held by a call not
    /// yet ended.
    /// @noRd
    fn live_keys(&self) -> Vec<i32> {
        self.server.as_ref().map_or_else(Vec::new, |s| {
            s.live_keys().iter().map(|&k| k as i32 + 1).collect()
        })
    }

    /// Lets the HTTP connection carrying this call's messages go, for its
    /// client to reconnect for the rest (`mcp_close_stream()`).
    /// @noRd
    fn close_stream(&self, job: f64) -> bool {
        self.server
            .as_ref()
            .is_some_and(|s| s.close_stream(job as JobId))
    }

    /// Whether the client cancelled this call.
    /// @noRd
    fn cancelled(&self, job: f64) -> bool {
        self.server
            .as_ref()
            .is_some_and(|s| s.is_cancelled(job as JobId))
    }

    /// What a handler may know about the request it serves (`mcp_request()`),
    /// or an error naming a value R cannot hold (a NUL character).
    /// @noRd
    fn request_context(&self) -> Robj {
        // Copied out first: no borrow may be alive while R values are built.
        let (context, tool) = {
            let current = self.current.borrow();
            let (Some(job), Some(_)) = (current.as_ref(), &self.server) else {
                return ().into();
            };
            let tool = job.registry.tool(job.tool).def.name.clone();
            (job.context.clone(), tool)
        };
        let request_id = serde_json::from_str(context.request_id.as_json()).ok();
        let progress_token = context
            .progress_token
            .as_deref()
            .and_then(|t| serde_json::from_str(t).ok());
        let meta = context.meta.map(serde_json::Value::Object);
        let raw = |what: &str, v: Option<&serde_json::Value>| -> Result<Robj, String> {
            match v {
                // SAFETY: R's main thread; protected by Robj at once.
                Some(v) => Ok(unsafe { Robj::from_sexp(from_json::build_raw(v, what)?) }),
                None => Ok(().into()),
            }
        };
        let described = (|| -> Result<Robj, String> {
            Ok(List::from_pairs(vec![
                ("request_id", raw("the request id", request_id.as_ref())?),
                ("tool", Robj::from(tool.as_str())),
                ("protocol_version", Robj::from(context.revision.as_str())),
                ("client", raw("clientInfo", context.client_info.as_deref())?),
                (
                    "capabilities",
                    raw("the client's capabilities", Some(&context.capabilities))?,
                ),
                ("meta", raw("_meta", meta.as_ref())?),
                (
                    "auth",
                    raw("the bearer token's description", context.auth.as_ref())?,
                ),
                (
                    "progress_token",
                    raw("_meta.progressToken", progress_token.as_ref())?,
                ),
                (
                    "log_level",
                    context
                        .log_level
                        .map_or_else(|| ().into(), |l| Robj::from(l.as_str())),
                ),
                ("session_id", optional_text(context.session_id.as_deref())),
                (
                    "trace_id",
                    optional_text(context.trace.as_ref().map(|t| t.trace_id()).as_deref()),
                ),
                (
                    "span_id",
                    optional_text(context.trace.as_ref().map(|t| t.span_id()).as_deref()),
                ),
            ])
            .into())
        })();
        described.unwrap_or_else(|e| {
            check::fail(format!(
                "`mcp_request()` cannot describe this request: {e}."
            ))
        })
    }

    /// Opens a span named `name` inside call `job` (`mcp_span()`), with
    /// `attributes` (a named list of single values); whether it is traced.
    /// @noRd
    fn span_open(&self, job: f64, name: &str, attributes: Robj) -> bool {
        self.open_span(job as JobId, name, telemetry::value_of(&attributes))
    }

    /// Closes the innermost span `span_open()` opened; `error`: the
    /// message of the R error that left it, or `NULL`.
    /// @noRd
    fn span_close(&self, error: Robj) {
        self.close_span(r_text(&error));
    }

    /// Adds `attributes` (or, with `event` a string, an event with them)
    /// to the innermost open span, else to call `job`'s span.
    /// @noRd
    fn span_annotate(&self, job: f64, attributes: Robj, event: Robj) {
        self.annotate_span(
            job as JobId,
            telemetry::value_of(&attributes),
            r_text(&event),
        );
    }

    /// A span worker call `job` ran and reported (see `record_worker_span`).
    /// @noRd
    fn span_record(&self, job: f64, span: Robj) {
        self.record_worker_span(job as JobId, telemetry::value_of(&span));
    }

    /// Asks the user for input through the client (`mcp_elicit()`): as
    /// `ask_input()` with an `elicitation/create` request.
    /// @noRd
    fn elicit(&self, key: &str, message: Robj, schema: Robj) -> Robj {
        let message = r_text(&message).unwrap_or_default();
        let spec = List::from_pairs(vec![
            ("method", Robj::from("elicitation/create")),
            (
                "params",
                List::from_pairs(vec![("message", Robj::from(message))]).into(),
            ),
            ("form", schema),
        ]);
        self.ask_input(key, spec.into())
    }

    /// Sends one input request under `key`: `spec` is `list(method, params,
    /// form)` (see `input::read_request`). Returns `list(status, value)`:
    /// `"answer"` with the answer as an R value; `"needs_input"` when the
    /// call must end at its input requests (the engine answers it with an
    /// `input_required` result to retry, or with -32021 when the request did
    /// not declare a capability they need); `"unavailable"`, `"failed"` or
    /// `"unusable"` (an answer R cannot hold) with the reason;
    /// `"interrupted"` when an interrupt arrived while waiting (R raises it
    /// again).
    /// @noRd
    fn ask_input(&self, key: &str, spec: Robj) -> Robj {
        self.send_input_request(key, spec)
    }

    /// The running call goes on as a task (`mcp_task()`): its request is
    /// answered with the task's handle now, and what the tool returns
    /// becomes the task's result. The task's id; `NULL` when the call goes
    /// on as a plain call (the tool is not `task = "deferred"`, the client
    /// did not declare the tasks extension on a 2026-07-28 call, or no task
    /// has room).
    /// @noRd
    fn continue_as_task(&self) -> Robj {
        let (job, task, later) = {
            let current = self.current.borrow();
            let Some(job) = current.as_ref() else {
                return ().into();
            };
            (job.id, job.context.task.clone(), job.context.task_later)
        };
        if let Some(task) = task {
            return task.into();
        }
        let Some(server) = self.server.as_ref().filter(|_| later) else {
            return ().into();
        };
        let Some(task) = server.continue_as_task(job) else {
            return ().into();
        };
        if let Some(job) = self.current.borrow_mut().as_mut() {
            // Its questions now wait in the task (see `ask_inputs()`).
            job.context.task = Some(task.clone());
            job.context.task_later = false;
            job.context.input = InputMode::Ask;
        }
        task.into()
    }

    /// Sends one round of input requests (`mcp_ask()`): `specs[[i]]` (as
    /// for `ask_input()`) under `keys[i]`. Returns one `list(status, value)`
    /// per request, as `ask_input()` does. The requests the client is asked
    /// while the tool waits go out together and are answered together, once
    /// the client has answered all of them (in a task of the 2026-07-28
    /// extension it may answer them in several `tasks/update`). When one of
    /// them cannot be asked at all (`"unavailable"`), none is sent: the
    /// others are `"not_asked"`.
    /// @noRd
    fn ask_inputs(&self, keys: Robj, specs: Robj) -> Robj {
        self.send_input_round(keys, specs)
    }

    /// Takes the call `poll` just returned off the main thread: R runs it
    /// on a worker process. Returns `list(context, answers, unavailable)`:
    /// what `mcp_request()` tells the tool there (or the error it raises),
    /// the answers the call already has (a retried 2026-07-28 call), by
    /// key, each as `list(status, value)` as `elicit()` returns them, and
    /// why no input can be had (`NULL` if it can); `NULL` if no call was
    /// just polled.
    /// @noRd
    fn worker_call(&self) -> Robj {
        let context = self.request_context();
        let Some(job) = self.current.borrow_mut().take() else {
            return ().into();
        };
        let answers: Vec<(&str, Robj)> = job
            .context
            .answers
            .iter()
            .map(|(key, answer)| (key.as_str(), answer_reply(answer)))
            .collect();
        let unavailable = match &job.context.input {
            InputMode::Unavailable(reason) => Robj::from(reason.as_str()),
            _ => ().into(),
        };
        let listed = List::from_pairs(vec![
            ("context", context),
            ("answers", List::from_pairs(answers).into()),
            ("unavailable", unavailable),
        ])
        .into();
        self.worker_calls.borrow_mut().insert(job.id, job.context);
        listed
    }

    /// A worker call asks the user for input. Never waits: returns
    /// `list(status, value)` with status `"asked"` (the answer comes to
    /// `worker_answer()`), `"needs_input"` (complete the call with
    /// `complete_input_required()`), `"unavailable"` or `"failed"` with the
    /// reason, or `"invalid"` with what is wrong with the schema.
    /// @noRd
    fn worker_ask(&self, job: f64, key: &str, message: Robj, schema: Robj) -> Robj {
        self.ask_for_worker(job, key, message, schema)
    }

    /// The answer to a worker call's input request, as `elicit()` returns
    /// it, or `NULL` while the client has not answered.
    /// @noRd
    fn worker_answer(&self, job: f64) -> Robj {
        self.answer_for_worker(job)
    }

    /// The handler stopped at an input request: answer with `input_required`.
    /// @noRd
    fn complete_input_required(&self, job: f64) {
        let pending = self
            .needs_input
            .borrow_mut()
            .remove(&(job as JobId))
            .unwrap_or_default();
        self.forget(job as JobId);
        if let Some(server) = &self.server {
            let outcome = match pending.len() {
                1 => {
                    let (key, request) = pending.into_iter().next().expect("one request");
                    Outcome::InputRequired { key, request }
                }
                n if n > 1 => Outcome::InputsRequired(pending),
                // The tool's own code raised the condition, with no input
                // request behind it: the call must end all the same, or it
                // would stay unanswered (and the server would never exit).
                _ => Outcome::Done(ToolResult::error(
                    "The tool signalled that it needs input from the user without asking \
                     for any; use mcp_elicit() to ask.",
                )),
            };
            server.complete(job as JobId, outcome);
        }
    }

    /// Calls of these tools (1-based, as R numbers them) run on worker
    /// processes (`tool(concurrent = TRUE)`; see `R/workers.R`).
    /// @noRd
    fn run_on_workers(&mut self, tools: Vec<i32>) {
        if let Some(server) = &mut self.server {
            server.run_on_workers(tools.iter().map(|&t| (t - 1) as usize));
        }
    }

    /// A worker call ran past its limit of `seconds` (R stopped the worker).
    /// @noRd
    fn complete_timed_out(&self, job: f64, seconds: f64) {
        self.forget(job as JobId);
        if let Some(server) = &self.server {
            server.complete(job as JobId, Outcome::TimedOut(check::seconds(seconds)));
        }
    }

    /// A worker call was cancelled by the client (R stopped the worker).
    /// @noRd
    fn complete_cancelled(&self, job: f64) {
        self.forget(job as JobId);
        if let Some(server) = &self.server {
            server.complete(job as JobId, Outcome::Cancelled);
        }
    }

    /// Whether the calls R runs now were started by `mcp_client()` waiting
    /// for this server in the same session (R/mcp_client.R): such a call
    /// cannot wait for that client's answer to a question (it would wait
    /// for ever), so asking fails at once with the reason.
    /// @noRd
    fn serving_nested(&self, nested: bool) {
        self.nested.set(nested);
    }

    /// The address an HTTP server listens on, as `c(host, port)`, or `NULL`.
    /// @noRd
    fn http_address(&self) -> Robj {
        match self.server.as_ref().and_then(Server::http_address) {
            Some(address) => {
                let host = match address.ip() {
                    std::net::IpAddr::V6(ip) => format!("[{ip}]"),
                    ip => ip.to_string(),
                };
                vec![host, address.port().to_string()].into()
            }
            None => ().into(),
        }
    }

    /// The R process is ending while R's thread runs a call: its tool
    /// called `quit()` or `q()` (R runs this from an exit finalizer, see
    /// `R/server.R`). Rather than let the client see its connection close
    /// without a word, the call is answered with a tool error, and a line
    /// on stderr names the tool. Then serving stops: on stdio what is
    /// queued is delivered first (within the usual bound); over HTTP the
    /// answer gets a moment to leave before the process ends.
    /// @noRd
    fn exiting(&mut self) {
        let job = self.current.borrow_mut().take();
        if let (Some(server), Some(job)) = (&self.server, job) {
            let name = job.registry.tool(job.tool).def.name.clone();
            eprintln!(
                "mcpserver: the tool \"{name}\" ended the R process (it called quit() or q()); \
                 its call is answered with an error and the server stops."
            );
            let message = format!(
                "The tool \"{name}\" ended the R process that runs the server (it called quit() \
                 or q()): the server has stopped."
            );
            server.complete(job.id, Outcome::Done(ToolResult::error(message)));
            if server.http_address().is_some() {
                std::thread::sleep(HTTP_PARTING);
            }
        }
        self.stop();
    }

    /// Stops serving and restores stdin and stdout. Safe to call twice.
    /// @noRd
    fn stop(&mut self) {
        if let Some(mut server) = self.server.take() {
            server.stop();
        }
    }
}

/// Arguments the engine checked, read whole (see `from_json_text` for
/// when): optional ones sent as `null` left out, as the engine leaves them.
fn read_checked(text: &str, required: &[String]) -> serde_json::Map<String, serde_json::Value> {
    let Ok(serde_json::Value::Object(mut arguments)) = serde_json::from_str(text) else {
        return Default::default();
    };
    arguments.retain(|name, value| !value.is_null() || required.iter().any(|r| r == name));
    arguments
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

/// The arguments of a job as a large call's arrive: checked against the
/// tool's input schema without a tree, then read straight from the text
/// (`from_json_text`), or read whole where that gives up. Returns
/// `list(arguments, read = "text" | "whole")`, or the error the call
/// would be answered with. For the tests of that path.
/// @noRd
#[extendr]
fn arguments_from_text_for_test_(specs: List, tool: i32, json: &str) -> Robj {
    let Some(spec) = specs.values().nth((tool - 1) as usize) else {
        return check::fail("no such tool");
    };
    let plan = match plan(RValue::of(&spec)) {
        Ok(p) => p,
        Err(e) => return check::fail(e),
    };
    let checker = match mcp_core::protocol::validation::Checker::compile(&plan.def.input_schema) {
        Ok(c) => c,
        Err(e) => return check::fail(e),
    };
    if let Err(problems) = checker.check(json, true) {
        return check::fail(problems.summary());
    }
    let required = checker.required();
    // SAFETY: R's main thread; protected by Robj at once.
    if let Ok(arguments) = unsafe { from_json_text::arguments(json, &plan.arguments, required) } {
        let arguments = unsafe { Robj::from_sexp(arguments) };
        return list!(arguments = arguments, read = "text").into();
    }
    let args = read_checked(json, required);
    let problems = from_json::check_arguments(&args, &plan.arguments);
    if !problems.is_empty() {
        return check::fail(problems.join("; "));
    }
    let arguments = unsafe { Robj::from_sexp(from_json::arguments(&args, &plan.arguments)) };
    list!(arguments = arguments, read = "whole").into()
}

/// Results written already that are worth handing to the writer whole.
const WRITTEN_STREAMED_BYTES: usize = 256 * 1024;

/// Sends a large result that is structured content only, written already
/// and mirrored as its text block (`tool_result(structured_content =)`),
/// through the writer thread, which escapes the mirror as it sends it
/// instead of R's thread escaping it first (see
/// `Server::complete_streamed`). `checked`: the result needs no output
/// schema check. The result back when it cannot go that way.
fn send_written(
    server: &Server,
    job: JobId,
    result: ToolResult,
    checked: bool,
) -> Option<ToolResult> {
    let shape = match &result.structured {
        Some(json)
            if checked
                && !result.is_error
                && result.content.is_empty()
                && result.vouched.mirrored
                && json.get().len() >= WRITTEN_STREAMED_BYTES =>
        {
            json.get().starts_with('{')
        }
        _ => return Some(result),
    };
    let Some(sink) = server.complete_streamed(job, result.meta.clone(), shape) else {
        return Some(result);
    };
    let json = result.structured.expect("matched above").into_string();
    if sink.send(json) {
        sink.finish();
    }
    None
}

extendr_module! {
    mod server;
    impl McpServer;
    fn server_start_;
    fn server_start_http_;
    fn arguments_for_test_;
    fn arguments_from_text_for_test_;
}
