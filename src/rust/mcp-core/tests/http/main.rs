//! The Streamable HTTP server on a real socket, driven with raw HTTP, with a
//! stand-in for R's main thread that answers the tool calls.

#[path = "../common/mod.rs"]
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
            structured: Some(serde_json::value::to_raw_value(&structured).unwrap().into()),
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

fn listen_from(address: SocketAddr, source: Option<IpAddr>, headers: &[(&str, &str)]) -> Reply {
    let mut all = modern_headers("subscriptions/listen", None);
    all.extend_from_slice(headers);
    let body = modern(1, "subscriptions/listen", json!({"notifications": {}}));
    send_from(source, address, "POST", "/mcp", &all, &body.to_string())
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

mod limits;
mod security;
mod sessions;
mod stateless;
mod stopping;
mod streams;
mod tasks;
mod tokens;
