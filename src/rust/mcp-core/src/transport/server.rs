//! The running server: the threads around the [`Engine`], and the interface
//! the R main thread drives (`poll` for the next tool call, `complete` with
//! its outcome).
//!
//! The engine sits behind a mutex and is driven directly by whoever has
//! news: the reader thread (each line from stdin), the R thread (a finished
//! call), and timers on a small tokio runtime (timeouts, held-back
//! progress). Everything but `tools/call` is answered by the reader thread
//! at once, even while R is busy; tool calls queue for the R thread in
//! arrival order; a writer thread owns stdout. No message waits for a thread
//! whose only job is to pass it on.
//!
//! What is queued for the client is bounded (see [`crate::transport::backpressure`]).
//! Serving ends at end of input once everything read is answered, or early
//! when the client stops reading its output or a thread panics: then queued
//! calls are dropped unrun, the running one is interrupted, and `poll`
//! tells the R thread to stop.

use crate::engine::board::{Board, Interrupt, Interrupter};
use crate::engine::registry::{Kinds, Live, Registry};
use crate::engine::turns::Turns;
use crate::engine::{Config, Engine, Job, JobId, Outcome, Output, Progress};
use crate::protocol::logging::LogLevel;
use crate::protocol::streamed::{metered_json_stream, JsonSink};
use crate::transport::backpressure::Backpressure;
use crate::transport::memory;
use crate::transport::slots::{
    lock, Answer, Cause, Front, RunningCheck, Shared, Sink, Slot, Waker,
};
use crate::transport::stdio::{self, Events, StdioGuard};
use crate::transport::trace::Trace;
use crate::util::spans;
use crate::util::threads;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Why a forked child's copy of the server does nothing.
const FORKED: &str = "a process forked from the server cannot talk to the client";

/// How long changes made outside any call (from the console of a session
/// serving in the background) gather before clients are told, so a burst
/// of them makes one notification per list.
const CHANGE_GATHERING: Duration = Duration::from_millis(50);

/// How long SIGTERM waits for the HTTP front to answer the requests in
/// flight before it interrupts R's call (it takes a moment; the bound is for
/// a front that cannot).
const SIGTERM_ANSWER_WAIT: Duration = Duration::from_secs(1);

/// How long `stop` waits for the writer to deliver what is queued, and how
/// long after the end of input a client that reads nothing is waited for
/// (see [`Server::poll`]): past it, the client counts as gone.
const WRITER_DRAIN: Duration = Duration::from_secs(5);

/// What `poll` found.
#[derive(Debug)]
pub enum Polled {
    Job(Box<Job>),
    /// Nothing arrived within the timeout.
    Idle,
    /// The interrupt check asked to stop waiting.
    Interrupted,
    /// Input ended and every call has been answered (or the client left).
    Finished,
    /// A server thread panicked; the message says where and why.
    Failed(String),
    /// SIGTERM asked the server to stop (see [`Server::stop_on_sigterm`]).
    Terminated,
}

pub struct Server {
    shared: Arc<Shared>,
    jobs: mpsc::Receiver<Box<Job>>,
    /// The jobs received, in the order R takes them (see [`crate::engine::turns`]).
    turns: Mutex<Turns>,
    config: Arc<Config>,
    /// The running job's time limit, stopped when the job ends.
    timeout: Mutex<Option<(JobId, tokio::task::AbortHandle)>>,
    /// The running job, if its arguments were large: memory is given back
    /// when it ends.
    large_job: Mutex<Option<JobId>>,
    reader: Option<JoinHandle<()>>,
    timers: Option<(tokio::sync::oneshot::Sender<()>, JoinHandle<()>)>,
    writer_done: mpsc::Receiver<()>,
    writer: Option<JoinHandle<()>>,
    guard: Option<StdioGuard>,
    /// `stop` has run (it runs once, however often it is called).
    stopped: bool,
    /// Keys of the tools whose calls R hands to worker processes (see
    /// [`Server::run_on_workers`]).
    worker_tools: HashSet<usize>,
    /// The HTTP front, when serving HTTP.
    http: Option<crate::transport::http::Listener>,
    /// While serving, SIGTERM stops the server (see [`Server::stop_on_sigterm`]).
    termination: Option<crate::transport::signals::Termination>,
    /// The process serving. A child a tool forks (`parallel::mclapply()`)
    /// has a copy of the server without its threads, and with its locks
    /// as they were at the fork, perhaps held by a thread that does not
    /// exist there: such a copy must take no lock and wait for nothing.
    pid: u32,
}

