//! Lanes inferred from outside (`world::lanes::infer`): for a router that
//! reports no lifecycle, the world takes the one task a route spawned for
//! its key as the key's new lane, and that task's end as the lane's end.
//!
//! Pinned here: lanesim's router, seen from outside, has the lifecycle
//! inferred that it reports itself (every creation and every end's kind:
//! reaped, closed by the drop, panicked, also where a panic and the drop
//! meet); L5 is decided on it and catches planted #3; tasks that are not
//! lanes (a helper a route spawns beside its lane, a pool of workers) leave
//! L5 not decided, with the reason, in the run and in the sweep's tally;
//! tasks spawned outside any route are not lanes; the lane-rebuilt marks
//! are decided.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_sims::coverage::{CoverMark, WorldMark};
use lanesim_sims::event::{Event, Exit, Record};
use lanesim_sims::run::execute;
use lanesim_sims::scenario::{Contract, Scenario, SeedRange};
use lanesim_sims::targets::decide::NotDecided;
use lanesim_sims::targets::Subject;
use lanesim_target::lanes::{
    Handler, Item, Lanes, LanesCapabilities, LanesFixed, LanesSetup, LanesTarget, ModeKind,
};
use lanesim_target::probe::Sites;
use lanesim_target::Targets;
use support::{shipped, shipped_named, sweep_whole};

mod support;

/// `lanes_raw_panics` with the router dropped mid-run: a lane may die of
/// a handler's panic after the drop, and lanes the drop ends are closed.
fn raw_panics_dropped() -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/lanes_raw_panics.toml");
    let source = std::fs::read_to_string(&path).unwrap();
    // More panics, so that some land after the drop; the `[lanes]` table
    // is the file's last.
    assert!(source.contains("panic_chance = [0.05, 0.3]"));
    let source = source.replace("panic_chance = [0.05, 0.3]", "panic_chance = [0.2, 0.5]");
    let source = format!("{source}\ndrop_router_at = [\"1ms\", \"20ms\"]\n");
    Scenario::parse(
        &path.with_file_name("lanes_raw_panics_dropped.toml"),
        &source,
    )
    .unwrap()
}

/// A lifecycle event, without the lane's number (numbered by the router
/// when reported, by the world when inferred).
#[derive(Debug, PartialEq, Eq)]
enum Life {
    Created(u64),
    Closed(u64, Exit),
}

fn lifecycle(records: &[Record]) -> Vec<Life> {
    records
        .iter()
        .filter_map(|r| match r.event {
            Event::LaneCreated { key, .. } => Some(Life::Created(key)),
            Event::LaneClosed { key, exit, .. } => Some(Life::Closed(key, exit)),
            _ => None,
        })
        .collect()
}

/// lanesim's router reports its lanes; seen from outside it reports none
/// and the world infers them from its tasks. Both views of one seed run the
/// same code in the same order, so they must log the same lifecycle: the
/// same keys' lanes created and ended in the same order, each end of the
/// same kind (but for a reap the lane decided after the drop, which from
/// outside is the drop's close: `after_the_drop_as_closed`). Among them, lanes that died of a panic after the router was
/// dropped (`raw_panics_dropped`), and lanes a handler panicked on that
/// lived on (the dispatcher policies) and were later reaped.
#[test]
fn the_lifecycle_inferred_from_lanesims_router_is_the_one_it_reports() {
    let mut scenarios: Vec<Scenario> = shipped()
        .into_iter()
        .filter(|s| s.file.lanes.is_some())
        .collect();
    scenarios.push(raw_panics_dropped());
    let (reported, inferred) = (Subject::default(), Subject::default().outside());
    let (mut panicked_after_drop, mut reaped_after_a_caught_panic, mut ends) = (0, 0, 0);
    for scenario in &scenarios {
        for seed in 0..16 {
            let own = execute(scenario, seed, &reported);
            let outside = execute(scenario, seed, &inferred);
            let (own_life, outside_life) = (
                after_the_drop_as_closed(&own.records),
                lifecycle(&outside.records),
            );
            assert_eq!(
                own_life, outside_life,
                "{} seed {seed}: the inferred lifecycle differs from the reported one",
                scenario.name
            );
            ends += own_life
                .iter()
                .filter(|l| matches!(l, Life::Closed(..)))
                .count();
            let dropped = own
                .records
                .iter()
                .position(|r| matches!(r.event, Event::RouterDropped));
            panicked_after_drop += own
                .records
                .iter()
                .enumerate()
                .filter(|&(i, r)| {
                    dropped.is_some_and(|d| i > d)
                        && matches!(
                            r.event,
                            Event::LaneClosed {
                                exit: Exit::Panicked,
                                ..
                            }
                        )
                })
                .count();
            reaped_after_a_caught_panic += caught_panic_then_reaped(&own.records);
        }
    }
    println!(
        "{ends} lane ends; {panicked_after_drop} died of a panic after the drop; {reaped_after_a_caught_panic} reaped after surviving a panic"
    );
    assert!(panicked_after_drop > 0 && reaped_after_a_caught_panic > 0);
}

