//! The lanes world: producers route a seeded workload into the production
//! `LaneRouter` (policy `raw`) or `OrderedDispatcher` (`reject`, `warn`) on a
//! paused current-thread runtime, so virtual time jumps to the next timer and
//! every run of a seed is the same run.
//!
//! Injected: handler durations, async and synchronous handler panics, stuck
//! keys, bursts and pauses around the idle TTL (reap races), a hot key, a
//! router drop mid-flight, and "buggify" yields and short sleeps at the
//! workload's and the handler's await points, so each seed explores its own
//! async interleaving.
//!
//! Real mode ([`run_real`]) runs the same workload on a real multi-thread
//! runtime in wall time, its durations scaled by the scenario's
//! `real_time_scale`.
//!
//! A router that reports no lifecycle has its lanes inferred from its tasks
//! in simulation ([`infer`]).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_target::lanes::{
    BoxFuture, Handler, Item, LaneEvents, LaneExit, LaneId, LaneReports, Lanes, LanesSetup, Mode,
};
use tokio::time::Instant;

use super::real_clock::RealClock;
use super::{EndStep, Stuck, WorldRun, INJECTED};
use crate::check::lanes::MAX_RUN;
use crate::coverage::{self, WorldMark, WorldProbe};
use crate::event::{Event, EventLog, Exit};
use crate::explore::{self, spawn_world, WorldExplorer};

mod infer;

use crate::rng::SimRng;
use crate::scenario::{LanesParams, Policy};
use crate::targets::Subject;
pub use infer::Inference;

const HOST: &str = "lanes";

/// Where the log's times come from.
pub(crate) enum Clock {
    /// The paused runtime's virtual time since `start`.
    Sim { start: Instant },
    /// Real mode ([`RealClock`]).
    Real(RealClock),
}

impl Clock {
    fn now(&self) -> Duration {
        match self {
            Self::Sim { start } => start.elapsed(),
            Self::Real(real) => real.now(),
        }
    }

    /// `d` of the scenario's time as the runtime's time: itself in
    /// simulation, multiplied by the scale in real mode (the world's own
    /// perturbation sleeps and quiet periods; the sampled durations are
    /// scaled up front, see [`scaled`]).
    fn runtime(&self, d: Duration) -> Duration {
        match self {
            Self::Sim { .. } => d,
            Self::Real(real) => real.wall(d),
        }
    }
}

/// What the world's tasks share.
struct World {
    log: EventLog,
    probe: Arc<WorldProbe>,
    /// Keys whose last lane ended, and how.
    ended: Mutex<std::collections::BTreeMap<u64, LaneExit>>,
    /// Producers still routing.
    producing: std::sync::atomic::AtomicU64,
    start: Instant,
    rng: Mutex<SimRng>,
    params: LanesParams,
    stuck: BTreeSet<u64>,
    /// Stuck keys whose hang has begun.
    hung: Mutex<BTreeSet<u64>>,
    clock: Clock,
    /// Real mode: the run is over (`RunEnd` is logged), record nothing more
    /// (what tearing the runtime down cancels is not part of the run).
    frozen: std::sync::atomic::AtomicBool,
    /// See [`super::Order`]; shared with real mode's worker threads, which
    /// let go of a kept order when they park.
    order: Arc<super::Order>,
    /// For a target that reports no lanes: the lane each tokio task stands
    /// for, numbered in the order first seen (spawned, or first running a
    /// handler).
    tasks: Mutex<std::collections::BTreeMap<u64, u64>>,
    /// Lanes inferred from the target's tasks ([`infer`]).
    inferring: Mutex<infer::Inferring>,
    /// The router is being dropped or gone.
    dropped: std::sync::atomic::AtomicBool,
    /// Per key: items routed whose handler has not started (marks
    /// `backlog_past_max_run` past L6's [`MAX_RUN`]).
    backlog: Mutex<std::collections::BTreeMap<u64, u64>>,
}

impl World {
    fn record(&self, event: Event) {
        self.order.ordered(|| {
            if !self.frozen.load(std::sync::atomic::Ordering::Acquire) {
                self.log.push_timed(|| self.clock.now(), HOST, event);
            }
        });
    }

