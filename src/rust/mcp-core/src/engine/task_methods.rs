//! The task methods of both dialects, and how tool calls become tasks.
//!
//! Every request looks its task up once, after the store has forgotten the
//! tasks whose time to live has passed: a task that expires meanwhile is
//! simply unknown, and whoever was waiting on it is told it expired.

use crate::util::ids::JobId;

use super::job::InputMode;

use super::job::Output;

use super::state::Engine;

use super::wire::{invalid_params, META_CAPABILITIES};
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::revision::Revision;
use crate::protocol::tool::TaskSupport;
use crate::stores::tasks::{
    Dialect, Ending, Expired, Status, Task, WaitRefused, EXTENSION, MAX_TASKS, MAX_WAITING,
    MAX_WAITING_PER_TASK,
};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn method_not_found(message: String) -> Value {
    jsonrpc::error_object(jsonrpc::METHOD_NOT_FOUND, &message, None)
}

/// Whether these client capabilities declare the tasks extension.
fn declares_task_extension(caps: &Value) -> bool {
    caps.get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .is_some_and(Value::is_object)
}

/// -32021 for a 2026-07-28 request without the tasks extension.
fn extension_required(message: &str) -> Value {
    jsonrpc::missing_capability(message, json!({ "extensions": { EXTENSION: {} } }))
}

/// -32603 for a resource limit, naming it in `data.limit`.
fn limit_reached(message: &str, limit: usize, task: Option<&str>) -> Value {
    let mut data = json!({ "limit": limit });
    if let Some(task) = task {
        data["taskId"] = json!(task);
    }
    jsonrpc::error_object(jsonrpc::INTERNAL_ERROR, message, Some(&data))
}

fn no_result(id: &RequestId, task_id: &str, why: &str) -> String {
    jsonrpc::error(
        Some(id),
        jsonrpc::INVALID_PARAMS,
        &format!("Task \"{task_id}\" {why} and has no result"),
        Some(&json!({ "taskId": task_id })),
    )
}

fn unknown_task(id: &RequestId, task: &str) -> String {
    jsonrpc::error(
        Some(id),
        jsonrpc::INVALID_PARAMS,
        &format!("Failed to retrieve task: no task \"{task}\" (unknown, or expired)"),
        None,
    )
}

/// What `tasks/result` answers for a task, or `None` while it runs.
fn result_of(id: &RequestId, task: &Task) -> Option<String> {
    match task.status {
        Status::Completed => Some(jsonrpc::success(id, task.result.as_deref().unwrap_or("{}"))),
        Status::Failed => Some(jsonrpc::error_response(
            Some(id),
            task.error.as_ref().unwrap_or(&Value::Null),
        )),
        Status::Cancelled => Some(jsonrpc::error(
            Some(id),
            jsonrpc::INVALID_PARAMS,
            &format!("Task \"{}\" was cancelled and has no result", task.id),
            Some(&json!({ "taskId": task.id, "status": "cancelled" })),
        )),
        Status::Working | Status::InputRequired => None,
    }
}

impl Engine {
    /// Whether this call runs as a task, and with what time to live; or the
    /// error a call that breaks the tool's task policy gets.
    pub(super) fn task_decision(
        &self,
        tool: usize,
        params: &Value,
        rev: Revision,
        caps: &Value,
    ) -> Result<Option<(Dialect, Option<Duration>)>, Value> {
        let def = &self.registry.tool(tool).def;
        let support = def.task_support;
        if rev.has_core_tasks() {
            let requested = params.get("task").filter(|t| !t.is_null());
            return match (requested, support) {
                (Some(_), TaskSupport::Forbidden) => Err(method_not_found(format!(
                    "Tool \"{}\" cannot run as a task",
                    def.name
                ))),
                (None, TaskSupport::Required) => Err(method_not_found(format!(
                    "Tool \"{}\" must be called as a task (add `task` to the params)",
                    def.name
                ))),
                (Some(task), _) => {
                    let ttl = task
                        .get("ttl")
                        .and_then(Value::as_u64)
                        .map(Duration::from_millis);
                    Ok(Some((Dialect::Core, ttl)))
                }
                (None, _) => Ok(None),
            };
        }
        if rev.is_modern() {
            // A `task` param (2025-11-25's way of asking) is ignored here:
            // the server alone decides, by the tool's policy.
            let declared = declares_task_extension(caps);
            return match (declared, support) {
                (true, TaskSupport::Optional | TaskSupport::Required) => {
                    Ok(Some((Dialect::Extension, None)))
                }
                (false, TaskSupport::Required) => Err(extension_required(&format!(
                    "Tool \"{}\" runs only as a task; the client must declare the tasks extension",
                    def.name
                ))),
                _ => Ok(None),
            };
        }
        // Revisions without tasks run every call directly.
        Ok(None)
    }

