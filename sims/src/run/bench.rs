//! `lanesim bench`: what the testbed costs, measured in wall time (the only
//! place the testbed reads a clock it does not simulate).
//!
//! - per scenario: seeds per second on one core, and virtual seconds per
//!   wall second;
//! - the wedged-peer exchange (one frame parked on a peer that never reads,
//!   released by the real 5 s deadline, then a frame to a healthy peer) on
//!   real loopback TCP and in simulation, side by side, as a ratio;
//! - the harness (world, event log, checkers) against bare turmoil carrying
//!   the same traffic: the run's own sockets and frames, replayed at the
//!   instants the harness made them, with the same faults and span;
//! - and against the same production code and workload in turmoil with
//!   nothing observing it (no records kept, no checkers): what observing a
//!   run costs. The socket replay leaves out the code under test and its
//!   input (a control flood's hundreds of refused 6-30 kB frames are never
//!   traffic), so for a scenario whose work is mostly the sender's own, its
//!   ratio measures the scenario, not the harness; this one measures the
//!   harness alone.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::targets::Subject;
use lanesim::distribution::frame::{read_frame, Frame, DEFAULT_MAX_FRAME};
use lanesim::distribution::{
    ConnectionManager, DistConnection, DistSender, ManagerConfig, NodeName, SenderConfig,
    SenderLane, SenderObserver, WriteOutcome,
};
use lanesim::shim::net::{Connected, TokioTcp, Transport};
use lanesim::shim::rt::RuntimeChoice;

use super::execute;
use crate::scenario::{Params, Scenario};
use crate::world::handshake::{self, COOKIE};
use crate::world::net::TurmoilTcp;
use lanesim::distribution::Cookie;
use lanesim_target::handshake::Nonces;
use lanesim_target::wire::{encode, HEADER_LEN};

