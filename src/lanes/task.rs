//! The lane task: consumes one key's items in order, decrements `pending`
//! only after each handler resolves (invariant 2), reaps itself when idle,
//! and removes its own map entry however it ends (invariant 3).

use std::collections::VecDeque;
use std::fmt::Debug;
use std::hash::{BuildHasher, Hash};

use super::lane::{Lane, LaneContext, LaneMap, LaneState};
use super::observer::{LaneExit, LaneId};
use super::queue::{Receiver, Taken};
use crate::planted::PlantedBug;
use crate::shim::probe::{self, mark, preempt_point, Mark, Point};
use crate::shim::rt::{consume_budget, retry_hint};
use crate::shim::sync::{Arc, Ordering, Weak};
use crate::shim::time::{race_sleep, timeout, Instant};

/// A lane task not yet started. The guard exists from creation, so even a
/// task dropped before its first poll (its runtime already shut down) removes
/// its entry. Fields drop in declaration order: the guard (removing the
/// entry, the only sender) before the receiver, so a producer holding the
/// entry can never send into a dead channel.
pub(super) struct LaneTask<K: Eq + Hash, T, S: BuildHasher + Clone> {
    guard: ExitGuard<K, T, S>,
    rx: Receiver<T>,
}

enum Next {
    /// The batch holds items.
    Taken,
    Idle,
    Closed,
}

impl<K, T, S> LaneTask<K, T, S>
where
    K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
    T: Send + 'static,
    S: BuildHasher + Clone + Send + Sync + 'static,
{
    pub(super) fn new(
        key: K,
        id: LaneId,
        rx: Receiver<T>,
        state: Arc<LaneState<T>>,
        lanes: Weak<LaneMap<K, T, S>>,
        ctx: Arc<LaneContext<K, T>>,
    ) -> Self {
        Self {
            guard: ExitGuard {
                key,
                id,
                state,
                lanes,
                ctx,
                exit: None,
            },
            rx,
        }
    }

    pub(super) async fn run(self) {
        // Locals drop in reverse: `guard` (declared last) before `rx`, as in
        // the struct.
        let LaneTask { guard, rx } = self;
        let mut guard = guard;
        let ctx = Arc::clone(&guard.ctx);
        let planted = ctx.planted;
        // What the lane took from its queue and has not handled yet, in
        // order. Still counted in `pending`, so the lane is not idle while it
        // holds any. Declared after the guard: dropped first, like the queue.
        let mut batch = VecDeque::new();
        let mut handled = 0u32;
        loop {
            let item = match batch.pop_front() {
                Some(item) => item,
                None => match next(&rx, &mut batch, &ctx).await {
                    Next::Taken => continue,
                    Next::Idle => {
                        // Another thread may route to this key between the
                        // timeout and the decision: the lock decides.
                        preempt_point(Point::LaneIdleBeforeReap).await;
                        if guard.try_reap() {
                            guard.exit = Some(LaneExit::Reaped);
                            // Removed, not yet ended: a successor lane may be
                            // created and routed to before this task's exit
                            // guard runs (it must not remove the successor).
                            preempt_point(Point::LaneReapedBeforeExit).await;
                            break;
                        }
                        // Work arrived (or the router is going): look again.
                        retry_hint().await;
                        continue;
                    }
                    Next::Closed => {
                        guard.exit = Some(LaneExit::Closed);
                        break;
                    }
                },
            };
            if planted.has(PlantedBug::PendingDecrementedAtDequeue) {
                guard.state.pending.fetch_sub(1, Ordering::AcqRel);
            }
            ctx.consumer.call(guard.id, item).await;
            // Only now: a long handler over an empty queue still counts as
            // pending, so it is neither reaped nor ignored by the capacity check.
            if !planted.has(PlantedBug::PendingDecrementedAtDequeue) {
                guard.state.pending.fetch_sub(1, Ordering::AcqRel);
            }
            if planted.has(PlantedBug::CapacitySharedAcrossKeys) {
                ctx.all_pending.fetch_sub(1, Ordering::AcqRel);
            }
            // A lane with a deep backlog and instant handlers never pends on
            // its queue; it gives the scheduler its turn like a tokio
            // resource, at one unit of coop budget per `ITEMS_PER_BUDGET`
            // items rather than per item (see there for why).
            handled += 1;
            if handled == ITEMS_PER_BUDGET {
                handled = 0;
                consume_budget().await;
            }
        }
    }
}

/// Items a lane handles per unit of tokio's coop budget (128 units a poll):
/// with handlers that never wait, a lane yields its worker every 16,384
/// items (well under a millisecond at the tens of ns an instant handler
/// takes) instead of every 128. Each yield on a two-worker runtime can cost
/// a park and an unpark (an eventfd write and a context switch): at one unit
/// per item, 47,000 context switches against upstream's 100 for 20 M items
/// at one key, and 0.9x its throughput; with batches and one unit per 32,
/// 256 or 1,024 items, 1.08x, 1.25x and 1.29x (measured for this change;
/// docs/benchmarks.md, "Where the time went, and what changed").
/// A handler that uses tokio resources spends the budget itself, so the
/// lane still yields on time. Pinned by
/// `a_flooded_lane_yields_to_its_neighbours` (tests/lanes_router.rs).
const ITEMS_PER_BUDGET: u32 = 128;

