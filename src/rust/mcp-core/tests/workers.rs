//! Calls handed to worker processes: several in flight at once, and a cancel
//! or time limit never interrupts the thread that polls (R's main thread).

mod common;

use common::done_text;

use mcp_core::engine::board::Interrupter;
use mcp_core::engine::registry::Registry;
use mcp_core::engine::{Config, Job, Outcome};
use mcp_core::protocol::tool::ToolDef;
use mcp_core::transport::server::{Polled, Server};
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::FromRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

fn pipe() -> (File, File) {
    let mut fds = [0; 2];
    // SAFETY: pipe() fills two fresh descriptors that the files then own.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
}

struct Harness {
    server: Server,
    input: Option<File>,
    lines: mpsc::Receiver<Value>,
    interrupts: Arc<AtomicUsize>,
}

impl Harness {
    /// A server whose "work" tool (limit 200 ms) runs on workers; "main"
    /// stays on the polling thread.
    fn start() -> Harness {
        let tools = vec![
            ToolDef {
                name: "main".into(),
                input_schema: json!({"type":"object","properties":{}}),
                ..ToolDef::default()
            },
            ToolDef {
                name: "work".into(),
                input_schema: json!({"type":"object","properties":{}}),
                timeout: Some(Duration::from_millis(200)),
                ..ToolDef::default()
            },
        ];
        let (server_in, client_out) = pipe();
        let (client_in, server_out) = pipe();
        let interrupts = Arc::new(AtomicUsize::new(0));
        let counter = interrupts.clone();
        let mut server = Server::start(
            Config::default(),
            Registry::new(tools).unwrap(),
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
        server.run_on_workers([1]);
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(client_in).lines() {
                let Ok(line) = line else { break };
                if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                    break;
                }
            }
        });
        let mut h = Harness {
            server,
            input: Some(client_out),
            lines,
            interrupts,
        };
        h.send(json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}));
        assert_eq!(h.recv()["id"], "init");
        h
    }

    fn send(&mut self, msg: Value) {
        writeln!(self.input.as_mut().unwrap(), "{msg}").unwrap();
    }

    fn recv(&self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(10))
            .expect("a message from the server")
    }

    fn nothing_for(&self, d: Duration) -> bool {
        self.lines.recv_timeout(d).is_err()
    }

    fn call(&mut self, id: u64, tool: &str) {
        self.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":tool,"arguments":{}}}));
    }

    fn cancel(&mut self, id: u64) {
        self.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled",
            "params":{"requestId":id}}));
    }

    /// A ping answered means every line sent before it has been handled.
    fn sync(&mut self) {
        self.send(json!({"jsonrpc":"2.0","id":"sync","method":"ping"}));
        assert_eq!(self.recv()["id"], "sync");
    }

    fn next_job(&self) -> Box<Job> {
        match self
            .server
            .poll(Duration::from_secs(10), Duration::from_millis(10), || false)
        {
            Polled::Job(job) => job,
            other => panic!("expected a job, got {other:?}"),
        }
    }
}

#[test]
fn worker_calls_are_in_flight_together_and_answered_in_any_order() {
    let mut h = Harness::start();
    h.call(1, "work");
    h.call(2, "work");
    let first = h.next_job();
    let second = h.next_job();
    h.server.complete(second.id, done_text("second"));
    assert_eq!(h.recv()["id"], 2);
    h.server.complete(first.id, done_text("first"));
    assert_eq!(h.recv()["id"], 1);
    h.server.stop();
}

