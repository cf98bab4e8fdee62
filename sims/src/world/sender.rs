//! The sender world: the production `ConnectionManager` + `DistSender` on a
//! turmoil host ("local"), peers on other hosts that log every frame they
//! read, and a driver that steps the simulation and injects faults.
//!
//! The local node dials every peer, makes links over the generations it has,
//! enqueues data frames and one EXIT control per link (pinned to the
//! generation the link was made over), redials nodes that go down, then
//! waits for the drain to empty. Every frame carries a tag (lane, pinned
//! generation, sequence, link) so the log says exactly what arrived on which
//! socket; the sender's observer says what the drain wrote where.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim::distribution::frame::{read_frame, Frame, DEFAULT_MAX_FRAME};
use lanesim::distribution::{
    ConnectionManager, ControlEnqueueError, ControlOutbound, DistConnection, DistSender, Enqueued,
    LinkTable, ManagerConfig, NodeName, SenderConfig, SenderLane, SenderObserver, WriteOutcome,
    HELLO,
};
use lanesim::planted::Planted;
use lanesim::shim::rt::RuntimeChoice;
use tokio::time::Instant;

use super::net::TurmoilTcp;
use super::tag::Tag;
use super::WorldRun;
use crate::event::{Event, EventLog};
use crate::fault::{timeline, Action, PeerControl};
use crate::rng::SimRng;
use crate::scenario::{FaultKind, SenderParams};

const PORT: u16 = 9000;
const LOCAL: &str = "local";

/// What the hosts and the driver share (all on the simulation's thread).
struct Shared {
    log: EventLog,
    peers: Vec<PeerControl>,
    /// Signalled whenever the drain disposes of a frame, so the end of the
    /// run waits on events instead of polling: within one turmoil tick a
    /// host's timers all fire, so a 1 ms poll costs a wake-up per virtual
    /// millisecond whatever the tick.
    drained: tokio::sync::Notify,
}

impl Shared {
    fn record(&self, host: &str, event: Event) {
        self.log
            .push(turmoil::sim_elapsed().unwrap_or_default(), host, event);
    }
}

fn peer_name(index: u64) -> String {
    format!("peer{index}")
}

/// Runs one seed of the sender world.
pub fn run(params: &SenderParams, seed: u64, budget: Duration, planted: Planted) -> WorldRun {
    let shared = Arc::new(Shared {
        log: EventLog::default(),
        peers: (0..params.peers).map(|_| PeerControl::default()).collect(),
        drained: tokio::sync::Notify::new(),
    });
    let mut sim = turmoil::Builder::new()
        .simulation_duration(budget + Duration::from_secs(3600))
        .tick_duration(params.tick)
        .tcp_capacity(params.tcp_capacity as usize)
        .rng_seed(seed)
        .build();
    for index in 0..params.peers {
        let shared = Arc::clone(&shared);
        sim.host(peer_name(index), move || {
            peer_main(Arc::clone(&shared), index)
        });
    }
    sim.client(
        LOCAL,
        local_main(Arc::clone(&shared), params.clone(), seed, planted),
    );

    let mut steps = timeline(&params.faults).into_iter().peekable();
    let finished = loop {
        let now = sim.elapsed();
        while let Some(&(at, peer, action)) = steps.peek() {
            if at > now {
                break;
            }
            steps.next();
            apply(&mut sim, &shared, peer, action);
        }
        match sim.step() {
            Ok(true) => break true,
            Ok(false) => {}
            Err(error) => panic!("turmoil: {error}"),
        }
        if sim.elapsed() > budget {
            break false;
        }
    };
    shared
        .log
        .push(sim.elapsed(), "driver", Event::RunEnd { finished });
    // The log ends here: what tearing the simulation down does (the drain's
    // drop marking connections down) is not part of the run.
    let records = shared.log.snapshot();
    let elapsed = sim.elapsed();
    drop(sim);
    WorldRun {
        records,
        finished,
        elapsed,
    }
}

fn apply(sim: &mut turmoil::Sim<'_>, shared: &Shared, peer: u64, action: Action) {
    let name = peer_name(peer);
    let control = &shared.peers[peer as usize];
    shared.log.push(
        sim.elapsed(),
        "driver",
        Event::Fault {
            what: action.name().into(),
            peer: name.clone(),
        },
    );
    match action {
        Action::Wedge => control.wedge.fetch_add(1, Ordering::AcqRel),
        Action::Kill => control.kill.fetch_add(1, Ordering::AcqRel),
        Action::Slow(every) => {
            *control.slow.lock().unwrap() = Some(every);
            0
        }
        Action::Crash => {
            sim.crash(name.as_str());
            0
        }
        Action::Bounce => {
            control.reset();
            sim.bounce(name.as_str());
            0
        }
        Action::Partition => {
            sim.partition(LOCAL, name.as_str());
            0
        }
        Action::Repair => {
            sim.repair(LOCAL, name.as_str());
            0
        }
        Action::Latency(latency) => {
            sim.set_link_latency(LOCAL, name.as_str(), latency);
            0
        }
    };
    control.poke.notify_waiters();
}

