//! Back-pressure: what the server holds for a client is bounded.
//!
//! Stdio has no flow control of its own beyond the pipe buffers, so the
//! server makes its own: the reader stops taking input while too much
//! output waits for the client to read it, or too many tool calls wait for
//! R, and resumes when they drain. A client that writes faster than the
//! server can answer then blocks in its own `write`, as with any pipe, and
//! a client that never reads cannot grow the server's memory. The R thread
//! likewise starts no new call while the output is over its bound.
//!
//! One exception keeps the server from wedging itself: while a tool waits
//! for the client's answer to an input request, the reader goes on reading
//! despite queued calls, or the answer could never arrive. Calls over the
//! bound are then refused by the engine with an error naming the limit.

use crate::engine::Limits;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// The parts of a streamed line count as output waiting for the client.
impl crate::protocol::streamed::Meter for Backpressure {
    fn queued(&self, bytes: usize) {
        self.output_queued(bytes);
    }
    fn released(&self, bytes: usize) {
        self.output_written(bytes);
    }
}

/// Calls still queued when a reader stopped by `max_queued_calls` reads
/// again: a quarter of the bound below it. Resuming at one below would
/// wake the reader after every call R finishes, to read one line and
/// stop again (a wake-up paid on R's thread each time); this way it
/// reads a quarter of the queue's worth in one go, and R still has
/// three quarters of it to work through meanwhile.
fn calls_to_resume(limits: &Limits) -> usize {
    limits
        .max_queued_calls
        .saturating_sub((limits.max_queued_calls / 4).max(1))
}

#[derive(Default)]
struct Load {
    output_bytes: usize,
    calls: usize,
    /// A tool waits for the client's answer to an input request.
    awaiting_input: bool,
    /// While the reader waits: the queued calls at or under which it reads
    /// again (see [`calls_to_resume`]; one under the bound when
    /// unread output, not calls, stopped it).
    resume_calls: usize,
    /// Someone is waiting in [`Backpressure::wait_for_input_room`] or
    /// [`Backpressure::wait_for_output_room`], so easing must wake them.
    waiters: usize,
    /// The server is stopping: nobody waits any longer.
    closed: bool,
}

impl Load {
    fn output_full(&self, limits: &Limits) -> bool {
        self.output_bytes >= limits.max_queued_output
    }

    fn input_full(&self, limits: &Limits) -> bool {
        self.output_full(limits) || (self.calls >= limits.max_queued_calls && !self.awaiting_input)
    }

    /// Whether a reader that `input_full` stopped may read again.
    fn input_resumes(&self, limits: &Limits) -> bool {
        !self.output_full(limits) && (self.calls <= self.resume_calls || self.awaiting_input)
    }
}

/// What is queued for one client, and a place to wait until it drains.
pub struct Backpressure {
    limits: Limits,
    load: Mutex<Load>,
    eased: Condvar,
}

