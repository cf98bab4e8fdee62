//! The lane router at a size loom cannot explore: 4 producers x 50 items
//! over 3 keys with eager reaping, under shuttle's PCT and random
//! schedulers, on the production code compiled under `--cfg shuttle`.
//!
//! Run: `RUSTFLAGS="--cfg shuttle" cargo test --release --test shuttle_lanes`
//! A failure prints shuttle's schedule; `shuttle::replay(model, "<schedule>")`
//! replays it (the `*_replays_*` test below does exactly that).
#![cfg(shuttle)]

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use lanesim::lanes::{FixedHasher, LaneExit, LaneId, LaneObserver, LaneRouter, LaneRouterConfig};
use lanesim::planted::Planted;
use lanesim::shim::rt::RuntimeChoice;
use shuttle::sync::atomic::{AtomicUsize, Ordering};
use shuttle::sync::Mutex;

const PRODUCERS: u64 = 4;
const ITEMS: u64 = 50;
const KEYS: u64 = 3;

#[derive(Default)]
struct Lanes {
    created: AtomicUsize,
    closed: AtomicUsize,
}

impl LaneObserver<u64> for Lanes {
    fn lane_created(&self, _: &u64, _: LaneId) {
        self.created.fetch_add(1, Ordering::SeqCst);
    }
    fn lane_closed(&self, _: &u64, _: LaneId, _: LaneExit) {
        self.closed.fetch_add(1, Ordering::SeqCst);
    }
}

/// One run: producers route `(producer, seq)` items round the keys while
/// lanes reap whenever idle; then every item must have been handled once,
/// each producer's items per key in its route order, each key's items by
/// lanes in creation order (never two live lanes), and no two handlers of a
/// key at once.
fn lanes_model(planted: Planted) {
    let lanes = Arc::new(Lanes::default());
    let log: Arc<Mutex<Vec<(u64, u64, u64, u64)>>> = Arc::new(Mutex::new(Vec::new()));
    let busy: Arc<Vec<AtomicUsize>> = Arc::new((0..KEYS).map(|_| AtomicUsize::new(0)).collect());
    let (sink, busy_keys) = (Arc::clone(&log), Arc::clone(&busy));
    let consumer = Arc::new(
        move |lane: LaneId, (key, producer, seq): (u64, u64, u64)| -> BoxFuture<'static, ()> {
            let (sink, busy) = (Arc::clone(&sink), Arc::clone(&busy_keys));
            Box::pin(async move {
                assert_eq!(
                    busy[key as usize].fetch_add(1, Ordering::SeqCst),
                    0,
                    "L3: two handlers of key {key} at once"
                );
                shuttle::thread::yield_now();
                sink.lock().unwrap().push((key, producer, seq, lane.0));
                busy[key as usize].fetch_sub(1, Ordering::SeqCst);
            })
        },
    );
    let mut config = LaneRouterConfig::<u64, FixedHasher>::new(RuntimeChoice::Dedicated {
        thread_name: "shuttle".into(),
    })
    .observer(Arc::clone(&lanes) as _)
    .planted(planted);
    config.idle_ttl = Some(Duration::from_millis(1));
    config.shards = 2;
    let router = Arc::new(LaneRouter::with_lane_ids(consumer, config).unwrap());
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|producer| {
            let router = Arc::clone(&router);
            shuttle::thread::spawn(move || {
                for seq in 0..ITEMS {
                    let key = (producer + seq) % KEYS;
                    router.route(key, (key, producer, seq), None).unwrap();
                }
            })
        })
        .collect();
    for producer in producers {
        producer.join().unwrap();
    }
    drop(router);
    while lanes.closed.load(Ordering::SeqCst) < lanes.created.load(Ordering::SeqCst) {
        shuttle::thread::yield_now();
    }
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log.len() as u64,
        PRODUCERS * ITEMS,
        "L2: items lost or duplicated"
    );
    for key in 0..KEYS {
        let of_key: Vec<&(u64, u64, u64, u64)> =
            log.iter().filter(|entry| entry.0 == key).collect();
        assert!(
            of_key.windows(2).all(|w| w[0].3 <= w[1].3),
            "L3: key {key} went back to an older lane"
        );
        for producer in 0..PRODUCERS {
            let seqs: Vec<u64> = of_key
                .iter()
                .filter(|e| e.1 == producer)
                .map(|e| e.2)
                .collect();
            assert!(
                seqs.windows(2).all(|w| w[0] < w[1]),
                "L1: producer {producer}'s items on key {key} reordered"
            );
        }
    }
}

