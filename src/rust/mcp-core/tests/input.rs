//! Input requests a tool sends the client: elicitation forms per revision,
//! sampling and roots, and several requests in one 2026-07-28 round, with
//! every message checked against the wire schemas.

mod common;

use common::harness::Harness;
use common::{assert_valid, check_message, done_text};
use mcp_core::engine::registry::Registry;
use mcp_core::engine::{input_mode, InputMode, Job, Outcome};
use mcp_core::protocol::revision::Revision;
use mcp_core::protocol::tool::ToolDef;
use serde_json::{json, Value};

const MODERN: Revision = Revision::V2026_07_28;

/// An engine serving one tool, `ask`, with a request-state key.
fn harness() -> Harness {
    let registry = Registry::new(vec![ToolDef {
        name: "ask".into(),
        description: Some("asks".into()),
        input_schema: json!({"type":"object","properties":{}}),
        ..ToolDef::default()
    }])
    .unwrap();
    Harness::with_request_state(registry)
}

/// What these tests do besides sending and collecting.
trait Steps {
    fn init(&mut self, version: &str, capabilities: Value);
    fn legacy_call(&mut self, id: u64) -> Job;
}

impl Steps for Harness {
    fn init(&mut self, version: &str, capabilities: Value) {
        self.send(json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":version,"capabilities":capabilities,"clientInfo":{"name":"t","version":"1"}}}));
    }

    /// A legacy call of `ask`, running.
    fn legacy_call(&mut self, id: u64) -> Job {
        let sent = self.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"ask","arguments":{}}}));
        assert!(sent.is_empty(), "{sent:?}");
        self.jobs.pop().unwrap()
    }
}

