//! Bearer tokens checked by the user's R function.
//!
//! R is single-threaded and only the R thread may run R code, so a check
//! is a hidden job in the same queue as tool calls (see
//! [`Engine::on_token_check`](crate::engine::Engine::on_token_check)): it
//! waits its turn, runs under the same time limit and interrupt machinery,
//! and an R error in it becomes an error response, never a crash. One
//! engine of its own serves every check.
//!
//! Checking each request that way would put every request behind R, so
//! verdicts are remembered for a short while ([`VerdictCache`]), keyed by
//! the token's SHA-256 hash (the token itself is neither kept nor logged),
//! and simultaneous requests with the same unknown token share one check.
//! A check that fails or runs out of time is not remembered: the next
//! request tries again.
//!
//! Anyone can send a made-up token, so checks must not crowd out the
//! callers whose verdicts are remembered, nor one client's made-up tokens
//! the first token of a real user:
//! - R gives calls the first turn, and checks a bounded share of its time
//!   while calls wait (see [`crate::engine::turns`]);
//! - one check at a time is handed to R, taken in turn from each client
//!   (peer address) with checks waiting, so another client's check waits
//!   for at most one of each other client's;
//! - a client has at most [`TokenCheck::per_peer`] unknown tokens waiting
//!   or being checked (429 beyond), and the server [`MAX_CHECKS_WAITING`]
//!   (503 beyond); a check still waiting when its requests' time is up is
//!   dropped unrun.

use super::limits::Client;
use super::security::Principal;
use super::streams::{self, Piece, Postbox};
use crate::protocol::jsonrpc::RequestId;
use crate::transport::slots::{Front, Slot};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Verdicts remembered at most (the oldest go first when full).
pub const CACHE_CAPACITY: usize = 1024;

/// Different unknown tokens waiting for a check (or being checked) at
/// most; a request with yet another gets 503. Each waits at most the time
/// limit, so this bounds the memory they hold, not R's time.
pub const MAX_CHECKS_WAITING: usize = 256;

/// How long past its time limit a check's answer is awaited: R gets the
/// server's own grace to unwind from the limit's interrupt first.
const ANSWER_GRACE: Duration = Duration::from_secs(2);

/// What the R function said about a token.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Accepted; with what the function said about its holder, if it
    /// returned a list (given to tools as `mcp_request()$auth`).
    Allow(Option<Value>),
    Deny,
}

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq)]
pub enum Checked {
    Verdict(Verdict),
    /// The function failed (an R error, a result of the wrong shape): 500.
    Failed,
    /// No verdict in time, or too many checks at once: 503, try again.
    Unavailable,
    /// The client has its most unknown tokens waiting already: 429.
    TooMany,
}

/// How tokens are checked.
#[derive(Debug, Clone)]
pub struct TokenCheck {
    /// Registry index of the hidden entry that runs the R function.
    pub handler: usize,
    /// How long a verdict is remembered; zero remembers none.
    pub cache_for: Duration,
    /// How long a request waits for a verdict (in the queue and running);
    /// the function's own time limit is set to this on the R side.
    pub time_limit: Duration,
    /// Unknown tokens one peer may have waiting or being checked at once.
    pub per_peer: usize,
}

/// The default of [`TokenCheck::per_peer`]: a client has one token at a
/// time, a few when several users share an address (behind NAT); more
/// unknown ones at once from one address are guesses.
pub const CHECKS_PER_PEER: usize = 4;

use crate::util::threads::lock;

/// Recent verdicts by token hash, each until it expires, at most
/// `capacity` of them.
pub struct VerdictCache {
    entries: HashMap<Principal, (Verdict, Instant)>,
    capacity: usize,
}

impl VerdictCache {
    pub fn new(capacity: usize) -> VerdictCache {
        VerdictCache {
            entries: HashMap::new(),
            capacity,
        }
    }

    /// The verdict on `token`, if one is remembered and still fresh at `now`.
    pub fn get(&mut self, token: &Principal, now: Instant) -> Option<Verdict> {
        match self.entries.get(token) {
            Some((verdict, expires)) if *expires > now => Some(verdict.clone()),
            Some(_) => {
                self.entries.remove(token);
                None
            }
            None => None,
        }
    }