/// The lifecycle a router reports, as seen from outside: after the
/// router's drop a lane that ends of itself (a reap it decided after the
/// drop) cannot be told from one the drop ended, and is taken as closed.
fn after_the_drop_as_closed(records: &[Record]) -> Vec<Life> {
    let dropped = records
        .iter()
        .position(|r| matches!(r.event, Event::RouterDropped));
    let mut life = Vec::new();
    for (index, record) in records.iter().enumerate() {
        match record.event {
            Event::LaneCreated { key, .. } => life.push(Life::Created(key)),
            Event::LaneClosed { key, exit, .. } => {
                let gone = dropped.is_some_and(|d| index > d);
                let exit = if gone && exit == Exit::Reaped {
                    Exit::Closed
                } else {
                    exit
                };
                life.push(Life::Closed(key, exit));
            }
            _ => {}
        }
    }
    life
}

/// Lanes reaped after a handler on them panicked and the lane lived on.
fn caught_panic_then_reaped(records: &[Record]) -> usize {
    let mut panicked_on: std::collections::BTreeSet<u64> = std::collections::BTreeSet::new();
    let mut count = 0;
    for r in records {
        match r.event {
            Event::HandleEnd {
                lane,
                panicked: true,
                ..
            } => {
                panicked_on.insert(lane);
            }
            Event::LaneClosed {
                lane,
                exit: Exit::Reaped,
                ..
            } if panicked_on.contains(&lane) => count += 1,
            _ => {}
        }
    }
    count
}

/// L5 is decided for a router that reports no lanes: the world infers each
/// lane from the task a route spawned (`world::lanes::infer`), and a lane
/// that evicts its successor (planted #3, seen from outside) breaks L5
/// itself: the evicted lane ends, unasked, before its TTL.
#[cfg(feature = "planted-bugs")]
#[test]
fn l5_detects_a_reap_holding_work_of_a_router_that_reports_no_lanes() {
    use lanesim::planted::{Planted, PlantedBug};

    let subject =
        Subject::lanesim(Planted::select(PlantedBug::ReapWithoutIdentityCheck).unwrap()).outside();
    let (mut l5, mut runs) = (0, 0);
    for scenario in shipped()
        .iter()
        .filter(|s| s.file.checks.contains(&Contract::L5))
    {
        for seed in 0..8 {
            runs += 1;
            let result = execute(scenario, seed, &subject);
            assert!(
                result.undecided.iter().all(|n| n.what != Contract::L5),
                "{} seed {seed}: {:?}",
                scenario.name,
                result.undecided
            );
            l5 += u64::from(result.violations.iter().any(|v| v.contract == Contract::L5));
        }
    }
    // 16 of 56 when written.
    assert!(l5 >= 4, "L5 broken in {l5} of {runs} runs");
}

/// A router whose handlers run on a task no route spawned (one worker for
/// every key) cannot have its lanes inferred: L5 is not decided for its
/// runs, with the reason, and never counted as held.
#[test]
fn a_router_whose_lanes_are_not_tasks_its_routes_spawned_leaves_l5_undecided() {
    use lanesim_sims::targets::lanesim::lanes::LanesimLanes;

    /// Every key's items on one worker, spawned when the router is built.
    struct OneWorker {
        queue: tokio::sync::mpsc::UnboundedSender<Item>,
        pending: Arc<Mutex<BTreeMap<u64, usize>>>,
    }
    impl Lanes for OneWorker {
        fn route(&self, item: Item, capacity: Option<usize>) -> Result<usize, Item> {
            let mut pending = self.pending.lock().unwrap();
            let depth = pending.entry(item.key).or_default();
            if capacity.is_some_and(|c| *depth >= c) {
                return Err(item);
            }
            *depth += 1;
            let before = *depth - 1;
            self.queue.send(item).map_err(|e| e.0)?;
            Ok(before)
        }
    }
    struct Pool;
    impl LanesTarget for Pool {
        fn capabilities(&self) -> LanesCapabilities {
            LanesCapabilities {
                lifecycle: false,
                stats: false,
                ..LanesimLanes::default().capabilities()
            }
        }
        fn build(&self, setup: LanesSetup) -> Result<Box<dyn Lanes>, String> {
            let (queue, mut items) = tokio::sync::mpsc::unbounded_channel::<Item>();
            let pending = Arc::new(Mutex::new(BTreeMap::<u64, usize>::new()));
            let done = Arc::clone(&pending);
            let handler = setup.handler;
            setup.runtime.spawn(async move {
                while let Some(item) = items.recv().await {
                    handler.call(item).await;
                    *done.lock().unwrap().entry(item.key).or_default() -= 1;
                }
            });
            Ok(Box::new(OneWorker { queue, pending }))
        }
    }
    struct PoolTargets;
    impl Targets for PoolTargets {
        fn name(&self) -> &str {
            "one-worker"
        }
        fn lanes(&self) -> Option<&dyn LanesTarget> {
            Some(&Pool)
        }
    }

    let subject = Subject::user(Arc::new(PoolTargets));
    let scenario = shipped_named("lanes_order");
    assert!(scenario.file.checks.contains(&Contract::L5));
    for seed in 0..4 {
        let result = execute(&scenario, seed, &subject);
        let why = why_l5_undecided(&result.undecided, &format!("seed {seed}"));
        assert!(why.contains("no route spawned"), "{why}");
        assert!(result.violations.iter().all(|v| v.contract != Contract::L5));
    }
    // The scenario's tally lists it too: a sweep of runs that each left L5
    // undecided has not decided L5.
    let scenarios = [scenario];
    let report = sweep_whole(&scenarios, SeedRange::new(0, 3).unwrap(), subject);
    let tally = &report.scenarios[0];
    let why = why_l5_undecided(&tally.undecided, "the tally");
    assert!(why.contains("no route spawned"), "{why}");
}

