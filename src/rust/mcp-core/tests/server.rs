//! The threaded server over real pipes, with a stand-in for R's main thread.

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
fn a_call_that_waits_past_the_queue_limit_is_answered_and_never_runs() {
    let config = Config {
        queue_timeout: Some(Duration::from_millis(300)),
        ..Config::default()
    };
    let (mut server, mut client, _) = start(config);
    init(&mut client);
    // R is busy with call 1 (the user's command, in a live session) while
    // call 2 waits.
    client.send(call(1, "echo"));
    let busy = next_job(&server);
    client.send(call(2, "echo"));
    let t0 = Instant::now();
    let answer = client.recv();
    let waited = t0.elapsed();
    assert_eq!(answer["id"], 2);
    assert!(waited >= Duration::from_millis(300), "{waited:?}");
    assert!(waited < Duration::from_secs(3), "{waited:?}");
    assert_eq!(answer["result"]["isError"], true);
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Not run: R was busy for 0.3 seconds"),
        "{text}"
    );
    // The running call is not cut short by the queue limit.
    server.complete(busy.id, done_text("first"));
    assert_eq!(client.recv()["result"]["content"][0]["text"], "first");
    // Once R is free, the given-up call is not handed to it.
    client.send(call(3, "echo"));
    let next = next_job(&server);
    assert_eq!(next.context.request_id.as_json(), "3");
    server.complete(next.id, done_text("third"));
    assert_eq!(client.recv()["id"], 3);
    assert!(client.nothing_for(Duration::from_millis(200)));
    client.close();
    server.stop();
}

#[test]
fn a_call_taken_within_the_queue_limit_runs_past_it() {
    let config = Config {
        queue_timeout: Some(Duration::from_millis(200)),
        ..Config::default()
    };
    let (mut server, mut client, interrupts) = start(config);
    init(&mut client);
    client.send(call(1, "echo"));
    let job = next_job(&server);
    std::thread::sleep(Duration::from_millis(500));
    server.complete(job.id, done_text("ran"));
    let answer = client.recv();
    assert_eq!(answer["result"]["content"][0]["text"], "ran");
    assert_eq!(interrupts.load(Ordering::SeqCst), 0);
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

#[test]
fn a_ping_behind_a_large_call_is_answered_before_its_arguments_are_read() {
    let (mut server, mut client, _) = start(Config::default());
    init(&mut client);
    client.send_raw(flood(1, 300_000).as_bytes());
    client.send(json!({"jsonrpc":"2.0","id":2,"method":"ping"}));
    // Nothing has asked for tool calls yet, and only that reads and checks
    // a call's arguments: so the ping's answer comes first, whatever the
    // size of the call before it.
    assert_eq!(client.recv()["id"], 2);
    assert!(matches!(
        server.poll(
            Duration::from_millis(100),
            Duration::from_millis(10),
            || false
        ),
        Polled::Idle
    ));
    let answer = client.recv();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["isError"], true);
    client.close();
    assert!(matches!(
        server.poll(Duration::from_secs(5), Duration::from_millis(10), || false),
        Polled::Finished
    ));
    server.stop();
}

#[test]
fn a_flood_of_invalid_items_lists_the_first_ten_problems() {
    let (mut server, mut client, _) = start(Config::default());
    init(&mut client);
    client.send_raw(flood(1, 300_000).as_bytes());
    // Once the ping behind it is answered, the call has been read.
    client.send(json!({"jsonrpc":"2.0","id":"sync","method":"ping"}));
    let mut answers = vec![client.recv()];
    assert!(matches!(
        server.poll(
            Duration::from_millis(100),
            Duration::from_millis(10),
            || false
        ),
        Polled::Idle
    ));
    answers.push(client.recv());
    let answer = answers.into_iter().find(|a| a["id"] == 1).unwrap();
    assert_eq!(answer["result"]["isError"], true);
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    let parts: Vec<&str> = text.split("; ").collect();
    assert_eq!(
        parts[0],
        "Invalid arguments for tool \"sum\": values[0]: expected a number, got []"
    );
    assert_eq!(parts[9], "values[9]: expected a number, got []");
    assert_eq!(
        parts[10..],
        ["and more problems (only the first 10 are listed)"]
    );
    client.close();
    server.stop();
}