/// Runs the timers' single-threaded tokio runtime on its own thread until
/// `stop` fires.
fn run_timers(
    runtime: tokio::runtime::Runtime,
    shared: &Arc<Shared>,
) -> io::Result<(tokio::sync::oneshot::Sender<()>, JoinHandle<()>)> {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let failed = shared.clone();
    let thread = threads::spawn(
        "timers",
        move |message| failed.fail("timers", message),
        move || {
            runtime.block_on(async {
                let _ = stopped.await;
            });
        },
    )?;
    Ok((stop, thread))
}

/// What the reader or writer thread reports to the server.
fn events(shared: &Arc<Shared>, thread: &'static str) -> Events {
    let failed = shared.clone();
    Events {
        pressure: shared.pressure.clone(),
        on_panic: Box::new(move |message| failed.fail(thread, message)),
    }
}

/// What serving starts from on either transport: the shared state, the
/// queue of jobs for the R thread and the timers' thread. The transport's
/// own threads (or listener) are added by `Server::start` or
/// `Server::start_http`.
struct Core {
    config: Arc<Config>,
    shared: Arc<Shared>,
    jobs: mpsc::Receiver<Box<Job>>,
    timers: (tokio::sync::oneshot::Sender<()>, JoinHandle<()>),
}

impl Core {
    /// `writer` is the queue to a stdio writer thread: with one, the stdio
    /// client's engine is made too; without, the server serves HTTP.
    fn start(
        config: Config,
        registry: Registry,
        interrupter: Interrupter,
        writer: Option<mpsc::Sender<stdio::Outgoing>>,
    ) -> io::Result<Core> {
        let config = Arc::new(config);
        let live = Live::new(Arc::new(registry));
        let (job_tx, jobs) = mpsc::channel();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()?;
        let stdio = writer.is_some().then(|| {
            let engines = crate::engine::Shared::new(&config);
            let engine = Engine::sharing(config.clone(), live.clone(), &engines);
            Slot::new(engine, Sink::Stdout)
        });
        let shared = Arc::new(Shared {
            stdio,
            live,
            followers: Mutex::new(Vec::new()),
            unannounced: Mutex::new((Kinds::default(), false)),
            job_slots: Mutex::new(HashMap::new()),
            writer: Mutex::new(writer),
            jobs: Mutex::new(Some(job_tx)),
            board: Arc::new(Board::new(interrupter)),
            replies: Mutex::new(HashMap::new()),
            input_ended: AtomicBool::new(false),
            input_ended_at: Mutex::new(None),
            stalled: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            failure: Mutex::new(None),
            terminated: AtomicBool::new(false),
            stop_reader: Arc::new(AtomicBool::new(false)),
            pressure: Arc::new(Backpressure::new(config.limits.clone())),
            timers: runtime.handle().clone(),
            trace: Arc::new(Trace::from_env()),
            waker: Mutex::new(None),
            watchers: Mutex::new(Vec::new()),
            running_check: Mutex::new(None),
            queue_timeout: config.queue_timeout,
            queue_timers: Mutex::new(HashMap::new()),
        });
        let timers = run_timers(runtime, &shared)?;
        Ok(Core {
            config,
            shared,
            jobs,
            timers,
        })
    }

    /// The server, with no transport threads, listener or stdio guard yet:
    /// the caller adds its own once they have started.
    fn into_server(self, writer_done: mpsc::Receiver<()>) -> Server {
        Server {
            shared: self.shared,
            jobs: self.jobs,
            turns: Mutex::new(Turns::default()),
            config: self.config,
            timeout: Mutex::new(None),
            large_job: Mutex::new(None),
            reader: None,
            timers: Some(self.timers),
            writer_done,
            writer: None,
            guard: None,
            stopped: false,
            worker_tools: HashSet::new(),
            pid: crate::transport::forks::process_id(),
            http: None,
            termination: None,
        }
    }
}

