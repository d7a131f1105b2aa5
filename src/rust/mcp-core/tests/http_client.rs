//! The Streamable HTTP client and the stdio bridge against a scripted HTTP
//! server: a real hyper server on a loopback port that records every
//! request and answers each MCP method the way the transport allows (JSON,
//! event streams, 202, error statuses, a stream closed early).

mod common;

use bytes::Bytes;
use common::{initialize_request, initialized_notification};
use hyper::body::{Body, Frame};
use hyper::{Request, Response};
use mcp_core::client::http_client::{HttpClient, Options, Received};
use mcp_core::transport::bridge::{self, End};
use mcp_core::transport::session_bridge::{self, Polled, SessionBridge};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::convert::Infallible;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::FromRawFd;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// A response body fed by a channel, so a handler can stream events and
/// learn that the client went away (its sends then fail).
struct ChannelBody(mpsc::Receiver<Bytes>);

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0
            .poll_recv(cx)
            .map(|chunk| chunk.map(|b| Ok(Frame::data(b))))
    }
}

#[derive(Debug, Clone)]
struct Seen {
    method: String,
    headers: HashMap<String, String>,
    body: Value,
}

#[derive(Default)]
struct Log {
    seen: Vec<Seen>,
    /// Events of the scripted server: "cancelled <id>" when a client closed a
    /// stream the server was still writing to.
    events: Vec<String>,
}

struct TestServer {
    url: String,
    log: Arc<Mutex<Log>>,
    _runtime: tokio::runtime::Runtime,
}

