//! CI invariant checks: every scenario passes on a fixed seed set, found
//! failures stay fixed, and (with `planted-bugs`) every planted bug a
//! simulated world can see is caught.

use lanesim_sims::run::sweep::{merge, sweep, Plan, Shard, SweepReport, Unwatched};
use lanesim_sims::run::{execute, Verdict};
use lanesim_sims::scenario::{Scenario, SeedRange};
use lanesim_sims::targets::Subject;
use support::load_dir;

mod support;

/// Sweeps `scenarios` over `seeds` on `jobs` threads, one shard of it.
fn sweep_of(scenarios: &[Scenario], seeds: &str, jobs: usize, shard: Shard) -> SweepReport {
    let plan = Plan {
        scenarios,
        seeds: Some(seeds.parse::<SeedRange>().unwrap()),
        shard,
        wall: None,
        jobs,
        subject: Subject::default(),
        accept_undecided: false,
    };
    sweep(&plan, &mut Unwatched)
}

/// The written scenarios (`scenarios/*.toml`).
fn scenarios() -> Vec<Scenario> {
    load_dir("../scenarios")
}

/// The shrunk cases hunts found (`scenarios/regressions/*.toml`).
fn regressions() -> Vec<Scenario> {
    load_dir("../scenarios/regressions")
}

fn scenario(name: &str) -> Scenario {
    scenarios()
        .into_iter()
        .find(|s| s.name == name)
        .expect("scenario exists")
}

/// `sender_slow_peer` at the 5 ms tick it had when the seeds pinned below
/// failed (it runs at 10 ms since, for speed): the same seeds replay the
/// same schedules.
fn slow_peer_at_its_old_tick() -> Scenario {
    let mut scenario = scenario("sender_slow_peer");
    scenario
        .file
        .sender
        .as_mut()
        .expect("a sender scenario")
        .tick = Some(lanesim_sims::scenario::sample::Dur(
        std::time::Duration::from_millis(5),
    ));
    scenario
}

/// Seeds per scenario the sweeps below run: eight in a release build (CI's
/// planted-bug step), two in a debug one (the README's `cargo test`: a
/// debug sweep costs about five times a release one, and CI's main job
/// runs every scenario on all its default seeds in release anyway).
const SEEDS: u64 = if cfg!(debug_assertions) { 2 } else { 8 };

#[test]
fn every_scenario_passes_on_its_ci_seeds() {
    let scenarios = scenarios();
    assert!(scenarios.len() >= 21, "scenarios went missing");
    let report = sweep_of(&scenarios, &format!("0..{SEEDS}"), 2, Shard::ALL);
    assert_eq!(report.ran(), SEEDS * scenarios.len() as u64);
    let failed: Vec<String> = report
        .scenarios
        .iter()
        .flat_map(|t| &t.failures)
        .map(|f| {
            format!(
                "{} seed {}: {:?} {:?}",
                f.scenario,
                f.seed,
                f.verdict,
                f.violations.first().map(|v| &v.message)
            )
        })
        .collect();
    assert_eq!(report.verdicts().pass, report.ran(), "{failed:#?}");
}

/// Every failure a hunt found, shrunk and kept, passes now on its own seed.
#[test]
fn every_regression_the_hunts_found_stays_fixed() {
    let regressions = regressions();
    assert!(regressions.len() >= 5, "regressions went missing");
    for scenario in &regressions {
        let seed = scenario.default_seeds().first();
        let result = execute(scenario, seed, &Subject::default());
        assert_eq!(
            result.verdict,
            Verdict::Pass,
            "{} seed {seed}: {:?}",
            scenario.name,
            result.violations.first().map(|v| &v.message)
        );
    }
}

/// A scenario is worth what it reaches: each shipped one names the marks it
/// exists for (the main job, `run scenarios`, holds it to them).
#[test]
fn every_scenario_names_the_marks_it_exists_to_reach() {
    for scenario in scenarios() {
        assert!(
            !scenario.reaches.is_empty(),
            "{} lists no `reaches`",
            scenario.name
        );
    }
}

#[test]
fn a_parallel_sweep_gives_exactly_the_serial_results() {
    let scenarios = scenarios();
    let seeds = format!("0..{}", SEEDS.min(3));
    let serial = sweep_of(&scenarios, &seeds, 1, Shard::ALL);
    assert_eq!(serial.ran(), SEEDS.min(3) * scenarios.len() as u64);
    assert_eq!(serial, sweep_of(&scenarios, &seeds, 2, Shard::ALL));
}

/// `--shard I/N` splits a sweep: every run is in exactly one shard, and
/// `merge` of the shards' reports (through their JSON, as `lanesim merge`
/// reads them) is the unsharded report, digest of every log included.
#[test]
fn the_union_of_shards_is_the_unsharded_sweep() {
    let scenarios = scenarios();
    let seeds = format!("0..{}", SEEDS.min(4));
    let whole = sweep_of(&scenarios, &seeds, 2, Shard::ALL);
    let shards: Vec<(String, SweepReport)> = (0..3)
        .map(|index| {
            let shard = sweep_of(&scenarios, &seeds, 2, Shard { index, count: 3 });
            assert!(shard.ran() < whole.ran());
            let json = serde_json::to_string(&shard).unwrap();
            (
                format!("shard {index}"),
                serde_json::from_str(&json).unwrap(),
            )
        })
        .collect();
    let sizes: Vec<u64> = shards.iter().map(|(_, s)| s.ran()).collect();
    assert_eq!(sizes.iter().sum::<u64>(), whole.ran(), "{sizes:?}");
    assert_eq!(merge(shards).unwrap(), whole);
}

