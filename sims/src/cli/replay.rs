//! `replay` and `shrink`: one seed of one scenario file, re-run with its
//! parameters, verdict, marks and (asked for) its events, log and trace
//! file; or shrunk, when it fails, to a small exact scenario file that
//! fails the same way.

use std::path::Path;

use super::setup::init_tracing;
use crate::hunt::{self, shrink::Budget};
use crate::report::{self, announce, Format, Outcome};
use crate::run;
use crate::scenario::Scenario;
use crate::targets::Subject;

pub(super) fn replay(
    path: &Path,
    seed: Option<u64>,
    verbose: u8,
    trace: Option<&Path>,
    subject: Subject,
) -> Result<Outcome, String> {
    let scenario = Scenario::load(path).map_err(|e| e.to_string())?;
    let own = scenario.default_seeds();
    let seed = match seed {
        Some(seed) => seed,
        None if own.len() == 1 => own.into_iter().next().unwrap_or(0),
        None => {
            return Err(format!(
                "replay {}: give --seed: the file's seeds are {own}",
                path.display()
            ))
        }
    };
    // Refused before the run, not after it.
    if let Some(trace) = trace {
        check_writable(trace).map_err(|e| format!("--trace {}: {e}", trace.display()))?;
    }
    init_tracing(if verbose >= 2 {
        "lanesim=debug"
    } else {
        "warn"
    });
    announce(
        Format::Human,
        &format!("replay {} seed {seed}", scenario.path.display()),
    );
    announce(
        Format::Human,
        &format!("params: {}", subject.sample(&scenario, seed)),
    );
    let result = run::execute(&scenario, seed, &subject);
    let wrote = match trace {
        Some(trace) => {
            let document = report::trace::document(&result);
            std::fs::write(trace, document.to_string())
                .map_err(|e| format!("--trace {}: {e}", trace.display()))?;
            Some(trace.to_path_buf())
        }
        None => None,
    };
    Ok(Outcome::Replay {
        result: Box::new(result),
        subject,
        events: verbose >= 1,
        wrote,
    })
}

/// Whether `path` can be written: its directory exists and it is not a
/// directory or a special file (checked before a run, so a typo does not
/// cost one).
fn check_writable(path: &Path) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(format!("no such directory: {}", dir.display()));
    }
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => Err("not a regular file".into()),
        Ok(meta) if meta.permissions().readonly() => Err("read-only".into()),
        _ => Ok(()),
    }
}

pub(super) fn shrink(
    path: &Path,
    seed: u64,
    out: &Path,
    subject: &Subject,
) -> Result<Outcome, String> {
    let scenario = Scenario::load(path).map_err(|e| e.to_string())?;
    announce(
        Format::Human,
        &format!("shrink {} seed {seed}", scenario.path.display()),
    );
    let params = subject.sample(&scenario, seed);
    announce(Format::Human, &format!("params: {params}"));
    let found = hunt::shrink_run(
        &params,
        seed,
        scenario.budget(),
        subject,
        Budget::default(),
        out,
    )
    .map_err(|why| format!("{}: seed {seed}: {why}", path.display()))?;
    Ok(Outcome::Shrink {
        found: Box::new(found),
        subject: subject.clone(),
    })
}
