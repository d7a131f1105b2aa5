//! Which job the tool thread is running, and why the server interrupted it.
//!
//! Shared by the threads that cancel and time out jobs (reader, timers) and the tool
//! thread (which starts and ends them). Interrupting goes through a callback
//! so the protocol engine stays free of R: the R bindings send SIGINT to R's
//! main thread, tests just count.

use crate::engine::JobId;
use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

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

/// An interrupt whose job ended before R noticed it stays recognisable for
/// this long, so it is not mistaken for a person's Ctrl-C.
const STALE_AFTER: Duration = Duration::from_secs(2);

#[derive(Default)]
struct State {
    current: Option<JobId>,
    /// Jobs cancelled while they waited in the queue.
    cancelled: HashSet<JobId>,
    /// The running job has been cancelled (for handlers that check).
    current_cancelled: bool,
    reason: Option<(JobId, Interrupt, Instant)>,
}

pub struct Board {
    state: Mutex<State>,
    interrupt: Box<dyn Fn() + Send + Sync>,
}

impl Board {
    pub fn new(interrupt: Box<dyn Fn() + Send + Sync>) -> Board {
        Board {
            state: Mutex::new(State::default()),
            interrupt,
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
        true
    }

    /// The tool thread is done with `job`.
    pub fn end(&self, job: JobId) {
        let mut s = self.lock();
        if s.current == Some(job) {
            s.current = None;
            s.current_cancelled = false;
        }
        s.cancelled.remove(&job);
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
            self.fire(&mut s, job, Interrupt::Cancel);
        } else {
            s.cancelled.insert(job);
        }
    }

    /// Interrupts `job` if it is the one running. The lock is held while the
    /// interrupt is sent, so the job cannot end and another begin in between.
    pub fn interrupt_if_current(&self, job: JobId, why: Interrupt) -> bool {
        let mut s = self.lock();
        if s.current == Some(job) {
            self.fire(&mut s, job, why);
            true
        } else {
            false
        }
    }

    /// Interrupts whatever job is running.
    pub fn interrupt_current(&self, why: Interrupt) {
        let mut s = self.lock();
        if let Some(job) = s.current {
            self.fire(&mut s, job, why);
        }
    }

    fn fire(&self, s: &mut State, job: JobId, why: Interrupt) {
        s.reason = Some((job, why, Instant::now()));
        (self.interrupt)();
    }

    /// Why the server interrupted, consumed by the call. Reasons for a job
    /// that has since ended count only briefly (see [`STALE_AFTER`]).
    pub fn take_reason(&self) -> Option<(JobId, Interrupt)> {
        let mut s = self.lock();
        let (job, why, at) = s.reason.take()?;
        let fresh = s.current == Some(job) || at.elapsed() < STALE_AFTER;
        fresh.then_some((job, why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn board() -> (Board, Arc<AtomicUsize>) {
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        let board = Board::new(Box::new(move || {
            c.fetch_add(1, Ordering::SeqCst);
        }));
        (board, count)
    }

    #[test]
    fn a_queued_job_cancelled_never_begins() {
        let (b, fired) = board();
        b.cancel(7);
        assert!(!b.begin(7));
        assert_eq!(fired.load(Ordering::SeqCst), 0);
        assert!(b.begin(8));
        assert_eq!(b.current(), Some(8));
    }

    #[test]
    fn a_running_job_cancelled_is_interrupted_with_a_reason() {
        let (b, fired) = board();
        assert!(b.begin(1));
        b.cancel(1);
        assert_eq!(fired.load(Ordering::SeqCst), 1);
        assert!(b.is_cancelled(1));
        assert_eq!(b.take_reason(), Some((1, Interrupt::Cancel)));
        assert_eq!(b.take_reason(), None);
        b.end(1);
        assert!(!b.is_cancelled(1));
    }

    #[test]
    fn timeouts_hit_only_the_job_they_were_set_for() {
        let (b, fired) = board();
        assert!(b.begin(1));
        b.end(1);
        assert!(b.begin(2));
        let limit = Duration::from_secs(1);
        assert!(!b.interrupt_if_current(1, Interrupt::Timeout(limit)));
        assert_eq!(fired.load(Ordering::SeqCst), 0);
        assert!(b.interrupt_if_current(2, Interrupt::Timeout(limit)));
        assert_eq!(b.take_reason(), Some((2, Interrupt::Timeout(limit))));
    }

    #[test]
    fn no_reason_means_someone_else_interrupted() {
        let (b, _) = board();
        assert!(b.begin(3));
        assert_eq!(b.take_reason(), None);
        b.interrupt_current(Interrupt::Shutdown);
        b.end(3);
        // The job ended before R saw the interrupt: still recognised as ours.
        assert_eq!(b.take_reason(), Some((3, Interrupt::Shutdown)));
    }
}
