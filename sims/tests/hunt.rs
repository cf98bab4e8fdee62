//! Generated and shrunk cases are scenario files like any other: an exact
//! file pins one run's parameters, and written out and read back it runs
//! the very same run.

use std::path::Path;

use lanesim_sims::run::execute;
use lanesim_sims::scenario::Scenario;
use lanesim_sims::targets::Subject;
use support::shipped;

mod support;

/// A generated case gets the virtual time its workload needs: the hunt
/// once reported "liveness" for this case (shrunk), which was still
/// delivering a frame every 0.8 s when its 120 s ran out. Fitted, its
/// horizon is longer and it passes; with the file's own 120 s it still runs
/// out, so the fit (not luck) is what passes it.
#[test]
fn a_big_slow_workload_gets_the_time_it_needs() {
    use lanesim_sims::hunt::shrink::{fitted_horizon, run_case, HORIZON};
    use lanesim_sims::run::Verdict;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/slow_big_workload.toml");
    let scenario = Scenario::load(&path).unwrap();
    let seed = scenario.default_seeds().first();
    let params = scenario.sample(seed);
    let fitted = fitted_horizon(&params, HORIZON);
    assert!(fitted > HORIZON, "{fitted:?}");
    let run = run_case(&params, seed, HORIZON, &Subject::default()).unwrap();
    assert_eq!(run.verdict, Verdict::Pass, "{:?}", run.violations);
    let as_filed = execute(&scenario, seed, &Subject::default());
    assert_eq!(as_filed.verdict, Verdict::Liveness);
}

/// Any run of any scenario, pinned as an exact file, written as TOML and
/// read back, samples to the same parameters under any seed and, on its own
/// seed, replays the same event log.
#[test]
fn an_exact_file_pins_a_runs_parameters_and_replays_the_run() {
    // Every shipped scenario run twice a seed: two seeds in a release
    // build (CI's planted-bug step runs every test so), one in a debug one
    // (the README's `cargo test`, where this was 35 s of the suite).
    let seeds: &[u64] = if cfg!(debug_assertions) {
        &[5]
    } else {
        &[0, 5]
    };
    for scenario in shipped() {
        for &seed in seeds {
            let params = scenario.sample(seed);
            let file = params.to_file("pinned".into(), seed, scenario.budget());
            let text = toml::to_string(&file).expect("serializes");
            let path = Path::new("pinned.toml");
            let pinned = Scenario::parse(path, &text)
                .unwrap_or_else(|error| panic!("{}: {error}\n{text}", scenario.name));
            assert_eq!(pinned.sample(seed), params, "{} seed {seed}", scenario.name);
            assert_eq!(
                pinned.sample(seed + 1),
                params,
                "{}: exact files ignore the seed",
                scenario.name
            );
            let original = execute(&scenario, seed, &Subject::default());
            let replayed = execute(&pinned, seed, &Subject::default());
            assert_eq!(
                replayed.hash, original.hash,
                "{} seed {seed}: the pinned run differs",
                scenario.name
            );
        }
    }
}

/// A run's log depends on its seed alone, not on how many tasks the
/// process spawned before it: tokio numbers tasks process-wide, and a
/// crashed host's runtime once dropped its tasks shard by shard by id, so
/// this case (a restart with tasks alive) logged two different runs by the
/// ids spent before it, and a two-job mesh hunt did not replay (the fix:
/// vendor/tokio/LANESIM.md, owned tasks).
#[test]
fn a_run_does_not_depend_on_the_task_ids_spent_before_it() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/restart_under_task_ids.toml");
    let scenario = Scenario::load(&path).unwrap();
    let seed = scenario.default_seeds().first();
    let first = execute(&scenario, seed, &Subject::default());
    for spent in 1..4 {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            for _ in 0..spent {
                tokio::spawn(async {}).await.expect("an empty task");
            }
        });
        let again = execute(&scenario, seed, &Subject::default());
        assert_eq!(
            again.hash, first.hash,
            "{spent} task id(s) spent before the run changed its log"
        );
    }
}

mod hunting {
    use std::path::PathBuf;
    use std::time::Duration;

    use lanesim::planted::Planted;
    use lanesim_sims::hunt::strategy::HuntWorld;
    use lanesim_sims::hunt::{hunt, HuntConfig, HuntReport};

    pub fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("lanesim-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    pub fn config(seed: u64, cases: u64, jobs: usize, planted: Planted) -> HuntConfig {
        HuntConfig {
            world: HuntWorld::Both,
            seed,
            cases: Some(cases),
            wall: Some(Duration::from_secs(300)),
            jobs,
            keep_going: false,
            subject: lanesim_sims::targets::Subject::lanesim(planted),
            guided: true,
            shrink: None,
            out: scratch("out"),
            regressions: None,
        }
    }

    pub fn quiet(config: &HuntConfig) -> HuntReport {
        hunt(config, &|_, _, _| {})
    }

    /// The hunt's seed fixes its cases and their order, however many
    /// workers run them; another seed draws others. (Past `LAG` cases the
    /// corpus feeds the draw, so guidance is covered too.)
    #[test]
    fn a_hunt_draws_the_same_cases_from_the_same_seed_whatever_its_jobs() {
        let one = quiet(&config(7, 60, 1, Planted::none()));
        let three = quiet(&config(7, 60, 3, Planted::none()));
        let other = quiet(&config(8, 60, 1, Planted::none()));
        assert_eq!(one.cases, 60);
        assert!(one.mutated > 0, "guidance drew no case from the corpus");
        assert_eq!(
            (one.digest, one.mutated, &one.marks),
            (three.digest, three.mutated, &three.marks)
        );
        assert_ne!(one.digest, other.digest);
    }