impl TestServer {
    fn start() -> TestServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let log = Arc::new(Mutex::new(Log::default()));
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let accepted = log.clone();
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let log = accepted.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| handle(req, log.clone()));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        TestServer {
            url,
            log,
            _runtime: runtime,
        }
    }

    fn seen(&self) -> Vec<Seen> {
        self.log.lock().unwrap().seen.clone()
    }

    /// Waits (generously) until `test` holds for the log.
    fn wait_for(&self, what: &str, test: impl Fn(&Log) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !test(&self.log.lock().unwrap()) {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn respond(status: u16, headers: &[(&str, &str)], chunks: Vec<String>) -> Response<ChannelBody> {
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(async move {
        for chunk in chunks {
            if tx.send(Bytes::from(chunk)).await.is_err() {
                return;
            }
        }
    });
    let mut builder = Response::builder().status(status);
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    builder.body(ChannelBody(rx)).unwrap()
}

fn json_answer(message: Value, session: Option<&str>) -> Response<ChannelBody> {
    let mut headers = vec![("content-type", "application/json")];
    if let Some(s) = session {
        headers.push(("mcp-session-id", s));
    }
    // Pretty-printed on purpose: the client must pass it on as one line.
    respond(
        200,
        &headers,
        vec![serde_json::to_string_pretty(&message).unwrap()],
    )
}

fn event(id: Option<&str>, message: &Value) -> String {
    let id = id.map(|i| format!("id: {i}\n")).unwrap_or_default();
    format!("{id}event: message\ndata: {message}\n\n")
}

fn sse(chunks: Vec<String>) -> Response<ChannelBody> {
    respond(200, &[("content-type", "text/event-stream")], chunks)
}

/// A stream that stays open, pinging, until the client goes away.
fn held_stream(
    log: Arc<Mutex<Log>>,
    first: Vec<String>,
    on_close: String,
) -> Response<ChannelBody> {
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(async move {
        for chunk in first {
            let _ = tx.send(Bytes::from(chunk)).await;
        }
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            if tx.send(Bytes::from_static(b": ping\n\n")).await.is_err() {
                log.lock().unwrap().events.push(on_close);
                return;
            }
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(ChannelBody(rx))
        .unwrap()
}

async fn handle(
    req: Request<hyper::body::Incoming>,
    log: Arc<Mutex<Log>>,
) -> Result<Response<ChannelBody>, Infallible> {
    use http_body_util::BodyExt;
    let method = req.method().to_string();
    let headers: HashMap<String, String> = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                v.to_str().unwrap_or("?").to_string(),
            )
        })
        .collect();
    let bytes = req.into_body().collect().await.unwrap().to_bytes();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    log.lock().unwrap().seen.push(Seen {
        method: method.clone(),
        headers: headers.clone(),
        body: body.clone(),
    });
    let session_ok = headers.get("mcp-session-id").map(String::as_str) == Some("session-1");
    Ok(match method.as_str() {
        "DELETE" => respond(if session_ok { 200 } else { 404 }, &[], vec![]),
        "GET" if headers.contains_key("last-event-id") => {
            // The rest of a POST stream that was closed early.
            sse(vec![event(
                Some("s1:2"),
                &json!({"jsonrpc":"2.0","id":"slow","result":{"resumed":true}}),
            )])
        }
        "GET" => held_stream(
            log.clone(),
            vec![event(
                Some("g:1"),
                &json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"}),
            )],
            "GET closed".into(),
        ),
        _ => {
            if body["method"] == "initialize" {
                // A slow handshake: messages sent after `initialize` must
                // still wait for its session id, not overtake it.
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            post(&body, &headers, session_ok, log)
        }
    })
}

fn post(
    body: &Value,
    headers: &HashMap<String, String>,
    session_ok: bool,
    log: Arc<Mutex<Log>>,
) -> Response<ChannelBody> {
    let id = body["id"].clone();
    let method = body["method"].as_str().unwrap_or("");
    let modern = headers.contains_key("mcp-method");
    if body.is_null() {
        let error =
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}});
        return respond(
            400,
            &[("content-type", "application/json")],
            vec![error.to_string()],
        );
    }
    if body.get("method").is_none() || method.starts_with("notifications/") {
        return respond(202, &[], vec![]);
    }
    if method == "initialize" {
        let result = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "scripted", "version": "1"}});
        return json_answer(
            json!({"jsonrpc":"2.0","id":id,"result":result}),
            Some("session-1"),
        );
    }
    if !modern && !session_ok {
        return respond(
            400,
            &[("content-type", "application/json")],
            vec![json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: missing session"}}).to_string()],
        );
    }
    match method {
        "tools/list" => json_answer(json!({"jsonrpc":"2.0","id":id,"result":{"tools":[]}}), None),
        "tools/call" if body["params"]["name"] == "chatty" => sse(vec![
            ": priming\n\n".into(),
            event(
                None,
                &json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":50}}),
            ),
            event(
                None,
                &json!({"jsonrpc":"2.0","id":"ask","method":"elicitation/create","params":{"message":"Name?"}}),
            ),
            // Split across chunks, as TCP may deliver it.
            "data: {\"jsonrpc\":\"2.0\",\"id\":".into(),
            format!("{id},\"result\":{{\"content\":[]}}}}\r\n\r\n"),
        ]),
        "tools/call" if body["params"]["name"] == "forever" => {
            held_stream(log, vec![], format!("cancelled {id}"))
        }
        "tools/call" if body["params"]["name"] == "polled" => {
            // 2025-11-25 polling: a priming id, then the stream ends.
            sse(vec!["id: s1:1\nretry: 10\ndata:\n\n".into()])
        }
        "tools/call" if body["params"]["name"] == "unauthorized" => respond(
            401,
            &[(
                "www-authenticate",
                "Bearer resource_metadata=\"http://x/.well-known\"",
            )],
            vec!["no".into()],
        ),
        "tools/call" => respond(
            500,
            &[("content-type", "text/plain")],
            vec!["it broke".into()],
        ),
        _ => json_answer(
            json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"Method not found"}}),
            None,
        ),
    }
}

fn next(client: &HttpClient) -> Value {
    match client.receive(Duration::from_secs(10)) {
        Received::Message(line) => {
            assert!(!line.contains('\n'), "one line per message: {line}");
            serde_json::from_str(&line).unwrap()
        }
        other => panic!("expected a message, got {other:?}"),
    }
}

