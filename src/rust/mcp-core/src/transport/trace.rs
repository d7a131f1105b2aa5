//! Diagnostics: with `MCPSERVER_TRACE=1` in the environment the server logs
//! every message it reads and writes, with the time since start, to stderr.

use crate::protocol::framing::Frame;
use std::time::Instant;

/// The environment variable that turns tracing on.
pub const TRACE_VAR: &str = "MCPSERVER_TRACE";

/// Longest message text a trace line shows.
const SHOWN: usize = 2000;

pub struct Trace {
    enabled: bool,
    start: Instant,
}

impl Trace {
    pub fn from_env() -> Trace {
        let enabled = std::env::var(TRACE_VAR)
            .map(|v| !matches!(v.trim(), "" | "0" | "false" | "FALSE" | "no"))
            .unwrap_or(false);
        Trace::new(enabled)
    }

    pub fn new(enabled: bool) -> Trace {
        Trace {
            enabled,
            start: Instant::now(),
        }
    }

    pub fn inbound(&self, frame: &Frame) {
        if !self.enabled {
            return;
        }
        match frame {
            Frame::Line(bytes) => self.line("<-", &String::from_utf8_lossy(bytes)),
            Frame::Oversized { length, .. } => {
                self.note(&format!("<- a line of {length} bytes, over the size limit"))
            }
        }
    }

    pub fn outbound(&self, text: &str) {
        if self.enabled {
            self.line("->", text);
        }
    }

    pub fn note(&self, text: &str) {
        if self.enabled {
            self.line("..", text);
        }
    }

    fn line(&self, arrow: &str, text: &str) {
        let ms = self.start.elapsed().as_secs_f64() * 1000.0;
        let shown: String = text.chars().take(SHOWN).collect();
        let more = if shown.len() < text.len() {
            format!(" ... ({} bytes)", text.len())
        } else {
            String::new()
        };
        eprintln!("[mcpserver {ms:>10.3} ms] {arrow} {shown}{more}");
    }
}
