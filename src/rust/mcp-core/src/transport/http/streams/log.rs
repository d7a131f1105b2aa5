//! The [`EventLog`] of a resumable stream: it numbers the stream's events
//! and keeps the last [`LOG_CAPACITY`] of them, for a client that comes back
//! with `Last-Event-ID`.

use super::channel::{channel, lock, EventId, Piece, StreamRx, FIRST_CONNECTION, STREAM_CAPACITY};
use crate::protocol::jsonrpc::RequestId;
use bytes::Bytes;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Messages one resumable stream keeps for a client that reconnects.
pub const LOG_CAPACITY: usize = STREAM_CAPACITY;

/// Resumable streams one session keeps.
pub const MAX_LOGS: usize = 32;

/// How long a resumable stream nobody reads is kept after its last event.
pub const LOG_KEEP: Duration = Duration::from_secs(60);

/// Bytes of messages one session's resumable streams keep at most (large
/// results are kept too): beyond it, the oldest streams nobody reads go.
pub const LOG_BYTES: usize = 8 * 1024 * 1024;

/// The messages of one resumable stream (see the module docs), and the
/// connection reading it now, if any.
pub struct EventLog {
    pub(super) stream: u64,
    /// Its stream starts with a priming event (2025-11-25 on), so its
    /// client can resume even before any message: only then may the
    /// server let the connection go on purpose.
    pub(super) primed: bool,
    pub(super) inner: Mutex<LogInner>,
}

pub(super) struct LogInner {
    pub(super) next_seq: u64,
    /// The last messages, oldest first: (seq, is the response, line).
    pub(super) events: VecDeque<(u64, bool, Bytes)>,
    pub(super) live: Option<mpsc::Sender<Piece>>,
    /// Which connection `live` is: [`FIRST_CONNECTION`] for the POST's,
    /// one more for each resumption.
    pub(super) connection: u64,
    /// The response is in the log, or none will come.
    pub(super) ended: bool,
    /// Its requests, whose routes go when it is dropped unfinished.
    pub(super) requests: Vec<RequestId>,
    /// The size of `events`' lines.
    pub(super) bytes: usize,
    /// The last event, or a connection coming or going.
    pub(super) touched: Instant,
}

impl EventLog {
    pub(super) fn new(
        stream: u64,
        primed: bool,
        requests: Vec<RequestId>,
    ) -> (Arc<EventLog>, StreamRx) {
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

    pub(super) fn push(&self, line: Bytes, last: bool) {
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
    pub(super) fn attach(&self) -> (u64, StreamRx, u64) {
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
    pub(super) fn forget_oldest(&self, excess: usize) -> usize {
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

    pub(super) fn bytes(&self) -> usize {
        lock(&self.inner).bytes
    }

    /// No response will come: the connection, if any, ends.
    pub(super) fn abandon(&self) {
        let mut inner = lock(&self.inner);
        inner.ended = true;
        inner.live = None;
    }

    pub(super) fn is_finished(&self) -> bool {
        lock(&self.inner).ended
    }

    pub(super) fn is_read(&self) -> bool {
        lock(&self.inner)
            .live
            .as_ref()
            .is_some_and(|tx| !tx.is_closed())
    }

    pub(super) fn expired(&self, now: Instant) -> bool {
        let inner = lock(&self.inner);
        let read = inner.live.as_ref().is_some_and(|tx| !tx.is_closed());
        !read && now.saturating_duration_since(inner.touched) >= LOG_KEEP
    }
}

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
    pub(super) fn has_room_for_note(&self) -> bool {
        match self {
            StreamTx::Direct(tx) => tx.capacity() > 1,
            StreamTx::Logged(log) => !log.is_finished(),
        }
    }

    pub(super) fn send_note(&self, line: String) {
        match self {
            StreamTx::Direct(tx) => {
                if tx.capacity() > 1 {
                    let _ = tx.try_send(Piece::Note(line.into(), None));
                }
            }
            StreamTx::Logged(log) => log.push(line.into(), false),
        }
    }

    pub(super) fn send_final(&self, line: String) {
        match self {
            StreamTx::Direct(tx) => {
                let _ = tx.try_send(Piece::Final(line.into(), None));
            }
            StreamTx::Logged(log) => log.push(line.into(), true),
        }
    }

    /// No response will come (the call was cancelled): the stream ends.
    pub(super) fn end(self) {
        if let StreamTx::Logged(log) = self {
            log.abandon();
        }
    }
}