fn send(client: &HttpClient, message: Value) {
    client.send(message.to_string().as_bytes()).unwrap();
}

/// A client of the scripted server that opens no GET stream.
fn client_without_listening(server: &TestServer) -> HttpClient {
    let options = Options {
        listen: false,
        ..Options::default()
    };
    HttpClient::new(&server.url, options).unwrap()
}

/// A bridge that takes lines of up to 4 KiB.
fn bridge_options() -> bridge::Options {
    bridge::Options {
        max_message_size: 4096,
        grace: Duration::from_secs(10),
        close_timeout: Duration::from_secs(5),
    }
}

fn initialize(client: &HttpClient) {
    send(client, initialize_request("2025-11-25", json!({})));
    assert_eq!(next(client)["result"]["serverInfo"]["name"], "scripted");
    send(client, initialized_notification());
}

#[test]
fn the_session_is_relayed_and_ended_with_delete() {
    let server = TestServer::start();
    let client = HttpClient::new(
        &server.url,
        Options {
            bearer_token: Some("s3cret".into()),
            ..Options::default()
        },
    )
    .unwrap();
    initialize(&client);
    assert_eq!(client.session_id().as_deref(), Some("session-1"));
    // The GET stream opens after `initialized` and its messages come through.
    assert_eq!(next(&client)["method"], "notifications/tools/list_changed");
    send(
        &client,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
    );
    assert_eq!(next(&client)["result"]["tools"], json!([]));
    client.close(Duration::from_secs(5));
    server.wait_for("the GET stream to close", |log| {
        log.events.contains(&"GET closed".to_string())
    });
    let seen = server.seen();
    let posts: Vec<&Seen> = seen.iter().filter(|s| s.method == "POST").collect();
    for s in &posts {
        assert_eq!(s.headers["accept"], "application/json, text/event-stream");
        assert_eq!(s.headers["content-type"], "application/json");
        assert_eq!(s.headers["authorization"], "Bearer s3cret");
    }
    assert!(
        !posts[0].headers.contains_key("mcp-session-id"),
        "initialize carries no session"
    );
    for s in &posts[1..] {
        assert_eq!(s.headers["mcp-session-id"], "session-1");
        assert_eq!(s.headers["mcp-protocol-version"], "2025-11-25");
    }
    let get = seen
        .iter()
        .find(|s| s.method == "GET")
        .expect("a GET stream");
    assert_eq!(get.headers["accept"], "text/event-stream");
    assert_eq!(get.headers["mcp-session-id"], "session-1");
    let delete = seen
        .iter()
        .find(|s| s.method == "DELETE")
        .expect("a DELETE");
    assert_eq!(delete.headers["mcp-session-id"], "session-1");
    assert_eq!(client.receive(Duration::from_millis(10)), Received::Closed);
    assert!(client.send(b"{}").is_err());
}

#[test]
fn event_streams_deliver_every_message_as_one_line() {
    let server = TestServer::start();
    let client = client_without_listening(&server);
    initialize(&client);
    send(
        &client,
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chatty"}}),
    );
    assert_eq!(next(&client)["method"], "notifications/progress");
    let question = next(&client);
    assert_eq!(question["method"], "elicitation/create");
    assert_eq!(next(&client)["id"], 2);
    // The answer to the server's question goes back as a POST (202).
    send(
        &client,
        json!({"jsonrpc":"2.0","id":"ask","result":{"action":"decline"}}),
    );
    assert!(client.wait_idle(Duration::from_secs(10)));
    // Found by id, not taken as the last one seen: the POST of
    // notifications/initialized runs on its own connection and may reach
    // the server after the answer when the machine is loaded.
    let seen = server.seen();
    let answer = seen
        .iter()
        .find(|s| s.body["id"] == "ask")
        .expect("the answer to the server's question was posted");
    assert_eq!(answer.method, "POST");
    assert_eq!(answer.headers["mcp-session-id"], "session-1");
    assert!(client.take_problems().is_empty());
}

