//! Input from the client while a tool runs: the user's answers
//! (`elicitation/create`), the model's (`sampling/createMessage`) and the
//! client's roots (`roots/list`).
//!
//! Three ways, by what the request allows:
//! - a 2026-07-28 call is answered with an `input_required` result; the
//!   client retries with the answers and the signed `requestState`, and the
//!   handler runs again from the start, finding its answers ([`InputMode::Retry`]);
//! - a handshake-era call (2025-06-18 and later) sends the client an
//!   `elicitation/create` request while the handler waits, and a task of the
//!   2026-07-28 extension lists the request in `tasks/get` until `tasks/update`
//!   answers it ([`InputMode::Ask`]);
//! - a 2026-07-28 request that did not declare the capability a method
//!   needs ends at its first input request with -32021 naming the
//!   capability ([`InputMode::MissingCapability`]);
//! - otherwise (older revisions, or no capability declared at `initialize`)
//!   the handler learns that no input can be had, and its error becomes a
//!   tool error.
//!
//! A handler may ask several questions in one 2026-07-28 round
//! ([`super::Outcome::InputsRequired`]), each under its own key.

use super::arguments::arguments_for_state;
use super::job::{Asked, Gathering, InputMode, JobState, Output};
use super::state::{lock, Engine};
use super::wire::META_CAPABILITIES;
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::revision::Revision;
use crate::stores::request_state::State;
use crate::stores::tasks::Dialect;
use crate::util::ids::JobId;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::sync::Arc;

const ANSWER_ACTIONS: [&str; 3] = ["accept", "decline", "cancel"];

/// The methods a server may ask the client through.
pub const INPUT_METHODS: [&str; 3] = ["elicitation/create", "sampling/createMessage", "roots/list"];

fn declares(caps: &Value, capability: &str) -> bool {
    caps.get(capability).is_some_and(Value::is_object)
}

/// How a handler may send an input request with `method` (one of
/// [`INPUT_METHODS`]), given the request's revision, the client's
/// capabilities and whether the call runs as a task.
pub fn input_mode(rev: Revision, caps: &Value, in_task: bool, method: &str) -> InputMode {
    let capability = capability_for(method);
    if capability == "elicitation" && !rev.has_elicitation() {
        return InputMode::Unavailable(format!(
            "protocol revision {rev} has no way to ask the user for input"
        ));
    }
    if !declares(caps, capability) {
        // 2026-07-28 capabilities come with each request: the request
        // is refused, naming what it lacks, so the client can retry.
        if rev.is_modern() {
            return InputMode::MissingCapability;
        }
        return InputMode::Unavailable(format!(
            "the client did not declare the {capability} capability"
        ));
    }
    if rev.is_modern() && !in_task {
        InputMode::Retry
    } else {
        InputMode::Ask
    }
}

impl Engine {
    /// The capabilities the client declared: on the request itself
    /// (2026-07-28) or at `initialize`.
    pub(super) fn client_capabilities(
        &self,
        meta: Option<&Map<String, Value>>,
        rev: Revision,
    ) -> Arc<Value> {
        if rev.is_modern() {
            Arc::new(
                meta.and_then(|m| m.get(META_CAPABILITIES))
                    .cloned()
                    .unwrap_or(Value::Null),
            )
        } else {
            self.session
                .as_ref()
                .map_or_else(|| Arc::new(Value::Null), |s| s.capabilities.clone())
        }
    }

    pub(super) fn input_mode(&self, rev: Revision, caps: &Value, in_task: bool) -> InputMode {
        input_mode(rev, caps, in_task, "elicitation/create")
    }

