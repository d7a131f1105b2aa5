//! The protocol engine: a synchronous state machine that turns incoming lines
//! and finished tool calls into outgoing messages and jobs for R.
//!
//! Both eras are served side by side. A request is *modern* (2026-07-28,
//! stateless) when its `params._meta` names a protocol version; `initialize`
//! starts a *legacy* session; anything else belongs to that session. Nothing
//! here blocks or touches threads, so every rule is testable in `cargo test`.

use crate::engine::registry::{Kinds, Live, Registry};
use crate::protocol::app;
use crate::protocol::jsonrpc::{self, Line, Message, RequestId};
use crate::protocol::logging::LogLevel;
use crate::protocol::revision::Revision;
use crate::stores::request_state::Signer;
use crate::stores::tasks;
use arguments::{read_params, Verbatim};
use result::ToolResult;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";

mod arguments;
pub mod board;
pub mod catalog;
mod changes;
mod completion;
mod handlers;
mod input;
mod prompts;
pub mod registry;
mod resources;
pub mod result;
mod task_methods;
pub mod turns;

pub use changes::CHANGED_LIST_TTL_MS;
use handlers::Purpose;
pub use input::{capability_for, input_mode, is_answer_to, InputMode, INPUT_METHODS};
pub use resources::{not_found, RESOURCE_NOT_FOUND, URI_ARGUMENT};

/// Progress notifications for one request are sent at most this often; a
/// faster flood is thinned, the latest value winning.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(50);

/// Methods only 2026-07-28 has: a request for one without the modern
/// envelope is refused for what the envelope lacks, not as uninitialised.
const ONLY_IN_MODERN: &[&str] = &["server/discover", "subscriptions/listen", "tasks/update"];

/// `_meta` keys that exist only in the 2026-07-28 envelope: a request
/// carrying one means to be modern even when it forgot the version.
const MODERN_ONLY_META: &[&str] = &[META_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL];

/// Methods 2026-07-28 removed: a modern request for one gets -32601.
const REMOVED_IN_MODERN: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    "tasks/result",
    "tasks/list",
];

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The bounds on what one client may make the server hold (the transport
/// keeps them: see [`crate::transport::backpressure`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of output waiting for the client to read them before the
    /// server stops reading. 4 MiB holds thousands of ordinary responses
    /// (a `tools/list` of a few dozen tools is a few KiB), so only a client
    /// that has stopped reading ever meets it.
    pub max_queued_output: usize,
    /// Tool calls accepted and not yet answered (the running one included;
    /// calls run as tasks are bounded by the task store instead, as their
    /// client is answered at once and goes on talking) before the server
    /// stops reading; over it (possible only while a tool
    /// waits for input) a call is refused. R runs one call at a time, so a
    /// few hundred waiting is far more than any client needs to keep R busy.
    pub max_queued_calls: usize,
    /// `subscriptions/listen` streams open at once; one more is refused.
    /// The tool list never changes, so a client needs one or two at most.
    pub max_subscriptions: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_queued_output: 4 * 1024 * 1024,
            max_queued_calls: 256,
            max_subscriptions: 64,
        }
    }
}

/// Who the server says it is.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
    pub title: Option<String>,
}

/// Settings fixed for the life of a server.
#[derive(Debug, Clone)]
pub struct Config {
    pub info: ServerInfo,
    pub instructions: Option<String>,
    /// Longest line accepted, in bytes.
    pub max_message_bytes: usize,
    /// How long clients may cache `tools/list` and `server/discover` (2026-07-28).
    pub list_ttl_ms: u64,
    /// How long clients may cache a `resources/read` result (2026-07-28);
    /// 0 by default, as a resource's R function may answer differently
    /// each time.
    pub read_ttl_ms: u64,
    /// Limit for tools that set none of their own.
    pub default_timeout: Option<Duration>,
    /// How long a call may wait for R to take it (R busy with the user's
    /// command, in a session serving in the background, or with calls
    /// ahead of it) before it is answered with a tool error saying nothing
    /// ran; `None` waits as long as it takes. Tasks are never cut short.
    pub queue_timeout: Option<Duration>,
    /// Key for signing the state of input-required rounds; a random key
    /// when `None` (state then only verifies within this process).
    pub request_state_key: Option<Vec<u8>>,
    /// A directory where the processes sharing `request_state_key` record
    /// the states they accepted, so each is accepted once among them all
    /// (see `request_state`); `None` records them in memory, per process.
    pub request_state_store: Option<PathBuf>,
    /// What one client may make the server hold.
    pub limits: Limits,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            info: ServerInfo {
                name: "mcpserver".into(),
                version: "0.0.0".into(),
                title: None,
            },
            instructions: None,
            max_message_bytes: 16 * 1024 * 1024,
            list_ttl_ms: 300_000,
            read_ttl_ms: 0,
            default_timeout: None,
            queue_timeout: None,
            request_state_key: None,
            request_state_store: None,
            limits: Limits::default(),
        }
    }
}

pub use crate::util::ids::JobId;

/// What a tool handler may want to know about the request that called it.
#[derive(Debug, Clone)]
pub struct CallContext {
    pub request_id: RequestId,
    pub revision: Revision,
    /// The client's progress token as JSON text, if it asked for progress.
    pub progress_token: Option<String>,
    /// The request's `params._meta`, if any.
    pub meta: Option<Map<String, Value>>,
    /// `{name, version, ...}` as the client described itself (shared with
    /// its session and the other calls: no copy per call to make or free).
    pub client_info: Option<Arc<Value>>,
    /// The level a 2026-07-28 request asked to receive logs at.
    pub log_level: Option<LogLevel>,
    /// How the handler may ask the user for input (elicitation; see
    /// [`input::input_mode`] for sampling and roots).
    pub input: InputMode,
    /// The client's capabilities: from this request (2026-07-28) or from
    /// `initialize` (shared as `client_info` is).
    pub capabilities: Arc<Value>,
    /// Answers already given to this call's input requests, by key.
    pub answers: Map<String, Value>,
    /// The task running this call, if it runs as one.
    pub task: Option<String>,
    /// What the server's bearer-token function said about the caller's
    /// token (HTTP), if it described the caller.
    pub auth: Option<Value>,
    /// Whether the call may still become a task of the 2026-07-28
    /// extension when the tool asks (see [`Engine::on_continue_as_task`]).
    pub task_later: bool,
}

/// A `tools/call` for the R thread.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: JobId,
    /// The tool's (or handler's) index in `registry`.
    pub tool: usize,
    /// The registry the call was accepted with: it keeps the tool's
    /// definition for the call, even if the tool is removed meanwhile.
    pub registry: Arc<Registry>,
    /// The arguments, once [`Job::read_arguments`] has read them.
    pub arguments: Map<String, Value>,
    /// The arguments object as the client sent it (`None`: no arguments),
    /// until [`Job::read_arguments`] reads it.
    pub sent_arguments: Option<Arc<str>>,
    pub context: CallContext,
    /// What reading small arguments early found, until
    /// [`Job::read_arguments`] hands it over.
    pub(crate) read_early: Option<Result<(), ToolResult>>,
    /// A check of a bearer token (HTTP), not a client's request: R runs
    /// these in turn with calls by their own rule (see [`crate::transport::server`]).
    pub token_check: bool,
}

/// What a job for the R thread starts from: a `tools/call`, or the hidden
/// handler of a resource read, prompt or completion. See
/// [`Engine::launch_job`].
pub(super) struct NewJob {
    pub(super) job: JobId,
    pub(super) request_id: RequestId,
    /// The tool, or hidden handler, the job runs.
    pub(super) handler: usize,
    pub(super) rev: Revision,
    /// The arguments object as sent (`None`: no arguments).
    pub(super) arguments: Option<Arc<str>>,
    /// The request's `params._meta`.
    pub(super) meta: Option<Map<String, Value>>,
    pub(super) client_info: Option<Arc<Value>>,
    pub(super) progress_token: Option<String>,
    pub(super) capabilities: Arc<Value>,
    pub(super) answers: Map<String, Value>,
    pub(super) input: InputMode,
    pub(super) purpose: Purpose,
    /// The task the call runs as, if it does.
    pub(super) task: Option<String>,
    /// Whether it may still become a task (see `JobState::task_later`).
    pub(super) task_later: bool,
}

