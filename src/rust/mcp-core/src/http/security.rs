//! Who may talk to the server: DNS-rebinding protection (the `Host` and
//! `Origin` headers) and bearer tokens.
//!
//! A web page in the user's browser can send requests to a server on the
//! user's machine, and a DNS name it controls can be made to resolve to
//! 127.0.0.1; the `Host` header then names the attacker's domain, and the
//! `Origin` header the attacker's page. So by default, on a loopback
//! address, only loopback names are accepted in either header. On any
//! other address the server cannot guess its own names: they must be given
//! (or the check switched off explicitly, behind a proxy that does it).

use serde_json::Value;
use std::net::IpAddr;

/// Names accepted in `Host` and `Origin`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allowed {
    /// `localhost`, `127.0.0.1` and `[::1]`, any port.
    Loopback,
    /// These, compared case-insensitively: a host (`example.com`, any
    /// port), a host with a port (`example.com:8443`), or for origins a
    /// full origin (`https://app.example.com`).
    List(Vec<String>),
    /// No check (a proxy in front does it).
    Any,
}

/// Why a request was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// 403: an `Origin` the server does not accept.
    Origin(String),
    /// 421: a `Host` the server does not answer to.
    Host(String),
    /// 401: no token, or not a valid one (true when one was sent).
    Token { sent: bool },
    /// 500: the function that checks tokens failed.
    CheckFailed,
    /// 503: no verdict on the token in time (or too many checks at once).
    CheckUnavailable,
    /// 429: the client has its most new tokens being checked already.
    TooManyChecks,
}

const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// `host[:port]` split; IPv6 literals keep their brackets.
fn split_port(authority: &str) -> (&str, Option<&str>) {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => {
                let host = &authority[..=end];
                let port = authority[end + 1..].strip_prefix(':');
                (host, port)
            }
            None => (authority, None),
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => (host, Some(port)),
        _ => (authority, None),
    }
}

fn host_allowed(authority: &str, allowed: &Allowed) -> bool {
    let authority = authority.trim().to_ascii_lowercase();
    let (host, _) = split_port(&authority);
    match allowed {
        Allowed::Any => true,
        Allowed::Loopback => LOOPBACK_NAMES.contains(&host),
        Allowed::List(names) => names.iter().any(|name| {
            let name = name.to_ascii_lowercase();
            name == authority || name == host
        }),
    }
}

fn origin_allowed(origin: &str, allowed: &Allowed) -> bool {
    let origin = origin.trim().to_ascii_lowercase();
    match allowed {
        Allowed::Any => true,
        Allowed::Loopback => {
            let Some((scheme, authority)) = origin.split_once("://") else {
                return false;
            };
            (scheme == "http" || scheme == "https") && host_allowed(authority, allowed)
        }
        Allowed::List(names) => names.iter().any(|name| {
            let name = name.to_ascii_lowercase();
            if name.contains("://") {
                return name == origin;
            }
            origin
                .split_once("://")
                .is_some_and(|(_, authority)| host_allowed(authority, &Allowed::List(vec![name])))
        }),
    }
}

/// The checks of every request.
#[derive(Debug, Clone)]
pub struct Policy {
    pub hosts: Allowed,
    pub origins: Allowed,
    /// Accepted bearer tokens; none means no authentication.
    pub tokens: Vec<String>,
}

impl Policy {
    /// The default for a server bound to `ip`: loopback names on a loopback
    /// address; on any other, `None` (the names must be given).
    pub fn default_for(ip: IpAddr) -> Option<Allowed> {
        ip.is_loopback().then_some(Allowed::Loopback)
    }

    /// Checks `Host` and `Origin` (a request without `Origin` is not from a
    /// browser page and passes that check; one without `Host` is refused).
    pub fn check_origin(&self, host: Option<&str>, origin: Option<&str>) -> Result<(), Refusal> {
        if let Some(origin) = origin {
            if !origin_allowed(origin, &self.origins) {
                return Err(Refusal::Origin(origin.to_string()));
            }
        }
        match host {
            Some(host) if host_allowed(host, &self.hosts) => Ok(()),
            Some(host) => Err(Refusal::Host(host.to_string())),
            None if self.hosts == Allowed::Any => Ok(()),
            None => Err(Refusal::Host(String::new())),
        }
    }

    /// Checks the `Authorization` header against the tokens, if any are
    /// configured; passes on who is asking (see [`Policy::principal`]).
    pub fn check_token(&self, authorization: Option<&str>) -> Result<Option<Principal>, Refusal> {
        if self.tokens.is_empty() {
            return Ok(None);
        }
        match (authorization, self.principal(authorization)) {
            (_, Some(principal)) => Ok(Some(principal)),
            (None, None) => Err(Refusal::Token { sent: false }),
            (Some(_), None) => Err(Refusal::Token { sent: true }),
        }
    }

    /// Who the `Authorization` header says is asking, if it carries one of
    /// the configured tokens: the token's hash, so a session serves only
    /// whoever opened it.
    pub fn principal(&self, authorization: Option<&str>) -> Option<Principal> {
        let token = bearer_token(authorization)?;
        // Every token is compared, each in constant time, so the time taken
        // tells nothing about how close a guess was.
        let matched = self.tokens.iter().fold(false, |found, t| {
            constant_time_eq(t.as_bytes(), token.as_bytes()) | found
        });
        matched.then(|| token_hash(token))
    }
}

/// Who a request comes from: the SHA-256 hash of its bearer token (the
/// token itself is kept nowhere).
pub type Principal = [u8; 32];

