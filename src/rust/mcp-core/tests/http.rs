//! The Streamable HTTP server on a real socket, driven with raw HTTP, with a
//! stand-in for R's main thread that answers the tool calls.

mod common;

use common::{check_message, done_text, initialize_request, initialized_notification, retry};
use mcp_core::engine::board::Interrupter;
use mcp_core::engine::registry::{Entry, Registry};
use mcp_core::engine::{Config, InputMode, Outcome, Progress};
use mcp_core::protocol::revision::Revision;
use mcp_core::protocol::tool::ToolDef;
use mcp_core::transport::http::security::Allowed;
use mcp_core::transport::http::Options;
use mcp_core::transport::server::{Polled, Server};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

const MODERN: &str = "2026-07-28";
const WAIT: Duration = Duration::from_secs(10);

fn tool(name: &str, schema: Value) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: Some(format!("the {name} tool")),
        input_schema: schema,
        ..ToolDef::default()
    }
}

fn tools() -> Vec<ToolDef> {
    let empty = json!({"type": "object", "properties": {}});
    vec![
        tool(
            "echo",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        ),
        tool("slow", empty.clone()),
        tool("progress", empty.clone()),
        tool("ask", empty.clone()),
        tool("reconnect", empty.clone()),
        tool(
            "weather",
            json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}),
        ),
        ToolDef {
            task_support: mcp_core::protocol::tool::TaskSupport::Required,
            ..tool("task_only", empty.clone())
        },
        ToolDef {
            task_support: mcp_core::protocol::tool::TaskSupport::Required,
            ..tool("task_slow", empty.clone())
        },
        ToolDef {
            task_support: mcp_core::protocol::tool::TaskSupport::Optional,
            ..tool("task_ask", empty.clone())
        },
    ]
}

/// What the stand-in for R saw.
#[derive(Debug, PartialEq)]
enum Seen {
    Cancelled(String),
    /// `poll` said SIGTERM stopped serving.
    Terminated,
}

/// A server on a free port, and the thread standing in for R.
struct Harness {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    /// What SIGTERM would do.
    sigterm: mcp_core::transport::signals::Callback,
    r_thread: Option<JoinHandle<()>>,
    seen: mpsc::Receiver<Seen>,
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.r_thread.take() {
            let _ = t.join();
        }
    }
}

fn options() -> Options {
    Options {
        port: 0,
        stream_after: Duration::from_millis(100),
        keepalive: Duration::from_millis(100),
        ..Options::default()
    }
}

fn start(options: Options) -> Harness {
    start_with(options, Registry::new(tools()).unwrap())
}

/// The test tools, a `change` tool and, if `added`, an `added` one; then
/// the handler of one resource, `test://r`. Keys start at `key_base`.
fn changing_registry(added: bool, key_base: usize) -> Registry {
    let empty = json!({"type": "object", "properties": {}});
    let mut defs = tools();
    defs.push(tool("change", empty.clone()));
    if added {
        defs.push(tool("added", empty.clone()));
    }
    let handlers_from = defs.len();
    defs.push(tool("read-r", json!({"type": "object"})));
    let catalog = json!({"handlersFrom": handlers_from,
        "resources": [{"uri": "test://r", "name": "r", "handler": handlers_from}]});
    let entries = defs
        .into_iter()
        .enumerate()
        .map(|(i, def)| Entry::New {
            key: key_base + i,
            def,
        })
        .collect();
    Registry::build(entries, Some(&catalog.to_string()), None).unwrap()
}

fn start_with(options: Options, registry: Registry) -> Harness {
    let server = Server::start_http(
        Config::default(),
        registry,
        options,
        Interrupter::new(|| {}, || {}),
    )
    .expect("the server starts");
    let address = server.http_address().unwrap();
    let sigterm = server.sigterm_action();
    let stop = Arc::new(AtomicBool::new(false));
    let (seen_tx, seen) = mpsc::channel();
    let stopping = stop.clone();
    let r_thread = std::thread::spawn(move || stand_in_for_r(server, stopping, seen_tx));
    Harness {
        address,
        stop,
        sigterm,
        r_thread: Some(r_thread),
        seen,
    }
}

