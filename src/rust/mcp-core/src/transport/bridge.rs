//! The stdio-to-HTTP bridge behind `mcp_bridge()`: for clients that can only
//! start a command (Claude Desktop), it is that command, and it reaches an
//! MCP server over Streamable HTTP on their behalf.
//!
//! Every line the client writes to the bridge's stdin is sent to the server
//! as is (see [`crate::client::http_client`] for what HTTP adds: session, version
//! and routing headers); every message the server sends back (answers,
//! notifications and requests, from any stream) is written to stdout as one
//! line. Nothing else reaches stdout: the bridge owns the protocol streams
//! as the stdio server does (see [`crate::transport::stdio::StdioGuard`]).
//!
//! At the end of stdin the bridge waits (up to a grace period) for the
//! answers to the requests already sent, writes them, ends the session with
//! `DELETE` and returns. If the client stops reading stdout, the bridge ends
//! at once. Three threads: a reader (stdin to the server), a writer (the
//! server to stdout), and the caller's, which watches them and for Ctrl-C.

use crate::client::http_client::{HttpClient, Received};
use crate::protocol::framing::{Frame, LineReader};
use crate::protocol::jsonrpc::sniff_id;
use crate::transport::stdio::StoppableInput;
use crate::util::threads;
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How often the caller's thread looks at the others and for an interrupt.
const TICK: Duration = Duration::from_millis(50);

/// How long the writer waits for a message before it looks whether it
/// should stop.
const WRITER_WAIT: Duration = Duration::from_millis(100);

/// How many queued messages the writer still writes once told to stop.
const STOP_DRAIN: usize = 1024;

/// How the bridge behaves.
#[derive(Debug, Clone)]
pub struct Options {
    /// The longest line accepted from the client.
    pub max_message_size: usize,
    /// At the end of input, how long to wait for answers still due.
    pub grace: Duration,
    /// How long the server has to answer the `DELETE` that ends the session.
    pub close_timeout: Duration,
}

/// Why the bridge stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// The client closed stdin; every answer due was written (or the grace
    /// period ran out, as `unanswered` says).
    InputEnded { unanswered: usize },
    /// The client stopped reading stdout.
    OutputClosed,
    /// Ctrl-C.
    Interrupted,
    /// A thread of the bridge failed.
    Failed(String),
}

enum Event {
    InputEnded,
    OutputClosed,
    Panicked(String),
}

/// Runs the bridge between `input`/`output` (the client's side) and
/// `client` (the server's) until one side ends. `interrupted` is asked
/// every few milliseconds on the calling thread; `report` gets the problems
/// worth telling the user (on stderr), as they happen.
pub fn run(
    client: Arc<HttpClient>,
    input: File,
    output: File,
    options: Options,
    mut interrupted: impl FnMut() -> bool,
    mut report: impl FnMut(&str),
) -> End {
    let (events, watch) = mpsc::channel();
    let stop_reading = Arc::new(AtomicBool::new(false));
    let stop_writing = Arc::new(AtomicBool::new(false));
    let reader = spawn_reader(&client, input, &options, &stop_reading, &events);
    let writer = spawn_writer(&client, output, &stop_writing, &events);
    let (reader, writer) = match (reader, writer) {
        (Ok(r), Ok(w)) => (r, w),
        (Err(e), _) | (_, Err(e)) => {
            stop_reading.store(true, Ordering::SeqCst);
            stop_writing.store(true, Ordering::SeqCst);
            client.close(options.close_timeout);
            return End::Failed(format!("could not start the bridge's threads: {e}"));
        }
    };
    let mut end = None;
    while end.is_none() {
        for problem in client.take_problems() {
            report(&problem);
        }
        if interrupted() {
            end = Some(End::Interrupted);
            break;
        }
        end = match watch.recv_timeout(TICK) {
            Ok(Event::InputEnded) => Some(finish_answers(&client, &options, &mut interrupted)),
            Ok(Event::OutputClosed) => Some(End::OutputClosed),
            Ok(Event::Panicked(message)) => Some(End::Failed(message)),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Some(End::Failed("the bridge's threads ended".into()))
            }
        };
    }
    stop_reading.store(true, Ordering::SeqCst);
    stop_writing.store(true, Ordering::SeqCst);
    let _ = writer.join();
    client.close(options.close_timeout);
    let _ = reader.join();
    for problem in client.take_problems() {
        report(&problem);
    }
    end.unwrap_or(End::Interrupted)
}

