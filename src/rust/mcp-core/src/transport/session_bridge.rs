//! The bridge of `mcp_bridge()` without a URL: a stdio client's way into
//! the user's own R session (one serving with `mcp_session()`), with tools
//! of the bridge's own to list the sessions and switch to another.
//!
//! It passes messages between the client and the session as
//! [`crate::transport::bridge`] does, with three differences:
//!
//! - calls of the bridge's own tools ("local" tools) are not sent: the
//!   caller gets them from [`SessionBridge::poll`] and answers them with
//!   [`SessionBridge::answer`] (the caller is R, which finds the sessions in
//!   the registry); the session's `tools/list` answer gets them added;
//! - the answer to `initialize` gets a note for the model and declares that
//!   the tool list may change;
//! - [`SessionBridge::switch`] connects the client to another session: it
//!   initializes it as the client initialized the first one (the client's
//!   own `initialize`, replayed), lists its tools to learn whether they
//!   differ, and only then routes messages there. The old session keeps
//!   its exchanges in flight until they end (it "drains"), then its HTTP
//!   session is ended.
//!
//! Threads: a reader (stdin to the session), a writer (the sessions'
//! messages to stdout), and the caller's, which polls and switches. What is
//! remembered per message is bounded.

use crate::client::http_client::{self, HttpClient, Received};
use crate::protocol::framing::{Frame, LineReader};
use crate::protocol::jsonrpc::sniff_id;
use crate::transport::stdio::StoppableInput;
use crate::util::threads;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the writer waits for a message before it looks whether it
/// should stop, or whether the bridge switched sessions.
const WAIT: Duration = Duration::from_millis(100);

/// How many queued messages the writer still writes once told to stop.
const STOP_DRAIN: usize = 1024;

/// Requests of the client whose answers the bridge adds to, remembered
/// until answered; past this, the memory is cleared (such an answer then
/// passes unchanged).
const REMEMBERED: usize = 4096;

/// Sessions switched away from that may still have exchanges in flight.
const MAX_DRAINING: usize = 8;

/// A session to reach.
#[derive(Debug, Clone)]
pub struct Target {
    pub url: String,
    pub options: http_client::Options,
}

/// How the bridge behaves.
#[derive(Debug, Clone)]
pub struct Options {
    /// The longest line accepted from the client.
    pub max_message_size: usize,
    /// How long a session switched to has to answer `initialize` and
    /// `tools/list`.
    pub switch_timeout: Duration,
    /// How long a server has to answer the `DELETE` that ends its session.
    pub close_timeout: Duration,
    /// Added to the server's instructions in the answer to `initialize`.
    pub note: String,
}

/// What [`SessionBridge::poll`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Polled {
    /// Nothing new.
    Running,
    /// The client called a local tool: answer it with
    /// [`SessionBridge::answer`]. `id` is JSON text; `arguments` a JSON
    /// object.
    Call {
        id: String,
        name: String,
        arguments: Value,
    },
    /// The client closed stdin; `unanswered` exchanges are still under way.
    InputEnded { unanswered: usize },
    /// The client stopped reading stdout.
    OutputClosed,
    /// A thread of the bridge failed.
    Failed(String),
}

/// What a switch found out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switched {
    /// The new session's tools differ from the old one's (or one of the
    /// lists is unknown), and the client was told its tool list changed.
    pub tools_changed: bool,
}

enum Event {
    InputEnded,
    OutputClosed,
    Panicked(String),
    Call {
        id: String,
        name: String,
        arguments: Value,
    },
}

/// What the bridge does with the answer to one of the client's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Initialize,
    ToolsList,
}

#[derive(Default)]
struct State {
    /// The client's `initialize` request, replayed to each new session.
    initialize: Option<Map<String, Value>>,
    /// The client sent `notifications/initialized`.
    initialized: bool,
    /// The revision the first `initialize` settled on.
    negotiated: Option<String>,
    purposes: HashMap<String, Purpose>,
    /// The current session's own tools as last listed in full (the local
    /// tools left out), to tell whether a switch changes them.
    tools: Option<Vec<Value>>,
    /// Local calls in the 2026-07-28 envelope, whose answers need a
    /// `resultType`.
    modern_calls: HashSet<String>,
}