#[test]
fn a_cancelled_worker_call_is_marked_but_never_interrupts_the_main_thread() {
    let mut h = Harness::start();
    h.call(1, "work");
    let job = h.next_job();
    h.cancel(1);
    h.sync();
    assert!(
        h.server.is_cancelled(job.id),
        "R sees the cancel by polling"
    );
    assert_eq!(h.interrupts.load(Ordering::SeqCst), 0);
    assert_eq!(h.server.interrupt_reason(), None);
    // The main thread goes on with other calls meanwhile.
    h.call(2, "main");
    let main = h.next_job();
    h.server.complete(main.id, done_text("main"));
    assert_eq!(h.recv()["id"], 2);
    h.server.complete(job.id, Outcome::Cancelled);
    assert!(!h.server.is_cancelled(job.id), "the mark ends with the job");
    assert!(
        h.nothing_for(Duration::from_millis(100)),
        "a cancel is not answered"
    );
    h.server.stop();
}

#[test]
fn a_worker_call_past_its_limit_is_left_to_r_and_answered_as_a_timeout() {
    let mut h = Harness::start();
    h.call(1, "work");
    let job = h.next_job();
    // Well past the 200 ms limit and the grace period: no interrupt, no answer.
    assert!(h.nothing_for(Duration::from_millis(1000)));
    assert_eq!(h.interrupts.load(Ordering::SeqCst), 0);
    h.server
        .complete(job.id, Outcome::TimedOut(Duration::from_millis(200)));
    let answer = h.recv();
    assert_eq!(answer["result"]["isError"], true);
    assert!(answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("timed out"));
    h.server.stop();
}

#[test]
fn a_worker_call_cancelled_while_queued_never_reaches_r() {
    let mut h = Harness::start();
    h.call(1, "main");
    let main = h.next_job();
    h.call(2, "work");
    h.call(3, "work");
    h.sync();
    h.cancel(2);
    h.sync();
    h.server.complete(main.id, done_text("main"));
    assert_eq!(h.recv()["id"], 1);
    let next = h.next_job();
    assert_eq!(next.context.request_id.to_string(), "3");
    h.server.complete(next.id, done_text("three"));
    assert_eq!(h.recv()["id"], 3);
    h.server.stop();
}

#[test]
fn worker_calls_ask_the_client_at_once_and_each_gets_its_own_answer() {
    let mut h = Harness::start();
    h.call(1, "work");
    h.call(2, "work");
    let first = h.next_job();
    let second = h.next_job();
    let question = |n: u64| {
        json!({"method":"elicitation/create","params":{
        "message": format!("question {n}"),
        "requestedSchema":{"type":"object","properties":{}}}})
    };
    // R asks for each call and polls the answers later: nothing waits.
    let first_answer = h.server.ask(first.id, "input-1".into(), question(1));
    let second_answer = h.server.ask(second.id, "input-1".into(), question(2));
    let asks = [h.recv(), h.recv()];
    assert_eq!(asks[0]["params"]["message"], "question 1");
    assert_eq!(asks[1]["params"]["message"], "question 2");
    assert_ne!(asks[0]["id"], asks[1]["id"]);
    // Meanwhile the main thread serves another call.
    h.call(3, "main");
    let main = h.next_job();
    h.server.complete(main.id, done_text("main"));
    assert_eq!(h.recv()["id"], 3);
    assert!(first_answer.try_recv().is_err(), "no answer yet");
    // Answered in the opposite order.
    for (ask, name) in asks.iter().rev().zip(["Grace", "Ada"]) {
        h.send(json!({"jsonrpc":"2.0","id":ask["id"],
            "result":{"action":"accept","content":{"name":name}}}));
    }
    let got = |answers: &mpsc::Receiver<Result<Value, String>>| {
        answers
            .recv_timeout(Duration::from_secs(10))
            .expect("an answer")
            .expect("not an error")["content"]["name"]
            .clone()
    };
    assert_eq!(got(&second_answer), "Grace");
    assert_eq!(got(&first_answer), "Ada");
    assert_eq!(h.interrupts.load(Ordering::SeqCst), 0);
    h.server.complete(first.id, done_text("one"));
    h.server.complete(second.id, done_text("two"));
    let ids: Vec<Value> = vec![h.recv()["id"].clone(), h.recv()["id"].clone()];
    assert!(ids.contains(&json!(1)) && ids.contains(&json!(2)));
    h.server.stop();
}