/// How a job ended.
#[derive(Debug)]
pub enum Outcome {
    /// The handler returned (a failing R call is a result with `isError`).
    Done(ToolResult),
    /// Interrupted because the client cancelled: nothing more is sent.
    Cancelled,
    /// Interrupted because it ran past its limit.
    TimedOut(Duration),
    /// The server failed to run the handler at all: -32603.
    Failed(String),
    /// The handler needs input it has not got (2026-07-28): the call is
    /// answered with an `input_required` result asking for it, or with
    /// -32021 when its request did not declare the capability to answer.
    InputRequired { key: String, request: Value },
    /// The same for several input requests at once, by key, asked in one
    /// `input_required` round.
    InputsRequired(Vec<(String, Value)>),
    /// A result already checked and rendered with a [`RenderPlan`] (off
    /// the engine's lock): the result body, or the JSON-RPC error object.
    Settled(Result<String, Value>),
}

/// What rendering a job's result needs, so that the costly part (checking
/// the output schema, writing a large result's JSON) can run on the tool's
/// thread while the engine goes on answering other requests.
pub struct RenderPlan {
    registry: Arc<Registry>,
    tool: usize,
    revision: Revision,
    extra_meta: Option<Map<String, Value>>,
    /// What the job's result is for (a resource read, a prompt, ...).
    purpose: Purpose,
    read_ttl_ms: u64,
}

impl RenderPlan {
    /// The result body, or the -32603 error a result breaking the tool's
    /// output schema gets.
    pub fn settle(&self, result: &ToolResult) -> Result<String, Value> {
        if self.purpose != Purpose::Tool {
            return handlers::settle(
                &self.purpose,
                result,
                self.revision,
                self.extra_meta.as_ref(),
                self.read_ttl_ms,
            );
        }
        let tool = self.registry.tool(self.tool);
        match result::check_output(tool, result) {
            Ok(()) => Ok(result::render(
                tool,
                result,
                self.revision,
                self.extra_meta.as_ref(),
            )),
            Err(violation) => Err(jsonrpc::error_object(
                jsonrpc::INTERNAL_ERROR,
                &violation.message,
                Some(&violation.data),
            )),
        }
    }
}

/// What the engine asks of the runtime around it.
#[derive(Debug)]
pub enum Output {
    /// One line for the protocol stdout.
    Write(String),
    /// A notification for the open `subscriptions/listen` request with
    /// this id (2026-07-28): on HTTP it goes on that request's stream.
    ToListener(RequestId, String),
    /// A tool call for R to run, in order.
    Run(Box<Job>),
    /// The client cancelled this job: drop it if queued, interrupt it if running.
    Cancel(JobId),
    /// Call [`Engine::on_progress_due`] for this job after the delay.
    ProgressDue(JobId, Duration),
    /// The answer to a job's input request (see [`Engine::on_ask`]), or why
    /// there will be none.
    Answer(JobId, Result<Value, String>),
    /// Call [`Engine::on_task_alarm`] after the delay, when a task's time to
    /// live runs out. It replaces the alarm an earlier `TaskAlarm` set.
    TaskAlarm(Duration),
    /// A task's job belongs to another engine of the server (over HTTP,
    /// the engine of the request that created the task): call
    /// [`Engine::cancel_job`] on that engine, later, not under this one's
    /// lock.
    CancelElsewhere(JobId),
    /// A task of the 2026-07-28 extension changed status: `params` is the
    /// task as `tasks/get` shows it, for a `notifications/tasks` on every
    /// listen stream that follows the task (see [`Output::WatchTasks`]),
    /// whichever engine of the server holds it.
    TaskStatus { task: String, params: Value },
    /// The listen stream `subscription` of this engine follows these tasks.
    WatchTasks {
        subscription: RequestId,
        tasks: Vec<String>,
    },
    /// The listen stream `subscription` of this engine has ended.
    UnwatchTasks(RequestId),
}

/// One progress report from a running tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

struct Session {
    revision: Revision,
    client_info: Option<Arc<Value>>,
    /// The client's capabilities from `initialize`.
    capabilities: Arc<Value>,
    /// Set by `logging/setLevel`; no logs are sent before it.
    log_level: Option<LogLevel>,
    /// The client sent `notifications/initialized`: the server may send
    /// it notifications of its own (list changes) from then on.
    initialized: bool,
    /// The lists whose changes it was told it would hear of (the
    /// capabilities declared in `initialize`).
    told: Kinds,
}

struct JobState {
    request_id: RequestId,
    tool: usize,
    /// The registry `tool` indexes (the one the call was accepted with).
    registry: Arc<Registry>,
    revision: Revision,
    cancelled: bool,
    progress_token: Option<String>,
    /// Log level of a 2026-07-28 request (legacy ones follow the session).
    log_level: Option<LogLevel>,
    /// The last progress value sent, and when.
    last_progress: Option<(f64, Instant)>,
    /// A report held back by the rate limit, to send when it is due.
    pending_progress: Option<Progress>,
    /// The task this call runs as (its request was answered at once).
    task: Option<String>,
    /// What an `input_required` result must bind its state to (2026-07-28):
    /// the arguments object as sent.
    arguments: Option<Arc<str>>,
    answers: Map<String, Value>,
    /// How the handler may ask for input; decides what stopping at an
    /// input request answers.
    input: InputMode,
    /// The client's capabilities, for the methods input requests need.
    capabilities: Arc<Value>,
    /// What the result is for: a tool call, or a resource read, prompt or
    /// completion run by its handler.
    purpose: Purpose,
    /// The answers it waits for from requests sent to the client.
    gathering: Option<input::Gathering>,
    /// It may still become a task (a deferred tool's 2026-07-28 call from
    /// a client that declared the tasks extension).
    task_later: bool,
}

impl JobState {
    fn new(
        request_id: RequestId,
        tool: usize,
        registry: Arc<Registry>,
        revision: Revision,
        capabilities: Arc<Value>,
    ) -> JobState {
        JobState {
            request_id,
            tool,
            registry,
            revision,
            cancelled: false,
            progress_token: None,
            log_level: None,
            last_progress: None,
            pending_progress: None,
            task: None,
            arguments: None,
            answers: Map::new(),
            input: InputMode::Unavailable(String::new()),
            capabilities,
            purpose: Purpose::Tool,
            gathering: None,
            task_later: false,
        }
    }
}

/// Responses collected for one 2025-03-26 batch.
struct Batch {
    pending: usize,
    responses: Vec<String>,
}

pub struct Engine {
    config: Arc<Config>,
    /// What the server serves now; `registry` is the snapshot of it that
    /// the message being handled sees (taken as each message arrives).
    live: Arc<Live>,
    registry: Arc<Registry>,
    session: Option<Session>,
    jobs: HashMap<JobId, JobState>,
    /// Jobs in `jobs` whose client waits for the answer (not tasks, which
    /// are answered at once and bounded on their own by `tasks::MAX_TASKS`).
    direct_calls: usize,
    by_request: HashMap<RequestId, JobId>,
    /// Open 2026-07-28 listen streams, and the list changes each asked for.
    listens: HashMap<RequestId, Kinds>,
    batches: HashMap<u64, Batch>,
    batch_of: HashMap<RequestId, u64>,
    /// Job ids come from here: shared by every engine of one server (one
    /// per HTTP session or request), so a job id names one call server-wide.
    job_ids: Arc<AtomicU64>,
    next_batch: u64,
    server_meta: Map<String, Value>,
    /// Shared likewise: a state one engine issues is accepted by another,
    /// and once among them all.
    signer: Arc<Mutex<Signer>>,
    /// The tasks this engine's requests reach: its own (stdio, or an HTTP
    /// session), or, for an engine that lives for one 2026-07-28 HTTP
    /// request, the store all such engines of the server share, so that a
    /// task one request creates is found by the next.
    tasks: Arc<Mutex<tasks::Store>>,
    /// Requests the server sent the client, by id: whose input they ask
    /// for, and with which method.
    asks: HashMap<RequestId, input::Asked>,
    next_ask: u64,
    /// URIs the handshake-era session subscribed to.
    resource_subscriptions: HashSet<String>,
    /// The URIs each 2026-07-28 listen stream follows.
    listen_uris: HashMap<RequestId, HashSet<String>>,
    /// Who the client is, as the bearer-token check described it (HTTP).
    auth: Option<Value>,
    /// Whose credentials its requests carry (HTTP with authentication): the
    /// tasks it creates are theirs, and it reaches no one else's.
    owner: Option<tasks::Owner>,
}