struct Shared {
    current: Mutex<Arc<HttpClient>>,
    draining: Mutex<Vec<Arc<HttpClient>>>,
    state: Mutex<State>,
    local_tools: Vec<Value>,
    local_names: HashSet<String>,
    events: Mutex<mpsc::Sender<Event>>,
    stop_reading: Arc<AtomicBool>,
    stop_writing: AtomicBool,
    next_id: AtomicU64,
    options: Options,
}

use crate::util::threads::lock;

impl Shared {
    fn current(&self) -> Arc<HttpClient> {
        lock(&self.current).clone()
    }

    fn event(&self, event: Event) {
        let _ = lock(&self.events).send(event);
    }

    /// Writes `line` to the client, after what the current session sent.
    fn inject(&self, line: String) {
        self.current().inject(line);
    }

    fn refuse(&self, id: &str, code: i64, message: &str) {
        let error = json!({ "code": code, "message": message });
        self.inject(format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#));
    }

    fn own_id(&self, what: &str) -> String {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        format!("\"mcpserver-bridge-{what}-{n}\"")
    }

    fn remember(&self, id: &str, purpose: Purpose) {
        let mut state = lock(&self.state);
        if state.purposes.len() >= REMEMBERED {
            state.purposes.clear();
        }
        state.purposes.insert(id.to_string(), purpose);
    }
}

/// The bridge, running: see the module's documentation.
pub struct SessionBridge {
    shared: Arc<Shared>,
    events: mpsc::Receiver<Event>,
    input_ended: bool,
    reader: Option<JoinHandle<()>>,
    writer: Option<JoinHandle<()>>,
}

impl SessionBridge {
    /// Starts bridging the client on `input`/`output` to `session`.
    /// `local_tools` are the definitions (JSON objects with a `name`) of the
    /// tools the caller answers itself.
    pub fn start(
        input: File,
        output: File,
        session: Target,
        local_tools: Vec<Value>,
        options: Options,
    ) -> Result<SessionBridge, String> {
        let client = Arc::new(HttpClient::new(&session.url, session.options)?);
        let local_names = local_tools
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str).map(String::from))
            .collect();
        let (events_tx, events) = mpsc::channel();
        let shared = Arc::new(Shared {
            current: Mutex::new(client),
            draining: Mutex::new(Vec::new()),
            state: Mutex::new(State::default()),
            local_tools,
            local_names,
            events: Mutex::new(events_tx),
            stop_reading: Arc::new(AtomicBool::new(false)),
            stop_writing: AtomicBool::new(false),
            next_id: AtomicU64::new(1),
            options,
        });
        let writer = spawn_writer(&shared, output)
            .map_err(|e| format!("could not start the bridge's threads: {e}"))?;
        let reader = match spawn_reader(&shared, input) {
            Ok(reader) => reader,
            Err(e) => {
                shared.stop_writing.store(true, Ordering::SeqCst);
                let _ = writer.join();
                return Err(format!("could not start the bridge's threads: {e}"));
            }
        };
        Ok(SessionBridge {
            shared,
            events,
            input_ended: false,
            reader: Some(reader),
            writer: Some(writer),
        })
    }

    /// Waits up to `timeout` for something to do (at the end of input, for
    /// the exchanges still under way to end).
    pub fn poll(&mut self, timeout: Duration) -> Polled {
        let wait = if self.input_ended {
            Duration::ZERO
        } else {
            timeout
        };
        match self.events.recv_timeout(wait) {
            Ok(Event::Call {
                id,
                name,
                arguments,
            }) => {
                return Polled::Call {
                    id,
                    name,
                    arguments,
                }
            }
            Ok(Event::InputEnded) => self.input_ended = true,
            Ok(Event::OutputClosed) => return Polled::OutputClosed,
            Ok(Event::Panicked(message)) => return Polled::Failed(message),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Polled::Failed("the bridge's threads ended".into())
            }
        }
        if self.input_ended {
            if !timeout.is_zero() {
                self.shared.current().wait_idle(timeout);
            }
            let unanswered = self.shared.current().busy()
                + lock(&self.shared.draining)
                    .iter()
                    .map(|c| c.busy())
                    .sum::<usize>();
            return Polled::InputEnded { unanswered };
        }
        Polled::Running
    }

    /// Failures worth telling the user (on stderr) since last asked.
    pub fn take_problems(&self) -> Vec<String> {
        let mut all = self.shared.current().take_problems();
        for client in lock(&self.shared.draining).iter() {
            all.extend(client.take_problems());
        }
        all
    }

    /// Answers the local tool call `id` (JSON text, as polled) with a text
    /// result.
    pub fn answer(&self, id: &str, text: &str, is_error: bool) {
        let mut result = json!({
            "content": [{ "type": "text", "text": text }],
            "isError": is_error,
        });
        if lock(&self.shared.state).modern_calls.remove(id) {
            result["resultType"] = "complete".into();
        }
        self.shared.inject(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
        ));
    }

    /// Tells the client its tool list changed.
    pub fn notify_tools_changed(&self) {
        self.shared
            .inject(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.into());
    }

    /// Connects the client to `target` from now on. On an error the client
    /// stays connected where it was.
    pub fn switch(&self, target: Target) -> Result<Switched, String> {
        let client = Arc::new(HttpClient::new(&target.url, target.options)?);
        let tools = match self.open(&client) {
            Ok(tools) => tools,
            Err(e) => {
                client.close(self.shared.options.close_timeout);
                return Err(e);
            }
        };
        let tools_changed = {
            let mut state = lock(&self.shared.state);
            let changed = tools.is_none() || state.tools.is_none() || tools != state.tools;
            state.tools = tools;
            changed
        };
        // The writer reads the old session until it has nothing in flight,
        // then ends it (only the writer closes what it reads from).
        let old = std::mem::replace(&mut *lock(&self.shared.current), client);
        lock(&self.shared.draining).push(old);
        Ok(Switched { tools_changed })
    }

    /// Starts a session on `client` as the client started its first one,
    /// and lists its tools (`None` when the client never initialized, or
    /// the list comes in pages).
    fn open(&self, client: &HttpClient) -> Result<Option<Vec<Value>>, String> {
        let (request, negotiated, initialized) = {
            let state = lock(&self.shared.state);
            match &state.initialize {
                None => return Ok(None),
                Some(r) => (r.clone(), state.negotiated.clone(), state.initialized),
            }
        };
        let answer = self.ask(client, "init", request)?;
        if let Some(error) = answer.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("an error");
            return Err(format!("the session refused to start: {message}"));
        }
        let version = answer
            .pointer("/result/protocolVersion")
            .and_then(Value::as_str);
        if negotiated.is_some() && version != negotiated.as_deref() {
            return Err(format!(
                "the session speaks protocol revision {}, the client {}",
                version.unwrap_or("(none)"),
                negotiated.unwrap_or_default()
            ));
        }
        if initialized {
            client
                .send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
                .map_err(|e| format!("could not reach the session: {e}"))?;
        }
        let mut list = Map::new();
        list.insert("jsonrpc".into(), "2.0".into());
        list.insert("method".into(), "tools/list".into());
        let answer = self.ask(client, "tools", list)?;
        let result = answer.get("result");
        if result.and_then(|r| r.get("nextCursor")).is_some() {
            return Ok(None);
        }
        let tools = result
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array);
        Ok(tools.map(|tools| self.session_tools(tools)))
    }

    /// Sends `request` under an id of the bridge's and waits for its
    /// answer (messages before it are the new session's business alone).
    fn ask(
        &self,
        client: &HttpClient,
        what: &str,
        mut request: Map<String, Value>,
    ) -> Result<Value, String> {
        let id = self.shared.own_id(what);
        request.insert(
            "id".into(),
            serde_json::from_str(&id).expect("an id of ours"),
        );
        client
            .send(Value::Object(request).to_string().as_bytes())
            .map_err(|e| format!("could not reach the session: {e}"))?;
        let deadline = Instant::now() + self.shared.options.switch_timeout;
        let wanted: Value = serde_json::from_str(&id).expect("an id of ours");
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "the session did not answer within {} s",
                    self.shared.options.switch_timeout.as_secs()
                ));
            }
            match client.receive(left) {
                Received::Message(line) => {
                    let Ok(message) = serde_json::from_str::<Value>(&line) else {
                        continue;
                    };
                    if message.get("id") == Some(&wanted) && message.get("method").is_none() {
                        return Ok(message);
                    }
                }
                Received::Timeout => {}
                Received::Closed => return Err("the connection to the session closed".into()),
            }
        }
    }

    /// A session's tool list without the tools the bridge answers itself.
    fn session_tools(&self, tools: &[Value]) -> Vec<Value> {
        session_tools(tools, &self.shared.local_names)
    }

    /// Stops the threads and ends every session's HTTP session.
    pub fn close(mut self) {
        self.shared.stop_reading.store(true, Ordering::SeqCst);
        self.shared.stop_writing.store(true, Ordering::SeqCst);
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
        let timeout = self.shared.options.close_timeout;
        self.shared.current().close(timeout);
        for client in lock(&self.shared.draining).drain(..) {
            client.close(timeout);
        }
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

impl Drop for SessionBridge {
    fn drop(&mut self) {
        self.shared.stop_reading.store(true, Ordering::SeqCst);
        self.shared.stop_writing.store(true, Ordering::SeqCst);
    }
}

fn session_tools(tools: &[Value], local: &HashSet<String>) -> Vec<Value> {
    tools
        .iter()
        .filter(|t| {
            !t.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| local.contains(n))
        })
        .cloned()
        .collect()
}