impl Server {
    /// Serves on the process's stdin and stdout, which are moved to private
    /// descriptors until [`Server::stop`]. `interrupter` makes the thread
    /// that runs tools notice an interrupt, and settles it as the job ends
    /// (see [`crate::engine::board`]).
    pub fn start_stdio(
        config: Config,
        registry: Registry,
        interrupter: Interrupter,
    ) -> io::Result<Server> {
        let (guard, input, output) = StdioGuard::take()?;
        Server::start(config, registry, input, output, Some(guard), interrupter)
    }

    /// Serves on the given files (pipes in tests).
    pub fn start(
        config: Config,
        registry: Registry,
        input: File,
        output: File,
        guard: Option<StdioGuard>,
        interrupter: Interrupter,
    ) -> io::Result<Server> {
        let (line_tx, line_rx) = mpsc::channel::<stdio::Outgoing>();
        let (done_tx, writer_done) = mpsc::channel();
        let core = Core::start(config, registry, interrupter, Some(line_tx))?;
        let shared = &core.shared;

        let gone = shared.clone();
        let writer = stdio::spawn_writer(
            output,
            line_rx,
            shared.trace.clone(),
            events(shared, "writer"),
            move || gone.client_gone(),
            done_tx,
        )?;

        let inbound = shared.clone();
        let reader = stdio::spawn_reader(
            input,
            core.config.max_message_bytes,
            shared.stop_reader.clone(),
            shared.trace.clone(),
            events(shared, "reader"),
            move |msg| inbound.on_inbound(msg),
        )?;

        let mut server = core.into_server(writer_done);
        server.reader = Some(reader);
        server.writer = Some(writer);
        server.guard = guard;
        Ok(server)
    }

    /// Serves Streamable HTTP (see [`crate::transport::http`]) on the address in
    /// `options`, which is bound before this returns (so a port in use is
    /// an error here, and [`Server::http_address`] tells the port chosen for
    /// port 0). Tool calls of every client queue for the one R thread, as
    /// on stdio.
    pub fn start_http(
        config: Config,
        registry: Registry,
        options: crate::transport::http::Options,
        interrupter: Interrupter,
    ) -> io::Result<Server> {
        // No writer thread: its end of the channel is dropped at once, so
        // `stop` finds nothing to wait for.
        let (_, writer_done) = mpsc::channel();
        let core = Core::start(config, registry, interrupter, None)?;
        let front = Front {
            shared: core.shared.clone(),
            config: core.config.clone(),
            engines: crate::engine::Shared::new(&core.config)
                .with_task_id_prefix(&options.task_id_prefix),
        };
        let http = crate::transport::http::Listener::start(options, front)?;
        let mut server = core.into_server(writer_done);
        server.http = Some(http);
        Ok(server)
    }

    /// The address an HTTP server listens on.
    /// Has `waker` called whenever there is something for [`Server::poll`]
    /// (a job queued, serving ended), for an R session that serves between
    /// the user's commands and polls only when woken.
    pub fn set_waker(&self, waker: Option<Waker>) {
        *lock(&self.shared.waker) = waker;
        // A job may have been queued before the waker was set.
        self.shared.wake();
    }

    pub fn http_address(&self) -> Option<std::net::SocketAddr> {
        self.http.as_ref().map(|h| h.address())
    }

    /// From now until [`Server::stop`], SIGTERM stops serving gracefully
    /// instead of ending the process at once (see [`crate::transport::signals`]): the
    /// HTTP front stops accepting, answers every request still waiting with
    /// an error and ends its streams (see [`crate::transport::http`]); the running
    /// call is interrupted and queued ones dropped, and [`Server::poll`]
    /// returns [`Polled::Terminated`], for R to return from its loop and
    /// stop the server. Does nothing if something else handles SIGTERM.
    pub fn stop_on_sigterm(&mut self) -> io::Result<()> {
        let callback = self.sigterm_action();
        self.termination = crate::transport::signals::on_sigterm(callback)?;
        Ok(())
    }