/// Why L5 was not decided, from a list of what was not: panics, saying
/// `where`, if L5 is not in it.
fn why_l5_undecided(undecided: &[NotDecided<Contract>], place: &str) -> String {
    undecided
        .iter()
        .find(|n| n.what == Contract::L5)
        .map(|n| n.why.clone())
        .unwrap_or_else(|| panic!("{place}: L5 decided: {undecided:?}"))
}

/// A task a router spawns that is not a lane: where, if anywhere.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Extra {
    /// None: one task per lane, spawned in the route that needs it.
    Nothing,
    /// Each route that spawns a lane spawns a helper task beside it.
    HelperBesideEachLane,
    /// Each lane, as it ends, spawns a task (outside any route).
    TaskWhenALaneEnds,
}

/// One key's lane, as the router holds it: its queue, and its items not
/// yet handled (counted under the router's lock, which the reap takes).
struct Held {
    queue: tokio::sync::mpsc::UnboundedSender<Item>,
    pending: usize,
}

/// A router written as a guide's reader would: a lane per key, a tokio task
/// spawned by the route that finds its key without one, reaped when idle for
/// the TTL (the reap and the route decide under one lock), drained and
/// ended by the router's drop. It reports no lanes.
struct PerKey {
    lanes: Arc<Mutex<BTreeMap<u64, Held>>>,
    runtime: tokio::runtime::Handle,
    handler: Handler,
    /// `None`: lanes are never reaped.
    ttl: Option<Duration>,
    extra: Extra,
}

impl PerKey {
    fn spawn_lane(&self, key: u64, mut items: tokio::sync::mpsc::UnboundedReceiver<Item>) {
        let (lanes, handler, ttl, extra) = (
            Arc::clone(&self.lanes),
            self.handler.clone(),
            self.ttl,
            self.extra,
        );
        self.runtime.spawn(async move {
            loop {
                let next = match ttl {
                    Some(ttl) => tokio::time::timeout(ttl, items.recv()).await,
                    None => Ok(items.recv().await),
                };
                match next {
                    Ok(Some(item)) => {
                        handler.call(item).await;
                        if let Some(held) = lanes.lock().unwrap().get_mut(&key) {
                            held.pending -= 1;
                        }
                    }
                    // The router was dropped and the queue is drained.
                    Ok(None) => break,
                    Err(_) => {
                        let mut lanes = lanes.lock().unwrap();
                        if lanes.get(&key).is_some_and(|held| held.pending == 0) {
                            lanes.remove(&key);
                            break;
                        }
                    }
                }
            }
            if extra == Extra::TaskWhenALaneEnds {
                tokio::spawn(async {});
            }
        });
        if self.extra == Extra::HelperBesideEachLane {
            self.runtime.spawn(async {});
        }
    }
}

impl Lanes for PerKey {
    fn route(&self, item: Item, capacity: Option<usize>) -> Result<usize, Item> {
        let mut lanes = self.lanes.lock().unwrap();
        let key = item.key;
        if let Some(held) = lanes.get_mut(&key) {
            if capacity.is_some_and(|c| held.pending >= c) {
                return Err(item);
            }
            match held.queue.send(item) {
                Ok(()) => {
                    held.pending += 1;
                    return Ok(held.pending - 1);
                }
                // Its task is gone (a handler panicked): a new lane.
                Err(returned) => {
                    lanes.remove(&key);
                    return self.new_lane(&mut lanes, returned.0, capacity);
                }
            }
        }
        self.new_lane(&mut lanes, item, capacity)
    }
}

