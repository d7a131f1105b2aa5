//! Back-pressure: unread output and queued calls stop the reader; tasks
//! and input waits do not.

use super::*;

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