/// Runs tool calls one at a time, as R does, until told to stop.
fn stand_in_for_r(mut server: Server, stop: Arc<AtomicBool>, seen: mpsc::Sender<Seen>) {
    while !stop.load(Ordering::SeqCst) {
        let job = match server.poll(Duration::from_millis(50), Duration::from_millis(10), || {
            false
        }) {
            Polled::Job(job) => job,
            Polled::Idle => continue,
            Polled::Terminated => {
                let _ = seen.send(Seen::Terminated);
                break;
            }
            other => panic!("unexpected {other:?}"),
        };
        let name = job.registry.tool(job.tool).def.name.clone();
        let outcome = match name.as_str() {
            "echo" => done_text(&Value::Object(job.arguments.clone()).to_string()),
            "slow" | "task_slow" => {
                // Cancelled by its client, or interrupted as the server stops.
                while !server.is_cancelled(job.id)
                    && server.interrupt_reason().is_none()
                    && !stop.load(Ordering::SeqCst)
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                let _ = seen.send(Seen::Cancelled(job.context.request_id.to_string()));
                Outcome::Cancelled
            }
            "progress" => {
                for step in [1.0, 2.0] {
                    let update = Progress {
                        progress: step,
                        total: Some(2.0),
                        message: None,
                    };
                    server.progress(job.id, update);
                    std::thread::sleep(Duration::from_millis(60));
                }
                done_text("progressed")
            }
            "ask" => {
                let request = json!({"method": "elicitation/create", "params": {
                    "message": "Your name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}});
                match (&job.context.input, job.context.answers.get("name")) {
                    (_, Some(answer)) => done_text(&format!(
                        "Hello, {}!",
                        answer["content"]["name"].as_str().unwrap_or("?")
                    )),
                    (InputMode::Retry, None) => Outcome::InputRequired {
                        key: "name".into(),
                        request,
                    },
                    (InputMode::Ask, None) => {
                        let answer = server
                            .ask(job.id, "name".into(), request)
                            .recv_timeout(WAIT);
                        match answer {
                            Ok(Ok(a)) => done_text(&format!(
                                "Hello, {}!",
                                a["content"]["name"].as_str().unwrap_or("?")
                            )),
                            other => done_text(&format!("no answer: {other:?}")),
                        }
                    }
                    (mode, None) => done_text(&format!("cannot ask: {mode:?}")),
                }
            }
            "check-token" => check_token(&server, &job),
            "change" => {
                // As R's mcp_add() and mcp_resource_updated() in a tool.
                server.change(changing_registry(true, 1000), true);
                server.resource_updated("test://r");
                done_text("changed")
            }
            "reconnect" => {
                // The 2025-11-25 polling pattern: the connection goes, the
                // call goes on, its client comes back for the rest.
                let closed = server.close_stream(job.id);
                std::thread::sleep(Duration::from_millis(150));
                done_text(&format!("closed: {closed}"))
            }
            "task_ask" => {
                // Two questions at once; the answer comes when both are in.
                let question = |text: &str| {
                    json!({"method": "elicitation/create", "params": {"message": text,
                        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}})
                };
                let asked = vec![
                    ("first".to_string(), question("First name?")),
                    ("last".to_string(), question("Last name?")),
                ];
                match server.ask_all(job.id, asked).recv_timeout(WAIT) {
                    Ok(Ok(a)) => done_text(&format!(
                        "Hello, {} {}!",
                        a["first"]["content"]["name"].as_str().unwrap_or("?"),
                        a["last"]["content"]["name"].as_str().unwrap_or("?")
                    )),
                    other => done_text(&format!("no answer: {other:?}")),
                }
            }
            _ => done_text("ok"),
        };
        server.complete(job.id, outcome);
    }
    server.stop();
}

/// The stand-in for an R function that checks bearer tokens: "good" is
/// ann's (known at once), "new-*" tokens are valid (looked up in 200 ms),
/// "hang-*" never answer (until interrupted), others are refused after a
/// 200-ms lookup.
fn check_token(server: &Server, job: &mcp_core::engine::Job) -> Outcome {
    let token = job.arguments["token"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let verdict = |allow: bool| {
        let structured = if token == "good" {
            json!({"allow": true, "identity": {"user": "ann"}})
        } else {
            json!({"allow": allow})
        };
        Outcome::Done(mcp_core::engine::result::ToolResult {
            structured: Some(serde_json::value::to_raw_value(&structured).unwrap()),
            ..common::text_result("checked")
        })
    };
    if token == "good" {
        return verdict(true);
    }
    if token.starts_with("hang-") {
        loop {
            if let Some((running, mcp_core::engine::board::Interrupt::Timeout(limit))) =
                server.interrupt_reason()
            {
                if running == job.id {
                    return Outcome::TimedOut(limit);
                }
            }
            if server.is_cancelled(job.id) {
                return Outcome::Cancelled;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    std::thread::sleep(Duration::from_millis(200));
    verdict(token.starts_with("new-"))
}

/// One response, read to its end (HTTP/1.0: the body ends with the connection).
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn is_sse(&self) -> bool {
        self.header("content-type") == Some("text/event-stream")
    }

    fn body(mut self) -> String {
        let mut body = String::new();
        self.reader.read_to_string(&mut body).unwrap();
        body
    }

    /// The body as one JSON message.
    fn json(self) -> Value {
        let body = self.body();
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
    }

    /// The next SSE event's message, skipping comments; `None` at the end.
    /// Every `data:` line must hold one whole message on one line.
    fn event(&mut self) -> Option<Value> {
        let mut data = None;
        loop {
            let mut line = String::new();
            if self.reader.read_line(&mut line).unwrap() == 0 {
                return data;
            }
            let line = line.trim_end_matches('\n');
            if line.is_empty() {
                if data.is_some() {
                    return data;
                }
                continue;
            }
            if let Some(text) = line.strip_prefix("data: ") {
                assert!(data.is_none(), "one data line per event");
                data = Some(
                    serde_json::from_str(text)
                        .unwrap_or_else(|e| panic!("data line not JSON ({e}): {text}")),
                );
            }
        }
    }

    /// Messages of the event stream up to and including the response.
    fn events_until_response(&mut self) -> Vec<Value> {
        let mut events = Vec::new();
        while let Some(e) = self.event() {
            let done = e.get("result").is_some() || e.get("error").is_some();
            events.push(e);
            if done {
                break;
            }
        }
        events
    }
}

fn send(
    address: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Reply {
    send_from(None, address, method, path, headers, body)
}

/// A connection from `source` (another loopback address is another peer).
fn connect_from(source: Option<IpAddr>, address: SocketAddr) -> TcpStream {
    let Some(source) = source else {
        return TcpStream::connect(address).unwrap();
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let stream = runtime
        .block_on(async {
            let socket = tokio::net::TcpSocket::new_v4()?;
            socket.bind(SocketAddr::new(source, 0))?;
            socket.connect(address).await
        })
        .unwrap()
        .into_std()
        .unwrap();
    stream.set_nonblocking(false).unwrap();
    stream
}

fn send_from(
    source: Option<IpAddr>,
    address: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Reply {
    let mut stream = connect_from(source, address);
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let mut head = format!("{method} {path} HTTP/1.0\r\n");
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    if !has("host") {
        head.push_str(&format!("Host: 127.0.0.1:{}\r\n", address.port()));
    }
    if !has("accept") {
        head.push_str("Accept: application/json, text/event-stream\r\n");
    }
    if !has("content-type") && !body.is_empty() {
        head.push_str("Content-Type: application/json\r\n");
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    read_head(BufReader::new(stream))
}

fn post(address: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Reply {
    send(address, "POST", "/mcp", headers, &body.to_string())
}

fn initialize(address: SocketAddr, capabilities: Value) -> String {
    let reply = post(
        address,
        &[],
        &initialize_request("2025-11-25", capabilities),
    );
    assert_eq!(reply.status, 200);
    let session = reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    assert!(session.len() >= 32 && session.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    let answer = reply.json();
    check_message(Revision::V2025_11_25, &answer, Some("InitializeResult"));
    let done = post(
        address,
        &[("Mcp-Session-Id", &session)],
        &initialized_notification(),
    );
    assert_eq!(done.status, 202);
    session
}

fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":arguments}})
}

fn envelope() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}})
}

fn modern(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = envelope();
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
}

fn modern_headers<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut h = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)];
    if let Some(name) = name {
        h.push(("Mcp-Name", name));
    }
    h
}

#[test]
fn a_session_lives_from_initialize_to_delete() {
    let h = start(options());
    let session = initialize(h.address, json!({}));
    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
    let reply = post(
        h.address,
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        &list,
    );
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let answer = reply.json();
    check_message(Revision::V2025_11_25, &answer, Some("ListToolsResult"));
    assert_eq!(answer["result"]["tools"][0]["name"], "echo");

    assert_eq!(post(h.address, &[], &list).status, 400, "no session id");
    assert_eq!(
        post(h.address, &[("Mcp-Session-Id", "nope")], &list).status,
        404
    );
    let bad_version = post(
        h.address,
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "1999-01-01"),
        ],
        &list,
    );
    assert_eq!(bad_version.status, 400);

    assert_eq!(
        send(
            h.address,
            "DELETE",
            "/mcp",
            &[("Mcp-Session-Id", &session)],
            ""
        )
        .status,
        200
    );
    assert_eq!(
        post(h.address, &[("Mcp-Session-Id", &session)], &list).status,
        404
    );
    assert_eq!(
        send(
            h.address,
            "DELETE",
            "/mcp",
            &[("Mcp-Session-Id", &session)],
            ""
        )
        .status,
        404
    );
}

#[test]
fn a_call_that_reports_progress_is_answered_as_an_event_stream() {
    let h = start(options());
    let session = initialize(h.address, json!({}));
    let mut request = call(7, "progress", json!({}));
    request["params"]["_meta"] = json!({"progressToken": "p-1"});
    let mut reply = post(h.address, &[("Mcp-Session-Id", &session)], &request);
    assert_eq!(reply.status, 200);
    assert!(reply.is_sse(), "{:?}", reply.headers);
    let events = reply.events_until_response();
    let progress: Vec<&Value> = events
        .iter()
        .filter(|e| e["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 2, "{events:?}");
    for e in &progress {
        assert_eq!(e["params"]["progressToken"], "p-1");
        check_message(Revision::V2025_11_25, e, Some("ProgressNotification"));
    }
    let last = events.last().unwrap();
    assert_eq!(last["id"], 7);
    check_message(Revision::V2025_11_25, last, Some("CallToolResult"));
    assert_eq!(last["result"]["content"][0]["text"], "progressed");
}

#[test]
fn a_tool_asks_the_user_on_its_call_stream_and_the_answer_comes_by_post() {
    let h = start(options());
    let session = initialize(h.address, json!({"elicitation": {}}));
    let mut reply = post(
        h.address,
        &[("Mcp-Session-Id", &session)],
        &call(3, "ask", json!({})),
    );
    assert!(reply.is_sse());
    let ask = reply.event().expect("the server's request");
    assert_eq!(ask["method"], "elicitation/create");
    check_message(Revision::V2025_11_25, &ask, Some("ElicitRequest"));
    let answer = json!({"jsonrpc":"2.0","id":ask["id"],"result":{"action":"accept","content":{"name":"Ada"}}});
    assert_eq!(
        post(h.address, &[("Mcp-Session-Id", &session)], &answer).status,
        202
    );
    let result = reply.events_until_response().pop().unwrap();
    assert_eq!(result["id"], 3);
    assert_eq!(result["result"]["content"][0]["text"], "Hello, Ada!");
}

#[test]
fn sessions_keep_their_own_state_and_ids_among_concurrent_clients() {
    let h = start(options());
    let address = h.address;
    let clients: Vec<_> = (0..8)
        .map(|n| {
            std::thread::spawn(move || {
                let session = initialize(address, json!({}));
                // Every client uses the same request id: sessions keep them apart.
                let reply = post(
                    address,
                    &[("Mcp-Session-Id", &session)],
                    &call(1, "echo", json!({"text": format!("client {n}")})),
                );
                let mut reply = reply;
                let answer = if reply.is_sse() {
                    reply.events_until_response().pop().unwrap()
                } else {
                    reply.json()
                };
                check_message(Revision::V2025_11_25, &answer, Some("CallToolResult"));
                let text: Value =
                    serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap())
                        .unwrap();
                assert_eq!(text["text"], format!("client {n}"));
                session
            })
        })
        .collect();
    let sessions: Vec<String> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    let mut unique = sessions.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), sessions.len(), "every session id is new");
}

#[test]
fn the_get_stream_is_one_per_session_and_needs_a_session() {
    let h = start(options());
    let session = initialize(h.address, json!({}));
    let first = send(
        h.address,
        "GET",
        "/mcp",
        &[
            ("Mcp-Session-Id", &session),
            ("Accept", "text/event-stream"),
        ],
        "",
    );
    assert_eq!(first.status, 200);
    assert!(first.is_sse());
    let second = send(
        h.address,
        "GET",
        "/mcp",
        &[
            ("Mcp-Session-Id", &session),
            ("Accept", "text/event-stream"),
        ],
        "",
    );
    assert_eq!(second.status, 409);
    assert_eq!(
        send(
            h.address,
            "GET",
            "/mcp",
            &[("Accept", "text/event-stream")],
            ""
        )
        .status,
        405
    );
    assert_eq!(
        send(h.address, "GET", "/mcp", &[("Mcp-Session-Id", "gone")], "").status,
        404
    );
    assert_eq!(send(h.address, "PUT", "/mcp", &[], "").status, 405);
}

#[test]
fn stateless_requests_follow_the_validation_ladder() {
    let h = start(options());
    let discover = post(
        h.address,
        &modern_headers("server/discover", None),
        &modern(1, "server/discover", json!({})),
    );
    assert_eq!(discover.status, 200);
    assert!(
        discover.header("mcp-session-id").is_none(),
        "no sessions in 2026-07-28"
    );
    let answer = discover.json();
    check_message(Revision::V2026_07_28, &answer, Some("DiscoverResult"));

    // Rung 1: the envelope.
    let bare = json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion": MODERN}}});
    let reply = post(h.address, &modern_headers("tools/list", None), &bare);
    assert_eq!(reply.status, 400);
    let error = reply.json();
    assert_eq!(error["error"]["code"], -32602);
    assert_eq!(error["id"], 2);
    // Rung 2 before rung 3: a header naming another version.
    let mut future = modern(3, "tools/list", json!({}));
    future["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let reply = post(h.address, &modern_headers("tools/list", None), &future);
    assert_eq!(
        (reply.status, reply.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    // Rung 3: agreeing headers, unsupported version.
    let reply = post(
        h.address,
        &[
            ("MCP-Protocol-Version", "v999.0.0"),
            ("Mcp-Method", "tools/list"),
        ],
        &future,
    );
    assert_eq!(reply.status, 400);
    let error = reply.json();
    check_message(Revision::V2026_07_28, &error, None);
    assert_eq!(error["error"]["code"], -32022);
    assert_eq!(error["error"]["data"]["requested"], "v999.0.0");
    // Mcp-Method mismatch, and case matters in values.
    let reply = post(
        h.address,
        &modern_headers("TOOLS/LIST", None),
        &modern(4, "tools/list", json!({})),
    );
    assert_eq!(
        (reply.status, reply.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    // Mcp-Name with spaces around it is accepted; a wrong one is not.
    let reply = post(
        h.address,
        &modern_headers("tools/call", Some("  echo  ")),
        &modern(5, "tools/call", json!({"name":"echo","arguments":{}})),
    );
    assert_eq!(reply.status, 200);
    let reply = post(
        h.address,
        &modern_headers("tools/call", Some("slow")),
        &modern(6, "tools/call", json!({"name":"echo","arguments":{}})),
    );
    assert_eq!(
        (reply.status, reply.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    // Rung 4: x-mcp-header arguments.
    let weather = modern(
        7,
        "tools/call",
        json!({"name":"weather","arguments":{"region":"eu"}}),
    );
    let mut headers = modern_headers("tools/call", Some("weather"));
    assert_eq!(post(h.address, &headers, &weather).status, 400);
    headers.push(("Mcp-Param-Region", "eu"));
    assert_eq!(post(h.address, &headers, &weather).status, 200);
    // Rung 5: removed and unknown methods are 404.
    for method in ["ping", "initialize", "logging/setLevel", "nope/nothing"] {
        let reply = post(
            h.address,
            &modern_headers(method, None),
            &modern(8, method, json!({})),
        );
        assert_eq!(reply.status, 404, "{method}");
        let error = reply.json();
        assert_eq!(error["error"]["code"], -32601);
        check_message(Revision::V2026_07_28, &error, None);
    }
    // Notifications are accepted and dropped; GET and DELETE are not served.
    let note = json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"_meta":envelope()}});
    assert_eq!(
        post(
            h.address,
            &modern_headers("notifications/cancelled", None),
            &note
        )
        .status,
        202
    );
    assert_eq!(
        send(
            h.address,
            "GET",
            "/mcp",
            &[("MCP-Protocol-Version", MODERN)],
            ""
        )
        .status,
        405
    );
}

#[test]
fn a_stateless_call_needing_input_is_answered_with_input_required_and_retried() {
    let h = start(options());
    let headers = modern_headers("tools/call", Some("ask"));
    let reply = post(
        h.address,
        &headers,
        &modern(1, "tools/call", json!({"name":"ask","arguments":{}})),
    );
    assert_eq!(reply.status, 200);
    let first = reply.json();
    check_message(Revision::V2026_07_28, &first, Some("InputRequiredResult"));
    assert_eq!(first["result"]["resultType"], "input_required");
    let state = first["result"]["requestState"].clone();
    // The retry is another request on another connection (another engine).
    let retry = modern(
        2,
        "tools/call",
        json!({"name":"ask","arguments":{},"requestState":state,
        "inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}}}),
    );
    let answer = post(h.address, &headers, &retry).json();
    check_message(Revision::V2026_07_28, &answer, Some("CallToolResult"));
    assert_eq!(answer["result"]["content"][0]["text"], "Hello, Ada!");
    // Used once only.
    let again = post(h.address, &headers, &retry);
    assert_eq!(again.status, 400);
}

#[test]
fn closing_a_stateless_response_stream_cancels_the_call() {
    let h = start(options());
    let mut reply = post(
        h.address,
        &modern_headers("tools/call", Some("slow")),
        &modern(42, "tools/call", json!({"name":"slow","arguments":{}})),
    );
    assert_eq!(reply.status, 200);
    assert!(reply.is_sse(), "a call that takes a while is streamed");
    // A keep-alive comment arrives; then the client goes away.
    let mut line = String::new();
    reply.reader.read_line(&mut line).unwrap();
    drop(reply);
    assert_eq!(h.seen.recv_timeout(WAIT), Ok(Seen::Cancelled("42".into())));
}

#[test]
fn a_listen_stream_is_acknowledged_and_held_open() {
    let h = start(options());
    let mut reply = post(
        h.address,
        &modern_headers("subscriptions/listen", None),
        &modern(
            9,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        ),
    );
    assert_eq!(reply.status, 200);
    assert!(reply.is_sse());
    let ack = reply.event().unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        9
    );
    check_message(Revision::V2026_07_28, &ack, None);
}

#[test]
fn dns_rebinding_is_refused_and_loopback_names_are_served() {
    let h = start(options());
    let init = initialize_request("2025-11-25", json!({}));
    let evil = post(
        h.address,
        &[
            ("Host", "evil.example.com"),
            ("Origin", "http://evil.example.com"),
        ],
        &init,
    );
    assert!((400..500).contains(&evil.status), "{}", evil.status);
    assert_eq!(
        post(h.address, &[("Origin", "http://evil.example.com")], &init).status,
        403
    );
    assert_eq!(
        post(h.address, &[("Host", "evil.example.com:8000")], &init).status,
        421
    );
    let port = h.address.port().to_string();
    let host = format!("localhost:{port}");
    let origin = format!("http://localhost:{port}");
    assert_eq!(
        post(h.address, &[("Host", &host), ("Origin", &origin)], &init).status,
        200
    );
}

#[test]
fn a_bearer_token_is_required_when_configured() {
    let h = start(Options {
        bearer_tokens: vec!["s3cret".into()],
        resource: Some("http://127.0.0.1/mcp".into()),
        authorization_servers: vec!["https://auth.example.com".into()],
        ..options()
    });
    let list = modern(1, "tools/list", json!({}));
    let headers = modern_headers("tools/list", None);
    let refused = post(h.address, &headers, &list);
    assert_eq!(refused.status, 401);
    let challenge = refused.header("www-authenticate").unwrap().to_string();
    assert!(challenge.starts_with("Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource/mcp\""), "{challenge}");
    assert!(!challenge.contains("invalid_token"));
    let mut wrong = headers.clone();
    wrong.push(("Authorization", "Bearer guess"));
    let refused = post(h.address, &wrong, &list);
    assert_eq!(refused.status, 401);
    assert!(refused
        .header("www-authenticate")
        .unwrap()
        .contains("error=\"invalid_token\""));
    let mut right = headers.clone();
    right.push(("Authorization", "Bearer s3cret"));
    assert_eq!(post(h.address, &right, &list).status, 200);
    // The metadata itself needs no token.
    let prm = send(
        h.address,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        "",
    );
    assert_eq!(prm.status, 200);
    let doc = prm.json();
    assert_eq!(doc["resource"], "http://127.0.0.1/mcp");
    assert_eq!(doc["authorization_servers"][0], "https://auth.example.com");
}

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
fn a_non_loopback_address_needs_an_allow_list() {
    let refused = Server::start_http(
        Config::default(),
        Registry::new(tools()).unwrap(),
        Options {
            host: "0.0.0.0".into(),
            ..options()
        },
        Interrupter::new(|| {}, || {}),
    );
    assert!(refused.is_err());
    let allowed = Server::start_http(
        Config::default(),
        Registry::new(tools()).unwrap(),
        Options {
            host: "0.0.0.0".into(),
            allowed_hosts: Some(Allowed::Any),
            allowed_origins: Some(Allowed::Any),
            ..options()
        },
        Interrupter::new(|| {}, || {}),
    );
    assert!(allowed.is_ok());
}

/// A raw HTTP/1.1 exchange: `head` (the request line and headers, without
/// the blank line) and `body` are sent as they are; the response's status
/// and headers are read, the body is left to read chunk by chunk.
fn send_raw(address: SocketAddr, head: &str, body: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    stream
        .write_all(format!("{head}\r\n\r\n").as_bytes())
        .unwrap();
    stream.write_all(body).unwrap();
    read_head(BufReader::new(stream))
}

fn read_head(mut reader: BufReader<TcpStream>) -> Reply {
    let mut status_line = String::new();
    reader.read_line(&mut status_line).unwrap();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {status_line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':').unwrap();
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    Reply {
        status,
        headers,
        reader,
    }
}

/// The head of an HTTP/1.1 request to the endpoint, `extra` lines added.
fn head_11(address: SocketAddr, method: &str, extra: &[&str]) -> String {
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: application/json, text/event-stream",
        address.port()
    );
    for line in extra {
        head.push_str("\r\n");
        head.push_str(line);
    }
    head
}

/// A POST of `body` over HTTP/1.1.
fn post_11(address: SocketAddr, extra: &[&str], body: &Value) -> Reply {
    let body = body.to_string();
    let length = format!("Content-Length: {}", body.len());
    let mut lines = vec!["Content-Type: application/json", length.as_str()];
    lines.extend_from_slice(extra);
    send_raw(address, &head_11(address, "POST", &lines), body.as_bytes())
}

impl Reply {
    /// A chunked body read to its end: the data, and whether it ended with
    /// its terminating chunk (`false`: the connection was cut before, or
    /// the body had not ended after [`WAIT`]).
    fn chunks(mut self) -> (String, bool) {
        assert_eq!(
            self.header("transfer-encoding"),
            Some("chunked"),
            "{:?}",
            self.headers
        );
        let started = std::time::Instant::now();
        let mut data = Vec::new();
        loop {
            if started.elapsed() > WAIT {
                return (String::from_utf8_lossy(&data).into(), false);
            }
            let mut size = String::new();
            match self.reader.read_line(&mut size) {
                Ok(0) | Err(_) => return (String::from_utf8_lossy(&data).into(), false),
                Ok(_) => {}
            }
            let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
                return (String::from_utf8_lossy(&data).into(), false);
            };
            let mut chunk = vec![0; size + 2];
            if self.reader.read_exact(&mut chunk).is_err() {
                return (String::from_utf8_lossy(&data).into(), false);
            }
            if size == 0 {
                return (String::from_utf8_lossy(&data).into(), chunk == b"\r\n");
            }
            data.extend_from_slice(&chunk[..size]);
        }
    }
}

/// The messages of event-stream text.
fn messages_in(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

/// Whether a socket the server holds was closed by it (end of input);
/// false if it is still open and silent.
fn closed_by_server(stream: &mut TcpStream, wait: Duration) -> bool {
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut byte = [0u8; 1];
    match stream.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => panic!("the server sent something to an idle connection"),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => true,
        Err(_) => false,
    }
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

#[test]
fn host_and_origin_are_read_as_rfc_9112_says() {
    let h = start(options());
    let list = modern(1, "tools/list", json!({})).to_string();
    let status = |target: &str, lines: &[(&str, &str)]| {
        let mut headers = modern_headers("tools/list", None);
        headers.extend_from_slice(lines);
        send(h.address, "POST", target, &headers, &list).status
    };
    let port = h.address.port().to_string();
    let local = format!("localhost:{port}");
    assert_eq!(status("/mcp", &[("Host", &local)]), 200);
    assert_eq!(status("/mcp", &[("Host", &local), ("Host", &local)]), 400);
    // An absolute-form target names the host; Host is ignored then.
    assert_eq!(status("http://evil.com/mcp", &[("Host", &local)]), 421);
    assert_eq!(
        status(&format!("http://{local}/mcp"), &[("Host", "evil.com")]),
        200
    );
    for bad in ["localhost:80@evil.com", "[::1]evil", "localhost:abc"] {
        assert_eq!(status("/mcp", &[("Host", bad)]), 400, "{bad}");
    }
    assert_eq!(
        status("/mcp", &[("Host", &local), ("Origin", "http://localhöst")]),
        403
    );
    assert_eq!(
        status(
            "/mcp",
            &[
                ("Host", &local),
                ("Origin", "http://localhost"),
                ("Origin", "http://evil.com")
            ]
        ),
        403
    );
    assert_eq!(
        status(
            "/mcp",
            &[("Host", &local), ("Origin", "http://localhost:80@evil.com")]
        ),
        403
    );
}

#[test]
fn bodies_in_codings_it_does_not_read_or_of_other_media_types_are_refused() {
    let h = start(options());
    let list = modern(1, "tools/list", json!({})).to_string();
    let routing = "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list";
    let chunked = format!("{:x}\r\n{list}\r\n0\r\n\r\n", list.len());
    let with = |lines: &str| {
        send_raw(
            h.address,
            &head_11(
                h.address,
                "POST",
                &[routing, "Content-Type: application/json", lines],
            ),
            chunked.as_bytes(),
        )
        .status
    };
    assert_eq!(with("Transfer-Encoding: chunked"), 200);
    assert_eq!(with("Transfer-Encoding: gzip, chunked"), 501);
    assert_eq!(
        with("Transfer-Encoding: chunked\r\nContent-Encoding: gzip"),
        415
    );
    assert_eq!(
        post(
            h.address,
            &[
                ("Content-Type", "application/jsonx"),
                ("MCP-Protocol-Version", MODERN),
                ("Mcp-Method", "tools/list")
            ],
            &modern(1, "tools/list", json!({}))
        )
        .status,
        415
    );
}

#[test]
fn allowed_hosts_alone_serve_a_public_address_with_loopback_origins() {
    let h = start(Options {
        host: "0.0.0.0".into(),
        allowed_hosts: Some(Allowed::List(vec!["mcp.example.com".into()])),
        ..options()
    });
    let address = SocketAddr::from(([127, 0, 0, 1], h.address.port()));
    let init = initialize_request("2025-11-25", json!({}));
    let named = ("Host", "mcp.example.com");
    assert_eq!(post(address, &[named], &init).status, 200);
    // Web pages: only those of the machine itself, unless origins are named.
    let evil = ("Origin", "https://evil.example.com");
    assert_eq!(post(address, &[named, evil], &init).status, 403);
    let local = ("Origin", "http://localhost:3000");
    assert_eq!(post(address, &[named, local], &init).status, 200);
    // The loopback names are not among the allowed hosts.
    assert_eq!(post(address, &[], &init).status, 421);
}

#[test]
fn a_session_call_is_cancelled_by_notification_and_its_stream_ends_empty() {
    let h = start(options());
    let session = initialize(h.address, json!({}));
    let address = h.address;
    let caller = {
        let session = session.clone();
        std::thread::spawn(move || {
            let mut reply = post(
                address,
                &[("Mcp-Session-Id", &session)],
                &call(5, "slow", json!({})),
            );
            let mut messages = Vec::new();
            while let Some(e) = reply.event() {
                messages.push(e);
            }
            (reply.status, messages)
        })
    };
    // A legacy client going away would not cancel; its notification does.
    let cancel =
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}});
    let cancelled = retry(
        200,
        Duration::ZERO,
        || {
            assert_eq!(
                post(h.address, &[("Mcp-Session-Id", &session)], &cancel).status,
                202
            );
            h.seen.recv_timeout(Duration::from_millis(50)).ok()
        },
        Option::is_some,
    );
    assert_eq!(cancelled, Some(Seen::Cancelled("5".into())));
    let (status, messages) = caller.join().unwrap();
    assert_eq!(status, 200);
    assert!(
        messages.is_empty(),
        "nothing is sent for a cancelled call: {messages:?}"
    );
}

#[test]
fn an_idle_session_ends() {
    let h = start(Options {
        session_idle: Duration::from_millis(200),
        ..options()
    });
    let session = initialize(h.address, json!({}));
    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
    // A request keeps it alive: wait without one between them.
    let status = retry(
        100,
        Duration::from_millis(400),
        || {
            std::thread::sleep(Duration::from_millis(100));
            post(h.address, &[("Mcp-Session-Id", &session)], &list).status
        },
        |status| *status == 404,
    );
    assert_eq!(status, 404, "the idle session ended");
}

fn listen_from(address: SocketAddr, source: Option<IpAddr>, headers: &[(&str, &str)]) -> Reply {
    let mut all = modern_headers("subscriptions/listen", None);
    all.extend_from_slice(headers);
    let body = modern(1, "subscriptions/listen", json!({"notifications": {}}));
    send_from(source, address, "POST", "/mcp", &all, &body.to_string())
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

#[test]
fn a_refusal_to_an_allowed_origin_carries_cors_headers() {
    let h = start(Options {
        bearer_tokens: vec!["t".into()],
        ..options()
    });
    let refused = post(
        h.address,
        &[("Origin", "http://localhost:6274")],
        &initialize_request("2025-11-25", json!({})),
    );
    assert_eq!(refused.status, 401);
    assert!(refused.header("www-authenticate").is_some());
    assert_eq!(
        refused.header("access-control-allow-origin"),
        Some("http://localhost:6274")
    );
    let exposed = refused.header("access-control-expose-headers").unwrap();
    assert!(exposed.contains("WWW-Authenticate") && exposed.contains("Mcp-Session-Id"));
    // A 404 of the endpoint's neighbours too; never for a refused origin.
    let elsewhere = send(
        h.address,
        "GET",
        "/other",
        &[("Origin", "http://localhost:6274")],
        "",
    );
    assert_eq!(elsewhere.status, 404);
    assert!(elsewhere.header("access-control-allow-origin").is_some());
    let evil = post(
        h.address,
        &[("Origin", "http://evil.example.com")],
        &initialize_request("2025-11-25", json!({})),
    );
    assert_eq!(evil.status, 403);
    assert!(evil.header("access-control-allow-origin").is_none());
}

#[test]
fn a_2025_03_26_session_takes_batches_and_later_revisions_do_not() {
    let h = start(options());
    let init = |version: &str| {
        let reply = post(h.address, &[], &initialize_request(version, json!({})));
        reply.header("mcp-session-id").unwrap().to_string()
    };
    let batch = json!([
        {"jsonrpc":"2.0","id":1,"method":"tools/list"},
        {"jsonrpc":"2.0","method":"notifications/initialized"},
        {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}
    ]);
    let old = init("2025-03-26");
    let mut reply = post(h.address, &[("Mcp-Session-Id", &old)], &batch);
    assert_eq!(reply.status, 200);
    let answers = if reply.is_sse() {
        reply.event().unwrap()
    } else {
        reply.json()
    };
    let answers = answers.as_array().expect("one array of responses").clone();
    let mut ids: Vec<i64> = answers.iter().map(|a| a["id"].as_i64().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, vec![1, 2]);
    for answer in &answers {
        check_message(Revision::V2025_03_26, answer, None);
    }
    let new = init("2025-06-18");
    assert_eq!(
        post(h.address, &[("Mcp-Session-Id", &new)], &batch).status,
        400
    );
}

#[test]
fn a_2025_03_26_batch_of_tool_calls_gets_every_answer_on_an_event_stream() {
    let h = start(options());
    let reply = post(h.address, &[], &initialize_request("2025-03-26", json!({})));
    let session = reply.header("mcp-session-id").unwrap().to_string();
    // What the spec has clients send: both types, so the answer may stream.
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("Accept", "application/json, text/event-stream"),
    ];
    for size in [2u64, 3000] {
        let batch: Vec<Value> = (1..=size)
            .map(|n| call(n, "echo", json!({"text": format!("call {n}")})))
            .collect();
        let mut reply = post(h.address, &headers, &Value::Array(batch));
        assert_eq!(reply.status, 200, "batch of {size}");
        let answers = if reply.is_sse() {
            let events = reply.events_until_response();
            events.last().cloned().unwrap_or(Value::Null)
        } else {
            reply.json()
        };
        let answers = answers
            .as_array()
            .unwrap_or_else(|| panic!("batch of {size}: no array of responses: {answers}"))
            .clone();
        let mut ids: Vec<u64> = answers.iter().map(|a| a["id"].as_u64().unwrap()).collect();
        ids.sort();
        assert_eq!(ids, (1..=size).collect::<Vec<_>>(), "batch of {size}");
        // Each answer is its call's, or says the queue was full (a batch
        // larger than the queue bound is answered in full all the same).
        for answer in &answers {
            let n = answer["id"].as_u64().unwrap();
            match answer.get("result") {
                Some(result) => assert_eq!(
                    result["content"][0]["text"],
                    json!({"text": format!("call {n}")}).to_string()
                ),
                None => assert!(answer["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("Too many tool calls")),
            }
        }
    }
}

#[test]
fn a_session_serves_only_the_token_that_opened_it() {
    let h = start(Options {
        bearer_tokens: vec!["alice".into(), "bob".into()],
        ..options()
    });
    let reply = post(
        h.address,
        &[("Authorization", "Bearer alice")],
        &initialize_request("2025-11-25", json!({})),
    );
    assert_eq!(reply.status, 200);
    let session = reply.header("mcp-session-id").unwrap().to_string();
    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
    let as_alice = post(
        h.address,
        &[
            ("Authorization", "Bearer alice"),
            ("Mcp-Session-Id", &session),
        ],
        &list,
    );
    assert_eq!(as_alice.status, 200);
    let as_bob = post(
        h.address,
        &[
            ("Authorization", "Bearer bob"),
            ("Mcp-Session-Id", &session),
        ],
        &list,
    );
    assert_eq!(
        as_bob.status, 404,
        "another principal does not find the session"
    );
    let bob_deletes = send(
        h.address,
        "DELETE",
        "/mcp",
        &[
            ("Authorization", "Bearer bob"),
            ("Mcp-Session-Id", &session),
        ],
        "",
    );
    assert_eq!(bob_deletes.status, 404);
    assert_eq!(
        post(
            h.address,
            &[
                ("Authorization", "Bearer alice"),
                ("Mcp-Session-Id", &session)
            ],
            &list
        )
        .status,
        200
    );
}

#[test]
fn a_page_of_an_allowed_origin_may_call_with_cors() {
    let h = start(Options {
        bearer_tokens: vec!["t".into()],
        ..options()
    });
    let preflight = send(
        h.address,
        "OPTIONS",
        "/mcp",
        &[
            ("Origin", "http://localhost:6274"),
            ("Access-Control-Request-Method", "POST"),
            (
                "Access-Control-Request-Headers",
                "authorization, content-type, mcp-session-id, mcp-protocol-version",
            ),
        ],
        "",
    );
    assert_eq!(preflight.status, 204, "no token is needed to ask");
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        Some("http://localhost:6274")
    );
    assert!(preflight
        .header("access-control-allow-headers")
        .unwrap()
        .contains("mcp-session-id"));
    assert!(preflight
        .header("access-control-allow-methods")
        .unwrap()
        .contains("DELETE"));
    let evil = send(
        h.address,
        "OPTIONS",
        "/mcp",
        &[("Origin", "http://evil.example.com")],
        "",
    );
    assert_eq!(evil.status, 403);
    let reply = post(
        h.address,
        &[
            ("Origin", "http://localhost:6274"),
            ("Authorization", "Bearer t"),
        ],
        &initialize_request("2025-11-25", json!({})),
    );
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.header("access-control-allow-origin"),
        Some("http://localhost:6274")
    );
    assert!(reply
        .header("access-control-expose-headers")
        .unwrap()
        .contains("Mcp-Session-Id"));
}

/// A 2026-07-28 request from a client that declares the tasks extension.
fn with_tasks(id: u64, method: &str, params: Value) -> Value {
    let mut request = modern(id, method, params);
    request["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    request
}

/// Sends a tasks method for `task` with the routing headers it needs.
fn task_method(address: SocketAddr, id: u64, method: &str, task: &str, extra: Value) -> Reply {
    task_method_as(address, None, id, method, task, extra)
}

/// The same, with `Authorization: <authorization>` when given.
fn task_method_as(
    address: SocketAddr,
    authorization: Option<&str>,
    id: u64,
    method: &str,
    task: &str,
    extra: Value,
) -> Reply {
    let mut params = json!({"taskId": task});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    let mut headers = modern_headers(method, Some(task));
    headers.extend(authorization.map(|a| ("Authorization", a)));
    post(address, &headers, &with_tasks(id, method, params))
}

/// Creates a task with a 2026-07-28 call over HTTP; its id.
fn create_task(address: SocketAddr, id: u64, tool: &str) -> String {
    create_task_as(address, None, id, tool)
}

/// The same, with `Authorization: <authorization>` when given.
fn create_task_as(address: SocketAddr, authorization: Option<&str>, id: u64, tool: &str) -> String {
    let mut headers = modern_headers("tools/call", Some(tool));
    headers.extend(authorization.map(|a| ("Authorization", a)));
    let reply = post(
        address,
        &headers,
        &with_tasks(id, "tools/call", json!({"name": tool, "arguments": {}})),
    );
    assert_eq!(reply.status, 200);
    let created = reply.json();
    check_message(Revision::V2026_07_28, &created, Some("Result"));
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    assert!(created["result"].get("requestState").is_none());
    created["result"]["taskId"].as_str().unwrap().to_string()
}

/// Polls `tasks/get` until the task's status is `status`; the last answer.
fn poll_task(address: SocketAddr, task: &str, status: &str) -> Value {
    let mut last = Value::Null;
    for n in 0..200 {
        let reply = task_method(address, 1000 + n, "tasks/get", task, json!({}));
        assert_eq!(reply.status, 200);
        last = reply.json();
        check_message(Revision::V2026_07_28, &last, Some("Result"));
        assert_eq!(last["result"]["resultType"], "complete");
        if last["result"]["status"] == status {
            return last;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("task {task} never became {status}: {last}");
}

#[test]
fn stateless_tasks_outlive_the_request_that_created_them() {
    let h = start(options());
    let discover = post(
        h.address,
        &modern_headers("server/discover", None),
        &with_tasks(1, "server/discover", json!({})),
    )
    .json();
    assert!(
        discover["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"]
            .is_object(),
        "{discover}"
    );
    let task = create_task(h.address, 2, "task_only");
    // Each later request has an engine of its own, and finds the task.
    let done = poll_task(h.address, &task, "completed");
    assert_eq!(done["result"]["taskId"], task.as_str());
    assert_eq!(done["result"]["result"]["content"][0]["text"], "ok");
    // The task id travels in Mcp-Name, for load balancers to route on.
    let mut params = with_tasks(3, "tasks/get", json!({"taskId": task}));
    let wrong = post(
        h.address,
        &modern_headers("tasks/get", Some("another-task")),
        &params,
    );
    assert_eq!(wrong.status, 400);
    assert_eq!(wrong.json()["error"]["code"], -32020);
    let missing = post(h.address, &modern_headers("tasks/get", None), &params);
    assert_eq!(missing.status, 400);
    // A request that does not declare the extension cannot reach it.
    params["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    let undeclared = post(
        h.address,
        &modern_headers("tasks/get", Some(task.as_str())),
        &params,
    );
    assert_eq!(undeclared.status, 400);
    assert_eq!(undeclared.json()["error"]["code"], -32021);
    let unknown = task_method(h.address, 4, "tasks/get", "no-such-task", json!({}));
    assert_eq!(unknown.status, 400);
    assert_eq!(unknown.json()["error"]["code"], -32602);
    // Without the extension a task-only tool is refused, naming it.
    let refused = post(
        h.address,
        &modern_headers("tools/call", Some("task_only")),
        &modern(
            5,
            "tools/call",
            json!({"name": "task_only", "arguments": {}}),
        ),
    );
    assert_eq!(refused.status, 400);
    let error = refused.json();
    check_message(Revision::V2026_07_28, &error, None);
    assert_eq!(error["error"]["code"], -32021);
    assert!(error["error"]["data"]["requiredCapabilities"]["extensions"]
        ["io.modelcontextprotocol/tasks"]
        .is_object());
}

#[test]
fn closing_the_creating_stream_leaves_the_task_and_tasks_cancel_stops_it() {
    let h = start(options());
    let reply = post(
        h.address,
        &modern_headers("tools/call", Some("task_slow")),
        &with_tasks(
            7,
            "tools/call",
            json!({"name": "task_slow", "arguments": {}}),
        ),
    );
    // The client reads the handle and goes away at once.
    let task = reply.json()["result"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        h.seen.recv_timeout(Duration::from_millis(400)).is_err(),
        "closing the stream that created a task must not cancel it"
    );
    poll_task(h.address, &task, "working");
    let ack = task_method(h.address, 8, "tasks/cancel", &task, json!({})).json();
    check_message(Revision::V2026_07_28, &ack, Some("Result"));
    assert_eq!(ack["result"]["resultType"], "complete");
    assert!(ack["result"].get("status").is_none());
    // The job, which runs for the engine of the creating request, stops.
    assert_eq!(h.seen.recv_timeout(WAIT), Ok(Seen::Cancelled("7".into())));
    poll_task(h.address, &task, "cancelled");
    // Cancelling again is acknowledged the same way.
    let again = task_method(h.address, 9, "tasks/cancel", &task, json!({}));
    assert_eq!(again.status, 200);
    assert_eq!(again.json()["result"]["resultType"], "complete");
}

#[test]
fn a_task_takes_its_answers_over_several_requests_and_listeners_hear_of_it() {
    let h = start(options());
    let task = create_task(h.address, 1, "task_ask");
    let waiting = poll_task(h.address, &task, "input_required");
    let asked = waiting["result"]["inputRequests"].as_object().unwrap();
    assert_eq!(
        asked.keys().collect::<Vec<_>>(),
        ["first", "last"],
        "both questions are asked at once"
    );
    assert_eq!(asked["first"]["method"], "elicitation/create");
    // A listen stream follows the task, from another request.
    let mut listen = post(
        h.address,
        &modern_headers("subscriptions/listen", None),
        &with_tasks(
            2,
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [task, "unknown-task"]}}),
        ),
    );
    assert!(listen.is_sse());
    let ack = listen.event().unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([task]),
        "only live tasks are followed"
    );
    let now = listen.event().unwrap();
    assert_eq!(now["method"], "notifications/tasks");
    assert_eq!(now["params"]["status"], "input_required");
    assert_eq!(
        now["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        2
    );
    check_message(Revision::V2026_07_28, &now, None);
    // One answer now: the task still waits, for the other only.
    let name = |n: &str| json!({"action": "accept", "content": {"name": n}});
    let ack = task_method(
        h.address,
        3,
        "tasks/update",
        &task,
        json!({"inputResponses": {"first": name("Ada"), "never-asked": name("x")}}),
    );
    assert_eq!(ack.status, 200);
    assert_eq!(ack.json()["result"]["resultType"], "complete");
    let still = task_method(h.address, 4, "tasks/get", &task, json!({})).json();
    assert_eq!(still["result"]["status"], "input_required");
    let left: Vec<&String> = still["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(left, ["last"]);
    let partial = listen.event().unwrap();
    assert_eq!(partial["params"]["status"], "input_required");
    assert_eq!(
        partial["params"]["inputRequests"]
            .as_object()
            .unwrap()
            .len(),
        1
    );
    // A bad answer is refused, and loses nothing.
    let bad = task_method(
        h.address,
        5,
        "tasks/update",
        &task,
        json!({"inputResponses": {"last": {"action": "maybe"}}}),
    );
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["error"]["code"], -32602);
    let still = task_method(h.address, 6, "tasks/get", &task, json!({})).json();
    assert!(still["result"]["inputRequests"].get("last").is_some());
    // The last answer resumes the tool, which gets both.
    task_method(
        h.address,
        7,
        "tasks/update",
        &task,
        json!({"inputResponses": {"last": name("Lovelace")}}),
    );
    let done = poll_task(h.address, &task, "completed");
    assert_eq!(
        done["result"]["result"]["content"][0]["text"],
        "Hello, Ada Lovelace!"
    );
    let mut statuses = Vec::new();
    while let Some(note) = listen.event() {
        assert_eq!(note["method"], "notifications/tasks");
        let status = note["params"]["status"].as_str().unwrap().to_string();
        statuses.push(status.clone());
        if status == "completed" {
            assert_eq!(
                note["params"]["result"]["content"][0]["text"],
                "Hello, Ada Lovelace!"
            );
            break;
        }
    }
    assert_eq!(statuses, ["working", "completed"]);
    // Following tasks needs the extension on the listen request.
    let refused = post(
        h.address,
        &modern_headers("subscriptions/listen", None),
        &modern(
            8,
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [task]}}),
        ),
    );
    assert_eq!(refused.status, 400);
    assert_eq!(refused.json()["error"]["code"], -32021);
}