    /// The answers a retried 2026-07-28 call brings: those carried in its
    /// verified `requestState` plus its `inputResponses` to the keys that
    /// state asked for. A state that fails verification is refused before
    /// any R code runs. A retry without a state answers the first round:
    /// every response is kept (the handler reads those it asks for).
    pub(super) fn retry_answers(
        &mut self,
        tool: usize,
        arguments: Option<&str>,
        params: &Value,
        rev: Revision,
    ) -> Result<Map<String, Value>, Value> {
        if !rev.is_modern() {
            return Ok(Map::new());
        }
        let responses = match params.get("inputResponses") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(_) => return Err(invalid("`inputResponses` must be an object", None)),
        };
        let state = match params.get("requestState") {
            // Without a state the retry answers the first round. Which keys
            // the handler will ask is unknown until it runs, so every
            // response is kept and must be a well-formed answer of some
            // input method (with a state, keys it did not ask are ignored).
            // A client gains nothing it could not have by answering the
            // first round's questions.
            None | Some(Value::Null) => State {
                answers: Map::new(),
                asked: responses.keys().cloned().collect(),
            },
            Some(Value::String(text)) => {
                let name = &self.registry.tool(tool).def.name;
                let arguments = arguments_for_state(self.registry.tool(tool), arguments);
                lock(&self.signer)
                    .accept(text, name, &arguments, self.owner.as_ref())
                    .map_err(|refusal| {
                        invalid(
                            &format!("Invalid params: {}", refusal.describe()),
                            Some(json!({ "reason": "invalid_request_state" })),
                        )
                    })?
            }
            Some(_) => {
                return Err(invalid(
                    "Invalid params: `requestState` must be a string",
                    Some(json!({ "reason": "invalid_request_state" })),
                ))
            }
        };
        let mut answers = state.answers;
        for key in &state.asked {
            let Some(answer) = responses.get(key) else {
                continue;
            };
            check_any_answer(key, answer)?;
            answers.insert(key.clone(), answer.clone());
        }
        Ok(answers)
    }

    /// The `input_required` result of a 2026-07-28 call, with the state the
    /// retry must echo.
    pub(super) fn input_required_body(
        &self,
        state: &JobState,
        requests: Vec<(String, Value)>,
    ) -> String {
        let tool = &state.registry.tool(state.tool).def.name;
        let issued = State {
            answers: state.answers.clone(),
            asked: requests.iter().map(|(key, _)| key.clone()).collect(),
        };
        let arguments =
            arguments_for_state(state.registry.tool(state.tool), state.arguments.as_deref());
        let token = lock(&self.signer).issue(tool, &arguments, &issued, self.owner.as_ref());
        let requests: Map<String, Value> = requests.into_iter().collect();
        json!({
            "resultType": "input_required",
            "inputRequests": requests,
            "requestState": token,
            "_meta": self.server_meta,
        })
        .to_string()
    }

    /// What a call that stopped at input requests answers: the
    /// `input_required` result, or -32021 when its request could not take
    /// them (the client did not declare every capability they need).
    pub(super) fn input_required_answer(
        &self,
        state: &JobState,
        requests: Vec<(String, Value)>,
    ) -> Result<String, Value> {
        let mut missing = Map::new();
        let mut methods = Vec::new();
        for (_, request) in &requests {
            let method = request["method"].as_str().unwrap_or("elicitation/create");
            let capability = capability_for(method);
            if !declares(&state.capabilities, capability) && !missing.contains_key(capability) {
                missing.insert(capability.to_string(), json!({}));
                methods.push(format!("`{method}`"));
            }
        }
        if missing.is_empty() {
            return Ok(self.input_required_body(state, requests));
        }
        let tool = &state.registry.tool(state.tool).def.name;
        let names: Vec<String> = missing.keys().map(|c| format!("`{c}`")).collect();
        Err(jsonrpc::missing_capability(
            &format!(
                "Tool \"{tool}\" needs input from the client ({}), \
                 but the request did not declare the {} client capability",
                methods.join(", "),
                names.join(" and ")
            ),
            Value::Object(missing),
        ))
    }

    /// A running handler asks for input (`request` is `{method, params}`).
    /// Answered through [`Output::Answer`] with the answer itself, now or
    /// when the client replies.
    pub fn on_ask(&mut self, job: JobId, key: String, request: Value, out: &mut Vec<Output>) {
        self.ask_client(job, vec![(key, request)], false, out);
    }

    /// A running handler asks several questions at once (`mcp_ask()`), each
    /// under its own key. Answered through one [`Output::Answer`] once every
    /// question has its answer: an object of the answers by key (or the
    /// first failure).
    pub fn on_ask_all(
        &mut self,
        job: JobId,
        requests: Vec<(String, Value)>,
        out: &mut Vec<Output>,
    ) {
        self.ask_client(job, requests, true, out);
    }

    fn ask_client(
        &mut self,
        job: JobId,
        requests: Vec<(String, Value)>,
        keyed: bool,
        out: &mut Vec<Output>,
    ) {
        let Some(state) = self.jobs.get(&job) else {
            return out.push(Output::Answer(
                job,
                Err("the call is no longer running".into()),
            ));
        };
        if state.cancelled {
            return out.push(Output::Answer(job, Err("the call was cancelled".into())));
        }
        if requests.is_empty() {
            return out.push(Output::Answer(job, Ok(json!({}))));
        }
        let revision = state.revision;
        let task = state.task.clone();
        let mut prepared = Vec::with_capacity(requests.len());
        for (key, request) in requests {
            match prepare_request(request, revision) {
                Ok(request) => prepared.push((key, request)),
                // Nothing is asked when one of the questions cannot be.
                Err(reason) => return out.push(Output::Answer(job, Err(reason))),
            }
        }
        let extension_task = task.as_ref().filter(|task_id| {
            self.tasks()
                .get(task_id)
                .is_some_and(|t| t.dialect == Dialect::Extension)
        });
        if let Some(task_id) = extension_task {
            // Listed by tasks/get until tasks/update has answered them all.
            let listed: Vec<(String, Value)> = prepared
                .into_iter()
                .map(|(key, (_, request))| (key, request))
                .collect();
            if let Some(task) = self.tasks().get_mut(task_id) {
                task.need_inputs(listed, keyed);
            }
            return self.task_changed(task_id, out);
        }
        let methods: Vec<String> = prepared.iter().map(|(_, (m, _))| m.clone()).collect();
        let kv = vec![opentelemetry::KeyValue::new(
            "mcp.input_requests.methods",
            methods.join(","),
        )];
        self.job_span_event(job, "input requested", kv);
        let mut pending = HashSet::new();
        for (key, (method, request)) in prepared {
            if let Some(task_id) = &task {
                if let Some(task) = self.tasks().get_mut(task_id) {
                    task.need_input(key.clone(), request.clone());
                }
                self.trace_task(task_id);
            }
            let mut params = request["params"].clone();
            if let Some(task_id) = &task {
                if !params.is_object() {
                    params = json!({});
                }
                params["_meta"] =
                    json!({ crate::stores::tasks::RELATED_TASK: { "taskId": task_id } });
            }
            let id = RequestId::from_raw(
                &RawValue::from_string(format!("\"mcpserver-ask-{}\"", self.next_ask))
                    .expect("a JSON string"),
            )
            .expect("a valid id");
            self.next_ask += 1;
            out.push(Output::Write(jsonrpc::request(
                &id,
                &method,
                &params.to_string(),
            )));
            pending.insert(key.clone());
            self.asks.insert(id, Asked { job, method, key });
        }
        if let Some(state) = self.jobs.get_mut(&job) {
            state.gathering = Some(Gathering {
                pending,
                answers: Map::new(),
                keyed,
            });
        }
    }

    /// The client answered a request of ours.
    pub(super) fn on_response(
        &mut self,
        id: &RequestId,
        result: Option<Box<RawValue>>,
        error: Option<Box<RawValue>>,
        out: &mut Vec<Output>,
    ) {
        let Some(Asked { job, method, key }) = self.asks.remove(id) else {
            return;
        };
        let answer = match (result, error) {
            (Some(result), _) => serde_json::from_str::<Value>(result.get())
                .map_err(|e| format!("the client's answer is not JSON: {e}"))
                .and_then(|v| {
                    check_answer(&method, "answer", &v)
                        .map(|_| v)
                        .map_err(|e| e["message"].as_str().unwrap_or_default().to_string())
                }),
            (None, Some(error)) => {
                let error: Value = serde_json::from_str(error.get()).unwrap_or(Value::Null);
                let reason = error["message"].as_str().unwrap_or("no reason given");
                Err(if method == "elicitation/create" {
                    format!("the client could not ask the user: {reason}")
                } else {
                    format!("the client could not answer `{method}`: {reason}")
                })
            }
            (None, None) => Err("the client sent an empty answer".into()),
        };
        let kv = vec![
            opentelemetry::KeyValue::new("mcp.input_request.method", method.clone()),
            opentelemetry::KeyValue::new("mcp.input_request.answered", answer.is_ok()),
        ];
        self.job_span_event(job, "input answered", kv);
        match answer {
            Ok(answer) => self.gather_answer(job, key, answer, out),
            Err(reason) => self.deliver_answer(job, Err(reason), out),
        }
    }

    /// One of the requests a job sent the client is answered: the job gets
    /// the answers once all are in.
    fn gather_answer(&mut self, job: JobId, key: String, answer: Value, out: &mut Vec<Output>) {
        let task = self.jobs.get(&job).and_then(|s| s.task.clone());
        if let Some(task_id) = task {
            if let Some(task) = self.tasks().get_mut(&task_id) {
                task.input_answered(&key);
            }
            self.trace_task(&task_id);
        }
        let Some(gathering) = self.jobs.get_mut(&job).and_then(|s| s.gathering.as_mut()) else {
            return;
        };
        gathering.pending.remove(&key);
        gathering.answers.insert(key, answer);
        if !gathering.pending.is_empty() {
            return;
        }
        let gathering = self
            .jobs
            .get_mut(&job)
            .and_then(|s| s.gathering.take())
            .expect("checked above");
        let answer = if gathering.keyed {
            Value::Object(gathering.answers)
        } else {
            gathering
                .answers
                .into_iter()
                .next()
                .map_or(Value::Null, |(_, answer)| answer)
        };
        out.push(Output::Answer(job, Ok(answer)));
    }

    /// The client answered a request of ours with a line that could not be
    /// read: the handler waiting for it learns so instead of waiting on.
    pub(super) fn on_unreadable_response(
        &mut self,
        id: &RequestId,
        reason: &str,
        out: &mut Vec<Output>,
    ) {
        if let Some(Asked { job, .. }) = self.asks.remove(id) {
            let answer = Err(format!("the client's answer could not be read: {reason}"));
            self.deliver_answer(job, answer, out);
        }
    }

    /// Ends a job's wait for input with `answer` (a failure, as no other
    /// answer is delivered whole): requests of the round still unanswered
    /// are forgotten.
    fn deliver_answer(&mut self, job: JobId, answer: Result<Value, String>, out: &mut Vec<Output>) {
        self.asks.retain(|_, asked| asked.job != job);
        let task = self.jobs.get_mut(&job).and_then(|s| {
            s.gathering = None;
            s.task.clone()
        });
        if let Some(task_id) = task {
            if let Some(task) = self.tasks().get_mut(&task_id) {
                task.resume();
            }
            self.trace_task(&task_id);
        }
        out.push(Output::Answer(job, answer));
    }

    /// Input ended while `job` waited for the client's answer to an input
    /// request, so none can come: the handler learns why, and the call ends
    /// as cancelled (nothing more is sent for it, a task is cancelled).
    pub fn on_input_lost(&mut self, job: JobId, out: &mut Vec<Output>) {
        self.asks.retain(|_, asked| asked.job != job);
        if let Some(state) = self.jobs.get_mut(&job) {
            state.cancelled = true;
            state.gathering = None;
        }
        out.push(Output::Answer(
            job,
            Err("the client closed its input before answering".into()),
        ));
    }

    /// `tasks/update` answers input requests of an extension task. Every
    /// answer is checked before any is kept (a bad one is refused with
    /// nothing lost); keys not outstanding are ignored; the job resumes once
    /// the round's last request is answered. A task that has ended takes no
    /// answers, and says so by acknowledging them all the same.
    pub(super) fn answer_task_inputs(
        &mut self,
        task_id: &str,
        job: JobId,
        responses: Map<String, Value>,
        out: &mut Vec<Output>,
    ) -> Result<(), Value> {
        let resumed = {
            let mut store = self.tasks();
            let Some(task) = store.get_mut(task_id) else {
                return Ok(());
            };
            for (key, answer) in &responses {
                if let Some(request) = task.input_requests.get(key) {
                    let method = request["method"].as_str().unwrap_or("elicitation/create");
                    check_answer(method, key, answer)?;
                }
            }
            let before = task.input_requests.len();
            let resumed = task.answer_inputs(responses);
            let changed = resumed.is_some() || task.input_requests.len() != before;
            (resumed, changed)
        };
        match resumed {
            (Some(answers), _) => {
                self.task_changed(task_id, out);
                out.push(Output::Answer(job, Ok(answers)));
            }
            (None, true) => self.task_changed(task_id, out),
            (None, false) => {}
        }
        Ok(())
    }
}

