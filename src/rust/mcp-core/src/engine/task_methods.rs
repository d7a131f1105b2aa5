//! The task methods of both dialects, and how tool calls become tasks.

use super::{invalid_params, Engine, JobId, Output};
use crate::jsonrpc::{self, RequestId};
use crate::revision::Revision;
use crate::tasks::{Dialect, Status, EXTENSION};
use crate::tool::TaskSupport;
use serde_json::{json, Value};
use std::time::Duration;

fn method_not_found(message: String) -> Value {
    jsonrpc::error_object(jsonrpc::METHOD_NOT_FOUND, &message, None)
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
            let declared = caps
                .get("extensions")
                .and_then(|e| e.get(EXTENSION))
                .is_some_and(Value::is_object);
            return match (declared, support) {
                (true, TaskSupport::Optional | TaskSupport::Required) => Ok(Some((Dialect::Extension, None))),
                (false, TaskSupport::Required) => Err(jsonrpc::error_object(
                    jsonrpc::MISSING_CLIENT_CAPABILITY,
                    &format!("Tool \"{}\" runs only as a task; the client must declare the tasks extension", def.name),
                    Some(&json!({ "requiredCapabilities": { "extensions": { EXTENSION: {} } } })),
                )),
                _ => Ok(None),
            };
        }
        // Revisions without tasks run every call directly.
        Ok(None)
    }

    /// Creates the task and answers the call with its handle at once.
    pub(super) fn start_task(
        &mut self,
        job: JobId,
        dialect: Dialect,
        ttl: Option<Duration>,
        id: &RequestId,
        out: &mut Vec<Output>,
    ) -> String {
        let task = self.tasks.create(job, dialect, ttl);
        let task_id = task.id.clone();
        let body = match dialect {
            Dialect::Core => json!({ "task": task.core_wire() }),
            Dialect::Extension => {
                let mut t = task.extension_wire(false);
                t.insert("resultType".into(), json!("task"));
                t.insert("_meta".into(), Value::Object(self.server_meta.clone()));
                Value::Object(t)
            }
        };
        let text = jsonrpc::success(id, &body.to_string());
        self.respond(id, text, out);
        task_id
    }

    /// A task's job ended: record the outcome and answer `tasks/result`
    /// requests waiting for it.
    pub(super) fn finish_task(
        &mut self,
        task_id: &str,
        settled: Result<String, Value>,
        out: &mut Vec<Output>,
    ) {
        let Some(task) = self.tasks.get_mut(task_id) else {
            return;
        };
        if task.status.is_terminal() {
            return;
        }
        match &settled {
            Ok(body) => task.complete(body.clone()),
            Err(error) => task.fail(error.clone()),
        }
        let waiters = std::mem::take(&mut task.waiters);
        for waiter in waiters {
            let text = match &settled {
                Ok(body) => jsonrpc::success(&waiter, body),
                Err(error) => jsonrpc::error_response(Some(&waiter), error),
            };
            self.respond(&waiter, text, out);
        }
    }

    /// The live task of `dialect` that `params.taskId` names, or the error
    /// response for the request.
    fn known_task(
        &mut self,
        id: &RequestId,
        params: &Value,
        dialect: Dialect,
    ) -> Result<String, String> {
        let Some(task_id) = params.get("taskId").and_then(Value::as_str) else {
            return Err(invalid_params(id, "`taskId` must be a string"));
        };
        match self.tasks.get_mut(task_id) {
            Some(task) if task.dialect == dialect => Ok(task_id.to_string()),
            _ => Err(Self::unknown_task(id, task_id)),
        }
    }

    fn unknown_task(id: &RequestId, task: &str) -> String {
        jsonrpc::error(
            Some(id),
            jsonrpc::INVALID_PARAMS,
            &format!("Failed to retrieve task: no task \"{task}\" (unknown, or expired)"),
            None,
        )
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
            let tasks: Vec<Value> = self
                .tasks
                .list(Dialect::Core)
                .iter()
                .map(|t| t.core_wire())
                .collect();
            let text = jsonrpc::success(&id, &json!({ "tasks": tasks }).to_string());
            return self.respond(&id, text, out);
        }
        let task_id = match self.known_task(&id, params, Dialect::Core) {
            Ok(task_id) => task_id,
            Err(text) => return self.respond(&id, text, out),
        };
        let task = self.tasks.get_mut(&task_id).expect("known_task found it");
        let text = match method {
            "tasks/get" => jsonrpc::success(&id, &task.core_wire().to_string()),
            "tasks/result" => match task.status {
                Status::Completed => jsonrpc::success(&id, task.result.as_deref().unwrap_or("{}")),
                Status::Failed => {
                    jsonrpc::error_response(Some(&id), task.error.as_ref().unwrap_or(&Value::Null))
                }
                Status::Cancelled => jsonrpc::error(
                    Some(&id),
                    jsonrpc::INVALID_PARAMS,
                    &format!("Task \"{task_id}\" was cancelled and has no result"),
                    Some(&json!({ "taskId": task_id, "status": "cancelled" })),
                ),
                // Answered when the task ends.
                _ => {
                    task.waiters.push(id);
                    return;
                }
            },
            _ => {
                if task.status.is_terminal() {
                    jsonrpc::error(
                        Some(&id),
                        jsonrpc::INVALID_PARAMS,
                        &format!(
                            "Task \"{task_id}\" has already ended ({})",
                            task.status.as_str()
                        ),
                        None,
                    )
                } else {
                    let job = task.job;
                    task.cancel();
                    let wire = task.core_wire();
                    let waiters = std::mem::take(&mut task.waiters);
                    self.cancel_task_job(job, out);
                    for waiter in waiters {
                        let text = jsonrpc::error(
                            Some(&waiter),
                            jsonrpc::INVALID_PARAMS,
                            &format!("Task \"{task_id}\" was cancelled and has no result"),
                            None,
                        );
                        self.respond(&waiter, text, out);
                    }
                    jsonrpc::success(&id, &wire.to_string())
                }
            }
        };
        self.respond(&id, text, out);
    }

    /// `tasks/get`, `tasks/update` and `tasks/cancel` of the 2026-07-28 extension.
    pub(super) fn extension_task_method(
        &mut self,
        id: RequestId,
        method: &str,
        params: &Value,
        out: &mut Vec<Output>,
    ) {
        let task_id = match self.known_task(&id, params, Dialect::Extension) {
            Ok(task_id) => task_id,
            Err(text) => return self.respond(&id, text, out),
        };
        let task = self.tasks.get_mut(&task_id).expect("known_task found it");
        let ack = json!({ "resultType": "complete", "_meta": self.server_meta }).to_string();
        let text = match method {
            "tasks/get" => {
                let mut wire = task.extension_wire(true);
                wire.insert("resultType".into(), json!("complete"));
                wire.insert("_meta".into(), Value::Object(self.server_meta.clone()));
                jsonrpc::success(&id, &Value::Object(wire).to_string())
            }
            "tasks/update" => {
                let job = task.job;
                let responses = match params.get("inputResponses") {
                    Some(Value::Object(map)) => map.clone(),
                    _ => {
                        let text = invalid_params(&id, "`inputResponses` must be an object");
                        return self.respond(&id, text, out);
                    }
                };
                match self.answer_task_inputs(job, &responses, out) {
                    Ok(()) => jsonrpc::success(&id, &ack),
                    Err(error) => jsonrpc::error_response(Some(&id), &error),
                }
            }
            _ => {
                // Cooperative and idempotent: a finished task stays as it is.
                if !task.status.is_terminal() {
                    let job = task.job;
                    task.cancel();
                    self.cancel_task_job(job, out);
                }
                jsonrpc::success(&id, &ack)
            }
        };
        self.respond(&id, text, out);
    }

    fn cancel_task_job(&mut self, job: JobId, out: &mut Vec<Output>) {
        if let Some(state) = self.jobs.get_mut(&job) {
            if !state.cancelled {
                state.cancelled = true;
                out.push(Output::Cancel(job));
            }
        }
    }
}