    /// Remembers a verdict until `expires`. When full, expired verdicts
    /// go first, then the refusal that would expire soonest, and only when
    /// there are none the acceptance that would: a client sending made-up
    /// tokens fills the cache with refusals, which must not push out the
    /// verdicts of the real users.
    pub fn insert(&mut self, token: Principal, verdict: Verdict, expires: Instant, now: Instant) {
        if self.capacity == 0 {
            return;
        }
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&token) {
            self.entries.retain(|_, (_, at)| *at > now);
            if self.entries.len() >= self.capacity {
                let soonest = self
                    .entries
                    .iter()
                    .min_by_key(|(_, (verdict, at))| (*verdict != Verdict::Deny, *at))
                    .map(|(k, _)| *k);
                if let Some(k) = soonest {
                    self.entries.remove(&k);
                }
            }
        }
        self.entries.insert(token, (verdict, expires));
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Runs checks through the R queue and remembers their verdicts.
pub struct Checker {
    settings: TokenCheck,
    cache: Mutex<VerdictCache>,
    queue: Mutex<Queue>,
    slot: Arc<Slot>,
    postbox: Arc<Postbox>,
    next_id: AtomicU64,
}

/// The checks waiting or under way.
#[derive(Default)]
struct Queue {
    /// Every check waiting or under way, by token hash: later requests
    /// with the same token wait for the same one.
    checks: HashMap<Principal, Pending>,
    /// Waiting checks, by the client that asked first...
    waiting: HashMap<Client, VecDeque<Principal>>,
    /// ...and the clients with checks waiting, in the order of their turns.
    turns: VecDeque<Client>,
    /// How many checks each client has waiting or under way.
    per_client: HashMap<Client, usize>,
    /// A check is with R (one at a time).
    running: bool,
}

/// One check, and where its verdict goes.
struct Pending {
    client: Client,
    /// The token, until the check is handed to R.
    token: Option<String>,
    /// The requests' time is up then.
    deadline: Instant,
    tx: watch::Sender<Option<Checked>>,
}

impl Queue {
    /// The next check to hand to R, the clients taking turns; checks whose
    /// time is up are dropped on the way.
    fn next(&mut self, now: Instant) -> Option<(Principal, String, Instant)> {
        while let Some(client) = self.turns.pop_front() {
            let Some(waiting) = self.waiting.get_mut(&client) else {
                continue;
            };
            let hash = waiting.pop_front();
            if waiting.is_empty() {
                self.waiting.remove(&client);
            } else {
                self.turns.push_back(client);
            }
            let Some(hash) = hash else { continue };
            let Some(pending) = self.checks.get_mut(&hash) else {
                continue;
            };
            if pending.deadline <= now {
                self.settle(hash, Checked::Unavailable);
                continue;
            }
            if let Some(token) = pending.token.take() {
                return Some((hash, token, pending.deadline));
            }
        }
        None
    }

    /// The check of `hash` is over: its requests get `checked`.
    fn settle(&mut self, hash: Principal, checked: Checked) {
        let Some(pending) = self.checks.remove(&hash) else {
            return;
        };
        if let Some(count) = self.per_client.get_mut(&pending.client) {
            *count -= 1;
            if *count == 0 {
                self.per_client.remove(&pending.client);
            }
        }
        let _ = pending.tx.send(Some(checked));
    }
}

impl Checker {
    pub fn new(settings: TokenCheck, front: &Front) -> Checker {
        let postbox = Arc::new(Postbox::default());
        Checker {
            settings,
            cache: Mutex::new(VerdictCache::new(CACHE_CAPACITY)),
            queue: Mutex::new(Queue::default()),
            slot: front.token_check_slot(postbox.clone()),
            postbox,
            next_id: AtomicU64::new(1),
        }
    }

