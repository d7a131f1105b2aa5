//! The engines a server runs and what steps them: a [`Slot`] per stdio
//! client, HTTP session or 2026-07-28 HTTP request, where its messages go
//! ([`Sink`], [`Mailbox`]), the state the server's threads share (the job
//! queue, replies to input requests, timers), and the [`Front`] through
//! which the HTTP layer makes and steps engines.
//!
//! Below both [`crate::transport::server`] (which starts the threads and
//! serves R) and [`crate::transport::http`], so neither depends on the other
//! for what they share.

use crate::engine::board::{Board, Interrupt};
use crate::engine::registry::{Kinds, Live, Registry};
use crate::engine::{Config, Engine, Job, JobId, Outcome, Output};
use crate::protocol::framing::Frame;
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::streamed::StreamedLine;
use crate::transport::backpressure::Backpressure;
use crate::transport::stdio::Inbound;
use crate::transport::trace::Trace;
use crate::util::threads;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// After a timeout interrupt, how long R gets to unwind before the server
/// answers for it (for code that never checks for interrupts).
const TIMEOUT_GRACE: Duration = Duration::from_millis(500);

/// The answer to an input request, or why there is none.
pub type Answer = Result<serde_json::Value, String>;

pub(super) use crate::util::threads::lock;

/// One engine and where the messages it writes go: the stdio client, or an
/// HTTP session or request (see [`crate::transport::http`]). A server has one for
/// stdio, or one per HTTP session and per 2026-07-28 HTTP request.
pub struct Slot {
    pub(super) engine: Mutex<Engine>,
    pub(super) sink: Sink,
    /// Whether `MCPSERVER_TRACE` shows what it writes: not for the engine
    /// of token checks, whose answers may quote the token.
    pub(super) traced: bool,
    /// The one timer for this engine's tasks' time to live; a new alarm
    /// replaces it.
    pub(super) task_alarm: Mutex<Option<tokio::task::AbortHandle>>,
}

impl Slot {
    pub fn new(engine: Engine, sink: Sink) -> Arc<Slot> {
        Arc::new(Slot {
            engine: Mutex::new(engine),
            sink,
            traced: true,
            task_alarm: Mutex::new(None),
        })
    }
}

/// Where an engine's messages go.
pub enum Sink {
    /// The writer thread, one line each.
    Stdout,
    /// An HTTP session's or request's streams.
    Mailbox(Arc<dyn Mailbox>),
}

/// What made an engine write: the routing of a message that is not a
/// response (a response goes to whoever waits for its id).
#[derive(Debug, Clone)]
pub enum Cause {
    /// A message from the client, a request with this id if it has one.
    Inbound(Option<crate::protocol::jsonrpc::RequestId>),
    /// A job's progress, log, input request or end.
    Job(JobId),
    /// A timer (a task's time to live).
    Timer,
}

/// Receives an HTTP engine's messages, in the order the engine writes them
/// (called under the engine's lock, so it must not block or step an engine).
pub trait Mailbox: Send + Sync {
    /// One message, and what made the engine write it.
    fn deliver(&self, line: String, cause: &Cause);
    /// A job for `request` was handed to R: its messages follow the request.
    fn job_started(&self, job: JobId, request: &crate::protocol::jsonrpc::RequestId);
    /// Jobs whose request to the client could not be sent since the last
    /// call (the client has no stream open to take it): no answer will come.
    fn lost_requests(&self) -> Vec<JobId>;
    /// A job ended; if its request got no response (it was cancelled), its
    /// stream ends empty.
    fn job_ended(&self, job: JobId);
    /// Ends the connection carrying `job`'s messages without ending the
    /// call, for its client to reconnect and resume (see
    /// [`crate::transport::http::streams`]); false if its stream cannot be resumed.
    fn close_stream(&self, _job: JobId) -> bool {
        false
    }
}

