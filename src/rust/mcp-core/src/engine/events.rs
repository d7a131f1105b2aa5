//! What the transport tells an engine: a line read, a line too long, the end
//! of input, a call's outcome, progress and logs; and how a result is
//! settled into the response its client is sent.

use super::handlers;
use super::job::Purpose;
use super::job::{JobState, Outcome, Output, Progress};
use super::middleware;
use super::result;
use super::result::ToolResult;
use super::state::Engine;
use super::wire::{describe_duration, raw_json, META_SUBSCRIPTION};
use crate::engine::registry::Registry;
use crate::protocol::jsonrpc::{self, Line, RequestId};
use crate::protocol::logging::LogLevel;
use crate::protocol::revision::Revision;
use crate::stores::tasks;
use crate::util::ids::JobId;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Progress notifications for one request are sent at most this often; a
/// faster flood is thinned, the latest value winning.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(50);

pub(super) fn progress_notification(token: &str, update: &Progress, rev: Revision) -> String {
    let mut params = Map::new();
    params.insert("progressToken".into(), raw_json(token));
    params.insert("progress".into(), json!(update.progress));
    if let Some(total) = update.total.filter(|t| t.is_finite()) {
        params.insert("total".into(), json!(total));
    }
    if let (Some(message), true) = (&update.message, rev.has_progress_message()) {
        params.insert("message".into(), Value::from(message.as_str()));
    }
    jsonrpc::notification("notifications/progress", &Value::Object(params).to_string())
}

impl Engine {
    /// The client has gone for good (its HTTP session ended): every call
    /// still running or queued is cancelled (nothing more is sent for it, a
    /// tool waiting for input learns it will get none) and subscription
    /// streams are closed.
    pub fn on_close(&mut self, out: &mut Vec<Output>) {
        for (id, _) in self.listens.drain() {
            out.push(Output::UnwatchTasks(id));
        }
        let mut jobs: Vec<JobId> = self.jobs.keys().copied().collect();
        jobs.sort_unstable();
        for job in jobs {
            self.on_input_lost(job, out);
            out.push(Output::Cancel(job));
        }
    }

    /// Tool calls accepted and not yet answered.
    pub fn pending_jobs(&self) -> usize {
        self.jobs.len()
    }

    /// Tool calls accepted and not yet answered whose client waits for the
    /// answer: the calls [`crate::transport::backpressure`] bounds. Tasks are left out:
    /// creating one is answered at once, so the client goes on talking
    /// (`tasks/get`, `tasks/cancel`), and the task store bounds them.
    pub fn pending_calls(&self) -> usize {
        self.direct_calls
    }

    /// Handles one line of input (without its terminator).
    pub fn on_line(&mut self, bytes: &[u8], out: &mut Vec<Output>) {
        self.on_parsed_line(jsonrpc::parse_line(bytes), out);
    }

    /// Handles one line already parsed with [`jsonrpc::parse_line`] (which
    /// the server does before taking the engine's lock).
    pub fn on_parsed_line(&mut self, line: Line, out: &mut Vec<Output>) {
        // One message sees one set of tools, resources and prompts.
        self.registry = self.live.current();
        match line {
            Line::Blank => {}
            Line::ParseError(reason) => {
                let data = json!({ "reason": reason });
                out.push(Output::Write(jsonrpc::error(
                    None,
                    jsonrpc::PARSE_ERROR,
                    "Parse error",
                    Some(&data),
                )));
            }
            Line::Single(message) => self.on_message(message, out),
            Line::Batch(messages) => self.on_batch(messages, out),
            Line::NotUtf8 {
                id,
                response: false,
                reason,
            } => {
                // -32700 as for any line that is not JSON text (RFC 8259
                // requires UTF-8), but on the request's own id, which could
                // be read: its sender stops waiting and learns why.
                let data = json!({ "reason": reason });
                out.push(Output::Write(jsonrpc::error(
                    Some(&id),
                    jsonrpc::PARSE_ERROR,
                    "Parse error",
                    Some(&data),
                )));
            }
            Line::NotUtf8 {
                id,
                response: true,
                reason,
            } => self.on_unreadable_response(&id, &reason, out),
        }
    }

    /// A line longer than the limit was skipped; `prefix` is its beginning.
    /// The request is answered if its id can be read from the prefix, so the
    /// client is not left waiting.
    pub fn on_oversized(&mut self, prefix: &[u8], length: usize, out: &mut Vec<Output>) {
        let id = crate::protocol::jsonrpc::sniff_id(prefix);
        let limit = self.config.max_message_bytes;
        if let Some(ask) = id.as_ref().filter(|id| self.asks.contains_key(id)) {
            // The client's answer to the server's own input request: the
            // tool waiting for it learns why none comes, and the client gets
            // no error for a request it never sent.
            let reason = format!("it is too large ({length} bytes; the limit is {limit} bytes)");
            return self.on_unreadable_response(ask, &reason, out);
        }
        let message =
            format!("Message too large: {length} bytes exceeds the limit of {limit} bytes");
        let data = json!({ "size": length, "limit": limit });
        out.push(Output::Write(jsonrpc::error(
            id.as_ref(),
            jsonrpc::INVALID_REQUEST,
            &message,
            Some(&data),
        )));
    }

