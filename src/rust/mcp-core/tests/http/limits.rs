//! Bounds on connections, bodies, sessions and streams, and who makes room
//! when they are reached.

use super::*;

#[test]
fn limits_on_bodies_heads_sessions_and_media_types() {
    let h = start(Options {
        max_body_bytes: 1024,
        max_sessions: 2,
        ..options()
    });
    let big =
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"x".repeat(2000)}});
    assert_eq!(post(h.address, &[], &big).status, 413);
    let long = "y".repeat(100 * 1024);
    assert_eq!(
        send(h.address, "POST", "/mcp", &[("X-Long", &long)], "{}").status,
        431
    );
    let list = modern(1, "tools/list", json!({}));
    assert_eq!(
        post(h.address, &[("Content-Type", "text/plain")], &list).status,
        415
    );
    assert_eq!(
        post(h.address, &[("Accept", "text/html")], &list).status,
        406
    );
    let garbage = send(h.address, "POST", "/mcp", &[], "{not json");
    assert_eq!(garbage.status, 400);
    assert_eq!(garbage.json()["error"]["code"], -32700);
    // Two busy sessions (each with its GET stream open) fill the server.
    let held: Vec<Reply> = (0..2)
        .map(|_| {
            let session = initialize(h.address, json!({}));
            let stream = send(
                h.address,
                "GET",
                "/mcp",
                &[("Mcp-Session-Id", &session)],
                "",
            );
            assert_eq!(stream.status, 200);
            stream
        })
        .collect();
    let third = post(h.address, &[], &initialize_request("2025-11-25", json!({})));
    assert_eq!(third.status, 503);
    assert_eq!(third.header("retry-after"), Some("1"));
    drop(held);
    // The server goes on serving.
    assert_eq!(
        post(h.address, &modern_headers("tools/list", None), &list).status,
        200
    );
}

