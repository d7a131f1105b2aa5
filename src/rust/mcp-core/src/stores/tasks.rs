//! Tasks: tool calls answered at once with a handle, whose result the
//! client fetches later. Two dialects: the experimental core feature of
//! 2025-11-25 (`params.task`, `tasks/get|result|list|cancel`) and the
//! `io.modelcontextprotocol/tasks` extension of 2026-07-28 (`resultType:
//! "task"`, `tasks/get|update|cancel`).
//!
//! The store is in memory and bounded: at most [`MAX_TASKS`] tasks, working
//! or not, and at most [`MAX_WAITING`] `tasks/result` requests waiting on
//! them. A task is forgotten when its time to live has passed; whoever waits
//! on it then is told so, by the engine, from what [`Store::expire`] returns.

use crate::protocol::jsonrpc::RequestId;
use crate::util::ids::random_bytes;
use crate::util::ids::JobId;
use crate::util::time::rfc3339;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant, SystemTime};

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
/// Tasks kept at most, working or not; the oldest finished ones make room.
pub const MAX_TASKS: usize = 1000;
/// `tasks/result` requests waiting on one task at most.
pub const MAX_WAITING_PER_TASK: usize = 16;
/// `tasks/result` requests waiting at most, over all tasks.
pub const MAX_WAITING: usize = MAX_TASKS;

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

/// Who may reach a task: a digest of the credentials of the request that
/// created it (see `http` for what it digests). Tasks made without
/// authentication (stdio, or HTTP with no tokens configured) have none, and
/// are reached by requests that have none.
pub type Owner = [u8; 32];

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
    /// Who created it: only requests of the same owner find it.
    pub owner: Option<Owner>,
    /// Changed only through the methods below, which keep the store's
    /// index of ended tasks right.
    pub status: Status,
    pub status_message: Option<String>,
    pub created: SystemTime,
    pub updated: SystemTime,
    pub ttl: Duration,
    /// The tool result (a `CallToolResult` as JSON text), once completed.
    pub result: Option<String>,
    /// The JSON-RPC error object, once failed.
    pub error: Option<Value>,
    /// Outstanding input requests, by key: what `tasks/get` lists (the
    /// extension) or the requests sent to the client and not yet answered
    /// (2025-11-25).
    pub input_requests: Map<String, Value>,
    /// Answers already given to the round's requests (the extension), kept
    /// until every request of the round has one: a client may answer some
    /// of them in one `tasks/update` and the rest later.
    pub input_answers: Map<String, Value>,
    /// Whether the round asked through `mcp_ask()` (several requests, whose
    /// answers go back by key) rather than for one answer.
    pub answers_keyed: bool,
    /// `tasks/result` requests waiting for the end (core dialect).
    waiters: Vec<RequestId>,
    /// Creation order, and the key of the store's indexes.
    seq: u64,
    /// When the time to live runs out (monotonic, unlike `created`).
    deadline: Instant,
}