/// The end of input: wait for the answers still due, within the grace
/// period (Ctrl-C cuts it short).
fn finish_answers(
    client: &HttpClient,
    options: &Options,
    interrupted: &mut impl FnMut() -> bool,
) -> End {
    let deadline = Instant::now() + options.grace;
    while Instant::now() < deadline {
        if client.wait_idle(TICK) {
            return End::InputEnded { unanswered: 0 };
        }
        if interrupted() {
            return End::Interrupted;
        }
    }
    End::InputEnded {
        unanswered: client.busy(),
    }
}

fn spawn_reader(
    client: &Arc<HttpClient>,
    input: File,
    options: &Options,
    stop: &Arc<AtomicBool>,
    events: &mpsc::Sender<Event>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let client = client.clone();
    let max = options.max_message_size;
    let stopped = stop.clone();
    let done = events.clone();
    let panicked = events.clone();
    threads::spawn(
        "bridge-reader",
        move |message| {
            let _ = panicked.send(Event::Panicked(threads::describe_panic(
                "bridge-reader",
                &message,
            )));
        },
        move || {
            let mut lines = LineReader::new(StoppableInput::new(input, stopped), max);
            while let Ok(Some(frame)) = lines.next_frame() {
                match frame {
                    Frame::Line(line) if line.iter().all(u8::is_ascii_whitespace) => {}
                    Frame::Line(line) => {
                        if let Err(e) = client.send(&line) {
                            let _ = done.send(Event::Panicked(format!("mcpserver bridge: {e}")));
                            return;
                        }
                    }
                    Frame::Oversized { prefix, length } => {
                        // Never sent: answered here, as the stdio server would.
                        let id = sniff_id(&prefix);
                        let message = format!(
                            "The message ({length} bytes) is longer than the bridge accepts ({max} bytes)."
                        );
                        let id = id.as_ref().map_or("null", |id| id.as_json());
                        let error = serde_json::json!({ "code": -32600, "message": message });
                        client.inject(format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#));
                    }
                }
            }
            let _ = done.send(Event::InputEnded);
        },
    )
}

fn spawn_writer(
    client: &Arc<HttpClient>,
    output: File,
    stop: &Arc<AtomicBool>,
    events: &mpsc::Sender<Event>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let client = client.clone();
    let stop = stop.clone();
    let done = events.clone();
    let panicked = events.clone();
    threads::spawn(
        "bridge-writer",
        move |message| {
            let _ = panicked.send(Event::Panicked(threads::describe_panic(
                "bridge-writer",
                &message,
            )));
        },
        move || {
            let mut output = std::io::BufWriter::new(output);
            // Once told to stop, what is queued is still written, but no
            // more than that (a chatty GET stream could go on for ever).
            let mut left_after_stop = STOP_DRAIN;
            loop {
                let stopping = stop.load(Ordering::SeqCst);
                if stopping {
                    if left_after_stop == 0 {
                        return;
                    }
                    left_after_stop -= 1;
                }
                let wait = if stopping {
                    Duration::ZERO
                } else {
                    WRITER_WAIT
                };
                match client.receive(wait) {
                    Received::Message(line) => {
                        let written = output
                            .write_all(line.as_bytes())
                            .and_then(|_| output.write_all(b"\n"))
                            .and_then(|_| output.flush());
                        if written.is_err() {
                            let _ = done.send(Event::OutputClosed);
                            return;
                        }
                    }
                    Received::Timeout if stopping => return,
                    Received::Timeout => {}
                    Received::Closed => return,
                }
            }
        },
    )
}
