//! Real mode (`run --real`): sender scenarios on the production path, a
//! real tokio runtime and real loopback TCP, decided by the same checkers.
//! Each run takes about a second of wall time (`real_time_scale`).

use std::path::Path;
use std::time::Duration;

use lanesim_sims::event::{Event, Record, Written};
use lanesim_sims::real::{execute_real, RealOutcome, RealResult};
use lanesim_sims::run::Verdict;
use lanesim_sims::scenario::Scenario;
use lanesim_sims::targets::Subject;
use lanesim_target::node::DownReason;

/// A peer stops reading while 30-40 kB frames keep coming: more than the
/// loopback socket buffers real mode asks for (`tcp_capacity` x `mss`).
const WEDGED: &str = r#"
description = "a wedged peer, for real"
world = "sender"
checks = ["DC-1", "DC-2", "DC-5", "S2", "S3", "S4", "S6", "S7", "E2E"]
budget = "20s"
real_time_scale = 0.1

[sender]
peers = 2
data_frames = 80
links = 5
frame_bytes = [30000, 40000]
gap = ["1ms", "2ms"]
write_timeout = "5s"
mss = 1460
tick = "50ms"

[[sender.fault]]
kind = "wedge"
peer = 0
at = "50ms"
"#;

fn scenario(name: &str, text: &str) -> Scenario {
    Scenario::parse(Path::new(name), text).expect("a good scenario")
}

fn written(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(name);
    Scenario::load(&path).expect("a written scenario")
}

fn ran(outcome: RealOutcome) -> RealResult {
    match outcome {
        RealOutcome::Ran(result) => *result,
        RealOutcome::Skipped { reason, .. } => panic!("skipped: {reason}"),
    }
}

/// Seed 0 of the written scenario `file`, run for real; it must pass.
fn passes_for_real(file: &str) -> RealResult {
    let result = ran(execute_real(&written(file), 0, &Subject::default()));
    assert_eq!(
        result.result.verdict,
        Verdict::Pass,
        "{file}: {}",
        failures(&result)
    );
    result
}

fn failures(result: &RealResult) -> String {
    result
        .result
        .violations
        .iter()
        .map(ToString::to_string)
        .chain(result.result.crash.clone())
        .collect()
}

/// The wedged generation goes down `WriteTimeout` one deadline after its
/// last write began (in the log's units; `write_timeout x scale` of wall
/// time), and every checker passes.
#[test]
fn a_wedged_peer_goes_down_by_the_real_write_deadline() {
    let result = ran(execute_real(
        &scenario("wedged_real.toml", WEDGED),
        0,
        &Subject::default(),
    ));
    assert_eq!(
        result.result.verdict,
        Verdict::Pass,
        "{}",
        failures(&result)
    );
    let records: &[Record] = &result.result.records;
    let (down_at, generation) = records
        .iter()
        .find_map(|r| match r.event {
            Event::ConnectionDown {
                peer: 0,
                generation,
                reason: DownReason::WriteTimeout,
                ..
            } => Some((r.at, generation)),
            _ => None,
        })
        .expect("the wedged generation went down WriteTimeout");
    let timed_out = records
        .iter()
        .position(|r| {
            matches!(r.event, Event::WriteFinished { peer: 0, generation: g, outcome: Written::TimedOut, .. } if g == generation)
        })
        .expect("a write timed out");
    let Event::WriteFinished { seq, lane, .. } = records[timed_out].event else {
        unreachable!()
    };
    let began = records[..timed_out]
        .iter()
        .rev()
        .find_map(|r| match r.event {
            Event::WriteStarted {
                peer: 0,
                generation: g,
                lane: l,
                seq: s,
            } if g == generation && l == lane && s == seq => Some(r.at),
            _ => None,
        })
        .expect("the timed-out write began");
    let took = down_at - began;
    // 5 s in the log's units is 0.5 s of wall time at scale 0.1; real
    // timers fire late, never early.
    assert!(
        took >= Duration::from_secs(5) && took <= Duration::from_millis(5_500),
        "down {took:?} after the write began"
    );
    assert!(result.wall < Duration::from_secs(5), "{:?}", result.wall);
}

