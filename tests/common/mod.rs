//! Helpers shared by the real-runtime test files.
#![allow(dead_code)] // each test file uses its own subset

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub mod capture;
pub mod raw;
pub mod served;
pub mod sharing;

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
    let mut config =
        LaneRouterConfig::new(RuntimeChoice::current()).observer(Arc::clone(recorder) as _);
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

use lanesim::distribution::frame::{read_frame, Frame, DEFAULT_MAX_FRAME};
use lanesim::distribution::{
    ConnectionManager, DistConnection, DownEvent, ManagerConfig, NodeName,
};
use lanesim::shim::net::{Connected, TokioTcp};
use tokio::net::{TcpListener, TcpStream};

/// A manager for `local@test` on the test's runtime, over real TCP.
pub fn manager() -> ConnectionManager {
    ConnectionManager::new(
        NodeName::from("local@test"),
        Arc::new(TokioTcp),
        ManagerConfig::new(RuntimeChoice::current(), raw::cookie()),
    )
    .expect("manager")
}

/// Records every down event.
pub fn record_downs(manager: &ConnectionManager) -> Log<DownEvent> {
    let downs = log();
    let sink = Arc::clone(&downs);
    manager.register_connection_down(move |event| sink.lock().unwrap().push(event.clone()));
    downs
}

/// A real loopback connection registered for `node`; returns it and the
/// peer's end of the socket.
pub async fn loopback(manager: &ConnectionManager, node: &str) -> (Arc<DistConnection>, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (peer, _) = listener.accept().await.unwrap();
    let connection = manager.register(NodeName::from(node), Connected::from_tcp(client).unwrap());
    (connection, peer)
}

/// A frame whose control is `tag`.
pub fn framed(tag: &[u8]) -> Arc<[u8]> {
    Arc::from(lanesim_target::wire::encode(tag, b""))
}

/// Reads frames off `stream` until `n` arrived or it ends; returns the
/// controls.
pub async fn read_controls(stream: &mut TcpStream, n: usize) -> Vec<Vec<u8>> {
    let mut controls = Vec::new();
    while controls.len() < n {
        match read_frame(stream, DEFAULT_MAX_FRAME).await {
            Ok(Frame::Data { control, .. }) => controls.push(control),
            Ok(Frame::Keepalive | Frame::Node { .. }) => {}
            Err(_) => break,
        }
    }
    controls
}

/// Sets the process's soft descriptor limit (`RLIMIT_NOFILE`) to `soft`
/// (at most the hard limit); returns the limit before. For the test
/// binaries that hold one test each: the limit is the process's.
#[cfg(unix)]
pub fn set_soft_limit(soft: u64) -> libc::rlimit {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit write and read the struct passed.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        let before = limit;
        limit.rlim_cur = soft.min(limit.rlim_max);
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
        before
    }
}
