//! Tools: `tools/list`, `tools/call` (queued as a job for R, or started
//! as a task), and the 2026-07-28 `subscriptions/listen` stream.

use super::arguments::Verbatim;
use super::job::InputMode;
use super::job::Purpose;
use super::job::{CallContext, Job, JobState, NewJob, Output};
use super::state::Engine;
use super::wire::{invalid_params, raw_json, single_page, META_LOG_LEVEL, META_SUBSCRIPTION};
use crate::protocol::app;
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::logging::LogLevel;
use crate::protocol::revision::Revision;
use crate::stores::tasks;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// `notifications/tasks` for the listen stream `subscription`: `task` is
/// the task as `tasks/get` shows it.
pub fn task_notification(task: Value, subscription: &RequestId) -> String {
    let mut params = match task {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    params.insert(
        "_meta".into(),
        json!({ META_SUBSCRIPTION: raw_json(subscription.as_json()) }),
    );
    jsonrpc::notification("notifications/tasks", &Value::Object(params).to_string())
}

#[derive(Deserialize)]
pub(super) struct TokenProbe<'a> {
    #[serde(rename = "progressToken", borrow)]
    pub(super) token: Option<&'a RawValue>,
}

/// The progress token in `_meta` exactly as sent (integers of any size survive).
pub(super) fn progress_token(meta: &RawValue) -> Option<String> {
    let probe: TokenProbe = serde_json::from_str(meta.get()).ok()?;
    RequestId::from_raw(probe.token?).map(|t| t.as_json().to_string())
}

impl Engine {
    pub(super) fn tools_list(&self, id: &RequestId, params: &Value, rev: Revision) -> String {
        // Tools that show their results in an app are listed as such only
        // to clients that declared the MCP Apps extension.
        let meta = params.get("_meta").and_then(Value::as_object);
        let apps = app::declared(&self.client_capabilities(meta, rev));
        let tools = self.registry.list_json_for(rev, apps);
        let changed = self.registry.changed().tools;
        self.list_result(id, params, rev, ("tools", tools), "every tool", changed)
    }

    /// The one page of a list result (`tools/list`, `resources/list`,
    /// `resources/templates/list`, `prompts/list`): `{"<key>": <items>}`, on
    /// 2026-07-28 with the caching hints and server `_meta` as well. The
    /// items are pre-serialised, so the body is assembled as text. A
    /// cursor is refused: everything is on the first page, and `what`
    /// names what the refusal says is listed there; `changed`, whether the
    /// list has changed while serving (its caching hint is then short).
    pub(super) fn list_result(
        &self,
        id: &RequestId,
        params: &Value,
        rev: Revision,
        (key, items): (&str, &str),
        what: &str,
        changed: bool,
    ) -> String {
        if let Err(reason) = single_page(params, what) {
            return invalid_params(id, &reason);
        }
        let mut body = String::with_capacity(items.len() + 200);
        body.push_str(&format!("{{\"{key}\":"));
        body.push_str(items);
        if rev.is_modern() {
            body.push_str(&format!(
                ",\"ttlMs\":{},\"cacheScope\":\"public\",\"resultType\":\"complete\",\"_meta\":{}",
                self.list_ttl_ms(changed),
                Value::Object(self.server_meta.clone())
            ));
        }
        body.push('}');
        jsonrpc::success(id, &body)
    }

    /// The refusal of a call over the bound. Only while a tool waits for
    /// input does the reader go on past this many calls (see
    /// `backpressure`): refuse rather than hold more.
    pub(super) fn too_many_calls(&self, id: &RequestId) -> String {
        let limit = self.config.limits.max_queued_calls;
        jsonrpc::error(
            Some(id),
            jsonrpc::INTERNAL_ERROR,
            &format!(
                "Too many tool calls waiting: at most {limit} may be in progress at once; \
                 retry when some have finished"
            ),
            Some(&json!({ "limit": limit })),
        )
    }