/// An input request as `method` and `{method, params}` for the revision
/// of the call: an elicitation's form as the revision can carry it, or why
/// the request cannot be sent.
fn prepare_request(request: Value, revision: Revision) -> Result<(String, Value), String> {
    let method = request["method"]
        .as_str()
        .unwrap_or("elicitation/create")
        .to_string();
    let mut params = request["params"].clone();
    if method == "elicitation/create" {
        params["requestedSchema"] =
            crate::protocol::elicitation::for_revision(&params["requestedSchema"], revision)?;
        if revision >= Revision::V2025_11_25 {
            params["mode"] = json!("form");
        }
    }
    if method == "sampling/createMessage" && !revision.has_audio() && has_audio(&params) {
        return Err(format!(
            "protocol revision {revision} cannot carry audio in a sampling request \
             (2025-03-26 or later can)"
        ));
    }
    Ok((
        method.clone(),
        json!({ "method": method, "params": params }),
    ))
}

/// Whether a sampling request's messages hold an audio block.
fn has_audio(params: &Value) -> bool {
    let blocks = |content: &Value| match content {
        Value::Array(list) => list.clone(),
        other => vec![other.clone()],
    };
    params["messages"].as_array().is_some_and(|messages| {
        messages
            .iter()
            .flat_map(|m| blocks(&m["content"]))
            .any(|b| b["type"] == "audio")
    })
}

