//! The running server: the threads around the [`Engine`], and the interface
//! the R main thread drives (`poll` for the next tool call, `complete` with
//! its outcome).
//!
//! Threads: a reader (stdin lines), a writer (stdout lines), and a
//! dispatcher running a single-threaded tokio runtime that owns the engine.
//! The dispatcher answers everything but `tools/call` itself, at once, even
//! while R is busy; tool calls queue for the R thread in arrival order.

use crate::board::{Board, Interrupt};
use crate::engine::{Config, Engine, Job, JobId, Outcome, Output, Progress};
use crate::framing::Frame;
use crate::logging::LogLevel;
use crate::registry::Registry;
use crate::trace::Trace;
use crate::transport::{self, Inbound, StdioGuard};
use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

/// After a timeout interrupt, how long R gets to unwind before the server
/// answers for it (for code that never checks for interrupts).
const TIMEOUT_GRACE: Duration = Duration::from_millis(500);

/// How long `stop` waits for the writer to deliver what is queued.
const WRITER_DRAIN: Duration = Duration::from_secs(5);

enum Event {
    Inbound(Inbound),
    Started(JobId, usize),
    Completed(JobId, Outcome),
    Progress(JobId, Progress),
    ProgressDue(JobId),
    Log(JobId, LogLevel, serde_json::Value),
    Ask(JobId, String, serde_json::Value, mpsc::Sender<Answer>),
    Deadline(JobId, Duration),
    Abandon(JobId, Duration),
    ClientGone,
    Stop,
}

/// The answer to an input request, or why there is none.
pub type Answer = Result<serde_json::Value, String>;

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
}

pub struct Server {
    events: UnboundedSender<Event>,
    jobs: mpsc::Receiver<Box<Job>>,
    board: Arc<Board>,
    registry: Arc<Registry>,
    config: Arc<Config>,
    stop_reader: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
    dispatcher: Option<JoinHandle<()>>,
    writer_done: mpsc::Receiver<()>,
    writer: Option<JoinHandle<()>>,
    guard: Option<StdioGuard>,
    trace: Arc<Trace>,
}

impl Server {
    /// Serves on the process's stdin and stdout, which are moved to private
    /// descriptors until [`Server::stop`]. `interrupt` must make the thread
    /// that runs tools notice an interrupt (for R: SIGINT to its main thread).
    pub fn start_stdio(
        config: Config,
        registry: Registry,
        interrupt: Box<dyn Fn() + Send + Sync>,
    ) -> io::Result<Server> {
        let (guard, input, output) = StdioGuard::take()?;
        Server::start(config, registry, input, output, Some(guard), interrupt)
    }