/// A peer: accepts sockets and logs every tagged frame it reads, obeying its
/// fault controls.
async fn peer_main(shared: Arc<Shared>, index: u64) -> turmoil::Result {
    let listener = turmoil::net::TcpListener::bind(("0.0.0.0", PORT)).await?;
    loop {
        let (stream, remote) = listener.accept().await?;
        let remote = remote.to_string();
        shared.record(
            &peer_name(index),
            Event::PeerAccepted {
                peer: peer_name(index),
                remote: remote.clone(),
            },
        );
        tokio::spawn(peer_socket(Arc::clone(&shared), index, stream, remote));
    }
}

async fn peer_socket(
    shared: Arc<Shared>,
    index: u64,
    mut stream: turmoil::net::TcpStream,
    remote: String,
) {
    let peer = peer_name(index);
    let control = &shared.peers[index as usize];
    let closed = |how: &str| Event::PeerSocketClosed {
        peer: peer.clone(),
        remote: remote.clone(),
        how: how.into(),
    };
    loop {
        if PeerControl::take(&control.kill) {
            shared.record(&peer, closed("killed"));
            return;
        }
        if PeerControl::take(&control.wedge) {
            // Holds the socket open and never reads again.
            std::future::pending::<()>().await;
        }
        let slow = *control.slow.lock().unwrap();
        if let Some(every) = slow {
            tokio::time::sleep(every).await;
        }
        let frame = tokio::select! {
            biased;
            () = control.poke.notified() => continue,
            frame = read_frame(&mut stream, DEFAULT_MAX_FRAME) => frame,
        };
        match frame {
            Ok(Frame::Data { control, .. }) => {
                if let Some(tag) = Tag::parse(&control) {
                    shared.record(
                        &peer,
                        Event::FrameArrived {
                            peer: peer.clone(),
                            remote: remote.clone(),
                            lane: tag.lane_name().into(),
                            generation: tag.generation,
                            seq: tag.seq,
                            link: tag.link,
                        },
                    );
                } else if control != HELLO {
                    shared.record(&peer, closed("garbage"));
                    return;
                }
            }
            Ok(Frame::Keepalive) => {}
            Err(error) => {
                let how = match error {
                    lanesim::distribution::frame::ReadFrameError::Closed => "eof".to_string(),
                    other => format!("error: {other}"),
                };
                shared.record(&peer, closed(&how));
                return;
            }
        }
    }
}

/// Turns the drain's hooks into events.
struct Observer(Arc<Shared>);

fn lane_name(lane: SenderLane) -> &'static str {
    match lane {
        SenderLane::Data => "data",
        SenderLane::Control => "control",
    }
}

impl SenderObserver for Observer {
    fn write_started(&self, connection: &DistConnection, lane: SenderLane, frame: &[u8]) {
        let seq = Tag::of_frame(frame).map_or(0, |tag| tag.seq);
        self.0.record(
            LOCAL,
            Event::WriteStarted {
                node: connection.node().to_string(),
                generation: connection.generation(),
                lane: lane_name(lane).into(),
                seq,
            },
        );
    }

    fn write_finished(
        &self,
        connection: &DistConnection,
        lane: SenderLane,
        frame: &[u8],
        outcome: WriteOutcome,
    ) {
        let seq = Tag::of_frame(frame).map_or(0, |tag| tag.seq);
        let outcome = match outcome {
            WriteOutcome::Written => "written",
            WriteOutcome::Failed => "failed",
            WriteOutcome::TimedOut => "timed_out",
        };
        self.0.drained.notify_one();
        self.0.record(
            LOCAL,
            Event::WriteFinished {
                node: connection.node().to_string(),
                generation: connection.generation(),
                lane: lane_name(lane).into(),
                seq,
                outcome: outcome.into(),
            },
        );
    }

    fn control_skipped(&self, connection: &DistConnection, frame: &[u8]) {
        let seq = Tag::of_frame(frame).map_or(0, |tag| tag.seq);
        self.0.drained.notify_one();
        self.0.record(
            LOCAL,
            Event::ControlSkipped {
                node: connection.node().to_string(),
                generation: connection.generation(),
                seq,
            },
        );
    }

