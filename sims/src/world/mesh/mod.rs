//! The mesh world: N production nodes (2 to 64) on turmoil hosts, every one
//! a `ConnectionManager` + `DistSender` + a `LinkTable` that dials every
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
//! an impostor (the same without the cookie: it must never get in), a
//! spender (frames left unfinished to spend a node's frame budget, or one
//! trickled slower than its frame deadline), cross-dial (two nodes drop
//! their connection and redial each other in the same instant), a wedged
//! or slow reader, faults on a node's accepts (resets before accept,
//! descriptors exhausted), and a misdial (a node dials another at an
//! address where a third node, or a stranger without the cookie, answers).
//!
//! The run ends at `MeshParams::end`: the workload and the faults are over
//! and a settle time has passed, and the driver logs each live node's
//! table (M1 compares the two ends of each pair). A crashed incarnation
//! logs nothing from the moment of its crash: what tearing a host down
//! does is not something the node did.
//!
//! Start here: [`run`] builds the world and drives it; `node` is one
//! production node and its observer; `intruders` are the hosts that are
//! not nodes and dial them (squatter, impostor, spender), `flooder` those
//! that open half-open handshakes by the hundred; `stranger` is the
//! one that answers (misdials); `prober` checks that nodes still accept
//! (M7).

mod flooder;
mod intruders;
mod listen;
mod node;
mod prober;
mod stranger;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_target::node::Node;
use lanesim_target::wire::encode;
use tokio::sync::mpsc;

use super::net::{AcceptFault, AcceptGate, Injected, ReadGate};
use super::WorldRun;
use crate::coverage::{self, PreemptPolicy, WorldMark, WorldProbe};
use crate::event::{Event, EventLog, LinkMsg, LinkSide, MeshFaultApplied};
use crate::explore::{self, WorldExplorer};
use crate::scenario::{MeshFaultKind, MeshParams, MisdialBy};
use crate::targets::Subject;

/// Every node listens here.
const PORT: u16 = 9000;
/// The squatter's host.
const SQUATTER: &str = "squatter";
/// The impostor's host.
const IMPOSTOR: &str = "impostor";
/// The insider's host (it holds the cookie and claims live nodes' names).
const INSIDER: &str = "insider";
/// The first flooder's host (one address each; the others are
/// `flooder1`, `flooder2`, ...).
const FLOODER: &str = "flooder";
/// The stranger's host: it listens, without the cookie, for misdials.
const STRANGER: &str = "stranger";
/// The flooders' streams at once, shared among them: more than the
/// default 256 handshake places, so a node that lets one address take
/// them all is full.
const FLOOD_STREAMS: u64 = 320;
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
const MAX_FRAME: u64 = crate::scenario::MESH_MAX_FRAME;
/// Each node's budget for partly read frames: four of the largest, so a
/// few spenders (the `spend` fault) can contend for it.
pub(crate) const FRAME_BUDGET: u64 = 4 * MAX_FRAME;
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

/// Dials node `index` from a host that is not a node (an intruder, a
/// flooder, the prober): the one way they reach a node's listener.
async fn dial_node(index: u64) -> std::io::Result<turmoil::net::TcpStream> {
    turmoil::net::TcpStream::connect(format!("{}:{PORT}", node_name(index))).await
}

/// The hosts a run floods from: as many as its widest flood (none without
/// one).
fn flooders(params: &MeshParams) -> u64 {
    params
        .faults
        .iter()
        .filter(|f| f.kind == MeshFaultKind::Flood)
        .map(|f| f.hosts.max(1))
        .max()
        .unwrap_or(0)
}