/// A peer that closes its socket mid-traffic, for real: the written
/// scenario passes.
#[test]
fn a_dead_peer_passes_for_real() {
    let result = passes_for_real("sender_dead_peer.toml");
    assert!(result.result.records.iter().any(|r| matches!(
        r.event,
        Event::PeerActed {
            act: lanesim_sims::event::PeerAct::Killed,
            ..
        }
    )));
}

/// A partition cannot be made on loopback without root: skipped, saying so.
#[test]
fn a_partition_is_skipped_with_its_reason() {
    match execute_real(
        &written("sender_partition_heal.toml"),
        0,
        &Subject::default(),
    ) {
        RealOutcome::Skipped { reason, .. } => {
            assert!(reason.contains("partition"), "{reason}");
            assert!(reason.contains("root"), "{reason}");
        }
        RealOutcome::Ran(_) => panic!("a partition scenario ran for real"),
    }
}

/// `real_time_scale` is bounded, and a bad one is refused at its line.
#[test]
fn a_bad_time_scale_is_refused_at_its_line() {
    let text = WEDGED.replace("real_time_scale = 0.1", "real_time_scale = 5.0");
    let error = Scenario::parse(Path::new("x.toml"), &text)
        .expect_err("refused")
        .to_string();
    assert!(error.contains("x.toml:6:"), "{error}");
    assert!(error.contains("real_time_scale"), "{error}");
    assert!(error.contains("[0.01, 1]"), "{error}");
}

/// The planted missing write deadline is caught for real by the checker
/// that catches it in simulation (S2: a write held the drain past the
/// deadline).
#[cfg(feature = "planted-bugs")]
#[test]
fn a_planted_missing_write_deadline_is_caught_for_real_by_s2() {
    use lanesim::planted::{Planted, PlantedBug};
    use lanesim_sims::scenario::Contract;

    let planted = Planted::select(PlantedBug::NoWriteDeadline).expect("planted bugs");
    let wedged = scenario("wedged_real.toml", WEDGED);
    let subject = Subject::lanesim(planted);
    let simulated = lanesim_sims::run::execute(&wedged, 0, &subject);
    let real = ran(execute_real(&wedged, 0, &subject));
    for (side, result) in [("simulated", &simulated), ("real", &real.result)] {
        assert_eq!(result.verdict, Verdict::Violated, "{side}");
        assert!(
            result.violations.iter().any(|v| v.contract == Contract::S2),
            "{side}: {:?}",
            result.violations
        );
    }
}

/// Planted #9 drops the sender's runtime on a runtime thread: the panic
/// is a production worker's, which nothing joins. A panic on any thread
/// during a real run is a crash with its message, never a pass.
#[cfg(feature = "planted-bugs")]
#[test]
fn a_panic_on_a_production_runtime_thread_is_a_crash_of_the_real_run() {
    use lanesim::planted::{Planted, PlantedBug};

    let planted = Planted::select(PlantedBug::RuntimeDroppedInPlace).expect("planted bugs");
    let file = written("sender_shutdown_queued.toml");
    let real = ran(execute_real(&file, 0, &Subject::lanesim(planted)));
    assert_eq!(real.result.verdict, Verdict::Crash, "{}", failures(&real));
    let crash = real.result.crash.clone().unwrap_or_default();
    assert!(
        crash.contains("a thread panicked") && crash.contains("Cannot drop a runtime"),
        "{crash}"
    );
    // The same seed without the bug passes: the watch sees only panics.
    let clean = ran(execute_real(&file, 0, &Subject::default()));
    assert_eq!(clean.result.verdict, Verdict::Pass, "{}", failures(&clean));
}