#[test]
fn task_ids_start_with_the_replica_prefix_for_load_balancers() {
    let h = start(Options {
        task_id_prefix: "r7-".into(),
        ..options()
    });
    let task = create_task(h.address, 1, "task_only");
    assert!(task.starts_with("r7-") && task.len() == 35, "{task}");
    poll_task(h.address, &task, "completed");
}

#[test]
fn a_call_whose_stream_the_server_lets_go_is_resumed_with_last_event_id() {
    let h = start(options());
    let session = initialize(h.address, json!({}));
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let reply = post(h.address, &headers, &call(1, "reconnect", json!({})));
    assert_eq!(reply.status, 200);
    assert!(reply.is_sse());
    // Only the priming event: an id, the reconnection delay, no message.
    let body = reply.body();
    let first = body.lines().next().unwrap_or_default();
    let last = first.strip_prefix("id: ").expect("an event id first");
    assert!(body.contains("\nretry: 1000\n"), "{body}");
    assert!(!body.contains("\"result\""), "{body}");
    let mut resumed = send(
        h.address,
        "GET",
        "/mcp",
        &[
            ("Mcp-Session-Id", &session),
            ("Last-Event-ID", last),
            ("Accept", "text/event-stream"),
        ],
        "",
    );
    assert_eq!(resumed.status, 200);
    assert!(resumed.is_sse());
    let events = resumed.events_until_response();
    let answer = events.last().expect("the response");
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "closed: true");
    check_message(Revision::V2025_11_25, answer, Some("CallToolResult"));
    // A stream the session does not keep is refused, not hung.
    let unknown = send(
        h.address,
        "GET",
        "/mcp",
        &[
            ("Mcp-Session-Id", &session),
            ("Last-Event-ID", "999:0"),
            ("Accept", "text/event-stream"),
        ],
        "",
    );
    assert_eq!(unknown.status, 400);
}

