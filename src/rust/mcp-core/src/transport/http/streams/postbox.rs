//! The [`Postbox`] of one HTTP engine: which stream each message the engine
//! writes goes to (see the module above for the rules).

use super::channel::{lock, EventId, StreamRx};
use super::log::{EventLog, LOG_BYTES, MAX_LOGS};
use super::log::{Resumed, StreamTx};
use crate::protocol::jsonrpc::RequestId;
use crate::transport::slots::{Cause, Mailbox};
use crate::util::ids::JobId;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The routes of one engine's messages (see the module docs).
#[derive(Default)]
pub struct Postbox {
    pub(super) streams: Mutex<HashMap<RequestId, StreamTx>>,
    pub(super) jobs: Mutex<HashMap<JobId, RequestId>>,
    pub(super) standalone: Mutex<Option<StreamTx>>,
    /// Jobs whose request to the client found no stream to go on: no
    /// answer can come, which the job must learn (see [`Mailbox::lost_requests`]).
    pub(super) lost: Mutex<Vec<JobId>>,
    /// Resumable streams kept for clients that reconnect, oldest first.
    pub(super) logs: Mutex<VecDeque<Arc<EventLog>>>,
    pub(super) next_stream: AtomicU64,
}

impl Postbox {
    /// Messages for request `id` go to `tx` until its response. False if a
    /// request with this id is still waiting for its response.
    pub fn open(&self, id: &RequestId, tx: StreamTx) -> bool {
        let mut streams = lock(&self.streams);
        if streams.get(id).is_some_and(|old| !old.is_closed()) {
            return false;
        }
        streams.insert(id.clone(), tx);
        true
    }

    /// Messages for the requests `ids` go through a new resumable stream
    /// (see the module docs), `primed` if it starts with a priming event;
    /// `None` if one of them is still waiting for its response.
    pub fn open_logged(
        &self,
        ids: &[RequestId],
        primed: bool,
    ) -> Option<(Arc<EventLog>, StreamRx)> {
        let stream = self.next_stream.fetch_add(1, Ordering::Relaxed) + 1;
        let (log, rx) = EventLog::new(stream, primed, ids.to_vec());
        for (n, id) in ids.iter().enumerate() {
            if !self.open(id, StreamTx::Logged(log.clone())) {
                ids[..n].iter().for_each(|opened| self.forget(opened));
                return None;
            }
        }
        self.sweep_logs(Instant::now());
        self.trim_logs();
        // When full, the oldest that no connection reads makes room (its
        // call's messages are dropped from then on); if every one is read,
        // this stream is not kept for a reconnection.
        let evicted = {
            let mut logs = lock(&self.logs);
            let evicted = if logs.len() >= MAX_LOGS {
                let oldest = logs.iter().position(|l| !l.is_read());
                oldest.and_then(|at| logs.remove(at))
            } else {
                None
            };
            if logs.len() < MAX_LOGS {
                logs.push_back(log.clone());
            }
            evicted
        };
        if let Some(dropped) = evicted {
            self.drop_log(&dropped);
        }
        Some((log, rx))
    }

    /// A client reconnects after event `after`: what it missed, and the
    /// rest as it comes. `None` for a stream not kept (any more).
    pub fn resume(&self, after: EventId) -> Option<Resumed> {
        self.sweep_logs(Instant::now());
        let log = lock(&self.logs)
            .iter()
            .find(|l| l.stream == after.stream)
            .cloned()?;
        let (until, rx, connection) = log.attach();
        Some(Resumed {
            log,
            after: after.seq,
            until,
            rx,
            connection,
        })
    }

    /// Drops resumable streams nobody read for [`LOG_KEEP`].
    pub fn sweep_logs(&self, now: Instant) {
        let expired: Vec<Arc<EventLog>> = {
            let mut logs = lock(&self.logs);
            let (gone, kept) = logs.drain(..).partition(|l| l.expired(now));
            *logs = kept;
            gone.into()
        };
        expired.iter().for_each(|log| self.drop_log(log));
    }