/// `fidelity`: one seed of the wedged peer both ways; the verdicts agree
/// and both sides reach the write deadline.
#[test]
fn fidelity_runs_a_seed_both_ways_and_the_verdicts_agree() {
    use lanesim_sims::coverage::{CoverMark, Site};
    use lanesim_sims::scenario::SeedRange;

    let found = lanesim_sims::real::fidelity(
        &scenario("wedged_real.toml", WEDGED),
        SeedRange::one(0),
        &Subject::default(),
    );
    assert_eq!(found.seeds.len(), 1);
    let seed = &found.seeds[0];
    assert_eq!(seed.real, Some(Verdict::Pass));
    assert!(!seed.disagrees());
    assert_eq!(
        found
            .marks
            .get(&CoverMark::Code(Site::new("write_deadline_fired"))),
        Some(&(1, 1)),
        "the drain's mark, made on the sender's own runtime, counts"
    );
}

/// The lanes world for real: the plain FIFO scenario passes on a real
/// multi-thread runtime, in wall time, with the router spawning its lanes
/// on it.
#[test]
fn a_lanes_scenario_passes_for_real() {
    let result = passes_for_real("lanes_order.toml");
    assert!(result
        .result
        .records
        .iter()
        .any(|r| matches!(r.event, Event::HandleEnd { .. })));
    assert!(result.wall < Duration::from_secs(3), "{:?}", result.wall);
}

/// Reap races are real races on a multi-thread runtime: the reap-race
/// scenario reaches the reap decision (won or declined) for real, and the
/// contracts hold.
#[test]
fn a_reap_race_is_decided_for_real() {
    use lanesim_sims::coverage::{CoverMark, Site};

    let result = passes_for_real("lanes_reap_race.toml");
    let coverage = &result.result.coverage;
    assert!(
        coverage.contains_key(&CoverMark::Code(Site::new("reap_won")))
            || coverage.contains_key(&CoverMark::Code(Site::new("reap_declined"))),
        "{coverage:?}"
    );
}

/// The planted missing exit guard (a panicked raw lane stays in the map and
/// black-holes its key's later items) is caught for real by the contract
/// that catches it in simulation.
#[cfg(feature = "planted-bugs")]
#[test]
fn a_planted_missing_exit_guard_is_caught_for_real_by_the_same_contract() {
    use lanesim::planted::{Planted, PlantedBug};

    let planted = Planted::select(PlantedBug::NoExitGuard).expect("planted bugs");
    let panics = written("lanes_raw_panics.toml");
    let subject = Subject::lanesim(planted);
    let simulated = lanesim_sims::run::execute(&panics, 0, &subject);
    let real = ran(execute_real(&panics, 0, &subject));
    assert_eq!(simulated.verdict, Verdict::Violated);
    assert_eq!(real.result.verdict, Verdict::Violated, "real");
    let caught = |result: &lanesim_sims::run::RunResult| {
        result
            .violations
            .iter()
            .map(|v| v.contract)
            .collect::<std::collections::BTreeSet<_>>()
    };
    let both: Vec<_> = caught(&simulated)
        .intersection(&caught(&real.result))
        .copied()
        .collect();
    assert!(
        !both.is_empty(),
        "simulated {:?}, real {:?}",
        simulated.violations,
        real.result.violations
    );
}

/// `fidelity` detects a disagreement: a seed whose real verdict differs
/// from its simulated one makes the outcome exit 6 (diverged); agreement
/// does not, and a scenario with no seed compared at all falls short
/// (exit 5): it decided nothing.
#[test]
fn fidelity_detects_a_disagreement_and_exits_6() {
    use lanesim_sims::cli::Exit;
    use lanesim_sims::real::{Fidelity, FidelitySeed};
    use lanesim_sims::report::Outcome;
    let seed = |simulated, real| FidelitySeed {
        seed: 7,
        simulated,
        real,
        broken: (Vec::new(), Vec::new()),
        simulated_wall: std::time::Duration::ZERO,
        real_wall: std::time::Duration::ZERO,
        real_lateness: std::time::Duration::ZERO,
        real_evidence: None,
        real_pending: None,
    };
    let scenario = |name: &str, seeds| Fidelity {
        scenario: name.into(),
        path: format!("{name}.toml"),
        seeds,
        skipped: None,
        marks: std::collections::BTreeMap::new(),
    };
    let outcome = |seeds| Outcome::Fidelity {
        found: vec![scenario("s", seeds)],
        named: true,
    };
    assert_eq!(
        outcome(vec![seed(Verdict::Pass, Some(Verdict::Pass))]).exit(),
        Exit::Pass
    );
    assert_eq!(
        outcome(vec![seed(Verdict::Pass, None)]).exit(),
        Exit::NotReached
    );
    assert_eq!(
        outcome(vec![
            seed(Verdict::Pass, None),
            seed(Verdict::Pass, Some(Verdict::Pass))
        ])
        .exit(),
        Exit::Pass
    );
    assert_eq!(
        outcome(vec![
            seed(Verdict::Pass, Some(Verdict::Pass)),
            seed(Verdict::Pass, Some(Verdict::Violated)),
        ])
        .exit(),
        Exit::Diverged
    );
    // With no scenario named, one that real mode could not compare beside
    // one it did fails nothing; none compared at all still falls short.
    let unnamed = |found| Outcome::Fidelity {
        found,
        named: false,
    };
    assert_eq!(
        unnamed(vec![
            scenario("mesh", Vec::new()),
            scenario("s", vec![seed(Verdict::Pass, Some(Verdict::Pass))]),
        ])
        .exit(),
        Exit::Pass
    );
    assert_eq!(
        unnamed(vec![scenario("mesh", Vec::new())]).exit(),
        Exit::NotReached
    );
}

