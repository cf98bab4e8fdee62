//! The lane task: consumes one key's items in order, decrements `pending`
//! only after each handler resolves (invariant 2), reaps itself when idle,
//! and removes its own map entry however it ends (invariant 3).

use std::fmt::Debug;
use std::hash::{BuildHasher, Hash};

use super::lane::{Lane, LaneContext, LaneMap, LaneState};
use super::observer::{LaneExit, LaneId};
use crate::planted::PlantedBug;
use crate::shim::chan::Receiver;
use crate::shim::probe::{mark, preempt_point, Mark, Point};
use crate::shim::rt::{consume_budget, retry_hint};
use crate::shim::sync::{Arc, Ordering, Weak};
use crate::shim::time::timeout;

/// A lane task not yet started. The guard exists from creation, so even a
/// task dropped before its first poll (its runtime already shut down) removes
/// its entry. Fields drop in declaration order: the guard (removing the
/// entry, the only sender) before the receiver, so a producer holding the
/// entry can never send into a dead channel.
pub(super) struct LaneTask<K: Eq + Hash, T, S: BuildHasher + Clone> {
    guard: ExitGuard<K, T, S>,
    rx: Receiver<T>,
}

enum Next<T> {
    Item(T),
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
        state: Arc<LaneState>,
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
        loop {
            let item = match next(&rx, &ctx).await {
                Next::Item(item) => item,
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
            };
            if planted.has(PlantedBug::PendingDecrementedAtDequeue) {
                guard.state.pending.fetch_sub(1, Ordering::AcqRel);
            }
            (ctx.consumer)(guard.id, item).await;
            // Only now: a long handler over an empty queue still counts as
            // pending, so it is neither reaped nor ignored by the capacity check.
            if !planted.has(PlantedBug::PendingDecrementedAtDequeue) {
                guard.state.pending.fetch_sub(1, Ordering::AcqRel);
            }
            if planted.has(PlantedBug::CapacitySharedAcrossKeys) {
                ctx.all_pending.fetch_sub(1, Ordering::AcqRel);
            }
            // A lane with a deep backlog and instant handlers never pends on
            // its channel; give the scheduler its turn like any tokio resource.
            consume_budget().await;
        }
    }
}

/// The next item, `Idle` once the TTL passes with none, `Closed` when the
/// router is gone. The non-blocking try first keeps a timer (and a clock read)
/// off the path of a lane that has a backlog.
async fn next<K, T>(rx: &Receiver<T>, ctx: &LaneContext<K, T>) -> Next<T> {
    if let Ok(item) = rx.try_recv() {
        return Next::Item(item);
    }
    let received = match ctx.idle_ttl {
        Some(ttl) => match timeout(ttl, rx.recv_async()).await {
            Ok(received) => received,
            Err(_elapsed) => return Next::Idle,
        },
        None => rx.recv_async().await,
    };
    received.map_or(Next::Closed, Next::Item)
}

/// Owns the lane's identity; removes its entry however the task ends (reap,
/// router drop, cancellation, or a panic unwinding through the loop).
struct ExitGuard<K: Eq + Hash, T, S: BuildHasher + Clone> {
    key: K,
    id: LaneId,
    state: Arc<LaneState>,
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
            || Arc::ptr_eq(&lane.state, &self.state)
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
            return false;
        };
        let reaped = lanes.remove_if(&self.key, |lane| {
            self.owns(lane) && lane.state.pending.load(Ordering::Acquire) == 0
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
