//! `lanesim bench`: what the testbed costs, measured in wall time (the only
//! place the testbed reads a clock it does not simulate).
//!
//! - per scenario: seeds per second on one core, and virtual seconds per
//!   wall second;
//! - the wedged-peer exchange (one frame parked on a peer that never reads,
//!   released by the real 5 s deadline, then a frame to a healthy peer) on
//!   real loopback TCP and in simulation, side by side, as a ratio;
//! - the harness (world, event log, checkers) against bare turmoil carrying
//!   the same frames.

use std::sync::Arc;
use std::time::{Duration, Instant};

use lanesim::distribution::frame::{encode, read_frame, Frame, DEFAULT_MAX_FRAME};
use lanesim::distribution::{
    ConnectionManager, DistConnection, DistSender, ManagerConfig, NodeName, SenderConfig,
    SenderLane, SenderObserver, WriteOutcome,
};
use lanesim::planted::Planted;
use lanesim::shim::net::{Connected, TokioTcp, Transport};
use lanesim::shim::rt::RuntimeChoice;

use super::execute;
use crate::scenario::{Params, Scenario};
use crate::world::net::TurmoilTcp;

/// One scenario's throughput.
#[derive(Debug)]
pub struct ScenarioBench {
    /// The scenario.
    pub name: String,
    /// Seeds run.
    pub seeds: u64,
    /// Seeds per wall second, one core.
    pub seeds_per_sec: f64,
    /// Virtual seconds simulated per wall second.
    pub virtual_per_wall: f64,
}

/// Runs `seeds` of `scenario` serially and times them.
#[must_use]
pub fn scenario(scenario: &Scenario, seeds: crate::scenario::SeedRange) -> ScenarioBench {
    let count = seeds.len();
    let started = Instant::now(); // wall-clock: ok (benchmark)
    let mut simulated = Duration::ZERO;
    for seed in seeds {
        simulated += execute(scenario, seed, Planted::none()).elapsed;
    }
    let wall = started.elapsed().as_secs_f64();
    ScenarioBench {
        name: scenario.name.clone(),
        seeds: count,
        seeds_per_sec: count as f64 / wall,
        virtual_per_wall: simulated.as_secs_f64() / wall,
    }
}

/// Big enough to fill a real kernel's send and receive buffers, so the real
/// write parks. Simulation needs only more than `tcp_capacity` (64) segments
/// of one MSS (DESIGN.md: turmoil stalls after segments, a kernel after
/// bytes), and a 16 MiB copy would dominate the simulated run's cost.
const BIG: usize = 16 << 20;
/// More than 64 segments of 1460 bytes.
const BIG_SIMULATED: usize = 256 << 10;

/// The wedged-peer exchange on real loopback TCP with the real 5 s deadline:
/// wall time until the healthy peer has its frame.
///
/// # Panics
/// When loopback TCP is unavailable.
#[must_use]
pub fn wedged_exchange_real() -> Duration {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let manager = ConnectionManager::new(
            NodeName::from("local"),
            Arc::new(TokioTcp),
            ManagerConfig::new(RuntimeChoice::current()),
        )
        .expect("manager");
        let wedged = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let healthy = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let (wedged_addr, healthy_addr) =
            (wedged.local_addr().unwrap(), healthy.local_addr().unwrap());
        let held = tokio::spawn(async move { wedged.accept().await });
        let reader = tokio::spawn(async move {
            let (mut stream, _) = healthy.accept().await.expect("accept");
            loop {
                if let Ok(Frame::Data { control, .. }) =
                    read_frame(&mut stream, DEFAULT_MAX_FRAME).await
                {
                    if control == b"healthy" {
                        return;
                    }
                }
            }
        });
        for (name, addr) in [("wedged", wedged_addr), ("healthy", healthy_addr)] {
            let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
            manager.register(
                NodeName::from(name),
                Connected::from_tcp(stream).expect("split"),
            );
        }
        let _held = held.await;
        let sender = DistSender::new(
            manager,
            SenderConfig::new(RuntimeChoice::Dedicated {
                thread_name: "bench".into(),
            }),
        )
        .expect("sender");
        let started = Instant::now(); // wall-clock: ok (benchmark)
        sender.enqueue(
            NodeName::from("wedged"),
            Arc::from(encode(&vec![1; BIG], b"").unwrap()),
        );
        sender.enqueue(
            NodeName::from("healthy"),
            Arc::from(encode(b"healthy", b"").unwrap()),
        );
        reader.await.expect("healthy reader");
        started.elapsed()
    })
}