    fn data_unroutable(&self, node: &NodeName, frame: &[u8]) {
        let seq = Tag::of_frame(frame).map_or(0, |tag| tag.seq);
        self.0.drained.notify_one();
        self.0.record(
            LOCAL,
            Event::DataUnroutable {
                node: node.to_string(),
                seq,
            },
        );
    }
}

/// Logs each generation's first appearance once.
struct Generations {
    shared: Arc<Shared>,
    seen: Mutex<BTreeSet<(String, u64)>>,
}

impl Generations {
    fn up(&self, connection: &DistConnection) {
        let key = (connection.node().to_string(), connection.generation());
        if self.seen.lock().unwrap().insert(key) {
            self.shared.record(
                LOCAL,
                Event::ConnectionUp {
                    node: connection.node().to_string(),
                    generation: connection.generation(),
                    local: connection.local().to_string(),
                },
            );
        }
    }
}

async fn dial(
    manager: &ConnectionManager,
    generations: &Generations,
    node: &NodeName,
) -> Option<Arc<DistConnection>> {
    match manager.dial(node, &format!("{node}:{PORT}")).await {
        Ok(connection) => {
            generations.up(&connection);
            Some(connection)
        }
        Err(error) => {
            generations.shared.record(
                LOCAL,
                Event::DialFailed {
                    node: node.to_string(),
                    error: error.to_string(),
                },
            );
            None
        }
    }
}

