//! `hunt` and `bench --detection`: generated cases run against every
//! contract their world decides, with a progress bar on a terminal, the
//! regressions file checked before the hunt replays it; and the detection
//! benchmark, which hunts each planted bug a simulated world can see.

use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lanesim::planted::CATALOGUE;

use super::output;
use super::setup::subject;
use crate::hunt::shrink::Budget;
use crate::hunt::strategy::HuntWorld;
use crate::hunt::{self, HuntConfig};
use crate::report::{self, announce, Format, Outcome};
use crate::run::selftest::TURMOIL_LAYER;
use crate::scenario::SeedRange;
use crate::targets::Subject;

/// `hunt`'s arguments.
pub(super) struct HuntArgs {
    pub(super) world: HuntWorld,
    pub(super) wall: Option<Duration>,
    pub(super) cases: Option<u64>,
    pub(super) jobs: usize,
    pub(super) seed: u64,
    pub(super) keep_going: bool,
    pub(super) unguided: bool,
    pub(super) no_shrink: bool,
    pub(super) out: Option<PathBuf>,
    pub(super) regressions: Option<PathBuf>,
    pub(super) format: Format,
    pub(super) bug: Option<String>,
}

/// `hunt`: the subject, the regressions file (the one given, else the
/// world's default unless a bug is planted) and the hunt's configuration.
pub(super) fn hunt(args: HuntArgs, base: &Subject) -> Result<Outcome, String> {
    if args.format == Format::Jsonl {
        return Err("hunt --format: jsonl streams a sweep's runs; use json or human".into());
    }
    let subject = subject(base, args.bug.as_deref())?;
    let regressions = match args.regressions {
        Some(path) => {
            check_regressions(&path, true)?;
            Some(path)
        }
        None if subject.planted().selected().is_none() => {
            let path = output::regressions(&subject, args.world);
            check_regressions(&path, false)?;
            Some(path)
        }
        None => None,
    };
    let out = args.out.unwrap_or_else(|| output::shrunk(&subject));
    let config = HuntConfig {
        world: args.world,
        seed: args.seed,
        cases: args.cases.or(args.wall.is_none().then_some(1_000)),
        wall: args.wall,
        jobs: args.jobs,
        keep_going: args.keep_going,
        subject,
        guided: !args.unguided,
        shrink: (!args.no_shrink).then(Budget::default),
        out,
        regressions,
    };
    run_hunt(&config, args.format)
}

fn run_hunt(config: &HuntConfig, format: Format) -> Result<Outcome, String> {
    let subject = &config.subject;
    let (lanes, node) = (subject.lanes().is_some(), subject.node().is_some());
    let lacking = match config.world {
        HuntWorld::Lanes => (!lanes).then_some("a lanes router"),
        HuntWorld::Sender => (!node).then_some("a node"),
        HuntWorld::Mesh => (!subject.node().is_some_and(|n| n.capabilities().accepts))
            .then_some("a node that accepts dials"),
        HuntWorld::Both => (!lanes && !node).then_some("a lanes router or a node"),
    };
    if let Some(what) = lacking {
        return Err(format!(
            "hunt --world {}: the target `{}` has no {what}",
            config.world.name(),
            subject.name()
        ));
    }
    let guidance = if config.guided { "guided" } else { "unguided" };
    let limit = match (config.cases, config.wall) {
        (Some(cases), Some(wall)) => format!("{cases} cases or {wall:?}"),
        (Some(cases), None) => format!("{cases} cases"),
        (None, Some(wall)) => format!("{wall:?}"),
        (None, None) => "no limit".into(),
    };
    announce(
        format,
        &format!(
            "hunt --seed {} --world {}: {limit}, {} job(s), {guidance}{}",
            config.seed,
            config.world.name(),
            config.jobs,
            config
                .subject
                .planted()
                .selected()
                .map_or(String::new(), |bug| format!(", bug {}", bug.name()))
        ),
    );
    let bar = config
        .cases
        .map_or_else(ProgressBar::new_spinner, ProgressBar::new);
    bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed} {human_pos} cases {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let report = hunt::hunt(config, &|cases, found, marks| {
        bar.set_position(cases);
        bar.set_message(format!("· {found} failure(s) · {marks} marks"));
    });
    bar.finish_and_clear();
    Ok(Outcome::Hunt {
        report,
        subject: config.subject.clone(),
        format,
    })
}

pub(super) fn detection_bench(seeds: SeedRange, wall: Duration) -> Result<Outcome, String> {
    if CATALOGUE.is_empty() {
        return Err(
            "bench --detection needs planted bugs: use `cargo run --release --features planted-bugs -- bench --detection`"
                .into(),
        );
    }
    if seeds.len() > 100 {
        return Err("--hunt-seeds: at most 100 hunts per bug and mode".into());
    }
    announce(
        Format::Human,
        &format!(
            "detection: {} bugs x hunt seeds {seeds} x guided/unguided, {wall:?} each",
            TURMOIL_LAYER.len(),
        ),
    );
    let chases = hunt::bench::detection(&TURMOIL_LAYER, seeds, wall, &report::chase_done);
    Ok(Outcome::Detection(chases, wall))
}

/// The largest regressions file `hunt` reads: one line per saved failure,
/// about 200 bytes each.
const MAX_REGRESSIONS_BYTES: u64 = 1024 * 1024;

/// Checks a regressions file before the hunt replays it (proptest's reader
/// skips what it cannot parse, and reads anything whole): a regular file
/// of at most [`MAX_REGRESSIONS_BYTES`], every line a comment, blank, or
/// `cc <64 hex digits>` with an optional `# comment`. A path given on the
/// command line must exist; the default one may not yet.
fn check_regressions(path: &Path, explicit: bool) -> Result<(), String> {
    let shown = path.display();
    if !explicit && !path.exists() {
        return Ok(());
    }
    if explicit && !path.exists() {
        return Err(format!(
            "--regressions {shown}: no such file (create an empty one to start a new file)"
        ));
    }
    let bytes = crate::input::read_bounded(path, MAX_REGRESSIONS_BYTES, "a regressions file")
        .map_err(|e| format!("--regressions {shown}: {e}"))?;
    let text =
        String::from_utf8(bytes).map_err(|e| format!("--regressions {shown}: not UTF-8: {e}"))?;
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let seed = line
            .strip_prefix("cc ")
            .map(|rest| rest.split('#').next().unwrap_or_default().trim());
        if !seed.is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())) {
            return Err(format!(
                "{shown}:{}: not a saved case: a line is `cc <64 hex digits>`, blank, or a `#` comment",
                index + 1
            ));
        }
    }
    Ok(())
}
