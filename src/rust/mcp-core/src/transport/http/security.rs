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
    /// 400: no `Host`, more than one, or one that is not a host (RFC 9112
    /// section 3.2); the text says which.
    BadHost(String),
    /// 403: an `Origin` the server does not accept (or more than one, or
    /// one that is not an origin).
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

/// A host and port as `Host` carries them (RFC 9112 section 3.2, RFC 3986
/// section 3.2.2), lower-cased: `uri-host [":" port]`, where the host is
/// an IP literal in brackets or a name made of letters, digits,
/// `-._~!$&'()*+,;=` and %-escapes, and the port is digits. Anything else
/// is not a host: `localhost:80@evil.com` (user information, which `Host`
/// cannot carry), `[::1]evil`, `localhost:abc`, an empty name.
#[derive(Debug, PartialEq, Eq)]
struct Authority {
    host: String,
    port: Option<String>,
}

impl Authority {
    fn parse(text: &str) -> Option<Authority> {
        let text = text.to_ascii_lowercase();
        let (host, port) = if text.starts_with('[') {
            let end = text.find(']')?;
            let literal = &text[1..end];
            let is_literal = !literal.is_empty()
                && literal
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
            if !is_literal {
                return None;
            }
            let rest = &text[end + 1..];
            let port = match rest.strip_prefix(':') {
                Some(port) => Some(port),
                None if rest.is_empty() => None,
                None => return None,
            };
            (&text[..=end], port)
        } else {
            let (host, port) = match text.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (text.as_str(), None),
            };
            if host.is_empty() || !is_reg_name(host) {
                return None;
            }
            (host, port)
        };
        if let Some(port) = port {
            if port.is_empty() || port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
        }
        Some(Authority {
            host: host.to_string(),
            port: port.map(str::to_string),
        })
    }

    /// `host[:port]` as parsed.
    fn text(&self) -> String {
        match &self.port {
            Some(port) => format!("{}:{port}", self.host),
            None => self.host.clone(),
        }
    }
}

/// RFC 3986 `reg-name`: unreserved characters, sub-delimiters and
/// %-escapes (two hex digits each).
fn is_reg_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'%' => {
                let escaped = bytes.get(at + 1..at + 3);
                if !escaped.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                    return false;
                }
                at += 3;
                continue;
            }
            b if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=".contains(&b) => {}
            _ => return false,
        }
        at += 1;
    }
    true
}

fn host_allowed(authority: &Authority, allowed: &Allowed) -> bool {
    match allowed {
        Allowed::Any => true,
        Allowed::Loopback => LOOPBACK_NAMES.contains(&authority.host.as_str()),
        Allowed::List(names) => {
            let full = authority.text();
            names.iter().any(|name| {
                let name = name.to_ascii_lowercase();
                name == full || name == authority.host
            })
        }
    }
}

/// An `Origin` (RFC 6454 section 7): `scheme "://" host [":" port]`, with
/// nothing after it; the scheme lower-cased. `null` and anything else is
/// not an origin with a host.
fn parse_origin(origin: &str) -> Option<(String, Authority)> {
    let (scheme, authority) = origin.split_once("://")?;
    let scheme_ok = scheme
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.');
    if !scheme_ok {
        return None;
    }
    Some((scheme.to_ascii_lowercase(), Authority::parse(authority)?))
}