async fn local_main(
    shared: Arc<Shared>,
    p: SenderParams,
    seed: u64,
    planted: Planted,
) -> turmoil::Result {
    let mut rng = SimRng::new(seed).fork("sender");
    let mut manager_config = ManagerConfig::new(RuntimeChoice::current());
    manager_config.connect_timeout = p.connect_timeout;
    manager_config.planted = planted;
    let manager = ConnectionManager::new(
        NodeName::from(LOCAL),
        Arc::new(TurmoilTcp {
            mss: p.mss as usize,
        }),
        manager_config,
    )?;
    let link_log = Arc::clone(&shared);
    let links = LinkTable::new(move |node, link| {
        link_log.record(
            LOCAL,
            Event::NoConnection {
                node: node.to_string(),
                generation: link.generation,
                link: link.local,
            },
        );
    });
    links.attach(&manager);
    let (redial_tx, mut redial_rx) = tokio::sync::mpsc::unbounded_channel::<NodeName>();
    let down_log = Arc::clone(&shared);
    manager.register_connection_down(move |event| {
        down_log.record(
            LOCAL,
            Event::ConnectionDown {
                node: event.node.to_string(),
                generation: event.generation,
                reason: format!("{:?}", event.reason),
            },
        );
        let _ = redial_tx.send(event.node.clone());
    });
    let sender = DistSender::new(
        manager.clone(),
        SenderConfig {
            data_capacity: p.data_capacity as usize,
            control_capacity: p.control_capacity as usize,
            write_timeout: p.write_timeout,
            runtime: RuntimeChoice::current(),
            observer: Some(Arc::new(Observer(Arc::clone(&shared)))),
            planted,
        },
    )?;
    let generations = Arc::new(Generations {
        shared: Arc::clone(&shared),
        seen: Mutex::new(BTreeSet::new()),
    });
    let nodes: Vec<NodeName> = (0..p.peers).map(|i| NodeName::from(peer_name(i))).collect();
    for node in &nodes {
        dial(&manager, &generations, node).await;
    }
    if let Some(after) = p.redial_after {
        let (manager, generations) = (manager.clone(), Arc::clone(&generations));
        tokio::spawn(async move {
            while let Some(node) = redial_rx.recv().await {
                let (manager, generations) = (manager.clone(), Arc::clone(&generations));
                tokio::spawn(async move {
                    for _ in 0..20 {
                        tokio::time::sleep(after).await;
                        if dial(&manager, &generations, &node).await.is_some() {
                            return;
                        }
                    }
                });
            }
        });
    }

    let mut data_seq: BTreeMap<u64, u64> = BTreeMap::new();
    let mut control_seq = 0u64;
    let mut next_link = 1u64;
    let mut remaining_data = p.data_frames;
    let mut remaining_links = p.links;
    let mut open_links: Vec<(u64, Arc<DistConnection>)> = Vec::new();
    while remaining_data + remaining_links + open_links.len() as u64 > 0 {
        let pick = rng.range(
            0,
            remaining_data + remaining_links + open_links.len() as u64 - 1,
        );
        let payload = rng.range(p.frame_bytes.0, p.frame_bytes.1) as usize;
        if pick < remaining_data {
            remaining_data -= 1;
            let peer = rng.range(0, p.peers - 1);
            let seq = data_seq.entry(peer).or_default();
            *seq += 1;
            let frame = Tag {
                lane: b'D',
                generation: 0,
                seq: *seq,
                link: None,
            }
            .frame(payload);
            let before = Instant::now();
            let outcome = sender.enqueue(nodes[peer as usize].clone(), Arc::from(frame));
            let outcome = match outcome {
                Enqueued::Queued => "queued",
                Enqueued::DroppedFull => "dropped_full",
                Enqueued::DroppedClosed => "dropped_closed",
            };
            shared.record(
                LOCAL,
                Event::DataEnqueued {
                    node: peer_name(peer),
                    seq: *seq,
                    outcome: outcome.into(),
                    blocked_us: before.elapsed().as_micros() as u64,
                },
            );
        } else if pick < remaining_data + remaining_links {
            remaining_links -= 1;
            let peer = rng.range(0, p.peers - 1);
            if let Some(connection) = manager.get_connection(&nodes[peer as usize]) {
                let link = next_link;
                next_link += 1;
                shared.record(
                    LOCAL,
                    Event::Linked {
                        node: peer_name(peer),
                        generation: connection.generation(),
                        link,
                    },
                );
                if links.link(&connection, link, link).is_some() {
                    open_links.push((link, connection));
                }
            }
        } else {
            let index = rng.range(0, open_links.len() as u64 - 1) as usize;
            let (link, connection) = open_links.swap_remove(index);
            control_seq += 1;
            let tag = Tag {
                lane: b'C',
                generation: connection.generation(),
                seq: control_seq,
                link: Some(link),
            };
            let before = Instant::now();
            let outcome = sender.enqueue_control(ControlOutbound {
                connection: Arc::clone(&connection),
                frame: Arc::from(tag.frame(payload)),
            });
            let blocked_us = before.elapsed().as_micros() as u64;
            let outcome = match outcome {
                Ok(()) => "queued",
                Err(ControlEnqueueError::Overflow) => "overflow",
                Err(ControlEnqueueError::Closed) => "closed",
            };
            shared.record(
                LOCAL,
                Event::ControlEnqueued {
                    node: connection.node().to_string(),
                    generation: connection.generation(),
                    seq: control_seq,
                    link: Some(link),
                    outcome: outcome.into(),
                    down_at_return: connection.is_down(),
                    blocked_us,
                },
            );
        }
        let gap = Duration::from_micros(
            rng.range(p.gap.0.as_micros() as u64, p.gap.1.as_micros() as u64),
        );
        if !gap.is_zero() {
            tokio::time::sleep(gap).await;
        }
    }
    shared.record(LOCAL, Event::WorkloadDone);
    loop {
        let s = sender.stats();
        let controls_done =
            s.control_queued == s.control_written + s.control_skipped_down + s.control_failed;
        let data_done = s.data_queued == s.data_written + s.data_no_connection + s.data_failed;
        if controls_done && data_done {
            break;
        }
        // Counters move only when the drain disposes of a frame, which
        // notifies; the timeout is a backstop, not the pace.
        let _ = tokio::time::timeout(Duration::from_secs(1), shared.drained.notified()).await;
    }
    // Let written frames reach peers that are still reading: wait for the
    // log to stay quiet for longer than the slowest peer's read interval.
    let slowest = p
        .faults
        .iter()
        .filter(|f| f.kind == FaultKind::Slow)
        .map(|f| f.lasting)
        .max()
        .unwrap_or_default();
    let quiet = Duration::from_millis(200) + slowest * 2;
    loop {
        let before = shared.log.len();
        tokio::time::sleep(quiet).await;
        if shared.log.len() == before {
            break;
        }
    }
    let s = sender.stats();
    shared.record(
        LOCAL,
        Event::SenderStats {
            data_queued: s.data_queued,
            data_written: s.data_written,
            data_failed: s.data_failed,
            data_no_connection: s.data_no_connection,
            control_queued: s.control_queued,
            control_written: s.control_written,
            control_failed: s.control_failed,
            control_skipped: s.control_skipped_down,
        },
    );
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(sender)));
    shared.record(
        LOCAL,
        Event::SenderDropped {
            panicked: dropped.is_err(),
        },
    );
    Ok(())
}