    /// Logs a lifecycle event the target reported ([`Observer`]): perhaps
    /// from under a lock of its own, so it does not wait for the order
    /// for ever ([`super::Order::ordered_hook`]).
    fn record_hook(&self, event: Event) {
        self.order.ordered_hook(HOOK_PATIENCE, || {
            if !self.frozen.load(std::sync::atomic::Ordering::Acquire) {
                self.log.push_timed(|| self.clock.now(), HOST, event);
            }
        });
    }

    /// Logs an item's end. The lane acknowledges the item (its pending
    /// count, what `route` reports and admits by) only after the handler's
    /// future resolves, on the same thread, before it runs anything else.
    /// In simulation nothing can come between; in real mode a route on
    /// another thread could, and see the item still pending after its end
    /// is logged. So in real mode this thread keeps the log's order past
    /// the record until its next step or until it parks: by then the lane
    /// has acknowledged the item, and the end is logged where it happened.
    fn end(&self, event: Event) {
        self.order.ordered(|| {
            self.record(event);
            if matches!(self.clock, Clock::Real(_)) {
                self.order.keep();
            }
        });
    }

    fn chance(&self, p: f64) -> bool {
        p > 0.0 && self.rng.lock().unwrap().chance(p)
    }

    fn between(&self, range: (Duration, Duration)) -> Duration {
        let (lo, hi) = (range.0.as_micros() as u64, range.1.as_micros() as u64);
        Duration::from_micros(self.rng.lock().unwrap().range(lo, hi))
    }

    fn draw(&self, lo: u64, hi: u64) -> u64 {
        self.rng.lock().unwrap().range(lo, hi)
    }

    /// The lane a handler runs on: the one the target named, or, for a
    /// target that reports no lanes, the task it runs on (a lane is a task
    /// in every router we know of), numbered from 1 in the order tasks are
    /// first seen, so the number is the same in every run of a seed.
    fn lane_of(&self, named: Option<LaneId>) -> u64 {
        if let Some(lane) = named {
            return lane.0;
        }
        current_task().map_or(0, |task| self.number(task))
    }

    /// The number `task` goes by, given the first time it is seen.
    fn number(&self, task: u64) -> u64 {
        let mut tasks = self.tasks.lock().unwrap();
        let next = tasks.len() as u64 + 1;
        *tasks.entry(task).or_insert(next)
    }

    /// A seeded perturbation at an await point: nothing, some yields, or a
    /// short sleep.
    async fn buggify(&self) {
        if !self.chance(self.params.buggify) {
            return;
        }
        match self.draw(0, 2) {
            0 => tokio::task::yield_now().await,
            1 => {
                for _ in 0..self.draw(2, 8) {
                    tokio::task::yield_now().await;
                }
            }
            _ => {
                let nap = self.clock.runtime(Duration::from_micros(self.draw(1, 500)));
                tokio::time::sleep(nap).await;
            }
        }
    }
}

/// The tokio task running now, by the number lanesim's tokio tells the
/// explorer (`tokio::task::Id` prints it).
fn current_task() -> Option<u64> {
    tokio::task::try_id().and_then(|id| id.to_string().parse().ok())
}

struct Observer(Arc<World>);

/// How long a lifecycle hook waits for the log's order before it logs
/// without it (real mode; wall time).
const HOOK_PATIENCE: Duration = Duration::from_millis(100);

impl LaneEvents for Observer {
    fn created(&self, key: u64, lane: LaneId) {
        match self.0.ended.lock().unwrap().remove(&key) {
            Some(LaneExit::Reaped) => self.0.probe.world(WorldMark::LaneRebuiltAfterReap),
            Some(LaneExit::Panicked) => self.0.probe.world(WorldMark::LaneRebuiltAfterPanic),
            Some(LaneExit::Closed | LaneExit::Cancelled) | None => {}
        }
        self.0.record_hook(Event::LaneCreated { key, lane: lane.0 });
    }