/// The benchmarks' cluster cookie.
fn bench_cookie() -> Cookie {
    Cookie::new(COOKIE).expect("the world's cookie is a cookie")
}

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
pub fn scenario(
    scenario: &Scenario,
    seeds: crate::scenario::SeedRange,
    subject: &Subject,
) -> ScenarioBench {
    let count = seeds.len();
    let started = Instant::now(); // wall-clock: ok (benchmark)
    let mut simulated = Duration::ZERO;
    for seed in seeds {
        simulated += execute(scenario, seed, subject).elapsed;
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
/// of one MSS (docs/benchmarks.md, "The testbed": turmoil stalls after segments, a
/// kernel after bytes), and a 16 MiB copy would dominate the simulated run's cost.
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
            ManagerConfig::new(RuntimeChoice::current(), bench_cookie()),
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
            Arc::from(encode(&vec![1; BIG], b"")),
        );
        sender.enqueue(
            NodeName::from("healthy"),
            Arc::from(encode(b"healthy", b"")),
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
            ManagerConfig::new(RuntimeChoice::current(), bench_cookie()),
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
            Arc::from(encode(&vec![1; BIG_SIMULATED], b"")),
        );
        sender.enqueue(
            NodeName::from("healthy"),
            Arc::from(encode(b"healthy", b"")),
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

/// What bare turmoil replays of a harness run, at the instant the harness
/// did it.
#[derive(Clone, Copy, Debug)]
enum Replayed {
    /// The local node opened a socket to a peer (its hello's first byte).
    Open { socket: u16, peer: u64 },
    /// A frame of `bytes` began to be written to a socket.
    Write { socket: u16, bytes: usize },
    /// The socket's generation went down: the local node closed it.
    Close { socket: u16 },
}

/// The socket-level traffic of a sender-world run, from its log: every
/// socket the local node opened, every frame it began to write (size
/// included), every socket it closed, each at its virtual instant; and
/// the run's length.
fn traffic(records: &[crate::event::Record]) -> (Vec<(Duration, Replayed)>, Duration) {
    use std::collections::BTreeMap;

    use crate::event::Event;
    let mut peer_of: BTreeMap<u16, u64> = BTreeMap::new();
    let mut socket_of: BTreeMap<(u64, u64), u16> = BTreeMap::new();
    for record in records {
        if let Event::ConnectionUp {
            peer,
            generation,
            socket,
        } = record.event
        {
            peer_of.insert(socket, peer);
            socket_of.insert((peer, generation), socket);
        }
    }
    let mut steps = Vec::new();
    let mut end = Duration::ZERO;
    for record in records {
        end = end.max(record.at);
        let step = match record.event {
            Event::HandshakeWriteBegun { socket } => peer_of
                .get(&socket)
                .map(|&peer| Replayed::Open { socket, peer }),
            Event::FrameWriteBegun { socket, bytes, .. } => Some(Replayed::Write {
                socket,
                bytes: bytes as usize,
            }),
            Event::ConnectionDown {
                peer, generation, ..
            } => socket_of
                .get(&(peer, generation))
                .map(|&socket| Replayed::Close { socket }),
            _ => None,
        };
        steps.extend(step.map(|step| (record.at, step)));
    }
    (steps, end)
}

/// A bare peer: reads whole frames with the production codec and obeys
/// the same fault signals as the world's peers (between frames), with no
/// log, tags or framed reader.
async fn bare_peer(controls: Arc<Vec<crate::fault::PeerControl>>, index: u64) -> turmoil::Result {
    use crate::fault::PeerControl;
    let listener = turmoil::net::TcpListener::bind(("0.0.0.0", 9000)).await?;
    let nonces = handshake::nonces(0, &crate::world::peer::peer_name(index));
    loop {
        let (mut stream, _) = listener.accept().await?;
        let controls = Arc::clone(&controls);
        let nonce = nonces.next();
        tokio::spawn(async move {
            let control = &controls[index as usize];
            let name = crate::world::peer::peer_name(index);
            if handshake::accept(&mut stream, &name, COOKIE, nonce)
                .await
                .is_err()
            {
                return;
            }
            loop {
                if PeerControl::take(&control.kill) {
                    return;
                }
                if PeerControl::take(&control.wedge) {
                    std::future::pending::<()>().await;
                }
                let slow = *control.slow.lock().unwrap();
                if let Some(every) = slow {
                    tokio::time::sleep(every).await;
                }
                if read_frame(&mut stream, DEFAULT_MAX_FRAME).await.is_err() {
                    return;
                }
            }
        });
    }
}

/// Bare turmoil carrying the same traffic as a sender-world run whose log
/// is `harness`: the same hosts, tick, window and seed; the same sockets
/// opened and closed, and the same frames (sizes, sockets, MSS-sized
/// segments) begun at the same virtual instants; the same fault timeline;
/// for the same virtual time. No production code, event log, tags or
/// checkers. Wall time.
///
/// Until this replay, bare turmoil wrote each frame as one segment (the
/// harness writes one per MSS, and turmoil's window counts segments),
/// skipped the faults (no partition, slow or wedged reader) and stopped
/// 200 ms after its last write, so it simulated a fraction of the
/// harness's virtual time (2 s of 7 s for a partition, 0.9 s of 7 s for a
/// wedged peer).
///
/// # Panics
/// When the simulation fails.
#[must_use]
pub fn bare_turmoil(params: &Params, seed: u64, harness: &[crate::event::Record]) -> Duration {
    use std::collections::BTreeMap;

    use crate::fault::{timeline, Action, PeerControl};
    let Params::Sender(p) = params else {
        return Duration::ZERO;
    };
    let (steps, span) = traffic(harness);
    let started = Instant::now(); // wall-clock: ok (benchmark)
    let mut sim = turmoil::Builder::new()
        .simulation_duration(span + Duration::from_secs(3600))
        .tick_duration(p.tick)
        .tcp_capacity(p.tcp_capacity as usize)
        .rng_seed(seed)
        .build();
    let controls: Arc<Vec<PeerControl>> =
        Arc::new((0..p.peers).map(|_| PeerControl::default()).collect());
    for index in 0..p.peers {
        let controls = Arc::clone(&controls);
        sim.host(crate::world::peer::peer_name(index), move || {
            bare_peer(Arc::clone(&controls), index)
        });
    }
    let (mss, connect_timeout) = (p.mss.max(1) as usize, p.connect_timeout);
    sim.client("local", async move {
        use tokio::io::AsyncWriteExt;
        let nonces = Arc::new(handshake::nonces(0, "local"));
        let start = tokio::time::Instant::now();
        let largest = steps.iter().map(|(_, step)| match step {
            Replayed::Write { bytes, .. } => *bytes,
            _ => 0,
        });
        let filler = vec![0xA5; largest.max().unwrap_or(0)];
        let mut writers: BTreeMap<u16, tokio::sync::mpsc::UnboundedSender<Vec<u8>>> =
            BTreeMap::new();
        let mut tasks = BTreeMap::new();
        for (at, step) in steps {
            tokio::time::sleep_until(start + at).await;
            match step {
                Replayed::Open { socket, peer } => {
                    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
                    writers.insert(socket, tx);
                    let nonces = Arc::clone(&nonces);
                    let task = tokio::spawn(async move {
                        let addr = format!("{}:9000", crate::world::peer::peer_name(peer));
                        let connect = turmoil::net::TcpStream::connect(addr);
                        let Ok(Ok(mut stream)) =
                            tokio::time::timeout(connect_timeout, connect).await
                        else {
                            return;
                        };
                        let nonce = nonces.next();
                        if handshake::dial(&mut stream, "local", COOKIE, nonce)
                            .await
                            .is_err()
                        {
                            return;
                        }
                        while let Some(frame) = rx.recv().await {
                            for segment in frame.chunks(mss) {
                                if stream.write_all(segment).await.is_err() {
                                    return;
                                }
                            }
                        }
                    });
                    tasks.insert(socket, task);
                }
                Replayed::Write { socket, bytes } => {
                    let header = crate::world::tag::TAG_LEN + HEADER_LEN;
                    let payload = &filler[..bytes.saturating_sub(header)];
                    let frame = encode(&[0; crate::world::tag::TAG_LEN], payload);
                    if let Some(writer) = writers.get(&socket) {
                        let _ = writer.send(frame);
                    }
                }
                Replayed::Close { socket } => {
                    writers.remove(&socket);
                    if let Some(task) = tasks.remove(&socket) {
                        task.abort();
                    }
                }
            }
        }
        tokio::time::sleep_until(start + span).await;
        Ok(())
    });
    let mut faults = timeline(&p.faults).into_iter().peekable();
    crate::world::drive(&mut sim, span + Duration::from_secs(60), |sim, now| {
        while let Some((_, peer, action)) = faults.next_if(|&(at, _, _)| at <= now) {
            let (name, control) = (
                crate::world::peer::peer_name(peer),
                &controls[peer as usize],
            );
            match action {
                Action::Wedge => {
                    control
                        .wedge
                        .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                }
                Action::Kill => {
                    control
                        .kill
                        .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                }
                Action::Slow(every) => *control.slow.lock().unwrap() = Some(every),
                Action::Crash => sim.crash(name.as_str()),
                Action::Bounce => {
                    control.reset();
                    sim.bounce(name.as_str());
                }
                Action::Partition => sim.partition("local", name.as_str()),
                Action::Repair => sim.repair("local", name.as_str()),
                Action::Latency(latency) => sim.set_link_latency("local", name.as_str(), latency),
                // The local node's own act: its socket's close is replayed.
                Action::Disconnect => {}
                // Bare peers write nothing back.
                Action::Hostile(_) => {}
            }
        }
    });
    started.elapsed()
}

/// One seed of a sender scenario with nothing observing it
/// ([`crate::world::sender::run_unobserved`]): (virtual time, wall time).
/// Other worlds: zero both.
#[must_use]
pub fn unobserved(scenario: &Scenario, params: &Params, seed: u64) -> (Duration, Duration) {
    let Params::Sender(p) = params else {
        return (Duration::ZERO, Duration::ZERO);
    };
    let started = Instant::now(); // wall-clock: ok (benchmark)
    let run = crate::world::sender::run_unobserved(p, seed, scenario.budget());
    (run.elapsed, started.elapsed())
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
    /// Per sender scenario, over 20 seeds.
    pub harness: Vec<HarnessBench>,
    /// A quiet mesh (every pair connected, a few links and data frames,
    /// no fault) by node count: (nodes, its bench).
    pub mesh: Vec<(u64, ScenarioBench)>,
}

/// The mesh sizes `bench` measures, with the seeds it runs of each.
const MESH_SIZES: [(u64, u64); 6] = [(2, 16), (4, 16), (8, 8), (16, 4), (32, 2), (64, 2)];

/// A quiet mesh of `nodes` nodes: what `bench` times against node count.
///
/// # Panics
/// Never for `nodes` within the mesh world's bound (the text is fixed).
#[must_use]
pub fn quiet_mesh(nodes: u64) -> Scenario {
    let text = format!(
        "description = \"A quiet mesh of {nodes} nodes.\"\nworld = \"mesh\"\nchecks = [\"M1\", \"M2\", \"M3\", \"M4\", \"M6\"]\n\n[mesh]\nnodes = {nodes}\nlinks = 2\ndata = 2\nworkload = \"1s\"\nhold = [\"10ms\", \"100ms\"]\n"
    );
    Scenario::parse(
        std::path::Path::new(&format!("quiet_mesh_{nodes}.toml")),
        &text,
    )
    .expect("a valid mesh scenario")
}

/// One sender scenario's harness against its baselines, over the same seeds.
#[derive(Debug)]
pub struct HarnessBench {
    /// The scenario.
    pub name: String,
    /// Wall time of the runs, judged (world, log, checkers).
    pub harness: Duration,
    /// Wall time of the same runs unobserved: production code, workload and
    /// peers in turmoil, no records kept, nothing judged.
    pub unobserved: Duration,
    /// Wall time of bare turmoil replaying the runs' socket traffic.
    pub bare: Duration,
    /// Seeds whose unobserved run took a different virtual time than the
    /// judged one (the baseline is only fair when this is zero).
    pub diverged: u64,
}

/// Runs the whole benchmark.
#[must_use]
pub fn report(
    scenarios: &[Scenario],
    seeds: crate::scenario::SeedRange,
    no_real: bool,
    subject: &Subject,
) -> BenchReport {
    let per_scenario = scenarios
        .iter()
        .map(|s| scenario(s, seeds, subject))
        .collect();
    let mesh = if subject.node().is_some_and(|n| n.capabilities().accepts) {
        MESH_SIZES
            .iter()
            .map(|&(nodes, runs)| {
                let seeds = crate::scenario::SeedRange::new(0, runs - 1).expect("a range");
                (nodes, scenario(&quiet_mesh(nodes), seeds, subject))
            })
            .collect()
    } else {
        Vec::new()
    };
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
            let mut bench = HarnessBench {
                name: s.name.clone(),
                harness: Duration::ZERO,
                unobserved: Duration::ZERO,
                bare: Duration::ZERO,
                diverged: 0,
            };
            for seed in seeds.iter().take(20) {
                let started = Instant::now(); // wall-clock: ok (benchmark)
                let run = execute(s, seed, &Subject::default());
                bench.harness += started.elapsed();
                let params = s.sample(seed);
                let (quiet, took) = unobserved(s, &params, seed);
                bench.unobserved += took;
                bench.diverged += u64::from(quiet != run.elapsed);
                bench.bare += bare_turmoil(&params, seed, &run.records);
            }
            bench
        })
        .collect();
    BenchReport {
        scenarios: per_scenario,
        exchange,
        real,
        harness,
        mesh,
    }
}