/// What the engines of one server share (see [`Engine::sharing`]).
#[derive(Clone)]
pub struct Shared {
    job_ids: Arc<AtomicU64>,
    signer: Arc<Mutex<Signer>>,
    /// The tasks of 2026-07-28 requests that each have an engine of their
    /// own (HTTP): bounded and expired as any store.
    request_tasks: Arc<Mutex<tasks::Store>>,
    /// What every task id of these engines starts with.
    task_id_prefix: Arc<str>,
}

impl Shared {
    pub fn new(config: &Config) -> Shared {
        Shared {
            job_ids: Arc::new(AtomicU64::new(1)),
            signer: Arc::new(Mutex::new(Signer::new(
                config.request_state_key.as_deref(),
                config.request_state_store.as_deref(),
            ))),
            request_tasks: Arc::new(Mutex::new(tasks::Store::default())),
            task_id_prefix: Arc::from(""),
        }
    }

    /// The same, with task ids that start with `prefix` (see
    /// [`tasks::Store::with_id_prefix`]).
    pub fn with_task_id_prefix(mut self, prefix: &str) -> Shared {
        self.request_tasks = Arc::new(Mutex::new(tasks::Store::with_id_prefix(prefix)));
        self.task_id_prefix = Arc::from(prefix);
        self
    }
}

impl Engine {
    pub fn new(config: Arc<Config>, registry: Arc<Registry>) -> Engine {
        let shared = Shared::new(&config);
        Engine::sharing(config, Live::new(registry), &shared)
    }

    /// An engine that takes its job ids and request-state signer from
    /// `shared`, alongside other engines of the same server.
    pub fn sharing(config: Arc<Config>, live: Arc<Live>, shared: &Shared) -> Engine {
        let registry = live.current();
        let mut server_meta = Map::new();
        server_meta.insert(
            META_SERVER_INFO.into(),
            server_info(&config.info, Revision::LATEST),
        );
        Engine {
            config,
            live,
            registry,
            session: None,
            jobs: HashMap::new(),
            direct_calls: 0,
            by_request: HashMap::new(),
            listens: HashMap::new(),
            batches: HashMap::new(),
            batch_of: HashMap::new(),
            job_ids: shared.job_ids.clone(),
            next_batch: 1,
            server_meta,
            signer: shared.signer.clone(),
            tasks: Arc::new(Mutex::new(tasks::Store::with_id_prefix(
                &shared.task_id_prefix,
            ))),
            asks: HashMap::new(),
            next_ask: 1,
            resource_subscriptions: HashSet::new(),
            listen_uris: HashMap::new(),
            auth: None,
            owner: None,
        }
    }

    /// Tells the engine who its client is (the verdict of the server's
    /// bearer-token function), for the calls it starts.
    pub fn with_auth(mut self, auth: Option<Value>) -> Engine {
        self.auth = auth;
        self
    }

    /// Tells the engine whose credentials its requests carry (see
    /// [`tasks::Owner`]): its tasks are theirs, and others' are unknown to it.
    pub fn with_owner(mut self, owner: Option<tasks::Owner>) -> Engine {
        self.owner = owner;
        self
    }

    /// An engine for one 2026-07-28 HTTP request, which ends with it (or,
    /// for a call that became a task, with the task's job). Its tasks live
    /// in the store `shared` keeps for all such engines, where any later
    /// request finds them.
    pub fn for_one_request(config: Arc<Config>, live: Arc<Live>, shared: &Shared) -> Engine {
        let mut engine = Engine::sharing(config, live, shared);
        engine.tasks = shared.request_tasks.clone();
        engine
    }