#[test]
fn http_failures_become_errors_of_the_request_that_met_them() {
    let server = TestServer::start();
    let client = client_without_listening(&server);
    // No session yet: the server's JSON-RPC error (id null) answers id 5.
    send(
        &client,
        json!({"jsonrpc":"2.0","id":5,"method":"tools/list"}),
    );
    let answer = next(&client);
    assert_eq!(answer["id"], 5);
    assert_eq!(answer["error"]["code"], -32600);
    initialize(&client);
    send(
        &client,
        json!({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"broken"}}),
    );
    let answer = next(&client);
    assert_eq!(answer["id"], 6);
    assert_eq!(answer["error"]["code"], -32000);
    assert_eq!(answer["error"]["data"]["httpStatus"], 500);
    let text = answer["error"]["message"].as_str().unwrap();
    assert!(
        text.contains("HTTP 500") && text.contains("it broke"),
        "{text}"
    );
    send(
        &client,
        json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"unauthorized"}}),
    );
    let text = next(&client)["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.contains("wants a bearer token") && text.contains("resource_metadata"),
        "{text}"
    );
    // Text that is no message: the server's parse error, with a null id.
    client.send(b"{not json").unwrap();
    let answer = next(&client);
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32700);
    // A server that is not there.
    let gone = HttpClient::new("http://127.0.0.1:9/mcp", Options::default()).unwrap();
    send(&gone, json!({"jsonrpc":"2.0","id":"x","method":"ping"}));
    let answer = next(&gone);
    assert_eq!(answer["id"], "x");
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("could not reach"));
    // A notification that fails is a problem to report, not an answer.
    send(&gone, initialized_notification());
    assert!(gone.wait_idle(Duration::from_secs(10)));
    assert_eq!(gone.take_problems().len(), 1);
}

#[test]
fn a_stream_closed_before_its_answer_is_resumed_with_last_event_id() {
    let server = TestServer::start();
    let client = client_without_listening(&server);
    initialize(&client);
    send(
        &client,
        json!({"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"polled"}}),
    );
    assert_eq!(next(&client)["result"]["resumed"], true);
    let seen = server.seen();
    let get = seen
        .iter()
        .find(|s| s.method == "GET")
        .expect("a resuming GET");
    assert_eq!(get.headers["last-event-id"], "s1:1");
}

#[test]
fn modern_requests_carry_routing_headers_and_are_cancelled_by_closing_their_stream() {
    let server = TestServer::start();
    let client = HttpClient::new(&server.url, Options::default()).unwrap();
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}});
    send(
        &client,
        json!({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"forever","arguments":{},"_meta":meta}}),
    );
    server.wait_for("the call to arrive", |log| log.seen.len() == 1);
    send(
        &client,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}),
    );
    server.wait_for("the stream to close", |log| {
        log.events.contains(&"cancelled 9".to_string())
    });
    assert!(client.wait_idle(Duration::from_secs(10)));
    let seen = server.seen();
    assert_eq!(seen.len(), 1, "the cancellation itself is not posted");
    let h = &seen[0].headers;
    assert_eq!(h["mcp-protocol-version"], "2026-07-28");
    assert_eq!(h["mcp-method"], "tools/call");
    assert_eq!(h["mcp-name"], "forever");
    assert!(!h.contains_key("mcp-session-id"));
    // Nothing is answered for a cancelled request.
    assert_eq!(
        client.receive(Duration::from_millis(200)),
        Received::Timeout
    );
}

fn pipe() -> (File, File) {
    let mut fds = [0; 2];
    // SAFETY: two valid descriptors are written into `fds`.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: fresh descriptors, each owned by one File.
    unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
}

