//! Stopping (and SIGTERM): what waits is answered, every stream ends.

use super::*;

#[test]
fn stopping_answers_what_waits_and_ends_every_stream_with_its_last_chunk() {
    let h = start(options());
    let session = initialize(h.address, json!({}));
    let with_session = format!("Mcp-Session-Id: {session}");
    let get = send_raw(h.address, &head_11(h.address, "GET", &[&with_session]), b"");
    assert_eq!(get.status, 200);
    // The first call runs (the stand-in for R is busy with it), the
    // second waits in the queue; both are event streams by now.
    let running = post_11(h.address, &[&with_session], &call(1, "slow", json!({})));
    let queued = post_11(h.address, &[&with_session], &call(2, "slow", json!({})));
    assert!(running.is_sse() && queued.is_sse());
    // A 2026-07-28 client that reads JSON only waits for its answer too.
    let modern_call = modern(3, "tools/call", json!({"name": "slow", "arguments": {}}));
    let modern_lines = [
        "Accept: application/json",
        "MCP-Protocol-Version: 2026-07-28",
        "Mcp-Method: tools/call",
        "Mcp-Name: slow",
    ];
    let body = modern_call.to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{}\r\nContent-Type: application/json\r\nContent-Length: {}",
        h.address.port(),
        modern_lines.join("\r\n"),
        body.len()
    );
    let waiting = {
        let address = h.address;
        std::thread::spawn(move || send_raw(address, &head, body.as_bytes()))
    };
    std::thread::sleep(Duration::from_millis(300));

    // The server stops (as `$stop()` or Ctrl-C do: R's loop ends).
    h.stop.store(true, Ordering::SeqCst);

    let (text, ended) = queued.chunks();
    assert!(ended, "the waiting call's stream was cut: {text:?}");
    let answers = messages_in(&text);
    let last = answers.last().expect("an answer");
    assert_eq!(last["id"], 2);
    assert_eq!(last["error"]["code"], -32000);
    assert!(last["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("Server stopping"));
    check_message(Revision::V2025_11_25, last, Some("JSONRPCError"));
    let (text, ended) = running.chunks();
    assert!(ended, "the running call's stream was cut: {text:?}");
    let (text, ended) = get.chunks();
    assert!(ended, "the GET stream was cut: {text:?}");
    let waited = waiting.join().unwrap();
    assert_eq!(waited.status, 200);
    let length: usize = waited.header("content-length").unwrap().parse().unwrap();
    let mut reader = waited.reader;
    let mut answer = vec![0; length];
    reader.read_exact(&mut answer).unwrap();
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["error"]["code"], -32000);
    // Nothing is accepted any more.
    let refused = retry(
        50,
        Duration::from_millis(20),
        || TcpStream::connect(h.address).is_err(),
        |refused| *refused,
    );
    assert!(refused);
}

#[test]
fn sigterm_answers_the_running_call_too_and_r_is_told_to_stop() {
    let h = start(options());
    let session = initialize(h.address, json!({}));
    let with_session = format!("Mcp-Session-Id: {session}");
    let running = post_11(h.address, &[&with_session], &call(1, "slow", json!({})));
    assert!(running.is_sse());
    let listen = post_11(
        h.address,
        &[
            "MCP-Protocol-Version: 2026-07-28",
            "Mcp-Method: subscriptions/listen",
        ],
        &modern(2, "subscriptions/listen", json!({"notifications": {}})),
    );
    assert!(listen.is_sse());
    std::thread::sleep(Duration::from_millis(200));
    (h.sigterm)();
    let (text, ended) = running.chunks();
    assert!(ended, "cut: {text:?}");
    let last = messages_in(&text).pop().expect("an answer");
    assert_eq!(
        (last["id"].clone(), last["error"]["code"].clone()),
        (json!(1), json!(-32000))
    );
    let (text, ended) = listen.chunks();
    assert!(ended, "cut: {text:?}");
    let last = messages_in(&text).pop().expect("an answer");
    assert_eq!(
        (last["id"].clone(), last["error"]["code"].clone()),
        (json!(2), json!(-32000))
    );
    let seen: Vec<Seen> = std::iter::from_fn(|| h.seen.recv_timeout(WAIT).ok())
        .take_while(|s| *s != Seen::Terminated)
        .collect();
    assert!(
        seen.iter().all(|s| matches!(s, Seen::Cancelled(_))),
        "{seen:?}"
    );
}
