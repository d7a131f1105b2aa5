//! Which job the tool thread is running, and the interrupts the server sends
//! it.
//!
//! Shared by the threads that cancel and time out jobs (reader, timers,
//! writer) and the tool thread (which begins and ends them). An interrupt is
//! tied to the job it is aimed at, so it can never reach another one:
//!
//! - it is sent only while that job is current, at most once per job, under
//!   the board's lock (so the job cannot end in between);
//! - when the tool thread ends a job that was interrupted, it first settles
//!   the interrupt (still under the lock): after that, the interrupt is
//!   neither pending nor on its way.
//!
//! So whatever interrupt the tool thread sees outside a job, or in a job the
//! board did not interrupt, came from someone else (a person's Ctrl-C).
//! Sending and settling go through callbacks, keeping the engine free of R:
//! for R, sending is SIGINT to its main thread, settling is delivering that
//! signal and clearing R's pending-interrupt flag; tests just count.

use crate::util::ids::JobId;
use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

/// Why the server interrupted a running job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// The client sent `notifications/cancelled`.
    Cancel,
    /// The job ran past this limit.
    Timeout(Duration),
    /// The client went away.
    Shutdown,
}

/// How the server reaches the thread that runs tools.
pub struct Interrupter {
    /// Makes the tool thread notice an interrupt. Called from other threads.
    pub send: Box<dyn Fn() + Send + Sync>,
    /// Called on the tool thread as a job that was interrupted ends. When it
    /// returns, no interrupt that `send` made may be pending or still on its
    /// way to the tool thread.
    pub settle: Box<dyn Fn() + Send + Sync>,
}

impl Interrupter {
    pub fn new(
        send: impl Fn() + Send + Sync + 'static,
        settle: impl Fn() + Send + Sync + 'static,
    ) -> Interrupter {
        Interrupter {
            send: Box::new(send),
            settle: Box::new(settle),
        }
    }
}

#[derive(Default)]
struct State {
    current: Option<JobId>,
    /// Jobs cancelled while they waited in the queue.
    cancelled: HashSet<JobId>,
    /// Jobs with a queue limit that R has taken from the queue: they can no
    /// longer expire (see [`Board::take`]).
    taken: HashSet<JobId>,
    /// Jobs given up while they waited in the queue, already answered.
    expired: HashSet<JobId>,
    /// The running job has been cancelled (for handlers that check).
    current_cancelled: bool,
    /// Why the running job was interrupted, if it was.
    interrupted: Option<Interrupt>,
}

pub struct Board {
    state: Mutex<State>,
    interrupter: Interrupter,
}

