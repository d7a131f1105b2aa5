//! Where an HTTP engine's messages go: the response stream of the request
//! they belong to, or the session's standalone GET stream.
//!
//! A [`Postbox`] belongs to one engine (an HTTP session's, or a 2026-07-28
//! request's). The handler of each POST registers a stream under the id of
//! every request it carries; the engine's messages then find their way:
//! a response goes to the stream waiting for its id (and ends it); a
//! notification or a server-to-client request goes to the stream of the
//! request that caused it (the POST being read, or the call whose job
//! reported progress, logged or asked for input); what has no stream goes
//! to the session's GET stream if one is open, and is dropped otherwise.
//!
//! Every stream is a bounded channel. A slow reader loses notifications,
//! never its response: one place is always kept free for it.
//!
//! A handshake-era client that reads event streams gets resumable ones
//! (2025-03-26 on): the messages of each POST's stream pass through an
//! [`EventLog`] that numbers them (`id: <stream>:<seq>`) and keeps the
//! last [`LOG_CAPACITY`] of them, so a client whose connection broke (or
//! that the server let go on purpose, see [`Mailbox::close_stream`]) sends
//! `GET` with `Last-Event-ID` and gets what it missed, then the rest. A
//! session keeps at most [`MAX_LOGS`] logs, each for [`LOG_KEEP`] after its
//! last activity once no connection reads it.

use crate::protocol::jsonrpc::RequestId;
use crate::transport::slots::{Cause, Mailbox};
use crate::util::ids::JobId;
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Messages one stream holds for a client that reads slowly; one more place
/// is kept for the response.
pub const STREAM_CAPACITY: usize = 256;

/// Messages one resumable stream keeps for a client that reconnects.
pub const LOG_CAPACITY: usize = STREAM_CAPACITY;

/// Resumable streams one session keeps.
pub const MAX_LOGS: usize = 32;

/// How long a resumable stream nobody reads is kept after its last event.
pub const LOG_KEEP: Duration = Duration::from_secs(60);

/// Bytes of messages one session's resumable streams keep at most (large
/// results are kept too): beyond it, the oldest streams nobody reads go.
pub const LOG_BYTES: usize = 8 * 1024 * 1024;

/// Where an event sits among a session's streams: `<stream>:<seq>` on the
/// wire. Sequence 0 is the priming event, which carries no message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventId {
    pub stream: u64,
    pub seq: u64,
}

impl EventId {
    /// Reads a `Last-Event-ID` value the server gave.
    pub fn parse(text: &str) -> Option<EventId> {
        let (stream, seq) = text.trim().split_once(':')?;
        Some(EventId {
            stream: stream.parse().ok()?,
            seq: seq.parse().ok()?,
        })
    }
}

impl std::fmt::Display for EventId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.stream, self.seq)
    }
}

/// One message on its way to a client, with its event id on a resumable
/// stream.
///
/// The message's text is shared, never copied, between the resumable
/// stream that keeps it and every connection that sends it.
#[derive(Debug, Clone)]
pub enum Piece {
    /// A notification or server request; more follows.
    Note(Bytes, Option<EventId>),
    /// The response that ends the stream.
    Final(Bytes, Option<EventId>),
}

impl Piece {
    /// The message (the engine's lines are UTF-8 text).
    pub fn text(&self) -> &str {
        let (Piece::Note(line, _) | Piece::Final(line, _)) = self;
        std::str::from_utf8(line).unwrap_or_default()
    }
}

pub type StreamRx = mpsc::Receiver<Piece>;

/// The number of a resumable stream's first connection, the POST's.
pub const FIRST_CONNECTION: u64 = 0;

/// A resumed stream (see [`Postbox::resume`]).
pub struct Resumed {
    pub log: Arc<EventLog>,
    /// The events the client missed: those of the log after `after`, up
    /// to `until`, read from the log as they are sent (not copied).
    pub after: u64,
    pub until: u64,
    /// What follows.
    pub rx: StreamRx,
    /// The connection's number, for [`EventLog::detach_connection`].
    pub connection: u64,
}

fn channel() -> (mpsc::Sender<Piece>, StreamRx) {
    mpsc::channel(STREAM_CAPACITY + 1)
}

/// A plain stream: straight to one connection.
pub fn stream() -> (StreamTx, StreamRx) {
    let (tx, rx) = channel();
    (StreamTx::Direct(tx), rx)
}