    /// The verdict on `token` (whose hash is `hash`), sent from `peer`:
    /// remembered, or from a check under way, or from a new one. Runs on
    /// the HTTP runtime.
    pub async fn check(
        self: &Arc<Self>,
        front: &Front,
        hash: Principal,
        token: &str,
        peer: IpAddr,
    ) -> Checked {
        if let Some(verdict) = lock(&self.cache).get(&hash, Instant::now()) {
            return Checked::Verdict(verdict);
        }
        let (mut pending, start) = {
            let mut queue = lock(&self.queue);
            if let Some(pending) = queue.checks.get(&hash) {
                (pending.tx.subscribe(), false)
            } else {
                let client = Client::peer(peer);
                let held = queue.per_client.get(&client).copied().unwrap_or(0);
                if held >= self.settings.per_peer {
                    return Checked::TooMany;
                }
                if queue.checks.len() >= MAX_CHECKS_WAITING {
                    return Checked::Unavailable;
                }
                let (tx, rx) = watch::channel(None);
                let deadline = Instant::now() + self.settings.time_limit;
                queue.checks.insert(
                    hash,
                    Pending {
                        client,
                        token: Some(token.to_string()),
                        deadline,
                        tx,
                    },
                );
                *queue.per_client.entry(client).or_insert(0) += 1;
                let waiting = queue.waiting.entry(client).or_default();
                waiting.push_back(hash);
                if waiting.len() == 1 {
                    queue.turns.push_back(client);
                }
                let start = !queue.running;
                queue.running = true;
                (rx, start)
            }
        };
        if start {
            // A task of its own, so checks go on (and their verdicts are
            // shared) even if this client goes away.
            let checker = self.clone();
            let front = front.clone();
            tokio::spawn(async move { checker.drive(&front).await });
        }
        let wait = self.settings.time_limit + ANSWER_GRACE * 2;
        let verdict = async {
            match pending.wait_for(Option::is_some).await {
                Ok(checked) => checked.clone().unwrap_or(Checked::Failed),
                // The driving task ended without a verdict (it panicked).
                Err(_) => Checked::Failed,
            }
        };
        tokio::time::timeout(wait, verdict)
            .await
            .unwrap_or(Checked::Unavailable)
    }

    /// Hands the waiting checks to R one at a time, until none waits.
    async fn drive(self: Arc<Self>, front: &Front) {
        loop {
            let next = {
                let mut queue = lock(&self.queue);
                let next = queue.next(Instant::now());
                queue.running = next.is_some();
                next
            };
            let Some((hash, token, deadline)) = next else {
                return;
            };
            let checked = self.run(front, &token, deadline).await;
            drop(token);
            if let Checked::Verdict(verdict) = &checked {
                if !self.settings.cache_for.is_zero() {
                    let now = Instant::now();
                    lock(&self.cache).insert(
                        hash,
                        verdict.clone(),
                        now + self.settings.cache_for,
                        now,
                    );
                }
            }
            lock(&self.queue).settle(hash, checked);
        }
    }

    /// One check: queued for R, awaited until `deadline` (and R's grace to
    /// unwind from its time limit); a check still queued or running then
    /// is cancelled.
    async fn run(&self, front: &Front, token: &str, deadline: Instant) -> Checked {
        let id = RequestId::from_number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, mut rx) = streams::stream();
        self.postbox.open(&id, tx);
        front.check_token(&self.slot, id.clone(), self.settings.handler, token);
        let answer = async {
            loop {
                match rx.recv().await {
                    Some(Piece::Final(line, _)) => return Some(line),
                    // The function's logs or progress: nobody to show them to.
                    Some(Piece::Note(..)) => continue,
                    None => return None,
                }
            }
        };
        let limit = deadline.saturating_duration_since(Instant::now()) + ANSWER_GRACE;
        match tokio::time::timeout(limit, answer).await {
            Ok(Some(line)) => read_answer(std::str::from_utf8(&line).unwrap_or_default(), token),
            Ok(None) => Checked::Unavailable,
            Err(_) => {
                front.cancel(&self.slot, &id);
                self.postbox.forget(&id);
                eprintln!(
                    "mcpserver: a bearer token was not checked within {} s (R was busy, or the \
                     function is slow); the request got 503",
                    self.settings.time_limit.as_secs_f64()
                );
                Checked::Unavailable
            }
        }
    }
}