    fn closed(&self, key: u64, lane: LaneId, exit: LaneExit) {
        self.0.ended.lock().unwrap().insert(key, exit);
        self.0.record_hook(Event::LaneClosed {
            key,
            lane: lane.0,
            exit: Exit::from(exit),
        });
    }
}

/// The handler every item runs: records start and end, sleeps its drawn
/// duration, and panics or hangs when the world says so.
fn handle(world: &Arc<World>, lane: Option<LaneId>, item: Item) -> BoxFuture {
    let Item { key, seq: item } = item;
    if lane.is_none() {
        world
            .inferring
            .lock()
            .unwrap()
            .handled_on(current_task(), key, item);
    }
    let lane = world.lane_of(lane);
    if let Some(waiting) = world.backlog.lock().unwrap().get_mut(&key) {
        *waiting = waiting.saturating_sub(1);
    }
    world.record(Event::HandleStart { key, item, lane });
    if world.stuck.contains(&key) && world.hung.lock().unwrap().insert(key) {
        world.probe.world(WorldMark::StuckKeyHung);
        world.record(Event::Stuck { key, item, lane });
        return Box::pin(std::future::pending());
    }
    if world.chance(world.params.sync_panic_chance) {
        world.inferring.lock().unwrap().panicked_on(current_task());
        world.end(Event::HandleEnd {
            key,
            item,
            lane,
            panicked: true,
        });
        panic!("{INJECTED} synchronous handler panic (key {key}, item {item})");
    }
    let world = Arc::clone(world);
    Box::pin(async move {
        world.buggify().await;
        let duration = world.between(world.params.handler);
        if !duration.is_zero() {
            tokio::time::sleep(duration).await;
        }
        let panicked = world.chance(world.params.panic_chance);
        world.end(Event::HandleEnd {
            key,
            item,
            lane,
            panicked,
        });
        if panicked {
            world.inferring.lock().unwrap().panicked_on(current_task());
            panic!("{INJECTED} handler panic (key {key}, item {item})");
        }
    })
}

/// The router under test, built from the subject's lanes target.
struct Target(Box<dyn Lanes>);

impl Target {
    fn build(world: &Arc<World>, subject: &Subject) -> Self {
        let params = &world.params;
        let lanes = subject
            .lanes()
            .expect("checked before the run: the target has a lanes router");
        let limit = || {
            params
                .capacity
                .expect("validated: dispatcher policies have a limit") as usize
        };
        let mode = match params.policy {
            Policy::Raw => Mode::Router,
            Policy::Reject => Mode::Reject { limit: limit() },
            Policy::Warn => Mode::Warn { limit: limit() },
        };
        let handler_world = Arc::clone(world);
        let built = lanes.build(LanesSetup {
            runtime: lanesim_target::shim::task::Handle::current(),
            idle_ttl: params.idle_ttl,
            mode,
            handler: Handler::new(move |lane, item| handle(&handler_world, lane, item)),
            reports: LaneReports::new(Arc::new(Observer(Arc::clone(world)))),
        });
        Self(built.unwrap_or_else(|error| panic!("the lanes target could not be built: {error}")))
    }

    /// Routes and returns (the capacity the call enforced, the depth or refusal).
    fn route(&self, world: &World, key: u64, item: u64) -> (Option<u64>, Option<u64>) {
        let params = &world.params;
        let enforced = match params.policy {
            Policy::Raw | Policy::Reject => params.capacity,
            Policy::Warn => None,
        };
        world.inferring.lock().unwrap().routing(Some(key));
        let routed = self
            .0
            .route(Item { key, seq: item }, enforced.map(|c| c as usize));
        world.inferring.lock().unwrap().routing(None);
        (enforced, routed.ok().map(|d| d as u64))
    }
}