/// Where a request's messages go.
#[derive(Clone)]
pub enum StreamTx {
    /// Straight to the connection that waits for them.
    Direct(mpsc::Sender<Piece>),
    /// Through a resumable stream's log, to whichever connection reads it.
    Logged(Arc<EventLog>),
}

impl StreamTx {
    /// Whether nothing more can reach a client this way.
    pub fn is_closed(&self) -> bool {
        match self {
            StreamTx::Direct(tx) => tx.is_closed(),
            StreamTx::Logged(log) => log.is_finished(),
        }
    }

    /// Whether a notification may go now (the last place of a plain stream
    /// is its response's; a log makes room itself).
    fn has_room_for_note(&self) -> bool {
        match self {
            StreamTx::Direct(tx) => tx.capacity() > 1,
            StreamTx::Logged(log) => !log.is_finished(),
        }
    }

    fn send_note(&self, line: String) {
        match self {
            StreamTx::Direct(tx) => {
                if tx.capacity() > 1 {
                    let _ = tx.try_send(Piece::Note(line.into(), None));
                }
            }
            StreamTx::Logged(log) => log.push(line.into(), false),
        }
    }

    fn send_final(&self, line: String) {
        match self {
            StreamTx::Direct(tx) => {
                let _ = tx.try_send(Piece::Final(line.into(), None));
            }
            StreamTx::Logged(log) => log.push(line.into(), true),
        }
    }

    /// No response will come (the call was cancelled): the stream ends.
    fn end(self) {
        if let StreamTx::Logged(log) = self {
            log.abandon();
        }
    }
}

/// The messages of one resumable stream (see the module docs), and the
/// connection reading it now, if any.
pub struct EventLog {
    stream: u64,
    /// Its stream starts with a priming event (2025-11-25 on), so its
    /// client can resume even before any message: only then may the
    /// server let the connection go on purpose.
    primed: bool,
    inner: Mutex<LogInner>,
}

struct LogInner {
    next_seq: u64,
    /// The last messages, oldest first: (seq, is the response, line).
    events: VecDeque<(u64, bool, Bytes)>,
    live: Option<mpsc::Sender<Piece>>,
    /// Which connection `live` is: [`FIRST_CONNECTION`] for the POST's,
    /// one more for each resumption.
    connection: u64,
    /// The response is in the log, or none will come.
    ended: bool,
    /// Its requests, whose routes go when it is dropped unfinished.
    requests: Vec<RequestId>,
    /// The size of `events`' lines.
    bytes: usize,
    /// The last event, or a connection coming or going.
    touched: Instant,
}

impl EventLog {
    fn new(stream: u64, primed: bool, requests: Vec<RequestId>) -> (Arc<EventLog>, StreamRx) {
        let (tx, rx) = channel();
        let log = EventLog {
            stream,
            primed,
            inner: Mutex::new(LogInner {
                next_seq: 1,
                events: VecDeque::new(),
                live: Some(tx),
                connection: FIRST_CONNECTION,
                ended: false,
                requests,
                bytes: 0,
                touched: Instant::now(),
            }),
        };
        (Arc::new(log), rx)
    }

    /// The priming event's id (the point before every message), if the
    /// stream starts with one.
    pub fn priming(&self) -> Option<EventId> {
        self.primed.then_some(EventId {
            stream: self.stream,
            seq: 0,
        })
    }

    fn push(&self, line: Bytes, last: bool) {
        let mut inner = lock(&self.inner);
        if inner.ended {
            return;
        }
        let id = EventId {
            stream: self.stream,
            seq: inner.next_seq,
        };
        inner.next_seq += 1;
        inner.touched = Instant::now();
        if let Some(live) = inner.live.as_ref().filter(|tx| !tx.is_closed()) {
            // The live connection loses a notification when it reads
            // slowly (the log still has it); never the response.
            if last {
                let _ = live.try_send(Piece::Final(line.clone(), Some(id)));
            } else if live.capacity() > 1 {
                let _ = live.try_send(Piece::Note(line.clone(), Some(id)));
            }
        }
        if inner.events.len() >= LOG_CAPACITY {
            if let Some((_, _, dropped)) = inner.events.pop_front() {
                inner.bytes -= dropped.len();
            }
        }
        inner.bytes += line.len();
        inner.events.push_back((id.seq, last, line));
        inner.ended |= last;
    }

