//! Serving from a live R session (`mcp_server(background = TRUE)`): tool
//! calls run on R's main thread between the user's commands, when R waits
//! for input at the console.
//!
//! R's event loop (on Unix) watches file descriptors registered with
//! `addInputHandler()` while it waits, and runs their handlers. The server's
//! threads write a byte to a socket whenever a call is queued (the engine's
//! waker); R sees it at its next wait and runs `background_service()` (see
//! `R/background.R`), which takes the queued calls and runs them as the
//! foreground loop does. The handler evaluates that R function inside
//! `R_ToplevelExec`, so an R error or a jump can never cross a Rust frame.
//! One background server per session at a time.
//!
//! Calls of `concurrent = TRUE` tools run in worker processes, which R must
//! look at while they run (their results, progress, cancels and limits):
//! `background_wake_after_()` asks for a wake-up after a while, which a
//! small timer thread delivers through the same socket.

use crate::check;
use crate::server::McpServer;
use extendr_api::prelude::*;
use extendr_ffi::{R_GlobalEnv, R_PreserveObject, R_ReleaseObject, SEXP};
use mcp_core::util::threads::lock;
use std::cell::RefCell;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::raw::{c_int, c_void};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// R's `InputHandler` (R_ext/eventloop.h).
#[repr(C)]
struct InputHandler {
    activity: c_int,
    file_descriptor: c_int,
    handler: Option<unsafe extern "C" fn(*mut c_void)>,
    next: *mut InputHandler,
    active: c_int,
    user_data: *mut c_void,
}

extern "C" {
    static mut R_InputHandlers: *mut InputHandler;
    fn addInputHandler(
        handlers: *mut InputHandler,
        fd: c_int,
        handler: Option<unsafe extern "C" fn(*mut c_void)>,
        activity: c_int,
    ) -> *mut InputHandler;
    fn removeInputHandler(handlers: *mut *mut InputHandler, it: *mut InputHandler) -> c_int;
    fn R_ToplevelExec(fun: Option<unsafe extern "C" fn(*mut c_void)>, data: *mut c_void) -> c_int;
    // SEXPs as plain pointers: extendr's SEXPREC is not FFI-safe to name.
    fn Rf_eval(call: *mut c_void, env: *mut c_void) -> *mut c_void;
    /// Selects on R's input descriptors (R_ext/eventloop.h); the set it
    /// fills is R's own static one, which the waiting console loop reads.
    fn R_checkActivity(usec: c_int, ignore_stdin: c_int) -> *mut c_void;
}

/// The activity number R's event loop reports for this handler (any number
/// above R's own, which stop at 2, distinguishes it).
const ACTIVITY: c_int = 77;

/// The registered handler: the socket R watches, and the call it runs.
struct Background {
    watched: OwnedFd,
    handler: *mut InputHandler,
    service: SEXP,
    alarm: Arc<Alarm>,
    alarm_thread: Option<JoinHandle<()>>,
}

/// When R wants to be woken next without news from the server (to look at
/// its workers), for the timer thread.
#[derive(Default)]
struct Alarm {
    state: Mutex<AlarmState>,
    changed: Condvar,
}

#[derive(Default)]
struct AlarmState {
    due: Option<Instant>,
    stop: bool,
}

impl Alarm {
    /// Wakes R at `due` (the earlier of this and one already set).
    fn set(&self, due: Instant) {
        let mut state = lock(&self.state);
        state.due = Some(state.due.map_or(due, |d| d.min(due)));
        self.changed.notify_one();
    }

    fn stop(&self) {
        lock(&self.state).stop = true;
        self.changed.notify_one();
    }

    /// The timer thread: sleeps until an alarm is due, then rings.
    fn run(&self, ring: impl Fn()) {
        let mut state = lock(&self.state);
        loop {
            if state.stop {
                return;
            }
            match state.due {
                Some(due) if due <= Instant::now() => {
                    state.due = None;
                    ring();
                }
                Some(due) => {
                    let wait = due.saturating_duration_since(Instant::now());
                    state = self
                        .changed
                        .wait_timeout(state, wait)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
                None => {
                    state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner());
                }
            }
        }
    }
}

/// Writes one wake-up byte (one is enough: a full socket already means
/// "look").
fn ring(signal: &OwnedFd) {
    // SAFETY: a send on a socket we own; MSG_NOSIGNAL: no SIGPIPE.
    unsafe {
        libc::send(
            signal.as_raw_fd(),
            b"!".as_ptr().cast(),
            1,
            libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
        );
    }
}

thread_local! {
    // R's main thread only: R runs input handlers there.
    static ACTIVE: RefCell<Option<Background>> = const { RefCell::new(None) };
}