impl Task {
    /// Whether a request made by `owner` may see this task. Any other owner
    /// is told what an unknown id gets, so a task id alone reveals nothing.
    pub fn visible_to(&self, owner: Option<&Owner>) -> bool {
        self.owner.as_ref() == owner
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

/// How a task ended.
#[derive(Debug, Clone)]
pub enum Ending {
    /// Its tool result, as JSON text.
    Completed(String),
    /// The JSON-RPC error object its call failed with.
    Failed(Value),
    Cancelled,
}

/// No room for another task: [`MAX_TASKS`] tasks are still working.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full;

/// Why a `tasks/result` request cannot wait on a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitRefused {
    /// No live task has that id.
    Unknown,
    /// [`MAX_WAITING_PER_TASK`] requests already wait on this task.
    TaskFull,
    /// [`MAX_WAITING`] requests already wait over all tasks.
    StoreFull,
}

/// A task forgotten because its time to live passed.
#[derive(Debug)]
pub struct Expired {
    pub id: String,
    pub job: JobId,
    /// Whether it was still working (its job is then of no use to anyone).
    pub unfinished: bool,
    pub ttl: Duration,
    /// The `tasks/result` requests that were waiting on it.
    pub waiters: Vec<RequestId>,
}

/// Every operation costs O(log n) at most, n being bounded by
/// [`MAX_TASKS`]: indexes ordered by creation and by deadline replace any
/// scan over all tasks.
#[derive(Default)]
pub struct Store {
    tasks: HashMap<String, Task>,
    by_job: HashMap<JobId, String>,
    /// Live tasks, oldest first (the order of `tasks/list`).
    by_creation: BTreeMap<u64, String>,
    /// Live tasks by when their time to live runs out.
    by_deadline: BTreeMap<(Instant, u64), String>,
    /// Tasks that have ended, oldest first: the first to make room.
    ended: BTreeMap<u64, String>,
    next_seq: u64,
    /// `tasks/result` requests waiting, over all tasks.
    waiting: usize,
    /// The deadline an alarm has been asked for, if any.
    alarm: Option<Instant>,
    /// Put before every task id: names the server process, so that a load
    /// balancer can route a task's requests on it (see [`Store::with_id_prefix`]).
    id_prefix: String,
}

/// An unguessable task id: `prefix`, then 128 random bits.
fn new_id(prefix: &str) -> String {
    let mut id = String::with_capacity(prefix.len() + 32);
    id.push_str(prefix);
    for b in random_bytes::<16>() {
        id.push_str(&format!("{b:02x}"));
    }
    id
}

impl Store {
    /// A store whose task ids start with `prefix` (for instance `r1-`): a
    /// replica's name, which load balancers read in the `Mcp-Name` header
    /// of `tasks/get`, `tasks/update` and `tasks/cancel` to send them to the
    /// process that holds the task.
    pub fn with_id_prefix(prefix: &str) -> Store {
        Store {
            id_prefix: prefix.to_string(),
            ..Store::default()
        }
    }

    /// A new working task for `job`, reached only by `owner`'s requests;
    /// `ttl` is what the client asked for.
    /// When the store is full the oldest ended task makes room; when every
    /// task is still working there is none. Expired tasks are not looked
    /// for here: call [`Store::expire`] first, so that their waiters can be
    /// answered.
    pub fn create(
        &mut self,
        job: JobId,
        dialect: Dialect,
        owner: Option<Owner>,
        ttl: Option<Duration>,
        now: Instant,
    ) -> Result<&Task, Full> {
        if self.tasks.len() >= MAX_TASKS {
            let oldest_ended = self.ended.first_key_value().map(|(_, id)| id.clone());
            match oldest_ended {
                Some(id) => {
                    self.remove(&id);
                }
                None => return Err(Full),
            }
        }
        let ttl = ttl.unwrap_or(DEFAULT_TTL).min(MAX_TTL);
        let created = SystemTime::now();
        let seq = self.next_seq;
        self.next_seq += 1;
        let id = new_id(&self.id_prefix);
        let task = Task {
            id: id.clone(),
            job,
            dialect,
            owner,
            status: Status::Working,
            status_message: None,
            created,
            updated: created,
            ttl,
            result: None,
            error: None,
            input_requests: Map::new(),
            input_answers: Map::new(),
            answers_keyed: false,
            waiters: Vec::new(),
            seq,
            deadline: now + ttl,
        };
        self.by_creation.insert(seq, id.clone());
        self.by_deadline.insert((task.deadline, seq), id.clone());
        self.by_job.insert(job, id.clone());
        Ok(self.tasks.entry(id).or_insert(task))
    }

    /// Forgets every task whose time to live has run out by `now`, and
    /// returns them with the requests that were waiting on them.
    pub fn expire(&mut self, now: Instant) -> Vec<Expired> {
        let mut expired = Vec::new();
        while let Some(((deadline, _), id)) = self.by_deadline.first_key_value() {
            if *deadline > now {
                break;
            }
            let id = id.clone();
            if let Some(task) = self.remove(&id) {
                expired.push(Expired {
                    unfinished: !task.status.is_terminal(),
                    id,
                    job: task.job,
                    ttl: task.ttl,
                    waiters: task.waiters,
                });
            }
        }
        expired
    }