    /// What SIGTERM does (see [`Server::stop_on_sigterm`]), callable from
    /// any thread: for tests, which cannot send the signal to the process
    /// they share with other tests.
    pub fn sigterm_action(&self) -> crate::transport::signals::Callback {
        let shared = self.shared.clone();
        let http = self.http.as_ref().map(|h| h.stopper());
        Arc::new(move || {
            eprintln!("mcpserver: SIGTERM: stopping the server");
            shared.trace.note("SIGTERM: stopping the server");
            if let Some(http) = &http {
                // The waiting requests are answered first: interrupting
                // the running call must not end its stream unanswered.
                http.stop_and_wait(SIGTERM_ANSWER_WAIT);
            }
            shared.terminated.store(true, Ordering::SeqCst);
            shared.end_early();
        })
    }

    /// Whether this is a forked child's copy of the server (see `pid`).
    fn in_forked_child(&self) -> bool {
        crate::transport::forks::process_id() != self.pid
    }

    /// The registry served now (a call's own is `Job::registry`).
    pub fn registry(&self) -> Arc<Registry> {
        self.shared.live.current()
    }

    /// Serves `registry` from now on, in place of the current one (see
    /// [`Registry::build`]): requests that arrive from now on see it,
    /// calls already accepted keep theirs. Clients are told which lists
    /// changed once per burst: when the call that made the change ends
    /// (`during_call`), or shortly after changes made outside any call.
    /// Returns the lists that changed.
    pub fn change(&self, registry: Registry, during_call: bool) -> Kinds {
        if self.in_forked_child() {
            return Kinds::default();
        }
        let registry = Arc::new(registry);
        let old = self.shared.live.replace(registry.clone());
        let changed = registry.changes_from(&old);
        let schedule = {
            let mut unannounced = lock(&self.shared.unannounced);
            unannounced.0 = unannounced.0.or(changed);
            let schedule = !during_call && !unannounced.0.is_empty() && !unannounced.1;
            unannounced.1 |= schedule;
            schedule
        };
        if schedule {
            let shared = self.shared.clone();
            self.shared.timers.spawn(async move {
                tokio::time::sleep(CHANGE_GATHERING).await;
                shared.guarded(|| shared.announce_changes());
            });
        }
        changed
    }

    /// The keys of the entries served now or held by calls not yet ended
    /// (see [`Live::live_keys`]).
    pub fn live_keys(&self) -> Vec<usize> {
        self.shared.live.live_keys()
    }

