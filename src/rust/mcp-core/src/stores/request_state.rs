//! The `requestState` of 2026-07-28 input-required rounds.
//!
//! When a tool needs the user's input, the server answers with an
//! `input_required` result and an opaque `requestState`; the client retries
//! the call with the answers and that state echoed back. The state carries
//! the answers given so far, so the server keeps nothing between rounds. The
//! client controls it, so it is authenticated (HMAC-SHA256), bound to the
//! tool and a digest of its arguments and to whoever it was issued to (the
//! holder of the request's token, when tokens are required), given an
//! expiry, and accepted once. A state another holder presents is refused
//! without being used up, so its own holder can still retry with it.
//!
//! What "once" covers depends on the key and on where used states are
//! recorded:
//! - no key: the key is random per process, so a state verifies only in the
//!   process that issued it (never in another one, nor after a restart), and
//!   that process accepts it once;
//! - a shared key: every process holding it accepts the state, each once,
//!   since each remembers what it accepted in memory; so another process, or
//!   the same server after a restart, may accept it once more before it
//!   expires;
//! - a shared key and a shared store (a directory): each accepted state is
//!   recorded there as a file created exclusively, so it is accepted once
//!   across every process using the store, restarts included.

use crate::util::ids::random_bytes;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

type HmacSha256 = Hmac<Sha256>;

/// How long a client has to answer.
pub const STATE_LIFETIME: Duration = Duration::from_secs(600);
/// Most used states remembered at once (each until it expires). Past this
/// the server refuses states rather than forget one and accept it again.
pub const MAX_USED_STATES: usize = 100_000;
/// How often expired records are dropped, in seconds.
const PRUNE_EVERY_SECS: u64 = 60;

/// What a verified state says.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// Answers to earlier rounds, by input-request key.
    pub answers: Map<String, Value>,
    /// The keys the last round asked for (answers to others are ignored).
    pub asked: Vec<String>,
}

/// Why a state was refused (all reported as `invalid_request_state`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Malformed,
    BadSignature,
    OtherTool,
    OtherArguments,
    /// Issued to another token holder (or to none, or to one when the
    /// request has none).
    OtherHolder,
    Expired,
    Replayed,
    /// `MAX_USED_STATES` unexpired states are remembered already.
    TooManyInUse,
    /// The store could not record the use (the detail says why).
    Unrecorded(String),
}

impl Refusal {
    pub fn describe(&self) -> String {
        match self {
            Refusal::Malformed => "the request state is malformed".into(),
            Refusal::BadSignature => "the request state has been altered, or was issued by \
                                      another server process that does not share this one's \
                                      `request_state_key`"
                .into(),
            Refusal::OtherTool => "the request state belongs to another tool".into(),
            Refusal::OtherArguments => {
                "the request state belongs to a call with other arguments".into()
            }
            Refusal::OtherHolder => "the request state was issued to another client".into(),
            Refusal::Expired => "the request state has expired".into(),
            Refusal::Replayed => "the request state has already been used".into(),
            Refusal::TooManyInUse => format!(
                "more than {MAX_USED_STATES} request states were used in the last {} minutes; \
                 try again later",
                STATE_LIFETIME.as_secs() / 60
            ),
            Refusal::Unrecorded(why) => {
                format!("the use of the request state could not be recorded: {why}")
            }
        }
    }
}