    fn remove(&mut self, id: &str) -> Option<Task> {
        let task = self.tasks.remove(id)?;
        self.by_job.remove(&task.job);
        self.by_creation.remove(&task.seq);
        self.by_deadline.remove(&(task.deadline, task.seq));
        self.ended.remove(&task.seq);
        self.waiting -= task.waiters.len();
        Some(task)
    }

    /// Ends a task that was still running, and returns the requests waiting
    /// on it, now to be answered; `None` when there is no such task or it
    /// had already ended.
    pub fn end(&mut self, id: &str, ending: Ending) -> Option<Vec<RequestId>> {
        let task = self.tasks.get_mut(id).filter(|t| !t.status.is_terminal())?;
        match ending {
            Ending::Completed(result) => task.complete(result),
            Ending::Failed(error) => task.fail(error),
            Ending::Cancelled => task.cancel(),
        }
        let waiters = std::mem::take(&mut task.waiters);
        self.waiting -= waiters.len();
        self.ended.insert(task.seq, task.id.clone());
        Some(waiters)
    }

    /// Holds a `tasks/result` request until the task ends.
    pub fn wait(&mut self, id: &str, request: RequestId) -> Result<(), WaitRefused> {
        let task = self.tasks.get_mut(id).ok_or(WaitRefused::Unknown)?;
        if task.waiters.len() >= MAX_WAITING_PER_TASK {
            return Err(WaitRefused::TaskFull);
        }
        if self.waiting >= MAX_WAITING {
            return Err(WaitRefused::StoreFull);
        }
        task.waiters.push(request);
        self.waiting += 1;
        Ok(())
    }

    /// The deadline to set an alarm for, when the earliest time to live
    /// runs out before any alarm already asked for (which it replaces).
    pub fn alarm_needed(&mut self) -> Option<Instant> {
        let (&(earliest, _), _) = self.by_deadline.first_key_value()?;
        if self.alarm.is_some_and(|set| set <= earliest) {
            return None;
        }
        self.alarm = Some(earliest);
        Some(earliest)
    }

    /// The alarm went off: the next one must be asked for again.
    pub fn alarm_rang(&mut self) {
        self.alarm = None;
    }

    /// A task by id.
    pub fn get(&self, id: &str) -> Option<&Task> {
        self.tasks.get(id)
    }

    /// A task by id, to change (its status through the methods below).
    pub fn get_mut(&mut self, id: &str) -> Option<&mut Task> {
        self.tasks.get_mut(id)
    }

    pub fn by_job_mut(&mut self, job: JobId) -> Option<&mut Task> {
        let id = self.by_job.get(&job)?;
        self.tasks.get_mut(id)
    }

    /// Tasks of a dialect that `owner` may see, oldest first.
    pub fn list(&self, dialect: Dialect, owner: Option<&Owner>) -> Vec<&Task> {
        self.by_creation
            .values()
            .filter_map(|id| self.tasks.get(id))
            .filter(|t| t.dialect == dialect && t.visible_to(owner))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// `tasks/result` requests waiting, over all tasks.
    pub fn waiting(&self) -> usize {
        self.waiting
    }
}

/// Status changes, kept in one place so `lastUpdatedAt` always moves. The
/// ending ones go through [`Store::end`]; an ended task stays ended.
impl Task {
    fn complete(&mut self, result: String) {
        self.result = Some(result);
        self.input_requests.clear();
        self.input_answers.clear();
        self.set_status(Status::Completed, None);
    }

    fn fail(&mut self, error: Value) {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string);
        self.error = Some(error);
        self.input_requests.clear();
        self.input_answers.clear();
        self.set_status(Status::Failed, message);
    }

    fn cancel(&mut self) {
        self.input_requests.clear();
        self.input_answers.clear();
        self.set_status(Status::Cancelled, Some("Cancelled by the client.".into()));
    }