    /// The task store, locked. Never held across a call that locks it again.
    fn tasks(&self) -> std::sync::MutexGuard<'_, tasks::Store> {
        lock(&self.tasks)
    }

    /// The client has gone for good (its HTTP session ended): every call
    /// still running or queued is cancelled (nothing more is sent for it, a
    /// tool waiting for input learns it will get none) and subscription
    /// streams are closed.
    pub fn on_close(&mut self, out: &mut Vec<Output>) {
        for (id, _) in self.listens.drain() {
            out.push(Output::UnwatchTasks(id));
        }
        let mut jobs: Vec<JobId> = self.jobs.keys().copied().collect();
        jobs.sort_unstable();
        for job in jobs {
            self.on_input_lost(job, out);
            out.push(Output::Cancel(job));
        }
    }

    /// Tool calls accepted and not yet answered.
    pub fn pending_jobs(&self) -> usize {
        self.jobs.len()
    }

    /// Tool calls accepted and not yet answered whose client waits for the
    /// answer: the calls [`crate::transport::backpressure`] bounds. Tasks are left out:
    /// creating one is answered at once, so the client goes on talking
    /// (`tasks/get`, `tasks/cancel`), and the task store bounds them.
    pub fn pending_calls(&self) -> usize {
        self.direct_calls
    }

    /// Handles one line of input (without its terminator).
    pub fn on_line(&mut self, bytes: &[u8], out: &mut Vec<Output>) {
        self.on_parsed_line(jsonrpc::parse_line(bytes), out);
    }

    /// Handles one line already parsed with [`jsonrpc::parse_line`] (which
    /// the server does before taking the engine's lock).
    pub fn on_parsed_line(&mut self, line: Line, out: &mut Vec<Output>) {
        // One message sees one set of tools, resources and prompts.
        self.registry = self.live.current();
        match line {
            Line::Blank => {}
            Line::ParseError(reason) => {
                let data = json!({ "reason": reason });
                out.push(Output::Write(jsonrpc::error(
                    None,
                    jsonrpc::PARSE_ERROR,
                    "Parse error",
                    Some(&data),
                )));
            }
            Line::Single(message) => self.on_message(message, out),
            Line::Batch(messages) => self.on_batch(messages, out),
            Line::NotUtf8 {
                id,
                response: false,
                reason,
            } => {
                // -32700 as for any line that is not JSON text (RFC 8259
                // requires UTF-8), but on the request's own id, which could
                // be read: its sender stops waiting and learns why.
                let data = json!({ "reason": reason });
                out.push(Output::Write(jsonrpc::error(
                    Some(&id),
                    jsonrpc::PARSE_ERROR,
                    "Parse error",
                    Some(&data),
                )));
            }
            Line::NotUtf8 {
                id,
                response: true,
                reason,
            } => self.on_unreadable_response(&id, &reason, out),
        }
    }

    /// A line longer than the limit was skipped; `prefix` is its beginning.
    /// The request is answered if its id can be read from the prefix, so the
    /// client is not left waiting.
    pub fn on_oversized(&mut self, prefix: &[u8], length: usize, out: &mut Vec<Output>) {
        let id = crate::protocol::jsonrpc::sniff_id(prefix);
        let limit = self.config.max_message_bytes;
        if let Some(ask) = id.as_ref().filter(|id| self.asks.contains_key(id)) {
            // The client's answer to the server's own input request: the
            // tool waiting for it learns why none comes, and the client gets
            // no error for a request it never sent.
            let reason = format!("it is too large ({length} bytes; the limit is {limit} bytes)");
            return self.on_unreadable_response(ask, &reason, out);
        }
        let message =
            format!("Message too large: {length} bytes exceeds the limit of {limit} bytes");
        let data = json!({ "size": length, "limit": limit });
        out.push(Output::Write(jsonrpc::error(
            id.as_ref(),
            jsonrpc::INVALID_REQUEST,
            &message,
            Some(&data),
        )));
    }

    /// Stdin reached its end: close open subscription streams gracefully.
    pub fn on_eof(&mut self, out: &mut Vec<Output>) {
        self.listen_uris.clear();
        let mut ids: Vec<RequestId> = self.listens.drain().map(|(id, _)| id).collect();
        ids.sort_by(|a, b| a.as_json().cmp(b.as_json()));
        for id in ids {
            out.push(Output::UnwatchTasks(id.clone()));
            let mut meta = self.server_meta.clone();
            meta.insert(META_SUBSCRIPTION.into(), raw_json(id.as_json()));
            let result = json!({ "resultType": "complete", "_meta": meta });
            out.push(Output::Write(jsonrpc::success(&id, &result.to_string())));
        }
    }

    /// A job finished (or was interrupted).
    pub fn on_completed(&mut self, job: JobId, outcome: Outcome, out: &mut Vec<Output>) {
        let Some(state) = self.jobs.remove(&job) else {
            return;
        };
        if state.task.is_none() {
            self.direct_calls -= 1;
        }
        if self.by_request.get(&state.request_id) == Some(&job) {
            self.by_request.remove(&state.request_id);
        }
        self.asks.retain(|_, asked| asked.job != job);
        if state.cancelled || matches!(outcome, Outcome::Cancelled) {
            self.forget_in_batch(&state.request_id, out);
            if let Some(task) = &state.task {
                self.task_job_cancelled(task, out);
            }
            return;
        }
        // A report the rate limit held back still goes out, before the result.
        if let (Some(update), Some(token)) = (&state.pending_progress, &state.progress_token) {
            out.push(Output::Write(progress_notification(
                token,
                update,
                state.revision,
            )));
        }
        let settled = self.settle(&state, outcome);
        match &state.task {
            Some(task) => self.finish_task(task, settled, out),
            None => {
                let text = match settled {
                    Ok(body) => jsonrpc::success(&state.request_id, &body),
                    Err(error) => jsonrpc::error_response(Some(&state.request_id), &error),
                };
                self.respond(&state.request_id, text, out);
            }
        }
    }

    /// What a finished job answers: a result body, or a JSON-RPC error object.
    fn settle(&mut self, state: &JobState, outcome: Outcome) -> Result<String, Value> {
        let tool = state.registry.tool(state.tool);
        if state.purpose != Purpose::Tool {
            match outcome {
                Outcome::TimedOut(limit) => {
                    let reason = format!("it timed out after {}", describe_duration(limit));
                    return Err(handlers::timed_out(&state.purpose, &reason));
                }
                Outcome::Failed(reason) => return Err(handlers::failure(&state.purpose, &reason)),
                _ => {}
            }
        }
        match outcome {
            Outcome::Done(result) => self.plan_for(state).settle(&result),
            Outcome::Settled(settled) => settled,
            Outcome::TimedOut(limit) => {
                let text = format!(
                    "Tool \"{}\" timed out after {} and was stopped.",
                    tool.def.name,
                    describe_duration(limit)
                );
                Ok(self.result_body(state, &ToolResult::error(text)))
            }
            Outcome::Failed(reason) => Err(jsonrpc::error_object(
                jsonrpc::INTERNAL_ERROR,
                &format!("Tool \"{}\" could not be run: {reason}", tool.def.name),
                Some(&json!({ "tool": tool.def.name })),
            )),
            Outcome::InputRequired { key, request } => {
                self.input_required_answer(state, vec![(key, request)])
            }
            Outcome::InputsRequired(requests) => self.input_required_answer(state, requests),
            Outcome::Cancelled => unreachable!("handled by the caller"),
        }
    }

    /// A call waited for R past the queue limit and will not run (the
    /// board has marked it so): it is answered with an error saying so.
    /// A call cancelled meanwhile gets no answer, as any cancelled call.
    pub fn on_queue_expired(&mut self, job: JobId, waited: Duration, out: &mut Vec<Output>) {
        let Some(state) = self.jobs.get(&job) else {
            return;
        };
        if state.cancelled {
            return;
        }
        let text = format!(
            "Not run: R was busy for {} (its console running a command, or other calls ahead \
             of this one), so the call was given up without running. Try again once R is free.",
            describe_duration(waited)
        );
        let outcome = if state.purpose == Purpose::Tool {
            Outcome::Done(ToolResult::error(text))
        } else {
            Outcome::Failed(text)
        };
        self.on_completed(job, outcome, out);
    }

    /// How to render the result of `job`, if it is still waiting for one.
    pub fn render_plan(&self, job: JobId) -> Option<RenderPlan> {
        self.jobs
            .get(&job)
            .filter(|s| !s.cancelled)
            .map(|s| self.plan_for(s))
    }

    /// Results of 2026-07-28 requests carry the server's identity; those of
    /// 2025-11-25 tasks their task id, as `tasks/result` requires.
    fn plan_for(&self, state: &JobState) -> RenderPlan {
        let mut extra = state.revision.is_modern().then(|| self.server_meta.clone());
        if let (Some(task), false) = (&state.task, state.revision.is_modern()) {
            let mut meta = Map::new();
            meta.insert(tasks::RELATED_TASK.into(), json!({ "taskId": task }));
            extra = Some(meta);
        }
        RenderPlan {
            registry: state.registry.clone(),
            tool: state.tool,
            revision: state.revision,
            extra_meta: extra,
            purpose: state.purpose.clone(),
            read_ttl_ms: self.config.read_ttl_ms,
        }
    }

    /// The `CallToolResult` of a job, for its revision.
    fn result_body(&self, state: &JobState, result: &ToolResult) -> String {
        let plan = self.plan_for(state);
        let tool = state.registry.tool(state.tool);
        result::render(tool, result, state.revision, plan.extra_meta.as_ref())
    }

    /// A running tool reported progress. Sent when the client gave a
    /// progress token, only when the value increased, and at most once per
    /// [`PROGRESS_INTERVAL`] (a report arriving sooner is held, the latest
    /// one winning, and sent when due).
    pub fn on_progress(
        &mut self,
        job: JobId,
        update: Progress,
        now: Instant,
        out: &mut Vec<Output>,
    ) {
        let Some(state) = self.jobs.get_mut(&job) else {
            return;
        };
        let (Some(token), false) = (&state.progress_token, state.cancelled) else {
            return;
        };
        let floor = state
            .pending_progress
            .as_ref()
            .map(|p| p.progress)
            .or(state.last_progress.map(|(v, _)| v));
        if !update.progress.is_finite() || floor.is_some_and(|f| update.progress <= f) {
            return;
        }
        match state.last_progress {
            Some((_, at)) if now.duration_since(at) < PROGRESS_INTERVAL => {
                if state.pending_progress.is_none() {
                    out.push(Output::ProgressDue(
                        job,
                        PROGRESS_INTERVAL - now.duration_since(at),
                    ));
                }
                state.pending_progress = Some(update);
            }
            _ => {
                out.push(Output::Write(progress_notification(
                    token,
                    &update,
                    state.revision,
                )));
                state.last_progress = Some((update.progress, now));
                // A held report is older than this one: it must not follow it.
                state.pending_progress = None;
            }
        }
    }

    /// A held-back progress report is due.
    pub fn on_progress_due(&mut self, job: JobId, now: Instant, out: &mut Vec<Output>) {
        let Some(state) = self.jobs.get_mut(&job) else {
            return;
        };
        let (Some(update), Some(token)) = (state.pending_progress.take(), &state.progress_token)
        else {
            return;
        };
        let increases = state
            .last_progress
            .is_none_or(|(last, _)| update.progress > last);
        if !state.cancelled && increases {
            out.push(Output::Write(progress_notification(
                token,
                &update,
                state.revision,
            )));
            state.last_progress = Some((update.progress, now));
        }
    }

    /// A running tool logged a message. Sent only to a client that asked:
    /// a 2026-07-28 request through its `logLevel`, a handshake-era session
    /// through `logging/setLevel`; never for a cancelled request.
    pub fn on_log(&mut self, job: JobId, level: LogLevel, data: Value, out: &mut Vec<Output>) {
        let Some(state) = self.jobs.get(&job) else {
            return;
        };
        let threshold = if state.revision.is_modern() {
            state.log_level
        } else {
            self.session.as_ref().and_then(|s| s.log_level)
        };
        if state.cancelled || threshold.is_none_or(|t| level < t) {
            return;
        }
        let params = json!({
            "level": level.as_str(),
            "logger": state.registry.tool(state.tool).def.name,
            "data": data,
        });
        out.push(Output::Write(jsonrpc::notification(
            "notifications/message",
            &params.to_string(),
        )));
    }

    fn on_batch(&mut self, messages: Vec<Message>, out: &mut Vec<Output>) {
        let allowed = self
            .session
            .as_ref()
            .is_some_and(|s| s.revision.allows_batches());
        if !allowed || messages.is_empty() {
            let reason = if messages.is_empty() {
                "an empty batch"
            } else {
                "JSON-RPC batches are only part of protocol revision 2025-03-26"
            };
            out.push(Output::Write(invalid_request(None, reason)));
            return;
        }
        let batch = self.next_batch;
        self.next_batch += 1;
        let mut expected = 0;
        // A request id used twice in one batch, or still awaited by an
        // earlier batch: the new use is refused at once, so each id stands
        // for one response in one batch (taking over an earlier batch's id
        // would leave that batch waiting for ever, its other responses unsent).
        let mut seen = HashSet::new();
        let mut duplicate = vec![false; messages.len()];
        for (i, message) in messages.iter().enumerate() {
            if let Message::Request { id, .. } | Message::Invalid { id: Some(id), .. } = message {
                duplicate[i] = !seen.insert(id) || self.batch_of.contains_key(id);
                if !duplicate[i] {
                    self.batch_of.insert(id.clone(), batch);
                }
                expected += 1;
            }
            if let Message::Invalid { id: None, .. } = message {
                expected += 1;
            }
        }
        if expected == 0 {
            for message in messages {
                self.on_message(message, out);
            }
            return;
        }
        self.batches.insert(
            batch,
            Batch {
                pending: expected,
                responses: Vec::new(),
            },
        );
        for (message, duplicate) in messages.into_iter().zip(duplicate) {
            match message {
                Message::Request { id, .. } | Message::Invalid { id: Some(id), .. }
                    if duplicate =>
                {
                    let text = invalid_request(
                        Some(&id),
                        "request id used twice in one batch, or still awaited by an earlier one",
                    );
                    self.push_to_batch(batch, text, out);
                }
                Message::Request { ref method, .. } if method == "initialize" => {
                    let Message::Request { id, .. } = message else {
                        unreachable!()
                    };
                    let text = invalid_request(Some(&id), "initialize must not be part of a batch");
                    self.respond(&id, text, out);
                }
                Message::Invalid { id: None, reason } => {
                    let text = invalid_request(None, &reason);
                    self.push_to_batch(batch, text, out);
                }
                other => self.on_message(other, out),
            }
        }
    }

    /// Sends a response, or holds it back for the batch it belongs to.
    fn respond(&mut self, id: &RequestId, text: String, out: &mut Vec<Output>) {
        match self.batch_of.remove(id) {
            Some(batch) => self.push_to_batch(batch, text, out),
            None => out.push(Output::Write(text)),
        }
    }

    fn push_to_batch(&mut self, batch: u64, text: String, out: &mut Vec<Output>) {
        if let Some(b) = self.batches.get_mut(&batch) {
            b.responses.push(text);
            b.pending -= 1;
        }
        self.flush_batch(batch, out);
    }

    /// A batched request that will get no response (a cancelled call).
    fn forget_in_batch(&mut self, id: &RequestId, out: &mut Vec<Output>) {
        if let Some(batch) = self.batch_of.remove(id) {
            if let Some(b) = self.batches.get_mut(&batch) {
                b.pending -= 1;
            }
            self.flush_batch(batch, out);
        }
    }

    fn flush_batch(&mut self, batch: u64, out: &mut Vec<Output>) {
        if self.batches.get(&batch).is_some_and(|b| b.pending == 0) {
            let b = self.batches.remove(&batch).expect("checked above");
            if !b.responses.is_empty() {
                out.push(Output::Write(format!("[{}]", b.responses.join(","))));
            }
        }
    }

    fn on_message(&mut self, message: Message, out: &mut Vec<Output>) {
        match message {
            Message::Request { id, method, params } => self.on_request(id, &method, params, out),
            Message::Notification { method, params } => self.on_notification(&method, params, out),
            // A reply to a request of ours (an elicitation).
            Message::Response { id, result, error } => self.on_response(&id, result, error, out),
            // Our own request's id, but no answer can be read from it: the
            // tool waiting for one learns why, and the client gets no error
            // for a request it never sent.
            Message::Invalid {
                id: Some(id),
                reason,
            } if self.asks.contains_key(&id) => self.on_unreadable_response(&id, &reason, out),
            Message::Invalid { id, reason } => {
                let text = invalid_request(id.as_ref(), &reason);
                match id {
                    Some(id) => self.respond(&id, text, out),
                    None => out.push(Output::Write(text)),
                }
            }
        }
    }

    fn on_request(
        &mut self,
        id: RequestId,
        method: &str,
        raw: Option<Box<RawValue>>,
        out: &mut Vec<Output>,
    ) {
        let (params, raw) = match read_params(method, raw.as_deref()) {
            Ok(read) => read,
            Err(e) => {
                let text = invalid_params(&id, &format!("params could not be read: {e}"));
                return self.respond(&id, text, out);
            }
        };
        let modern_version = params
            .get("_meta")
            .and_then(|m| m.get(META_VERSION))
            .cloned();
        // The version in `_meta` decides the era before the method does: an
        // enveloped `initialize` is a modern request for a removed method.
        if let Some(version) = modern_version {
            return self.on_modern_request(id, method, &params, raw, version, out);
        }
        if method == "initialize" {
            let text = self.initialize(&id, &params);
            return self.respond(&id, text, out);
        }
        if means_modern(method, &params) {
            let text = missing_envelope(&id, &params);
            return self.respond(&id, text, out);
        }
        self.on_legacy_request(id, method, &params, raw, out)
    }

    fn on_legacy_request(
        &mut self,
        id: RequestId,
        method: &str,
        params: &Value,
        raw: Verbatim,
        out: &mut Vec<Output>,
    ) {
        if method == "ping" {
            return self.respond(&id, jsonrpc::success(&id, "{}"), out);
        }
        let Some(session) = &self.session else {
            let text = jsonrpc::error(
                Some(&id),
                jsonrpc::INVALID_REQUEST,
                "Server not initialized",
                Some(&json!({
                    "reason": "send `initialize` first, or name a protocol version in params._meta",
                    "supported": all_versions(),
                })),
            );
            return self.respond(&id, text, out);
        };
        let rev = session.revision;
        let client_info = session.client_info.clone();
        match method {
            "tools/list" => {
                let text = self.tools_list(&id, params, rev);
                self.respond(&id, text, out)
            }
            "tools/call" => self.tools_call(id, params, raw, rev, client_info, out),
            "logging/setLevel" => {
                let text = self.set_level(&id, params);
                self.respond(&id, text, out)
            }
            "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel"
                if rev.has_core_tasks() =>
            {
                self.core_task_method(id, method, params, out)
            }
            m if self.serves(m, rev) => self.catalog_method(id, m, params, rev, client_info, out),
            _ => {
                let text = method_not_found(&id, method);
                self.respond(&id, text, out)
            }
        }
    }

    fn set_level(&mut self, id: &RequestId, params: &Value) -> String {
        let Some(level) = params
            .get("level")
            .and_then(Value::as_str)
            .and_then(LogLevel::parse)
        else {
            return invalid_params(id, "`level` must be one of debug, info, notice, warning, error, critical, alert, emergency");
        };
        if let Some(session) = &mut self.session {
            session.log_level = Some(level);
        }
        jsonrpc::success(id, "{}")
    }

    fn on_modern_request(
        &mut self,
        id: RequestId,
        method: &str,
        params: &Value,
        raw: Verbatim,
        version: Value,
        out: &mut Vec<Output>,
    ) {
        let meta = params.get("_meta").and_then(Value::as_object);
        let rev = match version.as_str().and_then(Revision::parse) {
            Some(rev) if rev.is_modern() => rev,
            _ => {
                let requested = match &version {
                    Value::String(s) => Value::from(s.as_str()),
                    other => Value::from(other.to_string()),
                };
                let data = json!({ "supported": modern_versions(), "requested": requested });
                let text = jsonrpc::error(
                    Some(&id),
                    jsonrpc::UNSUPPORTED_VERSION,
                    "Unsupported protocol version",
                    Some(&data),
                );
                return self.respond(&id, text, out);
            }
        };
        match meta.and_then(|m| m.get(META_CAPABILITIES)) {
            Some(Value::Object(_)) => {}
            Some(_) => {
                let text = invalid_params(
                    &id,
                    &format!("`_meta[\"{META_CAPABILITIES}\"]` must be an object"),
                );
                return self.respond(&id, text, out);
            }
            None => {
                let text = invalid_params(
                    &id,
                    &format!("missing required `_meta[\"{META_CAPABILITIES}\"]`"),
                );
                return self.respond(&id, text, out);
            }
        }
        if let Some(level) = meta.and_then(|m| m.get(META_LOG_LEVEL)) {
            if level.as_str().and_then(LogLevel::parse).is_none() {
                let text = invalid_params(
                    &id,
                    &format!("`_meta[\"{META_LOG_LEVEL}\"]` is not a log level"),
                );
                return self.respond(&id, text, out);
            }
        }
        let client_info = meta
            .and_then(|m| m.get(META_CLIENT_INFO))
            .map(|info| Arc::new(info.clone()));
        match method {
            "server/discover" => {
                let text = self.discover(&id);
                self.respond(&id, text, out)
            }
            "tools/list" => {
                let text = self.tools_list(&id, params, rev);
                self.respond(&id, text, out)
            }
            "tools/call" => self.tools_call(id, params, raw, rev, client_info, out),
            "subscriptions/listen" => self.listen(id, params, out),
            "tasks/get" | "tasks/update" | "tasks/cancel" => {
                self.extension_task_method(id, method, params, out)
            }
            m if self.serves(m, rev) => self.catalog_method(id, m, params, rev, client_info, out),
            m if REMOVED_IN_MODERN.contains(&m) => {
                let data =
                    json!({ "reason": format!("`{m}` is not part of protocol revision {rev}") });
                let text = jsonrpc::error(
                    Some(&id),
                    jsonrpc::METHOD_NOT_FOUND,
                    "Method not found",
                    Some(&data),
                );
                self.respond(&id, text, out)
            }
            _ => {
                let text = method_not_found(&id, method);
                self.respond(&id, text, out)
            }
        }
    }

    fn on_notification(
        &mut self,
        method: &str,
        params: Option<Box<RawValue>>,
        out: &mut Vec<Output>,
    ) {
        if method == "notifications/cancelled" {
            if let Some(request) = params.as_deref().and_then(cancelled_request_id) {
                self.cancel(&request, out);
            }
        }
        if method == "notifications/initialized" {
            if let Some(session) = &mut self.session {
                session.initialized = true;
            }
        }
        // Unknown notifications are ignored.
    }

    fn cancel(&mut self, request: &RequestId, out: &mut Vec<Output>) {
        if self.listens.remove(request).is_some() {
            self.listen_uris.remove(request);
            out.push(Output::UnwatchTasks(request.clone()));
            return;
        }
        let Some(&job) = self.by_request.get(request) else {
            return;
        };
        if let Some(state) = self.jobs.get_mut(&job) {
            if !state.cancelled {
                state.cancelled = true;
                out.push(Output::Cancel(job));
            }
        }
    }

    fn initialize(&mut self, id: &RequestId, params: &Value) -> String {
        if let Err(problem) = check_initialize_params(params) {
            return jsonrpc::error(
                Some(id),
                jsonrpc::INVALID_PARAMS,
                "Invalid initialize params",
                Some(&json!({ "reason": problem })),
            );
        }
        let requested = params["protocolVersion"].as_str().unwrap_or_default();
        let revision = Revision::parse(requested)
            .filter(|r| !r.is_modern())
            .unwrap_or(Revision::LATEST_LEGACY);
        let log_level = self.session.as_ref().and_then(|s| s.log_level);
        // A new session starts with no subscriptions.
        self.resource_subscriptions.clear();
        let offers = self.registry.offers();
        self.session = Some(Session {
            revision,
            client_info: params.get("clientInfo").map(|info| Arc::new(info.clone())),
            capabilities: Arc::new(params["capabilities"].clone()),
            log_level,
            initialized: false,
            told: Kinds {
                tools: true,
                resources: offers.resources,
                prompts: offers.prompts,
            },
        });
        let mut result = Map::new();
        result.insert("protocolVersion".into(), Value::from(revision.as_str()));
        result.insert("capabilities".into(), self.capabilities(revision));
        result.insert(
            "serverInfo".into(),
            server_info(&self.config.info, revision),
        );
        if let Some(instructions) = &self.config.instructions {
            result.insert("instructions".into(), Value::from(instructions.as_str()));
        }
        jsonrpc::success(id, &Value::Object(result).to_string())
    }

    fn capabilities(&self, rev: Revision) -> Value {
        let mut caps = json!({ "logging": {}, "tools": { "listChanged": true } });
        self.catalog_capabilities(&mut caps, rev);
        if self.registry.offers_tasks() {
            if rev.has_core_tasks() {
                caps["tasks"] =
                    json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } });
            } else if rev.is_modern() {
                caps["extensions"][tasks::EXTENSION] = json!({});
            }
        }
        if self.registry.offers().apps && app::offered_on(rev) {
            caps["extensions"][app::EXTENSION] = json!({});
        }
        caps
    }

    fn discover(&self, id: &RequestId) -> String {
        let mut result = Map::new();
        result.insert("supportedVersions".into(), modern_versions());
        result.insert("capabilities".into(), self.capabilities(Revision::LATEST));
        if let Some(instructions) = &self.config.instructions {
            result.insert("instructions".into(), Value::from(instructions.as_str()));
        }
        result.insert("ttlMs".into(), Value::from(self.discover_ttl_ms()));
        result.insert("cacheScope".into(), Value::from("public"));
        result.insert("resultType".into(), Value::from("complete"));
        result.insert("_meta".into(), Value::Object(self.server_meta.clone()));
        jsonrpc::success(id, &Value::Object(result).to_string())
    }

    fn tools_list(&self, id: &RequestId, params: &Value, rev: Revision) -> String {
        // Tools that show their results in an app are listed as such only
        // to clients that declared the MCP Apps extension.
        let meta = params.get("_meta").and_then(Value::as_object);
        let apps = app::declared(&self.client_capabilities(meta, rev));
        let tools = self.registry.list_json_for(rev, apps);
        let changed = self.registry.changed().tools;
        self.list_result(id, params, rev, ("tools", tools), "every tool", changed)
    }

    /// The one page of a list result (`tools/list`, `resources/list`,
    /// `resources/templates/list`, `prompts/list`): `{"<key>": <items>}`, on
    /// 2026-07-28 with the caching hints and server `_meta` as well. The
    /// items are pre-serialised, so the body is assembled as text. A
    /// cursor is refused: everything is on the first page, and `what`
    /// names what the refusal says is listed there; `changed`, whether the
    /// list has changed while serving (its caching hint is then short).
    fn list_result(
        &self,
        id: &RequestId,
        params: &Value,
        rev: Revision,
        (key, items): (&str, &str),
        what: &str,
        changed: bool,
    ) -> String {
        if let Err(reason) = single_page(params, what) {
            return invalid_params(id, &reason);
        }
        let mut body = String::with_capacity(items.len() + 200);
        body.push_str(&format!("{{\"{key}\":"));
        body.push_str(items);
        if rev.is_modern() {
            body.push_str(&format!(
                ",\"ttlMs\":{},\"cacheScope\":\"public\",\"resultType\":\"complete\",\"_meta\":{}",
                self.list_ttl_ms(changed),
                Value::Object(self.server_meta.clone())
            ));
        }
        body.push('}');
        jsonrpc::success(id, &body)
    }

    /// The refusal of a call over the bound. Only while a tool waits for
    /// input does the reader go on past this many calls (see
    /// `backpressure`): refuse rather than hold more.
    fn too_many_calls(&self, id: &RequestId) -> String {
        let limit = self.config.limits.max_queued_calls;
        jsonrpc::error(
            Some(id),
            jsonrpc::INTERNAL_ERROR,
            &format!(
                "Too many tool calls waiting: at most {limit} may be in progress at once; \
                 retry when some have finished"
            ),
            Some(&json!({ "limit": limit })),
        )
    }

    fn tools_call(
        &mut self,
        id: RequestId,
        params: &Value,
        raw: Verbatim,
        rev: Revision,
        client_info: Option<Arc<Value>>,
        out: &mut Vec<Output>,
    ) {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            let text = invalid_params(&id, "`name` must be a string");
            return self.respond(&id, text, out);
        };
        // An arguments object stays text until the job is made (a small
        // one) or the tool's thread reads and checks it (a large one, see
        // `Job::read_arguments`): neither the reader nor this lock waits
        // for a large one.
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => raw.arguments,
            Some(_) => {
                let text = invalid_params(&id, "`arguments` must be an object");
                return self.respond(&id, text, out);
            }
        };
        let Some(index) = self.registry.find(name) else {
            let text = jsonrpc::error(
                Some(&id),
                jsonrpc::INVALID_PARAMS,
                &format!("Unknown tool: {name}"),
                Some(&json!({ "tool": name })),
            );
            return self.respond(&id, text, out);
        };
        let meta = params.get("_meta").and_then(Value::as_object).cloned();
        let caps = self.client_capabilities(meta.as_ref(), rev);
        let as_task = match self.task_decision(index, params, rev, &caps) {
            Ok(t) => t,
            Err(error) => {
                let text = jsonrpc::error_response(Some(&id), &error);
                return self.respond(&id, text, out);
            }
        };
        // Before a `requestState` is accepted (and so used up).
        if as_task.is_none() && self.direct_calls >= self.config.limits.max_queued_calls {
            let text = self.too_many_calls(&id);
            return self.respond(&id, text, out);
        }
        let answers = match self.retry_answers(index, arguments.as_deref(), params, rev) {
            Ok(answers) => answers,
            Err(error) => {
                let text = jsonrpc::error_response(Some(&id), &error);
                return self.respond(&id, text, out);
            }
        };
        // The token is read again from the raw text only when there is one,
        // to keep its exact spelling (integers of any size).
        let has_token = meta
            .as_ref()
            .is_some_and(|m| m.contains_key("progressToken"));
        let progress_token = raw
            .meta
            .as_deref()
            .filter(|_| has_token)
            .and_then(progress_token);
        let job = self.job_ids.fetch_add(1, Ordering::Relaxed);
        let task = match as_task {
            Some((dialect, ttl)) => match self.start_task(job, dialect, ttl, &id, out) {
                Some(task) => Some(task),
                // No room for it: refused, and already answered.
                None => return,
            },
            None => None,
        };
        let input = self.input_mode(rev, &caps, task.is_some());
        let task_later = task.is_none() && self.may_become_task(index, rev, &caps);
        let new = NewJob {
            job,
            request_id: id,
            handler: index,
            rev,
            arguments,
            meta,
            client_info,
            progress_token,
            capabilities: caps,
            answers,
            input,
            purpose: Purpose::Tool,
            task,
            task_later,
        };
        self.launch_job(new, out);
    }

    /// Records a new job's state and hands the job to the R thread. A job
    /// that runs as a task is answered already, so it neither counts
    /// against the bound on direct calls nor is found by its request id.
    pub(super) fn launch_job(&mut self, new: NewJob, out: &mut Vec<Output>) {
        let log_level = new
            .meta
            .as_ref()
            .and_then(|m| m.get(META_LOG_LEVEL))
            .and_then(Value::as_str)
            .and_then(LogLevel::parse);
        let mut state = JobState::new(
            new.request_id.clone(),
            new.handler,
            self.registry.clone(),
            new.rev,
            new.capabilities.clone(),
        );
        state.progress_token = new.progress_token.clone();
        state.log_level = log_level;
        state.answers = new.answers.clone();
        let token_check = new.purpose == Purpose::Token;
        state.purpose = new.purpose;
        // Only a retry binds its request state to the arguments as sent.
        if matches!(new.input, InputMode::Retry) {
            state.arguments = new.arguments.clone();
        }
        state.input = new.input.clone();
        state.task = new.task.clone();
        state.task_later = new.task_later;
        let extension_task = new.task.as_ref().is_some_and(|task| {
            self.tasks()
                .get(task)
                .is_some_and(|t| t.dialect == tasks::Dialect::Extension)
        });
        if extension_task {
            // The extension's tasks get no progress or log notifications:
            // their call is answered already.
            state.progress_token = None;
            state.log_level = None;
        }
        self.jobs.insert(new.job, state);
        if new.task.is_none() {
            self.direct_calls += 1;
            self.by_request.insert(new.request_id.clone(), new.job);
        }
        let mut job = Box::new(Job {
            id: new.job,
            tool: new.handler,
            registry: self.registry.clone(),
            arguments: Map::new(),
            sent_arguments: new.arguments,
            read_early: None,
            token_check,
            context: CallContext {
                request_id: new.request_id,
                revision: new.rev,
                progress_token: new.progress_token,
                meta: new.meta,
                client_info: new.client_info,
                log_level,
                input: new.input,
                capabilities: new.capabilities,
                answers: new.answers,
                task: new.task,
                auth: self.auth.clone(),
                task_later: new.task_later,
            },
        });
        job.read_small_arguments(&self.registry);
        out.push(Output::Run(job));
    }

    /// 2026-07-28 `subscriptions/listen`: acknowledged with the list
    /// changes and resource URIs the server will report on it (those asked
    /// for that it has), the stream stays open until the client cancels it
    /// or stdin ends.
    fn listen(&mut self, id: RequestId, params: &Value, out: &mut Vec<Output>) {
        let limit = self.config.limits.max_subscriptions;
        if self.listens.len() >= limit && !self.listens.contains_key(&id) {
            let text = jsonrpc::error(
                Some(&id),
                jsonrpc::INTERNAL_ERROR,
                &format!(
                    "Too many open subscriptions: at most {limit} may be open at once; \
                     cancel one first"
                ),
                Some(&json!({ "limit": limit })),
            );
            return self.respond(&id, text, out);
        }
        let lists = self.listen_lists(params);
        let followed = match self.listen_tasks(params, out) {
            Ok(followed) => followed,
            Err(error) => {
                return self.respond(&id, jsonrpc::error_response(Some(&id), &error), out)
            }
        };
        let mut honoured = json!({});
        for (flag, asked) in [
            ("toolsListChanged", lists.tools),
            ("resourcesListChanged", lists.resources),
            ("promptsListChanged", lists.prompts),
        ] {
            if asked {
                honoured[flag] = Value::Bool(true);
            }
        }
        if let Some(uris) = self.listen_resources(params) {
            honoured["resourceSubscriptions"] = json!(uris);
            self.listen_uris
                .insert(id.clone(), uris.into_iter().collect());
        }
        if let Some(tasks) = &followed {
            honoured["taskIds"] = json!(tasks.iter().map(|(task, _)| task).collect::<Vec<_>>());
        }
        let params = json!({
            "notifications": honoured,
            "_meta": { META_SUBSCRIPTION: raw_json(id.as_json()) }
        });
        out.push(Output::Write(jsonrpc::notification(
            "notifications/subscriptions/acknowledged",
            &params.to_string(),
        )));
        if let Some(tasks) = followed {
            out.push(Output::WatchTasks {
                subscription: id.clone(),
                tasks: tasks.iter().map(|(task, _)| task.clone()).collect(),
            });
            // Where each task stands now: a change made before the stream
            // opened is not missed.
            for (_, status) in tasks {
                out.push(Output::Write(task_notification(status, &id)));
            }
        }
        // Acknowledged, not answered: a batch it is part of stops waiting.
        self.forget_in_batch(&id, out);
        self.listens.insert(id, lists);
    }
}