    /// Every case in the committed regression file (failures hunts found
    /// and the fixes they led to) is replayed first, and passes now.
    #[test]
    fn the_committed_regression_cases_replay_first_and_pass() {
        let path = PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../proptest-regressions/hunt-both.txt"
        ));
        let saved = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("cc "))
            .count() as u64;
        assert!(saved >= 5, "{saved} saved cases");
        let mut config = config(1, saved, 2, Planted::none());
        config.regressions = Some(path);
        let report = quiet(&config);
        assert_eq!(report.cases, saved);
        let found: Vec<String> = report.found.iter().map(|f| f.message.clone()).collect();
        assert!(found.is_empty(), "{found:?}");
    }

    /// On the code as it is, generated cases break no contract: every
    /// checker's assumptions hold for everything the strategies draw.
    #[test]
    fn a_short_hunt_on_the_correct_code_finds_nothing() {
        let report = quiet(&config(1, 80, 2, Planted::none()));
        let found: Vec<String> = report.found.iter().map(|f| f.message.clone()).collect();
        assert!(found.is_empty(), "{found:?}");
        assert!(report.marks.len() > 20, "{} marks", report.marks.len());
    }
}

#[cfg(feature = "planted-bugs")]
mod planted {
    use std::time::Duration;

    use lanesim::planted::{Planted, PlantedBug};
    use lanesim_sims::hunt::genes::size;
    use lanesim_sims::hunt::shrink::{Budget, Expect};
    use lanesim_sims::run::execute;
    use lanesim_sims::run::selftest::{catalogue_contracts, TURMOIL_LAYER};
    use lanesim_sims::scenario::Scenario;

    use lanesim_sims::hunt::bench::hunt_world;

    use super::hunting::{config, quiet};

    /// Every planted bug a simulated world sees: a short hunt finds it by
    /// one of its own contracts, the shrink leaves at most 8 keys or
    /// peers, 64 items or frames and 2 faults (the bound in
    /// docs/evidence/detection.md), and the
    /// file written loads,
    /// pins the failing seed, and fails the same way when run.
    #[test]
    fn every_planted_bug_a_world_sees_is_hunted_and_shrunk_to_a_small_file_that_fails_the_same_way()
    {
        // #17 needs a node with a heartbeat, and the hunt draws no sender
        // heartbeat yet: `selftest` holds it to `sender_heartbeat_contention`
        // (S2 in 9 of 32 seeds) instead. #22 needs a burst of large frames
        // to a link with latency over a narrow window beside a healthy
        // peer, which the hunt draws rarely (`hunt --seed 1 --world
        // sender` finds it at case 1,821): `selftest` holds it to
        // `sender_latency_blast_radius` (S9 in about 40% of seeds).
        let not_hunted = [
            PlantedBug::DeadlineRestartsAfterLock,
            PlantedBug::TurnsInArrivalOrder,
        ];
        for bug in TURMOIL_LAYER
            .into_iter()
            .filter(|bug| !not_hunted.contains(bug))
        {
            let planted = Planted::select(bug).expect("a planted-bugs build");
            // #19 needs an item, the TTL and the router's drop at one poll:
            // hunt seed 2 in both worlds finds it at case 95 with 7 keys
            // (seed 1, at case 228 until the link table's marks joined the
            // guidance, now finds it at case 738 with 11 keys, which do
            // not shrink to 8).
            // #24 needs the insider's claim to meet a live owner: seed 1
            // finds it at case 231 since the mesh links over kept handles,
            // seed 3 at case 74 (M1).
            let (seed, cases) = match bug {
                PlantedBug::IdleSelectUnbiased => (2, 400),
                PlantedBug::ClaimsTakenAtTheirWord => (3, 200),
                _ => (1, 200),
            };
            let mut config = config(seed, cases, 2, planted);
            config.world = hunt_world(bug);
            let out = tempfile::tempdir().unwrap();
            config.out = out.path().join(bug.name());
            config.shrink = Some(Budget {
                runs: 2_000,
                wall: Duration::from_secs(120),
            });
            let report = quiet(&config);
            let found = report
                .found
                .first()
                .unwrap_or_else(|| panic!("{}: not found in {cases} cases", bug.name()));
            let Expect::Violates(contract) = found.expect else {
                panic!("{}: failed as {:?}", bug.name(), found.expect);
            };
            assert!(
                catalogue_contracts(bug).contains(&contract),
                "{}: first failure {}: {}",
                bug.name(),
                contract.id(),
                found.message
            );
            let (shrunk, path) = found.shrunk.as_ref().expect("shrunk and written");
            let (keys, items, faults) = size(&shrunk.params);
            // 64 items: a redial must fit inside the workload, and a dial is
            // two round trips since the cookie handshake (#6 shrank to 51).
            // 2 faults: an impostor registers under #15 only while the
            // node it claims to be is not connected, and the hunt's case
            // for it (since `trickle` joined the kinds it draws) keeps that
            // node away by slowing a reader: neither fault can go.
            assert!(
                keys <= 8 && items <= 64 && faults <= 2,
                "{}: shrunk only to {keys} keys/peers, {items} items/frames, {faults} faults: {}",
                bug.name(),
                shrunk.params
            );
            let scenario = Scenario::load(path).expect("the shrunk file loads");
            assert_eq!(
                scenario.default_seeds(),
                lanesim_sims::scenario::SeedRange::one(found.seed)
            );
            assert_eq!(scenario.sample(found.seed), shrunk.params);
            let result = execute(&scenario, found.seed, &config.subject);
            assert!(
                found.expect.met_by(&result),
                "{}: the shrunk file passes",
                bug.name()
            );
            let _ = std::fs::remove_dir_all(&config.out);
        }
    }
}
