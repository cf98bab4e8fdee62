//! Scheduling exploration: the seeded explorer a simulated world installs
//! for lanesim's tokio (the `lanesim-sched` seam, `vendor/tokio`).
//!
//! Model. A world runs a target's tasks on one current-thread runtime per
//! host. Stock tokio polls them first woken, first polled, lets each run up
//! to 128 operations on its resources before it must yield, and draws an
//! un-`biased` `select!`'s branch order from OS entropy: no seed reaches a
//! race that needs another order. With the explorer installed, every one
//! of those choices comes from the run's seed, on a stream of its own
//! (`fork("schedule")`), so the rest of the world draws what it always did:
//!
//! - every runtime's generator is seeded ([`Explorer::rng_seed`]): an
//!   un-`biased` `select!` replays, and different seeds try both orders;
//! - with chance `shuffle`, a pick polls a random ready task instead of the
//!   oldest ([`WorldMark::ScheduleShuffled`]);
//! - with chance `awaits`, a task about to be polled is preempted: either
//!   given a budget of 0 to 7 operations, so it yields at one of its next
//!   await points on a tokio resource (a channel, a timer, a socket, a
//!   lock) and every other ready task runs first
//!   ([`WorldMark::AwaitPreempted`]), or held back for a span of virtual
//!   time drawn from `hold` ([`WorldMark::TaskHeld`]), as a descheduled
//!   thread would be. A task's next poll after either runs unhindered, so
//!   no task starves.
//!
//! With both chances zero the explorer only seeds the generators: the
//! worlds' runs are step for step what they were before it existed.
//!
//! Counting. Tasks the world spawns for itself (producers, peers, fault
//! drivers: [`spawn_world`]) are explored like the target's but the world
//! marks count the target's tasks only, so a scenario's `reaches` prove
//! what happened to the code under test. Each preemption and hold is also
//! counted by the place the task was spawned
//! ([`CoverMark::Task`]: `await_preempted@src/lanes/router.rs:120`), and
//! noted beside the log where it fired (`fired`, shown by `replay -v`);
//! a hold is an event of the log (`TaskHeld`), which the checkers read.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::Location;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_sched::{Explorer, Poll, Task};

use crate::coverage::{CoverMark, Site, TaskMark, WorldMark, WorldProbe};
use crate::event::{Event, EventLog};
use crate::fired::Preempted;
use crate::rng::SimRng;

/// The exploration knobs of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Exploration {
    /// Chance a pick polls a random ready task instead of the oldest.
    pub shuffle: f64,
    /// Chance a task about to be polled is preempted (a budget that ends
    /// at one of its next awaits, or a hold).
    pub awaits: f64,
    /// How long a held task waits (virtual time); zero: never held, only
    /// budgets.
    pub hold: (Duration, Duration),
}

impl Exploration {
    /// Whether any choice departs from stock tokio's.
    #[must_use]
    pub fn explores(&self) -> bool {
        self.shuffle > 0.0 || self.awaits > 0.0
    }
}

/// The most operations a preempting budget allows before the task yields.
const MAX_BUDGET: u64 = 7;

thread_local! {
    /// Set while the world spawns a task of its own ([`spawn_world`]).
    static WORLD_SPAWNING: Cell<bool> = const { Cell::new(false) };
}

/// Spawns one of the world's own tasks (not the target's): explored like
/// any other, not counted in the marks that prove reach on the target.
#[track_caller]
pub(crate) fn spawn_world<F>(future: F) -> tokio::task::JoinHandle<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            WORLD_SPAWNING.with(|spawning| spawning.set(false));
        }
    }
    WORLD_SPAWNING.with(|spawning| spawning.set(true));
    let _reset = Reset;
    tokio::spawn(future)
}

/// Told of the target's tasks as they come and go (the lanes world infers
/// a router's lanes from them: `world::lanes::infer`). Called on the
/// runtime's thread, with none of the explorer's locks held.
pub(crate) trait TaskWatch: Send + Sync {
    /// The target spawned `task` (the world's own spawns are not told).
    fn spawned(&self, task: u64);
    /// `task` is about to be polled.
    fn polling(&self, task: u64);
    /// `task` ended: returned, panicked or cancelled.
    fn ended(&self, task: u64);
}

/// The explorer of one run.
pub struct WorldExplorer {
    policy: Exploration,
    probe: Arc<WorldProbe>,
    state: Mutex<State>,
    /// Where holds are logged ([`WorldExplorer::log_holds`]).
    holds: Mutex<Option<HoldLog>>,
    /// Who is told of the target's tasks ([`WorldExplorer::watch`]).
    watch: Mutex<Option<Arc<dyn TaskWatch>>>,
}

/// The run's log, and its clock, for `Event::TaskHeld`.
struct HoldLog {
    log: EventLog,
    now: Box<dyn Fn() -> Duration + Send + Sync>,
}

/// The host holds are logged under.
pub const HOST: &str = "sched";