    /// Waits up to `timeout` for the next tool call. `interrupted` is asked
    /// every `tick` while waiting; returning true ends the wait. No call
    /// starts while the client has not read the output queued for it.
    pub fn poll(
        &self,
        timeout: Duration,
        tick: Duration,
        mut interrupted: impl FnMut() -> bool,
    ) -> Polled {
        if self.in_forked_child() {
            return Polled::Failed(FORKED.to_string());
        }
        let deadline = Instant::now() + timeout;
        lock(&self.turns).returned(Instant::now());
        loop {
            if self.shared.closing.load(Ordering::SeqCst) {
                lock(&self.turns).clear();
                return ended_early(&self.shared);
            }
            let wait = tick.min(deadline.saturating_duration_since(Instant::now()));
            let next = if self.shared.pressure.wait_for_output_room(wait) {
                self.next_turn(wait)
            } else if let Some(end) = self.output_stalled() {
                return end;
            } else {
                Err(mpsc::RecvTimeoutError::Timeout)
            };
            match next {
                Ok(mut job) => {
                    if !self.shared.take(job.id) {
                        // Given up while it waited: answered already.
                        self.complete(job.id, Outcome::Cancelled);
                        continue;
                    }
                    let large = job
                        .sent_arguments
                        .as_ref()
                        .is_some_and(|a| a.len() >= memory::LARGE_MESSAGE);
                    // Large arguments are read and checked here, on the
                    // tool's thread: neither the reader nor the engine's
                    // lock waits for them (small ones were read already).
                    let registry = job.registry.clone();
                    let span = spans::span(
                        "R thread: read and check arguments",
                        job.sent_arguments.as_ref().map_or(0, |a| a.len()),
                    );
                    let read = if self.config.arguments_as_text {
                        job.check_arguments(&registry)
                    } else {
                        job.read_arguments(&registry)
                    };
                    drop(span);
                    if let Err(refusal) = read {
                        self.complete(job.id, Outcome::Done(refusal));
                        if large {
                            memory::give_back();
                        }
                        continue;
                    }
                    if large {
                        *lock(&self.large_job) = Some(job.id);
                    }
                    if self.worker_tools.contains(&job.registry.tool(job.tool).key) {
                        if let Some(job) = self.hand_to_worker(job) {
                            return Polled::Job(job);
                        }
                        continue;
                    }
                    if self.shared.board.begin(job.id) {
                        // Ending early began as the job was handed over:
                        // its interrupt may have found no job running.
                        // (It is set before that interrupt looks, and
                        // `begin` and the interrupt share the board's lock.)
                        if self.shared.closing.load(Ordering::SeqCst) {
                            self.shared.board.end(job.id);
                            return ended_early(&self.shared);
                        }
                        let tool = &job.registry.tool(job.tool).def;
                        if let Some(limit) = tool.timeout.or(self.config.default_timeout) {
                            let timer = self.shared.arm_timeout(job.id, limit);
                            *lock(&self.timeout) = Some((job.id, timer));
                        }
                        if job.token_check {
                            let allowance = lock(&self.turns).allowance();
                            *lock(&self.shared.running_check) = Some(RunningCheck {
                                job: job.id,
                                started: Instant::now(),
                                allowance,
                                stopping: false,
                            });
                            // A call queued before the check was marked
                            // running did not see it: it is in the queue
                            // now (calls are queued before they look).
                            let mut turns = lock(&self.turns);
                            self.take_queued(&mut turns);
                            if turns.calls_waiting() {
                                self.shared.stop_check_for_calls();
                            }
                        }
                        return Polled::Job(job);
                    }
                    // Cancelled while it waited in the queue: never run.
                    self.complete(job.id, Outcome::Cancelled);
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return ended_early(&self.shared),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if interrupted() {
                        return Polled::Interrupted;
                    }
                    if Instant::now() >= deadline {
                        return Polled::Idle;
                    }
                }
            }
        }
    }

    /// The client has not read what is queued for it, so no call starts.
    /// Whether serving is over all the same: with input ended and every
    /// call answered there is nothing left for R (`stop` then gives the
    /// writer its time); with calls still queued, the client is waited for
    /// at most [`WRITER_DRAIN`] after input ended, then counts as gone
    /// (queued calls are dropped unrun), so a client that closes its input
    /// and never reads cannot keep the server alive.
    fn output_stalled(&self) -> Option<Polled> {
        if !self.shared.input_ended.load(Ordering::Acquire) {
            return None;
        }
        if lock(&self.shared.jobs).is_none() {
            // The queue closed: every call read has been answered.
            return Some(ended_early(&self.shared));
        }
        let ended_at = (*lock(&self.shared.input_ended_at))?;
        if ended_at.elapsed() < WRITER_DRAIN {
            return None;
        }
        self.shared
            .trace
            .note("input ended and the client has read nothing since; dropping queued calls");
        self.shared.stalled.store(true, Ordering::SeqCst);
        self.shared.end_early();
        lock(&self.turns).clear();
        Some(ended_early(&self.shared))
    }

    /// The job whose turn it is, waiting up to `wait` for one: every job
    /// queued is taken in first, so that [`Turns`] chooses among them.
    fn next_turn(&self, wait: Duration) -> Result<Box<Job>, mpsc::RecvTimeoutError> {
        let mut turns = lock(&self.turns);
        let disconnected = self.take_queued(&mut turns);
        if let Some(job) = turns.next(Instant::now()) {
            return Ok(job);
        }
        if disconnected {
            return Err(mpsc::RecvTimeoutError::Disconnected);
        }
        drop(turns);
        let job = self.jobs.recv_timeout(wait)?;
        let mut turns = lock(&self.turns);
        turns.push(job);
        Ok(turns.next(Instant::now()).expect("a job was just queued"))
    }