/// Runs one seed of the lanes world.
pub fn run(params: &LanesParams, seed: u64, budget: Duration, subject: &Subject) -> WorldRun {
    let probe = Arc::new(WorldProbe::new(seed, params.preempt));
    let explorer = Arc::new(WorldExplorer::new(seed, params.explore, Arc::clone(&probe)));
    let explored = explore::install(&explorer);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime builds");
    let log = EventLog::default();
    let installed = coverage::install(&probe);
    let (stuck, elapsed, inference) = runtime.block_on(async {
        let start = Instant::now();
        explorer.log_holds(log.clone(), move || start.elapsed());
        probe.fired().watch(log.clone(), move || start.elapsed());
        super::lanes_started(Some(start));
        main(
            params.clone(),
            seed,
            budget,
            subject,
            log.clone(),
            Arc::clone(&probe),
            Host::Sim(&explorer),
        )
        .await
    });
    super::lanes_started(None);
    let finished = stuck.is_none();
    // The log ends at `RunEnd`: cancelling what is left (stuck lanes) with
    // the runtime is not part of the run, and is not counted either.
    let mut run = WorldRun::ended(&log, &probe, finished, elapsed, stuck);
    run.lanes = Some(inference);
    drop(runtime);
    drop(installed);
    drop(explored);
    run
}

/// Where [`main`] runs.
pub(crate) enum Host<'a> {
    /// Simulation, under the run's explorer (which tells the world of the
    /// target's tasks: [`infer`]).
    Sim(&'a WorldExplorer),
    /// Real mode: its clock, and the log's order across threads.
    Real(Clock, Arc<super::Order>),
}

pub(crate) async fn main(
    params: LanesParams,
    seed: u64,
    budget: Duration,
    subject: &Subject,
    log: EventLog,
    probe: Arc<WorldProbe>,
    host: Host<'_>,
) -> (Option<Stuck>, Duration, Inference) {
    let (clock, order, explorer) = match host {
        Host::Sim(explorer) => (
            Clock::Sim {
                start: Instant::now(),
            },
            Arc::default(),
            Some(explorer),
        ),
        Host::Real(clock, order) => (clock, order, None),
    };
    let stuck: BTreeSet<u64> = (params.keys - params.stuck_keys..params.keys).collect();
    let world = Arc::new(World {
        log,
        probe,
        ended: Mutex::new(std::collections::BTreeMap::new()),
        producing: std::sync::atomic::AtomicU64::new(params.producers),
        start: Instant::now(),
        rng: Mutex::new(SimRng::new(seed).fork("lanes")),
        params,
        stuck,
        hung: Mutex::new(BTreeSet::new()),
        clock,
        frozen: std::sync::atomic::AtomicBool::new(false),
        order,
        tasks: Mutex::new(std::collections::BTreeMap::new()),
        inferring: Mutex::default(),
        dropped: std::sync::atomic::AtomicBool::new(false),
        backlog: Mutex::new(std::collections::BTreeMap::new()),
    });
    let reports = subject.lanes().is_some_and(|l| l.capabilities().lifecycle);
    if let (false, Some(explorer)) = (reports, explorer) {
        world.inferring.lock().unwrap().watch();
        explorer.watch(Arc::new(infer::Watch(Arc::clone(&world))));
    }
    let target = Arc::new(Mutex::new(Some(Target::build(&world, subject))));

    let mut producers = Vec::new();
    for producer in 0..world.params.producers {
        producers.push(spawn_world(produce(
            Arc::clone(&world),
            Arc::clone(&target),
            producer,
        )));
    }
    if let Some(at) = world.params.drop_router_at {
        let (world, target) = (Arc::clone(&world), Arc::clone(&target));
        spawn_world(async move {
            tokio::time::sleep(at).await;
            if world.producing.load(std::sync::atomic::Ordering::Acquire) > 0 {
                world.probe.world(WorldMark::RouterDroppedMidflight);
            }
            drop_router(&world, &target);
        });
    }
    let deadline = world.start + budget;
    let mut stuck = None;
    for producer in producers {
        if tokio::time::timeout_at(deadline, producer).await.is_err() {
            stuck = Some(EndStep::LanesProducing {
                producing: world.producing.load(std::sync::atomic::Ordering::Acquire),
            });
            break;
        }
    }
    world.record(Event::WorkloadDone);
    if stuck.is_none() && !settle(&world, deadline).await {
        stuck = Some(EndStep::LanesSettling {
            router_dropped: false,
        });
    }
    drop_router(&world, &target);
    if stuck.is_none() && !settle(&world, deadline).await {
        stuck = Some(EndStep::LanesSettling {
            router_dropped: true,
        });
    }
    let finished = stuck.is_none();
    let order = world.order.state();
    world.order.ordered(|| {
        world.record(Event::RunEnd { finished });
        world
            .frozen
            .store(true, std::sync::atomic::Ordering::Release);
    });
    if let Some(explorer) = explorer {
        explorer.unwatch();
    }
    let inference = if reports {
        Inference::Reported
    } else {
        world.inferring.lock().unwrap().outcome()
    };
    let real = matches!(world.clock, Clock::Real(_));
    let stuck = stuck.map(|step| Stuck {
        step,
        stats: None,
        table: None,
        order: real.then_some(order),
    });
    (stuck, world.clock.now(), inference)
}

