//! SIGTERM while an HTTP server serves: a graceful stop instead of death.
//!
//! By default SIGTERM ends a process at once, cutting every open event
//! stream mid-body and leaving in-flight calls unanswered. While a
//! [`Termination`] is held, SIGTERM instead runs its callback (the server
//! stops accepting, answers what is in flight and ends its streams, and R's
//! loop is told to return); the process is expected to end by itself once
//! the server has stopped, which for `Rscript server.R` means exiting 0.
//!
//! Bounded time: if the server has not stopped [`GRACE`] after the
//! signal (R is stuck in compiled code that never checks for interrupts,
//! or busy with a command of its own at the console of a session serving
//! in the background), the process exits with status 0 then: its clients
//! were answered within the HTTP server's own, shorter, drain time. A
//! second SIGTERM ends the process at once, as SIGTERM normally does.
//!
//! Only a process whose SIGTERM does what it does by default is taken
//! over: if something else handles or ignores it, it is left alone. A
//! child forked from the process (`parallel::mcparallel()`) inherits the
//! handler, but not the server: there SIGTERM does what it does by
//! default.
//!
//! SIGINT is not handled here: in the foreground it is R's interrupt,
//! which stops R's serving loop (and the server then stops gracefully);
//! in a session serving in the background it belongs to the console.

use std::io;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long after SIGTERM the process waits for the server to stop before
/// it exits anyway: above the HTTP server's drain time (2 s), below the
/// 10 s a container runtime waits before it kills.
pub const GRACE: Duration = Duration::from_secs(5);

/// What SIGTERM runs.
pub type Callback = Arc<dyn Fn() + Send + Sync>;

/// The write end of the pipe the handler writes to (-1: none yet).
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
/// The process that installed the handler.
static OWNER: AtomicI32 = AtomicI32::new(0);
/// A SIGTERM has come since the handler was installed.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

use crate::util::threads::lock;

struct Registry {
    callbacks: Vec<(u64, Callback)>,
    next: u64,
    /// The disposition SIGTERM had before, while the handler is installed.
    previous: Option<libc::sigaction>,
    /// The thread reading the pipe has started.
    watching: bool,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    callbacks: Vec::new(),
    next: 0,
    previous: None,
    watching: false,
});
/// Rung when a callback goes (a server stopped).
static CHANGED: Condvar = Condvar::new();

/// While held, SIGTERM runs the callback given to [`on_sigterm`].
pub struct Termination {
    id: u64,
}

impl Drop for Termination {
    fn drop(&mut self) {
        let mut registry = lock(&REGISTRY);
        registry.callbacks.retain(|(id, _)| *id != self.id);
        if registry.callbacks.is_empty() {
            if let Some(previous) = registry.previous.take() {
                // SAFETY: restores the disposition saved when installing.
                unsafe { libc::sigaction(libc::SIGTERM, &previous, std::ptr::null_mut()) };
            }
        }
        CHANGED.notify_all();
    }
}

/// Has SIGTERM run `callback` (on a thread of its own) until the returned
/// guard is dropped. `None` when SIGTERM is handled or ignored by
/// something else already, which is then left alone.
pub fn on_sigterm(callback: Callback) -> io::Result<Option<Termination>> {
    let mut registry = lock(&REGISTRY);
    if registry.callbacks.is_empty() {
        if !sigterm_is_default()? {
            return Ok(None);
        }
        if !registry.watching {
            start_watching()?;
            registry.watching = true;
        }
        SIGNALLED.store(false, Ordering::SeqCst);
        OWNER.store(std::process::id() as i32, Ordering::SeqCst);
        registry.previous = Some(install()?);
    }
    let id = registry.next;
    registry.next += 1;
    registry.callbacks.push((id, callback));
    Ok(Some(Termination { id }))
}

fn sigterm_is_default() -> io::Result<bool> {
    // SAFETY: reads the current disposition into a zeroed struct.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGTERM, std::ptr::null(), &mut current) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(current.sa_sigaction == libc::SIG_DFL)
    }
}

/// Installs the handler; returns the disposition it replaced.
fn install() -> io::Result<libc::sigaction> {
    // SAFETY: a handler that only makes async-signal-safe calls.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        let mut previous: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGTERM, &action, &mut previous) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(previous)
    }
}

/// The handler: async-signal-safe calls only (getpid, write, signal,
/// raise), and errno left as it was.
extern "C" fn on_signal(_: c_int) {
    // SAFETY: see above.
    unsafe {
        let errno = *errno_location();
        let forked = libc::getpid() != OWNER.load(Ordering::SeqCst);
        if forked || SIGNALLED.swap(true, Ordering::SeqCst) {
            // Not the server's process, or a second SIGTERM: die as by
            // default (the signal is blocked in here, and lands on return).
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            libc::raise(libc::SIGTERM);
        } else {
            let byte = 1u8;
            libc::write(
                PIPE_WRITE.load(Ordering::SeqCst),
                &byte as *const u8 as *const libc::c_void,
                1,
            );
        }
        *errno_location() = errno;
    }
}

/// Where the calling thread's `errno` lives (the handler must leave it as
/// it found it).
#[cfg(any(target_os = "linux", target_os = "android"))]
unsafe fn errno_location() -> *mut c_int {
    libc::__errno_location()
}

#[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
unsafe fn errno_location() -> *mut c_int {
    libc::__error()
}

#[cfg(any(target_os = "openbsd", target_os = "netbsd"))]
unsafe fn errno_location() -> *mut c_int {
    libc::__errno()
}

/// The thread that does what the handler cannot: runs the callbacks, and
/// ends the process if they do not stop the server within [`GRACE`].
fn start_watching() -> io::Result<()> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: a pipe whose ends live for the rest of the process, closed
    // in programs it starts (pipe2 is not on every Unix).
    unsafe {
        if libc::pipe(fds.as_mut_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
        for fd in fds {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    let [read_end, write_end] = fds;
    PIPE_WRITE.store(write_end, Ordering::SeqCst);
    crate::util::threads::spawn(
        "signals",
        |message| {
            eprintln!(
                "{}",
                crate::util::threads::describe_panic("signals", &message)
            )
        },
        move || loop {
            let mut byte = 0u8;
            // SAFETY: reads one byte into a local from the pipe's read end.
            let n = unsafe { libc::read(read_end, &mut byte as *mut u8 as *mut libc::c_void, 1) };
            if n == 1 {
                terminate();
            } else if n == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return;
            }
        },
    )?;
    Ok(())
}

fn terminate() {
    let callbacks: Vec<Callback> = lock(&REGISTRY)
        .callbacks
        .iter()
        .map(|(_, c)| c.clone())
        .collect();
    if callbacks.is_empty() {
        // The server stopped as the signal came: SIGTERM does what it did
        // before the server took it over (its default), not nothing.
        // SAFETY: resetting a disposition and raising a signal.
        unsafe {
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            libc::raise(libc::SIGTERM);
        }
        return;
    }
    for callback in callbacks {
        let _ = crate::util::threads::catch(|| callback());
    }
    let deadline = Instant::now() + GRACE;
    let mut registry = lock(&REGISTRY);
    while !registry.callbacks.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            eprintln!(
                "mcpserver: the server did not stop within {} s of SIGTERM; exiting",
                GRACE.as_secs()
            );
            // SAFETY: ends the process without running R's exit code on
            // this thread (R's main thread is busy elsewhere).
            unsafe { libc::_exit(0) };
        }
        registry = CHANGED
            .wait_timeout(registry, left)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
}