#[test]
fn four_producers_three_keys_with_reaping_keep_order_and_exactly_once_under_pct() {
    shuttle::check_pct(|| lanes_model(Planted::none()), 2_000, 3);
}

#[test]
fn four_producers_three_keys_with_reaping_keep_order_and_exactly_once_under_random_schedules() {
    shuttle::check_random_with_seed(|| lanes_model(Planted::none()), 0x1a9e_5111, 2_000);
}

/// The planted-bug searches run in a child process: after a failure
/// shuttle drops the leftover tasks outside its execution, and their
/// destructors (which lock shuttle mutexes) abort the process. The parent
/// reads the child's output: the failure, and the schedule shuttle printed.
#[cfg(feature = "planted-bugs")]
mod detects {
    use std::process::Command;

    use lanesim::planted::{Planted, PlantedBug};

    use super::lanes_model;

    /// What a child run printed (stdout and stderr).
    fn child(test: &str, schedule: Option<&str>) -> String {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command.args([
            "--ignored",
            "--exact",
            test,
            "--nocapture",
            "--test-threads",
            "1",
        ]);
        if let Some(schedule) = schedule {
            command.env("LANESIM_SHUTTLE_SCHEDULE", schedule);
        }
        let out = command.output().unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    /// The first contract violation a child reported.
    fn violation(output: &str) -> Option<String> {
        output
            .lines()
            .find(|l| l.contains("L1:") || l.contains("L2:") || l.contains("L3:"))
            .map(|l| {
                let start = l
                    .find("L1:")
                    .or_else(|| l.find("L2:"))
                    .or_else(|| l.find("L3:"))
                    .unwrap_or(0);
                l[start..].to_string()
            })
    }

    fn schedule(output: &str) -> Option<String> {
        let rest = output.split("failing schedule:\n\"\n").nth(1)?;
        Some(rest.split("\n\"").next()?.replace('\n', ""))
    }

    fn run_planted(bug: PlantedBug, search: impl FnOnce(Planted)) {
        let planted = Planted::bug(bug);
        match std::env::var("LANESIM_SHUTTLE_SCHEDULE") {
            Ok(schedule) => shuttle::replay(move || lanes_model(planted), &schedule),
            Err(_) => search(planted),
        }
    }

    #[test]
    #[ignore = "run by route_sends_after_unlock_is_found_and_its_printed_schedule_replays"]
    fn child_route_sends_after_unlock() {
        run_planted(PlantedBug::RouteSendsAfterUnlock, |planted| {
            shuttle::check_random_with_seed(move || lanes_model(planted), 0x1a9e_5111, 5_000);
        });
    }

    #[test]
    #[ignore = "run by reap_without_identity_check_is_found_under_random_schedules"]
    fn child_reap_without_identity_check() {
        run_planted(PlantedBug::ReapWithoutIdentityCheck, |planted| {
            shuttle::check_random_with_seed(move || lanes_model(planted), 0x1a9e_5111, 5_000);
        });
    }

    /// Bug #1 is found by the random scheduler, and the schedule shuttle
    /// prints replays the same violation.
    #[test]
    fn route_sends_after_unlock_is_found_and_its_printed_schedule_replays() {
        let found = child("detects::child_route_sends_after_unlock", None);
        let first = violation(&found).unwrap_or_else(|| panic!("not caught:\n{found}"));
        let schedule = schedule(&found).expect("shuttle printed a schedule");
        let replayed = child("detects::child_route_sends_after_unlock", Some(&schedule));
        assert_eq!(
            violation(&replayed).as_deref(),
            Some(first.as_str()),
            "the replay failed differently"
        );
    }

    #[test]
    fn reap_without_identity_check_is_found_under_random_schedules() {
        let found = child("detects::child_reap_without_identity_check", None);
        assert!(violation(&found).is_some(), "not caught:\n{found}");
    }
}
