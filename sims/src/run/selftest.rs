//! The testbed testing itself: every planted bug whose layer includes
//! turmoil must be caught by at least one scenario within a seed budget.

use lanesim::planted::{Planted, PlantedBug};

use super::{execute, Verdict};
use crate::scenario::{Contract, Scenario};

/// The bugs a single-threaded simulated world can see (DESIGN.md's
/// "layer" column). The rest have no `.await` in their window (loom) or only
/// exist in real mode (#9, pinned by a real-runtime test).
pub const TURMOIL_LAYER: [PlantedBug; 7] = [
    PlantedBug::PendingDecrementedAtDequeue,
    PlantedBug::NoExitGuard,
    PlantedBug::CapacitySharedAcrossKeys,
    PlantedBug::ControlResolvedByNode,
    PlantedBug::NoWriteDeadline,
    PlantedBug::SilentControlOverflow,
    PlantedBug::DownHookNotOnceGuarded,
];

/// Where a bug was first caught.
#[derive(Debug, Clone)]
pub struct Caught {
    /// The bug.
    pub bug: PlantedBug,
    /// The scenario and seed that caught it, and the contracts it broke;
    /// `None` if it escaped.
    pub by: Option<(String, u64, Vec<Contract>)>,
    /// Runs spent looking.
    pub runs: u64,
}

/// For each bug, tries each scenario's seeds `0..max_seeds` (scenario by
/// scenario, seed by seed, interleaved so a bug caught early anywhere stops
/// the search) until a run is violated.
#[must_use]
pub fn selftest(bugs: &[PlantedBug], scenarios: &[Scenario], max_seeds: u64) -> Vec<Caught> {
    bugs.iter()
        .map(|&bug| {
            let planted = planted(bug);
            let mut runs = 0;
            for seed in 0..max_seeds {
                for scenario in scenarios {
                    runs += 1;
                    let result = execute(scenario, seed, planted);
                    if result.verdict == Verdict::Violated {
                        let mut contracts: Vec<Contract> =
                            result.violations.iter().map(|v| v.contract).collect();
                        contracts.dedup();
                        return Caught {
                            bug,
                            by: Some((scenario.name.clone(), seed, contracts)),
                            runs,
                        };
                    }
                }
            }
            Caught {
                bug,
                by: None,
                runs,
            }
        })
        .collect()
}

#[cfg(feature = "planted-bugs")]
fn planted(bug: PlantedBug) -> Planted {
    Planted::bug(bug)
}

#[cfg(not(feature = "planted-bugs"))]
fn planted(_bug: PlantedBug) -> Planted {
    Planted::none()
}