    /// Stdin reached its end: close open subscription streams gracefully.
    pub fn on_eof(&mut self, out: &mut Vec<Output>) {
        self.listen_uris.clear();
        let mut ids: Vec<RequestId> = self.listens.drain().map(|(id, _)| id).collect();
        ids.sort_by(|a, b| a.as_json().cmp(b.as_json()));
        for id in ids {
            out.push(Output::UnwatchTasks(id.clone()));
            let mut meta = self.server_meta.clone();
            meta.insert(META_SUBSCRIPTION.into(), raw_json(id.as_json()));
            let result = json!({ "resultType": "complete", "_meta": meta });
            out.push(Output::Write(jsonrpc::success(&id, &result.to_string())));
        }
    }

    /// A job finished (or was interrupted).
    pub fn on_completed(&mut self, job: JobId, outcome: Outcome, out: &mut Vec<Output>) {
        let Some(state) = self.jobs.remove(&job) else {
            return;
        };
        if state.task.is_none() {
            self.direct_calls -= 1;
        }
        if self.by_request.get(&state.request_id) == Some(&job) {
            self.by_request.remove(&state.request_id);
        }
        self.asks.retain(|_, asked| asked.job != job);
        if state.cancelled || matches!(outcome, Outcome::Cancelled) {
            self.end_span_unanswered(&state.request_id, "cancelled");
            self.forget_in_batch(&state.request_id, out);
            if let Some(task) = &state.task {
                self.task_job_cancelled(task, out);
            }
            return;
        }
        // A report the rate limit held back still goes out, before the result.
        if let (Some(update), Some(token)) = (&state.pending_progress, &state.progress_token) {
            out.push(Output::Write(progress_notification(
                token,
                update,
                state.revision,
            )));
        }
        let asked = match &outcome {
            Outcome::InputRequired { .. } => 1,
            Outcome::InputsRequired(requests) => requests.len() as i64,
            _ => 0,
        };
        if asked > 0 {
            let count = opentelemetry::KeyValue::new("mcp.input_requests.count", asked);
            self.span_event(&state.request_id, "input required", vec![count]);
        }
        if let Outcome::TimedOut(limit) = &outcome {
            let seconds =
                opentelemetry::KeyValue::new("mcp.time_limit.seconds", limit.as_secs_f64());
            self.span_event(&state.request_id, "time limit reached", vec![seconds]);
        }
        if let Outcome::Streamed {
            content,
            meta,
            object,
        } = outcome
        {
            self.respond_streamed(&state, content, (meta, object), out);
            return;
        }
        let settled = self.settle(&state, outcome);
        match &state.task {
            Some(task) => self.finish_task(task, settled, out),
            None => {
                let text = match settled {
                    Ok(body) => {
                        let _span =
                            crate::util::spans::span("engine: the response line", body.len());
                        jsonrpc::success_owned(&state.request_id, body)
                    }
                    Err(error) => jsonrpc::error_response(Some(&state.request_id), &error),
                };
                self.respond(&state.request_id, text, out);
            }
        }
    }

    /// Whether the result of `job` may be sent as it is written (see
    /// [`Outcome::Streamed`]): a plain tool call, still unanswered, whose
    /// response goes out on its own (not in a batch, not kept as a task's
    /// result) and whose span does not keep the result.
    pub fn can_stream(&self, job: JobId) -> bool {
        let Some(state) = self.jobs.get(&job) else {
            return false;
        };
        let captured = self
            .config
            .telemetry
            .as_ref()
            .is_some_and(|t| t.capture().result);
        state.purpose == Purpose::Tool
            && !state.cancelled
            && state.task.is_none()
            && !self.batch_of.contains_key(&state.request_id)
            && !captured
    }