/// What the threads share: the engines, and where their outputs go.
pub(super) struct Shared {
    /// The stdio client's engine (`None` when serving HTTP).
    pub(super) stdio: Option<Arc<Slot>>,
    /// What the server serves now (see [`Server::change`]).
    pub(super) live: Arc<Live>,
    /// HTTP engines that hear of changes: sessions and 2026-07-28 listen
    /// requests (see [`Front::follow`]). Dead ones are pruned as new ones
    /// come, so this holds no more than the open sessions and streams.
    pub(super) followers: Mutex<Vec<Weak<Slot>>>,
    /// Lists changed and not yet announced, and whether a timer will.
    pub(super) unannounced: Mutex<(Kinds, bool)>,
    /// The engine of each job handed to R, until it completes.
    pub(super) job_slots: Mutex<HashMap<JobId, Arc<Slot>>>,
    /// Lines for the writer thread; taken (closing the channel) to stop it.
    pub(super) writer: Mutex<Option<mpsc::Sender<super::stdio::Outgoing>>>,
    /// Tool calls for the R thread; taken to tell it there will be no more.
    pub(super) jobs: Mutex<Option<mpsc::Sender<Box<Job>>>>,
    pub(super) board: Arc<Board>,
    /// Where the answer to each waiting job's input request goes.
    pub(super) replies: Mutex<HashMap<JobId, mpsc::Sender<Answer>>>,
    pub(super) input_ended: AtomicBool,
    /// When input ended, for the bound on waiting for a client that has
    /// stopped reading.
    pub(super) input_ended_at: Mutex<Option<Instant>>,
    /// Serving ended because the client read nothing for
    /// [`WRITER_DRAIN`] after input ended: the writer is stuck, and `stop`
    /// waits for it no longer.
    pub(super) stalled: AtomicBool,
    /// Serving is ending early (the client stopped reading, or a thread
    /// panicked): queued calls are dropped unrun.
    pub(super) closing: AtomicBool,
    /// The first panic's description, once a thread has panicked.
    pub(super) failure: Mutex<Option<String>>,
    /// SIGTERM came: serving ends (see [`Server::stop_on_sigterm`]).
    pub(super) terminated: AtomicBool,
    pub(super) stop_reader: Arc<AtomicBool>,
    pub(super) pressure: Arc<Backpressure>,
    pub(super) timers: tokio::runtime::Handle,
    pub(super) trace: Arc<Trace>,
    /// Called when R has something to do (a job queued, serving over), for
    /// an R session that serves in the background and only looks when told.
    pub(super) waker: Mutex<Option<Waker>>,
    /// The listen streams that follow tasks, of every engine (one per open
    /// stream that asked for task ids).
    pub(super) watchers: Mutex<Vec<Watcher>>,
    /// The token check R runs now, if it does (see [`crate::engine::turns`]).
    pub(super) running_check: Mutex<Option<RunningCheck>>,
    /// How long a call may wait for R (see `Config::queue_timeout`).
    pub(super) queue_timeout: Option<Duration>,
    /// The timer of each call with a queue limit, until R takes the call.
    pub(super) queue_timers: Mutex<HashMap<JobId, tokio::task::AbortHandle>>,
}

/// A token check R runs: stopped if it holds R past its allowance while
/// calls wait.
pub(super) struct RunningCheck {
    pub(super) job: JobId,
    pub(super) started: Instant,
    pub(super) allowance: Duration,
    /// A timer to stop it is set already.
    pub(super) stopping: bool,
}

/// A listen stream that follows tasks (`notifications.taskIds`): task
/// status notifications of any engine reach it.
pub(super) struct Watcher {
    /// The engine the stream belongs to; gone with it.
    pub(super) slot: std::sync::Weak<Slot>,
    pub(super) subscription: RequestId,
    pub(super) tasks: HashSet<String>,
}

/// See [`Server::set_waker`].
pub type Waker = Arc<dyn Fn() + Send + Sync>;