impl PerKey {
    fn new_lane(
        &self,
        lanes: &mut BTreeMap<u64, Held>,
        item: Item,
        capacity: Option<usize>,
    ) -> Result<usize, Item> {
        if capacity == Some(0) {
            return Err(item);
        }
        let (queue, items) = tokio::sync::mpsc::unbounded_channel();
        let key = item.key;
        queue.send(item).map_err(|e| e.0)?;
        lanes.insert(key, Held { queue, pending: 1 });
        self.spawn_lane(key, items);
        Ok(0)
    }
}

impl Drop for PerKey {
    fn drop(&mut self) {
        self.lanes.lock().unwrap().clear();
    }
}

struct PerKeyTarget(Extra);

impl LanesTarget for PerKeyTarget {
    fn capabilities(&self) -> LanesCapabilities {
        LanesCapabilities {
            modes: &[ModeKind::Router],
            lifecycle: false,
            stats: false,
            fixed: LanesFixed::default(),
            hazards: &[],
            sites: Sites::default(),
        }
    }
    fn build(&self, setup: LanesSetup) -> Result<Box<dyn Lanes>, String> {
        Ok(Box::new(PerKey {
            lanes: Arc::default(),
            runtime: setup.runtime,
            handler: setup.handler,
            ttl: setup.idle_ttl,
            extra: self.0,
        }))
    }
}

impl Targets for PerKeyTarget {
    fn name(&self) -> &str {
        "per-key"
    }
    fn lanes(&self) -> Option<&dyn LanesTarget> {
        Some(self)
    }
}

fn per_key(extra: Extra) -> Subject {
    Subject::user(Arc::new(PerKeyTarget(extra)))
}

/// The per-key router's lanes are inferred and it passes L5, and a task a
/// lane spawns as it ends (outside any route) is not taken for a lane of
/// the key routed last: the inference holds, L5 is decided and holds.
#[test]
fn tasks_spawned_outside_a_route_are_not_lanes() {
    for name in ["lanes_order", "lanes_drop_midflight"] {
        let scenario = shipped_named(name);
        for extra in [Extra::Nothing, Extra::TaskWhenALaneEnds] {
            for seed in 0..6 {
                let result = execute(&scenario, seed, &per_key(extra));
                assert!(
                    result.undecided.iter().all(|n| n.what != Contract::L5),
                    "{name} seed {seed}: {:?}",
                    result.undecided
                );
                assert!(
                    result.violations.is_empty(),
                    "{name} seed {seed}: {:?}",
                    result.violations.first()
                );
                let ends = lifecycle(&result.records)
                    .iter()
                    .filter(|l| matches!(l, Life::Closed(..)))
                    .count();
                assert!(ends > 0, "{name} seed {seed}: no lane ended");
            }
        }
    }
}

/// A route that spawns a helper task beside its lane has spawned two
/// tasks: which is the lane cannot be told, so L5 is not decided for the
/// run, with the reason, and no lifecycle is judged.
#[test]
fn a_route_that_spawns_a_helper_beside_its_lane_leaves_l5_undecided() {
    let scenario = shipped_named("lanes_order");
    for seed in 0..4 {
        let result = execute(&scenario, seed, &per_key(Extra::HelperBesideEachLane));
        let why = why_l5_undecided(&result.undecided, &format!("seed {seed}"));
        assert!(why.contains("more than one task"), "{why}");
        assert!(result.violations.is_empty(), "{:?}", result.violations);
    }
}

/// The lane-rebuilt marks need lanes seen to come and go: with lanesim's
/// tokio the world infers them, so a scenario that requires a rebuild after
/// a reap has that requirement decided, and met, for a router that reports
/// no lanes.
#[test]
fn the_lane_rebuilt_marks_are_decided_for_a_router_that_reports_no_lanes() {
    let scenarios = vec![shipped_named("lanes_reap_race")];
    let rebuilt = CoverMark::World(WorldMark::LaneRebuiltAfterReap);
    assert!(scenarios[0].reaches.iter().any(|r| r.mark == rebuilt));
    let subject = Subject::default().outside();
    assert!(subject.decidable(&scenarios[0]).reaches(rebuilt));
    {
        let report = sweep_whole(&scenarios, SeedRange::new(0, 15).unwrap(), subject);
        let tally = &report.scenarios[0];
        assert!(
            tally.unreachable.iter().all(|n| n.what != rebuilt),
            "{:?}",
            tally.unreachable
        );
        let hits = tally.marks.get(&rebuilt).copied().unwrap_or(0);
        assert!(hits >= 8, "rebuilt after a reap in {hits} of 16 seeds");
    }
}