#[test]
fn events_of_a_2025_06_18_session_have_ids_but_no_priming() {
    let h = start(options());
    let reply = post(
        h.address,
        &[],
        &json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
    );
    let session = reply.header("mcp-session-id").unwrap().to_string();
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let reply = post(h.address, &headers, &call(1, "progress", json!({})));
    assert!(reply.is_sse());
    let body = reply.body();
    let first = body
        .lines()
        .find(|l| !l.is_empty() && !l.starts_with(':'))
        .unwrap_or_default();
    assert!(first.starts_with("id: 1:1"), "{body}");
    assert!(!body.contains("retry:"), "{body}");
    assert!(
        !body.contains("data:\n"),
        "no event without a message: {body}"
    );
    // Its server cannot let a stream go: the client could not resume it.
    let reply = post(h.address, &headers, &call(2, "reconnect", json!({})));
    let mut reply = reply;
    let events = reply.events_until_response();
    assert_eq!(
        events.last().unwrap()["result"]["content"][0]["text"],
        "closed: false"
    );
}

#[test]
fn sessions_and_listen_streams_hear_of_changes_and_resource_updates() {
    let h = start_with(options(), changing_registry(false, 0));
    let session = initialize(h.address, json!({}));
    let subscribed = post(
        h.address,
        &[("Mcp-Session-Id", &session)],
        &json!({"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://r"}}),
    )
    .json();
    assert_eq!(subscribed["result"], json!({}));
    let mut get = send(
        h.address,
        "GET",
        "/mcp",
        &[
            ("Mcp-Session-Id", &session),
            ("Accept", "text/event-stream"),
        ],
        "",
    );
    assert_eq!(get.status, 200);
    let mut listen = post(
        h.address,
        &modern_headers("subscriptions/listen", None),
        &modern(
            9,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["test://r"]}}),
        ),
    );
    let ack = listen.event().unwrap();
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://r"]})
    );
    // Prompts only: hears nothing of tools nor of the resource.
    let mut prompts_only = post(
        h.address,
        &modern_headers("subscriptions/listen", None),
        &modern(
            11,
            "subscriptions/listen",
            json!({"notifications": {"promptsListChanged": true}}),
        ),
    );
    assert_eq!(
        prompts_only.event().unwrap()["method"],
        "notifications/subscriptions/acknowledged"
    );
    let mut changed = post(
        h.address,
        &modern_headers("tools/call", Some("change")),
        &modern(10, "tools/call", json!({"name": "change", "arguments": {}})),
    );
    let events = if changed.is_sse() {
        changed.events_until_response()
    } else {
        vec![changed.json()]
    };
    assert_eq!(
        events.last().unwrap()["result"]["content"][0]["text"],
        "changed"
    );
    let mut session_heard = vec![get.event().unwrap(), get.event().unwrap()];
    let mut listen_heard = vec![listen.event().unwrap(), listen.event().unwrap()];
    for heard in [&mut session_heard, &mut listen_heard] {
        heard.sort_by_key(|m| m["method"].as_str().unwrap_or("").to_string());
    }
    assert_eq!(
        session_heard[0]["method"],
        "notifications/resources/updated"
    );
    assert_eq!(session_heard[0]["params"]["uri"], "test://r");
    assert_eq!(
        session_heard[1]["method"],
        "notifications/tools/list_changed"
    );
    for m in &session_heard {
        check_message(Revision::V2025_11_25, m, None);
    }
    assert_eq!(listen_heard[0]["method"], "notifications/resources/updated");
    assert_eq!(
        listen_heard[1]["method"],
        "notifications/tools/list_changed"
    );
    for m in &listen_heard {
        assert_eq!(
            m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            9
        );
        check_message(Revision::V2026_07_28, m, None);
    }
    // The new set is what a request sees now.
    let list = post(
        h.address,
        &[("Mcp-Session-Id", &session)],
        &json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
    )
    .json();
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"added"), "{names:?}");
    // The prompts-only stream got nothing but keep-alives meanwhile.
    prompts_only
        .reader
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut line = String::new();
    let mut seen = String::new();
    let until = std::time::Instant::now() + Duration::from_millis(300);
    while std::time::Instant::now() < until
        && prompts_only
            .reader
            .read_line(&mut line)
            .is_ok_and(|n| n > 0)
    {
        seen.push_str(&line);
        line.clear();
    }
    assert!(seen.contains(": ping"), "the stream is alive: {seen}");
    assert!(!seen.contains("data:"), "{seen}");
}