    /// A connection resumes: the last event it may have missed (those
    /// after its `Last-Event-ID` up to this one it reads from the log),
    /// the channel for what follows, and its number (for
    /// [`EventLog::detach_connection`]). It takes the place of any earlier
    /// connection, which ends (see [`EventLog::is_current`]).
    fn attach(&self) -> (u64, StreamRx, u64) {
        let mut inner = lock(&self.inner);
        let (tx, rx) = channel();
        // After the response nothing follows: the new stream ends with it.
        inner.live = (!inner.ended).then_some(tx);
        inner.connection += 1;
        inner.touched = Instant::now();
        (inner.next_seq - 1, rx, inner.connection)
    }

    /// The first event kept with a sequence number from `from` to `until`.
    pub fn event_in(&self, from: u64, until: u64) -> Option<Piece> {
        let inner = lock(&self.inner);
        let at = inner.events.partition_point(|(seq, _, _)| *seq < from);
        let (seq, last, line) = inner.events.get(at).filter(|(seq, _, _)| *seq <= until)?;
        let id = Some(EventId {
            stream: self.stream,
            seq: *seq,
        });
        Some(if *last {
            Piece::Final(line.clone(), id)
        } else {
            Piece::Note(line.clone(), id)
        })
    }

    /// Whether connection `connection` is the one reading the stream: a
    /// later resumption replaces it, and it ends.
    pub fn is_current(&self, connection: u64) -> bool {
        lock(&self.inner).connection == connection
    }

    /// Drops the oldest notifications, those a live connection was sent
    /// already and only a reconnection would ask for again, until `excess`
    /// bytes are freed or none is left; returns the bytes freed. The
    /// response stays: it is what a client that lost its connection comes
    /// back for, and while the connection lasts it holds the same bytes
    /// (the stream goes once nobody reads it, see [`Postbox::trim_logs`]).
    fn forget_oldest(&self, excess: usize) -> usize {
        let mut inner = lock(&self.inner);
        let mut freed = 0;
        while freed < excess && inner.events.front().is_some_and(|(_, last, _)| !last) {
            let (_, _, line) = inner.events.pop_front().expect("a front event");
            freed += line.len();
        }
        inner.bytes -= freed;
        freed
    }

    /// Lets the connection go (its client reconnects for the rest).
    pub fn detach(&self) {
        let mut inner = lock(&self.inner);
        inner.live = None;
        inner.touched = Instant::now();
    }

    /// Connection `connection` went away. A later one may have taken its
    /// place already (a client reconnects as soon as its side of the
    /// connection breaks; the server notices only on its next write), and
    /// is left alone then.
    pub fn detach_connection(&self, connection: u64) {
        let mut inner = lock(&self.inner);
        if inner.connection == connection {
            inner.live = None;
        }
        inner.touched = Instant::now();
    }

    /// The response went as plain JSON, which cannot be resumed: nothing
    /// is kept.
    pub fn discard(&self) {
        let mut inner = lock(&self.inner);
        inner.events.clear();
        inner.bytes = 0;
        inner.ended = true;
    }

    fn bytes(&self) -> usize {
        lock(&self.inner).bytes
    }

    /// No response will come: the connection, if any, ends.
    fn abandon(&self) {
        let mut inner = lock(&self.inner);
        inner.ended = true;
        inner.live = None;
    }

    fn is_finished(&self) -> bool {
        lock(&self.inner).ended
    }

    fn is_read(&self) -> bool {
        lock(&self.inner)
            .live
            .as_ref()
            .is_some_and(|tx| !tx.is_closed())
    }

