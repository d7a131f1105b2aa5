//! Tasks: tool calls answered at once with a handle, whose result the
//! client fetches later. Two dialects: the experimental core feature of
//! 2025-11-25 (`params.task`, `tasks/get|result|list|cancel`) and the
//! `io.modelcontextprotocol/tasks` extension of 2026-07-28 (`resultType:
//! "task"`, `tasks/get|update|cancel`).
//!
//! The store is in memory, bounded in size, and forgets tasks whose time to
//! live has passed.

use crate::engine::JobId;
use crate::jsonrpc::RequestId;
use crate::request_state::random_bytes;
use crate::time::rfc3339;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, SystemTime};

/// The extension's identifier in capabilities.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// Metadata key tying a message to its task.
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// How long a task is kept when the client names no time to live.
pub const DEFAULT_TTL: Duration = Duration::from_secs(3600);
/// The longest time to live granted.
pub const MAX_TTL: Duration = Duration::from_secs(24 * 3600);
/// How often clients are asked to poll.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);
/// Tasks kept at most; the oldest finished ones make room.
pub const MAX_TASKS: usize = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::InputRequired => "input_required",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Cancelled)
    }
}

/// Which protocol dialect created the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// 2025-11-25 core tasks.
    Core,
    /// The 2026-07-28 extension.
    Extension,
}

#[derive(Debug)]
pub struct Task {
    pub id: String,
    pub job: JobId,
    pub dialect: Dialect,
    pub status: Status,
    pub status_message: Option<String>,
    pub created: SystemTime,
    pub updated: SystemTime,
    pub ttl: Duration,
    /// The tool result (a `CallToolResult` as JSON text), once completed.
    pub result: Option<String>,
    /// The JSON-RPC error object, once failed.
    pub error: Option<Value>,
    /// Outstanding input requests (extension dialect), by key.
    pub input_requests: Map<String, Value>,
    /// `tasks/result` requests waiting for the end (core dialect).
    pub waiters: Vec<RequestId>,
}

impl Task {
    fn expired(&self, now: SystemTime) -> bool {
        now.duration_since(self.created)
            .is_ok_and(|age| age > self.ttl)
    }

    fn set_status(&mut self, status: Status, message: Option<String>) {
        self.status = status;
        self.status_message = message;
        self.updated = SystemTime::now();
    }

    /// The fields both dialects share; they name the time fields differently.
    fn common_fields(&self, ttl_key: &str, poll_key: &str) -> Map<String, Value> {
        let mut t = Map::new();
        t.insert("taskId".into(), json!(self.id));
        t.insert("status".into(), json!(self.status.as_str()));
        if let Some(m) = &self.status_message {
            t.insert("statusMessage".into(), json!(m));
        }
        t.insert("createdAt".into(), json!(rfc3339(self.created)));
        t.insert("lastUpdatedAt".into(), json!(rfc3339(self.updated)));
        t.insert(ttl_key.into(), json!(self.ttl.as_millis() as u64));
        t.insert(poll_key.into(), json!(POLL_INTERVAL.as_millis() as u64));
        t
    }

    /// The `Task` object of the 2025-11-25 core dialect.
    pub fn core_wire(&self) -> Value {
        Value::Object(self.common_fields("ttl", "pollInterval"))
    }

    /// The extension's `Task` fields; `detailed` adds the result, error or
    /// input requests its status carries (`tasks/get`).
    pub fn extension_wire(&self, detailed: bool) -> Map<String, Value> {
        let mut t = self.common_fields("ttlMs", "pollIntervalMs");
        if detailed {
            match self.status {
                Status::Completed => {
                    let result = self
                        .result
                        .as_deref()
                        .and_then(|r| serde_json::from_str(r).ok());
                    t.insert("result".into(), result.unwrap_or_else(|| json!({})));
                }
                Status::Failed => {
                    t.insert(
                        "error".into(),
                        self.error.clone().unwrap_or_else(|| json!({})),
                    );
                }
                Status::InputRequired => {
                    t.insert(
                        "inputRequests".into(),
                        Value::Object(self.input_requests.clone()),
                    );
                }
                _ => {}
            }
        }
        t
    }
}

#[derive(Default)]
pub struct Store {
    tasks: HashMap<String, Task>,
    by_job: HashMap<JobId, String>,
    order: VecDeque<String>,
}

