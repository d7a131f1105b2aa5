//! The protocol engine, revision by revision, with every message it writes
//! checked against the official wire schema of the revision in use.

mod common;

use common::{check_message, text_result};
use mcp_core::engine::registry::Registry;
use mcp_core::engine::result::{Block, Content, ToolResult};
use mcp_core::engine::{
    Config, Engine, InputMode, Job, Outcome, Output, Progress, ServerInfo, PROGRESS_INTERVAL,
};
use mcp_core::protocol::logging::LogLevel;
use mcp_core::protocol::revision::Revision;
use mcp_core::protocol::tool::ToolDef;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const MODERN: &str = "2026-07-28";

fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef {
            name: "add".into(),
            title: Some("Add numbers".into()),
            description: Some("Adds x and y".into()),
            input_schema: json!({"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},
                                 "required":["x","y"],"additionalProperties":false}),
            annotations: json!({"readOnlyHint": true}).as_object().cloned(),
            ..ToolDef::default()
        },
        ToolDef {
            name: "stats".into(),
            description: Some("Summary statistics".into()),
            input_schema: json!({"type":"object","properties":{},"additionalProperties":false}),
            output_schema: Some(
                json!({"type":"object","properties":{"mean":{"type":"number"}},"required":["mean"]}),
            ),
            ..ToolDef::default()
        },
        ToolDef {
            name: "series".into(),
            description: Some("A numeric series".into()),
            input_schema: json!({"type":"object","properties":{},"additionalProperties":false}),
            output_schema: Some(json!({"type":"array","items":{"type":"number"}})),
            icons: Some(json!([{"src":"https://example.com/icon.png","mimeType":"image/png"}])),
            ..ToolDef::default()
        },
    ]
}

struct Harness {
    engine: Engine,
    registry: Arc<Registry>,
    jobs: Vec<Job>,
    cancels: Vec<u64>,
    due: Vec<(u64, Duration)>,
    answers: Vec<(u64, Result<Value, String>)>,
    rev: Revision,
}

impl Harness {
    fn new() -> Harness {
        let config = Config {
            info: ServerInfo {
                name: "test-server".into(),
                version: "1.2.3".into(),
                title: Some("Test Server".into()),
            },
            instructions: Some("Use add to add.".into()),
            ..Config::default()
        };
        let registry = Arc::new(Registry::new(tools()).unwrap());
        Harness {
            engine: Engine::new(Arc::new(config), registry.clone()),
            registry,
            jobs: Vec::new(),
            cancels: Vec::new(),
            due: Vec::new(),
            answers: Vec::new(),
            rev: Revision::LATEST_LEGACY,
        }
    }

    fn collect(&mut self, out: Vec<Output>) -> Vec<Value> {
        let mut written = Vec::new();
        for o in out {
            match o {
                Output::Write(line) | Output::ToListener(_, line) => {
                    assert!(!line.contains('\n'), "a message spans lines: {line}");
                    written.push(serde_json::from_str(&line).unwrap());
                }
                // As the server's poll does: arguments that fail their
                // schema answer the call, which never runs.
                Output::Run(mut job) => match job.read_arguments(&self.registry) {
                    Ok(()) => self.jobs.push(*job),
                    Err(refusal) => {
                        let mut more = Vec::new();
                        self.engine
                            .on_completed(job.id, Outcome::Done(refusal), &mut more);
                        written.extend(self.collect(more));
                    }
                },
                Output::Cancel(job) => self.cancels.push(job),
                Output::ProgressDue(job, delay) => self.due.push((job, delay)),
                Output::Answer(job, answer) => self.answers.push((job, answer)),
                Output::TaskAlarm(_)
                | Output::CancelElsewhere(_)
                | Output::TaskStatus { .. }
                | Output::WatchTasks { .. }
                | Output::UnwatchTasks(_) => {}
            }
        }
        written
    }

    fn send(&mut self, line: &str) -> Vec<Value> {
        self.send_bytes(line.as_bytes())
    }

    fn send_bytes(&mut self, line: &[u8]) -> Vec<Value> {
        let mut out = Vec::new();
        self.engine.on_line(line, &mut out);
        self.collect(out)
    }

    fn send_value(&mut self, msg: Value) -> Vec<Value> {
        self.send(&msg.to_string())
    }

    /// Sends one request and returns its only response.
    fn request(&mut self, msg: Value) -> Value {
        let mut got = self.send_value(msg.clone());
        assert_eq!(got.len(), 1, "one response to {msg}, got {got:?}");
        got.remove(0)
    }

    fn complete(&mut self, job: u64, outcome: Outcome) -> Vec<Value> {
        let mut out = Vec::new();
        self.engine.on_completed(job, outcome, &mut out);
        self.collect(out)
    }

    fn progress(
        &mut self,
        job: u64,
        value: f64,
        message: Option<&str>,
        now: Instant,
    ) -> Vec<Value> {
        let mut out = Vec::new();
        let update = Progress {
            progress: value,
            total: Some(10.0),
            message: message.map(str::to_string),
        };
        self.engine.on_progress(job, update, now, &mut out);
        self.collect(out)
    }

    fn log(&mut self, job: u64, level: LogLevel, text: &str) -> Vec<Value> {
        let mut out = Vec::new();
        self.engine.on_log(job, level, json!(text), &mut out);
        self.collect(out)
    }

    fn initialize(&mut self, version: &str) -> Value {
        let response = self.request(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name":"test-client","version":"9"}}}),
        );
        if let Some(rev) = response["result"]["protocolVersion"]
            .as_str()
            .and_then(Revision::parse)
        {
            self.rev = rev;
            check_message(rev, &response, Some("InitializeResult"));
        }
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        response
    }
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name":"modern-client","version":"2"}
    })
}

fn modern(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
}

fn raw(text: &str) -> Option<Box<RawValue>> {
    Some(RawValue::from_string(text.into()).unwrap())
}

#[test]
fn initialize_echoes_every_legacy_revision() {
    for version in LEGACY {
        let mut h = Harness::new();
        let r = h.initialize(version);
        assert_eq!(r["id"], 0);
        let result = &r["result"];
        assert_eq!(result["protocolVersion"], version);
        assert_eq!(
            result["capabilities"],
            json!({"logging":{},"tools":{"listChanged":true}})
        );
        assert_eq!(result["serverInfo"]["name"], "test-server");
        assert_eq!(result["serverInfo"]["version"], "1.2.3");
        assert_eq!(
            result["instructions"], "Use add to add.",
            "instructions reach {version} too"
        );
        let has_title = result["serverInfo"].get("title").is_some();
        assert_eq!(has_title, version >= "2025-06-18", "{version}");
    }
}