    /// Moves every job queued into `turns`; true if no more can come.
    fn take_queued(&self, turns: &mut Turns) -> bool {
        loop {
            match self.jobs.try_recv() {
                Ok(job) => turns.push(job),
                Err(mpsc::TryRecvError::Empty) => return false,
                Err(mpsc::TryRecvError::Disconnected) => return true,
            }
        }
    }

    /// Calls of these tools (registry keys) run in worker processes that
    /// R manages, several at a time: `poll` hands them over without making
    /// them the tool thread's job, so a cancel or timeout never interrupts
    /// R's main thread for them. R watches `is_cancelled` and the time
    /// limit itself, stops the worker and reports the outcome.
    pub fn run_on_workers(&mut self, tools: impl IntoIterator<Item = usize>) {
        self.worker_tools = tools.into_iter().collect();
    }

    /// A worker job leaves the queue: `None` (answered here) if it was
    /// cancelled while it waited. Its cancel mark, if one comes later, stays
    /// on the board until the job completes.
    fn hand_to_worker(&self, job: Box<Job>) -> Option<Box<Job>> {
        if self.shared.board.is_cancelled(job.id) {
            self.complete(job.id, Outcome::Cancelled);
            return None;
        }
        Some(job)
    }

    /// Reports how a job ended; called on the thread that runs tools (it
    /// settles an interrupt sent for the job). A result is checked and
    /// rendered here, on the caller's thread and without the engine's lock,
    /// so a large one never delays the answers to other requests.
    pub fn complete(&self, job: JobId, outcome: Outcome) {
        if self.in_forked_child() {
            return;
        }
        self.shared.board.end(job);
        lock(&self.shared.running_check).take_if(|c| c.job == job);
        lock(&self.turns).ended(job, Instant::now());
        // An input request it left unanswered (it was interrupted) waits no more.
        lock(&self.shared.replies).remove(&job);
        if let Some((_, timer)) = lock(&self.timeout).take_if(|(running, _)| *running == job) {
            timer.abort();
        }
        let slot = lock(&self.shared.job_slots).get(&job).cloned();
        let Some(slot) = slot else {
            return;
        };
        let outcome = match outcome {
            Outcome::Done(result) => {
                let plan = lock(&slot.engine).render_plan(job);
                match plan {
                    Some(plan) => {
                        let _span = spans::span(
                            "R thread: check output and render the result",
                            result.structured.as_ref().map_or(0, |s| s.get().len()),
                        );
                        Outcome::Settled(plan.settle(&result))
                    }
                    None => Outcome::Done(result),
                }
            }
            other => other,
        };
        self.shared.step_on(&slot, Cause::Job(job), |e, out| {
            e.on_completed(job, outcome, out)
        });
        if let Sink::Mailbox(mailbox) = &slot.sink {
            mailbox.job_ended(job);
        }
        // A task's job ends here, yet the task stays in its store: its
        // engine's (reachable through the HTTP session or the stdio slot),
        // or the store 2026-07-28 HTTP requests share.
        lock(&self.shared.job_slots).remove(&job);
        // The engine knows the job no more, so no cancel for it can follow
        // (outputs are carried out under the engine's lock): drop any mark a
        // cancel that raced its end left on the board.
        self.shared.board.forget(job);
        if lock(&self.large_job)
            .take_if(|large| *large == job)
            .is_some()
        {
            memory::give_back();
        }
        // Changes the call made are announced after its response, once
        // for all of them.
        self.shared.announce_changes();
    }

    /// The job's result is a successful one of structured content only,
    /// which the caller will write in parts into the sink returned (see
    /// [`crate::protocol::streamed`]): the job is completed with it now, so
    /// the writer sends the parts as they come. `None` when the job's
    /// answer cannot be sent that way (over HTTP, in a batch, as a task's
    /// result, cancelled, ...): the caller completes it as usual. `meta` is
    /// the result's own `_meta`; `object` whether the content is a JSON
    /// object.
    pub fn complete_streamed(
        &self,
        job: JobId,
        meta: Option<serde_json::Map<String, serde_json::Value>>,
        object: bool,
    ) -> Option<JsonSink> {
        if self.in_forked_child() {
            return None;
        }
        let slot = lock(&self.shared.job_slots).get(&job).cloned()?;
        if !matches!(slot.sink, Sink::Stdout) || !lock(&slot.engine).can_stream(job) {
            return None;
        }
        // Its parts count as output waiting for the client until written,
        // so R starts no further call while they are over the bound.
        let (sink, content) = metered_json_stream(self.shared.pressure.clone());
        // Cancelled since the question: the engine drops `content`, and
        // the sink tells the caller nobody reads.
        self.complete(
            job,
            Outcome::Streamed {
                content,
                meta,
                object,
            },
        );
        Some(sink)
    }

