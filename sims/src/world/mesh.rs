//! The mesh world: N production nodes (2 to 64) on turmoil hosts, every one
//! a `ConnectionManager` + `DistSender` + two `LinkTable`s that dials every
//! other node and accepts their dials, so the bugs that live *between*
//! production nodes (simultaneous dials, heartbeats, restarts, squatters)
//! are in reach, where the sender world's peers are frame readers that
//! never dial back.
//!
//! Model. Each node keeps every other node connected: a keeper per pair
//! dials at the pair's first-dial time (both ends at the same virtual
//! instant for a share of pairs: a simultaneous connect) and redials
//! whenever it finds no live connection. The workload makes links: a link
//! is recorded in the maker's table over the generation it is made on, a
//! LINK control pinned to that generation tells the other node (which
//! records it in its own table of learned links over the generation it
//! arrived on), and an EXIT control pinned to the same generation ends
//! it `hold` later. A down of a generation delivers `noconnection` for
//! every link over it on that end. Nothing unlinks on a write: a written
//! EXIT has reached the kernel, not the peer, so only its arrival or the
//! generation's down settles a link (M2).
//!
//! Faults, applied by the driver between steps: restart (crash, then a
//! new incarnation under the same name), partition (segments *held* and
//! delivered on heal, as TCP retransmission would), half-open (one
//! direction's segments dropped, for longer than a tick and a half), kill
//! (a node disconnects a peer), latency, a squatter (a host with the
//! cookie that proves itself under another node's name and stays silent),
//! an impostor (the same without the cookie: it must never get in), and
//! cross-dial (two nodes drop their connection and redial each other in the
//! same instant).
//!
//! The run ends at `MeshParams::end`: the workload and the faults are over
//! and a settle time has passed, and the driver logs each live node's
//! table (M1 compares the two ends of each pair). A crashed incarnation
//! logs nothing from the moment of its crash: what tearing a host down
//! does is not something the node did.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use lanesim_target::handshake::{Nonces, SeededNonces};
use lanesim_target::net::Transport;
use lanesim_target::node::{
    Conn, Down, DownReason, Generation, Node, NodeEvents, NodeReports, NodeSetup, Runtime, Up,
};
use lanesim_target::wire::encode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use super::handshake::{self, COOKIE};
use super::links::{Link, Links};
use super::net::{AcceptFault, AcceptGate, Injected, ReadGate, TurmoilTcp};
use super::WorldRun;
use crate::coverage::{self, PreemptPolicy, WorldMark, WorldProbe};
use crate::event::{Event, EventLog, LinkMsg, LinkSide, MeshFaultApplied};
use crate::rng::SimRng;
use crate::scenario::{MeshFaultKind, MeshParams, ACCEPT_RECOVERY};
use crate::targets::Subject;

/// Every node listens here.
const PORT: u16 = 9000;
/// The squatter's host.
const SQUATTER: &str = "squatter";
/// The impostor's host.
const IMPOSTOR: &str = "impostor";
/// The spenders' host.
const SPENDER: &str = "spender";
/// Streams the spender opens to a node: their frames together are more
/// than the node's frame budget (four of the largest).
const SPENDERS: u64 = 5;
/// The host that probes every node's accepts at the end (M7), and the
/// name its streams announce (a valid node name that is no node's).
const PROBER: &str = "prober";
/// Largest inbound frame: links and exits are a few bytes, and a small cap
/// turns a header garbled by a dropped segment into a prompt `ReadError`.
const MAX_FRAME: u64 = 64 * 1024;
/// Each node's budget for partly read frames: four of the largest, so a
/// few spenders (the `spend` fault) can contend for it.
const FRAME_BUDGET: u64 = 4 * MAX_FRAME;
/// turmoil's default largest message latency.
const TURMOIL_MAX_LATENCY: Duration = Duration::from_millis(100);
/// turmoil's segment size.
const MSS: usize = 1460;
/// Each node's data lane depth.
const DATA_CAPACITY: usize = 1024;
/// Each node's control lane depth.
const CONTROL_CAPACITY: usize = 256;

fn node_name(index: u64) -> String {
    format!("node{index}")
}

/// The index of `node<N>`.
fn node_index(node: &str) -> Option<u64> {
    node.strip_prefix("node")?.parse().ok()
}

/// A socket's name on both ends: its dialer's address (the end whose port
/// is not the listening port).
fn dialer_of(local: &str, peer: &str) -> Option<SocketAddr> {
    let local: SocketAddr = local.parse().ok()?;
    let peer: SocketAddr = peer.parse().ok()?;
    Some(if local.port() == PORT { peer } else { local })
}

/// A link's id: unique in the run (node, incarnation, counter).
fn link_id(node: u64, incarnation: u64, counter: u64) -> u64 {
    (node << 48) | (incarnation << 32) | counter
}

/// A data frame: `D` and its sequence number.
fn data_frame(seq: u64) -> Arc<[u8]> {
    let mut control = vec![b'D'];
    control.extend_from_slice(&seq.to_be_bytes());
    Arc::from(encode(&control, b""))
}

/// A LINK or EXIT control: the message and the link id.
fn control(msg: LinkMsg, link: u64) -> Arc<[u8]> {
    let mut control = vec![match msg {
        LinkMsg::Link => b'L',
        LinkMsg::Exit => b'E',
    }];
    control.extend_from_slice(&link.to_be_bytes());
    Arc::from(encode(&control, b""))
}

fn parse_control(control: &[u8]) -> Option<(LinkMsg, u64)> {
    let (&kind, link) = control.split_first()?;
    let msg = match kind {
        b'L' => LinkMsg::Link,
        b'E' => LinkMsg::Exit,
        _ => return None,
    };
    Some((msg, u64::from_be_bytes(link.try_into().ok()?)))
}

/// What a node is told to do by the driver.
#[derive(Clone, Copy, Debug)]
enum Order {
    /// Disconnect the live generation to this node.
    Kill(u64),
    /// Disconnect it, and dial it again at once.
    CrossDial(u64),
}

/// A running node: the node, where its orders go, and the gates its
/// transport obeys.
struct NodeHandle {
    node: std::sync::Weak<dyn Node>,
    orders: mpsc::UnboundedSender<Order>,
    reads: Arc<ReadGate>,
    accepts: Arc<AcceptGate>,
}

