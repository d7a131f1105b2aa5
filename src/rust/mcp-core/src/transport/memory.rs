//! Giving memory back to the operating system after a large message.
//!
//! glibc keeps freed memory for reuse. After a message of many small values
//! (a JSON tree, R objects) much of it lies in blocks scattered through the
//! heap that are never returned on their own, so a server that handled one
//! large call would keep its peak for the rest of its life.

/// Arguments at least this large are followed by a trim once answered.
pub const LARGE_MESSAGE: usize = 1 << 20;

/// Returns free memory to the operating system where the allocator allows
/// it. Walks the heap: call it after large messages, not after every call.
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory that is free; it takes the
    // allocator's own locks and may run on any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}