/// `notifications/tasks` for the listen stream `subscription`: `task` is
/// the task as `tasks/get` shows it.
pub fn task_notification(task: Value, subscription: &RequestId) -> String {
    let mut params = match task {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    params.insert(
        "_meta".into(),
        json!({ META_SUBSCRIPTION: raw_json(subscription.as_json()) }),
    );
    jsonrpc::notification("notifications/tasks", &Value::Object(params).to_string())
}

#[derive(Deserialize)]
struct TokenProbe<'a> {
    #[serde(rename = "progressToken", borrow)]
    token: Option<&'a RawValue>,
}

/// The progress token in `_meta` exactly as sent (integers of any size survive).
fn progress_token(meta: &RawValue) -> Option<String> {
    let probe: TokenProbe = serde_json::from_str(meta.get()).ok()?;
    RequestId::from_raw(probe.token?).map(|t| t.as_json().to_string())
}

/// A request id inside params, turned back into a JSON value.
fn raw_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

#[derive(Deserialize)]
struct CancelledParams<'a> {
    #[serde(rename = "requestId", borrow)]
    request_id: &'a RawValue,
}

fn cancelled_request_id(params: &RawValue) -> Option<RequestId> {
    let parsed: CancelledParams = serde_json::from_str(params.get()).ok()?;
    RequestId::from_raw(parsed.request_id)
}