impl Shared {
    /// Runs one engine step and carries out what it asks, all under the
    /// engine's lock, so messages go out in the order the engine made them.
    /// After a panic the engine's state is not trusted: no more steps.
    pub(super) fn step_on(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        cause: Cause,
        f: impl FnOnce(&mut Engine, &mut Vec<Output>),
    ) {
        if lock(&self.failure).is_some() {
            return;
        }
        self.guarded(|| {
            let mut out = Vec::new();
            let mut engine = lock(&slot.engine);
            f(&mut engine, &mut out);
            for output in out {
                self.carry_out(slot, &cause, output);
            }
            if let Sink::Mailbox(mailbox) = &slot.sink {
                // A tool asked a client that cannot hear it: it learns so
                // at once instead of waiting for an answer that never comes.
                for job in mailbox.lost_requests() {
                    let mut out = Vec::new();
                    engine.on_input_lost(job, &mut out);
                    for output in out {
                        self.carry_out(slot, &cause, output);
                    }
                }
                return;
            }
            if self.input_ended.load(Ordering::Acquire) && engine.pending_jobs() == 0 {
                // Everything read has been answered: no more work for R.
                lock(&self.jobs).take();
            }
            let awaiting_input = !lock(&self.replies).is_empty();
            self.pressure
                .set_calls(engine.pending_calls(), awaiting_input);
        });
    }

    /// A step on the stdio client's engine.
    pub(super) fn step(
        self: &Arc<Self>,
        cause: Cause,
        f: impl FnOnce(&mut Engine, &mut Vec<Output>),
    ) {
        if let Some(slot) = &self.stdio {
            self.step_on(slot, cause, f);
        }
    }

    /// A step on the engine of `job`, if it is still known.
    pub(super) fn step_job(
        self: &Arc<Self>,
        job: JobId,
        f: impl FnOnce(&mut Engine, &mut Vec<Output>),
    ) {
        let slot = lock(&self.job_slots).get(&job).cloned();
        if let Some(slot) = slot {
            self.step_on(&slot, Cause::Job(job), f);
        }
    }

    /// Runs `body`; a panic in it stops the server with a clear message
    /// instead of killing the thread silently.
    pub(super) fn guarded(self: &Arc<Self>, body: impl FnOnce()) {
        if let Err(message) = threads::catch(body) {
            self.fail(&threads::current_name(), message);
        }
    }

    /// A thread panicked: say so on stderr and stop serving.
    pub(super) fn fail(&self, thread: &str, message: String) {
        let description = threads::describe_panic(thread, &message);
        eprintln!("{description}");
        lock(&self.failure).get_or_insert(description);
        self.end_early();
    }

    /// The client stopped reading: interrupt the running job and finish.
    pub(super) fn client_gone(&self) {
        self.trace
            .note("the client stopped reading; dropping queued calls");
        self.end_early();
    }

    /// Stops serving without waiting for queued work: the reader stops,
    /// nobody waits for room any more, queued calls never run (see
    /// [`Server::poll`]), a tool waiting for input learns the server
    /// stopped, and the running call is interrupted.
    /// Tells a background R session to look (see [`Server::set_waker`]).
    pub(super) fn wake(&self) {
        let waker = lock(&self.waker).clone();
        if let Some(waker) = waker {
            // The embedder's: should it panic, serving goes on.
            let _ = threads::catch(|| waker());
        }
    }

    pub(super) fn end_early(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.wake();
        self.stop_reader.store(true, Ordering::Relaxed);
        self.pressure.close();
        lock(&self.jobs).take();
        lock(&self.replies).clear();
        // The interrupt callback is the embedder's: should it panic too, the
        // server is stopping all the same.
        let _ = threads::catch(|| self.board.interrupt_current(Interrupt::Shutdown));
    }

    /// Sends one line where `slot`'s messages go.
    pub(super) fn write(&self, slot: &Slot, line: String, cause: &Cause) {
        match &slot.sink {
            Sink::Stdout => {
                if let Some(writer) = lock(&self.writer).as_ref() {
                    self.pressure.output_queued(line.len());
                    let _ = writer.send(super::stdio::Outgoing::Line(line));
                }
            }
            Sink::Mailbox(mailbox) => {
                if slot.traced {
                    self.trace.outbound(&line);
                }
                mailbox.deliver(line, cause);
            }
        }
    }

