//! The `requestState` of 2026-07-28 input-required rounds.
//!
//! When a tool needs the user's input, the server answers with an
//! `input_required` result and an opaque `requestState`; the client retries
//! the call with the answers and that state echoed back. The state carries
//! the answers given so far, so the server keeps nothing between rounds. The
//! client controls it, so it is authenticated (HMAC-SHA256), bound to the
//! tool and a digest of its arguments, given an expiry, and accepted once.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

type HmacSha256 = Hmac<Sha256>;

/// How long a client has to answer.
pub const STATE_LIFETIME: Duration = Duration::from_secs(600);

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
    Expired,
    Replayed,
}

impl Refusal {
    pub fn describe(&self) -> &'static str {
        match self {
            Refusal::Malformed => "the request state is malformed",
            Refusal::BadSignature => {
                "the request state has been altered or was not issued by this server"
            }
            Refusal::OtherTool => "the request state belongs to another tool",
            Refusal::OtherArguments => "the request state belongs to a call with other arguments",
            Refusal::Expired => "the request state has expired",
            Refusal::Replayed => "the request state has already been used",
        }
    }
}

pub struct Signer {
    key: Vec<u8>,
    /// Nonces of states already accepted, with their expiry.
    used: HashMap<String, u64>,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Random bytes from the operating system.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    bytes
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
    /// A signer with the given key, or a random one for this process.
    pub fn new(key: Option<&[u8]>) -> Signer {
        let key = match key {
            Some(k) => k.to_vec(),
            None => random_bytes::<32>().to_vec(),
        };
        Signer {
            key,
            used: HashMap::new(),
        }
    }

    fn mac(&self, payload: &[u8]) -> Vec<u8> {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(payload);
        mac.finalize().into_bytes().to_vec()
    }

    /// Issues a state for `tool` called with `arguments`.
    pub fn issue(&self, tool: &str, arguments: &Map<String, Value>, state: &State) -> String {
        self.issue_at(tool, arguments, state, now_secs())
    }

    fn issue_at(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
        state: &State,
        now: u64,
    ) -> String {
        let payload = json!({
            "v": 1,
            "tool": tool,
            "args": arguments_digest(arguments),
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

    /// Checks a state the client sent back; on success it cannot be used again.
    pub fn accept(
        &mut self,
        text: &str,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Result<State, Refusal> {
        self.accept_at(text, tool, arguments, now_secs())
    }

    fn accept_at(
        &mut self,
        text: &str,
        tool: &str,
        arguments: &Map<String, Value>,
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
        let expiry = value["exp"].as_u64().ok_or(Refusal::Malformed)?;
        if expiry <= now {
            return Err(Refusal::Expired);
        }
        let nonce = value["nonce"]
            .as_str()
            .ok_or(Refusal::Malformed)?
            .to_string();
        self.used.retain(|_, exp| *exp > now);
        if self.used.insert(nonce, expiry).is_some() {
            return Err(Refusal::Replayed);
        }
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
        let mut s = Signer::new(None);
        let a = args(json!({"x": 1, "y": {"b": 2, "a": 1}}));
        let token = s.issue("greet", &a, &state());
        // Key order does not matter for the digest.
        let reordered = args(json!({"y": {"a": 1, "b": 2}, "x": 1}));
        assert_eq!(s.accept(&token, "greet", &reordered), Ok(state()));
        assert_eq!(s.accept(&token, "greet", &a), Err(Refusal::Replayed));
    }

    #[test]
    fn tampered_foreign_and_expired_states_are_refused() {
        let mut s = Signer::new(Some(b"secret"));
        let a = args(json!({"x": 1}));
        let token = s.issue("greet", &a, &state());
        assert_eq!(s.accept(&token, "other", &a), Err(Refusal::OtherTool));
        assert_eq!(
            s.accept(&token, "greet", &args(json!({"x": 2}))),
            Err(Refusal::OtherArguments)
        );
        let (payload, sig) = token.split_once('.').unwrap();
        let mut bytes = B64.decode(payload).unwrap();
        let text = String::from_utf8(bytes.clone())
            .unwrap()
            .replace("Ada", "Eve");
        bytes = text.into_bytes();
        let forged = format!("{}.{sig}", B64.encode(&bytes));
        assert_eq!(s.accept(&forged, "greet", &a), Err(Refusal::BadSignature));
        let mut other = Signer::new(Some(b"another key"));
        assert_eq!(
            other.accept(&token, "greet", &a),
            Err(Refusal::BadSignature)
        );
        assert_eq!(s.accept("garbage", "greet", &a), Err(Refusal::Malformed));
        assert_eq!(s.accept("YQ.Yg", "greet", &a), Err(Refusal::BadSignature));
        let old = s.issue_at(
            "greet",
            &a,
            &state(),
            now_secs() - STATE_LIFETIME.as_secs() - 1,
        );
        assert_eq!(s.accept(&old, "greet", &a), Err(Refusal::Expired));
        // A shared key lets another process of the same server accept it.
        let mut twin = Signer::new(Some(b"secret"));
        assert!(twin.accept(&token, "greet", &a).is_ok());
    }
}