/// What the hosts and the driver share (all on the simulation's thread).
struct Shared {
    log: EventLog,
    probe: Arc<WorldProbe>,
    params: MeshParams,
    seed: u64,
    subject: Subject,
    /// Per node: the incarnation running now (one per start).
    incarnation: Vec<AtomicU64>,
    /// Per node: whether its host is up (cleared at the crash, before
    /// the host is torn down).
    alive: Vec<AtomicBool>,
    /// Per node: its manager, and where its orders go.
    nodes: Mutex<Vec<Option<NodeHandle>>>,
    /// Where squat orders go: (target, claimed name). Made before the
    /// first step, so an order at time zero waits for the squatter host.
    squats: mpsc::UnboundedSender<(u64, u64)>,
    squat_orders: Mutex<Option<mpsc::UnboundedReceiver<(u64, u64)>>>,
    /// Where impostor orders go, the same way.
    impostors: mpsc::UnboundedSender<(u64, u64)>,
    impostor_orders: Mutex<Option<mpsc::UnboundedReceiver<(u64, u64)>>>,
    /// Where spend orders go: (node, how long), the same way.
    spends: mpsc::UnboundedSender<(u64, Duration)>,
    spend_orders: Mutex<Option<mpsc::UnboundedReceiver<(u64, Duration)>>>,
}

impl Shared {
    fn record(&self, host: &str, event: Event) {
        self.log
            .push(turmoil::sim_elapsed().unwrap_or_default(), host, event);
    }

    /// Whether `incarnation` of `node` is the one running (a hook of a
    /// crashed incarnation, run as its host is torn down, logs nothing).
    fn current(&self, node: u64, incarnation: u64) -> bool {
        self.alive[node as usize].load(Ordering::Acquire)
            && self.incarnation[node as usize].load(Ordering::Acquire) == incarnation
    }
}

/// Runs one seed of the mesh world.
///
/// A run with accept faults ends with a prober host dialing every node
/// (`prober_main`, for M7).
pub fn run(params: &MeshParams, seed: u64, budget: Duration, subject: &Subject) -> WorldRun {
    let probe = Arc::new(WorldProbe::new(seed, PreemptPolicy::default()));
    let installed = coverage::install(&probe);
    let n = params.nodes as usize;
    let (squats, squat_orders) = mpsc::unbounded_channel();
    let (impostors, impostor_orders) = mpsc::unbounded_channel();
    let (spends, spend_orders) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        log: EventLog::default(),
        probe: Arc::clone(&probe),
        params: params.clone(),
        seed,
        subject: subject.clone(),
        incarnation: (0..n).map(|_| AtomicU64::new(0)).collect(),
        alive: (0..n).map(|_| AtomicBool::new(true)).collect(),
        nodes: Mutex::new((0..n).map(|_| None).collect()),
        squats,
        squat_orders: Mutex::new(Some(squat_orders)),
        impostors,
        impostor_orders: Mutex::new(Some(impostor_orders)),
        spends,
        spend_orders: Mutex::new(Some(spend_orders)),
    });
    let end = params.end();
    let mut sim = turmoil::Builder::new()
        .simulation_duration(budget + Duration::from_secs(3600))
        .tick_duration(params.tick)
        // turmoil's segment credit is also each listener's backlog, and
        // more unaccepted connects than it panics: every other node may dial
        // a node at once, twice in a cross-dial (64 up to 32 nodes, as
        // always).
        .tcp_capacity(
            usize::try_from(params.nodes * 2)
                .unwrap_or(usize::MAX)
                .max(64),
        )
        .rng_seed(seed)
        .build();
    let starts = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect::<Vec<_>>());
    for index in 0..params.nodes {
        let (shared, starts) = (Arc::clone(&shared), Arc::clone(&starts));
        sim.host(node_name(index), move || {
            let incarnation = starts[index as usize].fetch_add(1, Ordering::AcqRel);
            node_main(Arc::clone(&shared), index, incarnation)
        });
    }
    if params.faults.iter().any(|f| f.kind == MeshFaultKind::Squat) {
        let shared = Arc::clone(&shared);
        sim.host(SQUATTER, move || squatter_main(Arc::clone(&shared)));
    }
    if params
        .faults
        .iter()
        .any(|f| f.kind == MeshFaultKind::Impostor)
    {
        let shared = Arc::clone(&shared);
        sim.host(IMPOSTOR, move || impostor_main(Arc::clone(&shared)));
    }
    if params.faults.iter().any(|f| f.kind == MeshFaultKind::Spend) {
        let shared = Arc::clone(&shared);
        sim.host(SPENDER, move || spender_main(Arc::clone(&shared)));
    }
    if params.probes_accepts() {
        let shared = Arc::clone(&shared);
        sim.host(PROBER, move || prober_main(Arc::clone(&shared)));
    }
    // The run's clock: the simulation is over when it returns.
    sim.client("clock", async move {
        tokio::time::sleep(end).await;
        Ok(())
    });

    let steps = schedule(params);
    let mut next = 0;
    let mut busy: std::collections::BTreeMap<(u64, u64), usize> = std::collections::BTreeMap::new();
    let mut skipped = std::collections::BTreeSet::new();
    let finished = super::drive(&mut sim, budget, |sim, now| {
        while next < steps.len() && steps[next].0 <= now {
            let (_, step) = steps[next];
            next += 1;
            if let Some(what) = occupies(step.applied) {
                if ends(step.applied) {
                    if skipped.contains(&step.fault) {
                        continue;
                    }
                    busy.remove(&what);
                } else if let std::collections::btree_map::Entry::Vacant(free) = busy.entry(what) {
                    free.insert(step.fault);
                } else {
                    skipped.insert(step.fault);
                    continue;
                }
            }
            apply(sim, &shared, step.applied);
        }
    });
    let at = sim.elapsed();
    if finished {
        shared.log.push(at, "driver", Event::WorkloadDone);
        let nodes = shared
            .nodes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (index, node) in nodes.iter().enumerate() {
            let Some(NodeHandle { node: live, .. }) = node else {
                continue;
            };
            if !shared.alive[index].load(Ordering::Acquire) {
                continue;
            }
            let Some(live) = live.upgrade() else {
                continue;
            };
            for peer in (0..params.nodes).filter(|&p| p != index as u64) {
                let socket = live
                    .connection(&node_name(peer))
                    .and_then(|c| dialer_of(c.local_addr(), c.peer_addr()));
                shared.log.push(
                    at,
                    "driver",
                    Event::MeshTableAtEnd {
                        node: index as u64,
                        peer,
                        socket,
                    },
                );
            }
        }
    }
    shared.log.push(at, "driver", Event::RunEnd { finished });
    // The mesh world's only wait is its workload clock.
    let stuck = (!finished).then_some(super::Stuck {
        step: super::EndStep::MeshClock,
        stats: None,
        table: None,
        order: None,
    });
    let run = WorldRun::ended(&shared.log, &probe, finished, at, stuck);
    // Teardown is not part of the run: nothing a dying host does is logged.
    for alive in &shared.alive {
        alive.store(false, Ordering::Release);
    }
    drop(installed);
    drop(sim);
    run
}

