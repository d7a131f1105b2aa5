//! The transports of `mcp_client()`: a server process with its stdin and
//! stdout as pipes, exchanged line by line, or a server's Streamable HTTP
//! endpoint (see `mcp_core::client::http_client`), exchanged message by message.
//! Both offer R the same methods. The protocol itself is spoken in R
//! (`R/mcp_client.R`); this side owns the process or the connections and the
//! threads that read them, so R never blocks on anything it cannot
//! interrupt.

use crate::check;
use extendr_api::prelude::*;
use mcp_core::client::http_client::{self, HttpClient, Received};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// How often a client of this session's own background server looks
/// whether that server has calls for R to run.
const SERVING_SLICE: Duration = Duration::from_millis(2);

/// How much of the server's stderr is kept for error messages.
const STDERR_KEPT: usize = 16 * 1024;

/// A server process started by `mcp_client()`.
/// @noRd
#[extendr]
pub struct McpClientProcess {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
}

/// Starts `command args...` with piped stdin and stdout. `env` is a named
/// character vector added to the current environment.
/// @noRd
#[extendr]
fn client_start_(
    command: &str,
    args: Vec<String>,
    env_names: Vec<String>,
    env_values: Vec<String>,
) -> Robj {
    let mut cmd = Command::new(command);
    cmd.args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env_names.iter().zip(&env_values) {
        cmd.env(k, v);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return check::fail(format!("could not start `{command}`: {e}")),
    };
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr_pipe = child.stderr.take().expect("piped stderr");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let stderr = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_KEPT)));
    let sink = stderr.clone();
    std::thread::spawn(move || {
        let mut pipe = stderr_pipe;
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut kept = sink.lock().unwrap_or_else(|p| p.into_inner());
            kept.extend(&buf[..n]);
            let excess = kept.len().saturating_sub(STDERR_KEPT);
            kept.drain(..excess);
        }
    });
    McpClientProcess {
        stdin: child.stdin.take(),
        child: Some(child),
        lines,
        stderr,
    }
    .into()
}

#[extendr]
impl McpClientProcess {
    /// Writes one line (a newline is added). `NULL`, or an error to raise.
    /// @noRd
    fn send(&mut self, line: &str) -> Robj {
        let Some(stdin) = &mut self.stdin else {
            return check::fail("the connection to the server is closed");
        };
        let written = stdin
            .write_all(line.as_bytes())
            .and_then(|_| stdin.write_all(b"\n"))
            .and_then(|_| stdin.flush());
        match written {
            Ok(()) => ().into(),
            Err(e) => check::fail(format!("could not write to the server: {e}")),
        }
    }

    /// The next line the server wrote, waiting up to `timeout_ms`: a string,
    /// `NULL` on timeout, or `list(closed = TRUE)` once the server's stdout
    /// has ended. Ctrl-C ends the wait (`list(interrupted = TRUE)`).
    /// @noRd
    fn receive(&self, timeout_ms: f64) -> Robj {
        let deadline = Instant::now() + check::seconds(timeout_ms / 1000.0);
        loop {
            let wait =
                Duration::from_millis(20).min(deadline.saturating_duration_since(Instant::now()));
            match self.lines.recv_timeout(wait) {
                Ok(line) => return line.into(),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return List::from_pairs(vec![("closed", Robj::from(true))]).into()
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if crate::interrupt::interrupt_pending() {
                        return List::from_pairs(vec![("interrupted", Robj::from(true))]).into();
                    }
                    if Instant::now() >= deadline {
                        return ().into();
                    }
                }
            }
        }
    }

    /// What the server wrote to stderr lately.
    /// @noRd
    fn stderr(&self) -> String {
        let kept = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        String::from_utf8_lossy(&kept.iter().copied().collect::<Vec<u8>>()).into_owned()
    }

    /// Closes the server's stdin and waits up to `timeout_ms` for it to
    /// exit, killing it after that. Returns its exit status (`NA` if killed).
    /// @noRd
    fn close(&mut self, timeout_ms: f64) -> Robj {
        self.stdin = None;
        let Some(mut child) = self.child.take() else {
            return Robj::from(NA_INTEGER);
        };
        let deadline = Instant::now() + check::seconds(timeout_ms / 1000.0);
        loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    return status.code().map_or(Robj::from(NA_INTEGER), Robj::from)
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Robj::from(NA_INTEGER);
                }
            }
        }
    }

    /// Whether the server process is still running.
    /// @noRd
    fn alive(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }
}