/// The same exchange in turmoil at `tick`: (virtual time until the healthy
/// peer has its frame, wall time the simulation took).
///
/// # Panics
/// When the simulation fails.
#[must_use]
pub fn wedged_exchange_sim(tick: Duration) -> (Duration, Duration) {
    let started = Instant::now(); // wall-clock: ok (benchmark)
    let mut sim = turmoil::Builder::new()
        .tick_duration(tick)
        .simulation_duration(Duration::from_secs(60))
        .build();
    for name in ["wedged", "healthy"] {
        sim.host(name, move || async move {
            let listener = turmoil::net::TcpListener::bind(("0.0.0.0", 9000)).await?;
            let (mut stream, _) = listener.accept().await?;
            if name == "wedged" {
                std::future::pending::<()>().await;
            }
            while read_frame(&mut stream, DEFAULT_MAX_FRAME).await.is_ok() {}
            Ok(())
        });
    }
    let arrived = Arc::new(std::sync::Mutex::new(Duration::ZERO));
    let done = Arc::clone(&arrived);
    sim.client("local", async move {
        let transport = TurmoilTcp::new(1460);
        let manager = ConnectionManager::new(
            NodeName::from("local"),
            Arc::new(TurmoilTcp::new(1460)),
            ManagerConfig::new(RuntimeChoice::current()),
        )?;
        for name in ["wedged", "healthy"] {
            manager.register(
                NodeName::from(name),
                transport.connect(&format!("{name}:9000")).await?,
            );
        }
        let written = Arc::new(Written::default());
        let mut config = SenderConfig::new(RuntimeChoice::current());
        config.observer = Some(Arc::clone(&written) as _);
        let sender = DistSender::new(manager.clone(), config)?;
        let start = tokio::time::Instant::now();
        sender.enqueue(
            NodeName::from("wedged"),
            Arc::from(encode(&vec![1; BIG_SIMULATED], b"").unwrap()),
        );
        sender.enqueue(
            NodeName::from("healthy"),
            Arc::from(encode(b"healthy", b"").unwrap()),
        );
        // Wait on the drain's own signal, not a poll: within one turmoil
        // tick a host's timers all fire, so a 1 ms poll would cost 5,000
        // wake-ups whatever the tick.
        while sender.stats().data_written < 1 {
            written.notify.notified().await;
        }
        *done.lock().unwrap() = start.elapsed();
        Ok(())
    });
    sim.run().expect("the simulated exchange runs");
    let virtual_time = *arrived.lock().unwrap();
    (virtual_time, started.elapsed())
}

/// Wakes the exchange's client when the drain finishes a write.
#[derive(Default)]
struct Written {
    notify: tokio::sync::Notify,
}

impl SenderObserver for Written {
    fn write_started(&self, _: &DistConnection, _: SenderLane, _: &[u8]) {}
    fn write_finished(&self, _: &DistConnection, _: SenderLane, _: &[u8], _: WriteOutcome) {
        self.notify.notify_one();
    }
    fn control_skipped(&self, _: &DistConnection, _: &[u8]) {}
    fn data_unroutable(&self, _: &NodeName, _: &[u8]) {}
}