    /// Answers a job with a result still being written.
    fn respond_streamed(
        &mut self,
        state: &JobState,
        content: crate::protocol::streamed::JsonStream,
        shape: (Option<Map<String, Value>>, bool),
        out: &mut Vec<Output>,
    ) {
        if state.task.is_some() || self.batch_of.contains_key(&state.request_id) {
            // `can_stream` said no to these: the embedder broke the rule.
            let error = jsonrpc::error_object(
                jsonrpc::INTERNAL_ERROR,
                "A streamed result was returned for a call that cannot take one",
                None,
            );
            let text = jsonrpc::error_response(Some(&state.request_id), &error);
            match &state.task {
                Some(task) => self.finish_task(task, Err(error), out),
                None => self.respond(&state.request_id, text, out),
            }
            return;
        }
        let plan = self.plan_for(state);
        let line = result::render_streamed(
            state.registry.tool(state.tool),
            &state.request_id,
            shape,
            state.revision,
            plan.extra_meta.as_ref(),
            content,
        );
        self.end_span(&state.request_id, &line.outline());
        out.push(Output::WriteStreamed(line));
    }

    /// What a finished job answers: a result body, or a JSON-RPC error object.
    pub(super) fn settle(&mut self, state: &JobState, outcome: Outcome) -> Result<String, Value> {
        let tool = state.registry.tool(state.tool);
        if state.purpose != Purpose::Tool {
            match outcome {
                Outcome::TimedOut(limit) => {
                    let reason = format!("it timed out after {}", describe_duration(limit));
                    return Err(handlers::timed_out(&state.purpose, &reason));
                }
                Outcome::Failed(reason) => return Err(handlers::failure(&state.purpose, &reason)),
                _ => {}
            }
        }
        match outcome {
            Outcome::Done(result) => self.plan_for(state).settle(&result),
            Outcome::Settled(settled) => settled,
            Outcome::TimedOut(limit) => {
                let text = format!(
                    "Tool \"{}\" timed out after {} and was stopped.",
                    tool.def.name,
                    describe_duration(limit)
                );
                Ok(self.result_body(state, &ToolResult::error(text)))
            }
            Outcome::Failed(reason) => Err(jsonrpc::error_object(
                jsonrpc::INTERNAL_ERROR,
                &format!("Tool \"{}\" could not be run: {reason}", tool.def.name),
                Some(&json!({ "tool": tool.def.name })),
            )),
            Outcome::InputRequired { key, request } => {
                self.input_required_answer(state, vec![(key, request)])
            }
            Outcome::InputsRequired(requests) => self.input_required_answer(state, requests),
            Outcome::Cancelled | Outcome::Streamed { .. } => {
                unreachable!("handled by the caller")
            }
        }
    }

    /// A call waited for R past the queue limit and will not run (the
    /// board has marked it so): it is answered with an error saying so.
    /// A call cancelled meanwhile gets no answer, as any cancelled call.
    pub fn on_queue_expired(&mut self, job: JobId, waited: Duration, out: &mut Vec<Output>) {
        let Some(state) = self.jobs.get(&job) else {
            return;
        };
        if state.cancelled {
            return;
        }
        let text = format!(
            "Not run: R was busy for {} (its console running a command, or other calls ahead \
             of this one), so the call was given up without running. Try again once R is free.",
            describe_duration(waited)
        );
        let outcome = if state.purpose == Purpose::Tool {
            Outcome::Done(ToolResult::error(text))
        } else {
            Outcome::Failed(text)
        };
        self.on_completed(job, outcome, out);
    }

    /// How to render the result of `job`, if it is still waiting for one.
    pub fn render_plan(&self, job: JobId) -> Option<RenderPlan> {
        self.jobs
            .get(&job)
            .filter(|s| !s.cancelled)
            .map(|s| self.plan_for(s))
    }

    /// Results of 2026-07-28 requests carry the server's identity; those of
    /// 2025-11-25 tasks their task id, as `tasks/result` requires.
    pub(super) fn plan_for(&self, state: &JobState) -> RenderPlan {
        let mut extra = state.revision.is_modern().then(|| self.server_meta.clone());
        if let (Some(task), false) = (&state.task, state.revision.is_modern()) {
            let mut meta = Map::new();
            meta.insert(tasks::RELATED_TASK.into(), json!({ "taskId": task }));
            extra = Some(meta);
        }
        RenderPlan {
            registry: state.registry.clone(),
            tool: state.tool,
            revision: state.revision,
            extra_meta: extra,
            purpose: state.purpose.clone(),
            read_ttl_ms: self.config.read_ttl_ms,
        }
    }

    /// The `CallToolResult` of a job, for its revision.
    pub(super) fn result_body(&self, state: &JobState, result: &ToolResult) -> String {
        let plan = self.plan_for(state);
        let tool = state.registry.tool(state.tool);
        result::render(tool, result, state.revision, plan.extra_meta.as_ref())
    }