pub struct Signer {
    key: Vec<u8>,
    /// Nonces of states this process accepted, with their expiry.
    used: HashMap<String, u64>,
    /// The directory where every process sharing the key records the states
    /// it accepted, if one was given.
    store: Option<PathBuf>,
    /// When expired records are next dropped.
    next_prune: u64,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Who a state is issued to: the owner of the request's tasks (see
/// [`crate::stores::tasks::Owner`]), a digest of the token holder.
pub type Holder = crate::stores::tasks::Owner;

fn holder_text(holder: Option<&Holder>) -> Value {
    holder.map_or(Value::Null, |h| Value::from(B64.encode(h)))
}

/// A digest of tool arguments that does not depend on key order.
pub fn arguments_digest(arguments: &Map<String, Value>) -> String {
    fn canonical(v: &Value) -> Value {
        match v {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), canonical(&map[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
            other => other.clone(),
        }
    }
    let text = canonical(&Value::Object(arguments.clone())).to_string();
    B64.encode(Sha256::digest(text.as_bytes()))
}

impl Signer {
    /// A signer with the given key, or a random one for this process, that
    /// records used states in memory and, if given, in `store`.
    pub fn new(key: Option<&[u8]>, store: Option<&Path>) -> Signer {
        let key = match key {
            Some(k) => k.to_vec(),
            None => random_bytes::<32>().to_vec(),
        };
        Signer {
            key,
            used: HashMap::new(),
            store: store.map(Path::to_path_buf),
            next_prune: 0,
        }
    }

    fn mac(&self, payload: &[u8]) -> Vec<u8> {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(payload);
        mac.finalize().into_bytes().to_vec()
    }

    /// Issues a state for `tool` called with `arguments` by `holder` (who
    /// holds the request's token, if tokens are required).
    pub fn issue(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
        state: &State,
        holder: Option<&Holder>,
    ) -> String {
        self.issue_at(tool, arguments, state, holder, now_secs())
    }

    fn issue_at(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
        state: &State,
        holder: Option<&Holder>,
        now: u64,
    ) -> String {
        let payload = json!({
            "v": 1,
            "tool": tool,
            "args": arguments_digest(arguments),
            "holder": holder_text(holder),
            "exp": now + STATE_LIFETIME.as_secs(),
            "nonce": B64.encode(random_bytes::<16>()),
            "answers": state.answers,
            "asked": state.asked,
        })
        .to_string();
        format!(
            "{}.{}",
            B64.encode(payload.as_bytes()),
            B64.encode(self.mac(payload.as_bytes()))
        )
    }

    /// Checks a state `holder` sent back; on success it cannot be used
    /// again (a refused one can: it is used up only once accepted).
    pub fn accept(
        &mut self,
        text: &str,
        tool: &str,
        arguments: &Map<String, Value>,
        holder: Option<&Holder>,
    ) -> Result<State, Refusal> {
        self.accept_at(text, tool, arguments, holder, now_secs())
    }

    fn accept_at(
        &mut self,
        text: &str,
        tool: &str,
        arguments: &Map<String, Value>,
        holder: Option<&Holder>,
        now: u64,
    ) -> Result<State, Refusal> {
        let (payload, signature) = text.split_once('.').ok_or(Refusal::Malformed)?;
        let payload = B64.decode(payload).map_err(|_| Refusal::Malformed)?;
        let signature = B64.decode(signature).map_err(|_| Refusal::Malformed)?;
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(&payload);
        mac.verify_slice(&signature)
            .map_err(|_| Refusal::BadSignature)?;
        let value: Value = serde_json::from_slice(&payload).map_err(|_| Refusal::Malformed)?;
        if value["tool"] != tool {
            return Err(Refusal::OtherTool);
        }
        if value["args"] != arguments_digest(arguments).as_str() {
            return Err(Refusal::OtherArguments);
        }
        if value["holder"] != holder_text(holder) {
            return Err(Refusal::OtherHolder);
        }
        let expiry = value["exp"].as_u64().ok_or(Refusal::Malformed)?;
        if expiry <= now {
            return Err(Refusal::Expired);
        }
        let nonce = value["nonce"].as_str().ok_or(Refusal::Malformed)?;
        self.record_use(nonce, expiry, now)?;
        let answers = value["answers"].as_object().cloned().unwrap_or_default();
        let asked = value["asked"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|k| k.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        Ok(State { answers, asked })
    }

    /// Records that the state `nonce` (valid until `expiry`) is used, or
    /// says why it may not be: it was used before, here or (with a store)
    /// by any process sharing the store.
    fn record_use(&mut self, nonce: &str, expiry: u64, now: u64) -> Result<(), Refusal> {
        // The nonce names a file in the store: only what `issue` makes.
        let plain = nonce
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if nonce.is_empty() || nonce.len() > 64 || !plain {
            return Err(Refusal::Malformed);
        }
        if self.used.contains_key(nonce) {
            return Err(Refusal::Replayed);
        }
        if now >= self.next_prune || self.used.len() >= MAX_USED_STATES {
            self.prune(now);
        }
        if self.used.len() >= MAX_USED_STATES {
            return Err(Refusal::TooManyInUse);
        }
        if let Some(store) = &self.store {
            record_in_store(store, nonce, expiry)?;
        }
        self.used.insert(nonce.to_string(), expiry);
        Ok(())
    }

    /// Drops the records of states that have expired (they are refused as
    /// expired anyway), in memory and in the store.
    fn prune(&mut self, now: u64) {
        self.next_prune = now + PRUNE_EVERY_SECS;
        self.used.retain(|_, exp| *exp > now);
        if let Some(store) = &self.store {
            prune_store(store, now);
        }
    }
}

/// A store record is an empty file named `<expiry>-<nonce>`. Creating it
/// exclusively is atomic, so of two processes accepting the same state at
/// once, exactly one succeeds.
fn record_in_store(store: &Path, nonce: &str, expiry: u64) -> Result<(), Refusal> {
    let path = store.join(format!("{expiry}-{nonce}"));
    match OpenOptions::new().write(true).create_new(true).open(&path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Err(Refusal::Replayed),
        Err(e) => Err(Refusal::Unrecorded(format!("{}: {e}", path.display()))),
    }
}

/// Removes expired records from the store. Failures are left for the next
/// round (another process may have removed the file first).
fn prune_store(store: &Path, now: u64) {
    let Ok(entries) = fs::read_dir(store) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let expiry = name
            .to_str()
            .and_then(|n| n.split_once('-'))
            .and_then(|(expiry, _)| expiry.parse::<u64>().ok());
        if expiry.is_some_and(|expiry| expiry <= now) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn state() -> State {
        State {
            answers: args(json!({"elicit-1": {"action":"accept","content":{"name":"Ada"}}})),
            asked: vec!["elicit-2".into()],
        }
    }

    #[test]
    fn a_state_round_trips_once() {
        let mut s = Signer::new(None, None);
        let a = args(json!({"x": 1, "y": {"b": 2, "a": 1}}));
        let token = s.issue("greet", &a, &state(), None);
        // Key order does not matter for the digest.
        let reordered = args(json!({"y": {"a": 1, "b": 2}, "x": 1}));
        assert_eq!(s.accept(&token, "greet", &reordered, None), Ok(state()));
        assert_eq!(s.accept(&token, "greet", &a, None), Err(Refusal::Replayed));
    }

    #[test]
    fn tampered_foreign_and_expired_states_are_refused() {
        let mut s = Signer::new(Some(b"secret"), None);
        let a = args(json!({"x": 1}));
        let token = s.issue("greet", &a, &state(), None);
        assert_eq!(s.accept(&token, "other", &a, None), Err(Refusal::OtherTool));
        assert_eq!(
            s.accept(&token, "greet", &args(json!({"x": 2})), None),
            Err(Refusal::OtherArguments)
        );
        let (payload, sig) = token.split_once('.').unwrap();
        let mut bytes = B64.decode(payload).unwrap();
        let text = String::from_utf8(bytes.clone())
            .unwrap()
            .replace("Ada", "Eve");
        bytes = text.into_bytes();
        let forged = format!("{}.{sig}", B64.encode(&bytes));
        assert_eq!(
            s.accept(&forged, "greet", &a, None),
            Err(Refusal::BadSignature)
        );
        let mut other = Signer::new(Some(b"another key"), None);
        assert_eq!(
            other.accept(&token, "greet", &a, None),
            Err(Refusal::BadSignature)
        );
        assert_eq!(
            s.accept("garbage", "greet", &a, None),
            Err(Refusal::Malformed)
        );
        assert_eq!(
            s.accept("YQ.Yg", "greet", &a, None),
            Err(Refusal::BadSignature)
        );
        let old = s.issue_at(
            "greet",
            &a,
            &state(),
            None,
            now_secs() - STATE_LIFETIME.as_secs() - 1,
        );
        assert_eq!(s.accept(&old, "greet", &a, None), Err(Refusal::Expired));
    }

    #[test]
    fn a_state_serves_only_its_holder_and_another_does_not_use_it_up() {
        let mut s = Signer::new(None, None);
        let a = args(json!({"x": 1}));
        let (ann, bob) = ([1u8; 32], [2u8; 32]);
        let token = s.issue("greet", &a, &state(), Some(&ann));
        assert_eq!(
            s.accept(&token, "greet", &a, Some(&bob)),
            Err(Refusal::OtherHolder)
        );
        assert_eq!(
            s.accept(&token, "greet", &a, None),
            Err(Refusal::OtherHolder)
        );
        assert_eq!(s.accept(&token, "greet", &a, Some(&ann)), Ok(state()));
        assert_eq!(
            s.accept(&token, "greet", &a, Some(&ann)),
            Err(Refusal::Replayed)
        );
        // One issued to nobody (no tokens) is not taken by a holder.
        let anonymous = s.issue("greet", &a, &state(), None);
        assert_eq!(
            s.accept(&anonymous, "greet", &a, Some(&ann)),
            Err(Refusal::OtherHolder)
        );
        assert_eq!(s.accept(&anonymous, "greet", &a, None), Ok(state()));
    }

    /// A fresh directory for a store, removed when dropped.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> TempDir {
            let name = format!(
                "mcp-core-request-state-{}-{}",
                std::process::id(),
                B64.encode(random_bytes::<9>())
            );
            let dir = std::env::temp_dir().join(name);
            fs::create_dir(&dir).unwrap();
            TempDir(dir)
        }

        fn records(&self) -> usize {
            fs::read_dir(&self.0).unwrap().count()
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    // Each `Signer` below stands for one server process; a new one with the
    // same settings is that server after a restart.

    #[test]
    fn without_a_key_only_the_issuing_process_accepts_a_state() {
        let a = args(json!({"x": 1}));
        let mut first = Signer::new(None, None);
        let token = first.issue("greet", &a, &state(), None);
        let mut second = Signer::new(None, None);
        assert_eq!(
            second.accept(&token, "greet", &a, None),
            Err(Refusal::BadSignature)
        );
        assert!(Refusal::BadSignature
            .describe()
            .contains("another server process"));
        let mut restarted = Signer::new(None, None);
        assert_eq!(
            restarted.accept(&token, "greet", &a, None),
            Err(Refusal::BadSignature)
        );
        assert_eq!(first.accept(&token, "greet", &a, None), Ok(state()));
        assert_eq!(
            first.accept(&token, "greet", &a, None),
            Err(Refusal::Replayed)
        );
    }

    #[test]
    fn a_shared_key_without_a_store_accepts_a_state_once_per_process() {
        let a = args(json!({"x": 1}));
        let mut first = Signer::new(Some(b"secret"), None);
        let token = first.issue("greet", &a, &state(), None);
        assert!(first.accept(&token, "greet", &a, None).is_ok());
        assert_eq!(
            first.accept(&token, "greet", &a, None),
            Err(Refusal::Replayed)
        );
        // Documented: another process, or a restart, accepts it once more.
        let mut second = Signer::new(Some(b"secret"), None);
        assert!(second.accept(&token, "greet", &a, None).is_ok());
        assert_eq!(
            second.accept(&token, "greet", &a, None),
            Err(Refusal::Replayed)
        );
        let mut restarted = Signer::new(Some(b"secret"), None);
        assert!(restarted.accept(&token, "greet", &a, None).is_ok());
    }

    #[test]
    fn a_shared_store_accepts_a_state_once_across_processes_and_restarts() {
        let store = TempDir::new();
        let a = args(json!({"x": 1}));
        let mut first = Signer::new(Some(b"secret"), Some(&store.0));
        let used = first.issue("greet", &a, &state(), None);
        let unused = first.issue("greet", &a, &state(), None);
        assert_eq!(first.accept(&used, "greet", &a, None), Ok(state()));
        assert_eq!(store.records(), 1);
        let mut second = Signer::new(Some(b"secret"), Some(&store.0));
        assert_eq!(
            second.accept(&used, "greet", &a, None),
            Err(Refusal::Replayed)
        );
        drop(first);
        let mut restarted = Signer::new(Some(b"secret"), Some(&store.0));
        assert_eq!(
            restarted.accept(&used, "greet", &a, None),
            Err(Refusal::Replayed)
        );
        // A state issued before the restart and not yet used still works.
        assert_eq!(restarted.accept(&unused, "greet", &a, None), Ok(state()));
        assert_eq!(
            second.accept(&unused, "greet", &a, None),
            Err(Refusal::Replayed)
        );
    }

    #[test]
    fn expired_records_are_dropped_from_memory_and_the_store() {
        let store = TempDir::new();
        let a = args(json!({"x": 1}));
        let mut s = Signer::new(Some(b"secret"), Some(&store.0));
        let now = now_secs();
        let token = s.issue_at("greet", &a, &state(), None, now);
        assert!(s.accept_at(&token, "greet", &a, None, now).is_ok());
        assert_eq!((s.used.len(), store.records()), (1, 1));
        let later = now + STATE_LIFETIME.as_secs();
        let fresh = s.issue_at("greet", &a, &state(), None, later);
        assert!(s.accept_at(&fresh, "greet", &a, None, later).is_ok());
        assert_eq!((s.used.len(), store.records()), (1, 1));
    }

    #[test]
    fn remembered_states_are_bounded_and_refused_past_the_bound() {
        let a = args(json!({"x": 1}));
        let mut s = Signer::new(Some(b"secret"), None);
        let far = now_secs() + STATE_LIFETIME.as_secs();
        for i in 0..MAX_USED_STATES {
            s.used.insert(format!("n{i}"), far);
        }
        let token = s.issue("greet", &a, &state(), None);
        assert_eq!(
            s.accept(&token, "greet", &a, None),
            Err(Refusal::TooManyInUse)
        );
        assert_eq!(s.used.len(), MAX_USED_STATES);
        // Once earlier ones expire, the same state is accepted.
        s.used.values_mut().for_each(|exp| *exp = 0);
        assert_eq!(s.accept(&token, "greet", &a, None), Ok(state()));
        assert_eq!(s.used.len(), 1);
    }

    #[test]
    fn a_store_that_cannot_record_refuses_and_says_why() {
        let store = TempDir::new();
        let missing = store.0.join("not-there");
        let a = args(json!({"x": 1}));
        let mut s = Signer::new(Some(b"secret"), Some(&missing));
        let token = s.issue("greet", &a, &state(), None);
        let refusal = s.accept(&token, "greet", &a, None).unwrap_err();
        assert!(matches!(refusal, Refusal::Unrecorded(_)));
        assert!(refusal.describe().contains("not-there"), "{refusal:?}");
        // Nothing was consumed: once the store works, the state does too.
        fs::create_dir(&missing).unwrap();
        assert_eq!(s.accept(&token, "greet", &a, None), Ok(state()));
    }
}
