//! The open connections, and the cap on them that no client can use to
//! lock others out.
//!
//! A connection counts against [`Options::max_connections`] while it is
//! open. A connection *waits* while it waits for a request head (just
//! opened, or kept alive after its last answer) or for the rest of a
//! request body; otherwise it is busy answering. A waiting connection
//! costs the server a socket and nothing else, and a client that opens
//! hundreds of them and sends nothing, or sends bodies a byte at a time,
//! must not make the next client wait for their deadlines. So when a new
//! connection finds the cap reached, the connection that has been waiting
//! the longest is closed to make room, provided it has waited at least
//! [`EVICTABLE_AFTER`]: gracefully if it waits for a head (should the head
//! arrive meanwhile, its request is answered first), with 408 if it waits
//! for a body. Only when no connection has waited that long does the new
//! one wait (in the kernel's queue) for room.
//!
//! The grace keeps a new client's own connection safe in the moments
//! between its connect and its head, which would otherwise make it the
//! first to go when many connections come at once.
//!
//! Per-peer caps were not chosen: on the loopback address every client is
//! 127.0.0.1, and behind a reverse proxy every client is the proxy, so an
//! address says nothing about who is hoarding. Closing the connection that
//! has waited longest works whatever the addresses.
//!
//! The same registry stops the server gracefully (see [`Connections::close_all`]).
//!
//! [`Options::max_connections`]: crate::transport::http::Options::max_connections

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::collections::{BTreeMap, HashMap};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// How long a connection must have waited (for a head, or for a body)
/// before it may be closed to make room: a working client sends its head
/// and a small body within a round trip of connecting (milliseconds; some
/// hundreds on the slowest links), so half a second is generous.
pub const EVICTABLE_AFTER: Duration = Duration::from_millis(500);

/// The cap in effect for `configured`: at most half the process's limit on
/// open files (`ulimit -n`), so that connections never take the
/// descriptors the rest of R needs, and accepting never fails for want of
/// one before the cap is reached (it would then make no room: macOS allows
/// 256 files by default, fewer than the default cap of 512).
pub fn cap(configured: usize) -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0
        || limit.rlim_cur == libc::RLIM_INFINITY
    {
        return configured;
    }
    configured.min((limit.rlim_cur / 2).max(1) as usize)
}

use crate::util::threads::lock;

/// Every open connection, by number.
pub struct Connections {
    inner: Mutex<Inner>,
    max: usize,
    grace: Duration,
    /// Rung when a connection closes or starts waiting (room may be made).
    room: Notify,
    /// Rung when the last connection closes.
    empty: Notify,
}

#[derive(Default)]
struct Inner {
    open: HashMap<u64, Conn>,
    /// The waiting connections, by the order they began to wait in (so the
    /// first has waited longest): the connection, since when, and whether
    /// for a body.
    waiting: BTreeMap<u64, Waiting>,
    next_conn: u64,
    next_turn: u64,
}

#[derive(Clone, Copy)]
struct Waiting {
    conn: u64,
    since: Instant,
    body: bool,
}

struct Conn {
    /// Requests being answered on it (HTTP/1.1 answers one at a time).
    busy: usize,
    /// Its key in `waiting`, while it waits.
    turn: Option<u64>,
    /// Tells its task to close it once its current answer is sent.
    close: Arc<Notify>,
    /// Tells the reader of its request body to give up.
    abort_body: Arc<Notify>,
}

impl Inner {
    /// Connection `id` starts to wait, for a head or (`body`) a body.
    fn start_waiting(&mut self, id: u64, body: bool) -> Option<u64> {
        let conn = self.open.get_mut(&id)?;
        let turn = self.next_turn;
        self.next_turn += 1;
        if let Some(old) = conn.turn.replace(turn) {
            self.waiting.remove(&old);
        }
        let since = Instant::now();
        self.waiting.insert(
            turn,
            Waiting {
                conn: id,
                since,
                body,
            },
        );
        Some(turn)
    }

    fn stop_waiting(&mut self, id: u64) {
        if let Some(turn) = self.open.get_mut(&id).and_then(|c| c.turn.take()) {
            self.waiting.remove(&turn);
        }
    }

    /// Closes the connection that has waited longest, if for `grace` at
    /// least: it no longer counts. Otherwise says when it will have (if any
    /// connection waits).
    fn evict(&mut self, grace: Duration) -> Result<(), Option<Instant>> {
        let Some((&turn, &waiting)) = self.waiting.first_key_value() else {
            return Err(None);
        };
        if waiting.since.elapsed() < grace {
            return Err(Some(waiting.since + grace));
        }
        self.waiting.remove(&turn);
        if let Some(conn) = self.open.remove(&waiting.conn) {
            if waiting.body {
                conn.abort_body.notify_one();
            }
            conn.close.notify_one();
        }
        Ok(())
    }
}