// ---- The client's messages ----------------------------------------------------

/// What the reader needs to know of a message.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    method: Option<String>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default, rename = "_meta")]
    meta: Option<Value>,
}

/// The `_meta` key of a request in the 2026-07-28 envelope.
const MODERN_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

fn spawn_reader(shared: &Arc<Shared>, input: File) -> std::io::Result<JoinHandle<()>> {
    let shared = shared.clone();
    let failed = shared.clone();
    threads::spawn(
        "bridge-reader",
        move |message| {
            failed.event(Event::Panicked(threads::describe_panic(
                "bridge-reader",
                &message,
            )))
        },
        move || {
            let max = shared.options.max_message_size;
            let input = StoppableInput::new(input, shared.stop_reading.clone());
            let mut lines = LineReader::new(input, max);
            while let Ok(Some(frame)) = lines.next_frame() {
                match frame {
                    Frame::Line(line) if line.iter().all(u8::is_ascii_whitespace) => {}
                    Frame::Line(line) => from_client(&shared, &line),
                    Frame::Oversized { prefix, length } => {
                        let id = sniff_id(&prefix);
                        let id = id.as_ref().map_or("null", |id| id.as_json());
                        shared.refuse(
                            id,
                            -32600,
                            &format!("The message ({length} bytes) is longer than the bridge accepts ({max} bytes)."),
                        );
                    }
                }
            }
            shared.event(Event::InputEnded);
        },
    )
}