/// Fills the (empty) `batch` from the queue: `Taken` when it holds items,
/// `Idle` once the TTL passes with none, `Closed` when the router is gone and
/// the queue is drained. With a TTL, the non-blocking take first keeps a
/// timer (and a clock read) off the path of a lane that has a backlog.
async fn next<K, T>(rx: &Receiver<T>, batch: &mut VecDeque<T>, ctx: &LaneContext<K, T>) -> Next {
    let taken = match ctx.idle_ttl {
        Some(ttl) => {
            match rx.take_all(batch) {
                Taken::Some => return Next::Taken,
                Taken::Closed => return Next::Closed,
                Taken::Empty => {}
            }
            // Read only when marks are on: no clock read in production.
            let waiting_since = probe::ENABLED.then(Instant::now);
            let waited = if ctx.planted.has(PlantedBug::IdleSelectUnbiased) {
                race_sleep(ttl, rx.wait_into(batch)).await
            } else {
                // `timeout` polls the wait before its timer: an item ready
                // when the TTL passes is always taken.
                timeout(ttl, rx.wait_into(batch)).await.ok()
            };
            if matches!(waited, Some(Taken::Some))
                && waiting_since.is_some_and(|since| since.elapsed() >= ttl)
            {
                mark(Mark::IdleWaitRaced);
            }
            match waited {
                Some(taken) => taken,
                None => return Next::Idle,
            }
        }
        // No timer to keep off the path: waiting looks first anyway.
        None => rx.wait_into(batch).await,
    };
    match taken {
        Taken::Some | Taken::Empty => Next::Taken,
        Taken::Closed => Next::Closed,
    }
}

/// Owns the lane's identity; removes its entry however the task ends (reap,
/// router drop, cancellation, or a panic unwinding through the loop).
struct ExitGuard<K: Eq + Hash, T, S: BuildHasher + Clone> {
    key: K,
    id: LaneId,
    state: Arc<LaneState<T>>,
    lanes: Weak<LaneMap<K, T, S>>,
    ctx: Arc<LaneContext<K, T>>,
    /// Set by the loop when it ends on purpose.
    exit: Option<LaneExit>,
}

impl<K: Eq + Hash, T, S: BuildHasher + Clone> ExitGuard<K, T, S> {
    /// `ptr_eq` on the state: the key's entry may already belong to a
    /// successor lane, which this one must never remove.
    fn owns(&self, lane: &Lane<T>) -> bool {
        self.ctx.planted.has(PlantedBug::ReapWithoutIdentityCheck)
            || Arc::ptr_eq(lane.state(), &self.state)
    }

    /// Removes this lane if it is still the key's lane and nothing is
    /// pending, deciding under the shard lock producers admit under. `true`
    /// means the task must exit.
    fn try_reap(&self) -> bool {
        // Router gone: do not exit here. Items it admitted before the drop
        // may have arrived after our timer fired; the map took every sender
        // with it, so the channel reports the disconnect once they are
        // drained, and that ends the lane. (Exiting here lost them: loom
        // found it, `route_vs_idle_reap_*` pins it.)
        let Some(lanes) = self.lanes.upgrade() else {
            mark(Mark::ReapAfterRouterGone);
            return self.ctx.planted.has(PlantedBug::IdleSelectUnbiased);
        };
        let early = self
            .ctx
            .planted
            .has(PlantedBug::ReapReadsPendingOutsideLock)
            .then(|| self.state.pending.load(Ordering::Acquire));
        let reaped = lanes.remove_if(&self.key, |lane| {
            let pending = early.unwrap_or_else(|| lane.state().pending.load(Ordering::Acquire));
            self.owns(lane) && pending == 0
        });
        mark(if reaped {
            Mark::ReapWon
        } else {
            Mark::ReapDeclined
        });
        reaped
    }
}

impl<K: Eq + Hash, T, S: BuildHasher + Clone> Drop for ExitGuard<K, T, S> {
    fn drop(&mut self) {
        let exit = match self.exit {
            Some(exit) => exit,
            None if std::thread::panicking() => {
                mark(Mark::LaneExitPanicked);
                LaneExit::Panicked
            }
            None => {
                mark(Mark::LaneExitCancelled);
                LaneExit::Cancelled
            }
        };
        // Unlike the reap this ignores `pending`: the task is over, and an
        // entry left behind would black-hole every later item for the key.
        // Already removed after a reap; the identity check makes that a no-op
        // and keeps a successor's entry safe.
        if !self.ctx.planted.has(PlantedBug::NoExitGuard) {
            if let Some(lanes) = self.lanes.upgrade() {
                lanes.remove_if(&self.key, |lane| self.owns(lane));
            }
        }
        if let Some(observer) = &self.ctx.observer {
            observer.lane_closed(&self.key, self.id, exit);
        }
    }
}