impl Board {
    pub fn new(interrupter: Interrupter) -> Board {
        Board {
            state: Mutex::new(State::default()),
            interrupter,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The tool thread takes `job` from the queue. False if it was cancelled
    /// meanwhile and must not run.
    pub fn begin(&self, job: JobId) -> bool {
        let mut s = self.lock();
        if s.cancelled.remove(&job) {
            return false;
        }
        s.current = Some(job);
        s.current_cancelled = false;
        s.interrupted = None;
        true
    }

    /// R takes `job`, which has a queue limit, from the queue (to run it or
    /// hand it to a worker). False if it expired first: it must not run.
    /// This and [`Board::expire_if_waiting`] take the same lock, so exactly
    /// one of them wins.
    pub fn take(&self, job: JobId) -> bool {
        let mut s = self.lock();
        if s.expired.remove(&job) {
            return false;
        }
        s.taken.insert(job);
        true
    }

    /// Gives `job` up if R has not taken it yet (true then: it will never
    /// run, and the caller answers it).
    pub fn expire_if_waiting(&self, job: JobId) -> bool {
        let mut s = self.lock();
        if s.taken.contains(&job) {
            return false;
        }
        s.expired.insert(job);
        true
    }

    /// The tool thread is done with `job`. Called on the tool thread: if the
    /// job was interrupted, the interrupt is settled here, under the lock, so
    /// none is left over for whatever the tool thread runs next.
    pub fn end(&self, job: JobId) {
        let mut s = self.lock();
        if s.current == Some(job) {
            s.current = None;
            s.current_cancelled = false;
            if s.interrupted.take().is_some() {
                (self.interrupter.settle)();
            }
        }
        s.cancelled.remove(&job);
    }

    /// Forgets `job` for good, once the engine has recorded its end (so no
    /// cancel for it can come any more): a cancel that raced the end of the
    /// job found it no longer running and marked it as if queued.
    pub fn forget(&self, job: JobId) {
        let mut s = self.lock();
        s.cancelled.remove(&job);
        s.taken.remove(&job);
        s.expired.remove(&job);
    }

    /// Whether the client cancelled `job` (running or queued).
    pub fn is_cancelled(&self, job: JobId) -> bool {
        let s = self.lock();
        (s.current == Some(job) && s.current_cancelled) || s.cancelled.contains(&job)
    }

    pub fn current(&self) -> Option<JobId> {
        self.lock().current
    }

    /// Cancels `job`: interrupts it if it is running, otherwise marks it so
    /// it never starts.
    pub fn cancel(&self, job: JobId) {
        let mut s = self.lock();
        if s.current == Some(job) {
            s.current_cancelled = true;
            self.fire(&mut s, Interrupt::Cancel);
        } else {
            s.cancelled.insert(job);
        }
    }

    /// Interrupts `job` if it is the one running (true then, also when it
    /// had been interrupted already).
    pub fn interrupt_if_current(&self, job: JobId, why: Interrupt) -> bool {
        let mut s = self.lock();
        if s.current == Some(job) {
            self.fire(&mut s, why);
            true
        } else {
            false
        }
    }

    /// Interrupts whatever job is running.
    pub fn interrupt_current(&self, why: Interrupt) {
        let mut s = self.lock();
        if s.current.is_some() {
            self.fire(&mut s, why);
        }
    }

    /// Interrupts the current job, once: the first reason stands, and one
    /// interrupt is enough to stop it.
    fn fire(&self, s: &mut State, why: Interrupt) {
        if s.interrupted.is_none() {
            s.interrupted = Some(why);
            (self.interrupter.send)();
        }
    }

    /// The running job and why the server interrupted it; `None` if no job
    /// runs or the server did not interrupt it (so an interrupt the tool
    /// thread sees came from elsewhere).
    pub fn interrupted(&self) -> Option<(JobId, Interrupt)> {
        let s = self.lock();
        Some((s.current?, s.interrupted?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    struct Counts {
        sent: Arc<AtomicUsize>,
        settled: Arc<AtomicUsize>,
    }

    impl Counts {
        fn sent(&self) -> usize {
            self.sent.load(Ordering::SeqCst)
        }
        fn settled(&self) -> usize {
            self.settled.load(Ordering::SeqCst)
        }
    }

    fn board() -> (Board, Counts) {
        let counts = Counts {
            sent: Arc::new(AtomicUsize::new(0)),
            settled: Arc::new(AtomicUsize::new(0)),
        };
        let (sent, settled) = (counts.sent.clone(), counts.settled.clone());
        let board = Board::new(Interrupter::new(
            move || {
                sent.fetch_add(1, Ordering::SeqCst);
            },
            move || {
                settled.fetch_add(1, Ordering::SeqCst);
            },
        ));
        (board, counts)
    }

    #[test]
    fn a_job_either_expires_in_the_queue_or_is_taken_never_both() {
        let (b, _) = board();
        assert!(b.expire_if_waiting(3));
        assert!(!b.take(3));
        assert!(b.take(4));
        assert!(!b.expire_if_waiting(4));
        b.forget(3);
        b.forget(4);
        // Forgotten, the ids leave no mark behind.
        assert!(b.take(3));
        b.forget(3);
        assert!(b.expire_if_waiting(4));
    }

    #[test]
    fn a_queued_job_cancelled_never_begins() {
        let (b, counts) = board();
        b.cancel(7);
        assert!(!b.begin(7));
        assert_eq!(counts.sent(), 0);
        assert!(b.begin(8));
        assert_eq!(b.current(), Some(8));
    }

    #[test]
    fn a_running_job_cancelled_is_interrupted_with_a_reason() {
        let (b, counts) = board();
        assert!(b.begin(1));
        b.cancel(1);
        assert_eq!(counts.sent(), 1);
        assert!(b.is_cancelled(1));
        assert_eq!(b.interrupted(), Some((1, Interrupt::Cancel)));
        b.end(1);
        assert!(!b.is_cancelled(1));
        assert_eq!(counts.settled(), 1);
    }

    #[test]
    fn timeouts_hit_only_the_job_they_were_set_for() {
        let (b, counts) = board();
        assert!(b.begin(1));
        b.end(1);
        assert!(b.begin(2));
        let limit = Duration::from_secs(1);
        assert!(!b.interrupt_if_current(1, Interrupt::Timeout(limit)));
        assert_eq!(counts.sent(), 0);
        assert!(b.interrupt_if_current(2, Interrupt::Timeout(limit)));
        assert_eq!(b.interrupted(), Some((2, Interrupt::Timeout(limit))));
    }

    #[test]
    fn a_job_is_interrupted_once_and_the_first_reason_stands() {
        let (b, counts) = board();
        assert!(b.begin(4));
        let limit = Duration::from_millis(50);
        assert!(b.interrupt_if_current(4, Interrupt::Timeout(limit)));
        b.cancel(4);
        b.interrupt_current(Interrupt::Shutdown);
        assert_eq!(counts.sent(), 1);
        assert_eq!(b.interrupted(), Some((4, Interrupt::Timeout(limit))));
        assert!(b.is_cancelled(4), "the cancel is still recorded");
    }

    #[test]
    fn an_interrupt_is_settled_as_its_job_ends_and_never_outlives_it() {
        let (b, counts) = board();
        assert!(b.begin(5));
        b.cancel(5);
        b.end(5);
        assert_eq!(counts.settled(), 1, "settled by the end of its job");
        // The interrupt the job ended with is nobody's reason any more: an
        // interrupt seen now, or in the next job, is someone else's.
        assert_eq!(b.interrupted(), None);
        assert!(b.begin(6));
        assert_eq!(b.interrupted(), None);
        // Late news for the ended job interrupts nothing.
        b.cancel(5);
        assert!(!b.interrupt_if_current(5, Interrupt::Timeout(Duration::from_secs(1))));
        assert_eq!(counts.sent(), 1);
        // The next job can be interrupted in its turn.
        b.cancel(6);
        assert_eq!(counts.sent(), 2);
        assert_eq!(b.interrupted(), Some((6, Interrupt::Cancel)));
    }

    #[test]
    fn a_job_never_interrupted_ends_without_settling() {
        let (b, counts) = board();
        assert!(b.begin(3));
        assert_eq!(b.interrupted(), None);
        b.end(3);
        b.interrupt_current(Interrupt::Shutdown);
        assert_eq!((counts.sent(), counts.settled()), (0, 0));
    }

    #[test]
    fn ending_another_job_leaves_the_current_one_alone() {
        let (b, counts) = board();
        assert!(b.begin(9));
        b.cancel(9);
        b.end(8);
        assert_eq!(b.interrupted(), Some((9, Interrupt::Cancel)));
        assert_eq!(counts.settled(), 0);
    }

    #[test]
    fn a_cancel_racing_the_end_of_a_job_is_forgotten_with_it() {
        let (b, counts) = board();
        assert!(b.begin(4));
        b.end(4);
        // The cancel arrives after R ended the job but before the engine
        // recorded its end: it looks like a cancel of a queued job.
        b.cancel(4);
        assert_eq!(counts.sent(), 0);
        assert!(b.is_cancelled(4));
        b.forget(4);
        assert!(!b.is_cancelled(4));
    }
}