impl Drop for McpClientProcess {
    fn drop(&mut self) {
        self.stdin = None;
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A server's Streamable HTTP endpoint, for `mcp_client(url)`.
/// @noRd
#[extendr]
pub struct McpClientHttp {
    client: HttpClient,
}

impl McpClientHttp {
    /// The next message, waiting up to `timeout_ms`; with `serving`, also
    /// until this session's background server has calls for R.
    fn wait(&self, timeout_ms: f64, serving: bool) -> Robj {
        let deadline = Instant::now() + check::seconds(timeout_ms / 1000.0);
        let slice = if serving {
            SERVING_SLICE
        } else {
            Duration::from_millis(20)
        };
        loop {
            if serving && crate::background::take_wake_up() {
                return List::from_pairs(vec![("serve", Robj::from(true))]).into();
            }
            let wait = slice.min(deadline.saturating_duration_since(Instant::now()));
            match self.client.receive(wait) {
                Received::Message(line) => return line.into(),
                Received::Closed => {
                    return List::from_pairs(vec![("closed", Robj::from(true))]).into()
                }
                Received::Timeout => {
                    if crate::interrupt::interrupt_pending() {
                        return List::from_pairs(vec![("interrupted", Robj::from(true))]).into();
                    }
                    if Instant::now() >= deadline {
                        return ().into();
                    }
                }
            }
        }
    }
}

/// The options of the HTTP client, from R's checked values.
pub fn http_options(
    token: Nullable<String>,
    header_names: Vec<String>,
    header_values: Vec<String>,
    max_message_size: f64,
) -> http_client::Options {
    http_client::Options {
        bearer_token: token.into_option().filter(|t| !t.is_empty()),
        headers: header_names.into_iter().zip(header_values).collect(),
        max_message_size: max_message_size as usize,
        ..http_client::Options::default()
    }
}

/// A client for the server at `url`; nothing is sent yet.
/// @noRd
#[extendr]
fn client_connect_(
    url: &str,
    token: Nullable<String>,
    header_names: Vec<String>,
    header_values: Vec<String>,
    max_message_size: f64,
) -> Robj {
    let options = http_options(token, header_names, header_values, max_message_size);
    match HttpClient::new(url, options) {
        Ok(client) => McpClientHttp { client }.into(),
        Err(e) => check::fail(e),
    }
}

#[extendr]
impl McpClientHttp {
    /// Sends one message. `NULL`, or an error to raise.
    /// @noRd
    fn send(&self, line: &str) -> Robj {
        check::outcome(self.client.send(line.as_bytes()))
    }

    /// The next message from the server, as `McpClientProcess$receive()`.
    /// @noRd
    fn receive(&self, timeout_ms: f64) -> Robj {
        self.wait(timeout_ms, false)
    }

    /// As `receive()`, for a client of this session's own background
    /// server: returns `list(serve = TRUE)` as soon as that server has
    /// calls for R to run, which R does before it waits again (the calls
    /// need R's thread, which is waiting here).
    /// @noRd
    fn receive_serving(&self, timeout_ms: f64) -> Robj {
        self.wait(timeout_ms, true)
    }

    /// What went wrong lately without an answer to show it (the HTTP
    /// side's counterpart of a process's stderr).
    /// @noRd
    fn stderr(&self) -> String {
        self.client.take_problems().join("\n")
    }

    /// Ends the session (`DELETE`) and closes every connection.
    /// @noRd
    fn close(&self, timeout_ms: f64) -> Robj {
        self.client.close(check::seconds(timeout_ms / 1000.0));
        ().into()
    }

    /// Whether the client is still open.
    /// @noRd
    fn alive(&self) -> bool {
        !self.client.is_closed()
    }

    /// The session the server assigned, or `NULL`.
    /// @noRd
    fn session_id(&self) -> Nullable<String> {
        self.client.session_id().into()
    }

    /// The URL, as the client will reach it.
    /// @noRd
    fn url(&self) -> String {
        self.client.endpoint().url()
    }
}

extendr_module! {
    mod client;
    impl McpClientProcess;
    impl McpClientHttp;
    fn client_start_;
    fn client_connect_;
}