/// What a tasks method gets for a task id the server never issued, as it
/// would read for `task`: another owner's task must get exactly this.
fn unknown_answer(
    address: SocketAddr,
    authorization: &str,
    id: u64,
    method: &str,
    task: &str,
    extra: Value,
) -> (u16, Value) {
    // Same length and shape as a real id, so that only the id differs.
    let last = if task.ends_with('0') { "1" } else { "0" };
    let made_up = format!("{}{last}", &task[..task.len() - 1]);
    let reply = task_method_as(address, Some(authorization), id, method, &made_up, extra);
    let status = reply.status;
    let text = reply.body().replace(&made_up, task);
    (status, serde_json::from_str(&text).unwrap())
}

/// Everything an event stream sends within `wait` (then it is left open).
fn stream_text_within(reply: &mut Reply, wait: Duration) -> String {
    reply.reader.get_ref().set_read_timeout(Some(wait)).unwrap();
    let mut text = String::new();
    let until = std::time::Instant::now() + wait;
    while std::time::Instant::now() < until {
        let mut line = String::new();
        match reply.reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => text.push_str(&line),
        }
    }
    text
}

#[test]
fn a_stateless_task_is_reached_only_with_the_token_that_created_it() {
    let h = start(Options {
        bearer_tokens: vec!["alice".into(), "bob".into()],
        ..options()
    });
    let (alice, bob) = ("Bearer alice", "Bearer bob");
    let task = create_task_as(h.address, Some(alice), 1, "task_ask");
    let as_alice =
        |id, method: &str, extra| task_method_as(h.address, Some(alice), id, method, &task, extra);
    let status_for_alice =
        |id| as_alice(id, "tasks/get", json!({})).json()["result"]["status"].clone();
    for _ in 0..200 {
        if status_for_alice(2) == "input_required" {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(status_for_alice(3), "input_required");
    let name = |n: &str| json!({"action": "accept", "content": {"name": n}});
    let answers = json!({"inputResponses": {"first": name("Eve"), "last": name("Evil")}});
    // To bob, every method finds no such task, word for word.
    for (id, method, extra) in [
        (10, "tasks/get", json!({})),
        (11, "tasks/update", answers.clone()),
        (12, "tasks/cancel", json!({})),
    ] {
        let reply = task_method_as(h.address, Some(bob), id, method, &task, extra.clone());
        let status = reply.status;
        let answer = reply.json();
        assert_eq!(
            (status, answer.clone()),
            unknown_answer(h.address, bob, id, method, &task, extra),
            "{method} by another token must look like an unknown id"
        );
        assert_eq!(status, 400, "{answer}");
    }
    // Nor did bob's update or cancel touch it.
    assert_eq!(status_for_alice(13), "input_required");
    // Bob's listen stream follows none of it; alice's does.
    let listen_as = |authorization, id| {
        let mut headers = modern_headers("subscriptions/listen", None);
        headers.push(("Authorization", authorization));
        let mut reply = post(
            h.address,
            &headers,
            &with_tasks(
                id,
                "subscriptions/listen",
                json!({"notifications": {"taskIds": [task]}}),
            ),
        );
        assert!(reply.is_sse());
        let ack = reply.event().unwrap();
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        (reply, ack["params"]["notifications"]["taskIds"].clone())
    };
    let (mut bobs, followed) = listen_as(bob, 20);
    assert_eq!(
        followed,
        json!([]),
        "another's task is left out as an unknown one"
    );
    let (mut alices, followed) = listen_as(alice, 21);
    assert_eq!(followed, json!([task]));
    assert_eq!(
        alices.event().unwrap()["params"]["status"],
        "input_required"
    );
    // Alice answers: the task completes, and only her stream hears of it.
    let ack = as_alice(22, "tasks/update", answers);
    assert_eq!(ack.status, 200);
    // Working again, then completed (the stand-in for R answers at once).
    let mut completed = false;
    for _ in 0..5 {
        let heard = alices.event().unwrap();
        assert_eq!(heard["method"], "notifications/tasks");
        if heard["params"]["status"] == "completed" {
            completed = true;
            break;
        }
        assert_eq!(heard["params"]["status"], "working", "{heard}");
    }
    assert!(completed, "alice's stream heard the task complete");
    let done = as_alice(23, "tasks/get", json!({})).json();
    assert_eq!(done["result"]["status"], "completed", "{done}");
    let bob_heard = stream_text_within(&mut bobs, Duration::from_millis(300));
    assert!(
        !bob_heard.contains(&task),
        "bob's stream heard: {bob_heard}"
    );
    // Bob's own tasks are his, and alice's requests do not find them.
    let his = create_task_as(h.address, Some(bob), 30, "task_slow");
    let get = task_method_as(h.address, Some(bob), 31, "tasks/get", &his, json!({}));
    assert_eq!(get.status, 200);
    let by_alice = task_method_as(h.address, Some(alice), 32, "tasks/cancel", &his, json!({}));
    assert_eq!(by_alice.status, 400);
    let still = task_method_as(h.address, Some(bob), 33, "tasks/get", &his, json!({})).json();
    assert_eq!(still["result"]["status"], "working", "{still}");
    let _ = task_method_as(h.address, Some(bob), 34, "tasks/cancel", &his, json!({}));
}

#[test]
fn handshake_era_tasks_stay_in_their_session() {
    let h = start(Options {
        bearer_tokens: vec!["alice".into(), "bob".into()],
        ..options()
    });
    let open = |token: &str| {
        let auth = format!("Bearer {token}");
        let reply = post(
            h.address,
            &[("Authorization", auth.as_str())],
            &initialize_request("2025-11-25", json!({})),
        );
        assert_eq!(reply.status, 200);
        let session = reply.header("mcp-session-id").unwrap().to_string();
        let done = post(
            h.address,
            &[
                ("Authorization", auth.as_str()),
                ("Mcp-Session-Id", &session),
            ],
            &initialized_notification(),
        );
        assert_eq!(done.status, 202);
        (auth, session)
    };
    let in_session = |(auth, session): &(String, String), body: Value| {
        post(
            h.address,
            &[
                ("Authorization", auth.as_str()),
                ("Mcp-Session-Id", session),
            ],
            &body,
        )
        .json()
    };
    let alices = open("alice");
    let mut request = call(1, "task_only", json!({}));
    request["params"]["task"] = json!({});
    let created = in_session(&alices, request);
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let list = json!({"jsonrpc":"2.0","id":2,"method":"tasks/list"});
    let listed = in_session(&alices, list.clone());
    assert_eq!(listed["result"]["tasks"][0]["taskId"], task.as_str());
    // Bob (a session of his own; alice's is not found with his token) sees
    // none of it, through any method.
    let bobs = open("bob");
    assert!(in_session(&bobs, list)["result"]["tasks"]
        .as_array()
        .unwrap()
        .is_empty());
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let answer = in_session(
            &bobs,
            json!({"jsonrpc":"2.0","id":3,"method":method,"params":{"taskId":task}}),
        );
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
    }
    // Alice's own session still finds it.
    let get = in_session(
        &alices,
        json!({"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":task}}),
    );
    assert_eq!(get["result"]["taskId"], task.as_str(), "{get}");
}

