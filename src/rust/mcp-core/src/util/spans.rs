//! Timing spans for profiling where a large message's time goes: with
//! `MCPSERVER_SPANS=1` in the environment, each span writes its label,
//! its duration and the bytes it concerns to stderr as it ends. Off (the
//! default), a span costs one relaxed load.

use std::sync::OnceLock;
use std::time::Instant;

/// The environment variable that turns spans on.
pub const SPANS_VAR: &str = "MCPSERVER_SPANS";

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var(SPANS_VAR).is_ok_and(|v| v == "1"))
}

/// The process's resident memory and its peak so far (Linux).
fn memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb / 1024)
    };
    format!("RSS {} MB, peak {} MB", field("VmRSS:"), field("VmHWM:"))
}

/// A timed step; reports when dropped (if spans are on).
pub struct Span {
    started: Option<(Instant, &'static str, usize)>,
}

/// Starts timing `label`, about `bytes` bytes.
pub fn span(label: &'static str, bytes: usize) -> Span {
    Span {
        started: enabled().then(|| (Instant::now(), label, bytes)),
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        if let Some((t0, label, bytes)) = self.started {
            let ms = t0.elapsed().as_secs_f64() * 1e3;
            eprintln!(
                "[mcpserver span] {label}: {ms:.1} ms, {bytes} bytes; {}",
                memory()
            );
        }
    }
}