fn progress_notification(token: &str, update: &Progress, rev: Revision) -> String {
    let mut params = Map::new();
    params.insert("progressToken".into(), raw_json(token));
    params.insert("progress".into(), json!(update.progress));
    if let Some(total) = update.total.filter(|t| t.is_finite()) {
        params.insert("total".into(), json!(total));
    }
    if let (Some(message), true) = (&update.message, rev.has_progress_message()) {
        params.insert("message".into(), Value::from(message.as_str()));
    }
    jsonrpc::notification("notifications/progress", &Value::Object(params).to_string())
}

fn server_info(info: &ServerInfo, rev: Revision) -> Value {
    let mut map = Map::new();
    map.insert("name".into(), Value::from(info.name.as_str()));
    if let (Some(title), true) = (&info.title, rev.has_structured_output()) {
        map.insert("title".into(), Value::from(title.as_str()));
    }
    map.insert("version".into(), Value::from(info.version.as_str()));
    Value::Object(map)
}

/// Every revision, newest first: what a request sent before `initialize`
/// is told the server speaks.
fn all_versions() -> Value {
    let mut all: Vec<&str> = Revision::ALL.iter().map(|r| r.as_str()).collect();
    all.reverse();
    json!(all)
}

/// The versions a request with the 2026-07-28 envelope may name: what
/// `server/discover` advertises and a -32022 lists. Legacy revisions are left
/// out because a retry naming one in `_meta` would only be refused again.
fn modern_versions() -> Value {
    let modern: Vec<&str> = Revision::modern().map(Revision::as_str).collect();
    json!(modern)
}