/// Found while writing the chaos sampler: a "slow" peer drew a read interval
/// of 2.3 s, and 295 frames behind it could not drain in the budget.
#[test]
fn chaos_seed_7_slow_peer_drains_within_its_budget() {
    assert_eq!(
        execute(&scenario("sender_chaos"), 7, &Subject::default()).verdict,
        Verdict::Pass
    );
}

/// Found when the world ended before a slow peer had read its last frames:
/// the end-to-end check then saw EXITs that had not arrived yet.
#[test]
fn slow_peer_seeds_14_and_23_wait_for_the_slow_reader() {
    for (scenario, seed) in [
        (slow_peer_at_its_old_tick(), 14),
        (slow_peer_at_its_old_tick(), 23),
        (scenario("sender_slow_peer"), 14),
        (scenario("sender_slow_peer"), 23),
    ] {
        let result = execute(&scenario, seed, &Subject::default());
        assert_eq!(
            result.verdict,
            Verdict::Pass,
            "seed {seed}: {:?}",
            result.violations.first()
        );
    }
}

/// Found when events logged while the simulation was torn down (the drain's
/// drop, at time zero) ended the log: an endless write looked like a
/// liveness failure instead of the S2 violation it is.
#[cfg(feature = "planted-bugs")]
#[test]
fn a_wedged_write_without_deadline_is_an_s2_violation() {
    use lanesim::planted::{Planted, PlantedBug};
    let result = execute(
        &scenario("sender_wedged_peer"),
        0,
        &Subject::lanesim(Planted::bug(PlantedBug::NoWriteDeadline)),
    );
    assert_eq!(result.verdict, Verdict::Violated);
    assert!(result
        .violations
        .iter()
        .any(|v| v.contract.id() == "S2" && v.message.contains("never finished")));
}

#[cfg(feature = "planted-bugs")]
#[test]
fn every_planted_bug_a_simulated_world_can_see_is_caught_by_its_own_contract_within_8_seeds() {
    use lanesim_sims::run::selftest::{selftest, TURMOIL_LAYER};
    let seeds = lanesim_sims::scenario::SeedRange::new(0, 7).unwrap();
    let reports = selftest(&TURMOIL_LAYER, &scenarios(), Some(seeds));
    for report in &reports {
        let catching: Vec<(&str, u64)> = report
            .detections
            .iter()
            .filter(|d| d.seeds_caught > 0)
            .map(|d| (d.scenario.as_str(), d.seeds_caught))
            .collect();
        println!(
            "#{} {}: {catching:?}",
            report.bug.catalogue_id(),
            report.bug.name()
        );
    }
    let escaped: Vec<&str> = reports
        .iter()
        .filter(|r| r.escaped())
        .map(|r| r.bug.name())
        .collect();
    assert!(escaped.is_empty(), "escaped: {escaped:?}");
}

/// Slow and latency faults never take a generation down, for any reason.
/// The peers once read with `read_frame` inside the `select!` that also
/// waits for fault pokes: every poke dropped half a frame, the next read took
/// payload bytes for a header, and slow peers went down with `ReadError`
/// (seeds 0, 3 and 5 of `sender_slow_peer` then). Fails on that peer.
#[test]
fn slow_and_latency_faults_never_take_a_generation_down() {
    use lanesim_sims::event::Event;
    for (scenario, seed) in [slow_peer_at_its_old_tick(), scenario("sender_slow_peer")]
        .into_iter()
        .flat_map(|scenario| (0..24).map(move |seed| (scenario.clone(), seed)))
    {
        let result = execute(&scenario, seed, &Subject::default());
        let downs: Vec<String> = result
            .records
            .iter()
            .filter(|r| matches!(r.event, Event::ConnectionDown { .. }))
            .map(ToString::to_string)
            .collect();
        assert!(downs.is_empty(), "seed {seed}: {downs:#?}");
        assert_eq!(result.verdict, Verdict::Pass, "seed {seed}");
    }
}

/// `bench`'s "unobserved" baseline is the same run with no records kept
/// and nothing judged: it is a fair baseline only if dropping the records
/// changes no step. The sender world's end waits for its log to go quiet,
/// so a counting log that forgot `len` or `last_at` ends runs at another
/// virtual instant; this fails on that (checked by making `last_at` of a
/// counting log return `None`).
#[test]
fn an_unobserved_run_takes_the_same_steps() {
    use lanesim_sims::run::bench::unobserved;
    use lanesim_sims::scenario::WorldKind;
    let mut compared = 0;
    for scenario in scenarios().iter().chain(&regressions()) {
        if scenario.file.world != WorldKind::Sender {
            continue;
        }
        for seed in 0..2 {
            let judged = execute(scenario, seed, &Subject::default());
            let (quiet, _) = unobserved(scenario, &scenario.sample(seed), seed);
            assert_eq!(quiet, judged.elapsed, "{} seed {seed}", scenario.name);
            compared += 1;
        }
    }
    assert!(compared >= 20, "only {compared} sender runs compared");
}
