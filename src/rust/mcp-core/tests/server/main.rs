//! The threaded server over real pipes, with a stand-in for R's main thread.

#[path = "../common/mod.rs"]
mod common;

use common::done_text;

use mcp_core::engine::board::{Interrupt, Interrupter};

use mcp_core::engine::registry::Registry;

use mcp_core::engine::{Config, Outcome};

use mcp_core::protocol::tool::{TaskSupport, ToolDef};

use mcp_core::transport::server::{Polled, Server};

use serde_json::{json, Value};

use std::fs::File;

use std::io::{BufRead, BufReader, Write};

use std::os::fd::FromRawFd;

use std::sync::atomic::{AtomicUsize, Ordering};

use std::sync::{mpsc, Arc};

use std::time::{Duration, Instant};

fn pipe() -> (File, File) {
    let mut fds = [0; 2];
    // SAFETY: pipe() fills two fresh descriptors that the files then own.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
}

struct Client {
    input: Option<File>,
    lines: mpsc::Receiver<Value>,
}

impl Client {
    fn send(&mut self, msg: Value) {
        let input = self.input.as_mut().unwrap();
        writeln!(input, "{msg}").unwrap();
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        self.input.as_mut().unwrap().write_all(bytes).unwrap();
    }

    fn close(&mut self) {
        self.input = None;
    }

    fn recv(&self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(10))
            .expect("a message from the server")
    }

    fn nothing_for(&self, d: Duration) -> bool {
        self.lines.recv_timeout(d).is_err()
    }
}

fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef {
            name: "echo".into(),
            description: Some("echo".into()),
            input_schema: json!({"type":"object","properties":{"x":{}}}),
            ..ToolDef::default()
        },
        ToolDef {
            name: "slow".into(),
            description: Some("slow".into()),
            input_schema: json!({"type":"object","properties":{}}),
            timeout: Some(Duration::from_millis(300)),
            ..ToolDef::default()
        },
        ToolDef {
            name: "job".into(),
            description: Some("may run as a task".into()),
            input_schema: json!({"type":"object","properties":{}}),
            task_support: TaskSupport::Optional,
            ..ToolDef::default()
        },
        ToolDef {
            name: "sum".into(),
            description: Some("sum".into()),
            input_schema: json!({"type":"object",
                "properties":{"values":{"type":"array","items":{"type":"number"}}},
                "required":["values"]}),
            ..ToolDef::default()
        },
    ]
}

/// A server on pipes, with the client's ends: where it writes, where it reads.
fn start_raw(config: Config, interrupter: Interrupter) -> (Server, File, File) {
    let (server_in, client_out) = pipe();
    let (client_in, server_out) = pipe();
    let server = Server::start(
        config,
        Registry::new(tools()).unwrap(),
        server_in,
        server_out,
        None,
        interrupter,
    )
    .unwrap();
    (server, client_out, client_in)
}

/// A client that reads everything the server writes, as it arrives.
fn reading_client(client_out: File, client_in: File) -> Client {
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(client_in).lines() {
            let Ok(line) = line else { break };
            if tx
                .send(serde_json::from_str::<Value>(&line).unwrap())
                .is_err()
            {
                break;
            }
        }
    });
    Client {
        input: Some(client_out),
        lines,
    }
}

fn start(config: Config) -> (Server, Client, Arc<AtomicUsize>) {
    let (server, client, interrupts, _) = start_counting(config);
    (server, client, interrupts)
}

/// A server whose stand-in for R counts the interrupts sent and settled.
fn start_counting(config: Config) -> (Server, Client, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let interrupts = Arc::new(AtomicUsize::new(0));
    let settled = Arc::new(AtomicUsize::new(0));
    let (sent, done) = (interrupts.clone(), settled.clone());
    let (server, client_out, client_in) = start_raw(
        config,
        Interrupter::new(
            move || {
                sent.fetch_add(1, Ordering::SeqCst);
            },
            move || {
                done.fetch_add(1, Ordering::SeqCst);
            },
        ),
    );
    (
        server,
        reading_client(client_out, client_in),
        interrupts,
        settled,
    )
}

fn init(client: &mut Client) {
    client.send(
        json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
    );
    assert_eq!(client.recv()["result"]["protocolVersion"], "2025-11-25");
}

fn call(id: u64, tool: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":{}}})
}

fn next_job(server: &Server) -> Box<mcp_core::engine::Job> {
    match server.poll(Duration::from_secs(10), Duration::from_millis(10), || false) {
        Polled::Job(job) => job,
        other => panic!("expected a job, got {other:?}"),
    }
}

/// A `sum` call whose `values` are `items` (JSON text, comma-separated).
fn sum_call(id: u64, items: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"sum","arguments":{{"values":[{items}]}}}}}}"#
    )
}

/// A `sum` call with `n` empty arrays where numbers belong: `n` problems.
fn flood(id: u64, n: usize) -> String {
    format!("{}\n", sum_call(id, &vec!["[]"; n].join(",")))
}

/// An interrupt callback that panics: a stand-in for a bug on whichever
/// server thread interrupts R.
fn panicking_interrupt() -> Interrupter {
    Interrupter::new(|| panic!("injected fault"), || {})
}

/// Polls until the server stops handing out work; what it said then.
fn poll_until_done(server: &Server) -> Polled {
    let t0 = Instant::now();
    loop {
        match server.poll(Duration::from_secs(1), Duration::from_millis(10), || false) {
            Polled::Idle if t0.elapsed() < Duration::from_secs(10) => continue,
            other => return other,
        }
    }
}

fn init_with_elicitation(client: &mut Client) {
    client.send(
        json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},
        "clientInfo":{"name":"t","version":"1"}}}),
    );
    assert_eq!(client.recv()["id"], "init");
}

fn elicitation() -> Value {
    json!({"method":"elicitation/create","params":{"message":"Name?",
        "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}})
}

/// A server whose client writes to it but never reads what it writes, and
/// the client's end of the server's stdout (kept open, unread).
fn start_unread(max_queued_output: usize) -> (Server, File, File) {
    let mut config = Config::default();
    config.limits.max_queued_output = max_queued_output;
    start_raw(config, Interrupter::new(|| {}, || {}))
}

fn send_line(to: &mut File, msg: Value) {
    writeln!(to, "{msg}").unwrap();
}

fn initialize(to: &mut File) {
    send_line(
        to,
        json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
    );
}

/// An answer far larger than the pipe to the client holds: the writer
/// blocks in write(2) until the client reads, which it never does.
fn answer_too_large_for_the_pipe(server: &Server, job: &mcp_core::engine::Job) {
    server.complete(job.id, done_text(&"x".repeat(2 * 1024 * 1024)));
}

/// Polls as R does, for at most `limit`; what it said and when.
fn poll_within(server: &Server, limit: Duration) -> (Polled, Duration) {
    let t0 = Instant::now();
    loop {
        let polled = server.poll(
            Duration::from_millis(200),
            Duration::from_millis(10),
            || false,
        );
        match polled {
            Polled::Idle if t0.elapsed() < limit => continue,
            other => return (other, t0.elapsed()),
        }
    }
}

mod backpressure;
mod control;
mod ending;
mod eof;
mod large;
mod limits;
mod panics;
