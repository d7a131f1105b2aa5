//! Interrupts of R's main thread: Ctrl-C seen while Rust waits, and the
//! SIGINT the server sends to stop a handler that is cancelled or timed out
//! (and settles when the job ends first, so it cannot reach what R does
//! next).

use extendr_api::prelude::*;
use mcp_core::engine::board::Interrupter;
use std::os::raw::{c_int, c_void};
use std::time::Duration;

/// How often a waiting `poll()` looks for Ctrl-C.
pub const INTERRUPT_TICK: Duration = Duration::from_millis(20);

extern "C" {
    fn R_ToplevelExec(fun: Option<unsafe extern "C" fn(*mut c_void)>, data: *mut c_void) -> c_int;
    fn R_CheckUserInterrupt();
    /// R's flag for an interrupt its SIGINT handler has seen and R has not
    /// acted on yet (exported by libR; R_ext/GraphicsDevice.h).
    static mut R_interrupts_pending: c_int;
}

unsafe extern "C" fn check_interrupt(_: *mut c_void) {
    R_CheckUserInterrupt();
}

/// Whether an interrupt (Ctrl-C, or one the server sent) is pending. The
/// check consumes it; R's jump ends inside `R_ToplevelExec`, so no Rust
/// frame is skipped.
pub fn interrupt_pending() -> bool {
    // SAFETY: called on R's main thread from inside a .Call.
    unsafe { R_ToplevelExec(Some(check_interrupt), std::ptr::null_mut()) == 0 }
}

/// Interrupts R's main thread: SIGINT reaches R's own handler there, which
/// sets R's interrupt flag and wakes blocking calls such as `Sys.sleep()`.
fn send_interrupt(r_thread: libc::pthread_t) {
    // SAFETY: the R main thread outlives the server.
    unsafe {
        libc::pthread_kill(r_thread, libc::SIGINT);
    }
}

/// Settles an interrupt the server sent for a job that is ending, on R's
/// main thread, so it cannot reach whatever R does next. The SIGINT was
/// queued for this thread before the job could end (the board sends it
/// under the lock its `end` holds while calling this); returning from a
/// system call runs the handler of a signal pending for the thread, so after
/// `sigpending()` R's handler has set its flag, which is then cleared.
fn settle_interrupt() {
    // SAFETY: R's main thread (the board calls this as the job ends, from
    // a `complete_*()` .Call); plain signal-set calls on local sets.
    unsafe {
        let mut pending: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut pending);
        libc::sigpending(&mut pending);
        if libc::sigismember(&pending, libc::SIGINT) == 1 {
            // SIGINT is blocked here just now, so it is still queued:
            // take it off the queue instead.
            let mut sigint: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut sigint);
            libc::sigaddset(&mut sigint, libc::SIGINT);
            take_pending(&sigint);
        }
        R_interrupts_pending = 0;
    }
}

/// Takes a blocked signal of `set` that `sigpending()` reported off the
/// queue, without waiting.
///
/// # Safety
/// `set` must hold a signal that is pending and blocked in this thread.
#[cfg(not(target_vendor = "apple"))]
unsafe fn take_pending(set: &libc::sigset_t) {
    let now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    libc::sigtimedwait(set, std::ptr::null_mut(), &now);
}

/// macOS has no `sigtimedwait()`; `sigwait()` returns at once for a signal
/// that is already pending.
///
/// # Safety
/// As above: without a pending signal of `set` it would block.
#[cfg(target_vendor = "apple")]
unsafe fn take_pending(set: &libc::sigset_t) {
    let mut taken: c_int = 0;
    libc::sigwait(set, &mut taken);
}

/// How the server interrupts R's main thread (this .Call runs on it).
pub fn r_interrupter() -> Interrupter {
    // SAFETY: pthread_self on R's main thread (the .Call runs there).
    let r_thread = unsafe { libc::pthread_self() };
    Interrupter::new(move || send_interrupt(r_thread), settle_interrupt)
}

/// SIGINT held off on this thread (a worker's main thread, while it sends
/// a report to the server: see `worker_relay()` in R/worker_process.R).
/// R's socket writes wait in `R_SelectEx()`, which takes an interrupt even
/// inside `suspendInterrupts()`: the server's SIGINT there cut a message
/// short and left the server reading the rest for ever. Blocked, the signal
/// waits in the kernel until `sigint_release_()`. Returns whether SIGINT
/// was blocked already (then it is left so).
/// @noRd
#[extendr]
fn sigint_hold_() -> bool {
    // SAFETY: plain signal-mask calls on local sets, for this thread only.
    unsafe {
        let mut sigint: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut sigint);
        libc::sigaddset(&mut sigint, libc::SIGINT);
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &sigint, &mut before);
        libc::sigismember(&before, libc::SIGINT) == 1
    }
}

/// Lets SIGINT in again after `sigint_hold_()`: one that came meanwhile
/// reaches R's handler now, and R takes it at its next check, in the
/// tool's code.
/// @noRd
#[extendr]
fn sigint_release_() {
    // SAFETY: as above.
    unsafe {
        let mut sigint: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut sigint);
        libc::sigaddset(&mut sigint, libc::SIGINT);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &sigint, std::ptr::null_mut());
    }
}

extendr_module! {
    mod interrupt;
    fn sigint_hold_;
    fn sigint_release_;
}