/// One thing the driver does at a time: a fault's start or end, with the
/// fault's index in the schedule.
#[derive(Clone, Copy, Debug)]
struct Step {
    fault: usize,
    applied: MeshFaultApplied,
}

/// What a fault occupies while it lasts: a node (restart) or a link. A
/// second fault on an occupied one is skipped, start and end: turmoil
/// keeps one state per link (a heal ends every fault on it) and a crashed
/// host cannot crash again, so overlapping faults would not do what the
/// log says they did.
fn occupies(applied: MeshFaultApplied) -> Option<(u64, u64)> {
    match applied {
        MeshFaultApplied::Crash { node }
        | MeshFaultApplied::Bounce { node }
        | MeshFaultApplied::Resets { node }
        | MeshFaultApplied::ResetsEnd { node, .. }
        | MeshFaultApplied::Exhaust { node }
        | MeshFaultApplied::ExhaustEnd { node, .. } => Some((node, node)),
        MeshFaultApplied::Partition { a, b }
        | MeshFaultApplied::Heal { a, b }
        | MeshFaultApplied::Latency { a, b, .. }
        | MeshFaultApplied::LatencyEnd { a, b }
        | MeshFaultApplied::HalfOpen { from: a, to: b }
        | MeshFaultApplied::HalfOpenHealed { from: a, to: b }
        | MeshFaultApplied::Wedge { node: a, peer: b }
        | MeshFaultApplied::Unwedge { node: a, peer: b }
        | MeshFaultApplied::Slow {
            node: a, peer: b, ..
        }
        | MeshFaultApplied::SlowEnd { node: a, peer: b } => Some((a.min(b), a.max(b))),
        MeshFaultApplied::Kill { .. }
        | MeshFaultApplied::Squat { .. }
        | MeshFaultApplied::Impostor { .. }
        | MeshFaultApplied::Spend { .. }
        | MeshFaultApplied::CrossDial { .. } => None,
    }
}

/// Whether `applied` ends a lasting fault.
fn ends(applied: MeshFaultApplied) -> bool {
    matches!(
        applied,
        MeshFaultApplied::Bounce { .. }
            | MeshFaultApplied::Heal { .. }
            | MeshFaultApplied::LatencyEnd { .. }
            | MeshFaultApplied::HalfOpenHealed { .. }
            | MeshFaultApplied::Unwedge { .. }
            | MeshFaultApplied::SlowEnd { .. }
            | MeshFaultApplied::ResetsEnd { .. }
            | MeshFaultApplied::ExhaustEnd { .. }
    )
}

/// Every fault as the driver's steps, in time order (a lasting fault is a
/// start and an end).
fn schedule(params: &MeshParams) -> Vec<(Duration, Step)> {
    let mut steps = Vec::new();
    for (index, fault) in params.faults.iter().enumerate() {
        let (a, b) = (fault.a, fault.b);
        let end = fault.at + fault.lasting;
        let mut push = |at, applied| {
            steps.push((
                at,
                Step {
                    fault: index,
                    applied,
                },
            ));
        };
        match fault.kind {
            MeshFaultKind::Restart => {
                push(fault.at, MeshFaultApplied::Crash { node: a });
                push(end, MeshFaultApplied::Bounce { node: a });
            }
            MeshFaultKind::Partition => {
                push(fault.at, MeshFaultApplied::Partition { a, b });
                push(end, MeshFaultApplied::Heal { a, b });
            }
            MeshFaultKind::HalfOpen => {
                push(fault.at, MeshFaultApplied::HalfOpen { from: a, to: b });
                push(end, MeshFaultApplied::HalfOpenHealed { from: a, to: b });
            }
            MeshFaultKind::Kill => push(fault.at, MeshFaultApplied::Kill { a, b }),
            MeshFaultKind::Latency => {
                // An eighth of a tick each way: slow, never silent.
                let us = (params.heartbeat / 8).as_micros() as u64;
                push(fault.at, MeshFaultApplied::Latency { a, b, us });
                push(end, MeshFaultApplied::LatencyEnd { a, b });
            }
            MeshFaultKind::Squat => push(fault.at, MeshFaultApplied::Squat { a, b }),
            MeshFaultKind::Impostor => push(fault.at, MeshFaultApplied::Impostor { a, b }),
            MeshFaultKind::Spend => {
                let us = u64::try_from(fault.lasting.as_micros()).unwrap_or(u64::MAX);
                push(fault.at, MeshFaultApplied::Spend { node: a, us });
            }
            MeshFaultKind::CrossDial => push(fault.at, MeshFaultApplied::CrossDial { a, b }),
            MeshFaultKind::Wedge => {
                push(fault.at, MeshFaultApplied::Wedge { node: a, peer: b });
                push(end, MeshFaultApplied::Unwedge { node: a, peer: b });
            }
            MeshFaultKind::Slow => {
                // A sixteenth of a tick between reads: slow, never silent.
                let every_us = (params.heartbeat / 16).as_micros() as u64;
                push(
                    fault.at,
                    MeshFaultApplied::Slow {
                        node: a,
                        peer: b,
                        every_us,
                    },
                );
                push(end, MeshFaultApplied::SlowEnd { node: a, peer: b });
            }
            MeshFaultKind::Resets => {
                push(fault.at, MeshFaultApplied::Resets { node: a });
                // The count is filled in when it ends (`apply`).
                push(end, MeshFaultApplied::ResetsEnd { node: a, reset: 0 });
            }
            MeshFaultKind::Exhaust => {
                push(fault.at, MeshFaultApplied::Exhaust { node: a });
                push(
                    end,
                    MeshFaultApplied::ExhaustEnd {
                        node: a,
                        accepts: 0,
                        dials: 0,
                    },
                );
            }
        }
    }
    // Stable: a start and an end at one instant keep their order.
    steps.sort_by_key(|(at, _)| *at);
    steps
}

