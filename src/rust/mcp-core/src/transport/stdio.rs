//! The stdio transport: private protocol descriptors, the reader thread and
//! the writer thread.
//!
//! While serving, the protocol travels on private duplicates of the original
//! stdin and stdout (close-on-exec, so child processes never inherit them,
//! and closed in forked children, see [`crate::transport::forks`]). Descriptor 1
//! points at stderr and descriptor 0 at the null device, so nothing a tool
//! prints, and nothing a child process reads, can touch the protocol stream.
//!
//! The reader takes no new message while the server holds too much for the
//! client (see [`crate::transport::backpressure`]); the writer reports what it has
//! written, so the reader resumes as the client catches up.

use crate::protocol::framing::{Frame, LineReader};
use crate::protocol::streamed::StreamedLine;
use crate::transport::backpressure::Backpressure;
use crate::transport::forks::{self, HiddenFile};
use crate::transport::trace::Trace;
use crate::util::threads;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the reader wakes to see whether the server is stopping.
const READ_POLL: Duration = Duration::from_millis(50);

/// How often an idle writer checks that the client still reads its stdout.
const IDLE_CHECK: Duration = Duration::from_millis(250);

/// Output written since memory was last handed back to the system, above
/// which an idle writer does so (see [`return_freed_memory`]).
const TRIM_AFTER: usize = 1024 * 1024;

/// While the reader waits for room, how often it looks whether the client
/// has closed its end of the input.
const HANGUP_CHECK: Duration = Duration::from_millis(100);

/// Whether the client has closed its end of the input behind `fd` (the
/// data it wrote before may still wait to be read).
fn input_hung_up(fd: RawFd) -> bool {
    #[cfg(target_os = "linux")]
    const HANGUP: libc::c_short = libc::POLLHUP | libc::POLLRDHUP;
    #[cfg(not(target_os = "linux"))]
    const HANGUP: libc::c_short = libc::POLLHUP;
    let mut pfd = libc::pollfd {
        fd,
        events: HANGUP & !libc::POLLHUP,
        revents: 0,
    };
    // SAFETY: one valid pollfd; a zero timeout does not block.
    let ready = unsafe { libc::poll(&mut pfd, 1, 0) };
    ready > 0 && pfd.revents & HANGUP != 0
}

/// Whether the reading end of the pipe behind `fd` has been closed.
fn peer_closed(fd: RawFd) -> bool {
    let mut pfd = libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    };
    // SAFETY: one valid pollfd; a zero timeout does not block.
    let ready = unsafe { libc::poll(&mut pfd, 1, 0) };
    ready > 0 && pfd.revents & (libc::POLLERR | libc::POLLHUP) != 0
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn dup_cloexec(fd: RawFd) -> io::Result<RawFd> {
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor number has no memory effects.
    check(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) })
}

/// Owns the real stdin/stdout while the server runs and puts them back.
pub struct StdioGuard {
    protocol_in: RawFd,
    protocol_out: RawFd,
    restored: bool,
}

impl StdioGuard {
    /// Moves the protocol onto private descriptors and returns readers and
    /// writers for it.
    pub fn take() -> io::Result<(StdioGuard, File, File)> {
        let protocol_in = dup_cloexec(0)?;
        let protocol_out = dup_cloexec(1)?;
        forks::hide(protocol_in);
        forks::hide(protocol_out);
        let guard = StdioGuard {
            protocol_in,
            protocol_out,
            restored: false,
        };
        let null = File::open("/dev/null")?;
        // SAFETY: plain descriptor operations; 0, 1 and 2 exist in a process
        // R runs in, and `null` stays open for the call.
        unsafe {
            check(libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), 0))?;
            check(libc::dup2(2, 1))?;
        }
        // SAFETY: fresh descriptors owned by the returned files.
        let input = unsafe { File::from_raw_fd(dup_cloexec(protocol_in)?) };
        let output = unsafe { File::from_raw_fd(dup_cloexec(protocol_out)?) };
        Ok((guard, input, output))
    }

    /// Puts stdin and stdout back. Output that tools left in C's stdout
    /// buffer is flushed to stderr first, where it belongs.
    pub fn restore(&mut self) {
        if self.restored {
            return;
        }
        self.restored = true;
        forks::unhide(self.protocol_in);
        forks::unhide(self.protocol_out);
        // SAFETY: flushing all C streams and moving descriptors we own.
        unsafe {
            libc::fflush(std::ptr::null_mut());
            libc::dup2(self.protocol_in, 0);
            libc::dup2(self.protocol_out, 1);
            libc::close(self.protocol_in);
            libc::close(self.protocol_out);
        }
    }
}

impl Drop for StdioGuard {
    fn drop(&mut self) {
        self.restore();
    }
}

/// A file that gives up waiting for data when asked to stop, so the reader
/// thread can end while the client is still connected (Ctrl-C at a console).
pub(crate) struct StoppableInput {
    file: HiddenFile,
    stop: Arc<AtomicBool>,
}

impl StoppableInput {
    pub(crate) fn new(file: File, stop: Arc<AtomicBool>) -> StoppableInput {
        StoppableInput {
            file: HiddenFile::new(file),
            stop,
        }
    }
}

impl Read for StoppableInput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let fd = self.file.as_raw_fd();
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(0);
            }
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd for the duration of the call.
            let ready = unsafe { libc::poll(&mut pfd, 1, READ_POLL.as_millis() as libc::c_int) };
            if ready < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if ready > 0 {
                return self.file.read(buf);
            }
        }
    }
}