#[test]
fn initialize_counter_offers_the_latest_legacy_revision() {
    for version in ["2024-10-07", "1999-01-01", "garbage", MODERN] {
        let mut h = Harness::new();
        assert_eq!(
            h.initialize(version)["result"]["protocolVersion"],
            "2025-11-25",
            "{version}"
        );
    }
}

#[test]
fn initialize_checks_its_params() {
    let mut h = Harness::new();
    for params in [
        json!(null),
        json!({"capabilities":{},"clientInfo":{"name":"a","version":"1"}}),
        json!({"protocolVersion":"","capabilities":{},"clientInfo":{"name":"a","version":"1"}}),
        json!({"protocolVersion":"2025-11-25","capabilities":[],"clientInfo":{"name":"a","version":"1"}}),
        json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a"}}),
    ] {
        let r = h.request(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":params}));
        assert_eq!(r["error"]["code"], -32602, "{params}");
        assert_eq!(r["error"]["message"], "Invalid initialize params");
    }
    // A failed initialize leaves the server uninitialised.
    let r = h.request(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
    assert_eq!(r["error"]["code"], -32600);
}

#[test]
fn ping_works_before_and_after_initialize() {
    let mut h = Harness::new();
    let r = h.request(json!({"jsonrpc":"2.0","id":"p1","method":"ping"}));
    assert_eq!(r, json!({"jsonrpc":"2.0","id":"p1","result":{}}));
    h.initialize("2025-06-18");
    let r = h.request(json!({"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":1}}));
    assert_eq!(r["result"], json!({}));
    check_message(h.rev, &r, Some("EmptyResult"));
}

#[test]
fn requests_before_initialize_get_a_prompt_error() {
    let mut h = Harness::new();
    for method in ["tools/list", "tools/call", "resources/list"] {
        let r = h.request(json!({"jsonrpc":"2.0","id":5,"method":method}));
        assert_eq!(r["id"], 5);
        assert_eq!(r["error"]["code"], -32600, "{method}");
        assert_eq!(r["error"]["message"], "Server not initialized");
        assert!(r["error"]["data"]["supported"].as_array().unwrap().len() == 5);
        check_message(Revision::V2025_11_25, &r, None);
    }
}

#[test]
fn notifications_and_client_responses_are_never_answered() {
    let mut h = Harness::new();
    h.initialize("2025-11-25");
    for line in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{"a":1}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":2}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":6,"error":{"code":1,"message":"x"}}"#,
        "",
        "   ",
    ] {
        assert!(h.send(line).is_empty(), "{line}");
    }
    assert!(h.jobs.is_empty(), "a tools/call notification must not run");
}