fn apply(sim: &mut turmoil::Sim<'_>, shared: &Shared, fault: MeshFaultApplied) {
    let mark = |mark| shared.probe.world(mark);
    let handle = |node: u64| {
        let nodes = shared
            .nodes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        nodes[node as usize]
            .as_ref()
            .map(|handle| (Arc::clone(&handle.reads), Arc::clone(&handle.accepts)))
    };
    let accepts = |node: u64, fault: AcceptFault| {
        handle(node).map_or_else(Injected::default, |(_, accepts)| accepts.set(fault))
    };
    // An accept fault's end says what it did: the gate's counts.
    let fault = match fault {
        MeshFaultApplied::ResetsEnd { node, .. } => {
            let reset = accepts(node, AcceptFault::None).accepts;
            if reset > 0 {
                mark(WorldMark::AcceptReset);
            }
            MeshFaultApplied::ResetsEnd { node, reset }
        }
        MeshFaultApplied::ExhaustEnd { node, .. } => {
            let Injected { accepts, dials } = accepts(node, AcceptFault::None);
            if accepts > 0 {
                mark(WorldMark::AcceptExhausted);
            }
            MeshFaultApplied::ExhaustEnd {
                node,
                accepts,
                dials,
            }
        }
        other => other,
    };
    shared
        .log
        .push(sim.elapsed(), "driver", Event::MeshFault { fault });
    if sim.elapsed() < shared.params.workload {
        mark(WorldMark::FaultDuringWorkload);
    }
    let order = |node: u64, order: Order| {
        let nodes = shared
            .nodes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(handle) = &nodes[node as usize] {
            let _ = handle.orders.send(order);
        }
    };
    let gate = |node: u64| handle(node).map(|(reads, _)| reads);
    let name = node_name;
    match fault {
        MeshFaultApplied::Crash { node } => {
            mark(WorldMark::FaultRestart);
            shared.alive[node as usize].store(false, Ordering::Release);
            sim.crash(name(node).as_str());
        }
        MeshFaultApplied::Bounce { node } => {
            shared.alive[node as usize].store(true, Ordering::Release);
            sim.bounce(name(node).as_str());
        }
        MeshFaultApplied::Partition { a, b } => {
            mark(WorldMark::FaultPartition);
            sim.hold(name(a).as_str(), name(b).as_str());
        }
        MeshFaultApplied::Heal { a, b } => {
            mark(WorldMark::FaultRepair);
            sim.release(name(a).as_str(), name(b).as_str());
        }
        MeshFaultApplied::HalfOpen { from, to } => {
            mark(WorldMark::FaultHalfOpen);
            sim.partition_oneway(name(from).as_str(), name(to).as_str());
        }
        MeshFaultApplied::HalfOpenHealed { from, to } => {
            sim.repair_oneway(name(from).as_str(), name(to).as_str());
        }
        MeshFaultApplied::Kill { a, b } => {
            mark(WorldMark::FaultKill);
            order(a, Order::Kill(b));
        }
        MeshFaultApplied::Latency { a, b, us } => {
            mark(WorldMark::FaultLatency);
            sim.set_link_latency(
                name(a).as_str(),
                name(b).as_str(),
                Duration::from_micros(us),
            );
        }
        MeshFaultApplied::LatencyEnd { a, b } => {
            // Back to turmoil's default (0 to 100 ms, its global curve), not
            // a fixed zero: a link with no jitter makes two crossing dials
            // perfectly symmetric, a case no other run reaches (found as an
            // unremovable fault in a shrink).
            sim.set_link_latency(name(a).as_str(), name(b).as_str(), Duration::ZERO);
            sim.set_link_max_message_latency(
                name(a).as_str(),
                name(b).as_str(),
                TURMOIL_MAX_LATENCY,
            );
        }
        MeshFaultApplied::Squat { a, b } => {
            mark(WorldMark::FaultSquat);
            let _ = shared.squats.send((a, b));
        }
        MeshFaultApplied::Impostor { a, b } => {
            let _ = shared.impostors.send((a, b));
        }
        MeshFaultApplied::Spend { node, us } => {
            let _ = shared.spends.send((node, Duration::from_micros(us)));
        }
        MeshFaultApplied::CrossDial { a, b } => {
            mark(WorldMark::FaultCrossDial);
            order(a, Order::CrossDial(b));
            order(b, Order::CrossDial(a));
        }
        MeshFaultApplied::Wedge { node, peer } | MeshFaultApplied::Unwedge { node, peer } => {
            let wedged = matches!(fault, MeshFaultApplied::Wedge { .. });
            if wedged {
                mark(WorldMark::FaultWedge);
            }
            let remote = sim.lookup(name(peer).as_str());
            if let Some(gate) = gate(node) {
                gate.wedge(remote, wedged);
            }
        }
        MeshFaultApplied::Slow {
            node,
            peer,
            every_us,
        } => {
            mark(WorldMark::FaultSlow);
            let remote = sim.lookup(name(peer).as_str());
            if let Some(gate) = gate(node) {
                gate.slow(remote, Some(Duration::from_micros(every_us)));
            }
        }
        MeshFaultApplied::SlowEnd { node, peer } => {
            let remote = sim.lookup(name(peer).as_str());
            if let Some(gate) = gate(node) {
                gate.slow(remote, None);
            }
        }
        MeshFaultApplied::Resets { node } => {
            mark(WorldMark::FaultResets);
            let _ = accepts(node, AcceptFault::Resets);
        }
        MeshFaultApplied::Exhaust { node } => {
            mark(WorldMark::FaultExhaust);
            let _ = accepts(node, AcceptFault::Exhausted);
        }
        // Ended above, where their counts were read.
        MeshFaultApplied::ResetsEnd { .. } | MeshFaultApplied::ExhaustEnd { .. } => {}
    }
}