    /// A line whose content is still being written goes to the writer
    /// thread, which sends it as it comes. Only a stdio engine is asked for
    /// one (see [`super::server::Server::complete_streamed`]); anywhere
    /// else it is dropped, which tells its producer to stop.
    pub(super) fn write_streamed(&self, slot: &Slot, line: StreamedLine) {
        if let (Sink::Stdout, Some(writer)) = (&slot.sink, lock(&self.writer).as_ref()) {
            let _ = writer.send(super::stdio::Outgoing::Streamed(line));
        }
    }

    /// Tells every listen stream following `task` its new status. Streams
    /// of other engines get it through their sinks, which take no engine's
    /// lock.
    pub(super) fn task_status(&self, task: &str, params: &serde_json::Value) {
        let targets: Vec<(Arc<Slot>, RequestId)> = {
            let mut watchers = lock(&self.watchers);
            watchers.retain(|w| w.slot.strong_count() > 0);
            watchers
                .iter()
                .filter(|w| w.tasks.contains(task))
                .filter_map(|w| Some((w.slot.upgrade()?, w.subscription.clone())))
                .collect()
        };
        for (slot, subscription) in targets {
            let line = crate::engine::task_notification(params.clone(), &subscription);
            self.write(&slot, line, &Cause::Inbound(Some(subscription)));
        }
    }

    pub(super) fn carry_out(self: &Arc<Self>, slot: &Arc<Slot>, cause: &Cause, output: Output) {
        match output {
            Output::ToListener(request, line) => {
                self.write(slot, line, &Cause::Inbound(Some(request)))
            }
            Output::Write(line) => self.write(slot, line, cause),
            Output::WriteStreamed(line) => self.write_streamed(slot, line),
            Output::CancelElsewhere(job) => {
                // Stepped later on the timers' thread: this engine's lock is
                // held here, and engines never wait for one another's.
                let owner = lock(&self.job_slots).get(&job).cloned();
                if let Some(owner) = owner {
                    self.after(&owner, Cause::Job(job), Duration::ZERO, move |e, out| {
                        e.cancel_job(job, out)
                    });
                }
            }
            Output::TaskStatus { task, params } => self.task_status(&task, &params),
            Output::WatchTasks {
                subscription,
                tasks,
            } => {
                let mut watchers = lock(&self.watchers);
                watchers.retain(|w| {
                    !(w.subscription == subscription && std::ptr::eq(w.slot.as_ptr(), &**slot))
                });
                watchers.push(Watcher {
                    slot: Arc::downgrade(slot),
                    subscription,
                    tasks: tasks.into_iter().collect(),
                });
            }
            Output::UnwatchTasks(subscription) => {
                lock(&self.watchers).retain(|w| {
                    !(w.subscription == subscription && std::ptr::eq(w.slot.as_ptr(), &**slot))
                        && w.slot.strong_count() > 0
                });
            }
            Output::Run(job) => {
                lock(&self.job_slots).insert(job.id, slot.clone());
                if let Sink::Mailbox(mailbox) = &slot.sink {
                    mailbox.job_started(job.id, &job.context.request_id);
                }
                let call = !job.token_check;
                // Armed before the job is queued, so R always finds its timer.
                if let (true, None, Some(limit)) = (call, &job.context.task, self.queue_timeout) {
                    self.limit_wait(slot, job.id, limit);
                }
                if let Some(jobs) = lock(&self.jobs).as_ref() {
                    let _ = jobs.send(job);
                }
                if call {
                    self.stop_check_for_calls();
                }
                self.wake();
            }
            Output::Cancel(job) => self.board.cancel(job),
            Output::ProgressDue(job, delay) => {
                self.after(slot, Cause::Job(job), delay, move |e, out| {
                    e.on_progress_due(job, Instant::now(), out)
                });
            }
            Output::Answer(job, answer) => {
                if let Some(reply) = lock(&self.replies).remove(&job) {
                    let _ = reply.send(answer);
                }
            }
            Output::TaskAlarm(delay) => {
                let alarm = self.after(slot, Cause::Timer, delay, |e, out| e.on_task_alarm(out));
                if let Some(replaced) = lock(&slot.task_alarm).replace(alarm) {
                    replaced.abort();
                }
            }
        }
    }

