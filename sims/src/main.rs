//! The `lanesim` runner. Everything lives in the library so tests drive the
//! same code; this only maps its outcome to the process exit code.

/// The sender world allocates every frame it enqueues (up to 40 kB, a few
/// MB a seed) and frees most of them within the seed. glibc's allocator
/// hands the freed top of its heap back to the kernel past 128 kB, so every
/// seed faulted the same pages in again, zeroed: half the wall time of a
/// seed with large frames. mimalloc keeps freed pages for reuse; it changes
/// nothing a run does, only what it costs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    lanesim_sims::cli::main()
}