    /// Whether a call of `tool` may become a task once it runs: a deferred
    /// tool called on 2026-07-28 by a client that declared the extension.
    pub(super) fn may_become_task(&self, tool: usize, rev: Revision, caps: &Value) -> bool {
        rev.is_modern()
            && self.registry.tool(tool).def.task_support == TaskSupport::Deferred
            && declares_task_extension(caps)
    }

    /// The tool of a running call asks to go on as a task (a deferred tool,
    /// once it has what it asked the client for): the call is answered now
    /// with the task's handle, and the rest of the run is the task's. The
    /// task's id; `None` when the call cannot become one (it may not, was
    /// cancelled, or no task has room), and it goes on as a plain call.
    pub fn on_continue_as_task(&mut self, job: JobId, out: &mut Vec<Output>) -> Option<String> {
        let state = self.jobs.get(&job)?;
        if state.task.is_some() {
            return state.task.clone();
        }
        if !state.task_later || state.cancelled {
            return None;
        }
        let request_id = state.request_id.clone();
        let now = Instant::now();
        self.expire_tasks(now, out);
        let (task_id, body) = self.create_task(job, Dialect::Extension, None, now).ok()?;
        let state = self.jobs.get_mut(&job).expect("checked above");
        state.task = Some(task_id.clone());
        state.task_later = false;
        // From here its questions wait in the task, and no retry comes;
        // its call is answered, so no progress or log may follow.
        state.input = InputMode::Ask;
        state.arguments = None;
        state.progress_token = None;
        state.pending_progress = None;
        state.log_level = None;
        self.direct_calls -= 1;
        if self.by_request.get(&request_id) == Some(&job) {
            self.by_request.remove(&request_id);
        }
        let kv = vec![opentelemetry::KeyValue::new("mcp.task.id", task_id.clone())];
        self.span_event(&request_id, "task created", kv);
        let state = &self.jobs[&job];
        let tool = state.registry.tool(state.tool).def.name.clone();
        self.begin_task_span(&request_id, &tool, &task_id);
        let text = jsonrpc::success(&request_id, &body.to_string());
        self.respond(&request_id, text, out);
        self.arm_task_alarm(now, out);
        Some(task_id)
    }

    /// A new task for `job`: its id and the body of the call's answer, or
    /// the error when there is no room.
    fn create_task(
        &mut self,
        job: JobId,
        dialect: Dialect,
        ttl: Option<Duration>,
        now: Instant,
    ) -> Result<(String, Value), Value> {
        let owner = self.owner;
        let created = self
            .tasks()
            .create(job, dialect, owner, ttl, now)
            .map(|task| {
                let body = match dialect {
                    Dialect::Core => json!({ "task": task.core_wire() }),
                    Dialect::Extension => {
                        let mut t = task.extension_wire(false);
                        t.insert("resultType".into(), json!("task"));
                        t.insert("_meta".into(), Value::Object(self.server_meta.clone()));
                        Value::Object(t)
                    }
                };
                (task.id.clone(), body)
            });
        created.map_err(|_| {
            limit_reached(
                &format!(
                    "Too many tasks: {MAX_TASKS} are still running; \
                     wait for some to finish, or cancel some, before starting another"
                ),
                MAX_TASKS,
                None,
            )
        })
    }

    /// Creates the task and answers the call with its handle at once; the
    /// task's id, or `None` when there is no room (the call is then answered
    /// with the error and must not run).
    pub(super) fn start_task(
        &mut self,
        job: JobId,
        tool: usize,
        dialect: Dialect,
        ttl: Option<Duration>,
        id: &RequestId,
        out: &mut Vec<Output>,
    ) -> Option<String> {
        let now = Instant::now();
        self.expire_tasks(now, out);
        let (task_id, body) = match self.create_task(job, dialect, ttl, now) {
            Ok(created) => created,
            Err(error) => {
                self.respond(id, jsonrpc::error_response(Some(id), &error), out);
                return None;
            }
        };
        let kv = vec![opentelemetry::KeyValue::new("mcp.task.id", task_id.clone())];
        self.span_event(id, "task created", kv);
        let tool = self.registry.tool(tool).def.name.clone();
        self.begin_task_span(id, &tool, &task_id);
        let text = jsonrpc::success(id, &body.to_string());
        self.respond(id, text, out);
        self.arm_task_alarm(now, out);
        Some(task_id)
    }