    /// Gives `job` up, answering it with an error, if R has not taken it
    /// from the queue within `limit`.
    pub(super) fn limit_wait(self: &Arc<Self>, slot: &Arc<Slot>, job: JobId, limit: Duration) {
        let shared = self.clone();
        let slot = slot.clone();
        let timer = self.timers.spawn(async move {
            tokio::time::sleep(limit).await;
            shared.guarded(|| {
                lock(&shared.queue_timers).remove(&job);
                if shared.board.expire_if_waiting(job) {
                    shared
                        .trace
                        .note(&format!("job {job} waited {limit:?} for R; giving it up"));
                    shared.step_on(&slot, Cause::Job(job), |e, out| {
                        e.on_queue_expired(job, limit, out)
                    });
                }
            });
        });
        lock(&self.queue_timers).insert(job, timer.abort_handle());
    }

    /// R takes `job` from the queue: false if it was given up meanwhile
    /// (see [`Shared::limit_wait`]), answered already, and must not run.
    pub(super) fn take(&self, job: JobId) -> bool {
        if self.queue_timeout.is_none() {
            return true;
        }
        if let Some(timer) = lock(&self.queue_timers).remove(&job) {
            timer.abort();
        }
        self.board.take(job)
    }

    /// A call waits for R: a token check R runs is stopped once it has held
    /// R for its allowance (see [`crate::engine::turns`]).
    pub(super) fn stop_check_for_calls(self: &Arc<Self>) {
        let (job, at, allowance) = {
            let mut running = lock(&self.running_check);
            let Some(check) = running.as_mut().filter(|c| !c.stopping) else {
                return;
            };
            check.stopping = true;
            (check.job, check.started + check.allowance, check.allowance)
        };
        let shared = self.clone();
        self.timers.spawn(async move {
            tokio::time::sleep_until(at.into()).await;
            shared.guarded(|| {
                if shared
                    .board
                    .interrupt_if_current(job, Interrupt::Timeout(allowance))
                {
                    shared.trace.note(&format!(
                        "token check {job} held R past {} ms while calls waited; stopping it",
                        allowance.as_millis()
                    ));
                }
            });
        });
    }

    /// Runs an engine step after `delay`, on the timer runtime; the handle
    /// stops it before then.
    pub(super) fn after(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        cause: Cause,
        delay: Duration,
        f: impl FnOnce(&mut Engine, &mut Vec<Output>) + Send + 'static,
    ) -> tokio::task::AbortHandle {
        let shared = self.clone();
        let slot = slot.clone();
        self.timers
            .spawn(async move {
                tokio::time::sleep(delay).await;
                shared.step_on(&slot, cause, f);
            })
            .abort_handle()
    }

    /// Runs one step on every engine that hears of server-wide news: the
    /// stdio client's, every HTTP session's and every open listen request's.
    pub(super) fn broadcast(self: &Arc<Self>, f: impl Fn(&mut Engine, &mut Vec<Output>)) {
        if let Some(slot) = &self.stdio {
            self.step_on(slot, Cause::Timer, &f);
        }
        let followers: Vec<Arc<Slot>> = lock(&self.followers)
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        for slot in followers {
            self.step_on(&slot, Cause::Timer, &f);
        }
    }

    /// Tells clients of the lists changed since they were last told.
    pub(super) fn announce_changes(self: &Arc<Self>) {
        let changed = std::mem::take(&mut *lock(&self.unannounced)).0;
        if !changed.is_empty() {
            self.trace
                .note(&format!("announcing changed lists: {changed:?}"));
            self.broadcast(|e, out| e.on_lists_changed(changed, out));
        }
    }

