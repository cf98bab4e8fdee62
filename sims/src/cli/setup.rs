//! What a subcommand sets up before it runs: the subject it tests (`base`,
//! or lanesim's own components with `--bug` planted) and the tracing
//! subscriber that shows the production code's log.

use lanesim::planted::{Planted, PlantedBug};

use crate::targets::Subject;

pub(super) fn init_tracing(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colour only for a person at a terminal, and never under NO_COLOR
    // (no-color.org): escape codes in a redirected log are noise.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colour)
        .with_writer(std::io::stderr)
        .with_timer(crate::world::VirtualTime)
        .with_target(false)
        .try_init();
}

/// What a subcommand tests: `base`, or lanesim's own components with the
/// bug `--bug` names planted.
pub(super) fn subject(base: &Subject, bug: Option<&str>) -> Result<Subject, String> {
    match bug {
        None => Ok(base.clone()),
        Some(name) if !base.is_builtin() => Err(format!(
            "--bug {name}: planted bugs are lanesim's own components'; the target `{}` has none",
            base.name()
        )),
        Some(name) => planted(Some(name)).map(Subject::lanesim),
    }
}

fn planted(bug: Option<&str>) -> Result<Planted, String> {
    let Some(name) = bug else {
        return Ok(Planted::none());
    };
    let bug = PlantedBug::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = PlantedBug::ALL.iter().map(|b| b.name()).collect();
        format!(
            "--bug: unknown planted bug `{name}`; known: {}",
            names.join(", ")
        )
    })?;
    Planted::select(bug).ok_or_else(|| {
        format!(
            "--bug {}: this build has no planted bugs; use `cargo run --features planted-bugs -- ...`",
            bug.name()
        )
    })
}