#[test]
fn idle_connections_make_room_for_a_new_client_oldest_first() {
    // Idle connections would time out only after a minute: the new client
    // is answered (within the 10-s read timeout of `post`) because the
    // ones that have waited longest make room.
    let h = start(Options {
        max_connections: 8,
        idle_timeout: Duration::from_secs(60),
        ..options()
    });
    let mut idle: Vec<TcpStream> = (0..12)
        .map(|_| TcpStream::connect(h.address).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let list = modern(1, "tools/list", json!({}));
    let reply = post(h.address, &modern_headers("tools/list", None), &list);
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"]["tools"][0]["name"], "echo");
    // 12 idle and the client, 8 places: the 5 opened first were closed.
    for (n, stream) in idle.iter_mut().enumerate() {
        let wait = Duration::from_millis(if n < 5 { 2000 } else { 100 });
        assert_eq!(closed_by_server(stream, wait), n < 5, "idle connection {n}");
    }
    // A connection that sent its head is busy, not idle: a stream held
    // open is never closed to make room.
    let mut listen = post(
        h.address,
        &modern_headers("subscriptions/listen", None),
        &modern(2, "subscriptions/listen", json!({"notifications": {}})),
    );
    assert_eq!(listen.status, 200);
    assert!(listen.event().is_some(), "acknowledged");
    let _more: Vec<TcpStream> = (0..10)
        .map(|_| TcpStream::connect(h.address).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let reply = post(h.address, &modern_headers("tools/list", None), &list);
    assert_eq!(reply.status, 200);
    listen
        .reader
        .get_mut()
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut rest = String::new();
    let still_open = matches!(listen.reader.read_line(&mut rest), Err(_) | Ok(1..));
    assert!(still_open, "the listen stream was closed: {rest:?}");
}

#[test]
fn a_body_that_does_not_arrive_in_time_gets_408_and_its_connection_closes() {
    let h = start(Options {
        body_timeout: Duration::from_millis(300),
        ..options()
    });
    // Announces 100 bytes, sends 10.
    let head = head_11(
        h.address,
        "POST",
        &["Content-Type: application/json", "Content-Length: 100"],
    );
    let started = std::time::Instant::now();
    let stalled = send_raw(h.address, &head, b"{\"jsonrpc\"");
    assert_eq!(stalled.status, 408);
    assert_eq!(stalled.header("connection"), Some("close"));
    let seconds = started.elapsed();
    let mut reader = stalled.reader;
    let mut body = String::new();
    reader.read_to_string(&mut body).unwrap();
    assert!(body.contains("Request Timeout"), "{body}");
    assert!(seconds < Duration::from_secs(5), "{seconds:?}");
    // A byte now and then does not keep it open either.
    let mut trickle = TcpStream::connect(h.address).unwrap();
    trickle.set_read_timeout(Some(WAIT)).unwrap();
    trickle
        .write_all(format!("{head}\r\n\r\n").as_bytes())
        .unwrap();
    let mut sent = 0;
    while sent < 100 {
        if trickle.write_all(b" ").is_err() {
            break;
        }
        sent += 1;
        std::thread::sleep(Duration::from_millis(50));
        if sent == 20 {
            break;
        }
    }
    let trickled = read_head(BufReader::new(trickle));
    assert_eq!(trickled.status, 408);
    // A body sent in parts, in time, is read.
    let body = modern(3, "tools/list", json!({})).to_string();
    let (first, second) = body.split_at(10);
    let mut parts = TcpStream::connect(h.address).unwrap();
    parts.set_read_timeout(Some(WAIT)).unwrap();
    let head = format!(
        "{}\r\nMCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/list\r\n\r\n",
        head_11(
            h.address,
            "POST",
            &[
                "Content-Type: application/json",
                &format!("Content-Length: {}", body.len())
            ]
        )
    );
    parts.write_all(head.as_bytes()).unwrap();
    parts.write_all(first.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    parts.write_all(second.as_bytes()).unwrap();
    assert_eq!(read_head(BufReader::new(parts)).status, 200);
}

#[test]
fn out_of_connections_the_body_stalled_longest_makes_room_for_a_new_client() {
    // Bodies would time out only after a minute: the new client gets in
    // because the stalled body sent longest is given up on at once.
    let h = start(Options {
        max_connections: 4,
        body_timeout: Duration::from_secs(60),
        ..options()
    });
    let head = head_11(
        h.address,
        "POST",
        &["Content-Type: application/json", "Content-Length: 100"],
    );
    let stalled: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut stream = TcpStream::connect(h.address).unwrap();
            stream.set_read_timeout(Some(WAIT)).unwrap();
            stream
                .write_all(format!("{head}\r\n\r\n{{\"jsonrpc\"").as_bytes())
                .unwrap();
            std::thread::sleep(Duration::from_millis(20));
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(700));
    let list = modern(1, "tools/list", json!({}));
    let reply = post(h.address, &modern_headers("tools/list", None), &list);
    assert_eq!(reply.status, 200);
    let mut stalled = stalled.into_iter();
    let first = read_head(BufReader::new(stalled.next().unwrap()));
    assert_eq!(first.status, 408);
    // The others still wait for their bodies.
    for mut stream in stalled {
        assert!(!closed_by_server(&mut stream, Duration::from_millis(100)));
    }
}

#[test]
fn streams_beyond_the_stream_limit_are_refused_until_one_ends() {
    let h = start(Options {
        max_streams: 1,
        ..options()
    });
    let held = listen_from(h.address, None, &[]);
    assert_eq!(held.status, 200);
    let refused = listen_from(h.address, Some([127, 0, 0, 2].into()), &[]);
    assert_eq!(refused.status, 503);
    assert!(refused.header("retry-after").is_some());
    // Requests that end with their answer are not streams.
    let list = modern(2, "tools/list", json!({}));
    assert_eq!(
        post(h.address, &modern_headers("tools/list", None), &list).status,
        200
    );
    drop(held);
    let status = retry(
        100,
        Duration::from_millis(50),
        || listen_from(h.address, None, &[]).status,
        |status| *status == 200,
    );
    assert_eq!(status, 200, "the place is free once the stream closed");
}

#[test]
fn a_flood_of_listen_streams_leaves_room_for_requests_and_other_clients() {
    let h = start(Options {
        max_streams: 4,
        max_streams_per_client: 2,
        ..options()
    });
    let session = initialize(h.address, json!({}));
    let ping = json!({"jsonrpc":"2.0","id":7,"method":"ping"});
    let list = modern(2, "tools/list", json!({}));
    let answered = || {
        let pinged = post(h.address, &[("Mcp-Session-Id", &session)], &ping).status;
        let listed = post(h.address, &modern_headers("tools/list", None), &list).status;
        (pinged, listed)
    };
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(listen_from(h.address, None, &[]));
        assert_eq!(held.last().unwrap().status, 200);
    }
    // One client (here, one peer address) holds its share: no more.
    let refused = listen_from(h.address, None, &[]);
    assert_eq!(refused.status, 429);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(answered(), (200, 200));
    // Other clients get the rest, up to the server's limit.
    for source in [[127, 0, 0, 2], [127, 0, 0, 2]] {
        held.push(listen_from(h.address, Some(source.into()), &[]));
        assert_eq!(held.last().unwrap().status, 200);
    }
    let full = listen_from(h.address, Some([127, 0, 0, 3].into()), &[]);
    assert_eq!(full.status, 503);
    assert!(full.header("retry-after").is_some());
    assert_eq!(answered(), (200, 200), "ping is never refused for streams");
    drop(held);
    // With tokens, the share is the token holder's.
    let h = start(Options {
        bearer_tokens: vec!["ann".into(), "bob".into()],
        max_streams_per_client: 1,
        ..options()
    });
    let ann = listen_from(h.address, None, &[("Authorization", "Bearer ann")]);
    assert_eq!(ann.status, 200);
    let again = listen_from(h.address, None, &[("Authorization", "Bearer ann")]);
    assert_eq!(again.status, 429);
    let bob = listen_from(h.address, None, &[("Authorization", "Bearer bob")]);
    assert_eq!(bob.status, 200);
}

#[test]
fn a_full_server_ends_the_least_recently_used_idle_session() {
    let h = start(Options {
        max_sessions: 2,
        ..options()
    });
    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
    let status_in = |session: &str| post(h.address, &[("Mcp-Session-Id", session)], &list).status;
    let first = initialize(h.address, json!({}));
    let second = initialize(h.address, json!({}));
    assert_eq!(status_in(&first), 200, "the first is used last");
    let third = initialize(h.address, json!({}));
    assert_eq!(status_in(&second), 404, "the least recently used went");
    assert_eq!(status_in(&first), 200);
    assert_eq!(status_in(&third), 200);
    // Busy sessions (a GET stream open) are not ended: then 503, with when
    // to retry.
    let streams: Vec<Reply> = [&first, &third]
        .iter()
        .map(|s| send(h.address, "GET", "/mcp", &[("Mcp-Session-Id", s)], ""))
        .collect();
    assert!(streams.iter().all(|s| s.status == 200));
    let refused = post(h.address, &[], &initialize_request("2025-11-25", json!({})));
    assert_eq!(refused.status, 503);
    assert_eq!(refused.header("retry-after"), Some("1"));
    drop(streams);
    // A token holder keeps its share of the sessions; one more ends its own
    // least recently used idle one, not another holder's.
    let h = start(Options {
        bearer_tokens: vec!["ann".into(), "bob".into()],
        max_sessions_per_client: 2,
        ..options()
    });
    let init_as = |token: &str| {
        let reply = post(
            h.address,
            &[("Authorization", token)],
            &initialize_request("2025-11-25", json!({})),
        );
        (
            reply.status,
            reply.header("mcp-session-id").map(str::to_string),
        )
    };
    let used_by = |token: &str, session: &str| {
        post(
            h.address,
            &[("Authorization", token), ("Mcp-Session-Id", session)],
            &list,
        )
        .status
    };
    let (_, bob) = init_as("Bearer bob");
    let bob = bob.unwrap();
    let (_, ann1) = init_as("Bearer ann");
    let (_, ann2) = init_as("Bearer ann");
    let (ann1, ann2) = (ann1.unwrap(), ann2.unwrap());
    let (status, ann3) = init_as("Bearer ann");
    assert_eq!(status, 200);
    assert_eq!(used_by("Bearer ann", &ann1), 404, "ann's oldest went");
    assert_eq!(used_by("Bearer bob", &bob), 200, "bob's stayed");
    let ann3 = ann3.unwrap();
    let busy: Vec<Reply> = [&ann2, &ann3]
        .iter()
        .map(|s| {
            send(
                h.address,
                "GET",
                "/mcp",
                &[("Authorization", "Bearer ann"), ("Mcp-Session-Id", s)],
                "",
            )
        })
        .collect();
    assert!(busy.iter().all(|s| s.status == 200));
    let (status, _) = init_as("Bearer ann");
    assert_eq!(status, 429, "ann's sessions are all busy");
    assert_eq!(init_as("Bearer bob").0, 200);
}
