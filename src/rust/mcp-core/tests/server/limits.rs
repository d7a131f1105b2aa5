//! Time limits and queue limits, and input that never stops the server.

use super::*;

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