    /// Forgets the tasks whose time to live has passed: the requests
    /// waiting on them are told so, and the jobs of those still working
    /// are cancelled (no one can fetch their result any more).
    pub(super) fn expire_tasks(&mut self, now: Instant, out: &mut Vec<Output>) {
        let expired = self.tasks().expire(now);
        for expired in expired {
            self.answer_expired(expired, out);
        }
    }

    fn answer_expired(&mut self, expired: Expired, out: &mut Vec<Output>) {
        self.task_span_expired(&expired.id);
        if expired.unfinished {
            self.cancel_task_job(expired.job, out);
        }
        for waiter in expired.waiters {
            let text = jsonrpc::error(
                Some(&waiter),
                jsonrpc::INVALID_PARAMS,
                &format!(
                    "Task \"{}\" expired before it finished: its time to live of {} ms passed",
                    expired.id,
                    expired.ttl.as_millis()
                ),
                Some(&json!({ "taskId": expired.id })),
            );
            self.respond(&waiter, text, out);
        }
    }

    /// Asks the runtime for a call of [`Engine::on_task_alarm`] when the
    /// earliest time to live runs out, unless one is due by then.
    fn arm_task_alarm(&mut self, now: Instant, out: &mut Vec<Output>) {
        let needed = self.tasks().alarm_needed();
        if let Some(deadline) = needed {
            out.push(Output::TaskAlarm(deadline.saturating_duration_since(now)));
        }
    }

    /// The alarm asked for with [`Output::TaskAlarm`] went off: tasks whose
    /// time to live has passed are forgotten, and their waiters answered.
    pub fn on_task_alarm(&mut self, out: &mut Vec<Output>) {
        let now = Instant::now();
        self.tasks().alarm_rang();
        self.expire_tasks(now, out);
        self.arm_task_alarm(now, out);
    }

    /// A task's job ended: record the outcome and answer `tasks/result`
    /// requests waiting for it.
    pub(super) fn finish_task(
        &mut self,
        task_id: &str,
        settled: Result<String, Value>,
        out: &mut Vec<Output>,
    ) {
        self.expire_tasks(Instant::now(), out);
        let ending = match &settled {
            Ok(body) => Ending::Completed(body.clone()),
            Err(error) => Ending::Failed(error.clone()),
        };
        let Some(waiters) = self.tasks().end(task_id, ending) else {
            return;
        };
        self.task_changed(task_id, out);
        for waiter in waiters {
            let text = match &settled {
                Ok(body) => jsonrpc::success(&waiter, body),
                Err(error) => jsonrpc::error_response(Some(&waiter), error),
            };
            self.respond(&waiter, text, out);
        }
    }

    /// A task's job was cancelled or interrupted before it could finish.
    pub(super) fn task_job_cancelled(&mut self, task_id: &str, out: &mut Vec<Output>) {
        self.expire_tasks(Instant::now(), out);
        self.cancel_task(task_id, out);
    }

    /// Marks a running task cancelled and tells the requests waiting on it;
    /// false when the task had already ended (or is unknown).
    fn cancel_task(&mut self, task_id: &str, out: &mut Vec<Output>) -> bool {
        let Some(waiters) = self.tasks().end(task_id, Ending::Cancelled) else {
            return false;
        };
        self.task_changed(task_id, out);
        for waiter in waiters {
            let text = no_result(&waiter, task_id, "was cancelled");
            self.respond(&waiter, text, out);
        }
        true
    }

    /// The live task of `dialect` that `params.taskId` names, after expired
    /// tasks are forgotten; or the error response for the request. A task
    /// of another owner gets the very answer an unknown id gets.
    fn known_task(
        &mut self,
        id: &RequestId,
        params: &Value,
        dialect: Dialect,
        out: &mut Vec<Output>,
    ) -> Result<(String, JobId), String> {
        self.expire_tasks(Instant::now(), out);
        let Some(task_id) = params.get("taskId").and_then(Value::as_str) else {
            return Err(invalid_params(id, "`taskId` must be a string"));
        };
        let found = self
            .tasks()
            .get(task_id)
            .filter(|task| task.dialect == dialect && task.visible_to(self.owner.as_ref()))
            .map(|task| (task.id.clone(), task.job));
        found.ok_or_else(|| unknown_task(id, task_id))
    }

