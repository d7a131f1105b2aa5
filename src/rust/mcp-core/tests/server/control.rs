//! The control plane while R is busy, cancellation of queued and running calls.

use super::*;

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
