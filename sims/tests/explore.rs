//! Seeded scheduling (sims/src/explore.rs over lanesim's tokio): every
//! choice the runtime makes comes from the run's seed, replays, differs
//! across seeds, and is stock tokio's with the knobs off.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_sims::coverage::{CoverMark, Coverage, PreemptPolicy, WorldMark, WorldProbe};
use lanesim_sims::explore::{install, tokio_explores, Exploration, WorldExplorer};

/// Runs `body` on a current-thread runtime (paused clock) built under an
/// explorer for `seed`; returns its output and the marks counted.
fn explored<T>(
    seed: u64,
    policy: Exploration,
    body: impl std::future::Future<Output = T>,
) -> (T, Coverage) {
    let probe = Arc::new(WorldProbe::new(seed, PreemptPolicy::default()));
    let explorer = Arc::new(WorldExplorer::new(seed, policy, Arc::clone(&probe)));
    let out = {
        let _installed = install(&explorer);
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a runtime")
            .block_on(body)
    };
    (out, probe.close())
}

fn count(coverage: &Coverage, mark: WorldMark) -> u64 {
    coverage.get(&CoverMark::World(mark)).copied().unwrap_or(0)
}

/// Sixteen un-`biased` selects between two ready branches.
async fn selects() -> String {
    let mut taken = String::new();
    for _ in 0..16 {
        // Un-`biased` on purpose: the order under test is the seeded one.
        tokio::select! {
            () = std::future::ready(()) => taken.push('a'),
            () = std::future::ready(()) => taken.push('b'),
        }
    }
    taken
}

/// Six tasks spawned at once, each noting its number when first polled.
async fn spawn_order() -> Vec<u32> {
    let order = Arc::new(Mutex::new(Vec::new()));
    let tasks: Vec<_> = (0..6)
        .map(|n| {
            let order = Arc::clone(&order);
            tokio::spawn(async move { order.lock().unwrap().push(n) })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let order = order.lock().unwrap().clone();
    order
}

#[test]
fn this_workspace_builds_lanesims_tokio() {
    assert!(
        tokio_explores(),
        "the workspace's [patch.crates-io] tokio line is gone"
    );
}

#[test]
fn an_unbiased_select_replays_by_seed_and_takes_both_branches() {
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..32 {
        let (first, _) = explored(seed, Exploration::default(), selects());
        let (again, _) = explored(seed, Exploration::default(), selects());
        assert_eq!(first, again, "seed {seed}: select! did not replay");
        seen.insert(first);
    }
    let all: String = seen.iter().cloned().collect();
    assert!(
        all.contains('a') && all.contains('b'),
        "one branch only: {seen:?}"
    );
    assert!(
        seen.len() > 16,
        "seeds should give different orders: {seen:?}"
    );
}

#[test]
fn with_the_knobs_off_ready_tasks_run_in_stock_order() {
    for seed in 0..8 {
        let (order, marks) = explored(seed, Exploration::default(), spawn_order());
        assert_eq!(order, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(count(&marks, WorldMark::ScheduleShuffled), 0);
    }
}

#[test]
fn shuffle_reorders_ready_tasks_by_seed_and_replays() {
    let policy = Exploration {
        shuffle: 1.0,
        ..Exploration::default()
    };
    let mut orders = std::collections::BTreeSet::new();
    let mut shuffled = 0;
    for seed in 0..16 {
        let (order, marks) = explored(seed, policy, spawn_order());
        let (again, _) = explored(seed, policy, spawn_order());
        assert_eq!(order, again, "seed {seed}: the order did not replay");
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 2, 3, 4, 5], "a task lost or run twice");
        shuffled += count(&marks, WorldMark::ScheduleShuffled);
        orders.insert(order);
    }
    assert!(orders.len() >= 8, "16 seeds gave {} orders", orders.len());
    assert!(shuffled > 0, "no pick was counted");
}

/// Two tasks: `a` sends four items on a roomy channel (no await in it ever
/// waits), `b` notes itself. Returns the interleaving.
async fn two_tasks() -> String {
    let log = Arc::new(Mutex::new(String::new()));
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let a = {
        let log = Arc::clone(&log);
        tokio::spawn(async move {
            for n in 0..4u8 {
                tx.send(n).await.unwrap();
                log.lock().unwrap().push(char::from(b'0' + n));
            }
        })
    };
    let b = {
        let log = Arc::clone(&log);
        tokio::spawn(async move { log.lock().unwrap().push('b') })
    };
    a.await.unwrap();
    b.await.unwrap();
    while rx.recv().await.is_some() {}
    let log = log.lock().unwrap().clone();
    log
}

#[test]
fn a_preempted_task_yields_at_an_await_nobody_marked() {
    let (stock, _) = explored(0, Exploration::default(), two_tasks());
    assert_eq!(stock, "0123b", "stock order: a runs to its end first");
    let policy = Exploration {
        awaits: 1.0,
        ..Exploration::default()
    };
    let mut interleaved = 0;
    let mut preempted = 0;
    for seed in 0..32 {
        let (log, marks) = explored(seed, policy, two_tasks());
        assert_eq!(log, explored(seed, policy, two_tasks()).0, "seed {seed}");
        if log != "0123b" {
            interleaved += 1;
        }
        preempted += count(&marks, WorldMark::AwaitPreempted);
    }
    assert!(
        interleaved >= 8,
        "b ran inside a's sends in {interleaved} of 32 seeds"
    );
    assert!(preempted > 0, "no preemption was counted");
}

#[test]
fn a_held_task_lets_virtual_time_pass() {
    let policy = Exploration {
        awaits: 1.0,
        hold: (Duration::from_millis(3), Duration::from_millis(3)),
        ..Exploration::default()
    };
    let started_late = |seed| {
        explored(seed, policy, async {
            let spawned = tokio::time::Instant::now();
            let first_poll = tokio::spawn(async { tokio::time::Instant::now() })
                .await
                .unwrap();
            first_poll - spawned
        })
    };
    let mut held = 0;
    for seed in 0..32 {
        let (late, marks) = started_late(seed);
        if count(&marks, WorldMark::TaskHeld) > 0 {
            held += 1;
        }
        if late > Duration::ZERO {
            assert!(
                late >= Duration::from_millis(3),
                "seed {seed}: held {late:?}"
            );
        }
    }
    assert!(held >= 4, "a task was held in {held} of 32 seeds");
}

/// lanesim's lane with an un-`biased` `select!` on its idle path (planted
/// #19) replays: `audit` over the scenario that explores it finds no
/// divergence, while the same seeds break L2 in some runs (the select took
/// the sleep's branch there and the item's branch elsewhere).
#[cfg(feature = "planted-bugs")]
#[test]
fn a_lane_with_an_unbiased_select_replays_under_audit() {
    use lanesim::planted::{Planted, PlantedBug};
    use lanesim_sims::run::{audit, execute, Verdict};
    use lanesim_sims::scenario::{Scenario, SeedRange};
    use lanesim_sims::targets::Subject;

    let scenario = Scenario::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/lanes_select_idle.toml"
    )))
    .unwrap();
    let subject = Subject::lanesim(Planted::select(PlantedBug::IdleSelectUnbiased).unwrap());
    let seeds = SeedRange::new(0, 31).unwrap();
    assert!(audit(&scenario, seeds, &subject).is_empty());
    let violated = seeds
        .into_iter()
        .filter(|&seed| execute(&scenario, seed, &subject).verdict == Verdict::Violated)
        .count();
    assert!(violated > 0 && violated < 32, "{violated} of 32 violated");
}

