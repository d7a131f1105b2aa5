//! The threaded server over real pipes, with a stand-in for R's main thread.

mod common;

use common::done_text;

use mcp_core::board::{Interrupt, Interrupter};
use mcp_core::engine::{Config, Outcome};
use mcp_core::registry::Registry;
use mcp_core::server::{Polled, Server};
use mcp_core::tool::ToolDef;
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
    ]
}

fn start(config: Config) -> (Server, Client, Arc<AtomicUsize>) {
    let (server, client, interrupts, _) = start_counting(config);
    (server, client, interrupts)
}

/// A server whose stand-in for R counts the interrupts sent and settled.
fn start_counting(config: Config) -> (Server, Client, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let (server_in, client_out) = pipe();
    let (client_in, server_out) = pipe();
    let interrupts = Arc::new(AtomicUsize::new(0));
    let settled = Arc::new(AtomicUsize::new(0));
    let (sent, done) = (interrupts.clone(), settled.clone());
    let server = Server::start(
        config,
        Registry::new(tools()).unwrap(),
        server_in,
        server_out,
        None,
        Interrupter::new(
            move || {
                sent.fetch_add(1, Ordering::SeqCst);
            },
            move || {
                done.fetch_add(1, Ordering::SeqCst);
            },
        ),
    )
    .unwrap();
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
    let client = Client {
        input: Some(client_out),
        lines,
    };
    (server, client, interrupts, settled)
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

#[test]
fn the_control_plane_answers_while_a_tool_runs() {
    let (mut server, mut client, _) = start(Config::default());
    init(&mut client);
    client.send(call(1, "echo"));
    let job = next_job(&server);
    // R is "busy" with job 1; ping and tools/list must still be answered.
    let t0 = Instant::now();
    client.send(json!({"jsonrpc":"2.0","id":2,"method":"ping"}));
    assert_eq!(client.recv()["id"], 2);
    client.send(json!({"jsonrpc":"2.0","id":3,"method":"tools/list"}));
    assert_eq!(client.recv()["result"]["tools"][0]["name"], "echo");
    assert!(t0.elapsed() < Duration::from_secs(1));
    server.complete(job.id, done_text("done"));
    assert_eq!(client.recv()["result"]["content"][0]["text"], "done");
    client.close();
    assert!(matches!(
        server.poll(Duration::from_secs(5), Duration::from_millis(10), || false),
        Polled::Finished
    ));
    server.stop();
}

#[test]
fn every_request_read_before_eof_is_answered() {
    let (mut server, mut client, _) = start(Config::default());
    init(&mut client);
    for id in 1..=50 {
        client.send(call(id, "echo"));
    }
    client.close();
    let mut ran = 0;
    loop {
        match server.poll(Duration::from_secs(5), Duration::from_millis(10), || false) {
            Polled::Job(job) => {
                ran += 1;
                server.complete(job.id, done_text(&job.context.request_id.to_string()));
            }
            Polled::Finished => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(ran, 50);
    server.stop();
    let ids: Vec<i64> = (0..50)
        .map(|_| client.recv()["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, (1..=50).collect::<Vec<_>>(), "answered in order");
}

#[test]
fn a_cancelled_queued_call_never_runs_and_a_running_one_is_interrupted() {
    let (mut server, mut client, interrupts) = start(Config::default());
    init(&mut client);
    client.send(call(1, "echo"));
    client.send(call(2, "echo"));
    let running = next_job(&server);
    // Wait until job 2 is queued on the R side of the channel, then cancel both.
    client.send(json!({"jsonrpc":"2.0","id":"sync","method":"ping"}));
    assert_eq!(client.recv()["id"], "sync");
    client
        .send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}));
    client
        .send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}));
    let deadline = Instant::now() + Duration::from_secs(5);
    while interrupts.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        interrupts.load(Ordering::SeqCst),
        1,
        "only the running job is interrupted"
    );
    assert_eq!(
        server.interrupt_reason(),
        Some((running.id, Interrupt::Cancel))
    );
    server.complete(running.id, Outcome::Cancelled);
    client.send(call(3, "echo"));
    let next = next_job(&server);
    assert_eq!(
        next.context.request_id.as_json(),
        "3",
        "job 2 was dropped unrun"
    );
    server.complete(next.id, done_text("third"));
    let answer = client.recv();
    assert_eq!(answer["id"], 3, "nothing was sent for the cancelled calls");
    client.close();
    server.stop();
}

#[test]
fn a_cancel_as_a_call_finishes_is_settled_with_it_and_never_reaches_the_next() {
    let (mut server, mut client, interrupts, settled) = start_counting(Config::default());
    init(&mut client);
    client.send(call(1, "echo"));
    let first = next_job(&server);
    // The cancel lands while R is still handing back the first call's result.
    client
        .send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}));
    let deadline = Instant::now() + Duration::from_secs(5);
    while interrupts.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(interrupts.load(Ordering::SeqCst), 1);
    server.complete(first.id, done_text("finished anyway"));
    assert_eq!(
        settled.load(Ordering::SeqCst),
        1,
        "settled by the thread that ended the call, as it ended"
    );
    assert_eq!(
        server.interrupt_reason(),
        None,
        "no reason outlives its call"
    );
    client.send(call(2, "echo"));
    let second = next_job(&server);
    assert_eq!(
        server.interrupt_reason(),
        None,
        "an interrupt R sees now is a person's Ctrl-C"
    );
    // A late cancel for the first call interrupts nothing either.
    client
        .send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}));
    client.send(json!({"jsonrpc":"2.0","id":"sync","method":"ping"}));
    assert_eq!(client.recv()["id"], "sync");
    assert_eq!(interrupts.load(Ordering::SeqCst), 1);
    server.complete(second.id, done_text("second"));
    assert_eq!(client.recv()["result"]["content"][0]["text"], "second");
    assert_eq!(settled.load(Ordering::SeqCst), 1, "nothing to settle");
    client.close();
    server.stop();
}