/// Drops the router as one step of the log: its counters, the drop and
/// its record never interleave with a lane's records (real mode; a lane
/// ended by the drop logs its end after `RouterDropped`, as it happens).
fn drop_router(world: &World, target: &Mutex<Option<Target>>) {
    world.order.ordered(|| drop_router_now(world, target));
}

fn drop_router_now(world: &World, target: &Mutex<Option<Target>>) {
    let taken = target.lock().unwrap().take();
    if let Some(target) = taken {
        world
            .dropped
            .store(true, std::sync::atomic::Ordering::Release);
        if let Some(stats) = target.0.stats() {
            world.record(Event::DispatcherStats {
                lanes_created: stats.lanes_created,
                lanes_live: stats.lanes_live,
                items_shed: stats.items_shed,
                handler_panics: stats.handler_panics,
            });
        }
        drop(target);
        world.record(Event::RouterDropped);
    }
}

/// Waits until the log has been quiet for longer than any handler or TTL
/// could take: then nothing but stuck keys is still running. `false` when
/// the deadline comes first.
async fn settle(world: &World, deadline: Instant) -> bool {
    let params = &world.params;
    let quiet = params.handler.1.max(params.idle_ttl.unwrap_or_default())
        + world.clock.runtime(Duration::from_millis(10));
    loop {
        let before = world.log.len();
        tokio::time::sleep(quiet).await;
        if world.log.len() == before {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
    }
}

async fn produce(world: Arc<World>, target: Arc<Mutex<Option<Target>>>, producer: u64) {
    route_all(&world, &target, producer).await;
    world
        .producing
        .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
}

async fn route_all(world: &World, target: &Mutex<Option<Target>>, producer: u64) {
    let params = world.params.clone();
    let mut sent = 0;
    while sent < params.items_per_producer {
        let burst = world
            .draw(params.burst.0, params.burst.1)
            .min(params.items_per_producer - sent);
        for _ in 0..burst {
            world.buggify().await;
            let key = if world.chance(params.hot_key) {
                0
            } else {
                world.draw(0, params.keys - 1)
            };
            let item = producer * params.items_per_producer + sent;
            sent += 1;
            // The route and its record are one step of the log: in real mode
            // the lane (on another thread) could otherwise start the item,
            // and log it, before the route is logged.
            let routed = world.order.ordered(|| {
                let routed = target
                    .lock()
                    .unwrap()
                    .as_ref()
                    .map(|target| target.route(world, key, item));
                if let Some((capacity, depth)) = routed {
                    let mut backlog = world.backlog.lock().unwrap();
                    let waiting = backlog.entry(key).or_default();
                    *waiting += 1;
                    if *waiting == MAX_RUN + 1 {
                        world.probe.world(WorldMark::BacklogPastMaxRun);
                    }
                    drop(backlog);
                    world.record(Event::Routed {
                        key,
                        item,
                        capacity,
                        depth,
                    });
                }
                routed
            });
            if routed.is_none() {
                return; // the router was dropped
            }
            let gap = world.between(params.gap);
            if !gap.is_zero() {
                tokio::time::sleep(gap).await;
            }
        }
        let pause = world.between(params.pause);
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
    }
}