    fn expired(&self, now: Instant) -> bool {
        let inner = lock(&self.inner);
        let read = inner.live.as_ref().is_some_and(|tx| !tx.is_closed());
        !read && now.saturating_duration_since(inner.touched) >= LOG_KEEP
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The routes of one engine's messages (see the module docs).
#[derive(Default)]
pub struct Postbox {
    streams: Mutex<HashMap<RequestId, StreamTx>>,
    jobs: Mutex<HashMap<JobId, RequestId>>,
    standalone: Mutex<Option<StreamTx>>,
    /// Jobs whose request to the client found no stream to go on: no
    /// answer can come, which the job must learn (see [`Mailbox::lost_requests`]).
    lost: Mutex<Vec<JobId>>,
    /// Resumable streams kept for clients that reconnect, oldest first.
    logs: Mutex<VecDeque<Arc<EventLog>>>,
    next_stream: AtomicU64,
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
    fn trim_logs(&self) {
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
    fn drop_log(&self, log: &EventLog) {
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

    fn deliver_response(&self, ids: Vec<RequestId>, line: String) {
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

    fn stream_of(&self, cause: &Cause) -> Option<StreamTx> {
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

enum Kind {
    /// A response (or a batch of them) to these request ids.
    Response(Vec<RequestId>),
    /// A request of the server's (it waits for the client's answer).
    Request,
    /// A notification.
    Other,
}

const HEAD: &str = "{\"jsonrpc\":\"2.0\",\"id\":";

/// What the engine wrote. Its messages have a fixed shape
/// (`{"jsonrpc":"2.0","id":…,"result"|"error"|"method"…}`, notifications
/// without the id, batches as arrays), so a response is told apart from
/// the head of the line alone, however large its result.
fn kind(line: &str) -> Kind {
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

/// Messages up to this size are copied into their event's frame; larger
/// ones are sent as they are kept, between a head and a tail of their own,
/// so that no connection copies a large message.
const COPIED_BELOW: usize = 16 * 1024;

/// The head of an SSE event carrying one message (its `data:` line
/// follows), with its id on a resumable stream.
fn event_head(id: Option<EventId>) -> String {
    match id {
        Some(id) => format!("id: {id}\nevent: message\ndata: "),
        None => "event: message\ndata: ".to_string(),
    }
}

/// One SSE event carrying one message, its JSON on a single `data:` line
/// (the engine writes compact JSON, without newlines), with its id on a
/// resumable stream.
pub fn sse_event(message: &[u8], id: Option<EventId>) -> Bytes {
    let mut event = event_head(id).into_bytes();
    event.reserve(message.len() + 2);
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// The frames of one event: one, or for a large message three, the
/// message among them shared with wherever it is kept.
fn event_frames(line: &Bytes, id: Option<EventId>, out: &mut VecDeque<Bytes>) {
    if line.len() < COPIED_BELOW {
        let mut event = event_head(id).into_bytes();
        event.extend_from_slice(line);
        event.extend_from_slice(b"\n\n");
        out.push_back(Bytes::from(event));
    } else {
        out.push_back(Bytes::from(event_head(id)));
        out.push_back(line.clone());
        out.push_back(Bytes::from_static(b"\n\n"));
    }
}

/// The first event of a resumable stream (2025-11-25): its id and no
/// message, so a client the server lets go at once can still resume, and
/// how long to wait before reconnecting.
pub fn priming_event(id: EventId, retry: Duration) -> Bytes {
    Bytes::from(format!("id: {id}\nretry: {}\ndata:\n\n", retry.as_millis()))
}

/// What a resumed connection sends first: the events it missed, read from
/// the stream's log one at a time (so nothing is copied for it), while it
/// is the stream's current connection.
struct Replay {
    log: Arc<EventLog>,
    connection: u64,
    /// The next event to send is the first kept from here...
    next: u64,
    /// ...up to this one; later ones come through the channel.
    until: u64,
}

/// A `text/event-stream` response body: the messages of one stream, with
/// a comment now and then so an idle stream stays open through proxies
/// (and a client that has gone is noticed). It ends after the response;
/// dropped before that (the client went away), it runs its guard.
pub struct SseBody {
    /// Frames ready to send: a priming event, the parts of an event.
    frames: VecDeque<Bytes>,
    /// Pieces to send before reading the channel.
    queued: VecDeque<Piece>,
    replay: Option<Replay>,
    rx: StreamRx,
    keepalive: tokio::time::Interval,
    /// The response is among the frames: nothing is read after it.
    ended: bool,
    /// Every frame is sent.
    done: bool,
    guard: OnDrop,
    /// Held for the life of the stream (a place among the open streams).
    _place: Option<super::limits::Place>,
}

impl SseBody {
    /// `first` are the events to send before what `rx` brings.
    pub fn new(
        first: impl IntoIterator<Item = Piece>,
        rx: StreamRx,
        keepalive: Duration,
        guard: OnDrop,
        place: Option<super::limits::Place>,
    ) -> SseBody {
        let mut keepalive = tokio::time::interval(keepalive);
        keepalive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut queued = VecDeque::new();
        for piece in first {
            let last = matches!(piece, Piece::Final(..));
            queued.push_back(piece);
            if last {
                break;
            }
        }
        SseBody {
            frames: VecDeque::new(),
            queued,
            replay: None,
            rx,
            keepalive,
            ended: false,
            done: false,
            guard,
            _place: place,
        }
    }

    /// The body of a resumed connection: what it missed, then the rest.
    pub fn resumed(
        resumed: Resumed,
        keepalive: Duration,
        guard: OnDrop,
        place: Option<super::limits::Place>,
    ) -> SseBody {
        let Resumed {
            log,
            after,
            until,
            rx,
            connection,
        } = resumed;
        let mut body = SseBody::new([], rx, keepalive, guard, place);
        body.replay = Some(Replay {
            log,
            connection,
            next: after + 1,
            until,
        });
        body
    }

    /// Starts the stream with a priming event (see [`priming_event`]).
    pub fn primed(mut self, id: EventId, retry: Duration) -> SseBody {
        self.frames.push_front(priming_event(id, retry));
        self
    }

    /// Queues the frames of a piece; after the response, the stream ends.
    fn render(&mut self, piece: Piece) {
        let (Piece::Note(line, id) | Piece::Final(line, id)) = &piece;
        event_frames(line, *id, &mut self.frames);
        if matches!(piece, Piece::Final(..)) {
            self.ended = true;
            self.guard.disarm();
        }
    }

    /// The next piece to send that is at hand: queued, or missed by a
    /// resumed connection.
    fn next_at_hand(&mut self) -> Option<Piece> {
        if let Some(piece) = self.queued.pop_front() {
            return Some(piece);
        }
        let replay = self.replay.as_mut()?;
        let piece = replay.log.event_in(replay.next, replay.until);
        match &piece {
            Some(Piece::Note(_, Some(id)) | Piece::Final(_, Some(id))) => replay.next = id.seq + 1,
            _ => replay.next = replay.until + 1,
        }
        piece
    }

    /// A later resumption of the same stream took this connection's place.
    fn superseded(&self) -> bool {
        self.replay
            .as_ref()
            .is_some_and(|r| !r.log.is_current(r.connection))
    }
}

impl Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.done {
            return Poll::Ready(None);
        }
        if self.superseded() {
            // One connection reads a stream: the newer one goes on.
            self.done = true;
            return Poll::Ready(None);
        }
        if self.frames.is_empty() && !self.ended {
            if let Some(piece) = self.next_at_hand() {
                self.render(piece);
            }
        }
        if let Some(frame) = self.frames.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(frame))));
        }
        if self.ended {
            self.done = true;
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(piece)) => {
                self.render(piece);
                let frame = self.frames.pop_front().expect("a piece has frames");
                self.done = self.ended && self.frames.is_empty();
                return Poll::Ready(Some(Ok(Frame::data(frame))));
            }
            Poll::Ready(None) => {
                // Nobody can send any more (the server stopped): end quietly.
                self.done = true;
                self.guard.disarm();
                return Poll::Ready(None);
            }
            Poll::Pending => {}
        }
        if self.keepalive.poll_tick(cx).is_ready() {
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b": ping\n\n")))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::jsonrpc;

    fn id(n: u64) -> RequestId {
        RequestId::from_number(n)
    }

    #[test]
    fn responses_notifications_and_server_requests_are_told_apart() {
        let response = jsonrpc::success(
            &id(7),
            "{\"content\":[{\"type\":\"text\",\"text\":\"\\\"method\\\"\"}]}",
        );
        assert!(matches!(kind(&response), Kind::Response(ids) if ids == vec![id(7)]));
        let error = jsonrpc::error(Some(&id(3)), -32601, "Method not found", None);
        assert!(matches!(kind(&error), Kind::Response(ids) if ids == vec![id(3)]));
        assert_eq!(error_code(error.as_bytes()), Some(-32601));
        assert_eq!(error_code(response.as_bytes()), None);
        let request = jsonrpc::request(&id(1), "elicitation/create", "{}");
        assert!(matches!(kind(&request), Kind::Request));
        let note = jsonrpc::notification("notifications/progress", "{}");
        assert!(matches!(kind(&note), Kind::Other));
        let batch = format!(
            "[{},{}]",
            jsonrpc::success(&id(1), "{}"),
            jsonrpc::success(&id(2), "{}")
        );
        assert!(matches!(kind(&batch), Kind::Response(ids) if ids == vec![id(1), id(2)]));
    }

    #[test]
    fn a_response_ends_its_stream_and_notes_follow_their_job() {
        let postbox = Postbox::default();
        let (tx, mut rx) = stream();
        assert!(postbox.open(&id(1), tx.clone()));
        assert!(!postbox.open(&id(1), tx), "one stream per waiting id");
        postbox.job_started(9, &id(1));
        postbox.deliver(
            jsonrpc::notification("notifications/progress", "{}"),
            &Cause::Job(9),
        );
        postbox.deliver(jsonrpc::success(&id(1), "{}"), &Cause::Job(9));
        assert!(matches!(rx.try_recv(), Ok(Piece::Note(..))));
        assert!(matches!(rx.try_recv(), Ok(Piece::Final(..))));
        // After its response, the job's messages have nowhere to go.
        postbox.deliver(
            jsonrpc::notification("notifications/progress", "{}"),
            &Cause::Job(9),
        );
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn a_slow_reader_loses_notes_but_never_its_response() {
        let postbox = Postbox::default();
        let (tx, mut rx) = stream();
        postbox.open(&id(1), tx);
        for _ in 0..STREAM_CAPACITY * 2 {
            postbox.deliver(
                jsonrpc::notification("notifications/message", "{}"),
                &Cause::Inbound(Some(id(1))),
            );
        }
        postbox.deliver(jsonrpc::success(&id(1), "{}"), &Cause::Inbound(Some(id(1))));
        let mut notes = 0;
        loop {
            match rx.try_recv() {
                Ok(Piece::Note(..)) => notes += 1,
                Ok(Piece::Final(..)) => break,
                Err(e) => panic!("the response was lost: {e}"),
            }
        }
        assert_eq!(notes, STREAM_CAPACITY);
    }

    #[test]
    fn what_has_no_stream_goes_to_the_get_stream() {
        let postbox = Postbox::default();
        let (tx, mut rx) = stream();
        assert!(postbox.open_standalone(tx.clone()));
        assert!(!postbox.open_standalone(tx), "one GET stream per session");
        postbox.deliver(
            jsonrpc::notification("notifications/tools/list_changed", "{}"),
            &Cause::Timer,
        );
        assert!(matches!(rx.try_recv(), Ok(Piece::Note(..))));
        // Responses never go there.
        postbox.deliver(jsonrpc::success(&id(5), "{}"), &Cause::Timer);
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn a_cancelled_call_ends_its_stream_without_a_response() {
        let postbox = Postbox::default();
        let (tx, mut rx) = stream();
        postbox.open(&id(1), tx);
        postbox.job_started(4, &id(1));
        postbox.job_ended(4);
        assert!(matches!(
            rx.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
    }

    #[test]
    fn a_request_with_nowhere_to_go_is_reported_lost() {
        let postbox = Postbox::default();
        postbox.job_started(4, &id(1));
        postbox.deliver(
            jsonrpc::request(&id(9), "elicitation/create", "{}"),
            &Cause::Job(4),
        );
        assert_eq!(postbox.lost_requests(), vec![4]);
        assert!(postbox.lost_requests().is_empty());
    }

    fn ids_of(pieces: &[Piece]) -> Vec<u64> {
        pieces
            .iter()
            .map(|p| match p {
                Piece::Note(_, id) | Piece::Final(_, id) => id.expect("an event id").seq,
            })
            .collect()
    }

    fn drain(rx: &mut StreamRx) -> Vec<Piece> {
        std::iter::from_fn(|| rx.try_recv().ok()).collect()
    }

    /// What a resumed connection replays from the log.
    fn missed(resumed: &Resumed) -> Vec<Piece> {
        let mut next = resumed.after + 1;
        std::iter::from_fn(|| {
            let piece = resumed.log.event_in(next, resumed.until)?;
            let (Piece::Note(_, id) | Piece::Final(_, id)) = &piece;
            next = id.expect("an event id").seq + 1;
            Some(piece)
        })
        .collect()
    }

    #[test]
    fn event_ids_read_back_and_reject_others() {
        let id = EventId { stream: 3, seq: 14 };
        assert_eq!(EventId::parse(&id.to_string()), Some(id));
        assert_eq!(EventId::parse(" 3:14 "), Some(id));
        assert_eq!(EventId::parse("3"), None);
        assert_eq!(EventId::parse("a:1"), None);
        assert_eq!(EventId::parse("1:-2"), None);
    }

    #[test]
    fn a_resumed_stream_gets_what_it_missed_then_the_rest() {
        let postbox = Postbox::default();
        let (log, mut rx) = postbox.open_logged(&[id(1)], true).expect("opened");
        postbox.job_started(4, &id(1));
        let note = || jsonrpc::notification("notifications/progress", "{}");
        postbox.deliver(note(), &Cause::Job(4));
        assert_eq!(ids_of(&drain(&mut rx)), vec![1]);
        // The server lets the connection go; the call goes on.
        assert!(postbox.close_stream(4));
        assert!(rx.try_recv().is_err(), "the connection's channel ended");
        postbox.deliver(note(), &Cause::Job(4));
        postbox.deliver(note(), &Cause::Job(4));
        let resumed = postbox
            .resume(EventId {
                stream: log.stream,
                seq: 1,
            })
            .expect("kept");
        assert_eq!(ids_of(&missed(&resumed)), vec![2, 3]);
        let mut rx = resumed.rx;
        postbox.deliver(jsonrpc::success(&id(1), "{}"), &Cause::Job(4));
        let rest = drain(&mut rx);
        assert_eq!(ids_of(&rest), vec![4]);
        assert!(matches!(rest[0], Piece::Final(..)));
        // A client that lost that too gets it again, and the stream ends.
        let resumed = postbox
            .resume(EventId {
                stream: log.stream,
                seq: 3,
            })
            .expect("kept");
        assert_eq!(ids_of(&missed(&resumed)), vec![4]);
        let mut rx = resumed.rx;
        assert!(matches!(
            rx.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
        assert!(postbox.resume(EventId { stream: 99, seq: 0 }).is_none());
    }

    #[test]
    fn a_stale_connection_going_away_leaves_the_resumed_one_alone() {
        let postbox = Postbox::default();
        let (log, first) = postbox.open_logged(&[id(1)], true).expect("opened");
        postbox.job_started(4, &id(1));
        // The client reconnects before the server noticed its first
        // connection broke (it notices on its next write, a keepalive).
        let Resumed {
            rx: mut resumed, ..
        } = postbox
            .resume(EventId {
                stream: log.stream,
                seq: 0,
            })
            .expect("kept");
        // Only then does the first connection's guard run.
        drop(first);
        log.detach_connection(FIRST_CONNECTION);
        postbox.deliver(jsonrpc::success(&id(1), "{}"), &Cause::Job(4));
        assert!(
            matches!(resumed.try_recv(), Ok(Piece::Final(..))),
            "the resumed connection still gets the response"
        );
    }

    #[test]
    fn a_log_keeps_its_last_events_and_a_session_its_last_logs() {
        let postbox = Postbox::default();
        let (log, _rx) = postbox.open_logged(&[id(1)], true).expect("opened");
        for _ in 0..LOG_CAPACITY + 10 {
            postbox.deliver(
                jsonrpc::notification("notifications/message", "{}"),
                &Cause::Inbound(Some(id(1))),
            );
        }
        let resumed = postbox
            .resume(EventId {
                stream: log.stream,
                seq: 0,
            })
            .expect("kept");
        let missed = missed(&resumed);
        drop(resumed);
        assert_eq!(missed.len(), LOG_CAPACITY);
        assert_eq!(ids_of(&missed)[0], 11);
        // Logs nobody reads make room for new ones, oldest first.
        let first = log.stream;
        for n in 2..=(MAX_LOGS as u64 + 1) {
            let (log, rx) = postbox.open_logged(&[id(n)], true).expect("opened");
            drop(rx);
            log.detach();
        }
        assert!(postbox
            .resume(EventId {
                stream: first,
                seq: 0
            })
            .is_none());
        assert_eq!(lock(&postbox.logs).len(), MAX_LOGS);
        // The request of a dropped, unanswered log has nowhere to go.
        assert!(!lock(&postbox.streams).contains_key(&id(1)));
    }

    /// The frames a body sends now (without waiting), and whether it ended.
    fn frames_now(body: &mut SseBody) -> (Vec<Bytes>, bool) {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut frames = Vec::new();
        loop {
            match Pin::new(&mut *body).poll_frame(&mut cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    let data = frame.into_data().expect("data");
                    if data.as_ref() != b": ping\n\n" {
                        frames.push(data);
                    }
                }
                Poll::Ready(None) => return (frames, true),
                Poll::Pending => return (frames, false),
            }
        }
    }

    #[test]
    fn resumptions_share_the_kept_events_and_a_new_one_replaces_the_old() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let _entered = runtime.enter();
        let postbox = Postbox::default();
        let (log, rx) = postbox.open_logged(&[id(1)], true).expect("opened");
        let big = format!("\"{}\"", "x".repeat(4 * COPIED_BELOW));
        postbox.deliver(jsonrpc::success(&id(1), &big), &Cause::Inbound(Some(id(1))));
        drop(rx);
        log.detach_connection(FIRST_CONNECTION);
        let kept = log.event_in(1, 1).expect("kept");
        let resume = || {
            let resumed = postbox
                .resume(EventId {
                    stream: log.stream,
                    seq: 0,
                })
                .expect("kept");
            SseBody::resumed(resumed, Duration::from_secs(60), OnDrop::new(|| {}), None)
        };
        let mut first = resume();
        let mut second = resume();
        // The first connection was replaced before it sent anything: it
        // ends, and holds nothing.
        assert_eq!(frames_now(&mut first), (Vec::new(), true));
        let (frames, ended) = frames_now(&mut second);
        assert!(ended, "the response ends the stream");
        assert_eq!(frames.len(), 3, "head, message, tail");
        assert_eq!(
            frames[1].as_ptr(),
            kept.text().as_ptr(),
            "the message is the one kept, not a copy"
        );
        let sent: Vec<u8> = frames.concat();
        let expected = sse_event(
            kept.text().as_bytes(),
            Some(EventId {
                stream: log.stream,
                seq: 1,
            }),
        );
        assert_eq!(sent, expected.to_vec());
    }

    #[test]
    fn what_streams_being_read_keep_is_bounded_too() {
        let postbox = Postbox::default();
        let (_log, _rx) = postbox.open_logged(&[id(1)], true).expect("opened");
        let note = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"data\":\"{}\"}}}}",
            "y".repeat(LOG_BYTES / 16)
        );
        for _ in 0..64 {
            postbox.deliver(note.clone(), &Cause::Inbound(Some(id(1))));
        }
        let kept: usize = lock(&postbox.logs).iter().map(|l| l.bytes()).sum();
        assert!(kept <= LOG_BYTES, "{kept}");
        assert!(kept >= LOG_BYTES / 2, "the newest are kept: {kept}");
    }

    #[test]
    fn a_session_keeps_a_bounded_size_of_messages() {
        let postbox = Postbox::default();
        let big = format!("\"{}\"", "x".repeat(LOG_BYTES / 3));
        for n in 1..=4 {
            let (log, rx) = postbox.open_logged(&[id(n)], true).expect("opened");
            postbox.deliver(jsonrpc::success(&id(n), &big), &Cause::Inbound(Some(id(n))));
            drop(rx);
            log.detach();
        }
        let kept: usize = lock(&postbox.logs).iter().map(|l| l.bytes()).sum();
        assert!(kept <= LOG_BYTES, "{kept}");
        assert_eq!(lock(&postbox.logs).len(), 2, "the newest two");
        // A response answered as JSON keeps nothing.
        let (log, _rx) = postbox.open_logged(&[id(9)], true).expect("opened");
        postbox.deliver(jsonrpc::success(&id(9), "{}"), &Cause::Inbound(Some(id(9))));
        log.discard();
        assert_eq!(log.bytes(), 0);
    }

    #[test]
    fn logs_nobody_reads_expire() {
        let postbox = Postbox::default();
        let (log, rx) = postbox.open_logged(&[id(1)], true).expect("opened");
        postbox.sweep_logs(Instant::now() + LOG_KEEP * 2);
        assert_eq!(lock(&postbox.logs).len(), 1, "a read log is kept");
        drop(rx);
        log.detach();
        postbox.sweep_logs(Instant::now() + LOG_KEEP / 2);
        assert_eq!(lock(&postbox.logs).len(), 1);
        postbox.sweep_logs(Instant::now() + LOG_KEEP);
        assert!(lock(&postbox.logs).is_empty());
        assert!(!lock(&postbox.streams).contains_key(&id(1)));
    }

    #[test]
    fn a_cancelled_call_ends_its_resumable_stream() {
        let postbox = Postbox::default();
        let (_log, mut rx) = postbox.open_logged(&[id(1)], true).expect("opened");
        postbox.job_started(4, &id(1));
        postbox.job_ended(4);
        assert!(matches!(
            rx.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
        assert!(!postbox.has_open_streams());
    }

    #[test]
    fn a_stream_without_priming_cannot_be_let_go() {
        let postbox = Postbox::default();
        let (_log, _rx) = postbox.open_logged(&[id(1)], false).expect("opened");
        postbox.job_started(4, &id(1));
        assert!(!postbox.close_stream(4));
    }

    #[test]
    fn a_plain_stream_cannot_be_let_go() {
        let postbox = Postbox::default();
        let (tx, _rx) = stream();
        postbox.open(&id(1), tx);
        postbox.job_started(4, &id(1));
        assert!(!postbox.close_stream(4));
        assert!(!postbox.close_stream(5), "an unknown job");
    }
}