/// Whether a new connection may be served now.
pub enum Admission {
    Admitted(Connection),
    /// No room, and none to make yet: wait for [`Connections::room`], or
    /// until the time given (when a connection will have waited long
    /// enough), then ask again.
    Full(Option<Instant>),
}

impl Connections {
    pub fn new(max: usize) -> Arc<Connections> {
        Connections::with_grace(max, EVICTABLE_AFTER)
    }

    fn with_grace(max: usize, grace: Duration) -> Arc<Connections> {
        Arc::new(Connections {
            inner: Mutex::new(Inner::default()),
            max: max.max(1),
            grace,
            room: Notify::new(),
            empty: Notify::new(),
        })
    }

    /// Takes a place for a newly accepted connection, making room if the
    /// cap is reached (see the module docs). The new one waits for its head.
    pub fn admit(self: &Arc<Self>) -> Admission {
        let mut inner = lock(&self.inner);
        if inner.open.len() >= self.max {
            if let Err(room_at) = inner.evict(self.grace) {
                return Admission::Full(room_at);
            }
        }
        let id = inner.next_conn;
        inner.next_conn += 1;
        let close = Arc::new(Notify::new());
        let abort_body = Arc::new(Notify::new());
        inner.open.insert(
            id,
            Conn {
                busy: 0,
                turn: None,
                close: close.clone(),
                abort_body: abort_body.clone(),
            },
        );
        inner.start_waiting(id, false);
        Admission::Admitted(Connection {
            id,
            registry: self.clone(),
            close,
            abort_body,
        })
    }

    /// Resolves when a connection has closed or started waiting since the
    /// last time (so [`Connections::admit`] may succeed).
    pub async fn room(&self) {
        self.room.notified().await
    }

    /// How many connections count against the cap.
    pub fn open(&self) -> usize {
        lock(&self.inner).open.len()
    }

    /// Asks every connection to close: an idle one closes at once, a busy
    /// one once its answer is sent (its keep-alive is off).
    pub fn close_all(&self) {
        let inner = lock(&self.inner);
        for conn in inner.open.values() {
            conn.close.notify_one();
        }
    }

    /// Resolves once no connection is open.
    pub async fn all_closed(&self) {
        loop {
            let notified = self.empty.notified();
            if lock(&self.inner).open.is_empty() {
                return;
            }
            notified.await;
        }
    }
}

/// One connection's place among the open ones; it leaves when dropped.
pub struct Connection {
    id: u64,
    registry: Arc<Connections>,
    close: Arc<Notify>,
    abort_body: Arc<Notify>,
}

impl Connection {
    /// Resolves when the server wants this connection closed.
    pub async fn closing(&self) {
        self.close.notified().await
    }

    /// A request head arrived: the connection is busy until the returned
    /// guard (carried by the response body) is dropped.
    pub fn busy(&self) -> Busy {
        let mut inner = lock(&self.registry.inner);
        inner.stop_waiting(self.id);
        if let Some(conn) = inner.open.get_mut(&self.id) {
            conn.busy += 1;
        }
        Busy {
            id: self.id,
            registry: self.registry.clone(),
        }
    }

    /// What the handler of its request needs to say when it reads the
    /// body (carried in the request's extensions).
    pub fn body_watch(&self) -> BodyWatch {
        BodyWatch {
            id: self.id,
            registry: self.registry.clone(),
            abort: self.abort_body.clone(),
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        let mut inner = lock(&self.registry.inner);
        inner.stop_waiting(self.id);
        inner.open.remove(&self.id);
        let empty = inner.open.is_empty();
        drop(inner);
        self.registry.room.notify_one();
        if empty {
            self.registry.empty.notify_waiters();
        }
    }
}

/// Lets the handler of a request mark the time its body is read (see
/// [`BodyWatch::receiving`]).
#[derive(Clone)]
pub struct BodyWatch {
    id: u64,
    registry: Arc<Connections>,
    abort: Arc<Notify>,
}

impl BodyWatch {
    /// The body is being read from now until the guard is dropped; the
    /// connection waits meanwhile (see the module docs).
    pub fn receiving(&self) -> Receiving {
        let turn = lock(&self.registry.inner).start_waiting(self.id, true);
        if turn.is_some() {
            self.registry.room.notify_one();
        }
        Receiving {
            id: self.id,
            turn,
            registry: self.registry.clone(),
            abort: self.abort.clone(),
        }
    }
}

/// A body being read (see [`BodyWatch::receiving`]).
pub struct Receiving {
    id: u64,
    turn: Option<u64>,
    registry: Arc<Connections>,
    abort: Arc<Notify>,
}

impl Receiving {
    /// Resolves if the server gives up on the body to make room.
    pub async fn given_up(&self) {
        self.abort.notified().await
    }
}

impl Drop for Receiving {
    fn drop(&mut self) {
        let mut inner = lock(&self.registry.inner);
        let current = inner.open.get(&self.id).and_then(|c| c.turn);
        if current.is_some() && current == self.turn {
            inner.stop_waiting(self.id);
        }
    }
}

/// A request being answered (see [`Connection::busy`]).
pub struct Busy {
    id: u64,
    registry: Arc<Connections>,
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut inner = lock(&self.registry.inner);
        let idle = match inner.open.get_mut(&self.id) {
            Some(conn) => {
                conn.busy = conn.busy.saturating_sub(1);
                conn.busy == 0
            }
            None => false,
        };
        if idle {
            inner.start_waiting(self.id, false);
            drop(inner);
            self.registry.room.notify_one();
        }
    }
}