    /// `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` of 2025-11-25.
    pub(super) fn core_task_method(
        &mut self,
        id: RequestId,
        method: &str,
        params: &Value,
        out: &mut Vec<Output>,
    ) {
        if method == "tasks/list" {
            self.expire_tasks(Instant::now(), out);
            let tasks: Vec<Value> = self
                .tasks()
                .list(Dialect::Core, self.owner.as_ref())
                .iter()
                .map(|t| t.core_wire())
                .collect();
            let text = jsonrpc::success(&id, &json!({ "tasks": tasks }).to_string());
            return self.respond(&id, text, out);
        }
        let (task_id, job) = match self.known_task(&id, params, Dialect::Core, out) {
            Ok(found) => found,
            Err(text) => return self.respond(&id, text, out),
        };
        let text = match method {
            "tasks/get" => self.core_wire_response(&id, &task_id),
            "tasks/result" => {
                let ready = self.tasks().get(&task_id).and_then(|t| result_of(&id, t));
                match ready {
                    Some(text) => text,
                    None => match self.tasks().wait(&task_id, id.clone()) {
                        // Answered when the task ends or expires.
                        Ok(()) => return,
                        Err(refused) => self.wait_refused(&id, &task_id, refused),
                    },
                }
            }
            _ => {
                if self.cancel_task(&task_id, out) {
                    self.cancel_task_job(job, out);
                    self.core_wire_response(&id, &task_id)
                } else {
                    let status = self
                        .tasks()
                        .get(&task_id)
                        .map_or("gone", |t| t.status.as_str());
                    jsonrpc::error(
                        Some(&id),
                        jsonrpc::INVALID_PARAMS,
                        &format!("Task \"{task_id}\" has already ended ({status})"),
                        None,
                    )
                }
            }
        };
        self.respond(&id, text, out);
    }

    fn core_wire_response(&self, id: &RequestId, task_id: &str) -> String {
        let wire = self.tasks().get(task_id).map(|task| task.core_wire());
        match wire {
            Some(wire) => jsonrpc::success(id, &wire.to_string()),
            None => unknown_task(id, task_id),
        }
    }

    fn wait_refused(&self, id: &RequestId, task_id: &str, refused: WaitRefused) -> String {
        let error = match refused {
            WaitRefused::Unknown => return unknown_task(id, task_id),
            WaitRefused::TaskFull => limit_reached(
                &format!(
                    "Too many requests waiting on task \"{task_id}\" \
                     (at most {MAX_WAITING_PER_TASK}); poll with tasks/get instead"
                ),
                MAX_WAITING_PER_TASK,
                Some(task_id),
            ),
            WaitRefused::StoreFull => limit_reached(
                &format!(
                    "Too many tasks/result requests waiting (at most {MAX_WAITING} in all); \
                     poll with tasks/get instead"
                ),
                MAX_WAITING,
                Some(task_id),
            ),
        };
        jsonrpc::error_response(Some(id), &error)
    }

    /// `tasks/get`, `tasks/update` and `tasks/cancel` of the 2026-07-28
    /// extension, for clients that declare it on the request.
    pub(super) fn extension_task_method(
        &mut self,
        id: RequestId,
        method: &str,
        params: &Value,
        out: &mut Vec<Output>,
    ) {
        let caps = params
            .get("_meta")
            .and_then(|m| m.get(META_CAPABILITIES))
            .unwrap_or(&Value::Null);
        if !declares_task_extension(caps) {
            let error = extension_required(&format!(
                "`{method}` belongs to the tasks extension; the client must declare it"
            ));
            return self.respond(&id, jsonrpc::error_response(Some(&id), &error), out);
        }
        let (task_id, job) = match self.known_task(&id, params, Dialect::Extension, out) {
            Ok(found) => found,
            Err(text) => return self.respond(&id, text, out),
        };
        let ack = json!({ "resultType": "complete", "_meta": self.server_meta }).to_string();
        let text = match method {
            "tasks/get" => match self.detailed_task(&task_id) {
                Some(mut wire) => {
                    wire.insert("resultType".into(), json!("complete"));
                    wire.insert("_meta".into(), Value::Object(self.server_meta.clone()));
                    jsonrpc::success(&id, &Value::Object(wire).to_string())
                }
                None => unknown_task(&id, &task_id),
            },
            "tasks/update" => {
                let responses = match params.get("inputResponses") {
                    Some(Value::Object(map)) => map.clone(),
                    _ => {
                        let text = invalid_params(&id, "`inputResponses` must be an object");
                        return self.respond(&id, text, out);
                    }
                };
                match self.answer_task_inputs(&task_id, job, responses, out) {
                    Ok(()) => jsonrpc::success(&id, &ack),
                    Err(error) => jsonrpc::error_response(Some(&id), &error),
                }
            }
            _ => {
                // Cooperative and idempotent: a finished task stays as it is.
                if self.cancel_task(&task_id, out) {
                    self.cancel_task_job(job, out);
                }
                jsonrpc::success(&id, &ack)
            }
        };
        self.respond(&id, text, out);
    }