#[test]
fn without_tokens_configured_any_request_reaches_a_task() {
    let h = start(options());
    let task = create_task(h.address, 1, "task_slow");
    // An Authorization header means nothing to a server that checks none.
    for (id, authorization) in [(2, None), (3, Some("Bearer anyone")), (4, Some("Basic x"))] {
        let reply = task_method_as(h.address, authorization, id, "tasks/get", &task, json!({}));
        assert_eq!(reply.status, 200, "{authorization:?}");
        assert_eq!(reply.json()["result"]["status"], "working");
    }
    let cancel = task_method_as(
        h.address,
        Some("Bearer other"),
        5,
        "tasks/cancel",
        &task,
        json!({}),
    );
    assert_eq!(cancel.status, 200);
    poll_task(h.address, &task, "cancelled");
}

#[test]
fn a_request_state_serves_only_the_token_holder_it_was_issued_to() {
    let h = start(Options {
        bearer_tokens: vec!["alice".into(), "mallory".into()],
        ..options()
    });
    let mut headers = modern_headers("tools/call", Some("ask"));
    headers.push(("Authorization", "Bearer alice"));
    let first = post(
        h.address,
        &headers,
        &modern(1, "tools/call", json!({"name":"ask","arguments":{}})),
    )
    .json();
    let state = first["result"]["requestState"].clone();
    assert!(state.is_string(), "{first}");
    let retry_as = |name: &str| {
        let retry = modern(
            2,
            "tools/call",
            json!({"name":"ask","arguments":{},"requestState":state,
            "inputResponses":{"name":{"action":"accept","content":{"name":name}}}}),
        );
        let mut headers = modern_headers("tools/call", Some("ask"));
        let token = format!("Bearer {}", name.to_lowercase());
        headers.push(("Authorization", &token));
        post(h.address, &headers, &retry)
    };
    let stolen = retry_as("Mallory");
    assert_eq!(stolen.status, 400);
    let refusal = stolen.json();
    assert_eq!(refusal["error"]["data"]["reason"], "invalid_request_state");
    // Refusing it did not use it up: its holder's retry goes through.
    let answer = retry_as("Alice").json();
    assert_eq!(answer["result"]["content"][0]["text"], "Hello, Alice!");
}