    /// A running tool reported progress. Sent when the client gave a
    /// progress token, only when the value increased, and at most once per
    /// [`PROGRESS_INTERVAL`] (a report arriving sooner is held, the latest
    /// one winning, and sent when due).
    pub fn on_progress(
        &mut self,
        job: JobId,
        update: Progress,
        now: Instant,
        out: &mut Vec<Output>,
    ) {
        let Some(state) = self.jobs.get_mut(&job) else {
            return;
        };
        let (Some(token), false) = (&state.progress_token, state.cancelled) else {
            return;
        };
        let floor = state
            .pending_progress
            .as_ref()
            .map(|p| p.progress)
            .or(state.last_progress.map(|(v, _)| v));
        if !update.progress.is_finite() || floor.is_some_and(|f| update.progress <= f) {
            return;
        }
        match state.last_progress {
            Some((_, at)) if now.duration_since(at) < PROGRESS_INTERVAL => {
                if state.pending_progress.is_none() {
                    out.push(Output::ProgressDue(
                        job,
                        PROGRESS_INTERVAL - now.duration_since(at),
                    ));
                }
                state.pending_progress = Some(update);
            }
            _ => {
                out.push(Output::Write(progress_notification(
                    token,
                    &update,
                    state.revision,
                )));
                state.last_progress = Some((update.progress, now));
                // A held report is older than this one: it must not follow it.
                state.pending_progress = None;
                self.progress_event(job, &update);
            }
        }
    }

    /// A progress notification went out: an event on the call's span.
    fn progress_event(&mut self, job: JobId, update: &Progress) {
        if self.spans.is_empty() {
            return;
        }
        let mut kv = vec![opentelemetry::KeyValue::new(
            "mcp.progress",
            update.progress,
        )];
        if let Some(total) = update.total {
            kv.push(opentelemetry::KeyValue::new("mcp.progress.total", total));
        }
        self.job_span_event(job, "progress", kv);
    }

    /// A held-back progress report is due.
    pub fn on_progress_due(&mut self, job: JobId, now: Instant, out: &mut Vec<Output>) {
        let Some(state) = self.jobs.get_mut(&job) else {
            return;
        };
        let (Some(update), Some(token)) = (state.pending_progress.take(), &state.progress_token)
        else {
            return;
        };
        let increases = state
            .last_progress
            .is_none_or(|(last, _)| update.progress > last);
        if !state.cancelled && increases {
            out.push(Output::Write(progress_notification(
                token,
                &update,
                state.revision,
            )));
            state.last_progress = Some((update.progress, now));
            self.progress_event(job, &update);
        }
    }

    /// A running tool logged a message. Sent only to a client that asked:
    /// a 2026-07-28 request through its `logLevel`, a handshake-era session
    /// through `logging/setLevel`; never for a cancelled request.
    pub fn on_log(&mut self, job: JobId, level: LogLevel, data: Value, out: &mut Vec<Output>) {
        let Some(state) = self.jobs.get(&job) else {
            return;
        };
        let threshold = if state.revision.is_modern() {
            state.log_level
        } else {
            self.session.as_ref().and_then(|s| s.log_level)
        };
        if state.cancelled || threshold.is_none_or(|t| level < t) {
            return;
        }
        let params = json!({
            "level": level.as_str(),
            "logger": state.registry.tool(state.tool).def.name,
            "data": data,
        });
        out.push(Output::Write(jsonrpc::notification(
            "notifications/message",
            &params.to_string(),
        )));
    }
}

/// What rendering a job's result needs, so that the costly part (checking
/// the output schema, writing a large result's JSON) can run on the tool's
/// thread while the engine goes on answering other requests.
pub struct RenderPlan {
    pub(super) registry: Arc<Registry>,
    pub(super) tool: usize,
    pub(super) revision: Revision,
    pub(super) extra_meta: Option<Map<String, Value>>,
    /// What the job's result is for (a resource read, a prompt, ...).
    pub(super) purpose: Purpose,
    pub(super) read_ttl_ms: u64,
}

impl RenderPlan {
    /// The result body, or the -32603 error a result breaking the tool's
    /// output schema gets.
    pub fn settle(&self, result: &ToolResult) -> Result<String, Value> {
        if let Purpose::List { .. } = self.purpose {
            return middleware::list_body(
                &self.purpose,
                result,
                self.revision,
                self.extra_meta.as_ref(),
            );
        }
        if self.purpose != Purpose::Tool {
            return handlers::settle(
                &self.purpose,
                result,
                self.revision,
                self.extra_meta.as_ref(),
                self.read_ttl_ms,
            );
        }
        let tool = self.registry.tool(self.tool);
        match result::check_output(tool, result) {
            Ok(()) => Ok(result::render(
                tool,
                result,
                self.revision,
                self.extra_meta.as_ref(),
            )),
            Err(violation) => Err(jsonrpc::error_object(
                jsonrpc::INTERNAL_ERROR,
                &violation.message,
                Some(&violation.data),
            )),
        }
    }
}