#[test]
fn the_bridge_relays_lines_both_ways_and_ends_the_session_at_end_of_input() {
    let server = TestServer::start();
    let client = Arc::new(client_without_listening(&server));
    let (bridge_in, mut client_out) = pipe();
    let (client_in, bridge_out) = pipe();
    let options = bridge_options();
    let running = std::thread::spawn(move || {
        bridge::run(
            client,
            bridge_in,
            bridge_out,
            options,
            || false,
            |p| eprintln!("{p}"),
        )
    });
    let lines = [
        initialize_request("2025-11-25", json!({})).to_string(),
        initialized_notification().to_string(),
        String::new(),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chatty"}})
            .to_string(),
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{"pad":"{}"}}}}"#,
            "x".repeat(5000)
        ),
    ];
    writeln!(client_out, "{}", lines.join("\n")).unwrap();
    drop(client_out); // end of input: the bridge finishes, then ends the session
    let end = running.join().unwrap();
    assert_eq!(end, End::InputEnded { unanswered: 0 });
    let got: Vec<Value> = BufReader::new(client_in)
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    let ids: Vec<String> = got
        .iter()
        .filter(|m| m.get("method").is_none())
        .map(|m| m["id"].to_string())
        .collect();
    assert!(
        ids.contains(&"0".into()) && ids.contains(&"2".into()),
        "{got:?}"
    );
    let too_long = got
        .iter()
        .find(|m| m["id"] == 3)
        .expect("an answer for the oversized line");
    assert_eq!(too_long["error"]["code"], -32600);
    assert!(got.iter().any(|m| m["method"] == "elicitation/create"));
    let seen = server.seen();
    assert_eq!(seen.last().unwrap().method, "DELETE");
    assert!(
        seen.iter().all(|s| s.body["id"] != 3),
        "the oversized line is never sent"
    );
}

#[test]
fn the_bridge_stops_at_once_when_its_output_is_closed() {
    let server = TestServer::start();
    let client = Arc::new(client_without_listening(&server));
    let (bridge_in, mut client_out) = pipe();
    let (client_in, bridge_out) = pipe();
    drop(client_in);
    let options = bridge_options();
    let running = std::thread::spawn(move || {
        bridge::run(client, bridge_in, bridge_out, options, || false, |_| {})
    });
    writeln!(
        client_out,
        "{}",
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}})
    )
    .unwrap();
    assert_eq!(running.join().unwrap(), End::OutputClosed);
    assert_eq!(server.seen().last().unwrap().method, "DELETE");
}

// ---- The session bridge (`mcp_bridge()` without a URL) -----------------------

fn session_target(server: &TestServer) -> session_bridge::Target {
    session_bridge::Target {
        url: server.url.clone(),
        options: Options {
            listen: false,
            ..Options::default()
        },
    }
}

fn read_message(lines: &mut impl Iterator<Item = std::io::Result<String>>) -> Value {
    serde_json::from_str(&lines.next().expect("a line").unwrap()).unwrap()
}

/// Polls until the bridge surfaces something other than "running".
fn poll_until(bridge: &mut SessionBridge) -> Polled {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match bridge.poll(Duration::from_millis(50)) {
            Polled::Running => assert!(Instant::now() < deadline, "nothing came"),
            other => return other,
        }
    }
}

