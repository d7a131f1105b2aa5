//! The [`Engine`]: one client's session state (or one 2026-07-28 request's),
//! the [`Shared`] state every engine of a server uses (tasks, request-state
//! keys), and how engines are made.

use super::config::server_info;
use super::config::Config;
use super::job::Asked;
use super::job::JobState;
use super::wire::META_SERVER_INFO;
use crate::engine::registry::{Kinds, Live, Registry};
use crate::protocol::jsonrpc::RequestId;
use crate::protocol::logging::LogLevel;
use crate::protocol::revision::Revision;
use crate::stores::request_state::Signer;
use crate::stores::tasks;
use crate::telemetry::{Peer, RequestSpan};
use crate::util::ids::JobId;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

pub(super) use crate::util::threads::lock;

pub(super) struct Session {
    pub(super) revision: Revision,
    /// When `initialize` started it (for `mcp.server.session.duration`).
    pub(super) started: std::time::Instant,
    pub(super) client_info: Option<Arc<Value>>,
    /// The client's capabilities from `initialize`.
    pub(super) capabilities: Arc<Value>,
    /// Set by `logging/setLevel`; no logs are sent before it.
    pub(super) log_level: Option<LogLevel>,
    /// The client sent `notifications/initialized`: the server may send
    /// it notifications of its own (list changes) from then on.
    pub(super) initialized: bool,
    /// The lists whose changes it was told it would hear of (the
    /// capabilities declared in `initialize`).
    pub(super) told: Kinds,
}

/// Responses collected for one 2025-03-26 batch.
pub(super) struct Batch {
    pub(super) pending: usize,
    pub(super) responses: Vec<String>,
}

pub struct Engine {
    pub(super) config: Arc<Config>,
    /// What the server serves now; `registry` is the snapshot of it that
    /// the message being handled sees (taken as each message arrives).
    pub(super) live: Arc<Live>,
    pub(super) registry: Arc<Registry>,
    pub(super) session: Option<Session>,
    pub(super) jobs: HashMap<JobId, JobState>,
    /// Jobs in `jobs` whose client waits for the answer (not tasks, which
    /// are answered at once and bounded on their own by `tasks::MAX_TASKS`).
    pub(super) direct_calls: usize,
    pub(super) by_request: HashMap<RequestId, JobId>,
    /// Open 2026-07-28 listen streams, and the list changes each asked for.
    pub(super) listens: HashMap<RequestId, Kinds>,
    pub(super) batches: HashMap<u64, Batch>,
    pub(super) batch_of: HashMap<RequestId, u64>,
    /// Job ids come from here: shared by every engine of one server (one
    /// per HTTP session or request), so a job id names one call server-wide.
    pub(super) job_ids: Arc<AtomicU64>,
    pub(super) next_batch: u64,
    pub(super) server_meta: Map<String, Value>,
    /// Shared likewise: a state one engine issues is accepted by another,
    /// and once among them all.
    pub(super) signer: Arc<Mutex<Signer>>,
    /// The tasks this engine's requests reach: its own (stdio, or an HTTP
    /// session), or, for an engine that lives for one 2026-07-28 HTTP
    /// request, the store all such engines of the server share, so that a
    /// task one request creates is found by the next.
    pub(super) tasks: Arc<Mutex<tasks::Store>>,
    /// Requests the server sent the client, by id: whose input they ask
    /// for, and with which method.
    pub(super) asks: HashMap<RequestId, Asked>,
    pub(super) next_ask: u64,
    /// URIs the handshake-era session subscribed to.
    pub(super) resource_subscriptions: HashSet<String>,
    /// The URIs each 2026-07-28 listen stream follows.
    pub(super) listen_uris: HashMap<RequestId, HashSet<String>>,
    /// Who the client is, as the bearer-token check described it (HTTP).
    pub(super) auth: Option<Value>,
    /// Whose credentials its requests carry (HTTP with authentication): the
    /// tasks it creates are theirs, and it reaches no one else's.
    pub(super) owner: Option<tasks::Owner>,
    /// Who the client is, for the spans of its requests.
    pub(super) peer: Peer,
    /// The spans of requests not answered yet (telemetry on only): as many
    /// as requests in flight, which the queue limits bound.
    pub(super) spans: HashMap<RequestId, RequestSpan>,
    /// The trace context of the HTTP request being read, if it had one
    /// (set only while that request's message is handled).
    pub(super) ambient: Option<crate::telemetry::Ambient>,
}