#[test]
fn malformed_input_gets_json_rpc_errors() {
    let mut h = Harness::new();
    let r = h.send("{not json");
    assert_eq!(r[0]["error"]["code"], -32700);
    assert_eq!(r[0]["id"], Value::Null);
    let r = h.send(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#);
    assert_eq!(r[0]["error"]["code"], -32600);
    assert_eq!(r[0]["id"], Value::Null);
    let r = h.send(r#"{"jsonrpc":"1.0","id":"abc","method":"ping"}"#);
    assert_eq!(r[0]["error"]["code"], -32600);
    assert_eq!(r[0]["id"], "abc");
    let r = h.send("null");
    assert_eq!(r[0]["error"]["code"], -32600);
    let r = h.send(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    assert_eq!(
        r[0]["error"]["code"], -32600,
        "no batches without 2025-03-26"
    );
    for msg in &r {
        check_message(Revision::V2025_11_25, msg, None);
    }
}

#[test]
fn invalid_utf8_in_a_string_is_answered_on_the_request_id() {
    let mut h = Harness::new();
    h.initialize("2025-06-18");
    let line = b"{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"x\":\"\xff\"}}}";
    let r = h.send_bytes(line);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["id"], 41, "{}", r[0]);
    assert_eq!(r[0]["error"]["code"], -32700);
    assert!(r[0]["error"]["data"]["reason"]
        .as_str()
        .unwrap()
        .contains("invalid UTF-8"));
    check_message(h.rev, &r[0], None);
    assert!(h.jobs.is_empty(), "nothing ran on the lossy text");
    // An id that is itself not UTF-8 is never guessed at.
    let r = h.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}");
    assert_eq!(r[0]["id"], Value::Null);
    assert_eq!(r[0]["error"]["code"], -32700);
    // The server goes on serving.
    let r = h.request(json!({"jsonrpc":"2.0","id":42,"method":"ping"}));
    assert_eq!(r["result"], json!({}));
}

/// A tool call waiting for the client's answer to its elicitation: the
/// harness, the job and the id of the server's request.
fn waiting_for_an_answer() -> (Harness, Job, Value) {
    let mut h = Harness::new();
    h.request(
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},
        "clientInfo":{"name":"c","version":"1"}}}),
    );
    h.send_value(json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
                        "params":{"name":"add","arguments":{"x":1,"y":2}}}));
    let job = h.jobs.pop().unwrap();
    let mut out = Vec::new();
    let request = json!({"method":"elicitation/create","params":{"message":"Name?",
        "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}});
    h.engine.on_ask(job.id, "input-1".into(), request, &mut out);
    let ask_id = h.collect(out)[0]["id"].clone();
    (h, job, ask_id)
}

/// The one answer the waiting `job` got.
fn the_only_answer(h: &mut Harness, job: u64) -> Result<Value, String> {
    assert_eq!(h.answers.len(), 1);
    let (answered_job, answer) = h.answers.pop().unwrap();
    assert_eq!(answered_job, job);
    answer
}

#[test]
fn an_unreadable_answer_to_our_question_ends_the_wait() {
    let (mut h, job, ask_id) = waiting_for_an_answer();
    // The user's answer holds a byte that is not UTF-8.
    let mut bad = format!(
        r#"{{"jsonrpc":"2.0","id":{ask_id},"result":{{"action":"accept","content":{{"name":"#
    )
    .into_bytes();
    bad.extend_from_slice(b"\"\xff\"}}}");
    assert!(
        h.send_bytes(&bad).is_empty(),
        "a response is never answered"
    );
    let answer = the_only_answer(&mut h, job.id);
    assert!(answer.unwrap_err().contains("could not be read"));
}

#[test]
fn an_answer_to_our_question_too_large_to_read_ends_the_wait() {
    let (mut h, job, ask_id) = waiting_for_an_answer();
    // The user's answer is longer than the server reads: only its start is
    // seen. The tool waiting for it learns why, and the client gets no
    // error for a request it never sent.
    let prefix = format!(r#"{{"jsonrpc":"2.0","id":{ask_id},"result":{{"action":"accept","#);
    let mut out = Vec::new();
    h.engine
        .on_oversized(prefix.as_bytes(), 64 * 1024 * 1024, &mut out);
    assert!(h.collect(out).is_empty(), "a response is never answered");
    let answer = the_only_answer(&mut h, job.id);
    assert!(answer.unwrap_err().contains("too large"));
}

#[test]
fn an_answer_to_our_question_of_the_wrong_shape_ends_the_wait() {
    let (mut h, job, ask_id) = waiting_for_an_answer();
    // Our id, but neither `result` nor `error`: no answer can be read from
    // it. The tool learns so, and the client gets no error for a request it
    // never sent.
    assert!(
        h.send_value(json!({"jsonrpc":"2.0","id":ask_id,"outcome":{"action":"accept"}}))
            .is_empty(),
        "a response is never answered"
    );
    let answer = the_only_answer(&mut h, job.id);
    assert!(answer.unwrap_err().contains("could not be read"));
}

#[test]
fn ids_round_trip_exactly_in_responses() {
    let mut h = Harness::new();
    for id in [
        "9007199254740993",
        "123456789012345678901234567890",
        "-3",
        "\"ünï\\u00e7ode\"",
    ] {
        let mut out = Vec::new();
        h.engine.on_line(
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).as_bytes(),
            &mut out,
        );
        let Output::Write(line) = &out[0] else {
            panic!()
        };
        let expected_id = if id.starts_with('"') {
            "\"ünïçode\"".to_string()
        } else {
            id.to_string()
        };
        assert!(line.contains(&format!("\"id\":{expected_id},")), "{line}");
    }
}

#[test]
fn tools_list_is_one_page_downgraded_per_revision() {
    for version in LEGACY {
        let mut h = Harness::new();
        h.initialize(version);
        let r = h.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
        check_message(h.rev, &r, Some("ListToolsResult"));
        let result = r["result"].as_object().unwrap();
        assert_eq!(
            result.keys().collect::<Vec<_>>(),
            ["tools"],
            "no nextCursor key"
        );
        let tools = result["tools"].as_array().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["add", "stats", "series"]);
        assert_eq!(
            tools[0]["annotations"].is_object(),
            version >= "2025-03-26",
            "{version}"
        );
        assert_eq!(
            tools[0].get("title").is_some(),
            version >= "2025-06-18",
            "{version}"
        );
        assert_eq!(
            tools[1].get("outputSchema").is_some(),
            version >= "2025-06-18",
            "{version}"
        );
        assert_eq!(
            tools[2].get("icons").is_some(),
            version >= "2025-11-25",
            "{version}"
        );
        if version >= "2025-06-18" {
            assert_eq!(
                tools[2]["outputSchema"]["type"], "object",
                "array roots are wrapped"
            );
        }
        for params in [json!({}), json!(null), json!({"cursor": null})] {
            let r =
                h.request(json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":params}));
            assert!(r["result"]["tools"].is_array(), "{params}");
        }
        let r = h.request(
            json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"page-2"}}),
        );
        assert_eq!(r["error"]["code"], -32602);
        check_message(h.rev, &r, None);
    }
}

#[test]
fn tools_call_runs_a_job_and_answers_with_its_result() {
    for version in LEGACY {
        let mut h = Harness::new();
        h.initialize(version);
        let sent = h.send_value(json!({"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{
            "name":"add","arguments":{"x":1.5,"y":2},"_meta":{"progressToken":12345678901234567890u128}}}));
        assert!(sent.is_empty(), "the answer waits for R");
        let job = h.jobs.pop().unwrap();
        assert_eq!(job.tool, 0);
        assert_eq!(Value::Object(job.arguments.clone()), json!({"x":1.5,"y":2}));
        assert_eq!(
            job.context.progress_token.as_deref(),
            Some("12345678901234567890")
        );
        assert_eq!(job.context.revision.as_str(), version);
        assert_eq!(
            job.context.client_info.as_ref().unwrap()["name"],
            "test-client"
        );
        assert_eq!(h.engine.pending_jobs(), 1);
        let r = h.complete(job.id, Outcome::Done(text_result("3.5")));
        assert_eq!(r.len(), 1);
        assert_eq!(r[0]["id"], "c1");
        assert_eq!(r[0]["result"]["content"][0]["text"], "3.5");
        assert_eq!(r[0]["result"]["isError"], false);
        check_message(h.rev, &r[0], Some("CallToolResult"));
        assert_eq!(h.engine.pending_jobs(), 0);
        // A late second outcome for the same job is ignored.
        assert!(h
            .complete(job.id, Outcome::Done(text_result("again")))
            .is_empty());
    }
}

#[test]
fn tools_call_refuses_bad_requests() {
    let mut h = Harness::new();
    h.initialize("2025-11-25");
    for params in [
        json!(null),
        json!({}),
        json!({"name":["add"]}),
        json!({"name":"add","arguments":[1,2]}),
        json!({"name":"add","arguments":"x"}),
    ] {
        let r = h.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":params}));
        assert_eq!(r["error"]["code"], -32602, "{params}");
        check_message(h.rev, &r, None);
    }
    for name in ["nope", "", "ad", "ADD"] {
        let r =
            h.request(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":name}}));
        assert_eq!(r["error"]["code"], -32602);
        assert_eq!(r["error"]["message"], format!("Unknown tool: {name}"));
    }
    assert!(h.jobs.is_empty());
}

#[test]
fn invalid_arguments_are_a_tool_error_the_model_can_read() {
    let mut h = Harness::new();
    h.initialize("2025-11-25");
    let r = h.request(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"add","arguments":{"x":"three","y":2}}}),
    );
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        r["result"]["content"][0]["text"],
        "Invalid arguments for tool \"add\": x: expected a number, got \"three\""
    );
    check_message(h.rev, &r, Some("CallToolResult"));
    let r = h.request(
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{
        "name":"add","arguments":{"x":1,"val":2}}}),
    );
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("missing required argument \"y\""), "{text}");
    assert!(text.contains("unexpected argument \"val\""), "{text}");
    assert!(h.jobs.is_empty(), "R never sees invalid arguments");
}