/// Bare turmoil carrying a sender-world run's data frames (same peers,
/// sizes, gaps and tick; no production code, log or checkers): wall time.
///
/// # Panics
/// When the simulation fails.
#[must_use]
pub fn bare_turmoil(params: &Params, seed: u64) -> Duration {
    let Params::Sender(p) = params else {
        return Duration::ZERO;
    };
    let started = Instant::now(); // wall-clock: ok (benchmark)
    let mut sim = turmoil::Builder::new()
        .tick_duration(p.tick)
        .tcp_capacity(p.tcp_capacity as usize)
        .build();
    for index in 0..p.peers {
        sim.host(format!("peer{index}"), || async {
            let listener = turmoil::net::TcpListener::bind(("0.0.0.0", 9000)).await?;
            loop {
                let (mut stream, _) = listener.accept().await?;
                tokio::spawn(async move {
                    while read_frame(&mut stream, DEFAULT_MAX_FRAME).await.is_ok() {}
                });
            }
        });
    }
    let p = p.clone();
    sim.client("local", async move {
        use tokio::io::AsyncWriteExt;
        let mut rng = crate::rng::SimRng::new(seed).fork("bare");
        let mut streams = Vec::new();
        for index in 0..p.peers {
            streams.push(turmoil::net::TcpStream::connect(format!("peer{index}:9000")).await?);
        }
        for _ in 0..p.data_frames + 2 * p.links {
            let peer = rng.range(0, p.peers - 1) as usize;
            let payload = rng.range(p.frame_bytes.0, p.frame_bytes.1) as usize;
            streams[peer]
                .write_all(&encode(&[0; 25], &vec![0xA5; payload]).unwrap())
                .await?;
            let gap = rng.range(p.gap.0.as_micros() as u64, p.gap.1.as_micros() as u64);
            if gap > 0 {
                tokio::time::sleep(Duration::from_micros(gap)).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        Ok(())
    });
    sim.run().expect("the bare simulation runs");
    started.elapsed()
}

/// Everything `lanesim bench` measures, in one report.
#[derive(Debug)]
pub struct BenchReport {
    /// Seeds per second per scenario.
    pub scenarios: Vec<ScenarioBench>,
    /// The wedged exchange per tick (ms): (virtual time, wall time), median of 7.
    pub exchange: Vec<(u64, Duration, Duration)>,
    /// The same exchange on real loopback TCP, unless skipped.
    pub real: Option<Duration>,
    /// Per sender scenario: (name, harness wall, bare turmoil wall) over 20 seeds.
    pub harness: Vec<(String, Duration, Duration)>,
}

/// Runs the whole benchmark.
#[must_use]
pub fn report(
    scenarios: &[Scenario],
    seeds: crate::scenario::SeedRange,
    no_real: bool,
) -> BenchReport {
    let per_scenario = scenarios.iter().map(|s| scenario(s, seeds)).collect();
    // Medians of 7: these machines are shared and noisy.
    let exchange = [1, 10, 50, 100]
        .into_iter()
        .map(|tick| {
            let mut runs: Vec<(Duration, Duration)> = (0..7)
                .map(|_| wedged_exchange_sim(Duration::from_millis(tick)))
                .collect();
            runs.sort_by_key(|run| run.1);
            (tick, runs[3].0, runs[3].1)
        })
        .collect();
    let real = (!no_real).then(wedged_exchange_real);
    let harness = scenarios
        .iter()
        .filter(|s| s.file.world == crate::scenario::WorldKind::Sender)
        .map(|s| {
            let mut with = Duration::ZERO;
            let mut bare = Duration::ZERO;
            for seed in seeds.iter().take(20) {
                let started = Instant::now(); // wall-clock: ok (benchmark)
                let _ = execute(s, seed, Planted::none());
                with += started.elapsed();
                bare += bare_turmoil(&s.sample(seed), seed);
            }
            (s.name.clone(), with, bare)
        })
        .collect();
    BenchReport {
        scenarios: per_scenario,
        exchange,
        real,
        harness,
    }
}