    pub(super) fn on_inbound(self: &Arc<Self>, inbound: Inbound) {
        match inbound {
            Inbound::Frame(Frame::Line(bytes)) => {
                // Parsed before the lock is taken, so a large line holds up
                // neither the tool's thread nor the timers.
                let span = crate::util::spans::span("reader: parse the line", bytes.len());
                // The line is handed over, not copied: params are its slices.
                let line = jsonrpc::parse_line(bytes);
                drop(span);
                self.step(Cause::Inbound(None), |e, out| e.on_parsed_line(line, out))
            }
            Inbound::Frame(Frame::Oversized { prefix, length }) => self
                .step(Cause::Inbound(None), |e, out| {
                    e.on_oversized(&prefix, length, out)
                }),
            Inbound::End(_) => {
                lock(&self.input_ended_at).get_or_insert_with(Instant::now);
                self.input_ended.store(true, Ordering::Release);
                self.step(Cause::Inbound(None), |e, out| {
                    e.on_eof(out);
                    // No answer can come for a tool waiting for input.
                    let waiting: Vec<JobId> = lock(&self.replies).keys().copied().collect();
                    for job in waiting {
                        e.on_input_lost(job, out);
                    }
                });
            }
        }
    }

    /// Arms a running job's time limit; the handle stops the timer when the
    /// job ends in time, so finished calls leave no sleeping timers behind.
    pub(super) fn arm_timeout(
        self: &Arc<Self>,
        job: JobId,
        limit: Duration,
    ) -> tokio::task::AbortHandle {
        let shared = self.clone();
        let timer = self.timers.spawn(async move {
            tokio::time::sleep(limit).await;
            shared.guarded(|| {
                if shared
                    .board
                    .interrupt_if_current(job, Interrupt::Timeout(limit))
                {
                    shared
                        .trace
                        .note(&format!("job {job} ran past its limit; interrupting"));
                    // If R has not unwound by then, answer for it; its late
                    // outcome is ignored.
                    let slot = lock(&shared.job_slots).get(&job).cloned();
                    if let Some(slot) = slot {
                        shared.after(&slot, Cause::Job(job), TIMEOUT_GRACE, move |e, out| {
                            e.on_completed(job, Outcome::TimedOut(limit), out)
                        });
                    }
                }
            });
        });
        timer.abort_handle()
    }
}

/// What the HTTP front needs of the server: making engines, stepping them,
/// and the job queue they share (see [`crate::transport::http`]).
#[derive(Clone)]
pub struct Front {
    pub(super) shared: Arc<Shared>,
    pub(super) config: Arc<Config>,
    pub(super) engines: crate::engine::Shared,
}