/// Turns one incarnation's reports into events: its generations coming
/// and going (a down wakes the keeper and breaks the links over it, the
/// maker's then the learner's), and the frames it read (a LINK is learned
/// over the generation it arrived on, an EXIT unlearns it).
struct MeshObserver {
    shared: Arc<Shared>,
    index: u64,
    incarnation: u64,
    node: Arc<OnceLock<std::sync::Weak<dyn Node>>>,
    /// One per other node: a keeper waits on it for a down.
    downs: Arc<Vec<tokio::sync::Notify>>,
    links: Links,
    learned: Links,
}

impl MeshObserver {
    fn current(&self) -> bool {
        self.shared.current(self.index, self.incarnation)
    }

    fn record(&self, event: Event) {
        self.shared.record(&node_name(self.index), event);
    }
}

impl NodeEvents for MeshObserver {
    fn up(&self, up: Up<'_>) {
        let (Some(peer), Some(socket)) =
            (node_index(up.node), dialer_of(up.local_addr, up.peer_addr))
        else {
            return;
        };
        if self.current() {
            self.record(Event::MeshUp {
                node: self.index,
                peer,
                generation: up.generation,
                origin: up.origin.into(),
                socket,
            });
        }
    }

    fn down(&self, down: Down<'_>) {
        let Some(peer) = node_index(down.node) else {
            return;
        };
        if self.current() {
            self.shared.probe.world(WorldMark::GenerationDown);
            if down.reason == DownReason::HeartbeatTimeout {
                self.shared.probe.world(WorldMark::HeartbeatDown);
            }
            self.record(Event::MeshDown {
                node: self.index,
                peer,
                generation: down.generation,
                reason: down.reason.into(),
            });
        }
        if let Some(wake) = self.downs.get(peer as usize) {
            wake.notify_one();
        }
        self.links.down(down.node, down.generation);
        self.learned.down(down.node, down.generation);
    }

    fn frame(&self, from: Generation<'_>, control: &[u8], _: &[u8]) {
        let Some(peer) = node_index(from.node) else {
            return;
        };
        if !self.current() {
            return;
        }
        let index = self.index;
        if let Some((&b'D', seq)) = control.split_first() {
            if let Ok(seq) = seq.try_into() {
                self.record(Event::MeshDataArrived {
                    node: index,
                    peer,
                    generation: from.generation,
                    seq: u64::from_be_bytes(seq),
                });
            }
            return;
        }
        let Some((msg, link)) = parse_control(control) else {
            return;
        };
        self.record(Event::MeshArrived {
            node: index,
            peer,
            generation: from.generation,
            link,
            msg,
        });
        let Some(node) = self.node.get().and_then(std::sync::Weak::upgrade) else {
            return;
        };
        let learned_link = Link {
            generation: from.generation,
            local: link,
            remote: peer,
        };
        match msg {
            LinkMsg::Link => match node.connection(from.node) {
                Some(connection) if connection.generation() == from.generation => {
                    self.learned.link(&*connection, link, peer);
                }
                // The generation it arrived on is gone already (its
                // down was in the same instant): broken at once.
                _ => self.record(Event::MeshNoConnection {
                    node: index,
                    peer,
                    generation: from.generation,
                    link,
                    side: LinkSide::Learner,
                }),
            },
            LinkMsg::Exit => {
                self.learned.unlink(from.node, &learned_link);
            }
        }
    }
}

