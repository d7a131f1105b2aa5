//! The protocol descriptors are closed in forked children.
//!
//! Close-on-exec keeps them from programs a tool starts, but a fork without
//! exec (`parallel::mcparallel()`, `mclapply()`) copies every descriptor:
//! such a child would hold the client's stdout open for as long as it lives,
//! so a client would never see the stream end after the server exits. A
//! `pthread_atfork` child handler closes the descriptors registered here.
//! It runs in the child of a fork of a threaded process, where only
//! async-signal-safe calls are allowed: it reads atomics and calls `close`.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::Once;

/// Descriptors a process can have hidden at once: four per running server
/// (two kept by the stdio guard, the reader's and the writer's), with room
/// for the servers tests run side by side. Beyond it a descriptor is left
/// to close-on-exec alone.
const SLOTS: usize = 64;

static HIDDEN: [AtomicI32; SLOTS] = [const { AtomicI32::new(-1) }; SLOTS];
static REGISTER: Once = Once::new();

extern "C" fn close_in_child() {
    for slot in &HIDDEN {
        let fd = slot.load(Ordering::Relaxed);
        if fd >= 0 {
            // SAFETY: close is async-signal-safe; the descriptor is the
            // child's copy of one of ours.
            unsafe {
                libc::close(fd);
            }
            slot.store(-1, Ordering::Relaxed);
        }
    }
}

/// Closes `fd` in every child forked from now on, until [`unhide`].
pub fn hide(fd: RawFd) {
    REGISTER.call_once(|| {
        // SAFETY: registers a handler with no prepare or parent part.
        unsafe {
            libc::pthread_atfork(None, None, Some(close_in_child));
        }
    });
    for slot in &HIDDEN {
        if slot
            .compare_exchange(-1, fd, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
    }
}

/// Stops closing `fd` in children: call before closing it, so a child
/// never closes a descriptor that has since been reused for something else.
pub fn unhide(fd: RawFd) {
    for slot in &HIDDEN {
        if slot
            .compare_exchange(fd, -1, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
    }
}

/// This process's id once asked for, 0 before that and in a forked child
/// until it asks (the fork handler below resets it). The fork check runs
/// several times per tool call on R's thread; a `getpid` system call each
/// time was a measurable share of a call's cost.
static PID: AtomicU32 = AtomicU32::new(0);
static REGISTER_PID: Once = Once::new();

extern "C" fn forget_pid_in_child() {
    // An atomic store: async-signal-safe, as a fork handler must be.
    PID.store(0, Ordering::Relaxed);
}

/// The id of the calling process, as `std::process::id()`, without a
/// system call after the first: a child forked with `fork()` (R's
/// `parallel`, `system()` before exec) asks afresh. A child made by a raw
/// `clone` that skips fork handlers would see its parent's id, but nothing
/// in R does that, and `vfork` children may only exec or exit.
pub fn process_id() -> u32 {
    let cached = PID.load(Ordering::Relaxed);
    if cached != 0 {
        return cached;
    }
    // Registered before the first id is cached, so no fork can copy a
    // cached id into a child without also resetting it there.
    REGISTER_PID.call_once(|| {
        // SAFETY: registers a handler with no prepare or parent part.
        unsafe {
            libc::pthread_atfork(None, None, Some(forget_pid_in_child));
        }
    });
    let pid = std::process::id();
    PID.store(pid, Ordering::Relaxed);
    pid
}

/// A protocol file, hidden from forked children while it is open.
pub struct HiddenFile(File);

impl HiddenFile {
    pub fn new(file: File) -> HiddenFile {
        hide(file.as_raw_fd());
        HiddenFile(file)
    }
}

impl Drop for HiddenFile {
    fn drop(&mut self) {
        // Before the File closes it (which follows this).
        unhide(self.0.as_raw_fd());
    }
}

impl AsRawFd for HiddenFile {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

impl Read for HiddenFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for HiddenFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::FromRawFd;

    fn pipe() -> (File, File) {
        let mut fds = [0; 2];
        // SAFETY: pipe() fills two fresh descriptors that the files then own.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
    }

    /// Whether `fd` is open in a forked child (its exit status says).
    fn open_in_child(fd: RawFd) -> bool {
        // SAFETY: the child only calls fcntl and _exit, both async-signal-safe.
        unsafe {
            let pid = libc::fork();
            assert!(pid >= 0);
            if pid == 0 {
                let open = libc::fcntl(fd, libc::F_GETFD) != -1;
                libc::_exit(if open { 0 } else { 1 });
            }
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            libc::WEXITSTATUS(status) == 0
        }
    }

    #[test]
    fn a_forked_child_sees_its_own_process_id() {
        let parent = process_id();
        assert_eq!(parent, std::process::id());
        // SAFETY: the child calls process_id (an atomic load, getpid and an
        // atomic store: no lock is taken, the handler is registered already)
        // and _exit.
        unsafe {
            let pid = libc::fork();
            assert!(pid >= 0);
            if pid == 0 {
                let own = process_id() == libc::getpid() as u32;
                libc::_exit(if own { 0 } else { 1 });
            }
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            assert_eq!(
                libc::WEXITSTATUS(status),
                0,
                "the child's id, not the parent's"
            );
        }
        assert_eq!(process_id(), parent, "the parent keeps its id");
    }

    #[test]
    fn a_hidden_file_is_closed_in_forked_children_until_it_is_dropped() {
        let (read, write) = pipe();
        let plain_fd = read.as_raw_fd();
        let hidden = HiddenFile::new(write);
        let fd = hidden.as_raw_fd();
        assert!(!open_in_child(fd), "hidden from the child");
        assert!(open_in_child(plain_fd), "other descriptors are inherited");
        drop(hidden);
        let (_r, again) = pipe();
        // The number may be reused by an ordinary file, which children keep.
        if again.as_raw_fd() == fd {
            assert!(open_in_child(fd));
        }
        assert!(!HIDDEN.iter().any(|s| s.load(Ordering::Relaxed) == fd));
    }
}