/// Real mode's loopback sockets carry segments of at most the scenario's
/// `mss`, both ways of a connection, like turmoil's. Without it loopback
/// sent segments of tens of kB into a receive buffer of 46 kB, and a
/// healthy peer's connection could stall at a window smaller than one
/// segment, moved only by the writer's ~200 ms persist timer
/// (`sender_wedged_peer` seed 2 ran past its budget, about 1 run in 75).
#[test]
fn real_sockets_carry_segments_of_the_scenario_mss() {
    use lanesim_sims::world::net::RealTcp;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let listener = RealTcp::socket(Some(46_720), 1460).unwrap();
        listener
            .bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
            .unwrap();
        let listener = listener.listen(4).unwrap();
        let addr = listener.local_addr().unwrap();
        let dialed = RealTcp::socket(Some(46_720), 1460)
            .unwrap()
            .connect(addr)
            .await
            .unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        for stream in [&dialed, &accepted] {
            let mss = socket2::SockRef::from(stream).tcp_mss().unwrap();
            assert!(mss <= 1460, "TCP_MAXSEG {mss}");
        }
    });
}

/// A target whose every route blocks its thread for good (both of real
/// mode's workers end up in it, so no timer fires): the run is reported
/// as a crash naming the deadlock once twice its budget and the grace
/// (`real::DEADLOCK_GRACE`) have passed, and the runner goes on.
#[test]
fn a_real_run_that_deadlocks_is_reported_not_waited_for() {
    use std::sync::Arc;

    use lanesim_sims::targets::lanesim::lanes::LanesimLanes;
    use lanesim_target::lanes::{Item, Lanes, LanesCapabilities, LanesSetup, LanesTarget};
    use lanesim_target::Targets;

    struct Stuck;
    impl Lanes for Stuck {
        fn route(&self, _item: Item, _capacity: Option<usize>) -> Result<usize, Item> {
            loop {
                std::thread::park(); // wall-clock: ok (a thread blocked on purpose)
            }
        }
    }
    struct StuckTarget;
    impl LanesTarget for StuckTarget {
        fn capabilities(&self) -> LanesCapabilities {
            LanesimLanes::default().capabilities()
        }
        fn build(&self, _setup: LanesSetup) -> Result<Box<dyn Lanes>, String> {
            Ok(Box::new(Stuck))
        }
    }
    struct StuckTargets;
    impl Targets for StuckTargets {
        fn name(&self) -> &str {
            "stuck"
        }
        fn lanes(&self) -> Option<&dyn LanesTarget> {
            Some(&StuckTarget)
        }
    }

    let scenario = Scenario::parse(
        Path::new("stuck.toml"),
        r#"
description = "two producers route into a target that never returns"
world = "lanes"
checks = ["L1", "L2"]
budget = "1s"

[lanes]
keys = 2
producers = 2
items_per_producer = 4
burst = 1
gap = "1ms"
pause = "0ms"
handler = "0ms"
policy = "raw"
"#,
    )
    .unwrap();
    let outcome = execute_real(&scenario, 0, &Subject::user(Arc::new(StuckTargets)));
    let RealOutcome::Ran(ran) = outcome else {
        panic!("skipped: {outcome:?}");
    };
    assert_eq!(ran.result.verdict, Verdict::Crash);
    let crash = ran.result.crash.as_deref().unwrap_or_default();
    assert!(crash.contains("deadlocked"), "{crash}");
}