    pub fn need_input(&mut self, key: String, request: Value) {
        if !self.status.is_terminal() {
            self.input_requests.insert(key, request);
            self.set_status(Status::InputRequired, None);
        }
    }

    /// A round of input requests the client answers with `tasks/update`
    /// (the extension): the task waits until every one has an answer.
    pub fn need_inputs(&mut self, requests: Vec<(String, Value)>, keyed: bool) {
        if self.status.is_terminal() {
            return;
        }
        self.input_requests = requests.into_iter().collect();
        self.input_answers.clear();
        self.answers_keyed = keyed;
        self.set_status(Status::InputRequired, None);
    }

    /// Records answers to outstanding requests (keys not outstanding are
    /// ignored: never asked, already answered, or of an earlier round). When
    /// the last one is in, the task works again and the round's answers are
    /// returned, for the tool: by key, or the one answer of a round that
    /// asked for one.
    pub fn answer_inputs(&mut self, answers: Map<String, Value>) -> Option<Value> {
        if self.status != Status::InputRequired {
            return None;
        }
        for (key, answer) in answers {
            if self.input_requests.remove(&key).is_some() {
                self.input_answers.insert(key, answer);
            }
        }
        if !self.input_requests.is_empty() {
            return None;
        }
        let answers = std::mem::take(&mut self.input_answers);
        self.resume();
        if self.answers_keyed {
            Some(Value::Object(answers))
        } else {
            answers.into_iter().next().map(|(_, answer)| answer)
        }
    }

    /// The client answered one request sent to it (2025-11-25): the task
    /// works again once none is outstanding.
    pub fn input_answered(&mut self, key: &str) {
        self.input_requests.remove(key);
        if self.input_requests.is_empty() && self.status == Status::InputRequired {
            self.set_status(Status::Working, None);
        }
    }