impl Front {
    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }

    /// The registry served now.
    pub fn registry(&self) -> Arc<Registry> {
        self.shared.live.current()
    }

    /// A slot for a new HTTP session: an engine of its own, which hears of
    /// changes and resource updates. `auth` is who the client is, as the
    /// bearer-token check described it, and `owner` whose tasks it reaches
    /// (see [`crate::stores::tasks::Owner`]).
    pub fn session_slot(
        &self,
        mailbox: Arc<dyn Mailbox>,
        auth: Option<serde_json::Value>,
        owner: Option<crate::stores::tasks::Owner>,
        peer: crate::telemetry::Peer,
    ) -> Arc<Slot> {
        let engine = Engine::sharing(self.config.clone(), self.shared.live.clone(), &self.engines)
            .with_auth(auth)
            .with_owner(owner)
            .with_peer(peer);
        let slot = Slot::new(engine, Sink::Mailbox(mailbox));
        self.follow(&slot);
        slot
    }

    /// The slot of the engine that runs bearer-token checks (see
    /// [`crate::transport::http::tokens`]): it hears of no changes, and what it writes
    /// is never traced, since a failing check's answer may quote the token.
    pub fn token_check_slot(&self, mailbox: Arc<dyn Mailbox>) -> Arc<Slot> {
        let engine = Engine::sharing(self.config.clone(), self.shared.live.clone(), &self.engines);
        Arc::new(Slot {
            engine: Mutex::new(engine),
            sink: Sink::Mailbox(mailbox),
            traced: false,
            task_alarm: Mutex::new(None),
        })
    }

    /// A slot for one 2026-07-28 request; as [`Front::session_slot`].
    pub fn request_slot(
        &self,
        mailbox: Arc<dyn Mailbox>,
        auth: Option<serde_json::Value>,
        owner: Option<crate::stores::tasks::Owner>,
        peer: crate::telemetry::Peer,
    ) -> Arc<Slot> {
        let engine =
            Engine::for_one_request(self.config.clone(), self.shared.live.clone(), &self.engines)
                .with_auth(auth)
                .with_owner(owner)
                .with_peer(peer);
        Slot::new(engine, Sink::Mailbox(mailbox))
    }

    /// `slot` hears of changes and resource updates while it lives (an
    /// HTTP session, or a `subscriptions/listen` request).
    pub fn follow(&self, slot: &Arc<Slot>) {
        let mut followers = lock(&self.shared.followers);
        followers.retain(|f| f.strong_count() > 0);
        followers.push(Arc::downgrade(slot));
    }

    /// Queues a bearer token for the R function that checks tokens (the
    /// registry entry with key `handler`), on `slot`'s engine; the verdict
    /// answers `id` there.
    pub fn check_token(&self, slot: &Arc<Slot>, id: RequestId, handler: usize, token: &str) {
        self.shared
            .step_on(slot, Cause::Inbound(Some(id.clone())), |e, out| {
                e.on_token_check(id, handler, token, out)
            });
    }

    /// Cancels request `id` of `slot`'s engine (dropped if still queued,
    /// interrupted if running), as a client's `notifications/cancelled`.
    pub fn cancel(&self, slot: &Arc<Slot>, id: &RequestId) {
        let cancel = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{}}}}}",
            id.as_json()
        );
        self.inbound(slot, None, jsonrpc::parse_line(cancel.as_bytes()));
    }

    /// Hands one parsed message (or batch) to `slot`'s engine.
    pub fn inbound(&self, slot: &Arc<Slot>, request: Option<RequestId>, line: jsonrpc::Line) {
        self.inbound_with(slot, request, line, None);
    }

    /// [`Front::inbound`] for a message whose HTTP request carried a trace
    /// context in its headers (`ambient`): its spans link to it.
    pub fn inbound_with(
        &self,
        slot: &Arc<Slot>,
        request: Option<RequestId>,
        line: jsonrpc::Line,
        ambient: Option<crate::telemetry::Ambient>,
    ) {
        self.shared
            .step_on(slot, Cause::Inbound(request), |e, out| {
                let linked = ambient.is_some();
                if linked {
                    e.set_ambient(ambient);
                }
                e.on_parsed_line(line, out);
                if linked {
                    e.set_ambient(None);
                }
            });
    }

    /// The client of `slot` has gone for good: its calls are cancelled.
    pub fn close(&self, slot: &Arc<Slot>) {
        self.shared
            .step_on(slot, Cause::Timer, |e, out| e.on_close(out));
    }

    /// Tool calls accepted by `slot`'s engine and not yet answered.
    pub fn pending_calls(&self, slot: &Arc<Slot>) -> usize {
        lock(&slot.engine).pending_calls()
    }

    /// Whether the server has stopped or failed.
    pub fn closing(&self) -> bool {
        self.shared.closing.load(Ordering::SeqCst) || lock(&self.shared.failure).is_some()
    }

    pub fn trace(&self) -> &Arc<Trace> {
        &self.shared.trace
    }

    /// A thread of the front panicked: the server stops with the message.
    pub fn fail(&self, thread: &str, message: String) {
        self.shared.fail(thread, message);
    }
}
