//! The testbed testing itself: every planted bug whose window a simulated
//! world can reach must be caught, by a violation of a contract the
//! catalogue lists for that bug (a run that fails for another reason does
//! not count), and the report says how well: which scenarios catch each
//! bug, in what share of their seeds, and after how many seeds and how much
//! wall time.

use std::time::{Duration, Instant};

use lanesim::planted::{Planted, PlantedBug};

use super::{execute, Verdict};
use crate::scenario::{Contract, Scenario, SeedRange, WorldKind};
use crate::targets::Subject;

/// The bugs a single-threaded simulated world can reach (docs/contracts.md's
/// "layer" column, widened by the preemption points: `lane.reaped_before_exit`
/// puts #3's window, a successor lane created before the reaped lane's exit
/// guard runs, within a simulated run's reach). The rest have no `.await`
/// and no preemption point in their window (loom, shuttle) or exist only in
/// real mode (#9, pinned by a real-runtime test).
pub const TURMOIL_LAYER: [PlantedBug; 21] = [
    PlantedBug::PendingDecrementedAtDequeue,
    PlantedBug::ReapWithoutIdentityCheck,
    PlantedBug::NoExitGuard,
    PlantedBug::CapacitySharedAcrossKeys,
    PlantedBug::ControlResolvedByNode,
    PlantedBug::NoWriteDeadline,
    PlantedBug::SilentControlOverflow,
    PlantedBug::DownHookNotOnceGuarded,
    PlantedBug::NoHeartbeat,
    PlantedBug::AcceptLoopStopsOnError,
    PlantedBug::HandshakeSkipsProof,
    PlantedBug::BudgetRefusesTheNewest,
    PlantedBug::DeadlineRestartsAfterLock,
    PlantedBug::FrameDeadlinePerRead,
    PlantedBug::IdleSelectUnbiased,
    PlantedBug::DownCheckedBeforeLock,
    PlantedBug::LaneDepthSharedAcrossNodes,
    PlantedBug::TurnsInArrivalOrder,
    PlantedBug::ClaimsTakenAtTheirWord,
    PlantedBug::AdmissionIgnoresSources,
    PlantedBug::ProofWaitsWithoutDeadline,
];

/// The bugs the model world must catch (`lanesim model --selftest`): the
/// router's and the sender's bugs whose window it reaches and whose
/// catalogue contract it decides. #1, #3 and #5a are races between
/// threads (the loom and shuttle models' too); #2, #5b and #19 the
/// simulated worlds catch as well; #23 only the model world does. #4 (no
/// exit guard) needs a panic to unwind through the lane, which shuttle
/// cannot explore (docs/model-world.md, "Limits"). Of the sender's and
/// the connection layer's, #6 and #20 (DC-2), #8 (DC-1) and #10 (S3); #7's
/// contract is S2 and #21's S9, whose bounds are times a model does not
/// have.
pub const MODEL_LAYER: [PlantedBug; 11] = [
    PlantedBug::RouteSendsAfterUnlock,
    PlantedBug::PendingDecrementedAtDequeue,
    PlantedBug::ReapWithoutIdentityCheck,
    PlantedBug::CapacityCheckedOutsideGuard,
    PlantedBug::CapacitySharedAcrossKeys,
    PlantedBug::IdleSelectUnbiased,
    PlantedBug::ReapReadsPendingOutsideLock,
    PlantedBug::ControlResolvedByNode,
    PlantedBug::SilentControlOverflow,
    PlantedBug::DownHookNotOnceGuarded,
    PlantedBug::DownCheckedBeforeLock,
];

/// Why a simulated world is not expected to catch `bug` (one outside
/// [`TURMOIL_LAYER`]).
#[must_use]
pub fn not_expected_because(bug: PlantedBug) -> &'static str {
    match bug {
        PlantedBug::RuntimeDroppedInPlace => "a real-mode test's",
        PlantedBug::ReapReadsPendingOutsideLock => "the model world's",
        // Since the claim check, the side whose newcomer would win a
        // simultaneous connect asks the other end first, and that end's
        // refusal closes the losing stream: the pair converges without
        // the tie-break (`without_the_tie_break_the_claim_check_still_settles_simultaneous_dials`).
        PlantedBug::NoTieBreak => "masked: the claim check settles simultaneous dials",
        _ => "loom/shuttle",
    }
}

