//! Fair admission under a flood, measured on loopback (issue: one
//! address's half-open handshakes must not keep honest peers out).
//!
//! One node listens on 127.0.0.1 with its default caps. Honest peers each
//! dial it from an address of their own in 127.2.0.0/16 (Linux routes all
//! of 127.0.0.0/8 over loopback), one dial each, `DIALS` of them, a few at
//! a time: first with nothing else going on (their usual time), then while
//! one address, 127.0.0.2, floods half-open handshakes as fast as it can
//! (256 tasks, or `ADMISSION_FLOODERS`, each opening a silent stream and opening the next the
//! moment the node closes it). Printed: the dials' times (p50, p99, max)
//! without and with the flood, the share of flood-time dials within twice
//! the usual p99, failures, what the flood opened and what the node
//! refused and evicted, and the process's resident memory before and
//! after. The goal: at least 99 % of honest dials within 2x their usual
//! time, and memory bounded (the node's maps hold only open streams).
//!
//! Run: `cargo bench --bench admission` (Linux). Figures: docs/benchmarks.md.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lanesim::distribution::{ConnectionManager, Cookie, ManagerConfig, NodeName};
use lanesim::shim::net::{BoxFuture, Connected, Listener, TokioTcp, Transport};
use lanesim::shim::rt::RuntimeChoice;
use tokio::net::{TcpSocket, TcpStream};

/// Honest dials per phase.
const DIALS: u32 = 4000;
/// Honest dials in flight at once.
const AT_ONCE: usize = 8;
/// Tasks flooding from the one address, unless `ADMISSION_FLOODERS` says
/// otherwise: 256, the attack as first measured (256 silent sockets,
/// each reopened as it is closed).
fn flooders() -> usize {
    std::env::var("ADMISSION_FLOODERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(256)
}

/// Real TCP with every socket on one address.
#[derive(Clone, Copy)]
struct TcpOn(IpAddr);

impl Transport for TcpOn {
    fn connect<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Connected>> {
        Box::pin(async move {
            let target: SocketAddr = addr
                .parse()
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, addr.to_owned()))?;
            let socket = TcpSocket::new_v4()?;
            socket.bind(SocketAddr::new(self.0, 0))?;
            Connected::from_tcp(socket.connect(target).await?)
        })
    }

    fn bind<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Box<dyn Listener>>> {
        TokioTcp.bind(addr)
    }
}

fn cookie() -> Cookie {
    Cookie::new("admission bench").expect("a valid cookie")
}

/// The process's resident memory in bytes (Linux).
fn resident() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Honest peer `n`'s address: its own, in 127.2.0.0/16.
fn honest_ip(n: u32) -> IpAddr {
    let [_, _, hi, lo] = (n + 1).to_be_bytes();
    IpAddr::from([127, 2, hi, lo])
}

/// `DIALS` honest dials, `AT_ONCE` at a time, each from an address of its
/// own and a node of its own: the time each took, or `None` if it failed.
async fn honest_dials(to: &str, phase: &str) -> Vec<Option<Duration>> {
    let server = NodeName::from("z@bench");
    let mut times = Vec::new();
    for batch in (0..DIALS).collect::<Vec<_>>().chunks(AT_ONCE) {
        let mut dials = Vec::new();
        for &n in batch {
            let (to, server) = (to.to_owned(), server.clone());
            let name = NodeName::from(format!("{phase}-{n}@bench").as_str());
            let ip = honest_ip(n + if phase == "flood" { DIALS } else { 0 });
            dials.push(tokio::spawn(async move {
                let manager = ConnectionManager::new(
                    name,
                    Arc::new(TcpOn(ip)),
                    ManagerConfig::new(RuntimeChoice::current(), cookie()),
                )
                .expect("a manager");
                let began = Instant::now();
                let dialed = manager.dial(&server, &to).await;
                let took = began.elapsed();
                dialed.ok().map(|connection| {
                    connection.mark_down(lanesim::distribution::DownReason::ManualDisconnect);
                    took
                })
            }));
        }
        for dial in dials {
            times.push(dial.await.expect("the dial task"));
        }
    }
    times
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let at = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[at]
}