    /// A running job reports progress (sent if the client asked for it, and
    /// dropped while the client has not read the output queued for it).
    pub fn progress(&self, job: JobId, update: Progress) {
        if self.in_forked_child() || self.shared.pressure.output_full() {
            return;
        }
        self.shared.step_job(job, |e, out| {
            e.on_progress(job, update, Instant::now(), out)
        });
    }

    /// A running job logs a message (sent if the client asked for logs, and
    /// dropped while the client has not read the output queued for it).
    pub fn log(&self, job: JobId, level: LogLevel, data: serde_json::Value) {
        if self.in_forked_child() || self.shared.pressure.output_full() {
            return;
        }
        self.shared
            .step_job(job, |e, out| e.on_log(job, level, data, out));
    }

    /// A running job asks the client for input (`request` is `{method,
    /// params}`); the answer arrives on the returned channel.
    pub fn ask(
        &self,
        job: JobId,
        key: String,
        request: serde_json::Value,
    ) -> mpsc::Receiver<Answer> {
        self.ask_with(job, move |e, out| e.on_ask(job, key, request, out))
    }

    /// A running job asks to go on as a task (see
    /// [`Engine::on_continue_as_task`]): its call is answered with the
    /// task's handle now. The task's id, or `None` when the call goes on as
    /// a plain call.
    pub fn continue_as_task(&self, job: JobId) -> Option<String> {
        if self.in_forked_child() {
            return None;
        }
        let mut task = None;
        self.shared
            .step_job(job, |e, out| task = e.on_continue_as_task(job, out));
        task
    }

    /// A running job asks several questions at once, each `(key, {method,
    /// params})`: one answer arrives on the returned channel once the client
    /// has answered them all, an object of the answers by key (or the
    /// first failure).
    pub fn ask_all(
        &self,
        job: JobId,
        requests: Vec<(String, serde_json::Value)>,
    ) -> mpsc::Receiver<Answer> {
        self.ask_with(job, move |e, out| e.on_ask_all(job, requests, out))
    }

    fn ask_with(
        &self,
        job: JobId,
        ask: impl FnOnce(&mut Engine, &mut Vec<Output>),
    ) -> mpsc::Receiver<Answer> {
        let (reply, answer) = mpsc::channel();
        if self.in_forked_child() {
            let _ = reply.send(Err(FORKED.to_string()));
            return answer;
        }
        lock(&self.shared.replies).insert(job, reply);
        if !lock(&self.shared.job_slots).contains_key(&job) {
            if let Some(reply) = lock(&self.shared.replies).remove(&job) {
                let _ = reply.send(Err("the call is no longer running".into()));
            }
            return answer;
        }
        let input_ended = &self.shared.input_ended;
        self.shared.step_job(job, |e, out| {
            // Checked under the engine's lock: either end of input finds
            // this job waiting, or this step finds input ended.
            if input_ended.load(Ordering::Acquire) {
                e.on_input_lost(job, out);
            } else {
                ask(e, out);
            }
        });
        answer
    }

    /// A resource changed: clients subscribed to `uri` are told: the
    /// stdio client, HTTP sessions (on their GET stream) and 2026-07-28
    /// listen streams that asked for it. A forked child's call does nothing.
    pub fn resource_updated(&self, uri: &str) {
        if self.in_forked_child() {
            return;
        }
        self.shared
            .broadcast(|e, out| e.on_resource_updated(uri, out));
    }

    /// Lets the HTTP connection that carries `job`'s messages go, without
    /// ending the call: its client reconnects for the rest (the 2025-11-25
    /// polling pattern). False where that cannot be done: stdio, a client
    /// that does not read event streams or cannot resume them.
    pub fn close_stream(&self, job: JobId) -> bool {
        if self.in_forked_child() {
            return false;
        }
        let slot = lock(&self.shared.job_slots).get(&job).cloned();
        match slot.as_ref().map(|s| &s.sink) {
            Some(Sink::Mailbox(mailbox)) => mailbox.close_stream(job),
            _ => false,
        }
    }