#[test]
fn a_large_valid_call_reaches_the_tool_whole() {
    let (mut server, mut client, _) = start(Config::default());
    init(&mut client);
    let numbers: Vec<String> = (0..200_000).map(|i| format!("{i}.25")).collect();
    client.send_raw(format!("{}\n", sum_call(1, &numbers.join(","))).as_bytes());
    let job = next_job(&server);
    assert!(job.sent_arguments.is_none(), "read once, then let go");
    let values = job.arguments["values"].as_array().unwrap();
    assert_eq!(values.len(), 200_000);
    let total: f64 = values.iter().map(|v| v.as_f64().unwrap()).sum();
    server.complete(job.id, done_text(&total.to_string()));
    let answer = client.recv();
    assert_eq!(answer["result"]["content"][0]["text"], "19999950000");
    client.close();
    server.stop();
}

// --- Panics, back-pressure and ending early ------------------------------

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

#[test]
fn a_panic_on_the_reader_thread_stops_the_server_with_a_clear_message() {
    let (mut server, client_out, client_in) = start_raw(Config::default(), panicking_interrupt());
    let mut client = reading_client(client_out, client_in);
    init(&mut client);
    client.send(call(1, "echo"));
    let job = next_job(&server);
    // The reader thread cancels the running job, and the interrupt panics.
    client
        .send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}));
    let Polled::Failed(message) = poll_until_done(&server) else {
        panic!("the server must say it failed");
    };
    assert_eq!(
        message,
        "mcpserver: internal error on the reader thread: injected fault"
    );
    server.complete(job.id, Outcome::Cancelled);
    server.stop();
}

#[test]
fn a_panic_on_the_timers_thread_stops_the_server_with_a_clear_message() {
    let (mut server, client_out, client_in) = start_raw(Config::default(), panicking_interrupt());
    let mut client = reading_client(client_out, client_in);
    init(&mut client);
    client.send(call(1, "slow"));
    let job = next_job(&server);
    // Its 300 ms limit passes; interrupting it panics on the timers thread.
    let Polled::Failed(message) = poll_until_done(&server) else {
        panic!("the server must say it failed");
    };
    assert_eq!(
        message,
        "mcpserver: internal error on the timers thread: injected fault"
    );
    server.complete(job.id, done_text("late"));
    server.stop();
}

#[test]
fn a_client_that_does_not_read_its_output_stops_the_server_reading() {
    let mut config = Config::default();
    config.limits.max_queued_output = 64 * 1024;
    let (mut server, mut client_out, client_in) = start_raw(config, Interrupter::new(|| {}, || {}));
    // 20,000 pings, about 800 KB in and out: far more than the pipes hold.
    let count = 20_000;
    let (sent_tx, sent) = mpsc::channel();
    let sender = std::thread::spawn(move || {
        let mut burst = String::new();
        for id in 0..count {
            burst.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n"
            ));
        }
        client_out.write_all(burst.as_bytes()).unwrap();
        sent_tx.send(()).unwrap();
        client_out
    });
    // Nobody reads: once the answers queued reach the bound the server
    // stops reading, and the client's writes block.
    assert!(
        sent.recv_timeout(Duration::from_secs(2)).is_err(),
        "the server took in all {count} requests with nobody reading the answers"
    );
    // The client reads: the server resumes, and every ping is answered.
    let mut answered = 0;
    let mut lines = BufReader::new(client_in).lines();
    while answered < count {
        let line = lines.next().expect("an answer").unwrap();
        let msg: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(msg["id"], answered);
        answered += 1;
    }
    sent.recv_timeout(Duration::from_secs(10))
        .expect("every request was taken in");
    drop(sender.join().unwrap());
    assert!(matches!(poll_until_done(&server), Polled::Finished));
    server.stop();
}

