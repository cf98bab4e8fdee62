//! Loom models of the lane races, on the production `LaneRouter` compiled
//! under `--cfg loom` (lane tasks become loom threads, the lane map a
//! loom-locked sharded map, timeouts elapse whenever their future is not
//! ready, so an idle lane may reap at every point it waits).
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test --release --test loom_lanes`
//! (add `--features planted-bugs` for the `*_detects_*` models).
#![cfg(loom)]

mod checker;

use std::sync::Arc;
use std::time::Duration;

use checker::model;
use futures_util::future::BoxFuture;
use lanesim::lanes::{FixedHasher, LaneExit, LaneId, LaneObserver, LaneRouter, LaneRouterConfig};
use lanesim::planted::Planted;
use lanesim::shim::rt::RuntimeChoice;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::Mutex;

/// Counts lane lifecycles so a model can wait for every lane to end, and
/// checks that a key gets a new lane only when every item routed before has
/// been handled: otherwise an older lane still holds work (L3).
#[derive(Default)]
struct Lanes {
    /// (created, closed), behind a mutex and a condvar: the model blocks
    /// until they match instead of spinning (a spin costs loom a preemption
    /// per turn and exhausts the bound).
    counts: Mutex<(usize, usize)>,
    ended: loom::sync::Condvar,
    routed: AtomicUsize,
    handled: AtomicUsize,
    /// Set while a handler the model watches is running.
    running: AtomicBool,
}

impl LaneObserver<u64> for Lanes {
    fn lane_created(&self, _key: &u64, _lane: LaneId) {
        // Read-modify-writes read the latest value; a plain load may be
        // handed a stale one.
        assert_eq!(
            self.routed.fetch_add(0, Ordering::SeqCst),
            self.handled.fetch_add(0, Ordering::SeqCst),
            "L3: a lane was created while an older lane of the key still held work"
        );
        self.counts.lock().unwrap().0 += 1;
    }
    fn lane_closed(&self, _key: &u64, _lane: LaneId, _exit: LaneExit) {
        assert!(
            !self.running.fetch_or(false, Ordering::SeqCst),
            "L5: a lane ended with a handler in flight"
        );
        self.counts.lock().unwrap().1 += 1;
        self.ended.notify_all();
    }
}

impl Lanes {
    /// Counts a handled item and wakes [`Lanes::wait_handled`].
    fn handled_one(&self) {
        let _counts = self.counts.lock().unwrap();
        self.handled.fetch_add(1, Ordering::SeqCst);
        self.ended.notify_all();
    }

    /// Blocks until `items` were handled (a lane that missed its wake-up
    /// never gets there: loom reports the deadlock).
    fn wait_handled(&self, items: usize) {
        let mut counts = self.counts.lock().unwrap();
        while self.handled.load(Ordering::SeqCst) < items {
            counts = self.ended.wait(counts).unwrap();
        }
    }

    /// Blocks until every created lane has ended.
    fn wait_all_closed(&self) {
        let mut counts = self.counts.lock().unwrap();
        while counts.1 < counts.0 {
            counts = self.ended.wait(counts).unwrap();
        }
    }
}

type Consumer = Arc<dyn Fn(LaneId, u64) -> BoxFuture<'static, ()> + Send + Sync>;

fn router(
    consumer: Consumer,
    ttl: Option<Duration>,
    lanes: &Arc<Lanes>,
    planted: Planted,
) -> LaneRouter<u64, u64, FixedHasher> {
    let mut config = LaneRouterConfig::<u64, FixedHasher>::new(RuntimeChoice::Dedicated {
        thread_name: "loom".into(),
    })
    .observer(Arc::clone(lanes) as _)
    .planted(planted);
    config.idle_ttl = ttl;
    config.shards = 2;
    LaneRouter::with_lane_ids(consumer, config).expect("valid config")
}

/// A consumer that logs `(lane, item)`, counts what it handled, and checks
/// no two handlers of the key ever overlap (one live lane).
fn logging(log: &Arc<Mutex<Vec<(u64, u64)>>>, lanes: &Arc<Lanes>) -> Consumer {
    let (log, lanes) = (Arc::clone(log), Arc::clone(lanes));
    let busy = Arc::new(AtomicUsize::new(0));
    Arc::new(move |lane: LaneId, item: u64| -> BoxFuture<'static, ()> {
        let (log, busy, lanes) = (Arc::clone(&log), Arc::clone(&busy), Arc::clone(&lanes));
        Box::pin(async move {
            assert_eq!(
                busy.fetch_add(1, Ordering::SeqCst),
                0,
                "L3: two lanes of one key ran handlers at once"
            );
            log.lock().unwrap().push((lane.0, item));
            lanes.handled_one();
            busy.fetch_sub(1, Ordering::SeqCst);
        })
    })
}

/// Routes `items` to one key while its lane may reap between any two, then
/// drops the router and checks L1/L2/L3 on what was handled.
fn route_reap_model(items: u64, planted: Planted) {
    let lanes = Arc::new(Lanes::default());
    let log = Arc::new(Mutex::new(Vec::new()));
    let router = router(
        logging(&log, &lanes),
        Some(Duration::from_millis(1)),
        &lanes,
        planted,
    );
    for item in 1..=items {
        router
            .route(0, item, None)
            .expect("no capacity: never refused");
        lanes.routed.fetch_add(1, Ordering::SeqCst);
    }
    drop(router);
    lanes.wait_all_closed();
    let handled = log.lock().unwrap().clone();
    let order: Vec<u64> = handled.iter().map(|(_, item)| *item).collect();
    assert_eq!(
        order,
        (1..=items).collect::<Vec<_>>(),
        "L1/L2: items lost, duplicated or reordered"
    );
    assert!(
        handled.windows(2).all(|w| w[0].0 <= w[1].0),
        "L3: lane ids went backwards: two live lanes"
    );
}

#[test]
fn route_vs_idle_reap_keeps_one_live_lane_and_handles_two_items_once_in_order() {
    model(3, || route_reap_model(2, Planted::none()));
}

#[test]
fn route_vs_idle_reap_vs_a_late_exit_guard_handles_three_items_once_in_order() {
    model(4, || route_reap_model(3, Planted::none()));
}

/// The lane's queue (`lanes::queue`, the production code, on loom's mutex):
/// two producers route to one key with no TTL while its lane takes batches
/// and waits between them. Every item is handled once, each producer's in
/// its order, and while the router still lives: a send that slipped between
/// the lane's look and its waker registration would leave the lane asleep
/// (loom reports the deadlock in `wait_handled`), and the router's drop
/// (which wakes the lane too) comes only after.
fn queue_model() {
    let lanes = Arc::new(Lanes::default());
    let log = Arc::new(Mutex::new(Vec::new()));
    let router = Arc::new(router(logging(&log, &lanes), None, &lanes, Planted::none()));
    let other = Arc::clone(&router);
    let producer = loom::thread::spawn(move || {
        other.route(0, 20, None).expect("never refused");
        other.route(0, 21, None).expect("never refused");
    });
    router.route(0, 10, None).expect("never refused");
    producer.join().unwrap();
    lanes.wait_handled(3);
    drop(router);
    lanes.wait_all_closed();
    let items: Vec<u64> = log.lock().unwrap().iter().map(|(_, item)| *item).collect();
    let mut sorted = items.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, vec![10, 20, 21], "L1: items lost or duplicated");
    let theirs: Vec<u64> = items.iter().copied().filter(|item| *item >= 20).collect();
    assert_eq!(theirs, vec![20, 21], "L2: one producer's items reordered");
}

#[test]
fn queue_batches_never_lose_a_wake_up_or_an_item() {
    model(3, queue_model);
}

/// Two producers race one slot: at most one is admitted while the first
/// admitted item is still unhandled (its handler waits for `release`).
fn capacity_model(planted: Planted) {
    let lanes = Arc::new(Lanes::default());
    let release = Arc::new(AtomicBool::new(false));
    let gate = Arc::clone(&release);
    let consumer: Consumer = Arc::new(move |_, _| -> BoxFuture<'static, ()> {
        let gate = Arc::clone(&gate);
        Box::pin(async move {
            while !gate.load(Ordering::SeqCst) {
                loom::thread::yield_now();
            }
        })
    });
    let router = Arc::new(router(consumer, None, &lanes, planted));
    let other = Arc::clone(&router);
    let racer = loom::thread::spawn(move || other.route(0, 2, Some(1)).is_ok());
    let mine = router.route(0, 1, Some(1)).is_ok();
    let theirs = racer.join().unwrap();
    assert!(
        !(mine && theirs),
        "L4: two items admitted to a lane of capacity 1"
    );
    release.store(true, Ordering::SeqCst);
    drop(router);
    lanes.wait_all_closed();
}

#[test]
fn capacity_admission_never_exceeds_the_cap_under_concurrent_producers() {
    model(3, || capacity_model(Planted::none()));
}

/// While an item's handler runs (across a yield, past the "TTL"), its lane
/// is neither reaped nor free: a route with capacity 1 is admitted only after
/// the handler resolved.
fn in_flight_model(planted: Planted) {
    let lanes = Arc::new(Lanes::default());
    let done = Arc::new(AtomicBool::new(false));
    let (d, l) = (Arc::clone(&done), Arc::clone(&lanes));
    let consumer: Consumer = Arc::new(move |_, item| -> BoxFuture<'static, ()> {
        let (done, lanes) = (Arc::clone(&d), Arc::clone(&l));
        Box::pin(async move {
            if item == 1 {
                lanes.running.store(true, Ordering::SeqCst);
                loom::thread::yield_now();
                lanes.running.store(false, Ordering::SeqCst);
                done.store(true, Ordering::SeqCst);
            }
        })
    });
    let router = router(consumer, Some(Duration::from_millis(1)), &lanes, planted);
    router.route(0, 1, Some(1)).expect("an empty lane admits");
    if router.route(0, 2, Some(1)).is_ok() {
        assert!(
            done.load(Ordering::SeqCst),
            "L4: admitted past capacity while the first handler still ran"
        );
    }
    drop(router);
    lanes.wait_all_closed();
}

#[test]
fn an_item_in_flight_past_the_ttl_keeps_its_lane_and_its_place() {
    model(3, || in_flight_model(Planted::none()));
}

#[cfg(feature = "planted-bugs")]
mod detects {
    use lanesim::planted::{Planted, PlantedBug};

    use super::*;
    use crate::checker::failure_of;

    #[test]
    fn route_sends_after_unlock_detects_a_lost_item() {
        let message = failure_of(|| {
            model(2, || {
                route_reap_model(2, Planted::bug(PlantedBug::RouteSendsAfterUnlock))
            })
        });
        assert!(
            message.contains("L1/L2") || message.contains("L3"),
            "{message}"
        );
    }

    #[test]
    fn pending_decremented_at_dequeue_detects_admission_past_capacity() {
        let message = failure_of(|| {
            model(3, || {
                in_flight_model(Planted::bug(PlantedBug::PendingDecrementedAtDequeue))
            })
        });
        assert!(message.contains("L4: admitted past capacity"), "{message}");
    }

    #[test]
    fn capacity_checked_outside_guard_detects_two_admissions() {
        let message = failure_of(|| {
            model(3, || {
                capacity_model(Planted::bug(PlantedBug::CapacityCheckedOutsideGuard))
            })
        });
        assert!(message.contains("L4: two items admitted"), "{message}");
    }

    /// Not caught yet: the eviction needs the producer to create the
    /// successor between the reap and the exit guard, and this model's eager
    /// timeout yields before the reap, which lets the producer route into
    /// the old lane first. Kept, ignored, as the open item it is.
    #[test]

    fn reap_without_identity_check_detects_an_evicted_successor() {
        let message = failure_of(|| {
            model(4, || {
                route_reap_model(3, Planted::bug(PlantedBug::ReapWithoutIdentityCheck))
            })
        });
        assert!(
            message.contains("L1/L2") || message.contains("L3"),
            "{message}"
        );
    }
}