/// One incarnation of a production node.
async fn node_main(shared: Arc<Shared>, index: u64, incarnation: u64) -> turmoil::Result {
    let p = shared.params.clone();
    shared.incarnation[index as usize].store(incarnation, Ordering::Release);
    shared.alive[index as usize].store(true, Ordering::Release);
    let host = node_name(index);
    shared.record(
        &host,
        Event::NodeStarted {
            node: index,
            incarnation,
        },
    );
    let start = tokio::time::Instant::now();
    let mut rng = SimRng::new(shared.seed).fork(&format!("{host}.{incarnation}"));

    let downs: Arc<Vec<tokio::sync::Notify>> =
        Arc::new((0..p.nodes).map(|_| tokio::sync::Notify::new()).collect());
    // After the down's record: the log shows a down before its
    // noconnections.
    let broken = |side: LinkSide| {
        let shared = Arc::clone(&shared);
        move |node: &str, link: Link| {
            if !shared.current(index, incarnation) {
                return;
            }
            shared.record(
                &node_name(index),
                Event::MeshNoConnection {
                    node: index,
                    peer: node_index(node).unwrap_or(u64::MAX),
                    generation: link.generation,
                    link: link.local,
                    side,
                },
            );
        }
    };
    let links = Links::new(broken(LinkSide::Maker));
    let learned = Links::new(broken(LinkSide::Learner));
    // The frame report needs the node, which exists only after it starts.
    let cell: Arc<OnceLock<std::sync::Weak<dyn Node>>> = Arc::new(OnceLock::new());
    let observer = MeshObserver {
        shared: Arc::clone(&shared),
        index,
        incarnation,
        node: Arc::clone(&cell),
        downs: Arc::clone(&downs),
        links: links.clone(),
        learned: learned.clone(),
    };
    let gate = Arc::new(ReadGate::default());
    let accepts = Arc::new(AcceptGate::default());
    let transport = Arc::new(TurmoilTcp {
        mss: MSS,
        tap: None,
        gate: Some(Arc::clone(&gate)),
        accepts: Some(Arc::clone(&accepts)),
    });
    let target = shared
        .subject
        .node()
        .expect("checked before the run: the target has a node");
    let node: Arc<dyn Node> = Arc::from(
        target
            .start(NodeSetup {
                name: host.clone(),
                transport: transport.clone(),
                runtime: Runtime::World(tokio::runtime::Handle::current()),
                connect_timeout: p.connect_timeout,
                write_timeout: p.heartbeat * 2,
                heartbeat: Some(p.heartbeat),
                max_frame: MAX_FRAME,
                frame_budget: FRAME_BUDGET,
                // Past the heartbeat: a stream gone silent is the
                // heartbeat's (M5), a frame trickling in is this deadline's.
                frame_timeout: Some(p.heartbeat * 2),
                data_capacity: DATA_CAPACITY,
                control_capacity: CONTROL_CAPACITY,
                reports: NodeReports::new(Arc::new(observer)),
                cookie: COOKIE.to_vec(),
                nonces: Arc::new(handshake::nonces(
                    shared.seed,
                    &format!("{host}.{incarnation}"),
                )),
            })
            .map_err(|error| format!("the node target could not start: {error}"))?,
    );
    let _ = cell.set(Arc::downgrade(&node));

    let listener = transport.bind(&format!("0.0.0.0:{PORT}")).await?;
    node.serve(listener);
    let (orders_tx, mut orders) = mpsc::unbounded_channel();
    shared
        .nodes
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)[index as usize] = Some(NodeHandle {
        node: Arc::downgrade(&node),
        orders: orders_tx,
        reads: gate,
        accepts,
    });

    let dial = {
        let node = Arc::clone(&node);
        move |peer: u64| {
            let node = Arc::clone(&node);
            async move {
                let name = node_name(peer);
                node.dial(&name, &format!("{name}:{PORT}")).await.ok()
            }
        }
    };

    // Keepers: every pair dialed on its schedule; after a down, redialed
    // `redial_after` later until a live generation exists. Both ends of a
    // pair whose connection broke wait the same time, so their redials
    // cross: what the tie-break must settle (a periodic poll would let
    // them drift apart and hide a missing tie-break).
    for peer in (0..p.nodes).filter(|&peer| peer != index) {
        let (shared, dial, live) = (Arc::clone(&shared), dial.clone(), Arc::clone(&node));
        let downs = Arc::clone(&downs);
        let first = p.first_dials[index as usize][peer as usize];
        let simultaneous = first == p.first_dials[peer as usize][index as usize];
        let redial = p.redial_after;
        tokio::spawn(async move {
            tokio::time::sleep_until(start + first).await;
            if simultaneous && index < peer && incarnation == 0 {
                shared.probe.world(WorldMark::SimultaneousFirstDial);
                shared.record(
                    &node_name(index),
                    Event::MeshDialedTogether { a: index, b: peer },
                );
            }
            let name = node_name(peer);
            let mut redialing = false;
            loop {
                if live.connection(&name).is_none() {
                    let dialed = dial(peer).await.is_some();
                    if redialing {
                        shared.probe.world(if dialed {
                            WorldMark::RedialOk
                        } else {
                            WorldMark::RedialFailed
                        });
                    }
                    if !dialed {
                        tokio::time::sleep(redial).await;
                        redialing = true;
                        continue;
                    }
                }
                downs[peer as usize].notified().await;
                tokio::time::sleep(redial).await;
                redialing = true;
            }
        });
    }

    // The driver's orders.
    {
        let (dial, live) = (dial.clone(), Arc::clone(&node));
        tokio::spawn(async move {
            while let Some(order) = orders.recv().await {
                match order {
                    Order::Kill(peer) => {
                        live.disconnect(&node_name(peer));
                    }
                    Order::CrossDial(peer) => {
                        live.disconnect(&node_name(peer));
                        tokio::spawn(dial(peer));
                    }
                }
            }
        });
    }

    // Data frames at their times over the window, numbered per node and
    // incarnation (the incarnation in the high bits), to random peers.
    {
        let mut times: Vec<(Duration, u64)> = (0..p.data)
            .map(|_| {
                let at = Duration::from_micros(rng.range(0, p.workload.as_micros() as u64));
                (at, (index + rng.range(1, p.nodes - 1)) % p.nodes)
            })
            .collect();
        times.sort();
        let (shared, sender) = (Arc::clone(&shared), Arc::clone(&node));
        let elapsed = turmoil::sim_elapsed().unwrap_or_default();
        tokio::spawn(async move {
            for (counter, (at, peer)) in times.into_iter().enumerate() {
                if at < elapsed {
                    continue;
                }
                tokio::time::sleep_until(start + (at - elapsed)).await;
                let seq = (incarnation << 32) | counter as u64;
                let outcome = sender.enqueue(&node_name(peer), data_frame(seq));
                shared.record(
                    &node_name(index),
                    Event::MeshDataSent {
                        node: index,
                        peer,
                        seq,
                        outcome: outcome.into(),
                    },
                );
            }
        });
    }

    // The workload: links made at their times (those of the window that
    // are still ahead, for a restarted incarnation), each ended `hold`
    // later by an EXIT pinned to its generation.
    let mut times: Vec<(Duration, u64)> = (0..p.links)
        .map(|_| {
            let at = Duration::from_micros(rng.range(0, p.workload.as_micros() as u64));
            let peer = (index + rng.range(1, p.nodes - 1)) % p.nodes;
            (at, peer)
        })
        .collect();
    times.sort();
    let elapsed = turmoil::sim_elapsed().unwrap_or_default();
    for (counter, (at, peer)) in times.into_iter().enumerate() {
        if at < elapsed {
            continue;
        }
        tokio::time::sleep_until(start + (at - elapsed)).await;
        let connection = match node.connection(&node_name(peer)) {
            Some(connection) => connection,
            None => match dial(peer).await {
                Some(connection) => connection,
                None => continue,
            },
        };
        let link = link_id(index, incarnation, counter as u64);
        make_link(&shared, index, &links, &*node, &connection, peer, link);
        let hold = Duration::from_micros(
            rng.range(p.hold.0.as_micros() as u64, p.hold.1.as_micros() as u64),
        );
        let (shared, sender) = (Arc::clone(&shared), Arc::clone(&node));
        tokio::spawn(async move {
            tokio::time::sleep(hold).await;
            offer(
                &shared,
                index,
                &*sender,
                &connection,
                peer,
                link,
                LinkMsg::Exit,
            );
        });
    }
    std::future::pending::<()>().await;
    Ok(())
}