/// The check's JSON-RPC response: `{allow, identity?}`, or an error (the
/// function failed, or ran out of time). A failure is reported on stderr,
/// with the token masked should the function's error message quote it,
/// whole or in part (see [`mask_token`]).
fn read_answer(line: &str, token: &str) -> Checked {
    let Ok(message) = serde_json::from_str::<Value>(line) else {
        return Checked::Failed;
    };
    if let Some(error) = message.get("error") {
        let text = error["message"].as_str().unwrap_or("unknown error");
        eprintln!("mcpserver: {}", mask_token(text, token));
        return if error["data"]["timedOut"] == Value::Bool(true) {
            Checked::Unavailable
        } else {
            Checked::Failed
        };
    }
    let result = &message["result"];
    match result["allow"].as_bool() {
        Some(true) => Checked::Verdict(Verdict::Allow(
            result.get("identity").filter(|v| v.is_object()).cloned(),
        )),
        Some(false) => Checked::Verdict(Verdict::Deny),
        None => Checked::Failed,
    }
}

/// Runs of this many characters or more that the token also has are
/// masked: a shorter piece tells too little of a random token to matter,
/// and masking those would hide ordinary words a token may contain.
const MASKED_FROM: usize = 6;

/// `text` with every piece of `token` in it masked: the whole token, and
/// any run of at least [`MASKED_FROM`] characters each of whose
/// [`MASKED_FROM`]-character windows occurs in the token (a prefix or
/// suffix that a message quotes, `substr(token, 1, 8)`, included).
pub fn mask_token(text: &str, token: &str) -> String {
    let token: Vec<char> = token.chars().collect();
    let chars: Vec<char> = text.chars().collect();
    if token.is_empty() {
        return text.to_string();
    }
    let mut masked = vec![false; chars.len()];
    let mut mark = |window: usize, hit: &dyn Fn(&[char]) -> bool| {
        for at in 0..chars.len().saturating_sub(window - 1) {
            if hit(&chars[at..at + window]) {
                masked[at..at + window].iter_mut().for_each(|m| *m = true);
            }
        }
    };
    // The whole token, however short...
    mark(token.len(), &|window| window == token.as_slice());
    // ...and the pieces of it long enough to matter.
    if token.len() > MASKED_FROM {
        let pieces: std::collections::HashSet<&[char]> = token.windows(MASKED_FROM).collect();
        mark(MASKED_FROM, &|window| pieces.contains(window));
    }
    let mut out = String::with_capacity(text.len());
    let mut in_mask = false;
    for (c, m) in chars.iter().zip(&masked) {
        if *m {
            if !in_mask {
                out.push_str("<token>");
            }
        } else {
            out.push(*c);
        }
        in_mask = *m;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::security::token_hash;
    use super::*;
    use serde_json::json;

    #[test]
    fn verdicts_are_remembered_until_they_expire() {
        let mut cache = VerdictCache::new(8);
        let now = Instant::now();
        let alice = token_hash("alice");
        cache.insert(
            alice,
            Verdict::Allow(None),
            now + Duration::from_secs(60),
            now,
        );
        cache.insert(
            token_hash("mallory"),
            Verdict::Deny,
            now + Duration::from_secs(60),
            now,
        );
        assert_eq!(cache.get(&alice, now), Some(Verdict::Allow(None)));
        assert_eq!(cache.get(&token_hash("mallory"), now), Some(Verdict::Deny));
        assert_eq!(cache.get(&token_hash("bob"), now), None);
        let later = now + Duration::from_secs(61);
        assert_eq!(cache.get(&alice, later), None);
        assert_eq!(cache.len(), 1, "an expired verdict is dropped when found");
    }

    #[test]
    fn a_full_cache_drops_expired_verdicts_then_the_soonest_to_expire() {
        let mut cache = VerdictCache::new(3);
        let now = Instant::now();
        let secs = Duration::from_secs;
        cache.insert(token_hash("a"), Verdict::Deny, now + secs(1), now);
        cache.insert(token_hash("b"), Verdict::Deny, now + secs(50), now);
        cache.insert(token_hash("c"), Verdict::Deny, now + secs(30), now);
        // Two seconds on, "a" has expired: it makes room.
        let later = now + secs(2);
        cache.insert(token_hash("d"), Verdict::Deny, later + secs(60), later);
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.get(&token_hash("a"), now), None);
        // Nothing has expired now: "c", due soonest, makes room.
        cache.insert(token_hash("e"), Verdict::Deny, later + secs(60), later);
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.get(&token_hash("c"), later), None);
        assert!(cache.get(&token_hash("b"), later).is_some());
        // Replacing a verdict takes no room.
        cache.insert(
            token_hash("b"),
            Verdict::Allow(None),
            later + secs(5),
            later,
        );
        assert_eq!(cache.len(), 3);
        assert_eq!(
            cache.get(&token_hash("b"), later),
            Some(Verdict::Allow(None))
        );
    }

    #[test]
    fn made_up_tokens_do_not_push_out_accepted_ones() {
        let mut cache = VerdictCache::new(4);
        let now = Instant::now();
        let minute = now + Duration::from_secs(60);
        cache.insert(token_hash("ann"), Verdict::Allow(None), minute, now);
        cache.insert(token_hash("bob"), Verdict::Allow(None), minute, now);
        for n in 0..100 {
            let later = now + Duration::from_millis(n);
            cache.insert(
                token_hash(&format!("guess-{n}")),
                Verdict::Deny,
                minute,
                later,
            );
        }
        assert_eq!(cache.len(), 4);
        assert!(cache.get(&token_hash("ann"), now).is_some());
        assert!(cache.get(&token_hash("bob"), now).is_some());
        assert!(
            cache.get(&token_hash("guess-99"), now).is_some(),
            "the newest refusal is kept"
        );
        // With only acceptances left, the one due soonest makes room.
        let mut cache = VerdictCache::new(2);
        cache.insert(token_hash("ann"), Verdict::Allow(None), minute, now);
        cache.insert(
            token_hash("bob"),
            Verdict::Allow(None),
            now + Duration::from_secs(9),
            now,
        );
        cache.insert(token_hash("cy"), Verdict::Allow(None), minute, now);
        assert!(cache.get(&token_hash("bob"), now).is_none());
        assert!(cache.get(&token_hash("ann"), now).is_some());
    }

    #[test]
    fn a_cache_of_no_capacity_remembers_nothing() {
        let mut cache = VerdictCache::new(0);
        let now = Instant::now();
        cache.insert(
            token_hash("a"),
            Verdict::Deny,
            now + Duration::from_secs(9),
            now,
        );
        assert!(cache.is_empty());
    }

    #[test]
    fn tokens_and_pieces_of_them_are_masked() {
        let token = "tok_9f8e7d6c5b4a";
        assert_eq!(
            mask_token(&format!("lookup failed for token {token}"), token),
            "lookup failed for token <token>"
        );
        assert_eq!(
            mask_token("no user for tok_9f8e... (expired)", token),
            "no user for <token>... (expired)"
        );
        assert_eq!(
            mask_token("ends in 6c5b4a, starts tok_9f", token),
            "ends in <token>, starts <token>"
        );
        // Words a token happens to contain are left alone when short.
        assert_eq!(
            mask_token("bearer token check failed", "my-token-abc123"),
            "bearer token check failed"
        );
        assert_eq!(
            mask_token("the directory is down", token),
            "the directory is down"
        );
        assert_eq!(mask_token("short", "ab"), "short");
        assert_eq!(mask_token("down for boom", "boom"), "down for <token>");
    }

    #[test]
    fn answers_become_verdicts_and_failures() {
        let ok = json!({"jsonrpc":"2.0","id":1,"result":{"allow":true,"identity":{"user":"ann"}}});
        assert_eq!(
            read_answer(&ok.to_string(), "t"),
            Checked::Verdict(Verdict::Allow(Some(json!({"user":"ann"}))))
        );
        let no = json!({"jsonrpc":"2.0","id":1,"result":{"allow":false}});
        assert_eq!(
            read_answer(&no.to_string(), "t"),
            Checked::Verdict(Verdict::Deny)
        );
        let failed = json!({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}});
        assert_eq!(read_answer(&failed.to_string(), "t"), Checked::Failed);
        let slow = json!({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"late","data":{"timedOut":true}}});
        assert_eq!(read_answer(&slow.to_string(), "t"), Checked::Unavailable);
        assert_eq!(read_answer("not json", "t"), Checked::Failed);
    }
}