#[test]
fn null_means_omitted_for_optional_arguments() {
    let mut h = Harness::new();
    h.initialize("2025-11-25");
    h.send_value(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"add","arguments":{"x":1,"y":2,"z":null}}}),
    );
    let job = h
        .jobs
        .pop()
        .expect("an optional null is dropped, not refused");
    assert_eq!(Value::Object(job.arguments), json!({"x":1,"y":2}));
    let r = h.request(
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{
        "name":"add","arguments":{"x":null,"y":2}}}),
    );
    assert_eq!(
        r["result"]["content"][0]["text"],
        "Invalid arguments for tool \"add\": x: expected a number, got null"
    );
}

#[test]
fn output_schemas_are_enforced() {
    let mut h = Harness::new();
    h.initialize("2025-11-25");
    h.send_value(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stats"}}));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Done(text_result("no structure")));
    assert_eq!(r[0]["error"]["code"], -32603);
    assert_eq!(r[0]["error"]["data"]["tool"], "stats");
    check_message(h.rev, &r[0], None);

    h.send_value(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stats"}}));
    let job = h.jobs.pop().unwrap();
    let mut good = text_result(r#"{"mean":2.5}"#);
    good.structured = raw(r#"{"mean":2.5}"#);
    let r = h.complete(job.id, Outcome::Done(good));
    assert_eq!(r[0]["result"]["structuredContent"], json!({"mean":2.5}));
    check_message(h.rev, &r[0], Some("CallToolResult"));

    // An error result needs no structured content.
    h.send_value(json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"stats"}}));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Done(ToolResult::error("failed")));
    assert_eq!(r[0]["result"]["isError"], true);
}

#[test]
fn array_results_are_wrapped_for_legacy_clients_and_bare_for_modern_ones() {
    let mut h = Harness::new();
    h.initialize("2025-06-18");
    let mut series = text_result("[1,2,3]");
    series.structured = raw("[1,2,3]");
    h.send_value(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"series"}}));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Done(series.clone()));
    assert_eq!(
        r[0]["result"]["structuredContent"],
        json!({"result":[1,2,3]})
    );
    check_message(h.rev, &r[0], Some("CallToolResult"));

    h.send_value(modern(2, "tools/call", json!({"name":"series"})));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Done(series));
    assert_eq!(r[0]["result"]["structuredContent"], json!([1, 2, 3]));
    check_message(Revision::V2026_07_28, &r[0], Some("CallToolResult"));
}

#[test]
fn new_content_types_are_refused_whole_for_old_revisions() {
    let audio = ToolResult {
        content: vec![Block {
            content: Content::Audio {
                data: "UklGRg==".into(),
                mime_type: "audio/wav".into(),
            },
            annotations: None,
            meta: None,
        }],
        structured: None,
        is_error: false,
        meta: None,
    };
    let mut h = Harness::new();
    h.initialize("2024-11-05");
    h.send_value(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Done(audio.clone()));
    assert_eq!(r[0]["result"]["isError"], true);
    check_message(h.rev, &r[0], Some("CallToolResult"));
    let mut h = Harness::new();
    h.initialize("2025-03-26");
    h.send_value(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Done(audio));
    assert_eq!(r[0]["result"]["content"][0]["type"], "audio");
    check_message(h.rev, &r[0], Some("CallToolResult"));
}

#[test]
fn timeouts_and_failures_are_reported() {
    let mut h = Harness::new();
    h.initialize("2025-11-25");
    h.send_value(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::TimedOut(Duration::from_millis(2500)));
    assert_eq!(r[0]["result"]["isError"], true);
    assert_eq!(
        r[0]["result"]["content"][0]["text"],
        "Tool \"add\" timed out after 2.5 seconds and was stopped."
    );
    h.send_value(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Failed("no R".into()));
    assert_eq!(r[0]["error"]["code"], -32603);
    check_message(h.rev, &r[0], None);
}

#[test]
fn cancelling_a_call_silences_it() {
    let mut h = Harness::new();
    h.initialize("2025-11-25");
    h.send_value(json!({"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    // Cancels for other ids are ignored.
    h.send(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"other"}}"#,
    );
    h.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#);
    assert!(h.cancels.is_empty());
    h.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"user"}}"#);
    assert_eq!(h.cancels, vec![job.id]);
    // Even a result that raced the cancel is not sent.
    assert!(h
        .complete(job.id, Outcome::Done(text_result("late")))
        .is_empty());
    assert_eq!(h.engine.pending_jobs(), 0);
    // The next call works normally.
    h.send_value(json!({"jsonrpc":"2.0","id":"next","method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    assert_eq!(h.complete(job.id, Outcome::Cancelled).len(), 0);
}

#[test]
fn modern_requests_are_served_without_a_handshake() {
    let mut h = Harness::new();
    let r = h.request(modern(1, "server/discover", json!({})));
    let result = &r["result"];
    assert_eq!(result["supportedVersions"], json!([MODERN]));
    assert_eq!(
        result["capabilities"]["tools"],
        json!({"listChanged": true})
    );
    assert_eq!(result["instructions"], "Use add to add.");
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["cacheScope"], "public");
    assert!(result["ttlMs"].as_u64().is_some());
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "test-server"
    );
    check_message(Revision::V2026_07_28, &r, Some("DiscoverResult"));

    let r = h.request(modern(2, "tools/list", json!({})));
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["cacheScope"], "public");
    assert!(r["result"].get("nextCursor").is_none());
    assert!(r["result"]["tools"][2].get("execution").is_none());
    check_message(Revision::V2026_07_28, &r, Some("ListToolsResult"));

    h.send_value(modern(
        3,
        "tools/call",
        json!({"name":"add","arguments":{"x":1,"y":2}}),
    ));
    let job = h.jobs.pop().unwrap();
    assert_eq!(job.context.revision, Revision::V2026_07_28);
    assert_eq!(
        job.context.client_info.as_ref().unwrap()["name"],
        "modern-client"
    );
    assert!(job
        .context
        .meta
        .as_ref()
        .unwrap()
        .contains_key("io.modelcontextprotocol/protocolVersion"));
    let r = h.complete(job.id, Outcome::Done(text_result("3")));
    assert_eq!(r[0]["result"]["resultType"], "complete");
    assert_eq!(
        r[0]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
        "1.2.3"
    );
    check_message(Revision::V2026_07_28, &r[0], Some("CallToolResult"));

    let r = h.request(modern(
        4,
        "tools/call",
        json!({"name":"add","arguments":{"x":"a","y":2}}),
    ));
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(r["result"]["resultType"], "complete");
    check_message(Revision::V2026_07_28, &r, Some("CallToolResult"));
}