/// The contracts the catalogue says catch `bug`: only a violation of one
/// of these counts as catching it.
#[must_use]
pub fn catalogue_contracts(bug: PlantedBug) -> &'static [Contract] {
    match bug {
        PlantedBug::RouteSendsAfterUnlock => &[Contract::L1, Contract::L2, Contract::L3],
        PlantedBug::PendingDecrementedAtDequeue => &[Contract::L4, Contract::L5],
        PlantedBug::ReapWithoutIdentityCheck => &[Contract::L2, Contract::L3, Contract::L5],
        PlantedBug::NoExitGuard => &[Contract::L2, Contract::L5],
        PlantedBug::CapacityCheckedOutsideGuard => &[Contract::L4],
        PlantedBug::CapacitySharedAcrossKeys => &[Contract::L4, Contract::L6],
        PlantedBug::ControlResolvedByNode => &[Contract::Dc2],
        PlantedBug::NoWriteDeadline => &[Contract::S2],
        PlantedBug::SilentControlOverflow => &[Contract::Dc1, Contract::EndToEnd],
        PlantedBug::RuntimeDroppedInPlace => &[Contract::S5],
        PlantedBug::DownHookNotOnceGuarded => &[Contract::S3],
        PlantedBug::DownEntryTreatedAsConnected => &[Contract::S8],
        PlantedBug::NoTieBreak => &[Contract::M1],
        // A half-open generation that never goes down also loses the
        // EXITs dropped into it with no noconnection to make up (M2).
        PlantedBug::NoHeartbeat => &[Contract::M5, Contract::M1, Contract::M2],
        PlantedBug::AcceptLoopStopsOnError => &[Contract::M7],
        PlantedBug::HandshakeSkipsProof => &[Contract::M8],
        PlantedBug::ClaimsTakenAtTheirWord => &[Contract::M8, Contract::M1],
        PlantedBug::AdmissionIgnoresSources | PlantedBug::ProofWaitsWithoutDeadline => {
            &[Contract::M7]
        }
        PlantedBug::BudgetRefusesTheNewest => &[Contract::M9],
        PlantedBug::DeadlineRestartsAfterLock => &[Contract::S2],
        PlantedBug::FrameDeadlinePerRead => &[Contract::M9],
        PlantedBug::IdleSelectUnbiased => &[Contract::L2],
        PlantedBug::DownCheckedBeforeLock => &[Contract::Dc2, Contract::S2],
        PlantedBug::LaneDepthSharedAcrossNodes | PlantedBug::TurnsInArrivalOrder => &[Contract::S9],
        PlantedBug::ReapReadsPendingOutsideLock => &[Contract::L2, Contract::L5],
    }
}

/// How one scenario fared against one bug.
#[derive(Debug, Clone)]
pub struct Detection {
    /// The scenario.
    pub scenario: String,
    /// Seeds run.
    pub seeds_run: u64,
    /// Seeds whose run broke a catalogue contract of the bug.
    pub seeds_caught: u64,
    /// Seeds that failed some other way (another contract, liveness, crash).
    pub seeds_other: u64,
    /// The first catching seed, the runs it took to get there (it
    /// included), and the wall time they took.
    pub first: Option<(u64, u64, Duration)>,
}

/// One bug's detection record.
#[derive(Debug, Clone)]
pub struct BugReport {
    /// The bug.
    pub bug: PlantedBug,
    /// Whether a simulated world is expected to catch it.
    pub expected: bool,
    /// Per scenario of the bug's world.
    pub detections: Vec<Detection>,
}

impl BugReport {
    /// Whether some scenario caught it.
    #[must_use]
    pub fn caught(&self) -> bool {
        self.detections.iter().any(|d| d.seeds_caught > 0)
    }

    /// An expected bug no scenario caught.
    #[must_use]
    pub fn escaped(&self) -> bool {
        self.expected && !self.caught()
    }
}

/// Runs every scenario of each bug's world on `seeds` (default: each
/// scenario's own) with the bug planted, and records what caught it.
#[must_use]
pub fn selftest(
    bugs: &[PlantedBug],
    scenarios: &[Scenario],
    seeds: Option<SeedRange>,
) -> Vec<BugReport> {
    bugs.iter()
        .map(|&bug| {
            let contracts = catalogue_contracts(bug);
            let worlds: Vec<WorldKind> = contracts.iter().map(|c| c.world()).collect();
            let detections = scenarios
                .iter()
                .filter(|s| worlds.contains(&s.file.world))
                .map(|scenario| {
                    detect(
                        scenario,
                        planted(bug),
                        contracts,
                        seeds.unwrap_or_else(|| scenario.default_seeds()),
                    )
                })
                .collect();
            BugReport {
                bug,
                expected: TURMOIL_LAYER.contains(&bug),
                detections,
            }
        })
        .collect()
}

fn detect(
    scenario: &Scenario,
    planted: Planted,
    contracts: &[Contract],
    seeds: SeedRange,
) -> Detection {
    let started = Instant::now(); // wall-clock: ok (a report of wall time, not simulated code)
    let mut detection = Detection {
        scenario: scenario.name.clone(),
        seeds_run: 0,
        seeds_caught: 0,
        seeds_other: 0,
        first: None,
    };
    let subject = Subject::lanesim(planted);
    for seed in seeds {
        detection.seeds_run += 1;
        let result = execute(scenario, seed, &subject);
        let caught = result.verdict == Verdict::Violated
            && result
                .violations
                .iter()
                .any(|v| contracts.contains(&v.contract));
        if caught {
            detection.seeds_caught += 1;
            detection
                .first
                .get_or_insert((seed, detection.seeds_run, started.elapsed()));
        } else if result.verdict.is_failure() {
            detection.seeds_other += 1;
        }
    }
    detection
}

/// The bug planted; selftest refuses to start in a build without bugs.
fn planted(bug: PlantedBug) -> Planted {
    Planted::select(bug).unwrap_or_default()
}