/// The token of an `Authorization: Bearer <token>` header.
pub fn bearer_token(authorization: Option<&str>) -> Option<&str> {
    let (scheme, token) = authorization?.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

pub fn token_hash(token: &str) -> Principal {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes()).into()
}

/// Who owns the tasks a request creates, and so which tasks it reaches.
///
/// When the token function described the holder (`identity`), the owner is
/// that description, not the token: a client whose token was refreshed (a
/// new token for the same holder, as OAuth access tokens are every hour or
/// so) still reaches the tasks it started, which may run for a day. So the
/// description must name the holder alone; any field that differs between
/// two tokens of one holder (an expiry, a token id) makes each token an
/// owner of its own, which is safe but loses that. Otherwise (fixed tokens,
/// or a function that answered `TRUE`) the token is all there is to go on,
/// and its hash is the owner.
///
/// The description is digested in a canonical form (object keys sorted at
/// every level, since R lists keep their order) behind a prefix no token
/// can carry, so a description never digests like a token.
pub fn task_owner(token_hash: Principal, identity: Option<&Value>) -> crate::tasks::Owner {
    use sha2::Digest;
    let Some(identity) = identity else {
        return token_hash;
    };
    let mut text = String::new();
    canonical_json(identity, &mut text);
    let mut digest = sha2::Sha256::new();
    // A NUL cannot appear in a header value, so in no bearer token.
    digest.update(b"mcpserver task owner\0");
    digest.update(text.as_bytes());
    digest.finalize().into()
}

/// `value` as compact JSON with the keys of every object sorted.
fn canonical_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (n, key) in keys.into_iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical_json(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                canonical_json(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback() -> Policy {
        Policy {
            hosts: Allowed::Loopback,
            origins: Allowed::Loopback,
            tokens: Vec::new(),
        }
    }

    #[test]
    fn loopback_names_pass_and_others_are_refused() {
        let p = loopback();
        assert_eq!(p.check_origin(Some("127.0.0.1:8000"), None), Ok(()));
        assert_eq!(
            p.check_origin(Some("localhost"), Some("http://localhost:3000")),
            Ok(())
        );
        assert_eq!(
            p.check_origin(Some("[::1]:9"), Some("https://[::1]")),
            Ok(())
        );
        assert_eq!(
            p.check_origin(Some("evil.example.com"), Some("http://evil.example.com")),
            Err(Refusal::Origin("http://evil.example.com".into()))
        );
        assert_eq!(
            p.check_origin(Some("evil.example.com:8000"), None),
            Err(Refusal::Host("evil.example.com:8000".into()))
        );
        assert!(p.check_origin(None, None).is_err());
        assert!(p.check_origin(Some("localhost.evil.com"), None).is_err());
        assert!(p.check_origin(Some("localhost"), Some("null")).is_err());
    }

    #[test]
    fn lists_name_hosts_with_or_without_ports_and_origins() {
        let p = Policy {
            hosts: Allowed::List(vec!["mcp.example.com".into(), "10.0.0.5:8443".into()]),
            origins: Allowed::List(vec![
                "https://app.example.com".into(),
                "mcp.example.com".into(),
            ]),
            tokens: Vec::new(),
        };
        assert_eq!(p.check_origin(Some("MCP.example.com:443"), None), Ok(()));
        assert_eq!(p.check_origin(Some("10.0.0.5:8443"), None), Ok(()));
        assert!(p.check_origin(Some("10.0.0.5:80"), None).is_err());
        assert_eq!(
            p.check_origin(Some("mcp.example.com"), Some("https://app.example.com")),
            Ok(())
        );
        assert_eq!(
            p.check_origin(Some("mcp.example.com"), Some("http://mcp.example.com:1")),
            Ok(())
        );
        assert!(p
            .check_origin(Some("mcp.example.com"), Some("http://app.example.com"))
            .is_err());
    }

    #[test]
    fn bearer_tokens_are_checked_when_configured() {
        let mut p = loopback();
        assert_eq!(p.check_token(None), Ok(None));
        p.tokens = vec!["s3cret".into(), "other".into()];
        assert_eq!(
            p.check_token(Some("Bearer s3cret")),
            Ok(Some(token_hash("s3cret")))
        );
        assert_eq!(
            p.check_token(Some("bearer other")),
            Ok(Some(token_hash("other")))
        );
        assert_ne!(token_hash("s3cret"), token_hash("other"));
        assert_eq!(p.check_token(None), Err(Refusal::Token { sent: false }));
        assert_eq!(
            p.check_token(Some("Bearer s3cre")),
            Err(Refusal::Token { sent: true })
        );
        assert_eq!(
            p.check_token(Some("Basic s3cret")),
            Err(Refusal::Token { sent: true })
        );
        assert_eq!(
            p.check_token(Some("s3cret")),
            Err(Refusal::Token { sent: true })
        );
    }

    #[test]
    fn a_described_holder_owns_tasks_whatever_the_token_or_key_order() {
        use serde_json::json;
        let (old, new) = (token_hash("old-token"), token_hash("refreshed-token"));
        let ann = json!({"user": "ann", "org": {"id": 1, "name": "x"}});
        let ann_reordered = json!({"org": {"name": "x", "id": 1}, "user": "ann"});
        assert_eq!(
            task_owner(old, Some(&ann)),
            task_owner(new, Some(&ann_reordered))
        );
        assert_ne!(
            task_owner(old, Some(&ann)),
            task_owner(
                old,
                Some(&json!({"user": "bob", "org": {"id": 1, "name": "x"}}))
            )
        );
        // Without a description each token is its own owner.
        assert_eq!(task_owner(old, None), old);
        assert_ne!(task_owner(old, None), task_owner(new, None));
        assert_ne!(task_owner(old, Some(&ann)), old);
    }
}