/// A connected pair of non-blocking, close-on-exec Unix sockets.
fn socket_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: two descriptors are written into `fds` on success.
    if unsafe { libc::socketpair(libc::AF_UNIX, socket_kind(), 0, fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors, each owned once.
    let pair = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    #[cfg(target_vendor = "apple")]
    for fd in [&pair.0, &pair.1] {
        nonblocking_cloexec(fd.as_raw_fd())?;
    }
    Ok(pair)
}

#[cfg(not(target_vendor = "apple"))]
fn socket_kind() -> c_int {
    libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC
}

/// macOS takes no flags at creation: they are set just after, on R's main
/// thread, the only one that forks.
#[cfg(target_vendor = "apple")]
fn socket_kind() -> c_int {
    libc::SOCK_STREAM
}

#[cfg(target_vendor = "apple")]
fn nonblocking_cloexec(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: flag changes on a descriptor we own.
    let done = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0
            && libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) == 0
            && libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) == 0
    };
    if done {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Reads whatever wake-up bytes are waiting (the socket is non-blocking).
fn drain(fd: RawFd) {
    let mut buf = [0u8; 64];
    // SAFETY: reading into a local buffer of the given length.
    while unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
}

unsafe extern "C" fn run_service(_: *mut c_void) {
    // The call is copied out first: no borrow is alive while R runs.
    let service = ACTIVE.with(|a| a.borrow().as_ref().map(|b| b.service));
    if let Some(service) = service {
        Rf_eval(service.cast(), R_GlobalEnv.cast());
    }
}

unsafe extern "C" fn on_wake(_: *mut c_void) {
    let fd = ACTIVE.with(|a| a.borrow().as_ref().map(|b| b.watched.as_raw_fd()));
    let Some(fd) = fd else { return };
    drain(fd);
    // An R error ends here, at R's own boundary, with its message printed.
    R_ToplevelExec(Some(run_service), std::ptr::null_mut());
    // A call may have read the console itself (run_r_code asking "Run it?"
    // through readline()): the nested read left stdin marked ready in the
    // set the waiting console loop looks at next, so the loop would block
    // in its read of stdin, running no handler, until the user typed
    // again. A select that does not wait refreshes that set to what is
    // ready now.
    R_checkActivity(0, 0);
}

/// Serves `server` from R's event loop: `service` (an R call) runs whenever
/// calls are queued. `NULL`, or an error to raise.
/// @noRd
#[extendr]
fn background_attach_(server: Robj, service: Robj) -> Robj {
    let Ok(server) = <&McpServer>::try_from(&server) else {
        return check::fail("not a server");
    };
    let Some(engine) = server.engine() else {
        return check::fail("the server has stopped");
    };
    if ACTIVE.with(|a| a.borrow().is_some()) {
        return check::fail(
            "a server is already serving in the background in this session; stop it first",
        );
    }
    let (watched, signal) = match socket_pair() {
        Ok(pair) => pair,
        Err(e) => return check::fail(format!("could not make the wake-up socket: {e}")),
    };
    // SAFETY: R's main thread (a .Call); the handler list is R's.
    let handler = unsafe {
        addInputHandler(
            R_InputHandlers,
            watched.as_raw_fd(),
            Some(on_wake),
            ACTIVITY,
        )
    };
    // SAFETY: the call's SEXP, kept from R's garbage collector until
    // detached.
    let service = unsafe {
        let service = service.get();
        R_PreserveObject(service);
        service
    };
    let signal = Arc::new(signal);
    let alarm = Arc::new(Alarm::default());
    let alarm_thread = {
        let (alarm, signal) = (alarm.clone(), signal.clone());
        std::thread::Builder::new()
            .name("mcpserver-background-alarm".into())
            .spawn(move || alarm.run(|| ring(&signal)))
            .ok()
    };
    ACTIVE.with(|a| {
        *a.borrow_mut() = Some(Background {
            watched,
            handler,
            service,
            alarm,
            alarm_thread,
        })
    });
    engine.set_waker(Some(Arc::new(move || ring(&signal))));
    ().into()
}

/// Stops watching: removes the handler, forgets the waker. Safe to call
/// when nothing is attached.
/// @noRd
#[extendr]
fn background_detach_(server: Robj) {
    if let Ok(server) = <&McpServer>::try_from(&server) {
        if let Some(engine) = server.engine() {
            engine.set_waker(None);
        }
    }
    let Some(background) = ACTIVE.with(|a| a.borrow_mut().take()) else {
        return;
    };
    // SAFETY: R's main thread; the handler was added by attach and is
    // removed once; the call was preserved by attach.
    unsafe {
        removeInputHandler(std::ptr::addr_of_mut!(R_InputHandlers), background.handler);
        R_ReleaseObject(background.service);
    }
    background.alarm.stop();
    if let Some(thread) = background.alarm_thread {
        let _ = thread.join();
    }
}

/// Wakes the background service again after `ms` milliseconds, even if
/// the server has no news (R looks at its workers then). Does nothing when
/// nothing serves in the background.
/// @noRd
#[extendr]
fn background_wake_after_(ms: f64) {
    let ms = if ms.is_finite() {
        ms.clamp(0.0, 60_000.0)
    } else {
        0.0
    };
    ACTIVE.with(|a| {
        if let Some(background) = a.borrow().as_ref() {
            background
                .alarm
                .set(Instant::now() + Duration::from_secs_f64(ms / 1000.0));
        }
    });
}

/// Whether the background server has news for R (a wake-up byte waits),
/// taking it: for `mcp_client()`, which serves this session's own server
/// while it waits for one of its answers (R's event loop does not run
/// then). False when nothing serves in the background.
pub fn take_wake_up() -> bool {
    let fd = ACTIVE.with(|a| a.borrow().as_ref().map(|b| b.watched.as_raw_fd()));
    let Some(fd) = fd else { return false };
    let mut byte = 0u8;
    // SAFETY: a non-blocking peek of one byte into a local.
    let waiting = unsafe {
        libc::recv(
            fd,
            (&mut byte as *mut u8).cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    } > 0;
    if waiting {
        drain(fd);
    }
    waiting
}

/// Whether a server is serving in the background in this session.
/// @noRd
#[extendr]
fn background_active_() -> bool {
    ACTIVE.with(|a| a.borrow().is_some())
}

extendr_module! {
    mod background;
    fn background_attach_;
    fn background_detach_;
    fn background_active_;
    fn background_wake_after_;
}
