//! Helpers shared by the real-runtime test files.
#![allow(dead_code)] // each test file uses its own subset

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim::lanes::{LaneExit, LaneId, LaneObserver, LaneRouterConfig};
use lanesim::shim::rt::RuntimeChoice;

/// Waits (in real time, up to 5 s) for `predicate`; fails the test instead of
/// hanging when it never holds.
pub async fn wait_for(label: &str, mut predicate: impl FnMut() -> bool) {
    tokio::time::timeout(Duration::from_secs(5), async {
        while !predicate() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("timed out waiting for: {label}"));
}

/// Counts lane lifecycle events.
#[derive(Default)]
pub struct Recorder {
    pub created: AtomicUsize,
    pub closed: AtomicUsize,
    pub exits: Mutex<Vec<(u64, LaneId, LaneExit)>>,
}

impl Recorder {
    pub fn created(&self) -> usize {
        self.created.load(Ordering::SeqCst)
    }
    pub fn closed(&self) -> usize {
        self.closed.load(Ordering::SeqCst)
    }
    pub fn exits(&self) -> Vec<(u64, LaneId, LaneExit)> {
        self.exits.lock().unwrap().clone()
    }
}

impl LaneObserver<u64> for Recorder {
    fn lane_created(&self, _key: &u64, _lane: LaneId) {
        self.created.fetch_add(1, Ordering::SeqCst);
    }
    fn lane_closed(&self, key: &u64, lane: LaneId, exit: LaneExit) {
        self.exits.lock().unwrap().push((*key, lane, exit));
        self.closed.fetch_add(1, Ordering::SeqCst);
    }
}

/// Lanes on the test's runtime, observed by `recorder`.
pub fn lane_config(idle_ttl: Option<Duration>, recorder: &Arc<Recorder>) -> LaneRouterConfig<u64> {
    let mut config = LaneRouterConfig::new(RuntimeChoice::current()).observer(Arc::clone(recorder) as _);
    config.idle_ttl = idle_ttl;
    config
}

/// A shared log.
pub type Log<V> = Arc<Mutex<Vec<V>>>;

pub fn log<V>() -> Log<V> {
    Arc::new(Mutex::new(Vec::new()))
}

pub fn snapshot<V: Clone>(log: &Log<V>) -> Vec<V> {
    log.lock().unwrap().clone()
}
