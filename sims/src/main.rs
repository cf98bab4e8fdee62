//! The `lanesim` runner. Everything lives in the library so tests drive the
//! same code; this only maps its outcome to the process exit code.

fn main() -> std::process::ExitCode {
    lanesim_sims::cli::main()
}
