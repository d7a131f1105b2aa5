//! Input a running call asks the client for (`mcp_elicit()`, `mcp_ask()`,
//! ...): on R's main thread while the call waits, or for a worker call
//! without waiting; and how each outcome is reported to R.

use super::state::McpServer;
use super::text::{client_text, r_text};
use crate::check;
use crate::from_json;
use crate::interrupt::{interrupt_pending, INTERRUPT_TICK};
use crate::rvalue::RValue;
use extendr_api::prelude::*;
use mcp_core::engine::{InputMode, JobId};
use mcp_core::transport::slots::Answer;
use std::sync::mpsc;

/// Why a call run while `mcp_client()` of the same session waits for it
/// cannot ask that client and wait for the answer.
pub(super) const NESTED_INPUT: &str =
    "the call came from mcp_client() in the R session that runs the \
     server, which cannot answer while it waits for the call; serve the tool from another R \
     process, or call it with protocol_version = \"2026-07-28\", whose input rounds \
     mcp_client() answers";

/// How input requests report to R: `list(status, value)`.
pub(super) fn reply(status: &str, value: Robj) -> Robj {
    List::from_pairs(vec![("status", Robj::from(status)), ("value", value)]).into()
}

/// The client's answer as R values, or why R cannot hold it.
pub(super) fn answer_reply(answer: &serde_json::Value) -> Robj {
    // SAFETY: R's main thread; protected by Robj at once.
    match unsafe { from_json::build_raw(answer, "answer") } {
        Ok(built) => reply("answer", unsafe { Robj::from_sexp(built) }),
        Err(e) => reply("unusable", e.into()),
    }
}

/// An answer, or why the client gave none.
pub(super) fn answer_reply_or_reason(answer: Answer) -> Robj {
    match answer {
        Ok(given) => answer_reply(&given),
        Err(reason) => reply("failed", client_text(&reason)),
    }
}

/// The `elicitation/create` request for `mcp_elicit(message, schema)`, or
/// what is wrong with the schema.
pub(super) fn elicitation_request(
    message: &Robj,
    schema: &Robj,
) -> Result<serde_json::Value, String> {
    let message = r_text(message).unwrap_or_default();
    let (requested, _) = crate::types::elicitation_form(RValue::of(schema))?;
    Ok(serde_json::json!({
        "method": "elicitation/create",
        "params": { "message": message, "requestedSchema": requested },
    }))
}

impl McpServer {
    /// `ask_input()`: one input request for the running call.
    pub(super) fn send_input_request(&self, key: &str, spec: Robj) -> Robj {
        let request = match crate::input::read_request(RValue::of(&spec)) {
            Ok(r) => r,
            Err(e) => return check::fail(e),
        };
        let answer = |v: &serde_json::Value| -> Robj {
            match crate::input::answer_value(&request, v) {
                Ok(value) => reply("answer", value),
                Err(e) => reply("unusable", client_text(&e)),
            }
        };
        // Copied out first: no borrow may be alive while R values are built.
        let (job, given, input) = {
            let current = self.current.borrow();
            let Some(job) = current.as_ref() else {
                return reply("unavailable", "no tool call is running".into());
            };
            let context = &job.context;
            let given = context.answers.get(key).cloned();
            let input = mcp_core::engine::input_mode(
                context.revision,
                &context.capabilities,
                context.task.is_some(),
                &request.method,
            );
            (job.id, given, input)
        };
        let Some(server) = &self.server else {
            return reply("unavailable", "no tool call is running".into());
        };
        if let Some(given) = given {
            return answer(&given);
        }
        match input {
            InputMode::Unavailable(reason) => reply("unavailable", reason.into()),
            InputMode::Retry | InputMode::MissingCapability => {
                let mut needs_input = self.needs_input.borrow_mut();
                let pending = needs_input.entry(job).or_default();
                pending.retain(|(k, _)| k != key);
                pending.push((key.to_string(), request.request.clone()));
                reply("needs_input", ().into())
            }
            InputMode::Ask => {
                let answers = server.ask(job, key.to_string(), request.request.clone());
                loop {
                    match answers.recv_timeout(INTERRUPT_TICK) {
                        Ok(Ok(given)) => return answer(&given),
                        Ok(Err(reason)) => return reply("failed", client_text(&reason)),
                        Err(mpsc::RecvTimeoutError::Disconnected) => {
                            return reply("failed", "the server stopped".into())
                        }
                        Err(mpsc::RecvTimeoutError::Timeout) => {
                            if interrupt_pending() {
                                return reply("interrupted", ().into());
                            }
                        }
                    }
                }
            }
        }
    }