/// Routes one line from the client: a local tool's call to the caller,
/// everything else to the current session.
fn from_client(shared: &Shared, line: &[u8]) {
    let head = serde_json::from_slice::<Head>(line).ok();
    let id = head
        .as_ref()
        .and_then(|h| h.id)
        .map(|id| id.get().to_string())
        .filter(|id| id != "null");
    match (head.as_ref().and_then(|h| h.method.as_deref()), &id) {
        (Some("tools/call"), Some(id)) => {
            let params = head
                .as_ref()
                .and_then(|h| h.params)
                .and_then(|p| serde_json::from_str::<CallParams>(p.get()).ok());
            if let Some(params) = params.filter(|p| shared.local_names.contains(&p.name)) {
                if params
                    .meta
                    .as_ref()
                    .is_some_and(|m| m.get(MODERN_VERSION).is_some())
                {
                    let mut state = lock(&shared.state);
                    if state.modern_calls.len() >= REMEMBERED {
                        state.modern_calls.clear();
                    }
                    state.modern_calls.insert(id.clone());
                }
                let arguments = params.arguments.unwrap_or_else(|| json!({}));
                return shared.event(Event::Call {
                    id: id.clone(),
                    name: params.name,
                    arguments,
                });
            }
        }
        (Some("initialize"), Some(id)) => {
            if let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(line) {
                lock(&shared.state).initialize = Some(message);
            }
            shared.remember(id, Purpose::Initialize);
        }
        (Some("tools/list"), Some(id)) => shared.remember(id, Purpose::ToolsList),
        (Some("notifications/initialized"), None) => lock(&shared.state).initialized = true,
        _ => {}
    }
    if let Err(e) = shared.current().send(line) {
        match id {
            Some(id) => shared.refuse(
                &id,
                http_client::TRANSPORT_ERROR,
                &format!("mcp_bridge(): {e}"),
            ),
            None => shared.event(Event::Panicked(format!("mcpserver bridge: {e}"))),
        }
    }
}