/// Eight tasks, each pending forever with a guard that notes its number
/// when the task is dropped; returns once all have been polled, so the
/// runtime's shutdown drops them.
async fn parked(dropped: Arc<Mutex<Vec<u32>>>) {
    struct Noted(u32, Arc<Mutex<Vec<u32>>>);
    impl Drop for Noted {
        fn drop(&mut self) {
            self.1.lock().unwrap().push(self.0);
        }
    }
    for n in 0..8 {
        let noted = Noted(n, Arc::clone(&dropped));
        tokio::spawn(async move {
            let _noted = noted;
            std::future::pending::<()>().await;
        });
    }
    tokio::task::yield_now().await;
}

/// Shutdown (a crashed host's runtime) drops a runtime's tasks in one
/// order, whatever task ids the process spent before: stock tokio keeps
/// them in shards by their process-wide id and drops shard by shard, so a
/// run's log depended on other runs (vendor/tokio/LANESIM.md, owned tasks).
#[test]
fn a_runtime_drops_its_tasks_in_one_order_whatever_ids_went_before() {
    let mut orders = std::collections::BTreeSet::new();
    for spent in 0..4 {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(async {
                for _ in 0..spent {
                    tokio::spawn(async {}).await.unwrap();
                }
            });
        let dropped = Arc::new(Mutex::new(Vec::new()));
        explored(7, Exploration::default(), parked(Arc::clone(&dropped)));
        let order = dropped.lock().unwrap().clone();
        assert_eq!(order.len(), 8, "every task is dropped once: {order:?}");
        orders.insert(order);
    }
    assert_eq!(orders.len(), 1, "drop orders by ids spent: {orders:?}");
}