    /// Keeps what the session's streams keep within [`LOG_BYTES`]: the
    /// oldest streams nobody reads go first, then the oldest notifications
    /// of those being read (sent to their connections already).
    pub(super) fn trim_logs(&self) {
        let mut dropped = Vec::new();
        {
            let mut logs = lock(&self.logs);
            let mut total: usize = logs.iter().map(|l| l.bytes()).sum();
            while total > LOG_BYTES {
                let Some(at) = logs.iter().position(|l| !l.is_read()) else {
                    break;
                };
                let log = logs.remove(at).expect("a position in the list");
                total -= log.bytes();
                dropped.push(log);
            }
            for log in logs.iter() {
                if total <= LOG_BYTES {
                    break;
                }
                total -= log.forget_oldest(total - LOG_BYTES);
            }
        }
        dropped.iter().for_each(|log| self.drop_log(log));
    }

    /// A log is no longer kept: its unanswered requests' messages have
    /// nowhere to go any more.
    pub(super) fn drop_log(&self, log: &EventLog) {
        let requests = std::mem::take(&mut lock(&log.inner).requests);
        if !log.is_finished() {
            requests.iter().for_each(|id| self.forget(id));
        }
    }

    /// The client of request `id` stopped reading: its messages are dropped.
    pub fn forget(&self, id: &RequestId) {
        lock(&self.streams).remove(id);
        lock(&self.jobs).retain(|_, r| r != id);
    }

    /// Opens the session's GET stream; false if one is open already.
    pub fn open_standalone(&self, tx: StreamTx) -> bool {
        let mut standalone = lock(&self.standalone);
        if standalone.as_ref().is_some_and(|old| !old.is_closed()) {
            return false;
        }
        *standalone = Some(tx);
        true
    }

    /// Whether any stream of this engine is still open (a session with one
    /// is not idle).
    pub fn has_open_streams(&self) -> bool {
        lock(&self.streams).values().any(|tx| match tx {
            StreamTx::Direct(tx) => !tx.is_closed(),
            StreamTx::Logged(log) => log.is_read(),
        }) || lock(&self.standalone)
            .as_ref()
            .is_some_and(|tx| !tx.is_closed())
    }

    pub(super) fn deliver_response(&self, ids: Vec<RequestId>, line: String) {
        let mut streams = lock(&self.streams);
        let mut target = None;
        for id in &ids {
            if let Some(tx) = streams.remove(id) {
                target.get_or_insert(tx);
            }
        }
        drop(streams);
        lock(&self.jobs).retain(|_, r| !ids.contains(r));
        if let Some(tx) = target {
            let logged = matches!(tx, StreamTx::Logged(_));
            tx.send_final(line);
            if logged {
                self.trim_logs();
            }
        }
    }

    /// The server is stopping: every request still waiting gets `error`
    /// (made for its id) as its response, which ends its stream; the GET
    /// stream ends.
    pub fn shut_down(&self, error: impl Fn(&RequestId) -> String) {
        let waiting: Vec<RequestId> = lock(&self.streams).keys().cloned().collect();
        for id in waiting {
            let line = error(&id);
            self.deliver_response(vec![id], line);
        }
        lock(&self.standalone).take();
    }

    pub(super) fn stream_of(&self, cause: &Cause) -> Option<StreamTx> {
        let request = match cause {
            Cause::Inbound(id) => id.clone(),
            Cause::Job(job) => lock(&self.jobs).get(job).cloned(),
            Cause::Timer => None,
        };
        let streams = lock(&self.streams);
        request
            .and_then(|id| streams.get(&id).cloned())
            .filter(|tx| !tx.is_closed())
    }
}

impl Mailbox for Postbox {
    fn deliver(&self, line: String, cause: &Cause) {
        let kind = kind(&line);
        if let Kind::Response(ids) = kind {
            return self.deliver_response(ids, line);
        }
        let target = self
            .stream_of(cause)
            .or_else(|| lock(&self.standalone).clone())
            .filter(StreamTx::has_room_for_note);
        match (target, kind, cause) {
            (Some(tx), _, _) => {
                let logged = matches!(tx, StreamTx::Logged(_));
                tx.send_note(line);
                if logged {
                    self.trim_logs();
                }
            }
            (None, Kind::Request, Cause::Job(job)) => lock(&self.lost).push(*job),
            _ => {}
        }
    }