/// The client capability a server-to-client request needs.
pub fn capability_for(method: &str) -> &str {
    match method {
        "sampling/createMessage" => "sampling",
        "roots/list" => "roots",
        _ => "elicitation",
    }
}

/// Whether `answer` is a result of `method`: an elicitation's `{action:
/// accept|decline|cancel, content?}`, a sampling's `{role, content, model}`,
/// or roots' `{roots: [{uri, name?}]}`.
pub fn is_answer_to(method: &str, answer: &Value) -> bool {
    match method {
        "sampling/createMessage" => {
            let role_ok = answer
                .get("role")
                .and_then(Value::as_str)
                .is_some_and(|r| r == "user" || r == "assistant");
            let content_ok = answer
                .get("content")
                .is_some_and(|c| c.is_object() || c.is_array());
            role_ok && content_ok && answer.get("model").is_some_and(Value::is_string)
        }
        "roots/list" => answer
            .get("roots")
            .and_then(Value::as_array)
            .is_some_and(|roots| {
                roots
                    .iter()
                    .all(|r| r.get("uri").is_some_and(Value::is_string))
            }),
        _ => {
            let action_ok = answer
                .get("action")
                .and_then(Value::as_str)
                .is_some_and(|a| ANSWER_ACTIONS.contains(&a));
            let content_ok = answer
                .get("content")
                .is_none_or(|c| c.is_object() || c.is_null());
            action_ok && content_ok
        }
    }
}