struct State {
    rng: SimRng,
    /// Tasks the world spawned for itself.
    world: BTreeSet<u64>,
    /// Where each explored task was spawned.
    sites: BTreeMap<u64, Site>,
    /// Tasks whose next poll runs unhindered (just preempted or released).
    resuming: BTreeSet<u64>,
}

impl WorldExplorer {
    /// The explorer for the run with `seed`, counting into `probe`.
    #[must_use]
    pub fn new(seed: u64, policy: Exploration, probe: Arc<WorldProbe>) -> Self {
        Self {
            policy,
            probe,
            state: Mutex::new(State {
                rng: SimRng::new(seed).fork("schedule"),
                world: BTreeSet::new(),
                sites: BTreeMap::new(),
                resuming: BTreeSet::new(),
            }),
            holds: Mutex::new(None),
            watch: Mutex::new(None),
        }
    }

    /// Tells `watch` of the target's tasks from now on, until
    /// [`WorldExplorer::unwatch`].
    pub(crate) fn watch(&self, watch: Arc<dyn TaskWatch>) {
        *self
            .watch
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(watch);
    }

    /// Stops telling anyone (the watcher may hold the world, which holds
    /// nothing of the explorer: no cycle, but the world ends first).
    pub(crate) fn unwatch(&self) {
        self.watch
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
    }