/// A server whose tokens are checked by `check_token`.
fn start_token_checked() -> Harness {
    let mut defs = tools();
    let key = defs.len();
    defs.push(ToolDef {
        timeout: Some(Duration::from_secs(5)),
        ..tool(
            "check-token",
            json!({"type": "object", "properties": {"token": {"type": "string"}}}),
        )
    });
    let options = Options {
        token_check: Some(mcp_core::transport::http::tokens::TokenCheck {
            handler: key,
            cache_for: Duration::from_secs(60),
            time_limit: Duration::from_secs(5),
            per_peer: mcp_core::transport::http::tokens::CHECKS_PER_PEER,
        }),
        ..options()
    };
    start_with(options, Registry::new(defs).unwrap())
}

/// A 2026-07-28 call of `echo` with `token` from `source`: its status and
/// how long it took.
fn timed_call(address: SocketAddr, source: Option<IpAddr>, token: &str) -> (u16, Duration) {
    let mut headers = modern_headers("tools/call", Some("echo"));
    let authorization = format!("Bearer {token}");
    headers.push(("Authorization", &authorization));
    let body = modern(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let started = std::time::Instant::now();
    let reply = send_from(source, address, "POST", "/mcp", &headers, &body.to_string());
    let status = reply.status;
    let _ = reply.body();
    (status, started.elapsed())
}

/// Clients sending tokens made by `guess` from 127.0.0.1 until `stop`.
fn flood(
    address: SocketAddr,
    stop: &Arc<AtomicBool>,
    guess: fn(u64) -> String,
) -> Vec<JoinHandle<Vec<u16>>> {
    (0..40)
        .map(|client| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut statuses = Vec::new();
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    let token = guess(client * 1_000_000 + n);
                    let status = timed_call(address, None, &token).0;
                    statuses.push(status);
                    n += 1;
                    if status == 429 || status == 503 {
                        // Refused at once: a moment before the next one,
                        // so the flood keeps the server's checks full
                        // without spinning the test machine's cores.
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
                statuses
            })
        })
        .collect()
}