    /// `ask_inputs()`: one round of input requests for the running call.
    pub(super) fn send_input_round(&self, keys: Robj, specs: Robj) -> Robj {
        let keys: Vec<String> = match keys.as_string_vector() {
            Some(keys) => keys,
            None => return check::fail("the keys of an input round must be strings"),
        };
        let Some(specs) = specs.as_list() else {
            return check::fail("the requests of an input round must be a list");
        };
        if specs.len() != keys.len() {
            return check::fail("an input round needs one key per request");
        }
        let mut requests = Vec::with_capacity(keys.len());
        for spec in specs.values() {
            match crate::input::read_request(RValue::of(&spec)) {
                Ok(r) => requests.push(r),
                Err(e) => return check::fail(e),
            }
        }
        // Copied out first: no borrow may be alive while R values are built.
        let (job, plans) = {
            let current = self.current.borrow();
            let Some(job) = current.as_ref() else {
                return List::from_values(
                    keys.iter()
                        .map(|_| reply("unavailable", "no tool call is running".into())),
                )
                .into();
            };
            let context = &job.context;
            let plans: Vec<(Option<serde_json::Value>, InputMode)> = keys
                .iter()
                .zip(&requests)
                .map(|(key, request)| {
                    let mode = mcp_core::engine::input_mode(
                        context.revision,
                        &context.capabilities,
                        context.task.is_some(),
                        &request.method,
                    );
                    (context.answers.get(key).cloned(), mode)
                })
                .collect();
            (job.id, plans)
        };
        let plans: Vec<(Option<serde_json::Value>, InputMode)> = if self.nested.get() {
            plans
                .into_iter()
                .map(|(given, mode)| match mode {
                    InputMode::Ask => (given, InputMode::Unavailable(NESTED_INPUT.into())),
                    mode => (given, mode),
                })
                .collect()
        } else {
            plans
        };
        let Some(server) = &self.server else {
            return List::from_values(
                keys.iter()
                    .map(|_| reply("unavailable", "no tool call is running".into())),
            )
            .into();
        };
        let unavailable = plans
            .iter()
            .position(|(given, mode)| given.is_none() && matches!(mode, InputMode::Unavailable(_)));
        if let Some(at) = unavailable {
            let InputMode::Unavailable(reason) = &plans[at].1 else {
                unreachable!("found above")
            };
            let reason = reason.clone();
            return List::from_values((0..keys.len()).map(|i| {
                if i == at {
                    reply("unavailable", reason.as_str().into())
                } else {
                    reply("not_asked", ().into())
                }
            }))
            .into();
        }
        let answer = |request: &crate::input::InputRequest, v: &serde_json::Value| -> Robj {
            match crate::input::answer_value(request, v) {
                Ok(value) => reply("answer", value),
                Err(e) => reply("unusable", client_text(&e)),
            }
        };
        let mut replies: Vec<Option<Robj>> = vec![None; keys.len()];
        let mut to_ask = Vec::new();
        for (i, (given, mode)) in plans.into_iter().enumerate() {
            if let Some(given) = given {
                replies[i] = Some(answer(&requests[i], &given));
                continue;
            }
            match mode {
                InputMode::Retry | InputMode::MissingCapability => {
                    let mut needs_input = self.needs_input.borrow_mut();
                    let pending = needs_input.entry(job).or_default();
                    pending.retain(|(k, _)| k != &keys[i]);
                    pending.push((keys[i].clone(), requests[i].request.clone()));
                    replies[i] = Some(reply("needs_input", ().into()));
                }
                InputMode::Ask => to_ask.push(i),
                InputMode::Unavailable(_) => unreachable!("refused above"),
            }
        }
        if !to_ask.is_empty() {
            let asked = to_ask
                .iter()
                .map(|&i| (keys[i].clone(), requests[i].request.clone()))
                .collect();
            let answers = server.ask_all(job, asked);
            let outcome = loop {
                match answers.recv_timeout(INTERRUPT_TICK) {
                    Ok(answer) => {
                        break answer.map_err(|reason| reply("failed", client_text(&reason)))
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        break Err(reply("failed", "the server stopped".into()))
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if interrupt_pending() {
                            break Err(reply("interrupted", ().into()));
                        }
                    }
                }
            };
            for i in to_ask {
                replies[i] = Some(match &outcome {
                    Ok(by_key) => match by_key.get(&keys[i]) {
                        Some(given) => answer(&requests[i], given),
                        None => reply("failed", "the client's answers lack this request's".into()),
                    },
                    Err(failure) => failure.clone(),
                });
            }
        }
        List::from_values(replies.into_iter().map(|r| r.unwrap_or_else(|| ().into()))).into()
    }

    /// `worker_ask()`: a worker call's input request, never waiting.
    pub(super) fn ask_for_worker(&self, job: f64, key: &str, message: Robj, schema: Robj) -> Robj {
        let job = job as JobId;
        let request = match elicitation_request(&message, &schema) {
            Ok(r) => r,
            Err(e) => return reply("invalid", e.into()),
        };
        let input = self
            .worker_calls
            .borrow()
            .get(&job)
            .map(|context| context.input.clone());
        let (Some(server), Some(input)) = (&self.server, input) else {
            return reply("failed", "the call is no longer running".into());
        };
        match input {
            InputMode::Unavailable(reason) => reply("unavailable", reason.into()),
            InputMode::Retry | InputMode::MissingCapability => {
                self.needs_input
                    .borrow_mut()
                    .insert(job, vec![(key.to_string(), request)]);
                reply("needs_input", ().into())
            }
            InputMode::Ask => {
                let answer = server.ask(job, key.to_string(), request);
                self.worker_answers.borrow_mut().insert(job, answer);
                reply("asked", ().into())
            }
        }
    }

    /// `worker_answer()`: the answer to a worker call's input request, if in.
    pub(super) fn answer_for_worker(&self, job: f64) -> Robj {
        let job = job as JobId;
        let received = match self.worker_answers.borrow().get(&job) {
            None => return reply("failed", "no input request of this call is waiting".into()),
            Some(answers) => answers.try_recv(),
        };
        let answer = match received {
            Err(mpsc::TryRecvError::Empty) => return ().into(),
            Err(mpsc::TryRecvError::Disconnected) => Err("the server stopped".to_string()),
            Ok(answer) => answer,
        };
        self.worker_answers.borrow_mut().remove(&job);
        answer_reply_or_reason(answer)
    }
}