    fn watcher(&self) -> Option<Arc<dyn TaskWatch>> {
        self.watch
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Logs every hold to `log` at the time `now` reads (the world's own
    /// clock): the checkers allow for the time tasks were held
    /// (`check::holds`).
    pub fn log_holds(&self, log: EventLog, now: impl Fn() -> Duration + Send + Sync + 'static) {
        *self
            .holds
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(HoldLog {
            log,
            now: Box::new(now),
        });
    }

    fn held(&self, hold: Duration) {
        let holds = self
            .holds
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(holds) = holds.as_ref() {
            holds.log.push_timed(
                &holds.now,
                HOST,
                Event::TaskHeld {
                    held_us: hold.as_micros() as u64,
                },
            );
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts `mark` for `task`: by its spawn site always, as a world mark
    /// when it is the target's.
    fn count(&self, state: &State, task: u64, mark: TaskMark) {
        if let Some(site) = state.sites.get(&task) {
            self.probe.hit(CoverMark::Task(mark, *site));
        }
        if !state.world.contains(&task) {
            self.probe.world(match mark {
                TaskMark::Preempted => WorldMark::AwaitPreempted,
                TaskMark::Held => WorldMark::TaskHeld,
            });
        }
    }
}

impl Explorer for WorldExplorer {
    fn rng_seed(&self) -> u64 {
        self.state().rng.next_u64()
    }

    fn reorders(&self) -> bool {
        self.policy.shuffle > 0.0
    }

    fn spawned(&self, task: Task, at: &'static Location<'static>) {
        let world = WORLD_SPAWNING.with(Cell::get);
        if !world {
            if let Some(watch) = self.watcher() {
                watch.spawned(task.id);
            }
        }
        if !self.policy.explores() {
            return;
        }
        let mut state = self.state();
        if world {
            state.world.insert(task.id);
        }
        state.sites.insert(task.id, Site::spawned_at(at));
    }

    fn pick(&self, ready: usize) -> usize {
        if self.policy.shuffle <= 0.0 {
            return 0;
        }
        let mut state = self.state();
        if !state.rng.chance(self.policy.shuffle) {
            return 0;
        }
        let index = state.rng.range(0, ready as u64 - 1) as usize;
        if index != 0 {
            self.probe.world(WorldMark::ScheduleShuffled);
        }
        index
    }

    fn poll(&self, task: Task) -> Poll {
        if let Some(watch) = self.watcher() {
            watch.polling(task.id);
        }
        if self.policy.awaits <= 0.0 {
            return Poll::Run;
        }
        let mut state = self.state();
        if state.resuming.remove(&task.id) || !state.rng.chance(self.policy.awaits) {
            return Poll::Run;
        }
        let (lo, hi) = self.policy.hold;
        if hi > Duration::ZERO && state.rng.chance(0.5) {
            let micros = state
                .rng
                .range(lo.as_micros() as u64, hi.as_micros() as u64);
            if micros > 0 {
                state.resuming.insert(task.id);
                self.count(&state, task.id, TaskMark::Held);
                drop(state);
                let hold = Duration::from_micros(micros);
                self.held(hold);
                return Poll::Hold(hold);
            }
        }
        Poll::Budget(state.rng.range(0, MAX_BUDGET) as u8)
    }

    fn polled(&self, task: Task, preempted: bool) {
        if !preempted {
            return;
        }
        let mut state = self.state();
        state.resuming.insert(task.id);
        self.count(&state, task.id, TaskMark::Preempted);
        let what = Preempted::Await {
            spawned_at: state
                .sites
                .get(&task.id)
                .map(|site| site.name().to_string()),
            world: state.world.contains(&task.id),
        };
        drop(state);
        self.probe.fired().note(what);
    }

    fn ended(&self, task: Task) {
        if let Some(watch) = self.watcher() {
            watch.ended(task.id);
        }
    }
}

/// Installs `explorer` for the runtimes this thread builds until the guard
/// drops.
#[must_use = "the explorer is uninstalled when this is dropped"]
pub fn install(explorer: &Arc<WorldExplorer>) -> lanesim_sched::Installed {
    lanesim_sched::install(Arc::clone(explorer) as Arc<dyn Explorer>)
}

/// Whether this build's tokio asks an explorer at all (lanesim's patched
/// tokio does; a crate without the `[patch.crates-io]` line gets stock
/// tokio, which explores nothing and seeds `select!` from OS entropy).
#[must_use]
pub fn tokio_explores() -> bool {
    static PATCHED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PATCHED.get_or_init(|| {
        if lanesim_sched::patched() {
            return true;
        }
        // Building a current-thread runtime is what the patched tokio asks
        // at; nothing else tells.
        drop(
            tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("a current-thread runtime"),
        );
        lanesim_sched::patched()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::PreemptPolicy;

    /// Runs `body` under an explorer that preempts every poll it may.
    fn preempting(body: impl std::future::Future<Output = ()>) -> crate::coverage::Coverage {
        let probe = Arc::new(WorldProbe::new(7, PreemptPolicy::default()));
        let policy = Exploration {
            shuffle: 1.0,
            awaits: 1.0,
            hold: (Duration::from_millis(1), Duration::from_millis(2)),
        };
        let explorer = Arc::new(WorldExplorer::new(7, policy, Arc::clone(&probe)));
        {
            let _installed = install(&explorer);
            tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .expect("a runtime")
                .block_on(body);
        }
        probe.close()
    }

    /// A task that yields at eight awaits.
    async fn busy() {
        for _ in 0..8 {
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_micros(10)).await;
        }
    }

    fn world_marks(coverage: &crate::coverage::Coverage) -> u64 {
        [WorldMark::AwaitPreempted, WorldMark::TaskHeld]
            .iter()
            .map(|mark| coverage.get(&CoverMark::World(*mark)).copied().unwrap_or(0))
            .sum()
    }

    fn task_marks(coverage: &crate::coverage::Coverage) -> u64 {
        coverage
            .iter()
            .filter(|(mark, _)| matches!(mark, CoverMark::Task(..)))
            .map(|(_, n)| *n)
            .sum()
    }

    /// The world's own tasks are explored (counted by spawn site) but
    /// prove nothing about the target: no world mark counts them.
    #[test]
    fn the_worlds_own_tasks_count_in_no_world_mark() {
        let world = preempting(async {
            let tasks: Vec<_> = (0..4).map(|_| spawn_world(busy())).collect();
            for task in tasks {
                task.await.unwrap();
            }
        });
        assert!(
            task_marks(&world) > 0,
            "the world's tasks were not explored"
        );
        assert_eq!(world_marks(&world), 0, "{world:?}");

        let target = preempting(async {
            let tasks: Vec<_> = (0..4).map(|_| tokio::spawn(busy())).collect();
            for task in tasks {
                task.await.unwrap();
            }
        });
        assert!(world_marks(&target) > 0, "{target:?}");
    }

    /// A task just preempted or held runs its next poll unhindered: with
    /// every poll preemptable, each task still finishes, and never two
    /// preemptions of one task in a row.
    #[test]
    fn a_preempted_task_runs_its_next_poll_unhindered() {
        let explorer = WorldExplorer::new(
            3,
            Exploration {
                shuffle: 0.0,
                awaits: 1.0,
                hold: (Duration::ZERO, Duration::ZERO),
            },
            Arc::new(WorldProbe::new(3, PreemptPolicy::default())),
        );
        let task = Task { id: 1 };
        for _ in 0..50 {
            assert!(matches!(explorer.poll(task), Poll::Budget(_)));
            explorer.polled(task, true);
            assert_eq!(explorer.poll(task), Poll::Run, "preempted twice in a row");
            explorer.polled(task, false);
        }
    }

    /// A shuffled pick is always one of the ready tasks.
    #[test]
    fn a_shuffled_pick_is_one_of_the_ready_tasks() {
        let explorer = WorldExplorer::new(
            5,
            Exploration {
                shuffle: 1.0,
                ..Exploration::default()
            },
            Arc::new(WorldProbe::new(5, PreemptPolicy::default())),
        );
        let mut seen = BTreeSet::new();
        for _ in 0..2_000 {
            let pick = explorer.pick(3);
            assert!(pick < 3, "picked {pick} of 3");
            seen.insert(pick);
        }
        assert_eq!(seen.len(), 3, "some ready task is never picked: {seen:?}");
    }
}