/// lanesim's router wrapped so that it reports a lane's end under a lock
/// its `route` takes too, and holds that lock a while first (a router that
/// reports under its map lock, as `examples/src/idle_lanes.rs` does): a
/// route logged under the log's order waits for the lock while the hook
/// waits for the order. The hook logs without the order after a while, so
/// the run ends instead of deadlocking.
#[test]
fn a_hook_under_the_targets_lock_does_not_deadlock_a_logged_route() {
    use std::sync::{Arc, Mutex};

    use lanesim_sims::targets::lanesim::lanes::LanesimLanes;
    use lanesim_target::lanes::{
        Item, LaneEvents, LaneExit, LaneId, LaneReports, Lanes, LanesCapabilities, LanesSetup,
        LanesTarget,
    };
    use lanesim_target::Targets;

    struct Locked {
        inner: Box<dyn Lanes>,
        lock: Arc<Mutex<()>>,
    }
    impl Lanes for Locked {
        fn route(&self, item: Item, capacity: Option<usize>) -> Result<usize, Item> {
            let _map = self.lock.lock().unwrap();
            self.inner.route(item, capacity)
        }
    }
    struct UnderLock {
        world: LaneReports,
        lock: Arc<Mutex<()>>,
    }
    impl LaneEvents for UnderLock {
        fn created(&self, key: u64, lane: LaneId) {
            self.world.created(key, lane);
        }
        fn closed(&self, key: u64, lane: LaneId, exit: LaneExit) {
            let _map = self.lock.lock().unwrap();
            std::thread::sleep(Duration::from_millis(20)); // wall-clock: ok (widens the window on purpose)
            self.world.closed(key, lane, exit);
        }
    }
    struct Target;
    impl LanesTarget for Target {
        fn capabilities(&self) -> LanesCapabilities {
            LanesimLanes::default().capabilities()
        }
        fn build(&self, mut setup: LanesSetup) -> Result<Box<dyn Lanes>, String> {
            let lock = Arc::new(Mutex::new(()));
            setup.reports = LaneReports::new(Arc::new(UnderLock {
                world: setup.reports.clone(),
                lock: Arc::clone(&lock),
            }));
            Ok(Box::new(Locked {
                inner: LanesimLanes::default().build(setup)?,
                lock,
            }))
        }
    }
    struct LockedTargets;
    impl Targets for LockedTargets {
        fn name(&self) -> &str {
            "reports-under-lock"
        }
        fn lanes(&self) -> Option<&dyn LanesTarget> {
            Some(&Target)
        }
    }

    let scenario = Scenario::parse(
        Path::new("under_lock.toml"),
        r#"
description = "lanes reaped while producers route, reported under the router's lock"
world = "lanes"
checks = ["L1", "L2", "L3"]
budget = "30s"

[lanes]
keys = 4
producers = 2
items_per_producer = 30
burst = 1
gap = "1ms"
pause = "0ms"
handler = "0ms"
idle_ttl = "1ms"
policy = "raw"
"#,
    )
    .unwrap();
    let subject = Subject::user(Arc::new(LockedTargets));
    for seed in 0..3 {
        let RealOutcome::Ran(ran) = execute_real(&scenario, seed, &subject) else {
            panic!("seed {seed}: skipped");
        };
        assert!(
            matches!(ran.result.verdict, Verdict::Pass),
            "seed {seed}: {:?} {:?}",
            ran.result.verdict,
            ran.result.crash
        );
        assert!(
            ran.result
                .records
                .iter()
                .any(|r| matches!(r.event, Event::LaneClosed { .. })),
            "seed {seed}: no lane ended during the run"
        );
    }
}