#[test]
fn the_session_bridge_answers_its_own_tools_and_switches_sessions_as_the_client_started() {
    let first = TestServer::start();
    let second = TestServer::start();
    let (bridge_in, mut client_out) = pipe();
    let (client_in, bridge_out) = pipe();
    let local = vec![json!({"name": "select_r_session", "inputSchema": {"type": "object"}})];
    let options = session_bridge::Options {
        max_message_size: 4096,
        switch_timeout: Duration::from_secs(10),
        close_timeout: Duration::from_secs(5),
        note: "Reached through the bridge.".into(),
    };
    let mut bridge = SessionBridge::start(
        bridge_in,
        bridge_out,
        session_target(&first),
        local,
        options,
    )
    .unwrap();
    let mut lines = BufReader::new(client_in).lines();
    let initialize = initialize_request("2025-11-25", json!({"roots": {}}));
    writeln!(client_out, "{initialize}\n{}", initialized_notification()).unwrap();
    let started = read_message(&mut lines);
    assert_eq!(
        started["result"]["instructions"],
        "Reached through the bridge."
    );
    assert_eq!(
        started["result"]["capabilities"]["tools"]["listChanged"],
        true
    );
    writeln!(
        client_out,
        r#"{{"jsonrpc":"2.0","id":"l","method":"tools/list"}}"#
    )
    .unwrap();
    let listed = read_message(&mut lines);
    assert_eq!(listed["result"]["tools"][0]["name"], "select_r_session");

    // A local tool's call is the caller's, never the session's.
    let call = json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"select_r_session","arguments":{"pid":2}}});
    writeln!(client_out, "{call}").unwrap();
    let Polled::Call {
        id,
        name,
        arguments,
    } = poll_until(&mut bridge)
    else {
        panic!("expected the local call");
    };
    assert_eq!((id.as_str(), name.as_str()), ("7", "select_r_session"));
    assert_eq!(arguments, json!({"pid": 2}));
    let switched = bridge.switch(session_target(&second)).unwrap();
    // The same (empty) tools on both: no change to announce.
    assert!(!switched.tools_changed);
    bridge.answer(&id, "Switched.", false);
    let answer = read_message(&mut lines);
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["content"][0]["text"], "Switched.");
    assert_eq!(answer["result"]["isError"], false);
    assert!(answer["result"].get("resultType").is_none());
    // In the 2026-07-28 envelope, the answer says it is complete.
    let modern = json!({"jsonrpc":"2.0","id":"m","method":"tools/call","params":{"name":"select_r_session",
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}});
    writeln!(client_out, "{modern}").unwrap();
    let Polled::Call {
        id: modern_id,
        arguments,
        ..
    } = poll_until(&mut bridge)
    else {
        panic!("expected the local call");
    };
    assert_eq!(arguments, json!({}));
    bridge.answer(&modern_id, "Listed.", false);
    let answer = read_message(&mut lines);
    assert_eq!(answer["id"], "m");
    assert_eq!(answer["result"]["resultType"], "complete");
    assert!(first
        .seen()
        .iter()
        .all(|s| s.body["method"] != "tools/call"));

    // The new session was started with the client's own initialize, and
    // gets what follows.
    let replayed = second.seen();
    let init = replayed
        .iter()
        .find(|s| s.body["method"] == "initialize")
        .unwrap();
    assert_eq!(init.body["params"], initialize["params"]);
    assert!(replayed
        .iter()
        .any(|s| s.body["method"] == "notifications/initialized"));
    writeln!(
        client_out,
        r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{"name":"other"}}}}"#
    )
    .unwrap();
    let failed = read_message(&mut lines);
    assert_eq!(failed["id"], 8);
    assert!(second.seen().iter().any(|s| s.body["id"] == 8));
    assert!(first.seen().iter().all(|s| s.body["id"] != 8));
    // The session left has nothing in flight: its HTTP session is ended.
    first.wait_for("the old session's DELETE", |log| {
        log.seen.iter().any(|s| s.method == "DELETE")
    });

    // A session that cannot be reached: the client stays where it was.
    let refused = bridge.switch(session_bridge::Target {
        url: "http://127.0.0.1:1/mcp".into(),
        options: Options::default(),
    });
    assert!(refused.is_err());
    writeln!(
        client_out,
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"other"}}}}"#
    )
    .unwrap();
    assert_eq!(read_message(&mut lines)["id"], 9);
    assert!(second.seen().iter().any(|s| s.body["id"] == 9));

    drop(client_out);
    assert!(matches!(
        poll_until(&mut bridge),
        Polled::InputEnded { unanswered: 0 }
    ));
    bridge.close();
    second.wait_for("the new session's DELETE", |log| {
        log.seen.iter().any(|s| s.method == "DELETE")
    });
}