// ---- The sessions' messages ---------------------------------------------------

fn spawn_writer(shared: &Arc<Shared>, output: File) -> std::io::Result<JoinHandle<()>> {
    let shared = shared.clone();
    let failed = shared.clone();
    threads::spawn(
        "bridge-writer",
        move |message| {
            failed.event(Event::Panicked(threads::describe_panic(
                "bridge-writer",
                &message,
            )))
        },
        move || {
            let mut output = std::io::BufWriter::new(output);
            let mut write = |line: String| {
                let line = from_session(&shared, line);
                output
                    .write_all(line.as_bytes())
                    .and_then(|_| output.write_all(b"\n"))
                    .and_then(|_| output.flush())
                    .is_ok()
            };
            let mut left_after_stop = STOP_DRAIN;
            loop {
                let stopping = shared.stop_writing.load(Ordering::SeqCst);
                if stopping {
                    if left_after_stop == 0 {
                        return;
                    }
                    left_after_stop -= 1;
                }
                // What sessions switched away from still send comes first.
                let draining: Vec<Arc<HttpClient>> = lock(&shared.draining).clone();
                for client in draining {
                    while let Received::Message(line) = client.receive(Duration::ZERO) {
                        if !write(line) {
                            return shared.event(Event::OutputClosed);
                        }
                    }
                }
                end_drained(&shared);
                let current = shared.current();
                let wait = if stopping { Duration::ZERO } else { WAIT };
                match current.receive(wait) {
                    Received::Message(line) => {
                        if !write(line) {
                            return shared.event(Event::OutputClosed);
                        }
                    }
                    Received::Timeout if stopping => return,
                    Received::Timeout => {}
                    // Closed after a switch: the new session is read next.
                    Received::Closed if !Arc::ptr_eq(&current, &shared.current()) => {}
                    Received::Closed => return,
                }
            }
        },
    )
}

/// Ends the HTTP sessions of sessions switched away from that have nothing
/// in flight any more (and of the oldest, past [`MAX_DRAINING`]). Called by
/// the writer alone, so no session is closed while it is read from.
fn end_drained(shared: &Shared) {
    let ended: Vec<Arc<HttpClient>> = {
        let mut draining = lock(&shared.draining);
        let (idle, mut busy): (Vec<_>, Vec<_>) = std::mem::take(&mut *draining)
            .into_iter()
            .partition(|c| c.busy() == 0);
        let excess = busy.len().saturating_sub(MAX_DRAINING);
        let mut ended = idle;
        ended.extend(busy.drain(..excess));
        *draining = busy;
        ended
    };
    for client in ended {
        let timeout = shared.options.close_timeout;
        std::thread::spawn(move || client.close(timeout));
    }
}

#[derive(Deserialize)]
struct AnswerHead<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    method: Option<&'a str>,
}

