//! Where the client connects ([`Endpoint`], parsed from a plain `http://`
//! URL) and how ([`Options`]: token, headers, bounds).

use std::time::Duration;

/// Where the server is: `http://host[:port]/path[?query]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    /// The request target: path and query.
    pub target: String,
    /// `host[:port]` as the URL spells it, for the `Host` header.
    pub authority: String,
}

impl Endpoint {
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let Some(rest) = url.strip_prefix("http://") else {
            if url.starts_with("https://") {
                return Err(format!(
                    "`{url}` is an https:// URL, and this client speaks plain http:// only: \
                     reach a remote server through a local proxy that adds TLS, or point \
                     the MCP client at the URL directly if it speaks HTTP"
                ));
            }
            return Err(format!("`{url}` is not an http:// URL"));
        };
        let rest = rest.split('#').next().unwrap_or_default();
        let split = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, target) = rest.split_at(split);
        let target = match target {
            "" => "/".to_string(),
            t if t.starts_with('?') => format!("/{t}"),
            t => t.to_string(),
        };
        if authority.contains('@') {
            return Err(format!(
                "`{url}` has a user name or password in it; give a bearer token instead"
            ));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let Some((host, after)) = v6.split_once(']') else {
                return Err(format!("`{url}` has an unterminated [IPv6] host"));
            };
            (host.to_string(), after.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host.to_string(), Some(port)),
                None => (authority.to_string(), None),
            }
        };
        if host.is_empty() {
            return Err(format!("`{url}` has no host"));
        }
        let port = match port {
            None => 80,
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| format!("`{url}` has an invalid port"))?,
        };
        if target.bytes().any(|b| !(0x21..=0x7e).contains(&b)) {
            return Err(format!(
                "`{url}` has spaces or other characters a URL must percent-encode"
            ));
        }
        Ok(Endpoint {
            host,
            port,
            target,
            authority: authority.to_string(),
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}{}", self.authority, self.target)
    }
}

/// How the client behaves.
#[derive(Debug, Clone)]
pub struct Options {
    /// Sent as `Authorization: Bearer <token>` on every request.
    pub bearer_token: Option<String>,
    /// More headers for every request (a proxy's own authentication, ...).
    pub headers: Vec<(String, String)>,
    /// The largest message accepted from the server (a JSON body, or one
    /// line of an event stream).
    pub max_message_size: usize,
    /// Requests awaiting their answers at once; sending another waits.
    pub max_requests: usize,
    /// Open the session's GET stream (for messages unrelated to a request)
    /// once the session is initialized, if the server offers one.
    pub listen: bool,
    pub connect_timeout: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            bearer_token: None,
            headers: Vec::new(),
            max_message_size: 32 * 1024 * 1024,
            max_requests: 64,
            listen: true,
            connect_timeout: Duration::from_secs(10),
        }
    }
}
