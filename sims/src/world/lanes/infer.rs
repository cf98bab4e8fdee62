//! Lanes inferred from outside, for a router that reports no lifecycle.
//!
//! Model. In every router we know of a lane is a tokio task, spawned when a
//! route finds its key without one, and the lane ends when that task ends
//! (reaped when idle, dead with a panicking handler, closed by the router's
//! drop). lanesim's tokio tells the world when the target spawns a task and
//! when one ends ([`TaskWatch`]), so the world reports the lifecycle such a
//! router does not:
//!
//! - the one task the target spawns while the world routes key `k` is `k`'s
//!   new lane: `LaneCreated`, logged before the route's `Routed`;
//! - when that task ends: `LaneClosed`, as `Panicked` when a handler
//!   panicked in the poll the task ended in, as `Closed` once the router
//!   was dropped, and as `Reaped` otherwise (it ended of itself while the
//!   router lived: a reap, whatever the target calls it). A reap the lane
//!   decides after the drop cannot be told from the drop's close from
//!   outside, and is logged `Closed` (its items are still judged by L2);
//! - the inference holds for a run when every handler ran on a lane so
//!   inferred, of its own key, and no route spawned two tasks. Otherwise
//!   (lanes spawned by another task, a pool of workers, a helper task beside
//!   each lane) the run's lifecycle events are not read, and L5 is not
//!   decided for that run, with the first thing that broke the inference as
//!   the reason ([`Inference::Failed`]). Real mode has no explorer to tell
//!   it, and infers nothing.
//!
//! Pinned by `the_lifecycle_inferred_from_lanesims_router_is_the_one_it_reports`,
//! `l5_detects_a_reap_holding_work_of_a_router_that_reports_no_lanes` and
//! the routers with tasks that are not lanes (sims/tests/inferred_lanes.rs).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use lanesim_target::lanes::{LaneEvents, LaneExit, LaneId};

use super::{Observer, World};
use crate::explore::TaskWatch;

/// How the world knew a run's lanes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inference {
    /// The target reported them itself.
    Reported,
    /// Inferred from its tasks, and the inference held.
    Held,
    /// Not known: why (L5 is not decided for the run).
    Failed(String),
}

/// What the world has inferred so far.
#[derive(Default)]
pub(super) struct Inferring {
    /// Whether lanesim's tokio tells the world of tasks (simulation, a
    /// target that reports no lanes).
    watching: bool,
    /// The key the world is routing now, and how many tasks that route
    /// spawned.
    routing: Option<(u64, u32)>,
    /// Tasks inferred to be lanes: the key, and the lane's number.
    lanes: BTreeMap<u64, (u64, u64)>,
    /// Tasks a handler panicked on in their current poll.
    panicked: BTreeSet<u64>,
    /// The first thing that broke the inference.
    failed: Option<String>,
}

impl Inferring {
    /// Starts watching (the world tells the explorer [`Watch`]).
    pub(super) fn watch(&mut self) {
        self.watching = true;
    }

    /// A route of `key` begins (`Some`) or ends (`None`).
    pub(super) fn routing(&mut self, key: Option<u64>) {
        self.routing = key.map(|key| (key, 0));
    }

    /// A handler of `key`'s `item` runs on `task`: the inference holds only
    /// if `task` is a lane of `key`.
    pub(super) fn handled_on(&mut self, task: Option<u64>, key: u64, item: u64) {
        if !self.watching || self.failed.is_some() {
            return;
        }
        let why = match task.and_then(|task| self.lanes.get(&task)) {
            Some(&(lane_key, _)) if lane_key == key => return,
            Some(&(lane_key, lane)) => format!(
                "item {item} of key {key} ran on lane#{lane}, the task a route of key {lane_key} spawned"
            ),
            None => format!(
                "item {item} of key {key} ran on a task no route spawned (lanes spawned by another task, or a pool of workers)"
            ),
        };
        self.failed = Some(why);
    }

    /// A handler panicked on `task` (its lane may die with it).
    pub(super) fn panicked_on(&mut self, task: Option<u64>) {
        if let Some(task) = task {
            self.panicked.insert(task);
        }
    }

    /// The run's outcome.
    pub(super) fn outcome(&self) -> Inference {
        if !self.watching {
            return Inference::Failed(
                "lanes are inferred only in simulation, where lanesim's tokio tells the world when the target's tasks start and end"
                    .to_string(),
            );
        }
        match &self.failed {
            None => Inference::Held,
            Some(why) => Inference::Failed(format!(
                "the target reports no lanes, and they could not be inferred from its tasks: {why}"
            )),
        }
    }
}

/// The explorer's watcher: infers lanes as the target's tasks come and go.
pub(super) struct Watch(pub(super) Arc<World>);

impl TaskWatch for Watch {
    fn spawned(&self, task: u64) {
        let world = &self.0;
        let created = {
            let mut inferring = world.inferring.lock().unwrap();
            match inferring.routing.as_mut() {
                None => None,
                Some((key, spawned)) => {
                    *spawned += 1;
                    let key = *key;
                    if *spawned > 1 && inferring.failed.is_none() {
                        inferring.failed = Some(format!(
                            "one route of key {key} spawned more than one task (a lane and a helper?)"
                        ));
                    }
                    let lane = world.number(task);
                    inferring.lanes.insert(task, (key, lane));
                    Some((key, lane))
                }
            }
        };
        if let Some((key, lane)) = created {
            Observer(Arc::clone(world)).created(key, LaneId(lane));
        }
    }

    fn polling(&self, task: u64) {
        self.0.inferring.lock().unwrap().panicked.remove(&task);
    }

    fn ended(&self, task: u64) {
        let world = &self.0;
        let closed = {
            let mut inferring = world.inferring.lock().unwrap();
            let panicked = inferring.panicked.remove(&task);
            inferring.lanes.get(&task).map(|&(key, lane)| {
                let exit = if panicked {
                    LaneExit::Panicked
                } else if world.dropped.load(std::sync::atomic::Ordering::Acquire) {
                    LaneExit::Closed
                } else {
                    LaneExit::Reaped
                };
                (key, lane, exit)
            })
        };
        if let Some((key, lane, exit)) = closed {
            Observer(Arc::clone(world)).closed(key, LaneId(lane), exit);
        }
    }
}