#[test]
fn queued_calls_at_their_bound_stop_the_server_reading_until_one_ends() {
    let mut config = Config::default();
    config.limits.max_queued_calls = 2;
    let (mut server, mut client, _) = start(config);
    init(&mut client);
    for id in 1..=5 {
        client.send(call(id, "echo"));
    }
    client.send(json!({"jsonrpc":"2.0","id":"ping","method":"ping"}));
    // Two calls are in progress at a time, so the ping is read only once
    // call 5 is queued and one more has finished: after the answer to 4.
    let mut order = Vec::new();
    for _ in 1..=4 {
        let job = next_job(&server);
        server.complete(job.id, done_text("done"));
        order.push(client.recv()["id"].clone());
    }
    order.push(client.recv()["id"].clone());
    assert_eq!(
        order,
        vec![json!(1), json!(2), json!(3), json!(4), json!("ping")]
    );
    let job = next_job(&server);
    server.complete(job.id, done_text("done"));
    assert_eq!(client.recv()["id"], 5);
    client.close();
    assert!(matches!(poll_until_done(&server), Polled::Finished));
    server.stop();
}

#[test]
fn tasks_never_count_as_queued_calls_so_their_control_plane_stays_heard() {
    let mut config = Config::default();
    config.limits.max_queued_calls = 2;
    let (mut server, mut client, _) = start(config);
    init(&mut client);
    client.send(call(1, "echo"));
    let running = next_job(&server);
    // Creating a task is answered at once: however many wait for R (up to
    // the task store's own bound), the server goes on reading, so the
    // client can create more, ask about them and cancel them.
    let task_call = |id: u64| {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"job","arguments":{},"task":{"ttl":60000}}})
    };
    let mut tasks = Vec::new();
    for id in 2..=5 {
        client.send(task_call(id));
        let created = client.recv();
        assert_eq!(created["id"], id, "task {id} created: {created}");
        tasks.push(created["result"]["task"]["taskId"].clone());
    }
    client.send(json!({"jsonrpc":"2.0","id":"ping","method":"ping"}));
    assert_eq!(client.recv()["id"], "ping");
    client.send(
        json!({"jsonrpc":"2.0","id":"cancel","method":"tasks/cancel",
        "params":{"taskId":tasks[0]}}),
    );
    let cancelled = client.recv();
    assert_eq!(cancelled["id"], "cancel");
    assert_eq!(cancelled["result"]["status"], "cancelled");
    // A direct call still waits its turn behind the running one.
    client.send(call(6, "echo"));
    server.complete(running.id, done_text("first"));
    assert_eq!(client.recv()["id"], 1);
    client.close();
    loop {
        match server.poll(Duration::from_secs(10), Duration::from_millis(10), || false) {
            Polled::Job(job) => server.complete(job.id, done_text("done")),
            Polled::Finished => break,
            other => panic!("expected jobs, then the end; got {other:?}"),
        }
    }
    assert_eq!(client.recv()["id"], 6);
    server.stop();
}

#[test]
fn a_tool_waiting_for_input_keeps_the_server_reading_and_extra_calls_are_refused() {
    let mut config = Config::default();
    config.limits.max_queued_calls = 2;
    let (mut server, mut client, _) = start(config);
    init_with_elicitation(&mut client);
    client.send(call(1, "echo"));
    let job = next_job(&server);
    let answers = server.ask(job.id, "input-1".into(), elicitation());
    let ask = client.recv();
    assert_eq!(ask["method"], "elicitation/create");
    client.send(call(2, "echo"));
    // Two calls are in progress, yet the reader goes on for the answer:
    // a third call is refused, naming the limit.
    client.send(call(3, "echo"));
    let refused = client.recv();
    assert_eq!(refused["id"], 3);
    assert_eq!(refused["error"]["code"], -32603);
    assert_eq!(refused["error"]["data"]["limit"], 2);
    client.send(json!({"jsonrpc":"2.0","id":ask["id"],"result":{"action":"accept","content":{"name":"Ada"}}}));
    let answer = answers
        .recv_timeout(Duration::from_secs(10))
        .expect("the answer")
        .expect("accepted");
    assert_eq!(answer["content"]["name"], "Ada");
    server.complete(job.id, done_text("hello Ada"));
    assert_eq!(client.recv()["id"], 1);
    let second = next_job(&server);
    server.complete(second.id, done_text("second"));
    assert_eq!(client.recv()["id"], 2);
    client.close();
    assert!(matches!(poll_until_done(&server), Polled::Finished));
    server.stop();
}

