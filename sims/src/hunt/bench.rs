//! The detection benchmark (`lanesim bench --detection`): for every planted
//! bug a simulated world can see, how many generated cases and how much
//! wall time a hunt takes to catch it, over several hunt seeds, guided and
//! unguided side by side (each seed runs both, alternating which goes
//! first, so neither is measured on a warmer machine), and how long the
//! shrink of what it found takes.
//!
//! A hunt here is what a user runs: both worlds, one job (one core), a wall
//! budget; it counts as catching the bug only when its first failure breaks
//! a contract the catalogue lists for the bug (a different first failure is
//! reported as such: a side effect of the bug, or a checker to look at).

use std::path::PathBuf;
use std::time::Duration;

use lanesim::planted::{Planted, PlantedBug};

use crate::targets::Subject;

use super::genes::size;
use super::shrink::{shrink, Budget, HORIZON};
use super::strategy::HuntWorld;
use super::{hunt, HuntConfig, HuntReport, Stop};
use crate::run::selftest::catalogue_contracts;
use crate::scenario::Contract;

/// One hunt for one bug.
#[derive(Clone, Debug)]
pub struct Chase {
    /// The hunt's seed.
    pub seed: u64,
    /// Whether it drew from the coverage corpus.
    pub guided: bool,
    /// Cases run, up to and including the first failure.
    pub cases: u64,
    /// Wall time to the first failure (or the budget).
    pub wall: Duration,
    /// What the first failure broke, if it failed: a catalogue contract
    /// (`Ok`) or something else (`Err`, its label).
    pub first: Option<Result<Contract, String>>,
    /// The shrink of a catching case: wall time, runs, and the shrunk size
    /// (keys or peers, items or frames, faults).
    pub shrunk: Option<(Duration, u64, (u64, u64, usize))>,
}

impl Chase {
    /// Whether it caught the bug by one of its catalogue contracts.
    #[must_use]
    pub fn caught(&self) -> bool {
        matches!(self.first, Some(Ok(_)))
    }
}

/// Every hunt for one bug.
#[derive(Clone, Debug)]
pub struct BugChases {
    /// The bug.
    pub bug: PlantedBug,
    /// Its hunts, seed by seed, guided and unguided.
    pub chases: Vec<Chase>,
}

/// The hunt that can see `bug`: the mesh's bugs need mesh cases, the rest
/// the lanes and sender mix.
#[must_use]
pub fn hunt_world(bug: PlantedBug) -> HuntWorld {
    let mesh = catalogue_contracts(bug)
        .iter()
        .any(|c| c.world() == crate::scenario::WorldKind::Mesh);
    if mesh {
        HuntWorld::Mesh
    } else {
        HuntWorld::Both
    }
}

fn chase(bug: PlantedBug, planted: Planted, seed: u64, guided: bool, wall: Duration) -> Chase {
    let config = HuntConfig {
        world: hunt_world(bug),
        seed,
        cases: None,
        wall: Some(wall),
        jobs: 1,
        keep_going: false,
        subject: Subject::lanesim(planted),
        guided,
        shrink: None,
        out: PathBuf::new(),
        regressions: None,
    };
    let report: HuntReport = hunt(&config, &|_, _, _| {});
    let found = report.found.first();
    let first = found.map(|found| match found.expect {
        super::shrink::Expect::Violates(contract)
            if catalogue_contracts(bug).contains(&contract) =>
        {
            Ok(contract)
        }
        other => Err(other.label().to_string()),
    });
    let shrunk = found.filter(|_| matches!(first, Some(Ok(_)))).map(|found| {
        let shrunk = shrink(
            &found.params,
            found.seed,
            HORIZON,
            found.expect,
            &config.subject,
            Budget::default(),
        );
        (shrunk.wall, shrunk.runs, size(&shrunk.params))
    });
    Chase {
        seed,
        guided,
        cases: match report.stop {
            Stop::Failure => found.map_or(report.cases, |found| found.index + 1),
            Stop::Cases | Stop::Time => report.cases,
        },
        wall: report.wall,
        first,
        shrunk,
    }
}

/// Hunts each of `bugs` from each of `seeds`, guided and unguided, each
/// hunt within `wall`. `progress` is told each hunt as it ends.
#[must_use]
pub fn detection(
    bugs: &[PlantedBug],
    seeds: crate::scenario::SeedRange,
    wall: Duration,
    progress: &dyn Fn(PlantedBug, &Chase),
) -> Vec<BugChases> {
    bugs.iter()
        .filter_map(|&bug| Some((bug, Planted::select(bug)?)))
        .map(|(bug, planted)| {
            let mut chases = Vec::new();
            for seed in seeds {
                // Alternate which mode runs first.
                let order = if seed % 2 == 0 {
                    [true, false]
                } else {
                    [false, true]
                };
                for guided in order {
                    let one = chase(bug, planted, seed, guided, wall);
                    progress(bug, &one);
                    chases.push(one);
                }
            }
            BugChases { bug, chases }
        })
        .collect()
}

/// The median of `values` (the lower middle of an even count); `None` if
/// empty.
#[must_use]
pub fn median<T: Ord + Copy>(values: &mut [T]) -> Option<T> {
    values.sort_unstable();
    values.get(values.len().saturating_sub(1) / 2).copied()
}