/// Whether a request without a version in `_meta` can only be meant as a
/// 2026-07-28 one: its method exists only there, or its `_meta` carries
/// keys only the modern envelope has.
fn means_modern(method: &str, params: &Value) -> bool {
    let envelope_keys = params
        .get("_meta")
        .and_then(Value::as_object)
        .is_some_and(|meta| MODERN_ONLY_META.iter().any(|k| meta.contains_key(*k)));
    ONLY_IN_MODERN.contains(&method) || envelope_keys
}

/// -32602 naming what a 2026-07-28 request lacks: its `params._meta`, or
/// the required keys missing from it.
fn missing_envelope(id: &RequestId, params: &Value) -> String {
    let missing: Vec<String> = match params.get("_meta").and_then(Value::as_object) {
        None => vec!["params._meta".into()],
        Some(meta) => [META_VERSION, META_CAPABILITIES]
            .into_iter()
            .filter(|key| !meta.contains_key(*key))
            .map(|key| format!("params._meta[\"{key}\"]"))
            .collect(),
    };
    jsonrpc::error(
        Some(id),
        jsonrpc::INVALID_PARAMS,
        &format!(
            "Invalid params: missing required {}",
            missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(" and ")
        ),
        Some(&json!({ "missing": missing })),
    )
}