#[test]
fn modern_envelope_errors() {
    let mut h = Harness::new();
    let mut no_caps = modern(1, "tools/list", json!({}));
    no_caps["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let r = h.request(no_caps);
    assert_eq!(r["error"]["code"], -32602);
    check_message(Revision::V2026_07_28, &r, None);

    let mut future = modern(2, "server/discover", json!({}));
    future["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let r = h.request(future);
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(r["error"]["data"]["requested"], "2099-01-01");
    assert_eq!(r["error"]["data"]["supported"], json!([MODERN]));
    check_message(Revision::V2026_07_28, &r, None);
    common::assert_valid(Revision::V2026_07_28, "UnsupportedProtocolVersionError", &r);

    // A modern-looking envelope naming a legacy revision is not a modern request.
    let mut legacy_in_meta = modern(3, "tools/list", json!({}));
    legacy_in_meta["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] =
        json!("2025-11-25");
    assert_eq!(h.request(legacy_in_meta)["error"]["code"], -32022);

    for method in ["ping", "logging/setLevel", "resources/subscribe"] {
        let r = h.request(modern(4, method, json!({})));
        assert_eq!(r["error"]["code"], -32601, "{method}");
    }
    let r = h.request(modern(5, "prompts/list", json!({})));
    assert_eq!(r["error"]["code"], -32601);
    let mut bad_level = modern(6, "tools/list", json!({}));
    bad_level["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("loud");
    assert_eq!(h.request(bad_level)["error"]["code"], -32602);
}

/// A 2026-07-28 call of `add` whose request declared `caps`, stopped by its
/// handler at an input request; returns what the call was answered with.
fn modern_call_stopped_at_input(h: &mut Harness, id: u64, caps: Value) -> (Job, Vec<Value>) {
    let mut call = modern(
        id,
        "tools/call",
        json!({"name":"add","arguments":{"x":1,"y":2}}),
    );
    call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps;
    assert!(h.send_value(call).is_empty());
    let job = h.jobs.pop().unwrap();
    let request = json!({"method":"elicitation/create","params":{"message":"Name?",
        "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}});
    let key = "input-1".to_string();
    let answered = h.complete(job.id, Outcome::InputRequired { key, request });
    (job, answered)
}

#[test]
fn modern_input_without_the_capability_is_a_missing_capability_error() {
    let mut h = Harness::new();
    let (job, r) = modern_call_stopped_at_input(&mut h, 1, json!({}));
    assert_eq!(job.context.input, InputMode::MissingCapability);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["id"], 1);
    assert!(r[0].get("result").is_none(), "not a tool result: {}", r[0]);
    assert_eq!(r[0]["error"]["code"], -32021);
    assert_eq!(
        r[0]["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}})
    );
    check_message(Revision::V2026_07_28, &r[0], None);
    common::assert_valid(
        Revision::V2026_07_28,
        "MissingRequiredClientCapabilityError",
        &r[0],
    );
    // Declared, the same stop is an input_required round.
    let (job, r) = modern_call_stopped_at_input(&mut h, 2, json!({"elicitation": {}}));
    assert_eq!(job.context.input, InputMode::Retry);
    assert_eq!(r[0]["result"]["resultType"], "input_required");
    check_message(Revision::V2026_07_28, &r[0], Some("InputRequiredResult"));
    // Older revisions keep the tool error: the handler learns input is unavailable.
    h.initialize("2025-06-18");
    h.send_value(json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
                        "params":{"name":"add","arguments":{"x":1,"y":2}}}));
    assert!(matches!(
        h.jobs.pop().unwrap().context.input,
        InputMode::Unavailable(_)
    ));
}

#[test]
fn both_eras_share_one_process() {
    let mut h = Harness::new();
    // A dual-era client probes first, then falls back to initialize.
    assert!(h.request(modern(1, "server/discover", json!({})))["result"].is_object());
    h.initialize("2025-06-18");
    let legacy = h.request(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
    assert!(legacy["result"].get("resultType").is_none());
    let modern_list = h.request(modern(3, "tools/list", json!({})));
    assert_eq!(modern_list["result"]["resultType"], "complete");
}

#[test]
fn an_unsupported_version_lists_only_versions_a_retry_can_use() {
    let mut h = Harness::new();
    let advertised =
        h.request(modern(1, "server/discover", json!({})))["result"]["supportedVersions"].clone();
    for requested in ["2099-01-01", "2025-11-25", "2024-11-05"] {
        let mut probe = modern(2, "tools/list", json!({}));
        probe["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(requested);
        let r = h.request(probe);
        assert_eq!(r["error"]["code"], -32022, "{requested}");
        let supported = &r["error"]["data"]["supported"];
        assert_eq!(
            supported, &advertised,
            "{requested}: as server/discover says"
        );
        common::assert_valid(Revision::V2026_07_28, "UnsupportedProtocolVersionError", &r);
        // A client that retries with any listed version is served.
        for version in supported.as_array().unwrap() {
            let mut retry = modern(3, "tools/list", json!({}));
            retry["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = version.clone();
            let r = h.request(retry);
            assert!(
                r["result"]["tools"].is_array(),
                "{requested} -> {version}: {r}"
            );
        }
    }
}

#[test]
fn modern_only_requests_without_a_version_name_what_is_missing() {
    let version_key = "params._meta[\"io.modelcontextprotocol/protocolVersion\"]";
    let caps_key = "params._meta[\"io.modelcontextprotocol/clientCapabilities\"]";
    let caps_only = json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}});
    let info_only =
        json!({"_meta": {"io.modelcontextprotocol/clientInfo": {"name":"c","version":"1"}}});
    let cases = [
        ("server/discover", None, vec!["params._meta"]),
        ("server/discover", Some(json!({})), vec!["params._meta"]),
        (
            "server/discover",
            Some(caps_only.clone()),
            vec![version_key],
        ),
        (
            "server/discover",
            Some(info_only),
            vec![version_key, caps_key],
        ),
        (
            "subscriptions/listen",
            Some(json!({"notifications":{}})),
            vec!["params._meta"],
        ),
        (
            "tasks/update",
            Some(json!({"taskId":"t"})),
            vec!["params._meta"],
        ),
        // An ordinary method whose `_meta` has only modern keys means to be modern too.
        ("tools/list", Some(caps_only), vec![version_key]),
    ];
    for handshake in [false, true] {
        let mut h = Harness::new();
        if handshake {
            h.initialize("2025-11-25");
        }
        for (method, params, missing) in &cases {
            let mut msg = json!({"jsonrpc":"2.0","id":7,"method":method});
            if let Some(params) = params {
                msg["params"] = params.clone();
            }
            let r = h.request(msg);
            assert_eq!(r["id"], 7);
            assert_eq!(r["error"]["code"], -32602, "{method} {params:?}: {r}");
            assert_eq!(r["error"]["data"]["missing"], json!(missing), "{method}");
            let message = r["error"]["message"].as_str().unwrap();
            for field in missing {
                assert!(message.contains(field), "{message} names {field}");
            }
            check_message(Revision::V2026_07_28, &r, None);
        }
    }
    // A request that may be either era still asks for the handshake.
    let mut h = Harness::new();
    let r = h.request(json!({"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"progressToken":1}}}));
    assert_eq!(r["error"]["message"], "Server not initialized");
}

#[test]
fn an_enveloped_initialize_is_a_removed_method() {
    let mut h = Harness::new();
    let handshake = json!({"protocolVersion":"2025-11-25","capabilities":{},
                           "clientInfo":{"name":"c","version":"1"}});
    let mut init = json!({"jsonrpc":"2.0","id":4,"method":"initialize","params":handshake});
    init["params"]["_meta"] = meta();
    let r = h.request(init.clone());
    assert_eq!(r["error"]["code"], -32601, "{r}");
    check_message(Revision::V2026_07_28, &r, None);
    // It started no session.
    let r = h.request(json!({"jsonrpc":"2.0","id":5,"method":"tools/list"}));
    assert_eq!(r["error"]["message"], "Server not initialized");
    // Enveloped, it passes the modern checks first, like any modern request.
    init["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    assert_eq!(h.request(init)["error"]["code"], -32022);
    // Without the envelope it is the handshake, even after all that.
    let plain = json!({"jsonrpc":"2.0","id":6,"method":"initialize","params":handshake});
    assert_eq!(h.request(plain)["result"]["protocolVersion"], "2025-11-25");
}

#[test]
fn batches_belong_to_2025_03_26() {
    let mut h = Harness::new();
    h.initialize("2025-03-26");
    let r = h.send(
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#,
    );
    assert_eq!(r.len(), 1);
    let items = r[0].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["id"], 1);
    assert_eq!(items[1]["id"], 2);
    common::assert_valid(Revision::V2025_03_26, "JSONRPCBatchResponse", &r[0]);

    assert!(h
        .send(r#"[{"jsonrpc":"2.0","method":"notifications/x"}]"#)
        .is_empty());
    let r = h.send("[]");
    assert_eq!(r[0]["error"]["code"], -32600);

    // A batch holding a tool call is answered when the call finishes.
    let r = h.send(
        r#"[{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":2}}},{"jsonrpc":"2.0","id":"b","method":"ping"},5]"#,
    );
    assert!(r.is_empty());
    let job = h.jobs.pop().unwrap();
    let r = h.complete(job.id, Outcome::Done(text_result("3")));
    let items = r[0].as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert!(items
        .iter()
        .any(|m| m["id"] == "a" && m["result"]["content"][0]["text"] == "3"));
    assert!(items.iter().any(|m| m["id"] == "b"));
    assert!(items.iter().any(|m| m["error"]["code"] == -32600));

    let r = h.send(r#"[{"jsonrpc":"2.0","id":9,"method":"initialize","params":{}}]"#);
    assert_eq!(
        r[0][0]["error"]["code"], -32600,
        "initialize is never batched"
    );

    let mut h = Harness::new();
    h.initialize("2025-06-18");
    let r = h.send(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    assert_eq!(r[0]["error"]["code"], -32600);
}

#[test]
fn a_batch_is_answered_whole_even_with_odd_members() {
    let mut h = Harness::new();
    h.initialize("2025-03-26");
    // An id used twice: the first use is answered, the second refused, in
    // the one batch response.
    let r = h.send(
        r#"[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]"#,
    );
    assert_eq!(r.len(), 1, "{r:?}");
    let items = r[0].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert!(items
        .iter()
        .any(|m| m["id"] == 7 && m["result"].is_object()));
    assert!(items
        .iter()
        .any(|m| m["id"] == 7 && m["error"]["code"] == -32600));

    // A subscription in a batch is acknowledged, never answered: the batch
    // does not wait for it.
    let listen = modern(8, "subscriptions/listen", json!({"notifications":{}}));
    let batch = json!([{"jsonrpc":"2.0","id":9,"method":"ping"}, listen]);
    let r = h.send_value(batch);
    assert!(
        r.iter().any(|m| m
            .as_array()
            .is_some_and(|items| items.len() == 1 && items[0]["id"] == 9)),
        "the ping's batch response is sent: {r:?}"
    );
}

#[test]
fn subscriptions_are_acknowledged_and_closed_at_eof() {
    let mut h = Harness::new();
    let r = h.send_value(modern(
        7,
        "subscriptions/listen",
        json!({"notifications":{"toolsListChanged":true}}),
    ));
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        r[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    check_message(
        Revision::V2026_07_28,
        &r[0],
        Some("SubscriptionsAcknowledgedNotification"),
    );
    let mut out = Vec::new();
    h.engine.on_eof(&mut out);
    let r = h.collect(out);
    assert_eq!(r[0]["id"], 7);
    assert_eq!(
        r[0]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    check_message(
        Revision::V2026_07_28,
        &r[0],
        Some("SubscriptionsListenResult"),
    );

    // A cancelled stream ends silently.
    h.send_value(modern(
        8,
        "subscriptions/listen",
        json!({"notifications":{}}),
    ));
    h.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}"#);
    let mut out = Vec::new();
    h.engine.on_eof(&mut out);
    assert!(out.is_empty());
}

#[test]
fn oversized_lines_are_answered_with_their_id() {
    let mut h = Harness::new();
    let mut out = Vec::new();
    h.engine.on_oversized(
        br#"{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"#,
        99_999_999,
        &mut out,
    );
    let r = h.collect(out);
    assert_eq!(r[0]["id"], 77);
    assert_eq!(r[0]["error"]["code"], -32600);
    assert!(r[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("99999999 bytes"));
}

/// The job a `tools/call` with these arguments becomes, as the engine hands
/// it out (before the tool's thread reads anything).
fn job_as_made(h: &mut Harness, id: u64, arguments: Value) -> Box<Job> {
    let call = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "name":"add","arguments":arguments}});
    let mut out = Vec::new();
    h.engine.on_line(call.to_string().as_bytes(), &mut out);
    out.into_iter()
        .find_map(|o| match o {
            Output::Run(job) => Some(job),
            _ => None,
        })
        .expect("the call becomes a job")
}

#[test]
fn small_arguments_are_read_as_the_job_is_made_and_large_ones_by_the_tool_thread() {
    let mut h = Harness::new();
    h.initialize("2025-11-25");
    let mut small = job_as_made(&mut h, 1, json!({"x": 1.5, "y": 2}));
    assert!(small.sent_arguments.is_none(), "read already");
    assert_eq!(
        Value::Object(small.arguments.clone()),
        json!({"x": 1.5, "y": 2})
    );
    assert!(small.read_arguments(&h.registry).is_ok());
    assert_eq!(
        Value::Object(small.arguments.clone()),
        json!({"x": 1.5, "y": 2})
    );
    // A refusal found early is what reading gives, once the tool's thread asks.
    let mut wrong = job_as_made(&mut h, 2, json!({"x": "one", "y": 2}));
    let refusal = wrong.read_arguments(&h.registry).unwrap_err();
    assert!(refusal.is_error);
    assert!(
        format!("{:?}", refusal.content).contains("Invalid arguments for tool \\\"add\\\""),
        "{:?}",
        refusal.content
    );
    // Large arguments stay text until then (and then are refused whole).
    let pad = "p".repeat(100_000);
    let mut large = job_as_made(&mut h, 3, json!({"x": 1, "y": 2, "pad": pad}));
    assert!(large.sent_arguments.is_some(), "left for the tool's thread");
    assert!(large.read_arguments(&h.registry).is_err());
    assert!(large.sent_arguments.is_none());
}

fn call_with_token(h: &mut Harness, id: u64, token: Value) -> Job {
    h.send_value(
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "name":"add","arguments":{"x":1,"y":1},"_meta":{"progressToken":token}}}),
    );
    h.jobs.pop().unwrap()
}

#[test]
fn progress_is_sent_increasing_and_thinned() {
    let mut h = Harness::new();
    h.initialize("2025-11-25");
    let job = call_with_token(&mut h, 1, json!("tok"));
    let t0 = Instant::now();
    let sent = h.progress(job.id, 1.0, Some("one"), t0);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["method"], "notifications/progress");
    assert_eq!(
        sent[0]["params"],
        json!({"progressToken":"tok","progress":1.0,"total":10.0,"message":"one"})
    );
    check_message(h.rev, &sent[0], Some("ProgressNotification"));
    // Within the interval: held back, the latest value winning.
    let soon = t0 + Duration::from_millis(10);
    assert!(h.progress(job.id, 2.0, None, soon).is_empty());
    assert_eq!(h.due.len(), 1);
    assert!(h.due[0].1 <= PROGRESS_INTERVAL);
    assert!(h.progress(job.id, 3.0, Some("three"), soon).is_empty());
    assert_eq!(h.due.len(), 1, "one wake-up for a burst");
    // Values that do not increase are dropped.
    assert!(h.progress(job.id, 2.5, None, soon).is_empty());
    let mut out = Vec::new();
    h.engine
        .on_progress_due(job.id, t0 + PROGRESS_INTERVAL, &mut out);
    let sent = h.collect(out);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["params"]["progress"], 3.0);
    assert_eq!(sent[0]["params"]["message"], "three");
    // Later reports go out at once again.
    let later = t0 + PROGRESS_INTERVAL * 3;
    assert_eq!(h.progress(job.id, 4.0, None, later).len(), 1);
    assert!(h
        .progress(job.id, 4.0, None, later + PROGRESS_INTERVAL * 2)
        .is_empty());
}

#[test]
fn a_late_wake_up_never_sends_an_older_value() {
    let mut h = Harness::new();
    h.initialize("2025-11-25");
    let job = call_with_token(&mut h, 1, json!("tok"));
    let t0 = Instant::now();
    h.progress(job.id, 1.0, None, t0);
    assert!(h
        .progress(job.id, 2.0, None, t0 + Duration::from_millis(10))
        .is_empty());
    // The wake-up for 2 is late (a busy machine); 3 arrives after the interval.
    let sent = h.progress(job.id, 3.0, None, t0 + PROGRESS_INTERVAL * 2);
    assert_eq!(sent[0]["params"]["progress"], 3.0);
    let mut out = Vec::new();
    h.engine
        .on_progress_due(job.id, t0 + PROGRESS_INTERVAL * 2, &mut out);
    assert!(h.collect(out).is_empty(), "2 must not follow 3");
}

#[test]
fn held_progress_goes_out_before_the_result() {
    let mut h = Harness::new();
    h.initialize("2025-11-25");
    let job = call_with_token(&mut h, 1, json!(12345678901234567890u128));
    let t0 = Instant::now();
    h.progress(job.id, 1.0, None, t0);
    h.progress(job.id, 2.0, None, t0);
    let r = h.complete(job.id, Outcome::Done(text_result("done")));
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["params"]["progress"], 2.0);
    assert_eq!(r[1]["id"], 1);
    let mut out = Vec::new();
    h.engine
        .on_progress_due(job.id, t0 + PROGRESS_INTERVAL, &mut out);
    assert!(out.is_empty(), "nothing after the result");
}

#[test]
fn progress_needs_a_token_and_respects_the_revision() {
    let mut h = Harness::new();
    h.initialize("2024-11-05");
    h.send_value(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    assert!(h
        .progress(job.id, 1.0, Some("m"), Instant::now())
        .is_empty());
    let job = call_with_token(&mut h, 2, json!(7));
    let sent = h.progress(
        job.id,
        1.0,
        Some("no messages in 2024-11-05"),
        Instant::now(),
    );
    assert_eq!(
        sent[0]["params"],
        json!({"progressToken":7,"progress":1.0,"total":10.0})
    );
    check_message(
        Revision::V2024_11_05,
        &sent[0],
        Some("ProgressNotification"),
    );
    // Nothing for a cancelled request.
    h.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#);
    assert!(h
        .progress(job.id, 5.0, None, Instant::now() + Duration::from_secs(1))
        .is_empty());
}

#[test]
fn legacy_logs_follow_set_level() {
    let mut h = Harness::new();
    h.initialize("2025-11-25");
    h.send_value(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    assert!(h
        .log(job.id, LogLevel::Emergency, "nobody asked")
        .is_empty());
    let r = h.request(
        json!({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}),
    );
    assert_eq!(r["result"], json!({}));
    check_message(h.rev, &r, Some("EmptyResult"));
    assert!(h.log(job.id, LogLevel::Info, "too quiet").is_empty());
    let sent = h.log(job.id, LogLevel::Error, "loud enough");
    assert_eq!(
        sent[0]["params"],
        json!({"level":"error","logger":"add","data":"loud enough"})
    );
    check_message(h.rev, &sent[0], Some("LoggingMessageNotification"));
    let r = h.request(
        json!({"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"chatty"}}),
    );
    assert_eq!(r["error"]["code"], -32602);
}

#[test]
fn modern_logs_only_for_requests_that_ask() {
    let mut h = Harness::new();
    h.send_value(modern(
        1,
        "tools/call",
        json!({"name":"add","arguments":{"x":1,"y":1}}),
    ));
    let quiet = h.jobs.pop().unwrap();
    assert!(h.log(quiet.id, LogLevel::Emergency, "never").is_empty());
    let mut asking = modern(
        2,
        "tools/call",
        json!({"name":"add","arguments":{"x":1,"y":1}}),
    );
    asking["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    h.send_value(asking);
    let job = h.jobs.pop().unwrap();
    assert_eq!(job.context.log_level, Some(LogLevel::Info));
    assert!(h.log(job.id, LogLevel::Debug, "below").is_empty());
    let sent = h.log(job.id, LogLevel::Info, "hello");
    assert_eq!(sent[0]["params"]["data"], "hello");
    check_message(
        Revision::V2026_07_28,
        &sent[0],
        Some("LoggingMessageNotification"),
    );
}

#[test]
fn open_subscriptions_are_bounded_with_an_error_naming_the_limit() {
    let mut h = Harness::new();
    let limit = Config::default().limits.max_subscriptions;
    for id in 0..limit as u64 {
        let r = h.send_value(modern(
            id,
            "subscriptions/listen",
            json!({"notifications":{}}),
        ));
        assert_eq!(r[0]["method"], "notifications/subscriptions/acknowledged");
    }
    let over = limit as u64;
    let r = h.request(modern(
        over,
        "subscriptions/listen",
        json!({"notifications":{}}),
    ));
    assert_eq!(r["id"], over);
    assert_eq!(r["error"]["code"], -32603);
    assert_eq!(r["error"]["data"]["limit"], limit);
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains(&format!("at most {limit}")));
    check_message(Revision::V2026_07_28, &r, None);
    // Cancelling one makes room for another.
    h.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#);
    let r = h.send_value(modern(
        over,
        "subscriptions/listen",
        json!({"notifications":{}}),
    ));
    assert_eq!(r[0]["method"], "notifications/subscriptions/acknowledged");
}

#[test]
fn tool_calls_over_the_queue_limit_are_refused_with_an_error_naming_it() {
    let mut h = Harness::new();
    h.initialize("2025-11-25");
    let limit = Config::default().limits.max_queued_calls;
    let call = |id: usize| {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"add","arguments":{"x":1,"y":2}}})
    };
    for id in 1..=limit {
        assert!(h.send_value(call(id)).is_empty());
    }
    assert_eq!(h.jobs.len(), limit);
    let r = h.request(call(limit + 1));
    assert_eq!(r["id"], limit + 1);
    assert_eq!(r["error"]["code"], -32603);
    assert_eq!(r["error"]["data"]["limit"], limit);
    check_message(h.rev, &r, None);
    assert_eq!(h.jobs.len(), limit, "the refused call never became a job");
    // One finishes: the next call is taken.
    let first = h.jobs.remove(0).id;
    h.complete(first, Outcome::Done(text_result("3")));
    assert!(h.send_value(call(limit + 2)).is_empty());
    assert_eq!(h.jobs.len(), limit);
}

#[test]
fn a_batch_reusing_an_id_of_an_unanswered_batch_loses_no_response() {
    let mut h = Harness::new();
    h.initialize("2025-03-26");
    let call = |id: u64| json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":2}}});
    // The first batch waits for its call; its ping is answered already.
    let first = json!([call(1), {"jsonrpc":"2.0","id":2,"method":"ping"}]);
    assert!(h.send_value(first).is_empty());
    // A second batch reuses id 1 while the first still waits for it.
    let r = h.send_value(json!([call(1)]));
    assert_eq!(r.len(), 1, "the reuse is refused at once: {r:?}");
    assert_eq!(r[0][0]["id"], 1);
    assert_eq!(r[0][0]["error"]["code"], -32600);
    let job = h.jobs.remove(0);
    let r = h.complete(job.id, Outcome::Done(text_result("3")));
    assert_eq!(r.len(), 1, "the first batch is answered whole: {r:?}");
    let items = r[0].as_array().expect("a batch response");
    assert_eq!(items.len(), 2, "{items:?}");
    assert!(items
        .iter()
        .any(|m| m["id"] == 2 && m["result"].is_object()));
    assert!(items
        .iter()
        .any(|m| m["id"] == 1 && m["result"]["content"][0]["text"] == "3"));
    common::assert_valid(Revision::V2025_03_26, "JSONRPCBatchResponse", &r[0]);
}
