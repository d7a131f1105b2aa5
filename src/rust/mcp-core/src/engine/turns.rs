//! Whose turn R's main thread gives next: a client's call, or a check of a
//! bearer token by the server's R function (HTTP, see
//! [`crate::transport::http::tokens`]).
//!
//! Both run on the one R thread, and a check of a token the server has not
//! seen can come from anyone: left in one queue with the calls, made-up
//! tokens would hold up every authenticated caller. So calls go first, and
//! checks get R only while no call waits, or out of a credit that running
//! calls earn: while calls keep R busy, checks get at most
//! [`CHECK_SHARE`] of its time (so a new user is still let in), and never
//! more than [`MAX_CREDIT`] at a stretch. A check that holds R while calls
//! wait for longer than [`CHECK_SLICE`] (or its credit) is stopped (see
//! [`Turns::allowance`]); its client is told to retry.

use crate::engine::{Job, JobId};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The share of R's time that checks get while calls wait.
pub const CHECK_SHARE: f64 = 0.2;

/// The most credit checks save up (and the most debt they run up): how
/// long checks may hold R at a stretch while calls wait, after calls ran
/// for a while.
pub const MAX_CREDIT: Duration = Duration::from_secs(1);

/// How long a check may hold R while calls wait, whatever its credit: a
/// token check is a lookup, which takes milliseconds; one that takes
/// longer than this while calls wait is stopped, and its client retries.
pub const CHECK_SLICE: Duration = Duration::from_millis(250);

/// The jobs waiting for R, and the credit of checks.
#[derive(Default)]
pub struct Turns {
    calls: VecDeque<Box<Job>>,
    checks: VecDeque<Box<Job>>,
    /// Seconds of R's time checks may take ahead of waiting calls; below
    /// zero, what they took beyond their share.
    credit: f64,
    /// The job handed out last (its id, whether a check) and when, until
    /// it ends or R is back for the next.
    running: Option<(JobId, bool, Instant)>,
}