fn check_initialize_params(params: &Value) -> Result<(), String> {
    let Value::Object(p) = params else {
        return Err("params must be an object".into());
    };
    if p.get("protocolVersion")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err("`protocolVersion` must be a non-empty string".into());
    }
    if !p.get("capabilities").is_some_and(Value::is_object) {
        return Err("`capabilities` must be an object".into());
    }
    let Some(Value::Object(info)) = p.get("clientInfo") else {
        return Err("`clientInfo` must be an object".into());
    };
    for field in ["name", "version"] {
        if info
            .get(field)
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err(format!("`clientInfo.{field}` must be a non-empty string"));
        }
    }
    Ok(())
}

/// -32600 with the reason in `data`.
fn invalid_request(id: Option<&RequestId>, reason: &str) -> String {
    let data = json!({ "reason": reason });
    jsonrpc::error(id, jsonrpc::INVALID_REQUEST, "Invalid Request", Some(&data))
}

/// Lists have one page: no params, or params with no (or a null) cursor.
/// Otherwise the refusal, which says that `what` is all on one page.
fn single_page(params: &Value, what: &str) -> Result<(), String> {
    match params {
        Value::Null => Ok(()),
        Value::Object(map) => match map.get("cursor") {
            None | Some(Value::Null) => Ok(()),
            Some(_) => Err(format!(
                "unknown cursor: this server lists {what} on one page"
            )),
        },
        _ => Err("params must be an object".into()),
    }
}

fn invalid_params(id: &RequestId, reason: &str) -> String {
    jsonrpc::error(
        Some(id),
        jsonrpc::INVALID_PARAMS,
        &format!("Invalid params: {reason}"),
        None,
    )
}

fn method_not_found(id: &RequestId, method: &str) -> String {
    jsonrpc::error(
        Some(id),
        jsonrpc::METHOD_NOT_FOUND,
        "Method not found",
        Some(&json!({ "method": method })),
    )
}

/// `2.5 seconds`, `1 second`, `90 seconds`.
fn describe_duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    let text = if secs.fract() == 0.0 {
        format!("{}", secs as u64)
    } else {
        format!("{secs}")
    };
    let unit = if secs == 1.0 { "second" } else { "seconds" };
    format!("{text} {unit}")
}