/// Flooder `index`'s host name: `flooder`, then `flooder1`, ...
fn flooder_name(index: u64) -> String {
    if index == 0 {
        FLOODER.to_string()
    } else {
        format!("{FLOODER}{index}")
    }
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

/// Which end of `link` node `index` is: a link's id names its maker
/// ([`link_id`]), which tells the two ends apart when both share the
/// target's link table.
fn link_side(index: u64, link: &lanesim_target::node::Link) -> LinkSide {
    if link.local >> 48 == index {
        LinkSide::Maker
    } else {
        LinkSide::Learner
    }
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
#[derive(Clone, Debug)]
enum Order {
    /// Disconnect the live generation to this node.
    Kill(u64),
    /// Disconnect it, and dial it again at once.
    CrossDial(u64),
    /// Disconnect `peer`, and dial its name at `host`, where `answerer`
    /// answers (`None`: the stranger).
    Misdial {
        peer: u64,
        host: String,
        answerer: Option<u64>,
    },
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
    /// Per (node, peer): when its keeper last began a dial, so two that
    /// begin in one instant are logged as a simultaneous connect (M1).
    dials: Mutex<std::collections::BTreeMap<(u64, u64), Duration>>,
    /// Where squat orders go: (target, claimed name).
    squats: Orders<(u64, u64)>,
    /// Where impostor orders go: (target, claimed name).
    impostors: Orders<(u64, u64)>,
    /// Where the insider's orders go: (target, claimed name).
    claims: Orders<(u64, u64)>,
    /// Where the spender's orders go.
    spends: Orders<intruders::Spend>,
    /// Where each flooder's orders go.
    floods: Vec<Orders<flooder::FloodOrder>>,
    /// Per node told to misdial to the stranger: the node it dials (the
    /// name the stranger answers it under).
    misdials: Mutex<std::collections::BTreeMap<u64, u64>>,
    /// Per node the stranger challenged: the name it answered under (the
    /// misdial's reach mark asks that it was the name dialed).
    challenged: Mutex<std::collections::BTreeMap<u64, u64>>,
}

/// Orders from the driver to a host, made before the first step, so an
/// order at time zero waits for the host to start and take them.
struct Orders<T> {
    to: mpsc::UnboundedSender<T>,
    from: Mutex<Option<mpsc::UnboundedReceiver<T>>>,
}

impl<T> Orders<T> {
    fn new() -> Self {
        let (to, from) = mpsc::unbounded_channel();
        Self {
            to,
            from: Mutex::new(Some(from)),
        }
    }

    fn send(&self, order: T) {
        // The host takes its orders for its whole life: a send fails only
        // when no host of this kind was made, and then nothing obeys.
        let _ = self.to.send(order);
    }

    /// The orders, for the one host that obeys them (`None` after).
    fn take(&self) -> Option<mpsc::UnboundedReceiver<T>> {
        self.from
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }
}

impl Shared {
    fn record(&self, host: &str, event: Event) {
        self.log
            .push(turmoil::sim_elapsed().unwrap_or_default(), host, event);
    }

    /// A keeper of `node` begins a dial of `peer` now: logs
    /// `MeshDialedTogether` when `peer`'s keeper began one of `node` in
    /// this same instant (redials that cross after both timed out, or
    /// after both saw a down), unless `logged` (the first dials' own).
    fn dialing(&self, node: u64, peer: u64, logged: bool) {
        let now = turmoil::sim_elapsed().unwrap_or_default();
        let mut dials = self
            .dials
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        dials.insert((node, peer), now);
        if !logged && dials.get(&(peer, node)) == Some(&now) {
            self.record(
                &node_name(node.min(peer)),
                Event::MeshDialedTogether {
                    a: node.min(peer),
                    b: node.max(peer),
                },
            );
        }
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
/// (`prober::main`, for M7).
pub fn run(params: &MeshParams, seed: u64, budget: Duration, subject: &Subject) -> WorldRun {
    let probe = Arc::new(WorldProbe::new(seed, PreemptPolicy::default()));
    let installed = coverage::install(&probe);
    let explorer = Arc::new(WorldExplorer::new(seed, params.explore, Arc::clone(&probe)));
    let explored = explore::install(&explorer);
    let n = params.nodes as usize;
    let shared = Arc::new(Shared {
        log: EventLog::default(),
        probe: Arc::clone(&probe),
        params: params.clone(),
        seed,
        subject: subject.clone(),
        incarnation: (0..n).map(|_| AtomicU64::new(0)).collect(),
        alive: (0..n).map(|_| AtomicBool::new(true)).collect(),
        nodes: Mutex::new((0..n).map(|_| None).collect()),
        dials: Mutex::new(std::collections::BTreeMap::new()),
        squats: Orders::new(),
        impostors: Orders::new(),
        claims: Orders::new(),
        spends: Orders::new(),
        floods: (0..flooders(params)).map(|_| Orders::new()).collect(),
        misdials: Mutex::new(std::collections::BTreeMap::new()),
        challenged: Mutex::new(std::collections::BTreeMap::new()),
    });
    explorer.log_holds(shared.log.clone(), || {
        turmoil::sim_elapsed().unwrap_or_default()
    });
    probe.fired().watch(shared.log.clone(), || {
        turmoil::sim_elapsed().unwrap_or_default()
    });
    let end = params.end();
    let mut sim = turmoil::Builder::new()
        .simulation_duration(budget + Duration::from_secs(3600))
        .tick_duration(params.tick)
        // turmoil's segment credit is also each listener's backlog, and
        // more unaccepted connects than it panics: every other node may dial
        // a node at once, twice in a cross-dial (64 up to 32 nodes, as
        // always).
        // A flood's streams, reopened at once, can all wait in one
        // backlog (after the node's restart, say): room for all of them.
        .tcp_capacity(
            usize::try_from(params.nodes * 2)
                .unwrap_or(usize::MAX)
                .max(64)
                .max(
                    if params.faults.iter().any(|f| f.kind == MeshFaultKind::Flood) {
                        usize::try_from(FLOOD_STREAMS * 2).unwrap_or(usize::MAX)
                    } else {
                        0
                    },
                ),
        )
        .rng_seed(seed)
        .build();
    let starts = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect::<Vec<_>>());
    for index in 0..params.nodes {
        let (shared, starts) = (Arc::clone(&shared), Arc::clone(&starts));
        sim.host(node_name(index), move || {
            let incarnation = starts[index as usize].fetch_add(1, Ordering::AcqRel);
            node::main(Arc::clone(&shared), index, incarnation)
        });
    }
    if params.faults.iter().any(|f| f.kind == MeshFaultKind::Squat) {
        let shared = Arc::clone(&shared);
        sim.host(SQUATTER, move || intruders::squatter(Arc::clone(&shared)));
    }
    if params.faults.iter().any(|f| f.kind == MeshFaultKind::Claim) {
        let shared = Arc::clone(&shared);
        sim.host(INSIDER, move || intruders::insider(Arc::clone(&shared)));
    }
    if params
        .faults
        .iter()
        .any(|f| f.kind == MeshFaultKind::Impostor)
    {
        let shared = Arc::clone(&shared);
        sim.host(IMPOSTOR, move || intruders::impostor(Arc::clone(&shared)));
    }
    if params
        .faults
        .iter()
        .any(|f| matches!(f.kind, MeshFaultKind::Spend | MeshFaultKind::Trickle))
    {
        let shared = Arc::clone(&shared);
        sim.host(SPENDER, move || intruders::spender(Arc::clone(&shared)));
    }
    for flooder in 0..flooders(params) {
        let shared = Arc::clone(&shared);
        sim.host(flooder_name(flooder), move || {
            flooder::main(Arc::clone(&shared), flooder)
        });
    }
    if params
        .faults
        .iter()
        .any(|f| f.kind == MeshFaultKind::Misdial && f.by == Some(MisdialBy::Stranger))
    {
        let shared = Arc::clone(&shared);
        sim.host(STRANGER, move || stranger::main(Arc::clone(&shared)));
    }
    if params.probes_accepts() {
        let shared = Arc::clone(&shared);
        sim.host(PROBER, move || prober::main(Arc::clone(&shared)));
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
    drop(explored);
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
        | MeshFaultApplied::Claim { .. }
        | MeshFaultApplied::Impostor { .. }
        | MeshFaultApplied::Spend { .. }
        | MeshFaultApplied::Flood { .. }
        | MeshFaultApplied::Trickle { .. }
        | MeshFaultApplied::CrossDial { .. }
        | MeshFaultApplied::Misdial { .. } => None,
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
            MeshFaultKind::Claim => push(fault.at, MeshFaultApplied::Claim { a, b }),
            MeshFaultKind::Impostor => push(fault.at, MeshFaultApplied::Impostor { a, b }),
            MeshFaultKind::Spend => {
                let us = u64::try_from(fault.lasting.as_micros()).unwrap_or(u64::MAX);
                let before_hello = fault.before_hello;
                push(
                    fault.at,
                    MeshFaultApplied::Spend {
                        node: a,
                        us,
                        before_hello,
                    },
                );
            }
            MeshFaultKind::Flood => {
                let us = u64::try_from(fault.lasting.as_micros()).unwrap_or(u64::MAX);
                let (hosts, hello) = (fault.hosts, fault.hello);
                push(
                    fault.at,
                    MeshFaultApplied::Flood {
                        node: a,
                        us,
                        hosts,
                        hello,
                    },
                );
            }
            MeshFaultKind::Trickle => {
                let us = u64::try_from(fault.lasting.as_micros()).unwrap_or(u64::MAX);
                let node_frame = fault.node_frame;
                let frame = fault.frame.unwrap_or(if node_frame {
                    u64::from(lanesim_target::wire::MAX_NODE_FRAME)
                } else {
                    MAX_FRAME
                });
                push(
                    fault.at,
                    MeshFaultApplied::Trickle {
                        node: a,
                        us,
                        frame,
                        node_frame,
                    },
                );
            }
            MeshFaultKind::CrossDial => push(fault.at, MeshFaultApplied::CrossDial { a, b }),
            MeshFaultKind::Misdial => {
                let answerer = fault.by.and_then(|by| by.answerer(a, b, params.nodes));
                push(fault.at, MeshFaultApplied::Misdial { a, b, answerer });
            }
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
            shared.squats.send((a, b));
        }
        MeshFaultApplied::Impostor { a, b } => {
            shared.impostors.send((a, b));
        }
        MeshFaultApplied::Claim { a, b } => {
            mark(WorldMark::FaultClaim);
            if a == b {
                mark(WorldMark::FaultClaimOwnName);
            }
            shared.claims.send((a, b));
        }
        MeshFaultApplied::Spend {
            node,
            us,
            before_hello,
        } => {
            shared.spends.send(intruders::Spend::Hold {
                node,
                lasting: Duration::from_micros(us),
                before_hello,
            });
        }
        MeshFaultApplied::Flood {
            node,
            us,
            hosts,
            hello,
        } => {
            mark(WorldMark::FaultFlood);
            if hosts > 1 {
                mark(WorldMark::FaultFloodManyAddresses);
            }
            if hello {
                mark(WorldMark::FaultFloodHello);
            }
            for flooder in shared.floods.iter().take(hosts as usize) {
                flooder.send(flooder::FloodOrder {
                    node,
                    lasting: Duration::from_micros(us),
                    streams: FLOOD_STREAMS / hosts,
                    hello,
                });
            }
        }
        MeshFaultApplied::Trickle {
            node,
            us,
            frame,
            node_frame,
        } => {
            shared.spends.send(intruders::Spend::Trickle {
                node,
                lasting: Duration::from_micros(us),
                frame,
                node_frame,
            });
        }
        MeshFaultApplied::CrossDial { a, b } => {
            mark(WorldMark::FaultCrossDial);
            order(a, Order::CrossDial(b));
            order(b, Order::CrossDial(a));
        }
        MeshFaultApplied::Misdial { a, b, answerer } => {
            mark(WorldMark::FaultMisdial);
            let host = match answerer {
                Some(c) => name(c),
                None => {
                    shared
                        .misdials
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .insert(a, b);
                    STRANGER.to_string()
                }
            };
            order(
                a,
                Order::Misdial {
                    peer: b,
                    host,
                    answerer,
                },
            );
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