#[test]
fn a_closed_stdout_drops_queued_calls_unrun_and_interrupts_the_running_one() {
    let interrupts = Arc::new(AtomicUsize::new(0));
    let counter = interrupts.clone();
    let (mut server, mut client_out, client_in) = start_raw(
        Config::default(),
        Interrupter::new(
            move || {
                counter.fetch_add(1, Ordering::SeqCst);
            },
            || {},
        ),
    );
    let mut burst = String::new();
    for id in 1..=20 {
        burst.push_str(&format!("{}\n", call(id, "echo")));
    }
    burst.insert_str(
        0,
        &format!(
            "{}\n",
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
        ),
    );
    burst.push_str(&format!(
        "{}\n",
        json!({"jsonrpc":"2.0","id":"sync","method":"ping"})
    ));
    client_out.write_all(burst.as_bytes()).unwrap();
    let running = next_job(&server);
    // The ping is answered once every call before it is queued.
    let mut lines = BufReader::new(client_in).lines();
    while serde_json::from_str::<Value>(&lines.next().unwrap().unwrap()).unwrap()["id"] != "sync" {}
    // The client closes its end of the server's stdout.
    drop(lines);
    let deadline = Instant::now() + Duration::from_secs(10);
    while interrupts.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        interrupts.load(Ordering::SeqCst),
        1,
        "the running call is interrupted"
    );
    assert_eq!(
        server.interrupt_reason(),
        Some((running.id, Interrupt::Shutdown))
    );
    server.complete(running.id, Outcome::Cancelled);
    match server.poll(Duration::from_secs(5), Duration::from_millis(10), || false) {
        Polled::Finished => {}
        other => panic!("the 19 queued calls must be dropped, got {other:?}"),
    }
    server.stop();
    drop(client_out);
}

#[test]
fn end_of_input_while_a_tool_waits_for_input_ends_the_call_as_cancelled() {
    let (mut server, mut client, _) = start(Config::default());
    init_with_elicitation(&mut client);
    client.send(call(1, "echo"));
    let job = next_job(&server);
    let answers = server.ask(job.id, "input-1".into(), elicitation());
    assert_eq!(client.recv()["method"], "elicitation/create");
    client.close();
    let answer = answers
        .recv_timeout(Duration::from_secs(10))
        .expect("the wait ends");
    assert_eq!(
        answer,
        Err("the client closed its input before answering".to_string())
    );
    // The handler fails on that; nothing more is sent for the call.
    server.complete(
        job.id,
        Outcome::Done(common::text_result("The user could not be asked")),
    );
    assert!(matches!(poll_until_done(&server), Polled::Finished));
    server.stop();
    assert!(client.nothing_for(Duration::from_millis(200)));
}

#[test]
fn asking_for_input_after_end_of_input_fails_at_once() {
    let (mut server, mut client, _) = start(Config::default());
    init_with_elicitation(&mut client);
    client.send(call(1, "echo"));
    let job = next_job(&server);
    // An open subscription is closed with a result at end of input: the
    // sign that the server has seen it.
    client.send(
        json!({"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{
        "notifications":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{}}}}),
    );
    assert_eq!(
        client.recv()["method"],
        "notifications/subscriptions/acknowledged"
    );
    client.close();
    assert_eq!(client.recv()["id"], "sub");
    let answers = server.ask(job.id, "input-1".into(), elicitation());
    assert!(answers
        .recv_timeout(Duration::from_secs(10))
        .expect("answered")
        .is_err());
    server.complete(job.id, Outcome::Cancelled);
    assert!(matches!(poll_until_done(&server), Polled::Finished));
    server.stop();
}