fn modern_call(id: u64, caps: Value, extra: Value) -> Value {
    let mut params = json!({"name":"ask","arguments":{},"_meta":{
        "io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps}});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params})
}

fn elicit(field: Value) -> Value {
    json!({"method":"elicitation/create","params":{"message":"Pick",
        "requestedSchema":{"type":"object","properties":{"pick":field}}}})
}

fn sample(text: &str, max_tokens: u64) -> Value {
    json!({"method":"sampling/createMessage","params":{
        "messages":[{"role":"user","content":{"type":"text","text":text}}],"maxTokens":max_tokens}})
}

fn roots() -> Value {
    json!({"method":"roots/list","params":{}})
}

fn sampled(text: &str) -> Value {
    json!({"role":"assistant","content":{"type":"text","text":text},"model":"test-model","stopReason":"endTurn"})
}

#[test]
fn several_requests_are_asked_in_one_round_and_answered_together() {
    let mut h = harness();
    let all = json!({"elicitation":{},"sampling":{},"roots":{"listChanged":true}});
    assert!(h.send(modern_call(1, all.clone(), json!({}))).is_empty());
    let job = h.jobs.pop().unwrap();
    let name = json!({"method":"elicitation/create","params":{"message":"What is your name?",
        "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}});
    let asked = h.complete(
        job.id,
        Outcome::InputsRequired(vec![
            ("user_name".into(), name.clone()),
            ("greeting".into(), sample("Generate a greeting", 50)),
            ("client_roots".into(), roots()),
        ]),
    );
    let result = &asked[0]["result"];
    assert_eq!(result["resultType"], "input_required");
    let keys: Vec<&String> = result["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["user_name", "greeting", "client_roots"]);
    assert_eq!(result["inputRequests"]["user_name"], name);
    assert!(result["requestState"].is_string());
    check_message(MODERN, &asked[0], Some("InputRequiredResult"));

    let state = result["requestState"].as_str().unwrap().to_string();
    let responses = json!({
        "user_name": {"action":"accept","content":{"name":"Ada"}},
        "greeting": sampled("Hello!"),
        "client_roots": {"roots":[{"uri":"file:///test/root","name":"Test Root"}]}
    });
    let retry = modern_call(
        2,
        all.clone(),
        json!({"inputResponses":responses,"requestState":state}),
    );
    assert!(h.send(retry).is_empty());
    let job = h.jobs.pop().unwrap();
    assert_eq!(job.context.answers.len(), 3);
    assert_eq!(job.context.answers["greeting"], sampled("Hello!"));
    let done = h.complete(job.id, done_text("Hello, Ada"));
    assert_eq!(done[0]["result"]["resultType"], "complete");

    // An answer that is no input result at all is refused before R runs.
    assert!(h.send(modern_call(3, all.clone(), json!({}))).is_empty());
    let job = h.jobs.pop().unwrap();
    let asked = h.complete(
        job.id,
        Outcome::InputsRequired(vec![("q".into(), sample("?", 10))]),
    );
    let state = asked[0]["result"]["requestState"].as_str().unwrap();
    let bad = modern_call(
        4,
        all,
        json!({"inputResponses":{"q":{"text":"no role"}},"requestState":state}),
    );
    let r = h.send(bad);
    assert_eq!(r[0]["error"]["code"], -32602);
    assert!(r[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("inputResponses.q"));
    check_message(MODERN, &r[0], None);
}

#[test]
fn requests_without_their_capability_name_every_missing_one() {
    let mut h = harness();
    assert!(h
        .send(modern_call(1, json!({"sampling":{}}), json!({})))
        .is_empty());
    let job = h.jobs.pop().unwrap();
    assert_eq!(*job.context.capabilities, json!({"sampling":{}}));
    let r = h.complete(
        job.id,
        Outcome::InputsRequired(vec![
            ("a".into(), elicit(json!({"type":"string"}))),
            ("b".into(), sample("?", 10)),
            ("c".into(), roots()),
        ]),
    );
    assert_eq!(r[0]["error"]["code"], -32021);
    assert_eq!(
        r[0]["error"]["data"]["requiredCapabilities"],
        json!({"elicitation":{}, "roots":{}})
    );
    assert_valid(MODERN, "MissingRequiredClientCapabilityError", &r[0]);
    // Asking only what was declared is a round.
    assert!(h
        .send(modern_call(2, json!({"sampling":{}}), json!({})))
        .is_empty());
    let job = h.jobs.pop().unwrap();
    let r = h.complete(
        job.id,
        Outcome::InputsRequired(vec![("b".into(), sample("?", 10))]),
    );
    assert_eq!(r[0]["result"]["resultType"], "input_required");
    check_message(MODERN, &r[0], Some("InputRequiredResult"));
}

#[test]
fn input_modes_follow_each_method_and_revision() {
    let all = json!({"elicitation":{},"sampling":{},"roots":{}});
    let v24 = Revision::V2024_11_05;
    assert_eq!(
        input_mode(v24, &all, false, "sampling/createMessage"),
        InputMode::Ask
    );
    assert_eq!(input_mode(v24, &all, false, "roots/list"), InputMode::Ask);
    assert!(matches!(
        input_mode(v24, &all, false, "elicitation/create"),
        InputMode::Unavailable(_)
    ));
    match input_mode(Revision::V2025_06_18, &json!({}), false, "roots/list") {
        InputMode::Unavailable(why) => assert!(why.contains("roots capability"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        input_mode(MODERN, &all, false, "roots/list"),
        InputMode::Retry
    );
    assert_eq!(input_mode(MODERN, &all, true, "roots/list"), InputMode::Ask);
    assert_eq!(
        input_mode(
            MODERN,
            &json!({"roots":{}}),
            false,
            "sampling/createMessage"
        ),
        InputMode::MissingCapability
    );
}

#[test]
fn handshake_era_sampling_and_roots_are_requests_to_the_client() {
    for version in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let rev = Revision::parse(version).unwrap();
        let mut h = harness();
        h.init(version, json!({"sampling":{},"roots":{}}));
        let job = h.legacy_call(1);
        let sent = h.ask(job.id, "q", sample("What is the capital of France?", 100));
        assert_eq!(sent[0]["method"], "sampling/createMessage");
        assert!(sent[0]["params"].get("mode").is_none());
        assert_valid(rev, "JSONRPCRequest", &sent[0]);
        assert_valid(rev, "CreateMessageRequest", &sent[0]);
        let answer = json!({"jsonrpc":"2.0","id":sent[0]["id"],"result":sampled("Paris.")});
        assert!(h.send(answer).is_empty());
        assert_eq!(h.answers.pop().unwrap(), (job.id, Ok(sampled("Paris."))));

        let sent = h.ask(job.id, "r", roots());
        assert_valid(rev, "ListRootsRequest", &sent[0]);
        // An answer of the wrong kind reaches the handler as a failure.
        h.send(json!({"jsonrpc":"2.0","id":sent[0]["id"],"result":{"action":"accept"}}));
        let (_, got) = h.answers.pop().unwrap();
        assert!(got.unwrap_err().contains("roots result"));
        let sent = h.ask(job.id, "r2", roots());
        h.send(json!({"jsonrpc":"2.0","id":sent[0]["id"],"error":{"code":-32601,"message":"no roots"}}));
        let (_, got) = h.answers.pop().unwrap();
        assert!(got.unwrap_err().contains("no roots"));
        h.complete(job.id, done_text("ok"));
    }
}

#[test]
fn elicitation_forms_are_shaped_for_the_revision() {
    let titled = json!({"type":"string","title":"Colour","default":"r",
        "oneOf":[{"const":"r","title":"Red"},{"const":"b","title":"Blue"}]});
    let several =
        json!({"type":"array","items":{"anyOf":[{"const":"r","title":"Red"}]},"default":["r"]});
    let defaults = json!({"type":"object","properties":{
        "name":{"type":"string","default":"John Doe"},
        "age":{"type":"integer","default":30},
        "score":{"type":"number","default":95.5},
        "status":{"type":"string","enum":["active","inactive"],"default":"active"},
        "verified":{"type":"boolean","default":true}}});

    let mut h = harness();
    h.init("2025-06-18", json!({"elicitation":{}}));
    let job = h.legacy_call(1);
    let sent = h.ask(job.id, "a", elicit(titled.clone()));
    let field = &sent[0]["params"]["requestedSchema"]["properties"]["pick"];
    assert_eq!(
        field,
        &json!({"type":"string","title":"Colour","enum":["r","b"],"enumNames":["Red","Blue"]})
    );
    assert_valid(Revision::V2025_06_18, "ElicitRequest", &sent[0]);
    let request = json!({"method":"elicitation/create","params":{"message":"Defaults","requestedSchema":defaults}});
    let sent = h.ask(job.id, "b", request.clone());
    assert_valid(Revision::V2025_06_18, "ElicitRequest", &sent[0]);
    assert_eq!(
        sent[0]["params"]["requestedSchema"]["properties"]["verified"]["default"],
        true
    );
    assert!(sent[0]["params"]["requestedSchema"]["properties"]["name"]
        .get("default")
        .is_none());
    // Several choices cannot be asked in 2025-06-18: the handler learns why.
    assert!(h.ask(job.id, "c", elicit(several.clone())).is_empty());
    let (_, got) = h.answers.pop().unwrap();
    assert!(got.unwrap_err().contains("several choices"));

    let mut h = harness();
    h.init("2025-11-25", json!({"elicitation":{}}));
    let job = h.legacy_call(1);
    for (key, request) in [
        ("a", elicit(titled)),
        ("b", elicit(several)),
        ("c", request),
        (
            "d",
            elicit(json!({"type":"string","enum":["x","y"],"enumNames":["X","Y"]})),
        ),
    ] {
        let sent = h.ask(job.id, key, request.clone());
        assert_eq!(sent[0]["params"]["mode"], "form");
        assert_eq!(
            sent[0]["params"]["requestedSchema"],
            request["params"]["requestedSchema"]
        );
        assert_valid(Revision::V2025_11_25, "ElicitRequest", &sent[0]);
    }
}

#[test]
fn audio_is_sampled_only_where_the_revision_has_it() {
    let audio = json!({"method":"sampling/createMessage","params":{"maxTokens":10,"messages":[
        {"role":"user","content":{"type":"audio","data":"AAAA","mimeType":"audio/wav"}}]}});
    let mut h = harness();
    h.init("2024-11-05", json!({"sampling":{}}));
    let job = h.legacy_call(1);
    assert!(h.ask(job.id, "a", audio.clone()).is_empty());
    let (_, got) = h.answers.pop().unwrap();
    assert!(got.unwrap_err().contains("cannot carry audio"));
    let mut h = harness();
    h.init("2025-03-26", json!({"sampling":{}}));
    let job = h.legacy_call(1);
    let sent = h.ask(job.id, "a", audio);
    assert_valid(Revision::V2025_03_26, "CreateMessageRequest", &sent[0]);
}

#[test]
fn a_retry_without_state_answers_the_first_round() {
    let mut h = harness();
    let caps = json!({"elicitation":{}});
    let name = json!({"action":"accept","content":{"name":"Alice"}});
    // Answers sent without a requestState, next to keys nobody asked: the
    // handler finds its answer and runs to the end.
    let retry = modern_call(
        1,
        caps.clone(),
        json!({"inputResponses":{
            "user_name": name,
            "unknown_extra_key": {"action":"accept","content":{"foo":"bar"}},
            "another_unexpected": {"action":"accept","content":{"baz":123}}
        }}),
    );
    assert!(h.send(retry).is_empty());
    let job = h.jobs.pop().unwrap();
    assert_eq!(job.context.answers["user_name"], name);
    let done = h.complete(job.id, done_text("Hello, Alice!"));
    assert_eq!(done[0]["result"]["resultType"], "complete");
    check_message(MODERN, &done[0], Some("CallToolResult"));

    // A key the handler does not ask leaves its question open: a new round.
    assert!(h
        .send(modern_call(
            2,
            caps.clone(),
            json!({"inputResponses":{"wrong_key":{"action":"accept","content":{"data":"wrong"}}}})
        ))
        .is_empty());
    let job = h.jobs.pop().unwrap();
    assert!(!job.context.answers.contains_key("user_name"));
    let asked = h.complete(
        job.id,
        Outcome::InputsRequired(vec![("user_name".into(), elicit(json!({"type":"string"})))]),
    );
    assert_eq!(asked[0]["result"]["resultType"], "input_required");
    check_message(MODERN, &asked[0], Some("InputRequiredResult"));

    // Without a state every response may be one the handler asks, so one
    // that is no input result at all is refused before R runs.
    let r = h.send(modern_call(
        3,
        caps,
        json!({"inputResponses":{"user_name":12345}}),
    ));
    assert_eq!(r[0]["error"]["code"], -32602);
    assert!(r[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("inputResponses.user_name"));
    assert!(h.jobs.is_empty());
    check_message(MODERN, &r[0], None);
}