/// A response body that keeps its connection busy until it is sent (or
/// dropped, when the client goes away).
pub struct Tracked<B> {
    body: B,
    _busy: Busy,
}

impl<B> Tracked<B> {
    pub fn new(body: B, busy: Busy) -> Tracked<B> {
        Tracked { body, _busy: busy }
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for Tracked<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admitted(c: &Arc<Connections>) -> Connection {
        match c.admit() {
            Admission::Admitted(conn) => conn,
            Admission::Full(_) => panic!("no room"),
        }
    }

    fn is_open(c: &Connections, conn: &Connection) -> bool {
        lock(&c.inner).open.contains_key(&conn.id)
    }

    #[test]
    fn the_connection_waiting_longest_makes_room_and_busy_ones_never_do() {
        let c = Connections::with_grace(3, Duration::ZERO);
        let first = admitted(&c);
        let second = admitted(&c);
        let third = admitted(&c);
        // The first gets a request and finishes it: it waits again, but
        // since later than the second and third.
        drop(first.busy());
        let _busy_third = third.busy();
        let fourth = admitted(&c);
        assert_eq!(c.open(), 3);
        assert!(is_open(&c, &first));
        assert!(!is_open(&c, &second), "waited longest");
        let _fifth = admitted(&c);
        assert!(!is_open(&c, &first));
        // A body being read waits too, since it began.
        let _busy_fourth = fourth.busy();
        let receiving = fourth.body_watch().receiving();
        let _sixth = admitted(&c);
        assert!(is_open(&c, &third), "busy");
        assert!(
            is_open(&c, &fourth),
            "its body began after the fifth waited"
        );
        let _seventh = admitted(&c);
        assert!(!is_open(&c, &fourth));
        // Its reader is told to give up (the permit waits for it).
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(receiving.given_up());
        assert_eq!(c.open(), 3);
    }

    #[test]
    fn nothing_makes_room_before_it_has_waited_its_grace() {
        let c = Connections::with_grace(2, Duration::from_secs(60));
        let a = admitted(&c);
        let _b = admitted(&c);
        match c.admit() {
            Admission::Full(Some(at)) => assert!(at > Instant::now() + Duration::from_secs(59)),
            _ => panic!("room made too soon"),
        }
        // As if a began to wait a minute ago.
        let turn = lock(&c.inner).open[&a.id].turn.unwrap();
        let long_ago = Instant::now() - Duration::from_secs(61);
        lock(&c.inner).waiting.get_mut(&turn).unwrap().since = long_ago;
        let _c = admitted(&c);
        assert!(!is_open(&c, &a));
    }

    #[test]
    fn the_cap_leaves_half_the_open_files_to_the_rest_of_the_process() {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        assert_eq!(
            unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
            0
        );
        if limit.rlim_cur == libc::RLIM_INFINITY {
            assert_eq!(cap(1 << 40), 1 << 40);
            return;
        }
        let half = (limit.rlim_cur / 2) as usize;
        assert_eq!(cap(half + 10), half);
        assert_eq!(cap(half.saturating_sub(10)), half.saturating_sub(10));
    }

    #[test]
    fn a_full_registry_of_busy_connections_admits_none_until_one_ends() {
        let c = Connections::with_grace(2, Duration::ZERO);
        let a = admitted(&c);
        let b = admitted(&c);
        let busy_a = a.busy();
        let _busy_b = b.busy();
        assert!(matches!(c.admit(), Admission::Full(_)));
        drop(busy_a);
        let _c = admitted(&c);
        assert!(!is_open(&c, &a));
        drop(b);
        assert_eq!(c.open(), 1);
    }
}
