//! Giving freed memory back to the system. glibc's malloc raises its mmap threshold
//! each time a large block is freed (up to 32 MiB), after which large buffers come from
//! the heap and, freed, stay with the process; and it keeps what a thread freed in that
//! thread's arena. A long-running server that once indexed a large transcript would keep
//! that peak for good (`sightline bench transcript-memory`: about 100 MB over the
//! baseline). So the binary fixes the threshold at start ([`configure`]), and the server
//! trims the heap after the rare large pieces of work ([`return_freed_memory`]).
//!
//! Invariant: this holds the crate's only `unsafe` code, two calls of C functions that
//! have no preconditions (see the SAFETY notes).

/// Blocks of this size or more are mapped on their own and unmapped when freed.
const MMAP_THRESHOLD_BYTES: i32 = 1 << 20;

/// Fixes glibc's mmap threshold at 1 MiB, which also stops it from growing, so large
/// buffers always go back to the system when freed. Call once, at start. A no-op on
/// other platforms.
pub fn configure() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: mallopt takes two integers and has no preconditions; M_MMAP_THRESHOLD
    // only changes where future allocations come from.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES);
    }
}

/// Returns freed heap memory to the system: glibc's `malloc_trim(0)` releases the free
/// pages of every arena. Takes a few milliseconds; a no-op on other platforms.
pub fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: malloc_trim takes a byte count and has no preconditions; it is
    // thread-safe (it locks each arena it trims) and only gives back pages malloc owns
    // and no allocation uses.
    unsafe {
        libc::malloc_trim(0);
    }
}
