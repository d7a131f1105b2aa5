//! The server's own threads, and what happens when one panics.
//!
//! A panic must never leave a thread silently dead (a dead reader would
//! deafen the server, a dead timer would leave a call unanswered). Each
//! thread runs under a catch: a panic is logged to stderr, whatever the
//! process's panic hook does (extendr's hook prints nothing), and handed to
//! the server, which stops serving with a clear message.

/// Locks `mutex`, even one poisoned by a thread that panicked holding it.
/// A panic is caught and stops the server (see above), so the state
/// behind the lock is only ever read on the way out; refusing it would
/// turn one panic into a cascade of them.
pub fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

use std::any::Any;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::thread::JoinHandle;

/// The text of a panic's payload.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// The line a panic on `thread` is logged as.
pub fn describe_panic(thread: &str, message: &str) -> String {
    format!("mcpserver: internal error on the {thread} thread: {message}")
}

/// The short name of the calling thread ("reader" for `mcp-reader`); R's
/// main thread, which Rust did not start, is "R".
pub fn current_name() -> String {
    let thread = std::thread::current();
    match thread.name() {
        Some(name) if name.starts_with("mcp-") => name["mcp-".len()..].to_string(),
        _ => "R".to_string(),
    }
}

/// Runs `body`, returning the panic's message if it panicked.
pub fn catch(body: impl FnOnce()) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(body)).map_err(|payload| panic_message(&*payload))
}

/// Blocks SIGPIPE and SIGINT in the calling thread: a closed pipe becomes an
/// `EPIPE` error instead of a signal (R's handler must not run here), and
/// Ctrl-C is left to R's main thread.
pub fn block_signals_in_this_thread() {
    // SAFETY: building a signal set and changing this thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Starts thread `mcp-<name>`, with SIGPIPE and SIGINT blocked (see
/// [`block_signals_in_this_thread`]). If `body` panics,
/// `on_panic` gets the message.
pub fn spawn(
    name: &str,
    on_panic: impl FnOnce(String) + Send + 'static,
    body: impl FnOnce() + Send + 'static,
) -> io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name(format!("mcp-{name}"))
        .spawn(move || {
            block_signals_in_this_thread();
            if let Err(message) = catch(body) {
                on_panic(message);
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_panicking_thread_reports_its_message_and_name() {
        let (tx, rx) = mpsc::channel();
        let handle = spawn(
            "probe",
            move |message| tx.send(message).unwrap(),
            || {
                assert_eq!(current_name(), "probe");
                panic!("injected {}", 42);
            },
        )
        .unwrap();
        handle.join().expect("the thread itself ends normally");
        assert_eq!(rx.recv().unwrap(), "injected 42");
        assert_eq!(
            describe_panic("probe", "injected 42"),
            "mcpserver: internal error on the probe thread: injected 42"
        );
    }

    #[test]
    fn a_thread_that_does_not_panic_reports_nothing() {
        let (tx, rx) = mpsc::channel::<String>();
        spawn("calm", move |m| tx.send(m).unwrap(), || {})
            .unwrap()
            .join()
            .unwrap();
        assert!(rx.recv().is_err());
    }
}