/// What the reader thread reports.
pub enum Inbound {
    Frame(Frame),
    /// End of input (or a read error, which ends input just the same).
    End(Option<io::Error>),
}

/// What the reader and writer threads tell the server besides messages.
pub struct Events {
    /// What is queued for the client, shared with the server.
    pub pressure: Arc<Backpressure>,
    /// The thread panicked, with this message.
    pub on_panic: Box<dyn FnOnce(String) + Send>,
}

/// Starts the reader thread. It stops at end of input or when `stop` is
/// set, and waits before each message while the server holds too much,
/// unless the client has closed its end of the input: what is left to read
/// is then only what the pipe holds, and reading it is the way to the end
/// of input, which a client that also stopped reading would otherwise
/// never let the server reach.
pub fn spawn_reader(
    input: File,
    max_line: usize,
    stop: Arc<AtomicBool>,
    trace: Arc<Trace>,
    events: Events,
    deliver: impl Fn(Inbound) + Send + 'static,
) -> io::Result<JoinHandle<()>> {
    let file = HiddenFile::new(input);
    let Events { pressure, on_panic } = events;
    threads::spawn("reader", on_panic, move || {
        let fd = file.as_raw_fd();
        let mut reader = LineReader::new(StoppableInput { file, stop }, max_line);
        let mut hung_up = false;
        loop {
            if !hung_up {
                pressure.wait_for_input_room(HANGUP_CHECK, || {
                    hung_up = input_hung_up(fd);
                    hung_up
                });
            }
            match reader.next_frame() {
                Ok(Some(frame)) => {
                    trace.inbound(&frame);
                    deliver(Inbound::Frame(frame));
                }
                Ok(None) => {
                    trace.note("stdin reached its end");
                    deliver(Inbound::End(None));
                    return;
                }
                Err(e) => {
                    trace.note(&format!("reading stdin failed: {e}"));
                    deliver(Inbound::End(Some(e)));
                    return;
                }
            }
        }
    })
}

/// What the writer thread writes, one line each.
pub enum Outgoing {
    Line(String),
    /// A line written as its content arrives; it holds the writer until
    /// its producer is done, as a whole line would while being written.
    Streamed(StreamedLine),
}

/// Starts the writer thread. Each message becomes one line; the buffer is
/// flushed whenever no further message is waiting. `on_gone` runs once if
/// the client stops reading (broken pipe). `done` is dropped when the thread
/// ends, which is how a waiter learns that everything queued was written.
pub fn spawn_writer(
    output: File,
    lines: mpsc::Receiver<Outgoing>,
    trace: Arc<Trace>,
    events: Events,
    on_gone: impl FnOnce() + Send + 'static,
    done: mpsc::Sender<()>,
) -> io::Result<JoinHandle<()>> {
    let file = HiddenFile::new(output);
    let Events { pressure, on_panic } = events;
    threads::spawn("writer", on_panic, move || {
        // Dropped when this closure ends, by a return or a panic.
        let _done = done;
        let fd = file.as_raw_fd();
        let mut out = BufWriter::with_capacity(64 * 1024, file);
        let mut written_since_trim = 0;
        let result = (|| -> io::Result<()> {
            loop {
                let line = match lines.recv_timeout(IDLE_CHECK) {
                    Ok(line) => line,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        // Nothing to write: notice a client that has
                        // closed its end without waiting for a write.
                        if peer_closed(fd) {
                            return Err(io::Error::from(io::ErrorKind::BrokenPipe));
                        }
                        if written_since_trim >= TRIM_AFTER {
                            return_freed_memory();
                            written_since_trim = 0;
                        }
                        continue;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                };
                written_since_trim += write_line(&mut out, &trace, &pressure, line)?;
                while let Ok(line) = lines.try_recv() {
                    written_since_trim += write_line(&mut out, &trace, &pressure, line)?;
                }
                out.flush()?;
            }
            out.flush()
        })();
        if let Err(e) = result {
            trace.note(&format!("writing stdout failed: {e}; the client has gone"));
            on_gone();
        }
    })
}

/// Writes one message and its newline; returns its length, which is no
/// longer queued once the line is in the buffer.
fn write_line(
    out: &mut impl Write,
    trace: &Trace,
    pressure: &Backpressure,
    line: Outgoing,
) -> io::Result<usize> {
    let line = match line {
        Outgoing::Line(line) => line,
        Outgoing::Streamed(line) => {
            // Its parts are counted as queued by their stream, which
            // releases them once written (see `protocol::streamed`).
            let _span = crate::util::spans::span("writer: streamed line to stdout", 0);
            trace.note("-> a line written as it is produced");
            return line.write_to(out);
        }
    };
    trace.outbound(&line);
    let _span = crate::util::spans::span("writer: line to stdout", line.len());
    out.write_all(line.as_bytes())?;
    out.write_all(b"\n")?;
    let bytes = line.len();
    drop(line);
    pressure.output_written(bytes);
    Ok(bytes)
}

/// Hands memory freed after a burst back to the system. glibc keeps what
/// each thread freed for reuse, so thousands of messages answered at once
/// would otherwise leave the process that much larger for good; trimming
/// once the writer falls idle after writing a lot costs a few milliseconds.
fn return_freed_memory() {
    // SAFETY: malloc_trim only releases memory that is free.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        libc::malloc_trim(0);
    }
}
