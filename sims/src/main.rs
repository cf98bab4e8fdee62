//! The `lanesim` runner. Everything lives in the library so tests drive the
//! same code; this only maps its outcome to the process exit code.

fn main() -> std::process::ExitCode {
    keep_freed_memory();
    lanesim_sims::cli::main()
}

/// The sender world allocates every frame it enqueues (up to 40 kB, a few
/// MB a seed) and frees most of them within the seed. glibc hands the freed
/// top of its heap back to the kernel past 128 kB, so every seed faulted
/// the same pages in again, zeroed: half the wall time of a seed with large
/// frames. Keeping up to 256 MB of freed heap changes nothing a run does,
/// only what it costs.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    // SAFETY: mallopt only sets an allocator parameter; it is called before
    // any other thread exists.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}