/// What the engines of one server share (see [`Engine::sharing`]).
#[derive(Clone)]
pub struct Shared {
    pub(super) job_ids: Arc<AtomicU64>,
    pub(super) signer: Arc<Mutex<Signer>>,
    /// The tasks of 2026-07-28 requests that each have an engine of their
    /// own (HTTP): bounded and expired as any store.
    pub(super) request_tasks: Arc<Mutex<tasks::Store>>,
    /// What every task id of these engines starts with.
    pub(super) task_id_prefix: Arc<str>,
}

impl Shared {
    pub fn new(config: &Config) -> Shared {
        Shared {
            job_ids: Arc::new(AtomicU64::new(1)),
            signer: Arc::new(Mutex::new(Signer::new(
                config.request_state_key.as_deref(),
                config.request_state_store.as_deref(),
            ))),
            request_tasks: Arc::new(Mutex::new(tasks::Store::default())),
            task_id_prefix: Arc::from(""),
        }
    }

    /// The same, with task ids that start with `prefix` (see
    /// [`tasks::Store::with_id_prefix`]).
    pub fn with_task_id_prefix(mut self, prefix: &str) -> Shared {
        self.request_tasks = Arc::new(Mutex::new(tasks::Store::with_id_prefix(prefix)));
        self.task_id_prefix = Arc::from(prefix);
        self
    }
}

impl Engine {
    pub fn new(config: Arc<Config>, registry: Arc<Registry>) -> Engine {
        let shared = Shared::new(&config);
        Engine::sharing(config, Live::new(registry), &shared)
    }

    /// An engine that takes its job ids and request-state signer from
    /// `shared`, alongside other engines of the same server.
    pub fn sharing(config: Arc<Config>, live: Arc<Live>, shared: &Shared) -> Engine {
        let registry = live.current();
        let mut server_meta = Map::new();
        server_meta.insert(
            META_SERVER_INFO.into(),
            server_info(&config.info, Revision::LATEST),
        );
        Engine {
            config,
            live,
            registry,
            session: None,
            jobs: HashMap::new(),
            direct_calls: 0,
            by_request: HashMap::new(),
            listens: HashMap::new(),
            batches: HashMap::new(),
            batch_of: HashMap::new(),
            job_ids: shared.job_ids.clone(),
            next_batch: 1,
            server_meta,
            signer: shared.signer.clone(),
            tasks: Arc::new(Mutex::new(tasks::Store::with_id_prefix(
                &shared.task_id_prefix,
            ))),
            asks: HashMap::new(),
            next_ask: 1,
            resource_subscriptions: HashSet::new(),
            listen_uris: HashMap::new(),
            auth: None,
            owner: None,
            peer: Peer::default(),
            spans: HashMap::new(),
            ambient: None,
        }
    }

    /// Tells the engine who its client is (the verdict of the server's
    /// bearer-token function), for the calls it starts.
    pub fn with_auth(mut self, auth: Option<Value>) -> Engine {
        self.auth = auth;
        self
    }

    /// Tells the engine who its client is, for the spans of its requests
    /// (the transport, the client's address over HTTP).
    pub fn with_peer(mut self, peer: Peer) -> Engine {
        self.peer = peer;
        self
    }

    /// The HTTP session this engine serves, named once `initialize` made it.
    pub fn set_session_id(&mut self, session: &str) {
        self.peer.session = Some(session.to_string());
    }

    /// Tells the engine whose credentials its requests carry (see
    /// [`tasks::Owner`]): its tasks are theirs, and others' are unknown to it.
    pub fn with_owner(mut self, owner: Option<tasks::Owner>) -> Engine {
        self.owner = owner;
        self
    }

    /// An engine for one 2026-07-28 HTTP request, which ends with it (or,
    /// for a call that became a task, with the task's job). Its tasks live
    /// in the store `shared` keeps for all such engines, where any later
    /// request finds them.
    pub fn for_one_request(config: Arc<Config>, live: Arc<Live>, shared: &Shared) -> Engine {
        let mut engine = Engine::sharing(config, live, shared);
        engine.tasks = shared.request_tasks.clone();
        engine
    }

    /// The task store, locked. Never held across a call that locks it again.
    pub(super) fn tasks(&self) -> std::sync::MutexGuard<'_, tasks::Store> {
        lock(&self.tasks)
    }
}