impl Backpressure {
    pub fn new(limits: Limits) -> Backpressure {
        Backpressure {
            limits,
            load: Mutex::new(Load::default()),
            eased: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Load> {
        self.load.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `change` and wakes the waiters if it made room.
    fn update(&self, change: impl FnOnce(&mut Load)) {
        let mut load = self.lock();
        let before = (
            load.input_resumes(&self.limits),
            load.output_full(&self.limits),
        );
        change(&mut load);
        let after = (
            load.input_resumes(&self.limits),
            load.output_full(&self.limits),
        );
        let eased = (!before.0 && after.0) || (before.1 && !after.1);
        if eased && load.waiters > 0 {
            self.eased.notify_all();
        }
    }

    /// A line of `bytes` was queued for the writer.
    pub fn output_queued(&self, bytes: usize) {
        self.lock().output_bytes += bytes;
    }

    /// The writer has written a line of `bytes`.
    pub fn output_written(&self, bytes: usize) {
        self.update(|load| load.output_bytes = load.output_bytes.saturating_sub(bytes));
    }

    /// Whether the output waiting for the client is at its bound (optional
    /// output, such as log notifications, is then dropped).
    pub fn output_full(&self) -> bool {
        self.lock().output_full(&self.limits)
    }

    /// How many tool calls are accepted and unanswered, and whether one of
    /// them waits for the client's answer to an input request.
    pub fn set_calls(&self, calls: usize, awaiting_input: bool) {
        self.update(|load| {
            load.calls = calls;
            load.awaiting_input = awaiting_input;
        });
    }

    /// The reader's wait before it takes the next message: returns at once
    /// while there is room for what it may bring; once there is not, when
    /// the queued calls are down to [`calls_to_resume`] and the
    /// output under its bound, or the server is stopping, or `give_up`
    /// (asked every `tick` meanwhile) says so.
    pub fn wait_for_input_room(&self, tick: Duration, mut give_up: impl FnMut() -> bool) {
        let mut load = self.lock();
        if !load.input_full(&self.limits) || load.closed {
            return;
        }
        load.resume_calls = if load.calls >= self.limits.max_queued_calls {
            calls_to_resume(&self.limits)
        } else {
            self.limits.max_queued_calls.saturating_sub(1)
        };
        load.waiters += 1;
        while !load.input_resumes(&self.limits) && !load.closed {
            let (next, waited) = self
                .eased
                .wait_timeout(load, tick)
                .unwrap_or_else(|p| p.into_inner());
            load = next;
            if waited.timed_out() && give_up() {
                break;
            }
        }
        load.waiters -= 1;
    }

    /// The R thread's wait before it starts another call: true once the
    /// output is under its bound (or the server is stopping), false if
    /// `timeout` passed first (so the caller can check for interrupts).
    pub fn wait_for_output_room(&self, timeout: Duration) -> bool {
        let mut load = self.lock();
        if !load.output_full(&self.limits) || load.closed {
            return true;
        }
        load.waiters += 1;
        let (mut load, _) = self
            .eased
            .wait_timeout_while(load, timeout, |l| l.output_full(&self.limits) && !l.closed)
            .unwrap_or_else(|p| p.into_inner());
        load.waiters -= 1;
        !load.output_full(&self.limits) || load.closed
    }

    /// The server is stopping: wake every waiter, and wait no more.
    pub fn close(&self) {
        let mut load = self.lock();
        load.closed = true;
        self.eased.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::sync::Arc;

    fn small() -> Limits {
        Limits {
            max_queued_output: 100,
            max_queued_calls: 2,
            max_subscriptions: 1,
        }
    }

    /// Runs `wait_for_input_room` on a thread; the receiver hears when it returns.
    fn reader(bp: &Arc<Backpressure>) -> mpsc::Receiver<()> {
        let (tx, rx) = mpsc::channel();
        let bp = bp.clone();
        std::thread::spawn(move || {
            bp.wait_for_input_room(LONG, || false);
            let _ = tx.send(());
        });
        rx
    }

    const LONG: Duration = Duration::from_secs(10);
    const SHORT: Duration = Duration::from_millis(100);

    #[test]
    fn the_reader_waits_while_output_is_unread_and_resumes_when_it_drains() {
        let bp = Arc::new(Backpressure::new(small()));
        bp.output_queued(60);
        reader(&bp)
            .recv_timeout(LONG)
            .expect("room under the bound");
        bp.output_queued(60);
        assert!(bp.output_full());
        let waiting = reader(&bp);
        assert!(waiting.recv_timeout(SHORT).is_err(), "over the bound");
        bp.output_written(60);
        waiting.recv_timeout(LONG).expect("woken once it drained");
        assert!(!bp.output_full());
    }

    #[test]
    fn queued_calls_stop_the_reader_unless_a_tool_waits_for_input() {
        let bp = Arc::new(Backpressure::new(small()));
        bp.set_calls(2, false);
        let waiting = reader(&bp);
        assert!(waiting.recv_timeout(SHORT).is_err());
        // The answer a tool waits for is behind: reading must go on.
        bp.set_calls(2, true);
        waiting.recv_timeout(LONG).expect("reads the answer");
        bp.set_calls(2, false);
        let waiting = reader(&bp);
        assert!(waiting.recv_timeout(SHORT).is_err());
        bp.set_calls(1, false);
        waiting.recv_timeout(LONG).expect("a call ended");
    }

    #[test]
    fn a_reader_stopped_by_queued_calls_resumes_a_quarter_below_the_bound() {
        let limits = Limits {
            max_queued_calls: 8,
            ..small()
        };
        let bp = Arc::new(Backpressure::new(limits));
        bp.set_calls(7, false);
        reader(&bp)
            .recv_timeout(LONG)
            .expect("reads under the bound");
        bp.set_calls(8, false);
        let waiting = reader(&bp);
        assert!(waiting.recv_timeout(SHORT).is_err(), "at the bound");
        bp.set_calls(7, false);
        assert!(waiting.recv_timeout(SHORT).is_err(), "one below: not yet");
        bp.set_calls(6, false);
        waiting
            .recv_timeout(LONG)
            .expect("a quarter below: reads again");
    }

    #[test]
    fn a_reader_stopped_by_unread_output_resumes_once_it_drains() {
        let limits = Limits {
            max_queued_calls: 8,
            ..small()
        };
        let bp = Arc::new(Backpressure::new(limits));
        bp.set_calls(7, false);
        bp.output_queued(100);
        let waiting = reader(&bp);
        assert!(waiting.recv_timeout(SHORT).is_err(), "output at its bound");
        bp.output_written(100);
        waiting
            .recv_timeout(LONG)
            .expect("calls were under their bound all along");
    }

    #[test]
    fn a_waiting_reader_gives_up_when_asked() {
        let bp = Arc::new(Backpressure::new(small()));
        bp.output_queued(500);
        let (tx, rx) = mpsc::channel();
        let (bp2, asked) = (bp.clone(), Arc::new(std::sync::atomic::AtomicUsize::new(0)));
        let counted = asked.clone();
        std::thread::spawn(move || {
            bp2.wait_for_input_room(Duration::from_millis(10), || {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= 2
            });
            let _ = tx.send(());
        });
        rx.recv_timeout(LONG).expect("gave up");
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 3);
        assert!(bp.output_full(), "still full: it gave up, nothing eased");
    }

    #[test]
    fn closing_releases_every_waiter() {
        let bp = Arc::new(Backpressure::new(small()));
        bp.output_queued(500);
        let waiting = reader(&bp);
        assert!(!bp.wait_for_output_room(SHORT));
        bp.close();
        waiting.recv_timeout(LONG).expect("released");
        assert!(bp.wait_for_output_room(SHORT));
    }
}