    /// Stops a task's job. Over HTTP the job may belong to the engine of
    /// the request that created the task, not to this one: that engine is
    /// asked to stop it.
    fn cancel_task_job(&mut self, job: JobId, out: &mut Vec<Output>) {
        if self.jobs.contains_key(&job) {
            self.cancel_job(job, out);
        } else {
            out.push(Output::CancelElsewhere(job));
        }
    }

    /// Stops a job of this engine's, if it still runs and was not stopped
    /// already (see [`Output::CancelElsewhere`]).
    pub fn cancel_job(&mut self, job: JobId, out: &mut Vec<Output>) {
        if let Some(state) = self.jobs.get_mut(&job) {
            if !state.cancelled {
                state.cancelled = true;
                out.push(Output::Cancel(job));
            }
        }
    }

    /// A task as `tasks/get` and `notifications/tasks` show it.
    fn detailed_task(&self, task_id: &str) -> Option<serde_json::Map<String, Value>> {
        self.tasks()
            .get(task_id)
            .map(|task| task.extension_wire(true))
    }

    /// An extension task's status changed: listen streams following it
    /// are told (see [`Output::TaskStatus`]).
    pub(super) fn task_changed(&self, task_id: &str, out: &mut Vec<Output>) {
        self.trace_task(task_id);
        let store = self.tasks();
        let Some(task) = store
            .get(task_id)
            .filter(|t| t.dialect == Dialect::Extension)
        else {
            return;
        };
        out.push(Output::TaskStatus {
            task: task_id.to_string(),
            params: Value::Object(task.extension_wire(true)),
        });
    }

    /// The tasks a `subscriptions/listen` asks to follow
    /// (`notifications.taskIds`), each with where it stands now: `None` when
    /// it asks for none. Only live tasks of the extension are followed (ids
    /// are the server's own: no task can appear later under another one),
    /// and only those of the request's owner: another's is left out exactly
    /// as an unknown id is. A request that did not declare the extension
    /// gets -32021.
    pub(super) fn listen_tasks(
        &mut self,
        params: &Value,
        out: &mut Vec<Output>,
    ) -> Result<Option<Vec<(String, Value)>>, Value> {
        let Some(ids) = params.get("notifications").and_then(|n| n.get("taskIds")) else {
            return Ok(None);
        };
        let caps = params
            .get("_meta")
            .and_then(|m| m.get(META_CAPABILITIES))
            .unwrap_or(&Value::Null);
        if !declares_task_extension(caps) {
            return Err(extension_required(
                "Task status notifications (`notifications.taskIds`) belong to the tasks \
                 extension; the client must declare it",
            ));
        }
        let Some(ids) = ids
            .as_array()
            .filter(|ids| ids.iter().all(Value::is_string))
        else {
            return Err(jsonrpc::error_object(
                jsonrpc::INVALID_PARAMS,
                "Invalid params: `notifications.taskIds` must be an array of task ids",
                None,
            ));
        };
        self.expire_tasks(Instant::now(), out);
        let owner = self.owner;
        let store = self.tasks();
        let mut followed: Vec<(String, Value)> = Vec::new();
        // A set, not a scan of `followed`: a client may list an id many
        // thousand times, which must not cost ids × tasks comparisons.
        let mut seen = std::collections::HashSet::new();
        for id in ids.iter().filter_map(Value::as_str) {
            let Some(task) = store
                .get(id)
                .filter(|t| t.dialect == Dialect::Extension && t.visible_to(owner.as_ref()))
            else {
                continue;
            };
            if seen.insert(id) {
                followed.push((id.to_string(), Value::Object(task.extension_wire(true))));
            }
        }
        Ok(Some(followed))
    }
}