/// Records a link over `connection` and sends its LINK.
fn make_link(
    shared: &Shared,
    index: u64,
    links: &Links,
    sender: &dyn Node,
    connection: &Conn,
    peer: u64,
    link: u64,
) {
    shared.record(
        &node_name(index),
        Event::MeshLinked {
            node: index,
            peer,
            generation: connection.generation(),
            link,
        },
    );
    if links.link(&**connection, link, peer).is_none() {
        shared.probe.world(WorldMark::LinkOverDownGeneration);
        return;
    }
    offer(shared, index, sender, connection, peer, link, LinkMsg::Link);
}

/// Offers a link's control, pinned to `connection`.
fn offer(
    shared: &Shared,
    index: u64,
    sender: &dyn Node,
    connection: &Conn,
    peer: u64,
    link: u64,
    msg: LinkMsg,
) {
    let outcome = sender.enqueue_control(connection, control(msg, link));
    shared.record(
        &node_name(index),
        Event::MeshControl {
            node: index,
            peer,
            generation: connection.generation(),
            link,
            msg,
            outcome: outcome.into(),
        },
    );
}

/// The squatter: on each order, dials a node, runs the handshake under
/// another node's name with the cookie, and then only reads (so the node's writes never block it
/// out) and never writes: a silent squatter.
async fn squatter_main(shared: Arc<Shared>) -> turmoil::Result {
    let Some(mut orders) = shared
        .squat_orders
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
    else {
        return Ok(());
    };
    let nonces = handshake::nonces(shared.seed, SQUATTER);
    while let Some((target, claimed)) = orders.recv().await {
        let shared = Arc::clone(&shared);
        let nonce = nonces.next();
        tokio::spawn(async move {
            let Ok(mut stream) =
                turmoil::net::TcpStream::connect(format!("{}:{PORT}", node_name(target))).await
            else {
                return;
            };
            let claimed_name = node_name(claimed);
            if handshake::dial(&mut stream, &claimed_name, COOKIE, nonce)
                .await
                .is_err()
            {
                return;
            }
            if let Ok(socket) = stream.local_addr() {
                shared.record(
                    SQUATTER,
                    Event::MeshSquat {
                        node: target,
                        claimed,
                        socket,
                    },
                );
            }
            let mut sink = [0u8; 1024];
            while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
        });
    }
    Ok(())
}

/// The impostor: on each order, dials a node four times under another
/// node's name, without the cookie: proving another cookie, reflecting the
/// node's own proof, sending an empty proof, and replaying the first
/// stream's hello with the proof an honest dialer would have made for it
/// (as an eavesdropper would have recorded it). On each it
/// then reads what the node sends and writes a keepalive every quarter tick
/// (as a node would, so a node that registered it wrongly keeps it), until
/// the node closes the stream or two ticks have passed. Logs `MeshImpostor`
/// as each ends: a correct node closes each at once, with nothing written
/// after its challenge (M8).
async fn impostor_main(shared: Arc<Shared>) -> turmoil::Result {
    let Some(mut orders) = shared
        .impostor_orders
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
    else {
        return Ok(());
    };
    let nonces = Arc::new(handshake::nonces(shared.seed, IMPOSTOR));
    while let Some((target, claimed)) = orders.recv().await {
        let (shared, nonces) = (Arc::clone(&shared), Arc::clone(&nonces));
        tokio::spawn(async move {
            let mut recorded = None;
            for attack in [
                Attack::WrongCookie,
                Attack::Reflect,
                Attack::Empty,
                Attack::Replay,
            ] {
                let attack = match (attack, recorded) {
                    (Attack::Replay, Some((dialer_nonce, acceptor_nonce))) => {
                        handshake::Attack::Replay {
                            dialer_nonce,
                            acceptor_nonce,
                        }
                    }
                    (Attack::Replay, None) => continue,
                    (Attack::Reflect, _) => handshake::Attack::Reflect,
                    (Attack::Empty, _) => handshake::Attack::Empty,
                    (Attack::WrongCookie, _) => handshake::Attack::WrongCookie,
                };
                let nonce = nonces.next();
                if let Some(seen) = impostor_stream(&shared, target, claimed, attack, nonce).await {
                    recorded.get_or_insert(seen);
                }
            }
        });
    }
    Ok(())
}

/// The impostor's attacks, in the order it tries them.
#[derive(Clone, Copy)]
enum Attack {
    WrongCookie,
    Reflect,
    Empty,
    Replay,
}

/// One impostor stream: its dialer and acceptor nonces, if it got a
/// challenge.
async fn impostor_stream(
    shared: &Arc<Shared>,
    target: u64,
    claimed: u64,
    attack: handshake::Attack,
    nonce: lanesim_target::handshake::Nonce,
) -> Option<(
    lanesim_target::handshake::Nonce,
    lanesim_target::handshake::Nonce,
)> {
    let mut stream = turmoil::net::TcpStream::connect(format!("{}:{PORT}", node_name(target)))
        .await
        .ok()?;
    let socket = stream.local_addr().ok()?;
    // Fails when the node closed it before its challenge.
    let seen = handshake::impersonate(&mut stream, &node_name(claimed), attack, nonce)
        .await
        .ok()?;
    shared.probe.world(WorldMark::FaultImpostor);
    let p = &shared.params;
    let until = tokio::time::Instant::now() + p.heartbeat * 2;
    let mut keepalives = tokio::time::interval(p.heartbeat / 4);
    let (mut read, mut closed) = (0_u64, false);
    let mut sink = [0u8; 1024];
    loop {
        tokio::select! {
            biased;
            () = tokio::time::sleep_until(until) => break,
            got = stream.read(&mut sink) => match got {
                Ok(n) if n > 0 => read += n as u64,
                _ => {
                    closed = true;
                    break;
                }
            },
            _ = keepalives.tick() => {
                if stream.write_all(&lanesim_target::wire::KEEPALIVE).await.is_err() {
                    closed = true;
                    break;
                }
            }
        }
    }
    if closed && read == 0 {
        shared.probe.world(WorldMark::ImpostorRefused);
    }
    shared.record(
        IMPOSTOR,
        Event::MeshImpostor {
            node: target,
            claimed,
            socket,
            read,
            closed,
        },
    );
    Some(seen)
}

