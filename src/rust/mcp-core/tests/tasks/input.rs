//! Input for calls and tasks: signed request state across rounds, modes
//! from what the client declared, legacy sessions that ask and wait.

use super::*;

#[test]
fn input_required_rounds_carry_signed_state() {
    let mut h = harness();
    assert!(h.send(mrtr_call(1, json!({}))).is_empty());
    let job = h.jobs.pop().unwrap();
    assert_eq!(job.context.input, InputMode::Retry);
    let request = json!({"method":"elicitation/create","params":{"message":"Your name?",
        "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}});
    let asked = h.complete(
        job.id,
        Outcome::InputRequired {
            key: "input-1".into(),
            request: request.clone(),
        },
    );
    let result = &asked[0]["result"];
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(result["inputRequests"]["input-1"], request);
    check_message(MODERN, &asked[0], Some("InputRequiredResult"));
    let state = result["requestState"].as_str().unwrap().to_string();

    // The retry: a new id, the answers, the state echoed.
    let answer = json!({"action":"accept","content":{"name":"Ada"}});
    assert!(h.send(mrtr_call(2, json!({"inputResponses":{"input-1":answer,"stray":{"action":"cancel"}},"requestState":state}))).is_empty());
    let retry = h.jobs.pop().unwrap();
    assert_eq!(retry.context.answers.get("input-1"), Some(&answer));
    assert!(
        retry.context.answers.get("stray").is_none(),
        "answers to keys never asked are ignored"
    );

    // A second round keeps the first answer inside its state.
    let asked = h.complete(
        retry.id,
        Outcome::InputRequired {
            key: "input-2".into(),
            request: request.clone(),
        },
    );
    let state2 = asked[0]["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(h
        .send(mrtr_call(
            3,
            json!({"inputResponses":{"input-2":{"action":"decline"}},"requestState":state2})
        ))
        .is_empty());
    let third = h.jobs.pop().unwrap();
    assert_eq!(third.context.answers.len(), 2);
    let done = h.complete(third.id, done_text("Hello, Ada"));
    assert_eq!(done[0]["result"]["resultType"], "complete");

    // Replayed, tampered, foreign: refused before any R code runs.
    let replay = h.request(mrtr_call(
        4,
        json!({"inputResponses":{},"requestState":state}),
    ));
    assert_eq!(replay["error"]["code"], -32602);
    assert_eq!(replay["error"]["data"]["reason"], "invalid_request_state");
    let tampered = format!("x{state2}");
    let r = h.request(mrtr_call(5, json!({"requestState":tampered})));
    assert_eq!(r["error"]["data"]["reason"], "invalid_request_state");
    check_message(MODERN, &r, None);
    assert!(h.send(mrtr_call(6, json!({}))).is_empty());
    let other = h.jobs.pop().unwrap();
    let asked = h.complete(
        other.id,
        Outcome::InputRequired {
            key: "input-1".into(),
            request,
        },
    );
    let state3 = asked[0]["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    let mut foreign = call(
        json!(7),
        "maybe",
        json!({"_meta": modern_meta(json!({"elicitation":{}})), "requestState": state3}),
    );
    foreign["params"]["arguments"] = json!({"n": 1});
    let r = h.request(foreign);
    assert_eq!(
        r["error"]["data"]["reason"], "invalid_request_state",
        "state of another tool"
    );
    let r = h.request(mrtr_call(8, json!({"inputResponses":[1]})));
    assert_eq!(r["error"]["code"], -32602);
    assert!(h.jobs.is_empty());
}

#[test]
fn input_modes_follow_what_the_client_declared() {
    let mut h = harness();
    let no_caps = call(json!(1), "plain", json!({"_meta": modern_meta(json!({}))}));
    h.send(no_caps);
    assert_eq!(
        h.jobs.pop().unwrap().context.input,
        InputMode::MissingCapability
    );

    let mut h = harness();
    h.init("2024-11-05", json!({"elicitation":{}}));
    h.send(call(json!(1), "plain", json!({})));
    assert!(matches!(
        h.jobs.pop().unwrap().context.input,
        InputMode::Unavailable(_)
    ));

    let mut h = harness();
    h.init("2025-06-18", json!({}));
    h.send(call(json!(1), "plain", json!({})));
    assert!(matches!(
        h.jobs.pop().unwrap().context.input,
        InputMode::Unavailable(_)
    ));
}

#[test]
fn legacy_sessions_ask_the_client_while_the_tool_waits() {
    for version in ["2025-06-18", "2025-11-25"] {
        let mut h = harness();
        h.init(version, json!({"elicitation":{}}));
        h.send(call(json!(1), "plain", json!({})));
        let job = h.jobs.pop().unwrap();
        assert_eq!(job.context.input, InputMode::Ask);
        let sent = h.ask_name(job.id, "input-1");
        assert_eq!(sent.len(), 1);
        let request = &sent[0];
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["message"], "Your name?");
        assert_eq!(
            request["params"].get("mode").is_some(),
            version == "2025-11-25"
        );
        common::assert_valid(Revision::parse(version).unwrap(), "ElicitRequest", request);
        let ask_id = request["id"].clone();
        h.send(json!({"jsonrpc":"2.0","id":ask_id,"result":{"action":"accept","content":{"name":"Ada"}}}));
        assert_eq!(
            h.answers.pop().unwrap(),
            (
                job.id,
                Ok(json!({"action":"accept","content":{"name":"Ada"}}))
            )
        );
        // A second question, refused by the client.
        let sent = h.ask_name(job.id, "input-2");
        let ask_id = sent[0]["id"].clone();
        h.send(json!({"jsonrpc":"2.0","id":ask_id,"error":{"code":-1,"message":"user closed the dialog"}}));
        let (_, answer) = h.answers.pop().unwrap();
        assert!(answer.unwrap_err().contains("user closed the dialog"));
        // Answers for requests never made are ignored.
        h.send(json!({"jsonrpc":"2.0","id":"mcpserver-ask-99","result":{"action":"accept"}}));
        assert!(h.answers.is_empty());
    }
}