    /// Whether the client has cancelled `job` (as far as a forked child
    /// can tell: not at all).
    pub fn is_cancelled(&self, job: JobId) -> bool {
        !self.in_forked_child() && self.shared.board.is_cancelled(job)
    }

    /// The running job and why the server interrupted it. `None` means an
    /// interrupt the tool thread sees came from elsewhere (Ctrl-C): the
    /// server's own interrupts never outlive their job.
    pub fn interrupt_reason(&self) -> Option<(JobId, Interrupt)> {
        if self.in_forked_child() {
            return None;
        }
        self.shared.board.interrupted()
    }

    /// Stops serving: delivers what is queued for stdout (bounded wait),
    /// ends the threads and restores stdin and stdout. Runs once: calling it
    /// again (as dropping the server does) returns at once.
    pub fn stop(&mut self) {
        if std::mem::replace(&mut self.stopped, true) {
            return;
        }
        if self.in_forked_child() {
            // The child has none of the threads to stop, and the protocol
            // descriptors were closed in it at the fork (their numbers may
            // name other files since): leave all of it untouched.
            std::mem::forget(self.guard.take());
            std::mem::forget(self.reader.take());
            std::mem::forget(self.writer.take());
            std::mem::forget(self.timers.take());
            std::mem::forget(self.http.take());
            std::mem::forget(self.termination.take());
            return;
        }
        self.shared.stop_reader.store(true, Ordering::Relaxed);
        self.shared.pressure.close();
        if let Some(mut http) = self.http.take() {
            http.stop();
        }
        // The HTTP front has answered its clients: SIGTERM's wait is over.
        self.termination.take();
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        if let Some((stop, thread)) = self.timers.take() {
            let _ = stop.send(());
            let _ = thread.join();
        }
        lock(&self.shared.jobs).take();
        // Closing the writer's channel lets it drain and exit.
        lock(&self.shared.writer).take();
        let drain = if self.shared.stalled.load(Ordering::SeqCst) {
            Duration::ZERO
        } else {
            WRITER_DRAIN
        };
        let _ = self.writer_done.recv_timeout(drain);
        if let Some(w) = self.writer.take() {
            if self.writer_done.try_recv() == Err(mpsc::TryRecvError::Disconnected) {
                let _ = w.join();
            }
        }
        if let Some(mut guard) = self.guard.take() {
            guard.restore();
        }
        // The last spans go to the collector (a bounded wait), with the
        // stdio session's duration.
        if let Some(telemetry) = &self.config.telemetry {
            if let Some(slot) = &self.shared.stdio {
                lock(&slot.engine).end_session();
            }
            telemetry.finish();
        }
    }

    /// The running call `job` adds attributes (or an event) to its
    /// request's span.
    pub fn annotate_span(
        &self,
        job: JobId,
        attributes: Vec<(String, crate::telemetry::children::Value)>,
        event: Option<String>,
    ) {
        if self.in_forked_child() || self.config.telemetry.is_none() {
            return;
        }
        let attributes = crate::telemetry::children::key_values(attributes);
        self.shared
            .step_job(job, |e, _out| e.on_span_annotate(job, attributes, event));
    }

    /// The server's telemetry, when it is on.
    pub fn telemetry(&self) -> Option<&Arc<crate::telemetry::Telemetry>> {
        self.config.telemetry.as_ref()
    }

    /// Spans exported and dropped so far, when telemetry is on.
    pub fn telemetry_counts(&self) -> Option<crate::telemetry::export::Snapshot> {
        self.config.telemetry.as_ref().map(|t| t.counts())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Why serving ended early, for `poll`.
fn ended_early(shared: &Shared) -> Polled {
    match lock(&shared.failure).clone() {
        Some(description) => Polled::Failed(description),
        None if shared.terminated.load(Ordering::SeqCst) => Polled::Terminated,
        None => Polled::Finished,
    }
}