/// The spender: on each order, opens [`SPENDERS`] streams to a node, each
/// proving the cookie under a name of its own (`spender0`, ...), and on
/// each writes a header for a frame of [`MAX_FRAME`] bytes and all of its
/// body but the last byte; holds them for the order's time and closes
/// them. Together they are more than the node's budget: a node that
/// refuses whoever asks last refuses an honest node's small frame meanwhile
/// (M9). Marks `fault_applied_spend` once every stream proved the cookie
/// and wrote what the node would read of its frame.
async fn spender_main(shared: Arc<Shared>) -> turmoil::Result {
    let Some(mut orders) = shared
        .spend_orders
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
    else {
        return Ok(());
    };
    let nonces = Arc::new(handshake::nonces(shared.seed, SPENDER));
    while let Some((target, lasting)) = orders.recv().await {
        let mut streams = tokio::task::JoinSet::new();
        for index in 0..SPENDERS {
            let nonce = nonces.next();
            streams.spawn(async move {
                let mut stream =
                    turmoil::net::TcpStream::connect(format!("{}:{PORT}", node_name(target)))
                        .await
                        .ok()?;
                let name = format!("spender{index}");
                let proved = handshake::dial(&mut stream, &name, COOKIE, nonce).await;
                (proved.ok()? == handshake::Dialed::Proved).then_some(())?;
                let body = usize::try_from(MAX_FRAME).expect("64 KiB");
                let mut frame = 0_u32.to_be_bytes().to_vec();
                frame.extend_from_slice(&u32::try_from(body).expect("64 KiB").to_be_bytes());
                frame.resize(frame.len() + body - 1, 0x5a);
                // A node refuses some spenders part-way: their writes fail.
                let _ = stream.write_all(&frame).await;
                Some(stream)
            });
        }
        let mut held = Vec::new();
        while let Some(done) = streams.join_next().await {
            if let Ok(Some(stream)) = done {
                held.push(stream);
            }
        }
        if held.len() as u64 == SPENDERS {
            shared.probe.world(WorldMark::FaultSpend);
        }
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            tokio::time::sleep(lasting).await;
            drop(held);
            drop(shared);
        });
    }
    Ok(())
}

/// The prober: 1 s ([`ACCEPT_RECOVERY`]) after each accept fault ends, it
/// probes that node (unless another fault on the node, a restart or an
/// accept fault, falls within the probe: it would have its own say), and
/// from [`MeshParams::probe_span`] before the end it probes every node. A
/// probe dials, runs the handshake as `prober`, and waits for the node to write
/// anything (a keepalive, sent when it registers the stream); a dial
/// refused, reset, or answered by nothing is tried again until the span is
/// over. Each probe logs one `MeshProbe`, unless its node crashed or
/// restarted meanwhile. Every node is up at the end: faults end a settle
/// time before it.
async fn prober_main(shared: Arc<Shared>) -> turmoil::Result {
    let p = shared.params.clone();
    let end = p.end();
    let span = p.probe_span();
    let nonces = Arc::new(handshake::nonces(shared.seed, PROBER));
    let mut probes = tokio::task::JoinSet::new();
    for fault in p.faults.iter().filter(|f| f.kind.on_accepts()) {
        let from = fault.at + fault.lasting + ACCEPT_RECOVERY;
        let until = from + span;
        let disturbed = p.faults.iter().any(|other| {
            !std::ptr::eq(other, fault)
                && other.a == fault.a
                && (other.kind.on_accepts() || other.kind == MeshFaultKind::Restart)
                && other.at <= until
                && other.at + other.lasting >= fault.at
        });
        if disturbed || until + span >= end {
            continue;
        }
        probes.spawn(probe(
            Arc::clone(&shared),
            Arc::clone(&nonces),
            fault.a,
            from,
            until,
        ));
    }
    // Before the driver logs the tables at the end.
    let until = end.saturating_sub(p.tick * 4);
    for node in 0..p.nodes {
        probes.spawn(probe(
            Arc::clone(&shared),
            Arc::clone(&nonces),
            node,
            end.saturating_sub(span),
            until,
        ));
    }
    while probes.join_next().await.is_some() {}
    std::future::pending::<()>().await;
    Ok(())
}

/// One probe of `node` from `from` to `until`, logged when it ends (not
/// when the node's incarnation changed while it ran).
async fn probe(
    shared: Arc<Shared>,
    nonces: Arc<SeededNonces>,
    node: u64,
    from: Duration,
    until: Duration,
) {
    let p = &shared.params;
    let now = turmoil::sim_elapsed().unwrap_or_default();
    tokio::time::sleep(from.saturating_sub(now)).await;
    let incarnation = shared.incarnation[node as usize].load(Ordering::Acquire);
    let mut attempts = 0;
    let accepted = loop {
        attempts += 1;
        let left = until.saturating_sub(turmoil::sim_elapsed().unwrap_or_default());
        let wait = (p.heartbeat + TURMOIL_MAX_LATENCY * 2).min(left);
        let attempt = async {
            let mut stream =
                turmoil::net::TcpStream::connect(format!("{}:{PORT}", node_name(node)))
                    .await
                    .ok()?;
            let proved = handshake::dial(&mut stream, PROBER, COOKIE, nonces.next()).await;
            (proved.ok()? == handshake::Dialed::Proved).then_some(())?;
            let mut byte = [0u8; 1];
            matches!(stream.read(&mut byte).await, Ok(n) if n > 0).then_some(())
        };
        let accepted = tokio::time::timeout(wait, attempt)
            .await
            .ok()
            .flatten()
            .is_some();
        let pause = Duration::from_millis(100);
        if accepted || turmoil::sim_elapsed().unwrap_or_default() + pause >= until {
            break accepted;
        }
        tokio::time::sleep(pause).await;
    };
    if shared.current(node, incarnation) {
        shared.record(
            PROBER,
            Event::MeshProbe {
                node,
                accepted,
                attempts,
            },
        );
    }
}