fn describe_result(method: &str) -> &'static str {
    match method {
        "sampling/createMessage" => {
            "a sampling result: an object with `role`, `content` and `model`"
        }
        "roots/list" => "a roots result: an object with `roots`, an array of `{uri, name?}`",
        _ => {
            "an elicitation result: an object with `action` (accept, decline or cancel) \
             and optional `content`"
        }
    }
}

/// The answer to an input request of `method`, or -32602 saying what it
/// must be.
fn check_answer(method: &str, key: &str, answer: &Value) -> Result<(), Value> {
    if is_answer_to(method, answer) {
        return Ok(());
    }
    Err(invalid(
        &format!(
            "Invalid params: `inputResponses.{key}` must be {}",
            describe_result(method)
        ),
        None,
    ))
}

/// An answer carried by a 2026-07-28 retry, whose state records the keys
/// asked but not their methods: it must be a result of one of them (the
/// handler checks it is the one it asked for when it reads it).
fn check_any_answer(key: &str, answer: &Value) -> Result<(), Value> {
    if INPUT_METHODS.iter().any(|m| is_answer_to(m, answer)) {
        return Ok(());
    }
    Err(invalid(
        &format!(
            "Invalid params: `inputResponses.{key}` must be an elicitation, sampling \
             or roots result"
        ),
        None,
    ))
}

fn invalid(message: &str, data: Option<Value>) -> Value {
    jsonrpc::error_object(jsonrpc::INVALID_PARAMS, message, data.as_ref())
}