fn origin_allowed(origin: &str, allowed: &Allowed) -> bool {
    if *allowed == Allowed::Any {
        return true;
    }
    let Some((scheme, authority)) = parse_origin(origin) else {
        return false;
    };
    match allowed {
        Allowed::Any => true,
        Allowed::Loopback => {
            (scheme == "http" || scheme == "https") && host_allowed(&authority, allowed)
        }
        Allowed::List(names) => {
            let full = format!("{scheme}://{}", authority.text());
            names.iter().any(|name| {
                let name = name.to_ascii_lowercase();
                if name.contains("://") {
                    return name == full;
                }
                host_allowed(&authority, &Allowed::List(vec![name]))
            })
        }
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
        let Some(host) = host else {
            return match self.hosts {
                Allowed::Any => Ok(()),
                _ => Err(Refusal::BadHost("no Host header".into())),
            };
        };
        let Some(authority) = Authority::parse(host.trim()) else {
            return Err(Refusal::BadHost(format!("{host:?} is not a host")));
        };
        if host_allowed(&authority, &self.hosts) {
            Ok(())
        } else {
            Err(Refusal::Host(host.to_string()))
        }
    }

    /// The checks of [`Policy::check_origin`] on a request as it came: the
    /// host is the target's own when it is in absolute form (RFC 9112
    /// section 3.2.2: `Host` is ignored then), and more than one `Host` or
    /// `Origin` line, or a value that is not visible ASCII, is refused
    /// rather than read as some other value or as absent.
    pub fn check_request(
        &self,
        uri: &hyper::Uri,
        headers: &hyper::HeaderMap,
    ) -> Result<(), Refusal> {
        let origin = match single_value(headers, hyper::header::ORIGIN) {
            Ok(origin) => origin,
            Err(why) => return Err(Refusal::Origin(why)),
        };
        if let Some(authority) = uri.authority() {
            return self.check_origin(Some(authority.as_str()), origin);
        }
        match single_value(headers, hyper::header::HOST) {
            Ok(host) => self.check_origin(host, origin),
            Err(why) => Err(Refusal::BadHost(why)),
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

/// The one value of header `name`, if any: an error (saying why) for two
/// or more lines, or for a value that is not visible ASCII.
fn single_value(
    headers: &hyper::HeaderMap,
    name: hyper::header::HeaderName,
) -> Result<Option<&str>, String> {
    let mut values = headers.get_all(&name).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(format!("more than one {name} header"));
    }
    match first.to_str() {
        Ok(text) => Ok(Some(text)),
        Err(_) => Err(format!("a {name} header that is not visible ASCII")),
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
pub fn task_owner(token_hash: Principal, identity: Option<&Value>) -> crate::stores::tasks::Owner {
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
    fn hosts_and_origins_that_are_not_what_rfc_9112_and_6454_allow_are_refused() {
        let p = loopback();
        for host in [
            "localhost:80@evil.com",
            "[::1]evil",
            "localhost:abc",
            "localhost:",
            "",
            ":8000",
            "local host",
            "[::1",
            "[]",
            "[evil.com]",
            "localhost:8000/x",
            "%zz",
        ] {
            assert!(
                matches!(p.check_origin(Some(host), None), Err(Refusal::BadHost(_))),
                "{host:?}"
            );
        }
        assert!(matches!(
            p.check_origin(None, None),
            Err(Refusal::BadHost(_))
        ));
        assert_eq!(p.check_origin(Some("LocalHost:65535"), None), Ok(()));
        assert_eq!(p.check_origin(Some("[::1]"), None), Ok(()));
        for origin in [
            "http://localhost:80@evil.com",
            "http://user@localhost",
            "http://localhost:abc",
            "http://[::1]evil",
            "http://localhost/",
            "http://localhost/path",
            "localhost",
            "://localhost",
            "1http://localhost",
            "null",
        ] {
            assert_eq!(
                p.check_origin(Some("localhost"), Some(origin)),
                Err(Refusal::Origin(origin.into())),
                "{origin:?}"
            );
        }
        assert_eq!(
            p.check_origin(Some("localhost"), Some("HTTP://LOCALHOST:3000")),
            Ok(())
        );
    }

    #[test]
    fn a_request_as_it_came_is_checked_line_by_line_and_by_its_own_target() {
        use hyper::header::{HeaderValue, HOST, ORIGIN};
        let p = loopback();
        let check = |target: &str, lines: &[(&hyper::header::HeaderName, &[u8])]| {
            let uri: hyper::Uri = target.parse().unwrap();
            let mut headers = hyper::HeaderMap::new();
            for (name, value) in lines {
                headers.append(*name, HeaderValue::from_bytes(value).unwrap());
            }
            p.check_request(&uri, &headers)
        };
        assert_eq!(check("/mcp", &[(&HOST, b"localhost:8000")]), Ok(()));
        assert!(matches!(
            check("/mcp", &[(&HOST, b"localhost"), (&HOST, b"localhost")]),
            Err(Refusal::BadHost(_))
        ));
        assert!(matches!(
            check("/mcp", &[(&HOST, b"localh\xc3\xb6st")]),
            Err(Refusal::BadHost(_))
        ));
        // The absolute form's own host counts, whatever Host says.
        assert!(matches!(
            check("http://evil.com/mcp", &[(&HOST, b"localhost")]),
            Err(Refusal::Host(_))
        ));
        assert_eq!(
            check("http://localhost:8000/mcp", &[(&HOST, b"evil.com")]),
            Ok(())
        );
        assert!(matches!(
            check("http://localhost:80@evil.com/mcp", &[(&HOST, b"localhost")]),
            Err(Refusal::BadHost(_))
        ));
        let host = (&HOST, &b"localhost"[..]);
        assert!(matches!(
            check("/mcp", &[host, (&ORIGIN, b"http://localh\xc3\xb6st")]),
            Err(Refusal::Origin(_))
        ));
        assert!(matches!(
            check(
                "/mcp",
                &[
                    host,
                    (&ORIGIN, b"http://localhost"),
                    (&ORIGIN, b"http://evil.com")
                ]
            ),
            Err(Refusal::Origin(_))
        ));
        assert_eq!(
            check("/mcp", &[host, (&ORIGIN, b"http://localhost")]),
            Ok(())
        );
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