/// The line to write for a message of a session: answers the bridge adds
/// to are rewritten, others pass as they are.
fn from_session(shared: &Shared, line: String) -> String {
    let Ok(head) = serde_json::from_str::<AnswerHead>(&line) else {
        return line;
    };
    let (Some(id), None) = (head.id, head.method) else {
        return line;
    };
    let Some(purpose) = lock(&shared.state).purposes.remove(id.get()) else {
        return line;
    };
    let Ok(Value::Object(mut message)) = serde_json::from_str::<Value>(&line) else {
        return line;
    };
    let Some(Value::Object(result)) = message.get_mut("result") else {
        return line;
    };
    match purpose {
        Purpose::Initialize => {
            add_note(result, &shared.options.note);
            declare_tool_changes(result);
            lock(&shared.state).negotiated = result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .map(String::from);
        }
        Purpose::ToolsList => {
            if let Some(tools) = add_local_tools(result, &shared.local_tools, &shared.local_names) {
                lock(&shared.state).tools = Some(tools);
            }
        }
    }
    Value::Object(message).to_string()
}

fn add_note(result: &mut Map<String, Value>, note: &str) {
    if note.is_empty() {
        return;
    }
    let instructions = match result.get("instructions").and_then(Value::as_str) {
        Some(text) if !text.is_empty() => format!("{text}\n\n{note}"),
        _ => note.to_string(),
    };
    result.insert("instructions".into(), Value::String(instructions));
}

/// The tools change when the bridge switches sessions: the client is told
/// so it listens for that.
fn declare_tool_changes(result: &mut Map<String, Value>) {
    let capabilities = result
        .entry("capabilities")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(capabilities) = capabilities {
        let tools = capabilities
            .entry("tools")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(tools) = tools {
            tools.insert("listChanged".into(), Value::Bool(true));
        }
    }
}

/// Adds the local tools to the last page of a session's tool list (a
/// session's tools of the same names give way). Returns the session's own
/// tools when the list came in one page.
fn add_local_tools(
    result: &mut Map<String, Value>,
    local_tools: &[Value],
    local_names: &HashSet<String>,
) -> Option<Vec<Value>> {
    if result.contains_key("nextCursor") {
        return None;
    }
    let Some(Value::Array(tools)) = result.get_mut("tools") else {
        return None;
    };
    let own = session_tools(tools, local_names);
    *tools = own.clone();
    tools.extend(local_tools.iter().cloned());
    Some(own)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(tools: &[Value]) -> Vec<&str> {
        tools.iter().map(|t| t["name"].as_str().unwrap()).collect()
    }

    #[test]
    fn the_note_is_added_to_the_instructions() {
        let mut result = json!({"instructions": "Use the tools."})
            .as_object()
            .unwrap()
            .clone();
        add_note(&mut result, "Reached through the bridge.");
        assert_eq!(
            result["instructions"],
            "Use the tools.\n\nReached through the bridge."
        );
        let mut bare = Map::new();
        add_note(&mut bare, "Alone.");
        assert_eq!(bare["instructions"], "Alone.");
    }

    #[test]
    fn local_tools_replace_session_tools_of_the_same_name_on_the_last_page() {
        let local = vec![
            json!({"name": "list_r_sessions"}),
            json!({"name": "select_r_session"}),
        ];
        let local_names: HashSet<String> = ["list_r_sessions", "select_r_session"]
            .map(String::from)
            .into();
        let mut result = json!({"tools": [{"name": "a"}, {"name": "list_r_sessions", "x": 1}]})
            .as_object()
            .unwrap()
            .clone();
        let own = add_local_tools(&mut result, &local, &local_names).unwrap();
        assert_eq!(names(&own), ["a"]);
        assert_eq!(
            names(result["tools"].as_array().unwrap()),
            ["a", "list_r_sessions", "select_r_session"]
        );
        assert!(result["tools"][1].get("x").is_none());
        let mut page = json!({"tools": [{"name": "a"}], "nextCursor": "2"})
            .as_object()
            .unwrap()
            .clone();
        assert!(add_local_tools(&mut page, &local, &local_names).is_none());
        assert_eq!(names(page["tools"].as_array().unwrap()), ["a"]);
    }

    #[test]
    fn tool_changes_are_declared_whatever_the_server_said() {
        let mut result = json!({"capabilities": {"tools": {"listChanged": false}}})
            .as_object()
            .unwrap()
            .clone();
        declare_tool_changes(&mut result);
        assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
        let mut bare = Map::new();
        declare_tool_changes(&mut bare);
        assert_eq!(bare["capabilities"]["tools"]["listChanged"], true);
    }
}