    /// Serves on the given files (pipes in tests).
    pub fn start(
        config: Config,
        registry: Registry,
        input: File,
        output: File,
        guard: Option<StdioGuard>,
        interrupt: Box<dyn Fn() + Send + Sync>,
    ) -> io::Result<Server> {
        let config = Arc::new(config);
        let registry = Arc::new(registry);
        let trace = Arc::new(Trace::from_env());
        let board = Arc::new(Board::new(interrupt));
        let (events, event_rx) = unbounded_channel();
        let (job_tx, jobs) = mpsc::channel();
        let (line_tx, line_rx) = mpsc::channel::<String>();
        let (done_tx, writer_done) = mpsc::channel();

        let gone = events.clone();
        let on_gone = move || {
            let _ = gone.send(Event::ClientGone);
        };
        let writer = transport::spawn_writer(output, line_rx, trace.clone(), on_gone, done_tx)?;

        let stop_reader = Arc::new(AtomicBool::new(false));
        let inbound = events.clone();
        let reader = transport::spawn_reader(
            input,
            config.max_message_bytes,
            stop_reader.clone(),
            trace.clone(),
            move |msg| {
                let _ = inbound.send(Event::Inbound(msg));
            },
        )?;

        let engine = Engine::new(config.clone(), registry.clone());
        let dispatcher = Dispatcher {
            engine,
            replies: std::collections::HashMap::new(),
            board: board.clone(),
            writer: line_tx,
            jobs: Some(job_tx),
            events: events.clone(),
            trace: trace.clone(),
        };
        let dispatcher = std::thread::Builder::new()
            .name("mcp-dispatcher".into())
            .spawn(move || dispatcher.run(event_rx))?;

        Ok(Server {
            events,
            jobs,
            board,
            registry,
            config,
            stop_reader,
            reader: Some(reader),
            dispatcher: Some(dispatcher),
            writer_done,
            writer: Some(writer),
            guard,
            trace,
        })
    }

    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }

    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// Waits up to `timeout` for the next tool call. `interrupted` is asked
    /// every `tick` while waiting; returning true ends the wait.
    pub fn poll(
        &self,
        timeout: Duration,
        tick: Duration,
        mut interrupted: impl FnMut() -> bool,
    ) -> Polled {
        let deadline = Instant::now() + timeout;
        loop {
            let wait = tick.min(deadline.saturating_duration_since(Instant::now()));
            match self.jobs.recv_timeout(wait) {
                Ok(job) => {
                    if self.board.begin(job.id) {
                        let _ = self.events.send(Event::Started(job.id, job.tool));
                        return Polled::Job(job);
                    }
                    // Cancelled while it waited in the queue: never run.
                    let _ = self
                        .events
                        .send(Event::Completed(job.id, Outcome::Cancelled));
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return Polled::Finished,
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

    /// Reports how a job ended.
    pub fn complete(&self, job: JobId, outcome: Outcome) {
        self.board.end(job);
        let _ = self.events.send(Event::Completed(job, outcome));
    }

    /// A running job reports progress (sent if the client asked for it).
    pub fn progress(&self, job: JobId, update: Progress) {
        let _ = self.events.send(Event::Progress(job, update));
    }

    /// A running job logs a message (sent if the client asked for logs).
    pub fn log(&self, job: JobId, level: LogLevel, data: serde_json::Value) {
        let _ = self.events.send(Event::Log(job, level, data));
    }

    /// A running job asks the client for input (`request` is `{method,
    /// params}`); the answer arrives on the returned channel.
    pub fn ask(
        &self,
        job: JobId,
        key: String,
        request: serde_json::Value,
    ) -> mpsc::Receiver<Answer> {
        let (reply, answer) = mpsc::channel();
        let _ = self.events.send(Event::Ask(job, key, request, reply));
        answer
    }

    /// Whether the client has cancelled `job`.
    pub fn is_cancelled(&self, job: JobId) -> bool {
        self.board.is_cancelled(job)
    }

    /// Why the tool thread was interrupted, if the server did it: consumed
    /// by the call. `None` means the interrupt came from elsewhere (Ctrl-C).
    pub fn interrupt_reason(&self) -> Option<(JobId, Interrupt)> {
        self.board.take_reason()
    }

    /// The job the tool thread is running, if any.
    pub fn current_job(&self) -> Option<JobId> {
        self.board.current()
    }

    /// Stops serving: delivers what is queued for stdout (bounded wait),
    /// ends the threads and restores stdin and stdout.
    pub fn stop(&mut self) {
        let _ = self.events.send(Event::Stop);
        self.stop_reader.store(true, Ordering::Relaxed);
        if let Some(d) = self.dispatcher.take() {
            let _ = d.join();
        }
        // The dispatcher dropped the writer's channel; wait for the drain.
        let _ = self.writer_done.recv_timeout(WRITER_DRAIN);
        if let Some(w) = self.writer.take() {
            if self.writer_done.try_recv() == Err(mpsc::TryRecvError::Disconnected) {
                let _ = w.join();
            }
        }
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        if let Some(mut guard) = self.guard.take() {
            guard.restore();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

struct Dispatcher {
    engine: Engine,
    /// Where the answer to each waiting job's input request goes.
    replies: std::collections::HashMap<JobId, mpsc::Sender<Answer>>,
    board: Arc<Board>,
    writer: mpsc::Sender<String>,
    jobs: Option<mpsc::Sender<Box<Job>>>,
    events: UnboundedSender<Event>,
    trace: Arc<Trace>,
}

impl Dispatcher {
    fn run(mut self, events: UnboundedReceiver<Event>) {
        transport::block_signals_in_this_thread();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a single-threaded tokio runtime");
        runtime.block_on(self.serve(events));
    }

    async fn serve(&mut self, mut events: UnboundedReceiver<Event>) {
        let mut input_ended = false;
        let mut out = Vec::new();
        while let Some(event) = events.recv().await {
            match event {
                Event::Inbound(Inbound::Frame(Frame::Line(line))) => {
                    self.engine.on_line(&line, &mut out)
                }
                Event::Inbound(Inbound::Frame(Frame::Oversized { prefix, length })) => {
                    self.engine.on_oversized(&prefix, length, &mut out)
                }
                Event::Inbound(Inbound::End(_)) => {
                    input_ended = true;
                    self.engine.on_eof(&mut out);
                }
                Event::Started(job, tool) => self.arm_timeout(job, tool),
                Event::Completed(job, outcome) => self.engine.on_completed(job, outcome, &mut out),
                Event::Progress(job, update) => {
                    self.engine
                        .on_progress(job, update, Instant::now(), &mut out)
                }
                Event::ProgressDue(job) => {
                    self.engine.on_progress_due(job, Instant::now(), &mut out)
                }
                Event::Log(job, level, data) => self.engine.on_log(job, level, data, &mut out),
                Event::Ask(job, key, request, reply) => {
                    self.replies.insert(job, reply);
                    self.engine.on_ask(job, key, request, &mut out);
                }
                Event::Deadline(job, limit) => {
                    if self
                        .board
                        .interrupt_if_current(job, Interrupt::Timeout(limit))
                    {
                        self.trace
                            .note(&format!("job {job} ran past its limit; interrupting"));
                        self.after(TIMEOUT_GRACE, Event::Abandon(job, limit));
                    }
                }
                Event::Abandon(job, limit) => {
                    // R has not unwound yet: answer for it; its late outcome is ignored.
                    self.engine
                        .on_completed(job, Outcome::TimedOut(limit), &mut out);
                }
                Event::ClientGone => {
                    self.board.interrupt_current(Interrupt::Shutdown);
                    break;
                }
                Event::Stop => break,
            }
            self.deliver(&mut out);
            if input_ended && self.engine.pending_jobs() == 0 {
                break;
            }
        }
        // Closing the job queue tells the R thread to finish; closing the
        // writer's channel lets it drain and exit.
        self.jobs = None;
    }

    fn deliver(&mut self, out: &mut Vec<Output>) {
        for output in out.drain(..) {
            match output {
                Output::Write(line) => {
                    let _ = self.writer.send(line);
                }
                Output::Run(job) => {
                    if let Some(jobs) = &self.jobs {
                        let _ = jobs.send(job);
                    }
                }
                Output::Cancel(job) => self.board.cancel(job),
                Output::ProgressDue(job, delay) => self.after(delay, Event::ProgressDue(job)),
                Output::Answer(job, answer) => {
                    if let Some(reply) = self.replies.remove(&job) {
                        let _ = reply.send(answer);
                    }
                }
            }
        }
    }

    fn arm_timeout(&self, job: JobId, tool: usize) {
        let limit = self
            .engine
            .registry()
            .tool(tool)
            .def
            .timeout
            .or(self.engine.config().default_timeout);
        if let Some(limit) = limit {
            self.after(limit, Event::Deadline(job, limit));
        }
    }

    fn after(&self, delay: Duration, event: Event) {
        let events = self.events.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let _ = events.send(event);
        });
    }
}