    pub fn resume(&mut self) {
        if !self.status.is_terminal() {
            self.input_requests.clear();
            self.input_answers.clear();
            self.set_status(Status::Working, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> RequestId {
        RequestId::from_number(n)
    }

    /// A new working task's id.
    fn working(store: &mut Store, job: JobId, ttl: Option<Duration>, now: Instant) -> String {
        store
            .create(job, Dialect::Core, None, ttl, now)
            .unwrap()
            .id
            .clone()
    }

    #[test]
    fn tasks_have_unguessable_ids_and_wire_forms() {
        let mut store = Store::default();
        let now = Instant::now();
        let a = working(&mut store, 1, Some(Duration::from_secs(60)), now);
        let b = store
            .create(2, Dialect::Extension, None, None, now)
            .unwrap()
            .id
            .clone();
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        let core = store.get(&a).unwrap().core_wire();
        assert_eq!(core["status"], "working");
        assert_eq!(core["ttl"], 60_000);
        assert!(core["createdAt"].as_str().unwrap().ends_with('Z'));
        let ext = store.get(&b).unwrap().extension_wire(true);
        assert_eq!(ext["ttlMs"], DEFAULT_TTL.as_millis() as u64);
        assert!(ext.get("result").is_none());
        assert_eq!(store.by_job_mut(2).unwrap().id, b);
    }

    #[test]
    fn a_task_is_seen_only_by_its_owner() {
        let mut store = Store::default();
        let now = Instant::now();
        let (ann, bob) = ([1u8; 32], [2u8; 32]);
        let of_ann = store
            .create(1, Dialect::Extension, Some(ann), None, now)
            .unwrap()
            .id
            .clone();
        let anonymous = store
            .create(2, Dialect::Extension, None, None, now)
            .unwrap()
            .id
            .clone();
        let task = store.get(&of_ann).unwrap();
        assert!(task.visible_to(Some(&ann)));
        assert!(!task.visible_to(Some(&bob)));
        assert!(!task.visible_to(None));
        assert!(!store.get(&anonymous).unwrap().visible_to(Some(&ann)));
        let ids = |owner| -> Vec<String> {
            store
                .list(Dialect::Extension, owner)
                .iter()
                .map(|t| t.id.clone())
                .collect()
        };
        assert_eq!(ids(Some(&ann)), vec![of_ann.clone()]);
        assert!(ids(Some(&bob)).is_empty());
        assert_eq!(ids(None), vec![anonymous]);
    }

    #[test]
    fn task_ids_may_name_their_replica() {
        let mut store = Store::with_id_prefix("r2-");
        let id = store
            .create(1, Dialect::Extension, None, None, Instant::now())
            .unwrap()
            .id
            .clone();
        assert!(id.starts_with("r2-") && id.len() == 35, "{id}");
        assert!(store.get(&id).is_some());
    }

    #[test]
    fn finished_tasks_carry_their_outcome() {
        let mut store = Store::default();
        let now = Instant::now();
        let first = store
            .create(1, Dialect::Extension, None, None, now)
            .unwrap()
            .id
            .clone();
        let task = store.get_mut(&first).unwrap();
        task.need_input("k".into(), json!({"method":"elicitation/create"}));
        assert_eq!(
            task.extension_wire(true)["inputRequests"]["k"]["method"],
            "elicitation/create"
        );
        task.resume();
        let done = r#"{"content":[],"isError":false}"#;
        assert!(store.end(&first, Ending::Completed(done.into())).is_some());
        let wire = store.get(&first).unwrap().extension_wire(true);
        assert_eq!(wire["status"], "completed");
        assert_eq!(wire["result"]["isError"], false);
        let second = store
            .create(2, Dialect::Extension, None, None, now)
            .unwrap()
            .id
            .clone();
        let error = json!({"code": -32603, "message": "boom"});
        assert!(store.end(&second, Ending::Failed(error)).is_some());
        let task = store.get(&second).unwrap();
        assert_eq!(task.extension_wire(true)["error"]["code"], -32603);
        assert_eq!(task.status_message.as_deref(), Some("boom"));
    }

    #[test]
    fn an_ended_task_stays_ended() {
        let mut store = Store::default();
        let task = working(&mut store, 1, None, Instant::now());
        assert!(store.end(&task, Ending::Cancelled).is_some());
        assert!(store.end(&task, Ending::Completed("{}".into())).is_none());
        let task = store.get_mut(&task).unwrap();
        task.need_input("k".into(), json!({}));
        task.resume();
        assert_eq!(task.status, Status::Cancelled);
        assert!(task.input_requests.is_empty());
        assert!(store.end("no such task", Ending::Cancelled).is_none());
    }

    #[test]
    fn expired_tasks_are_forgotten_with_their_waiters() {
        let mut store = Store::default();
        let now = Instant::now();
        let short = working(&mut store, 1, Some(Duration::from_millis(10)), now);
        let long = working(&mut store, 2, Some(Duration::from_secs(60)), now);
        store.wait(&short, id(7)).unwrap();
        store.wait(&long, id(8)).unwrap();
        assert!(store.expire(now + Duration::from_millis(9)).is_empty());
        let expired = store.expire(now + Duration::from_millis(10));
        assert_eq!(expired.len(), 1);
        assert_eq!(expired[0].id, short);
        assert_eq!(expired[0].job, 1);
        assert!(expired[0].unfinished);
        assert_eq!(expired[0].waiters, vec![id(7)]);
        assert!(store.get(&short).is_none());
        assert!(store.by_job_mut(1).is_none());
        assert_eq!(store.len(), 1);
        assert_eq!(store.waiting(), 1);
    }

    #[test]
    fn requests_waiting_are_bounded_per_task_and_in_all() {
        let mut store = Store::default();
        let now = Instant::now();
        let task = working(&mut store, 0, None, now);
        for n in 0..MAX_WAITING_PER_TASK as u64 {
            store.wait(&task, id(n)).unwrap();
        }
        assert_eq!(store.wait(&task, id(99)), Err(WaitRefused::TaskFull));
        assert_eq!(store.wait("gone", id(99)), Err(WaitRefused::Unknown));
        let answered = store.end(&task, Ending::Completed("{}".into())).unwrap();
        assert_eq!(answered.len(), MAX_WAITING_PER_TASK);
        assert_eq!(store.waiting(), 0);
        let mut job = 1;
        while store.waiting() < MAX_WAITING {
            let task = working(&mut store, job, None, now);
            job += 1;
            while store.waiting() < MAX_WAITING && store.wait(&task, id(job)).is_ok() {}
        }
        let task = working(&mut store, job, None, now);
        assert_eq!(store.wait(&task, id(0)), Err(WaitRefused::StoreFull));
    }

    #[test]
    fn the_bound_holds_for_working_tasks_and_ended_ones_make_room() {
        let mut store = Store::default();
        let now = Instant::now();
        let first = working(&mut store, 0, None, now);
        for job in 1..MAX_TASKS as u64 {
            working(&mut store, job, None, now);
        }
        assert_eq!(
            store.create(9_999, Dialect::Core, None, None, now).err(),
            Some(Full)
        );
        assert_eq!(store.len(), MAX_TASKS);
        // Ended tasks make room, the oldest first.
        let second = store.list(Dialect::Core, None)[1].id.clone();
        store.end(&second, Ending::Cancelled);
        store.end(&first, Ending::Cancelled);
        working(&mut store, 10_000, None, now);
        assert!(
            store.get(&first).is_none(),
            "the oldest ended task made room"
        );
        assert!(store.get(&second).is_some());
        working(&mut store, 10_001, None, now);
        assert!(store.get(&second).is_none());
        assert_eq!(store.len(), MAX_TASKS);
        assert!(store
            .create(10_002, Dialect::Core, None, None, now)
            .is_err());
    }

    #[test]
    fn fifty_thousand_tasks_stay_within_the_bound() {
        // Each creation costs O(log n): a store that scanned every task on
        // each insert would take minutes here.
        let mut store = Store::default();
        let start = Instant::now();
        let (mut created, mut refused) = (0, 0);
        for job in 0..50_000u64 {
            let now = start + Duration::from_micros(job);
            store.expire(now);
            // Short-lived tasks expire, most others end; every fifth keeps working.
            let ttl = Duration::from_millis(if job % 3 == 0 { 5 } else { 60_000 });
            match store.create(job, Dialect::Core, None, Some(ttl), now) {
                Ok(task) => {
                    let task = task.id.clone();
                    created += 1;
                    if job % 5 != 0 {
                        store.end(&task, Ending::Completed("{}".into()));
                    }
                }
                Err(Full) => refused += 1,
            }
            assert!(store.len() <= MAX_TASKS);
            assert!(
                store.by_creation.len() == store.len() && store.by_deadline.len() == store.len()
            );
            assert!(store.by_job.len() == store.len() && store.ended.len() <= store.len());
        }
        assert_eq!(created + refused, 50_000);
        assert!(refused > 0, "working tasks filled the store");
        let working = store
            .list(Dialect::Core, None)
            .iter()
            .filter(|t| !t.status.is_terminal())
            .count();
        assert_eq!(working, MAX_TASKS, "only working tasks are left");
    }

    #[test]
    fn an_alarm_is_asked_for_the_earliest_deadline_only() {
        let mut store = Store::default();
        let now = Instant::now();
        assert_eq!(store.alarm_needed(), None);
        working(&mut store, 1, Some(Duration::from_secs(60)), now);
        assert_eq!(store.alarm_needed(), Some(now + Duration::from_secs(60)));
        assert_eq!(store.alarm_needed(), None, "already set");
        working(&mut store, 2, Some(Duration::from_secs(90)), now);
        assert_eq!(store.alarm_needed(), None, "later than the one set");
        working(&mut store, 3, Some(Duration::from_secs(30)), now);
        assert_eq!(store.alarm_needed(), Some(now + Duration::from_secs(30)));
        store.alarm_rang();
        store.expire(now + Duration::from_secs(30));
        assert_eq!(store.alarm_needed(), Some(now + Duration::from_secs(60)));
    }
}