#[test]
fn made_up_tokens_never_hold_up_callers_whose_token_is_known() {
    let h = start_token_checked();
    assert_eq!(timed_call(h.address, None, "good").0, 200);
    let stop = Arc::new(AtomicBool::new(false));
    let attackers = flood(h.address, &stop, |n| format!("guess-{n}"));
    std::thread::sleep(Duration::from_millis(500));
    let mut waits = Vec::new();
    for n in 0..20u8 {
        let (status, took) = timed_call(h.address, None, "good");
        assert_eq!(status, 200);
        waits.push(took);
        if n % 4 == 0 {
            // A new user from another address is let in meanwhile: its
            // check takes its turn among those of the flooding client.
            let source = IpAddr::from([127, 0, 0, 10 + n / 4]);
            let (status, took) = timed_call(h.address, Some(source), &format!("new-{n}"));
            assert_eq!(status, 200, "a new valid user, after {took:?}");
            assert!(took < Duration::from_secs(2), "a new user waited {took:?}");
        }
    }
    stop.store(true, Ordering::SeqCst);
    let statuses: Vec<u16> = attackers
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    waits.sort();
    // At most the one check R runs as the call arrives (200 ms) comes
    // first: no queue of them.
    assert!(
        waits[waits.len() / 2] < Duration::from_millis(400),
        "{waits:?}"
    );
    assert!(waits[waits.len() - 1] < Duration::from_secs(1), "{waits:?}");
    // The flooding client has only a few tokens checked at once.
    assert!(
        statuses.contains(&401) && statuses.contains(&429),
        "{statuses:?}"
    );
    assert!(!statuses.contains(&200));
}

#[test]
fn a_hanging_token_check_gives_way_to_known_callers() {
    let h = start_token_checked();
    assert_eq!(timed_call(h.address, None, "good").0, 200);
    let stop = Arc::new(AtomicBool::new(false));
    let attackers = flood(h.address, &stop, |n| format!("hang-{n}"));
    std::thread::sleep(Duration::from_millis(800));
    let mut waits = Vec::new();
    for _ in 0..10 {
        let (status, took) = timed_call(h.address, None, "good");
        assert_eq!(status, 200);
        waits.push(took);
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, Ordering::SeqCst);
    let statuses: Vec<u16> = attackers
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    waits.sort();
    // A check holding R is stopped a slice after a known caller's call
    // arrives, instead of running to its time limit (5 s here).
    assert!(waits[waits.len() - 1] < Duration::from_secs(1), "{waits:?}");
    assert!(
        statuses.contains(&503),
        "stopped checks are retried: {statuses:?}"
    );
}

/// Issue 21 asked for 400 here; the official conformance suite (0.1.16,
/// `server-sse-multiple-streams`, a required scenario) sends exactly this
/// and wants 200, as the SDK servers answer. The session's revision is
/// what its answers follow either way.
#[test]
fn a_session_lets_the_header_of_another_handshake_revision_through() {
    let h = start(options());
    let session = initialize(h.address, json!({}));
    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
    let with = |version: &str| {
        post(
            h.address,
            &[
                ("Mcp-Session-Id", &session),
                ("MCP-Protocol-Version", version),
            ],
            &list,
        )
        .status
    };
    assert_eq!(with("2025-03-26"), 200);
    assert_eq!(with("2025-11-25"), 200);
    assert_eq!(with("2026-07-28"), 400, "not a handshake-era revision");
    assert_eq!(with("1999-01-01"), 400);
}