#[test]
fn a_tool_past_its_limit_is_interrupted_and_answered() {
    let (mut server, mut client, interrupts) = start(Config::default());
    init(&mut client);
    client.send(call(1, "slow"));
    let job = next_job(&server);
    let t0 = Instant::now();
    // The stand-in for R never unwinds: the server answers after the grace period.
    let answer = client.recv();
    let waited = t0.elapsed();
    assert!(waited >= Duration::from_millis(300), "{waited:?}");
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    assert_eq!(interrupts.load(Ordering::SeqCst), 1);
    assert_eq!(answer["result"]["isError"], true);
    assert!(answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("timed out after 0.3 seconds"));
    assert_eq!(
        server.interrupt_reason(),
        Some((job.id, Interrupt::Timeout(Duration::from_millis(300))))
    );
    // R finally returns: its late result is dropped.
    server.complete(job.id, done_text("too late"));
    assert!(client.nothing_for(Duration::from_millis(200)));
    client.close();
    server.stop();
}

#[test]
fn a_default_timeout_applies_to_tools_without_their_own() {
    let config = Config {
        default_timeout: Some(Duration::from_millis(100)),
        ..Config::default()
    };
    let (mut server, mut client, interrupts) = start(config);
    init(&mut client);
    client.send(call(1, "echo"));
    let job = next_job(&server);
    let deadline = Instant::now() + Duration::from_secs(5);
    while interrupts.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    // This time R unwinds promptly and reports the timeout itself.
    let (id, why) = server.interrupt_reason().unwrap();
    assert_eq!(id, job.id);
    let Interrupt::Timeout(limit) = why else {
        panic!("{why:?}")
    };
    server.complete(job.id, Outcome::TimedOut(limit));
    let answer = client.recv();
    assert!(answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("0.1 seconds"));
    client.close();
    server.stop();
}

#[test]
fn malformed_and_oversized_input_never_stops_the_server() {
    let config = Config {
        max_message_bytes: 1000,
        ..Config::default()
    };
    let (mut server, mut client, _) = start(config);
    client.send_raw(b"{oops\n\n\r\n\xff\xfe\n");
    assert_eq!(client.recv()["error"]["code"], -32700);
    assert_eq!(client.recv()["error"]["code"], -32700, "invalid UTF-8");
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":\"big\",\"method\":\"ping\",\"params\":{{\"x\":\"{}\"}}}}\n",
        "y".repeat(100_000)
    );
    client.send_raw(big.as_bytes());
    let answer = client.recv();
    assert_eq!(answer["id"], "big");
    assert_eq!(answer["error"]["code"], -32600);
    client.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n");
    assert_eq!(client.recv()["result"], json!({}));
    client.close();
    assert!(matches!(
        server.poll(Duration::from_secs(5), Duration::from_millis(10), || false),
        Polled::Finished
    ));
    server.stop();
}

#[test]
fn a_vanished_client_ends_the_server() {
    let (server_in, mut client_out) = pipe();
    let (client_in, server_out) = pipe();
    let interrupts = Arc::new(AtomicUsize::new(0));
    let counter = interrupts.clone();
    let mut server = Server::start(
        Config::default(),
        Registry::new(tools()).unwrap(),
        server_in,
        server_out,
        None,
        Interrupter::new(
            move || {
                counter.fetch_add(1, Ordering::SeqCst);
            },
            || {},
        ),
    )
    .unwrap();
    // The client stops reading (its end of our stdout closes) mid-call.
    drop(client_in);
    writeln!(
        client_out,
        "{}",
        json!({"jsonrpc":"2.0","id":1,"method":"ping"})
    )
    .unwrap();
    writeln!(
        client_out,
        "{}",
        json!({"jsonrpc":"2.0","id":2,"method":"ping"})
    )
    .unwrap();
    let t0 = Instant::now();
    loop {
        match server.poll(Duration::from_secs(5), Duration::from_millis(10), || false) {
            Polled::Finished => break,
            Polled::Idle if t0.elapsed() < Duration::from_secs(5) => continue,
            other => panic!("{other:?}"),
        }
    }
    server.stop();
}

#[test]
fn the_interrupt_check_ends_a_wait() {
    let (mut server, mut client, _) = start(Config::default());
    let mut asked = 0;
    let polled = server.poll(Duration::from_secs(10), Duration::from_millis(5), || {
        asked += 1;
        asked == 3
    });
    assert!(matches!(polled, Polled::Interrupted));
    assert!(matches!(
        server.poll(Duration::from_millis(30), Duration::from_millis(10), || {
            false
        }),
        Polled::Idle
    ));
    client.close();
    server.stop();
}
