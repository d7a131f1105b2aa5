//! End of input in every state, and stopping.

use super::*;

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
