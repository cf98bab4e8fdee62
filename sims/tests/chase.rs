//! A failure only real mode saw is chased into the simulation
//! (sims/src/chase.rs): the same parameters with scheduling exploration on,
//! a bounded number of seeds, a find shrunk to a file that replays.

use std::path::Path;

use lanesim_sims::chase::{chase, Budget};
use lanesim_sims::hunt::shrink::Expect;
use lanesim_sims::scenario::{Contract, Scenario};
use lanesim_sims::targets::Subject;

/// lanes_select_idle with the scheduler's knobs off: what real mode would
/// run (the seed fixes the parameters; the OS schedules).
const LANES_IDLE_OFF: &str = r#"
description = "routers dropped while lanes sit idle; knobs off"
world = "lanes"
checks = ["L1", "L2", "L3", "L5"]
seeds = "0..8"

[lanes]
keys = [2, 8]
producers = [1, 4]
items_per_producer = [20, 100]
burst = [1, 4]
gap = "0ms"
pause = ["0ms", "3ms"]
handler = ["0ms", "1ms"]
idle_ttl = "1ms"
policy = "raw"
drop_router_at = ["1ms", "30ms"]
"#;

fn scenario() -> Scenario {
    Scenario::parse(Path::new("lanes_idle_off.toml"), LANES_IDLE_OFF).expect("a valid scenario")
}

/// What the chase tried adds up to its budget when it finds nothing, and
/// it says so: no find is invented for correct code.
#[test]
fn a_chase_that_finds_nothing_reports_every_run_it_tried() {
    let out = tempfile::tempdir().unwrap();
    let budget = Budget {
        runs: 31,
        ..Budget::default()
    };
    let chased = chase(
        &scenario(),
        3,
        Expect::Violates(Contract::L2),
        &Subject::default(),
        budget,
        out.path(),
    );
    assert!(chased.caught.is_none(), "correct code: {:?}", chased.caught);
    assert_eq!(chased.runs(), 31);
    assert_eq!(
        chased.tried.len(),
        4,
        "the seed as written, then three levels"
    );
    assert!(chased.tried[0].what.contains("as written"));
}

#[cfg(feature = "planted-bugs")]
mod planted {
    use super::*;
    use lanesim::planted::{Planted, PlantedBug};
    use lanesim_sims::run::{execute, Verdict};

    /// #19 (an un-`biased` idle `select!`) on a seed whose simulated run
    /// passes with the knobs off, as a real-only failure would: the chase
    /// finds an L2 violation with exploration on and shrinks it to a file
    /// whose replay fails the same way.
    #[test]
    fn a_real_only_failure_is_chased_into_a_simulated_repro() {
        let subject = Subject::lanesim(
            Planted::select(PlantedBug::IdleSelectUnbiased).expect("a planted-bugs build"),
        );
        let scenario = scenario();
        let seed = (0..64)
            .find(|&seed| execute(&scenario, seed, &subject).verdict == Verdict::Pass)
            .expect("a seed the simulation passes as written");
        let out = tempfile::tempdir().unwrap();
        let chased = chase(
            &scenario,
            seed,
            Expect::Violates(Contract::L2),
            &subject,
            Budget::default(),
            out.path(),
        );
        let caught = chased.caught.as_ref().unwrap_or_else(|| {
            panic!(
                "seed {seed}: not found in {} runs: {:?}",
                chased.runs(),
                chased.tried
            )
        });
        assert!(chased.tried.len() > 1, "found on the seed as written");
        assert!(caught.explore.explores());
        let file = caught.file.as_ref().expect("the find is shrunk to a file");
        let shrunk = Scenario::load(file).expect("the shrunk file loads");
        let replayed = execute(&shrunk, caught.seed, &subject);
        assert!(
            Expect::Violates(Contract::L2).met_by(&replayed),
            "the shrunk file passes: {:?}",
            replayed.verdict
        );
    }
}
