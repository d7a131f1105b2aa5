//! Jobs: the calls the engine hands to R ([`Job`], with its [`CallContext`]),
//! what R hands back ([`Outcome`], [`Progress`]), what the engine asks the
//! transport to do ([`Output`]), and what it keeps while a job runs.

use super::result::ToolResult;
use crate::engine::registry::Registry;
use crate::protocol::jsonrpc::RequestId;
use crate::protocol::logging::LogLevel;
use crate::protocol::revision::Revision;
use crate::util::ids::JobId;
use crate::util::shared_text::SharedText;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// The call's span (telemetry on and the request traced): the parent
    /// of the spans R opens with `mcp_span()`.
    pub trace: Option<crate::telemetry::SpanIds>,
    /// The handshake-era HTTP session the call came in (`Mcp-Session-Id`).
    pub session_id: Option<String>,
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
    /// until [`Job::read_arguments`] reads it; after
    /// [`Job::check_arguments`], large arguments checked but not read.
    pub sent_arguments: Option<SharedText>,
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
pub(crate) struct NewJob {
    pub(crate) job: JobId,
    pub(crate) request_id: RequestId,
    /// The tool, or hidden handler, the job runs.
    pub(crate) handler: usize,
    pub(crate) rev: Revision,
    /// The arguments object as sent (`None`: no arguments).
    pub(crate) arguments: Option<SharedText>,
    /// The request's `params._meta`.
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) client_info: Option<Arc<Value>>,
    pub(crate) progress_token: Option<String>,
    pub(crate) capabilities: Arc<Value>,
    pub(crate) answers: Map<String, Value>,
    pub(crate) input: InputMode,
    pub(crate) purpose: Purpose,
    /// The task the call runs as, if it does.
    pub(crate) task: Option<String>,
    /// Whether it may still become a task (see `JobState::task_later`).
    pub(crate) task_later: bool,
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
    /// A successful result of structured content only, still being
    /// written (see [`crate::protocol::streamed`]): its response line is
    /// sent as the parts arrive. Only for a job [`super::Engine::can_stream`]
    /// allowed; `meta` is the result's own `_meta`, `object` whether the
    /// content is a JSON object.
    Streamed {
        content: crate::protocol::streamed::JsonStream,
        meta: Option<serde_json::Map<String, Value>>,
        object: bool,
    },
}

/// What the engine asks of the runtime around it.
#[derive(Debug)]
pub enum Output {
    /// One line for the protocol stdout.
    Write(String),
    /// One line for the protocol stdout, written as its content arrives
    /// (see [`Outcome::Streamed`]).
    WriteStreamed(crate::protocol::streamed::StreamedLine),
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

pub(super) struct JobState {
    pub(super) request_id: RequestId,
    pub(super) tool: usize,
    /// The registry `tool` indexes (the one the call was accepted with).
    pub(super) registry: Arc<Registry>,
    pub(super) revision: Revision,
    pub(super) cancelled: bool,
    pub(super) progress_token: Option<String>,
    /// Log level of a 2026-07-28 request (legacy ones follow the session).
    pub(super) log_level: Option<LogLevel>,
    /// The last progress value sent, and when.
    pub(super) last_progress: Option<(f64, Instant)>,
    /// A report held back by the rate limit, to send when it is due.
    pub(super) pending_progress: Option<Progress>,
    /// The task this call runs as (its request was answered at once).
    pub(super) task: Option<String>,
    /// What an `input_required` result must bind its state to (2026-07-28):
    /// the arguments object as sent.
    pub(super) arguments: Option<SharedText>,
    pub(super) answers: Map<String, Value>,
    /// How the handler may ask for input; decides what stopping at an
    /// input request answers.
    pub(super) input: InputMode,
    /// The client's capabilities, for the methods input requests need.
    pub(super) capabilities: Arc<Value>,
    /// What the result is for: a tool call, or a resource read, prompt or
    /// completion run by its handler.
    pub(super) purpose: Purpose,
    /// The answers it waits for from requests sent to the client.
    pub(super) gathering: Option<Gathering>,
    /// It may still become a task (a deferred tool's 2026-07-28 call from
    /// a client that declared the tasks extension).
    pub(super) task_later: bool,
}

impl JobState {
    pub(super) fn new(
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

/// How a handler's request for input is served.
#[derive(Debug, Clone, PartialEq)]
pub enum InputMode {
    /// Answer the call with `input_required`; the client retries.
    Retry,
    /// Ask the client now and wait for the answer.
    Ask,
    /// A 2026-07-28 request without the elicitation capability: the handler
    /// stops at its first input request, as with [`InputMode::Retry`], and
    /// the call is answered with -32021 instead of `input_required`.
    MissingCapability,
    /// No input can be had, and why.
    Unavailable(String),
}

/// A request the server sent the client and waits on.
#[derive(Debug, Clone)]
pub(super) struct Asked {
    pub(super) job: JobId,
    pub(super) method: String,
    /// The handler's key for the request.
    pub(super) key: String,
}

/// The answers a job waits for, when the client answers each request sent
/// to it separately (handshake-era sessions, 2025-11-25 tasks).
#[derive(Debug)]
pub(super) struct Gathering {
    /// Keys still without an answer.
    pub(super) pending: HashSet<String>,
    pub(super) answers: Map<String, Value>,
    /// Whether the answers go back by key (`mcp_ask()`).
    pub(super) keyed: bool,
}

/// What a job's result is for.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum Purpose {
    /// A `tools/call`.
    #[default]
    Tool,
    /// `resources/read` of `uri`; `cache`: whether the result may carry
    /// 2026-07-28 cache hints (never on a retry with answers).
    Read {
        uri: String,
        mime_type: Option<String>,
        cache: bool,
    },
    /// `prompts/get`.
    Prompt { description: Option<String> },
    /// `completion/complete`.
    Complete,
    /// A list method run through R middleware (see [`super::middleware`]):
    /// the result's `key`, the field naming an entry, the server's entries
    /// as JSON array text, and the list's caching hint.
    List {
        key: String,
        identity: String,
        items: Arc<str>,
        ttl_ms: u64,
    },
    /// A bearer token checked by the server's R function (HTTP; see
    /// [`crate::transport::http::tokens`]): no client request, the HTTP front waits.
    Token,
}

impl Purpose {
    /// What the request was about, for error messages.
    pub(super) fn describe(&self) -> String {
        match self {
            Purpose::Tool => "the tool".into(),
            Purpose::Read { uri, .. } => format!("Reading resource \"{uri}\""),
            Purpose::Prompt { .. } => "The prompt".into(),
            Purpose::Complete => "The completion".into(),
            Purpose::List { key, .. } => format!("Listing {key}"),
            Purpose::Token => "The bearer token check".into(),
        }
    }
}