    pub(super) fn tools_call(
        &mut self,
        id: RequestId,
        params: &Value,
        raw: Verbatim,
        rev: Revision,
        client_info: Option<Arc<Value>>,
        out: &mut Vec<Output>,
    ) {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            let text = invalid_params(&id, "`name` must be a string");
            return self.respond(&id, text, out);
        };
        // An arguments object stays text until the job is made (a small
        // one) or the tool's thread reads and checks it (a large one, see
        // `Job::read_arguments`): neither the reader nor this lock waits
        // for a large one.
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => raw.arguments,
            Some(_) => {
                let text = invalid_params(&id, "`arguments` must be an object");
                return self.respond(&id, text, out);
            }
        };
        let Some(index) = self.registry.find(name) else {
            let text = jsonrpc::error(
                Some(&id),
                jsonrpc::INVALID_PARAMS,
                &format!("Unknown tool: {name}"),
                Some(&json!({ "tool": name })),
            );
            return self.respond(&id, text, out);
        };
        let meta = params.get("_meta").and_then(Value::as_object).cloned();
        let caps = self.client_capabilities(meta.as_ref(), rev);
        let as_task = match self.task_decision(index, params, rev, &caps) {
            Ok(t) => t,
            Err(error) => {
                let text = jsonrpc::error_response(Some(&id), &error);
                return self.respond(&id, text, out);
            }
        };
        // Before a `requestState` is accepted (and so used up).
        if as_task.is_none() && self.direct_calls >= self.config.limits.max_queued_calls {
            let text = self.too_many_calls(&id);
            return self.respond(&id, text, out);
        }
        let answers = match self.retry_answers(index, arguments.as_deref(), params, rev) {
            Ok(answers) => answers,
            Err(error) => {
                let text = jsonrpc::error_response(Some(&id), &error);
                return self.respond(&id, text, out);
            }
        };
        // The token is read again from the raw text only when there is one,
        // to keep its exact spelling (integers of any size).
        let has_token = meta
            .as_ref()
            .is_some_and(|m| m.contains_key("progressToken"));
        let progress_token = raw
            .meta
            .as_deref()
            .filter(|_| has_token)
            .and_then(progress_token);
        let job = self.job_ids.fetch_add(1, Ordering::Relaxed);
        let task = match as_task {
            Some((dialect, ttl)) => match self.start_task(job, index, dialect, ttl, &id, out) {
                Some(task) => Some(task),
                // No room for it: refused, and already answered.
                None => return,
            },
            None => None,
        };
        let input = self.input_mode(rev, &caps, task.is_some());
        let task_later = task.is_none() && self.may_become_task(index, rev, &caps);
        let new = NewJob {
            job,
            request_id: id,
            handler: index,
            rev,
            arguments,
            meta,
            client_info,
            progress_token,
            capabilities: caps,
            answers,
            input,
            purpose: Purpose::Tool,
            task,
            task_later,
        };
        self.launch_job(new, out);
    }

    /// Records a new job's state and hands the job to the R thread. A job
    /// that runs as a task is answered already, so it neither counts
    /// against the bound on direct calls nor is found by its request id.
    pub(crate) fn launch_job(&mut self, new: NewJob, out: &mut Vec<Output>) {
        let log_level = new
            .meta
            .as_ref()
            .and_then(|m| m.get(META_LOG_LEVEL))
            .and_then(Value::as_str)
            .and_then(LogLevel::parse);
        let mut state = JobState::new(
            new.request_id.clone(),
            new.handler,
            self.registry.clone(),
            new.rev,
            new.capabilities.clone(),
        );
        state.progress_token = new.progress_token.clone();
        state.log_level = log_level;
        state.answers = new.answers.clone();
        let token_check = new.purpose == Purpose::Token;
        state.purpose = new.purpose;
        // Only a retry binds its request state to the arguments as sent.
        if matches!(new.input, InputMode::Retry) {
            state.arguments = new.arguments.clone();
        }
        state.input = new.input.clone();
        state.task = new.task.clone();
        state.task_later = new.task_later;
        let extension_task = new.task.as_ref().is_some_and(|task| {
            self.tasks()
                .get(task)
                .is_some_and(|t| t.dialect == tasks::Dialect::Extension)
        });
        if extension_task {
            // The extension's tasks get no progress or log notifications:
            // their call is answered already.
            state.progress_token = None;
            state.log_level = None;
        }
        self.jobs.insert(new.job, state);
        if new.task.is_none() {
            self.direct_calls += 1;
            self.by_request.insert(new.request_id.clone(), new.job);
        }
        let trace = self.job_trace(&new.request_id, new.task.as_deref());
        let mut job = Box::new(Job {
            id: new.job,
            tool: new.handler,
            registry: self.registry.clone(),
            arguments: Map::new(),
            sent_arguments: new.arguments,
            read_early: None,
            token_check,
            context: CallContext {
                request_id: new.request_id,
                revision: new.rev,
                progress_token: new.progress_token,
                meta: new.meta,
                client_info: new.client_info,
                log_level,
                input: new.input,
                capabilities: new.capabilities,
                answers: new.answers,
                task: new.task,
                auth: self.auth.clone(),
                task_later: new.task_later,
                trace,
                session_id: self.peer.session.clone(),
            },
        });
        job.read_small_arguments(&self.registry);
        out.push(Output::Run(job));
    }

    /// 2026-07-28 `subscriptions/listen`: acknowledged with the list
    /// changes and resource URIs the server will report on it (those asked
    /// for that it has), the stream stays open until the client cancels it
    /// or stdin ends.
    pub(super) fn listen(&mut self, id: RequestId, params: &Value, out: &mut Vec<Output>) {
        let limit = self.config.limits.max_subscriptions;
        if self.listens.len() >= limit && !self.listens.contains_key(&id) {
            let text = jsonrpc::error(
                Some(&id),
                jsonrpc::INTERNAL_ERROR,
                &format!(
                    "Too many open subscriptions: at most {limit} may be open at once; \
                     cancel one first"
                ),
                Some(&json!({ "limit": limit })),
            );
            return self.respond(&id, text, out);
        }
        let lists = self.listen_lists(params);
        let followed = match self.listen_tasks(params, out) {
            Ok(followed) => followed,
            Err(error) => {
                return self.respond(&id, jsonrpc::error_response(Some(&id), &error), out)
            }
        };
        let mut honoured = json!({});
        for (flag, asked) in [
            ("toolsListChanged", lists.tools),
            ("resourcesListChanged", lists.resources),
            ("promptsListChanged", lists.prompts),
        ] {
            if asked {
                honoured[flag] = Value::Bool(true);
            }
        }
        if let Some(uris) = self.listen_resources(params) {
            honoured["resourceSubscriptions"] = json!(uris);
            self.listen_uris
                .insert(id.clone(), uris.into_iter().collect());
        }
        if let Some(tasks) = &followed {
            honoured["taskIds"] = json!(tasks.iter().map(|(task, _)| task).collect::<Vec<_>>());
        }
        let params = json!({
            "notifications": honoured,
            "_meta": { META_SUBSCRIPTION: raw_json(id.as_json()) }
        });
        out.push(Output::Write(jsonrpc::notification(
            "notifications/subscriptions/acknowledged",
            &params.to_string(),
        )));
        if let Some(tasks) = followed {
            out.push(Output::WatchTasks {
                subscription: id.clone(),
                tasks: tasks.iter().map(|(task, _)| task.clone()).collect(),
            });
            // Where each task stands now: a change made before the stream
            // opened is not missed.
            for (_, status) in tasks {
                out.push(Output::Write(task_notification(status, &id)));
            }
        }
        // Acknowledged, not answered: a batch it is part of stops waiting.
        self.forget_in_batch(&id, out);
        self.listens.insert(id, lists);
    }
}