    fn lost_requests(&self) -> Vec<JobId> {
        std::mem::take(&mut *lock(&self.lost))
    }

    fn job_ended(&self, job: JobId) {
        // After its response the stream is gone already; otherwise the
        // call was cancelled, and dropping its sender ends the stream.
        // A resumable stream shared by a batch's requests ends only when
        // none of them will be answered on it any more: the batch's one
        // response comes once every call in it is done, after the first
        // ones have ended.
        if let Some(request) = lock(&self.jobs).remove(&job) {
            let mut streams = lock(&self.streams);
            let Some(tx) = streams.remove(&request) else {
                return;
            };
            let shared = match &tx {
                StreamTx::Logged(log) => streams
                    .values()
                    .any(|other| matches!(other, StreamTx::Logged(o) if Arc::ptr_eq(o, log))),
                StreamTx::Direct(_) => false,
            };
            drop(streams);
            if !shared {
                tx.end();
            }
        }
    }

    fn close_stream(&self, job: JobId) -> bool {
        let Some(request) = lock(&self.jobs).get(&job).cloned() else {
            return false;
        };
        match lock(&self.streams).get(&request) {
            Some(StreamTx::Logged(log)) if log.primed && !log.is_finished() => {
                log.detach();
                true
            }
            _ => false,
        }
    }

    fn job_started(&self, job: JobId, request: &RequestId) {
        lock(&self.jobs).insert(job, request.clone());
    }
}

pub(super) enum Kind {
    /// A response (or a batch of them) to these request ids.
    Response(Vec<RequestId>),
    /// A request of the server's (it waits for the client's answer).
    Request,
    /// A notification.
    Other,
}

pub(super) const HEAD: &str = "{\"jsonrpc\":\"2.0\",\"id\":";

/// What the engine wrote. Its messages have a fixed shape
/// (`{"jsonrpc":"2.0","id":…,"result"|"error"|"method"…}`, notifications
/// without the id, batches as arrays), so a response is told apart from
/// the head of the line alone, however large its result.
pub(super) fn kind(line: &str) -> Kind {
    if line.starts_with('[') {
        let ids = serde_json::from_str::<Vec<serde_json::Value>>(line)
            .unwrap_or_default()
            .iter()
            .filter_map(|m| m.get("id").filter(|id| !id.is_null()))
            .filter_map(|id| {
                serde_json::value::RawValue::from_string(id.to_string())
                    .ok()
                    .and_then(|raw| RequestId::from_raw(&raw))
            })
            .collect();
        return Kind::Response(ids);
    }
    if !line.starts_with(HEAD) {
        return Kind::Other;
    }
    let prefix = &line.as_bytes()[..line.len().min(crate::protocol::framing::PREFIX_KEPT)];
    let Some(id) = crate::protocol::jsonrpc::sniff_id(prefix) else {
        // `"id":null`: an error for a message whose id was unreadable.
        return Kind::Response(Vec::new());
    };
    let rest = &line[HEAD.len()..];
    let after_id = rest.find(",\"").map_or("", |at| &rest[at..]);
    if after_id.starts_with(",\"method\"") {
        Kind::Request
    } else {
        Kind::Response(vec![id])
    }
}

/// The JSON-RPC error code of a response line, if it is an error.
pub fn error_code(line: &[u8]) -> Option<i64> {
    let line = std::str::from_utf8(line).ok()?;
    if !line.starts_with(HEAD) || !line.contains(",\"error\":{\"code\":") {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    value.get("error")?.get("code")?.as_i64()
}

/// Runs a closure when dropped, unless disarmed: how a handler learns that
/// its client went away before the response was written.
pub struct OnDrop(Option<Box<dyn FnOnce() + Send>>);

impl OnDrop {
    pub fn new(f: impl FnOnce() + Send + 'static) -> OnDrop {
        OnDrop(Some(Box::new(f)))
    }

    pub fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for OnDrop {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}