/// An unguessable task id: 128 random bits.
fn new_id() -> String {
    random_bytes::<16>()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Store {
    /// A new working task for `job`. `ttl` is what the client asked for.
    pub fn create(&mut self, job: JobId, dialect: Dialect, ttl: Option<Duration>) -> &Task {
        self.make_room();
        let now = SystemTime::now();
        let id = new_id();
        let task = Task {
            id: id.clone(),
            job,
            dialect,
            status: Status::Working,
            status_message: None,
            created: now,
            updated: now,
            ttl: ttl.unwrap_or(DEFAULT_TTL).min(MAX_TTL),
            result: None,
            error: None,
            input_requests: Map::new(),
            waiters: Vec::new(),
        };
        self.order.push_back(id.clone());
        self.by_job.insert(job, id.clone());
        self.tasks.entry(id).or_insert(task)
    }

    fn forget_expired(&mut self) {
        let now = SystemTime::now();
        let expired: Vec<String> = self
            .tasks
            .values()
            .filter(|t| t.expired(now))
            .map(|t| t.id.clone())
            .collect();
        for id in expired {
            self.remove(&id);
        }
    }

    /// Forgets expired tasks, then the oldest finished ones beyond the bound.
    fn make_room(&mut self) {
        self.forget_expired();
        while self.tasks.len() >= MAX_TASKS {
            let oldest_done = self
                .order
                .iter()
                .find(|id| self.tasks.get(*id).is_some_and(|t| t.status.is_terminal()))
                .cloned();
            match oldest_done {
                Some(id) => self.remove(&id),
                None => break,
            }
        }
    }

    fn remove(&mut self, id: &str) {
        if let Some(task) = self.tasks.remove(id) {
            self.by_job.remove(&task.job);
        }
        self.order.retain(|t| t != id);
    }

    /// A live task by id (an expired one is forgotten and not found).
    pub fn get_mut(&mut self, id: &str) -> Option<&mut Task> {
        if self
            .tasks
            .get(id)
            .is_some_and(|t| t.expired(SystemTime::now()))
        {
            self.remove(id);
        }
        self.tasks.get_mut(id)
    }

    pub fn by_job_mut(&mut self, job: JobId) -> Option<&mut Task> {
        let id = self.by_job.get(&job)?.clone();
        self.tasks.get_mut(&id)
    }

    /// Live tasks of a dialect, oldest first.
    pub fn list(&mut self, dialect: Dialect) -> Vec<&Task> {
        self.forget_expired();
        self.order
            .iter()
            .filter_map(|id| self.tasks.get(id))
            .filter(|t| t.dialect == dialect)
            .collect()
    }

    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }
}

/// Status changes, kept in one place so `lastUpdatedAt` always moves.
impl Task {
    pub fn complete(&mut self, result: String) {
        self.result = Some(result);
        self.input_requests.clear();
        self.set_status(Status::Completed, None);
    }

    pub fn fail(&mut self, error: Value) {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string);
        self.error = Some(error);
        self.input_requests.clear();
        self.set_status(Status::Failed, message);
    }

    pub fn cancel(&mut self) {
        self.input_requests.clear();
        self.set_status(Status::Cancelled, Some("Cancelled by the client.".into()));
    }

    pub fn need_input(&mut self, key: String, request: Value) {
        self.input_requests.insert(key, request);
        self.set_status(Status::InputRequired, None);
    }

    pub fn resume(&mut self) {
        self.input_requests.clear();
        self.set_status(Status::Working, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_have_unguessable_ids_and_wire_forms() {
        let mut store = Store::default();
        let a = store
            .create(1, Dialect::Core, Some(Duration::from_secs(60)))
            .id
            .clone();
        let b = store.create(2, Dialect::Extension, None).id.clone();
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        let core = store.get_mut(&a).unwrap().core_wire();
        assert_eq!(core["status"], "working");
        assert_eq!(core["ttl"], 60_000);
        assert!(core["createdAt"].as_str().unwrap().ends_with('Z'));
        let ext = store.get_mut(&b).unwrap().extension_wire(true);
        assert_eq!(ext["ttlMs"], DEFAULT_TTL.as_millis() as u64);
        assert!(ext.get("result").is_none());
        assert_eq!(store.by_job_mut(2).unwrap().id, b);
    }

    #[test]
    fn finished_tasks_carry_their_outcome() {
        let mut store = Store::default();
        let id = store.create(1, Dialect::Extension, None).id.clone();
        let task = store.get_mut(&id).unwrap();
        task.need_input("k".into(), json!({"method":"elicitation/create"}));
        assert_eq!(
            task.extension_wire(true)["inputRequests"]["k"]["method"],
            "elicitation/create"
        );
        task.resume();
        task.complete(r#"{"content":[],"isError":false}"#.into());
        let wire = task.extension_wire(true);
        assert_eq!(wire["status"], "completed");
        assert_eq!(wire["result"]["isError"], false);
        let id = store.create(2, Dialect::Extension, None).id.clone();
        let task = store.get_mut(&id).unwrap();
        task.fail(json!({"code": -32603, "message": "boom"}));
        assert_eq!(task.extension_wire(true)["error"]["code"], -32603);
        assert_eq!(task.status_message.as_deref(), Some("boom"));
    }

    #[test]
    fn expired_tasks_are_forgotten() {
        let mut store = Store::default();
        let id = store
            .create(1, Dialect::Core, Some(Duration::ZERO))
            .id
            .clone();
        std::thread::sleep(Duration::from_millis(5));
        assert!(store.get_mut(&id).is_none());
        assert!(store.is_empty());
    }

    #[test]
    fn the_store_is_bounded() {
        let mut store = Store::default();
        for job in 0..MAX_TASKS as u64 {
            let id = store.create(job, Dialect::Core, None).id.clone();
            store.get_mut(&id).unwrap().complete("{}".into());
        }
        let first = store.list(Dialect::Core)[0].id.clone();
        store.create(99_999, Dialect::Core, None);
        assert_eq!(store.len(), MAX_TASKS);
        assert!(
            store.get_mut(&first).is_none(),
            "the oldest finished task made room"
        );
    }
}