fn summary(times: &[Option<Duration>]) -> (Vec<Duration>, usize) {
    let mut ok: Vec<Duration> = times.iter().flatten().copied().collect();
    ok.sort_unstable();
    let failed = times.len() - ok.len();
    (ok, failed)
}

fn runtime(workers: usize, name: &str) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name(name)
        .enable_all()
        .build()
        .expect("a runtime")
}

fn main() {
    // Three runtimes, as three processes would be: the node, the flood,
    // the honest dialers (all on this machine's cores, as on one host).
    let node_rt = runtime(2, "node");
    let flood_rt = runtime(1, "flood");
    let dial_rt = runtime(2, "dialers");
    let node = ConnectionManager::new(
        NodeName::from("z@bench"),
        Arc::new(TokioTcp),
        ManagerConfig::new(RuntimeChoice::Handle(node_rt.handle().clone()), cookie()),
    )
    .expect("the node");
    let listener = node_rt
        .block_on(TokioTcp.bind("127.0.0.1:0"))
        .expect("a listener");
    let addr = listener.local_addr().expect("its address");
    {
        let _entered = node_rt.enter();
        node.serve(listener);
    }
    let to: SocketAddr = addr.parse().expect("an address");

    // Warm up (first connections pay for the runtimes' first work).
    let _ = dial_rt.block_on(honest_dials(&addr, "warm"));
    let before = resident();
    let usual = dial_rt.block_on(honest_dials(&addr, "usual"));

    let stop = Arc::new(AtomicBool::new(false));
    let opened = Arc::new(AtomicU64::new(0));
    let mut flood = Vec::new();
    let flooders = flooders();
    for _ in 0..flooders {
        let (stop, opened) = (Arc::clone(&stop), Arc::clone(&opened));
        flood.push(flood_rt.spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let socket = TcpSocket::new_v4().expect("a socket");
                if socket.bind(SocketAddr::from(([127, 0, 0, 2], 0))).is_err() {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    continue;
                }
                let Ok(mut stream): io::Result<TcpStream> = socket.connect(to).await else {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    continue;
                };
                opened.fetch_add(1, Ordering::Relaxed);
                let mut byte = [0u8; 1];
                let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut byte).await;
            }
        }));
    }
    // The flood holds every handshake place it may before dials begin.
    let filling = Instant::now();
    while node.inbound().handshaking < node.source_caps().0
        && filling.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    let began = Instant::now();
    let flooded = dial_rt.block_on(honest_dials(&addr, "flood"));
    let lasted = began.elapsed();
    let during = resident();
    stop.store(true, Ordering::Relaxed);
    for task in flood {
        task.abort();
    }
    let stats = node.inbound();

    let (usual, usual_failed) = summary(&usual);
    let (flooded_ok, flood_failed) = summary(&flooded);
    let bound = percentile(&usual, 0.99) * 2;
    let within = flooded_ok.iter().filter(|t| **t <= bound).count();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("admission: {DIALS} honest dials per phase, {AT_ONCE} at a time, each from its own 127.2.x.y; flood: {flooders} tasks from 127.0.0.2");
    println!(
        "  usual:      p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms  failed {usual_failed}",
        ms(percentile(&usual, 0.5)),
        ms(percentile(&usual, 0.99)),
        ms(percentile(&usual, 1.0))
    );
    println!(
        "  flood:      p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms  failed {flood_failed}",
        ms(percentile(&flooded_ok, 0.5)),
        ms(percentile(&flooded_ok, 0.99)),
        ms(percentile(&flooded_ok, 1.0))
    );
    println!(
        "  within 2x the usual p99 ({:.2} ms): {within} of {DIALS} ({:.1} %)",
        ms(bound),
        100.0 * within as f64 / f64::from(DIALS)
    );
    println!(
        "  flood streams opened {} in {:.1} s ({:.0}/s), refused {}, evicted {}; handshaking at the end {}",
        opened.load(Ordering::Relaxed),
        lasted.as_secs_f64(),
        opened.load(Ordering::Relaxed) as f64 / lasted.as_secs_f64(),
        stats.refused,
        stats.evicted,
        stats.handshaking
    );
    if let (Some(before), Some(during)) = (before, during) {
        println!(
            "  resident memory: {:.1} MiB before the flood, {:.1} MiB at its end",
            before as f64 / 1048576.0,
            during as f64 / 1048576.0
        );
    }
}
