//! Command line: parse, dispatch, map outcomes to exit codes (0 pass,
//! 1 contract violated, 2 bad input or usage, 3 liveness, 4 crash).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use lanesim::planted::CATALOGUE;

/// Deterministic simulation testbed for per-key ordering lanes and
/// node-to-node senders.
#[derive(Parser, Debug)]
#[command(name = "lanesim", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the scenario files under the given files or directories, and the
    /// planted bugs this build can select.
    List {
        /// Scenario files or directories (default: `scenarios`).
        paths: Vec<PathBuf>,
    },
}

/// Runs the CLI on the process arguments.
#[must_use]
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    match cli.command {
        Command::List { paths } => list(&paths),
    }
}

fn list(paths: &[PathBuf]) -> ExitCode {
    let defaults = [PathBuf::from("scenarios")];
    let paths = if paths.is_empty() {
        &defaults[..]
    } else {
        paths
    };
    let mut files = Vec::new();
    for path in paths {
        if let Err(error) = collect_toml(path, &mut files) {
            eprintln!("error: {}: {error}", path.display());
            return ExitCode::from(2);
        }
    }
    files.sort();
    println!("scenarios ({}):", files.len());
    for file in &files {
        println!("  {}", file.display());
    }
    if CATALOGUE.is_empty() {
        println!("planted bugs: none in this build (build with --features planted-bugs)");
    } else {
        println!("planted bugs ({}):", CATALOGUE.len());
        for bug in CATALOGUE {
            println!("  #{:<3} {}", bug.catalogue_id(), bug.name());
        }
    }
    ExitCode::SUCCESS
}

fn collect_toml(path: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if path.is_dir() {
        for entry in std::fs::read_dir(path)? {
            let entry = entry?.path();
            if entry.extension().is_some_and(|ext| ext == "toml") {
                files.push(entry);
            }
        }
        Ok(())
    } else if path.is_file() {
        files.push(path.to_path_buf());
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no such file or directory",
        ))
    }
}
