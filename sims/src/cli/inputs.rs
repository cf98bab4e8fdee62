//! What the subcommands read: the scenarios under the paths they are given
//! (directories walked, shipped scenarios, duplicates and symlink loops
//! handled), shard reports read bounded, and scenarios refused up front
//! when real mode cannot take them.

use std::path::{Path, PathBuf};

use crate::real;
use crate::run::sweep;
use crate::scenario::Scenario;

/// Loads every scenario under `paths`, sorted by path; the first bad file is
/// the error.
///
/// # Errors
/// The first path or file that does not load, said as the CLI says it.
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<Scenario>, String> {
    let mut files = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for path in paths {
        if let Some(shipped) = crate::scenario::shipped::under(path) {
            if shipped.is_empty() {
                return Err(format!(
                    "{}: no shipped scenario there (`list @shipped` lists them)",
                    path.display()
                ));
            }
            files.extend(shipped);
            continue;
        }
        let before = files.len();
        collect_toml(path, &mut files, &mut seen, 16)
            .map_err(|error| format!("{}: {error}", path.display()))?;
        if files.len() == before && path.is_dir() {
            return Err(format!(
                "{}: no scenario files (*.toml) in this directory or below it",
                path.display()
            ));
        }
        if files.len() > sweep::MAX_FILES {
            return Err(format!(
                "{}: more than {} scenario files",
                path.display(),
                sweep::MAX_FILES
            ));
        }
    }
    files.sort();
    files.dedup();
    files
        .iter()
        .map(|file| Scenario::load(file).map_err(|error| error.to_string()))
        .collect()
}

/// The `.toml` files under `path`, subdirectories included (so `run
/// scenarios` runs `scenarios/regressions/` too), at most `depth` levels
/// deep. `seen` holds the canonical paths already taken, so a file reached
/// twice (two arguments, a symlink to a directory) runs once and a symlink
/// loop ends. A path that cannot be read (missing, a loop of symlinks, no
/// permission) is an error saying why.
fn collect_toml(
    path: &Path,
    files: &mut Vec<PathBuf>,
    seen: &mut std::collections::BTreeSet<PathBuf>,
    depth: u32,
) -> std::io::Result<()> {
    let meta = std::fs::metadata(path)?;
    let canonical = std::fs::canonicalize(path)?;
    if !seen.insert(canonical) {
        return Ok(());
    }
    if meta.is_dir() {
        if depth == 0 {
            return Ok(());
        }
        let mut entries = std::fs::read_dir(path)?
            .map(|entry| entry.map(|e| e.path()))
            .collect::<std::io::Result<Vec<_>>>()?;
        entries.sort();
        for entry in entries {
            if entry.is_dir() || entry.extension().is_some_and(|ext| ext == "toml") {
                collect_toml(&entry, files, seen, depth - 1)?;
            }
        }
    } else {
        files.push(path.to_path_buf());
    }
    Ok(())
}

/// Reads `path` as UTF-8 text of at most `max` bytes.
pub(super) fn read_bounded(path: &Path, max: u64) -> Result<String, String> {
    let bytes = crate::input::read_bounded(path, max, "a shard report")
        .map_err(|e| format!("{}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| format!("{}: not UTF-8: {e}", path.display()))
}

/// Refuses, as bad input, a scenario real mode cannot take.
pub(super) fn refuse_bad_for_real(scenarios: &[Scenario]) -> Result<(), String> {
    for scenario in scenarios {
        if let Some(why) = real::bad_for_real(scenario) {
            return Err(format!("{}: {why}", scenario.path.display()));
        }
    }
    Ok(())
}