impl Turns {
    pub fn push(&mut self, job: Box<Job>) {
        if job.token_check {
            self.checks.push_back(job);
        } else {
            self.calls.push_back(job);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.calls.is_empty() && self.checks.is_empty()
    }

    /// Whether a call waits for R.
    pub fn calls_waiting(&self) -> bool {
        !self.calls.is_empty()
    }

    /// R is back (at `now`) from the job handed out last: its time is
    /// counted, a call's earning checks credit, a check's spending it.
    pub fn returned(&mut self, now: Instant) {
        let Some((_, check, since)) = self.running.take() else {
            return;
        };
        let took = now.saturating_duration_since(since).as_secs_f64();
        let max = MAX_CREDIT.as_secs_f64();
        self.credit = if check {
            (self.credit - took).max(-max)
        } else {
            (self.credit + took * CHECK_SHARE / (1.0 - CHECK_SHARE)).min(max)
        };
    }

    /// Job `job` ended at `now`: if it is the one handed out last, its time
    /// is counted then (R may do other things before it is back: serving
    /// in the background, it returns to the console).
    pub fn ended(&mut self, job: JobId, now: Instant) {
        if self.running.is_some_and(|(running, _, _)| running == job) {
            self.returned(now);
        }
    }

    /// The job whose turn it is (handed out at `now`): a check if no call
    /// waits or checks have credit, else the oldest call.
    pub fn next(&mut self, now: Instant) -> Option<Box<Job>> {
        let check_first = !self.checks.is_empty() && (self.calls.is_empty() || self.credit > 0.0);
        let job = if check_first {
            self.checks.pop_front()
        } else {
            self.calls.pop_front().or_else(|| self.checks.pop_front())
        }?;
        self.running = Some((job.id, job.token_check, now));
        Some(job)
    }

    /// How long the check handed out now may hold R once calls wait.
    pub fn allowance(&self) -> Duration {
        CHECK_SLICE.max(Duration::from_secs_f64(self.credit.max(0.0)))
    }

    /// Drops every waiting job (serving is over).
    pub fn clear(&mut self) {
        self.calls.clear();
        self.checks.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::registry::Registry;
    use crate::engine::{CallContext, InputMode};
    use crate::protocol::jsonrpc::RequestId;
    use crate::protocol::revision::Revision;
    use std::sync::Arc;

    fn job(id: u64, token_check: bool) -> Box<Job> {
        Box::new(Job {
            id,
            tool: 0,
            registry: Arc::new(Registry::new(Vec::new()).unwrap()),
            arguments: Default::default(),
            sent_arguments: None,
            read_early: None,
            token_check,
            context: CallContext {
                request_id: RequestId::from_number(id),
                revision: Revision::LATEST,
                progress_token: None,
                meta: None,
                client_info: None,
                log_level: None,
                input: InputMode::Unavailable(String::new()),
                capabilities: Arc::new(serde_json::Value::Null),
                answers: Default::default(),
                task: None,
                auth: None,
                task_later: false,
                trace: None,
                session_id: None,
            },
        })
    }

    /// Runs the turns: each job takes `call` or `check` of R's time, with
    /// `checks` checks and `calls` calls waiting at once (each replaced by
    /// another of its kind as it runs); returns the share of time checks got.
    fn check_share(call: Duration, check: Duration, rounds: usize) -> f64 {
        let mut turns = Turns::default();
        let mut now = Instant::now();
        let (mut calls_time, mut checks_time) = (Duration::ZERO, Duration::ZERO);
        let mut n = 0;
        for _ in 0..4 {
            turns.push(job(n, false));
            turns.push(job(n + 1, true));
            n += 2;
        }
        for _ in 0..rounds {
            let job = turns.next(now).unwrap();
            let took = if job.token_check { check } else { call };
            if job.token_check {
                checks_time += took;
            } else {
                calls_time += took;
            }
            now += took;
            turns.returned(now);
            turns.push(self::job(n, job.token_check));
            n += 1;
        }
        checks_time.as_secs_f64() / (checks_time + calls_time).as_secs_f64()
    }

    #[test]
    fn calls_go_before_waiting_checks() {
        let mut turns = Turns::default();
        let now = Instant::now();
        turns.push(job(1, true));
        turns.push(job(2, true));
        turns.push(job(3, false));
        assert_eq!(turns.next(now).unwrap().id, 3, "the call first");
        turns.returned(now + Duration::from_millis(1));
        assert_eq!(turns.next(now).unwrap().id, 1, "no call waits: a check");
        turns.returned(now + Duration::from_millis(2));
        turns.push(job(4, false));
        assert_eq!(turns.next(now).unwrap().id, 4);
        assert_eq!(turns.next(now).unwrap().id, 2);
        assert!(turns.next(now).is_none());
    }

    #[test]
    fn checks_get_a_bounded_share_of_r_while_calls_wait() {
        let ms = Duration::from_millis;
        // Slow checks among quick calls: a fifth of the time, no more.
        let share = check_share(ms(1), ms(200), 5000);
        assert!((share - CHECK_SHARE).abs() < 0.03, "{share}");
        // Quick checks among slow calls get theirs too (not starved).
        let share = check_share(ms(200), ms(1), 2000);
        assert!(share > 0.0 && share <= CHECK_SHARE + 0.01, "{share}");
    }

    #[test]
    fn credit_is_bounded_both_ways() {
        let mut turns = Turns::default();
        let mut now = Instant::now();
        // A long stretch of calls saves at most MAX_CREDIT.
        for n in 0..100 {
            turns.push(job(n, false));
            turns.next(now);
            now += Duration::from_secs(1);
            turns.returned(now);
        }
        assert_eq!(turns.allowance(), MAX_CREDIT);
        // A hanging check runs up at most MAX_CREDIT of debt.
        turns.push(job(200, true));
        turns.next(now);
        now += Duration::from_secs(30);
        turns.returned(now);
        assert_eq!(turns.credit, -MAX_CREDIT.as_secs_f64());
        assert_eq!(turns.allowance(), CHECK_SLICE);
    }
}