#[test]
fn stopping_twice_waits_for_the_writer_only_once() {
    let (mut server, mut client_out, client_in) =
        start_raw(Config::default(), Interrupter::new(|| {}, || {}));
    // Fill the pipe to the client, who never reads: the writer blocks.
    let mut burst = String::new();
    for id in 0..5_000 {
        burst.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n"
        ));
    }
    client_out.write_all(burst.as_bytes()).unwrap();
    // Once the answers fill the pipe, the writer is stuck: stop waits its
    // bound for it, once.
    std::thread::sleep(Duration::from_millis(300));
    server.stop();
    let t0 = Instant::now();
    server.stop();
    drop(server);
    assert!(
        t0.elapsed() < Duration::from_secs(2),
        "stopped again: {:?}",
        t0.elapsed()
    );
    drop(client_in);
}

// --- End of input with a client that reads nothing ------------------------

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

#[test]
fn end_of_input_ends_serving_though_the_client_never_reads_the_last_answer() {
    let (mut server, mut to_server, from_server) = start_unread(64 * 1024);
    initialize(&mut to_server);
    send_line(&mut to_server, call(1, "echo"));
    let job = next_job(&server);
    answer_too_large_for_the_pipe(&server, &job);
    std::thread::sleep(Duration::from_millis(200));
    let ended = Instant::now();
    drop(to_server);
    // Everything read is answered: R has nothing left to run, however long
    // the client takes to read (it never will).
    let (polled, waited) = poll_within(&server, Duration::from_secs(20));
    assert!(matches!(polled, Polled::Finished), "{polled:?}");
    assert!(waited < Duration::from_secs(2), "poll took {waited:?}");
    // The writer gets its bound, no more.
    server.stop();
    let total = ended.elapsed();
    assert!(
        total < Duration::from_secs(8),
        "stopped {total:?} after input ended"
    );
    drop(from_server);
}

#[test]
fn calls_queued_behind_unread_output_are_dropped_soon_after_input_ends() {
    let (mut server, mut to_server, from_server) = start_unread(64 * 1024);
    initialize(&mut to_server);
    send_line(&mut to_server, call(1, "echo"));
    send_line(&mut to_server, call(2, "echo"));
    let job = next_job(&server);
    assert_eq!(
        job.context.request_id,
        mcp_core::protocol::jsonrpc::RequestId::from_number(1)
    );
    answer_too_large_for_the_pipe(&server, &job);
    std::thread::sleep(Duration::from_millis(200));
    let ended = Instant::now();
    drop(to_server);
    // Call 2 waits for room the client never makes: after the drain bound
    // the client counts as gone, and call 2 never runs.
    let (polled, waited) = poll_within(&server, Duration::from_secs(20));
    assert!(matches!(polled, Polled::Finished), "{polled:?}");
    assert!(
        waited >= Duration::from_secs(4) && waited < Duration::from_secs(8),
        "poll took {waited:?}"
    );
    // The writer is stuck: stopping does not wait for it again.
    server.stop();
    let total = ended.elapsed();
    assert!(
        total < Duration::from_secs(9),
        "stopped {total:?} after input ended"
    );
    drop(from_server);
}

#[test]
fn end_of_input_is_seen_while_the_reader_waits_for_room() {
    let (mut server, mut to_server, from_server) = start_unread(64 * 1024);
    initialize(&mut to_server);
    send_line(&mut to_server, call(1, "echo"));
    let job = next_job(&server);
    answer_too_large_for_the_pipe(&server, &job);
    std::thread::sleep(Duration::from_millis(300));
    // The reader waits for the output to drain before it reads these, and
    // then the client closes its end.
    send_line(
        &mut to_server,
        json!({"jsonrpc":"2.0","id":"p","method":"ping"}),
    );
    std::thread::sleep(Duration::from_millis(300));
    let ended = Instant::now();
    drop(to_server);
    let (polled, waited) = poll_within(&server, Duration::from_secs(20));
    assert!(matches!(polled, Polled::Finished), "{polled:?}");
    assert!(waited < Duration::from_secs(3), "poll took {waited:?}");
    server.stop();
    assert!(ended.elapsed() < Duration::from_secs(9));
    drop(from_server);
}
