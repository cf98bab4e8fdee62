//! The sender world: the production `ConnectionManager` + `DistSender` on a
//! turmoil host ("local"), peers on other hosts that log every frame they
//! read (`peer`), and a driver that steps the simulation and injects faults.
//!
//! Model. The local node dials every peer, makes links over the generations
//! it has, enqueues data frames and one EXIT control per link (pinned to the
//! generation the link was made over), and keeps every peer connected: a
//! keeper per peer redials after each down, and the workload dials on
//! demand when it wants a link to a peer it has no connection to, so two
//! dials of one node can race. Sometimes it links over a connection it
//! held from earlier, which may be down by then. It may shut the sender
//! down mid-run (`shutdown_at`) and go on enqueueing. Every frame carries a
//! tag (lane, pinned generation, sequence, link), so the log says exactly
//! what reached which socket (the transport's write tap), what arrived
//! (the peers), and what the drain did (the sender's observer).
//!
//! The log ends at `RunEnd`: what tearing the simulation down does (the
//! drain's drop marking connections down) is not part of the run, and the
//! probe stops counting marks there too.
//!
//! The local node says which step of its run it is in ([`EndStep`]), and
//! lends the driver a weak handle on its sender and manager, so a run whose
//! budget runs out reports where it was and what the sender still counted
//! as queued ([`Stuck`]), read before anything is torn down.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use lanesim_target::net::Transport;
use lanesim_target::node::{
    Conn, Connection, Down, DownReason, Generation, Node, NodeEvents, NodeReports, NodeSetup,
    Runtime, SenderLane, Up, WriteOutcome,
};
use tokio::sync::{mpsc, Notify};

use super::links::Links;
use super::net::{PortMap, RealTcp, Tapped, TurmoilTcp, WriteTap};
use super::peer::{peer_main, peer_name, real_peer_main, PeerWorld, MAX_INBOUND, PORT};
use super::tag::{frame_len, Tag};
use super::{EndStep, RealClock, Stuck, WorldRun};
use crate::coverage::{self, WorldMark, WorldProbe};
use crate::event::{ControlOutcome, DataOutcome, Event, EventLog, Lane};
use crate::fault::{timeline, Action, PeerControl};
use crate::rng::SimRng;
use crate::scenario::{FaultKind, SenderParams};
use crate::targets::Subject;

const LOCAL: &str = "local";
/// Chance that a link is made over the connection the workload last held
/// for that peer rather than the one the manager hands out now (which may
/// be a newer generation, or none, while the held one is down).
const STALE_LINK: f64 = 0.15;

/// Where the log's times come from.
enum Clock {
    /// turmoil's virtual time.
    Sim,
    /// Real mode ([`RealClock`]).
    Real(RealClock),
}

impl Clock {
    fn now(&self) -> Duration {
        match self {
            Self::Sim => turmoil::sim_elapsed().unwrap_or_default(),
            Self::Real(real) => real.now(),
        }
    }

    /// `d` of the world's own time (wall time in real mode) in the log's
    /// units.
    fn in_log(&self, d: Duration) -> Duration {
        match self {
            Self::Sim => d,
            Self::Real(real) => d.div_f64(real.scale),
        }
    }

    /// How much longer to wait for `quiet` (virtual time in simulation,
    /// wall time in real mode, where the end's quiet is not scaled) to
    /// have passed since the log time `last`.
    fn until_quiet(&self, last: Option<Duration>, quiet: Duration) -> Duration {
        let now = self.now();
        let since = now.saturating_sub(last.unwrap_or(now));
        match self {
            Self::Sim => quiet.saturating_sub(since),
            Self::Real(real) => quiet.saturating_sub(real.wall(since)),
        }
    }
}

/// What the hosts and the driver share (all on the simulation's thread in
/// simulation; across a real runtime's threads in real mode).
struct Shared {
    clock: Clock,
    log: EventLog,
    peers: Vec<PeerControl>,
    /// Signalled whenever the drain disposes of a frame, so the end of the
    /// run waits on events instead of polling: within one turmoil tick a
    /// host's timers all fire, so a 1 ms poll costs a wake-up per virtual
    /// millisecond whatever the tick.
    drained: Notify,
    probe: Arc<WorldProbe>,
    workload_done: AtomicBool,
    shut_down: AtomicBool,
    /// Real mode: the run is over, record nothing more (what tearing the
    /// sender down does, on its own runtime's thread, is not part of it).
    frozen: AtomicBool,
    /// See [`Shared::ordered`].
    order: super::Order,
    /// Controls accepted and not yet disposed of by the drain, per pinned
    /// (peer, generation): what makes a redial "with controls queued".
    pending_controls: Mutex<BTreeMap<(u64, u64), u64>>,
    /// The step of its run the local node is in.
    step: Mutex<EndStep>,
    /// The local node's sender and manager, for [`Shared::stuck`]. Weak:
    /// the sender's observer holds this `Shared`, so a strong handle here
    /// would be a cycle keeping the sender (for real, its runtime thread
    /// too) alive after the run.
    live: Mutex<Weak<Live>>,
}

/// What [`Shared::stuck`] reads of the local node; `local_main` holds the
/// only strong reference.
struct Live {
    node: Arc<dyn Node>,
    nodes: Vec<String>,
}

impl Live {
    /// Per peer, the connection its table slot holds: generation, down
    /// (`None` for a target that does not show its table).
    fn table(&self) -> Vec<Option<(u64, bool)>> {
        self.nodes.iter().map(|node| self.node.slot(node)).collect()
    }
}

impl PeerWorld for Shared {
    fn record(&self, host: &str, event: Event) {
        if self.frozen.load(Ordering::Acquire) {
            return;
        }
        self.ordered(|| self.log.push_timed(|| self.clock.now(), host, event));
    }

    fn control(&self, index: u64) -> &PeerControl {
        &self.peers[index as usize]
    }

    fn mark(&self, mark: WorldMark) {
        if !self.frozen.load(Ordering::Acquire) {
            self.probe.world(mark);
        }
    }
}

impl Shared {
    /// A run's shared state: its clock, its log, `peers` peers, the world's probe.
    fn new(clock: Clock, log: EventLog, peers: u64, probe: &Arc<WorldProbe>) -> Arc<Self> {
        Arc::new(Self {
            clock,
            log,
            peers: (0..peers).map(|_| PeerControl::default()).collect(),
            drained: Notify::new(),
            probe: Arc::clone(probe),
            workload_done: AtomicBool::new(false),
            shut_down: AtomicBool::new(false),
            frozen: AtomicBool::new(false),
            order: super::Order::default(),
            pending_controls: Mutex::new(BTreeMap::new()),
            step: Mutex::new(EndStep::SenderDialing { peer: 0 }),
            live: Mutex::new(Weak::new()),
        })
    }

    /// The local node enters `step`.
    fn at(&self, step: EndStep) {
        *self
            .step
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = step;
    }

    /// Where the local node is, read by the driver when the budget runs
    /// out. The sender's counters are atomics; the manager's table is
    /// behind a lock, which for real is read on a thread of its own and
    /// given up on after a second: a run hung on that very lock must still
    /// report (then without its table).
    fn stuck(&self) -> Stuck {
        let step = *self
            .step
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let live = self
            .live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .upgrade();
        let real = matches!(self.clock, Clock::Real(_));
        let (stats, table) = match live {
            None => (None, None),
            Some(live) => {
                let stats = live.node.stats().map(Into::into);
                let table = if real {
                    let (tx, rx) = std::sync::mpsc::channel();
                    std::thread::spawn(move || {
                        let _ = tx.send(live.table());
                    });
                    rx.recv_timeout(Duration::from_secs(1)).ok() // wall-clock: ok (real mode)
                } else {
                    Some(live.table())
                };
                (stats, table)
            }
        };
        Stuck {
            step,
            stats,
            table,
            order: real.then(|| self.order.state()),
        }
    }

    /// Runs `f` as one step of the log: an enqueue and its record, or a
    /// drain hook and its record, never interleave with another thread's.
    /// In simulation one thread runs everything and this changes nothing;
    /// in real mode the drain (on its own runtime's thread) could otherwise
    /// write a frame, and log it, before the enqueuer logs its enqueue.
    /// Reentrant on one thread (an enqueue may run the down hooks inline).
    fn ordered<T>(&self, f: impl FnOnce() -> T) -> T {
        self.order.ordered(f)
    }

    fn control_pending(&self, peer: u64, generation: u64, delta: i64) {
        let mut pending = self
            .pending_controls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = pending.entry((peer, generation)).or_default();
        *count = count.saturating_add_signed(delta);
    }

    fn controls_pending_before(&self, peer: u64, generation: u64) -> bool {
        let pending = self
            .pending_controls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        pending
            .range((peer, 0)..(peer, generation))
            .any(|(_, count)| *count > 0)
    }

    fn any_controls_pending(&self) -> bool {
        let pending = self
            .pending_controls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        pending.values().any(|count| *count > 0)
    }
}

/// The index of a peer's node name (every node this world names is a
/// peer); `u64::MAX` for a name the world never gave (a target that
/// reports a node it was never told of), which no peer has.
fn peer_index(node: &str) -> u64 {
    node.strip_prefix("peer")
        .and_then(|index| index.parse().ok())
        .unwrap_or(u64::MAX)
}

/// The port that names a connection's socket in the log.
fn socket_of(connection: &dyn Connection) -> u16 {
    connection
        .local_addr()
        .parse::<std::net::SocketAddr>()
        .map_or(0, |addr| super::peer::socket_of(&addr))
}

/// Runs one seed of the sender world.
pub fn run(params: &SenderParams, seed: u64, budget: Duration, subject: &Subject) -> WorldRun {
    run_logging(params, seed, budget, subject, EventLog::default())
}

/// Runs one seed of the sender world with a log that keeps no records
/// ([`EventLog::counting`]): the same steps as [`run`], what is left of a
/// run when nothing observes it (`run::bench`'s production-in-turmoil
/// baseline). Its `records` are empty.
#[must_use]
pub fn run_unobserved(params: &SenderParams, seed: u64, budget: Duration) -> WorldRun {
    run_logging(
        params,
        seed,
        budget,
        &Subject::default(),
        EventLog::counting(),
    )
}

fn run_logging(
    params: &SenderParams,
    seed: u64,
    budget: Duration,
    subject: &Subject,
    log: EventLog,
) -> WorldRun {
    let probe = Arc::new(WorldProbe::new(seed, params.preempt));
    let installed = coverage::install(&probe);
    let shared = Shared::new(Clock::Sim, log, params.peers, &probe);
    let (disconnect_tx, disconnect_rx) = mpsc::unbounded_channel();
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
        local_main(
            Arc::clone(&shared),
            params.clone(),
            seed,
            subject.clone(),
            disconnect_rx,
            LocalNet::Sim,
        ),
    );

    let mut steps = timeline(&params.faults).into_iter().peekable();
    let finished = super::drive(&mut sim, budget, |sim, now| {
        while let Some((_, peer, action)) = steps.next_if(|&(at, _, _)| at <= now) {
            apply(sim, &shared, &disconnect_tx, peer, action);
        }
    });
    // Before anything is torn down: the local node is parked where the
    // budget found it.
    let stuck = (!finished).then(|| shared.stuck());
    shared
        .log
        .push(sim.elapsed(), "driver", Event::RunEnd { finished });
    let records = shared.log.take();
    let coverage = probe.close();
    let elapsed = sim.elapsed();
    drop(installed);
    drop(sim);
    WorldRun {
        records,
        finished,
        elapsed,
        coverage,
        stuck,
    }
}

fn apply(
    sim: &mut turmoil::Sim<'_>,
    shared: &Shared,
    disconnect: &mpsc::UnboundedSender<u64>,
    peer: u64,
    action: Action,
) {
    let name = peer_name(peer);
    let control = &shared.peers[peer as usize];
    if let Some(network) = begin_fault(shared, disconnect, peer, action, sim.elapsed()) {
        match network {
            Action::Crash => sim.crash(name.as_str()),
            Action::Bounce => {
                control.reset();
                sim.bounce(name.as_str());
            }
            Action::Partition => sim.partition(LOCAL, name.as_str()),
            Action::Repair => sim.repair(LOCAL, name.as_str()),
            Action::Latency(latency) => sim.set_link_latency(LOCAL, name.as_str(), latency),
            Action::Wedge
            | Action::Kill
            | Action::Slow(_)
            | Action::Disconnect
            | Action::Hostile(_) => {}
        }
    }
    control.poke.notify_waiters();
}

/// What applying a fault does the same way in both modes: logs it at
/// `now`, counts its marks, and signals the peer (wedge, kill, slow) or the
/// local node (disconnect). Returns the action when it is the network's
/// (crash, bounce, partition, repair, latency), for the mode to make.
fn begin_fault(
    shared: &Shared,
    disconnect: &mpsc::UnboundedSender<u64>,
    peer: u64,
    action: Action,
    now: Duration,
) -> Option<Action> {
    let control = &shared.peers[peer as usize];
    shared.log.push(
        now,
        "driver",
        Event::Fault {
            peer,
            fault: action.applied(),
        },
    );
    shared.mark(action.mark());
    if !shared.workload_done.load(Ordering::Acquire) {
        shared.mark(WorldMark::FaultDuringWorkload);
    }
    match action {
        Action::Wedge => {
            control.wedge.fetch_add(1, Ordering::AcqRel);
        }
        Action::Kill => {
            control.kill.fetch_add(1, Ordering::AcqRel);
        }
        Action::Slow(every) => *control.slow.lock().unwrap() = Some(every),
        Action::Hostile(hostile) => control
            .hostile
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push_back(hostile),
        Action::Disconnect => {
            // The local node does it, on its own host, at this instant.
            let _ = disconnect.send(peer);
        }
        Action::Crash
        | Action::Bounce
        | Action::Partition
        | Action::Repair
        | Action::Latency(_) => return Some(action),
    }
    None
}

/// The local node's network: turmoil's, or real loopback TCP.
enum LocalNet {
    Sim,
    Real { ports: PortMap, buffer: Option<u32> },
}

/// The sequence number logged for a frame whose tag was mangled.
const UNTAGGED: u64 = u64::MAX;

/// Turns the local node's reports into events: its downs (and the
/// `noconnection`s they cause), its inbound frames, and the drain's account
/// of every frame.
struct Observer {
    shared: Arc<Shared>,
    /// Per peer, what a keeper waits on for a down.
    downs: Vec<Arc<Notify>>,
    /// The local processes' links.
    links: Links,
}

impl Observer {
    /// The frame's tag. Every frame the world enqueues is tagged, so a
    /// frame without one was mangled by the code under test: it is logged
    /// under `UNTAGGED`, which no enqueue ever used, and the checkers flag
    /// it (S4: left the drain but never queued). Never a panic: these hooks
    /// also run in the drain's drop, where a panic aborts the process.
    fn tag(frame: &[u8]) -> Tag {
        Tag::of_frame(frame).unwrap_or(Tag {
            lane: Lane::Data,
            generation: 0,
            seq: UNTAGGED,
            link: None,
        })
    }

    /// A control left the drain's hands for good.
    fn control_done(&self, tag: &Tag, to: Generation<'_>) {
        self.shared
            .control_pending(peer_index(to.node), tag.generation, -1);
    }

    fn record(&self, event: Event) {
        self.shared.drained.notify_one();
        self.shared.record(LOCAL, event);
    }

    /// A write ended (finished or abandoned): a control is done with, and
    /// `event` (given peer, generation, seq) is logged, under one order.
    fn write_ended(
        &self,
        to: Generation<'_>,
        frame: &[u8],
        event: impl FnOnce(u64, u64, u64) -> Event,
    ) {
        self.shared.ordered(|| {
            let tag = Self::tag(frame);
            if tag.lane == Lane::Control {
                self.control_done(&tag, to);
            }
            self.record(event(peer_index(to.node), to.generation, tag.seq));
        });
    }
}

impl NodeEvents for Observer {
    /// The world logs a generation when its dial returns it
    /// ([`Dialer::dial`]): the local node only dials.
    fn up(&self, _: Up<'_>) {}

    fn down(&self, down: Down<'_>) {
        let peer = peer_index(down.node);
        self.shared.mark(WorldMark::GenerationDown);
        if down.reason == DownReason::HeartbeatTimeout {
            self.shared.mark(WorldMark::HeartbeatDown);
        }
        self.shared.record(
            LOCAL,
            Event::ConnectionDown {
                peer,
                generation: down.generation,
                reason: down.reason.into(),
                table: down.table,
            },
        );
        if let Some(wake) = self.downs.get(peer as usize) {
            wake.notify_one();
        }
        // After the down's record: the log shows a generation's down
        // before the noconnections it causes.
        self.links.down(down.node, down.generation);
    }

    /// Which inbound frames were read whole: a local close before the end
    /// of one resets the stream (S6's excuse for what the reset discards).
    fn frame(&self, from: Generation<'_>, control: &[u8], payload: &[u8]) {
        self.shared.record(
            LOCAL,
            Event::InboundFrameRead {
                peer: peer_index(from.node),
                generation: from.generation,
                bytes: (control.len() + payload.len()) as u64,
            },
        );
    }

    fn write_started(&self, to: Generation<'_>, lane: SenderLane, frame: &[u8]) {
        self.shared.record(
            LOCAL,
            Event::WriteStarted {
                peer: peer_index(to.node),
                generation: to.generation,
                lane: lane.into(),
                seq: Self::tag(frame).seq,
            },
        );
    }

    fn write_finished(
        &self,
        to: Generation<'_>,
        lane: SenderLane,
        frame: &[u8],
        outcome: WriteOutcome,
    ) {
        self.write_ended(to, frame, |peer, generation, seq| Event::WriteFinished {
            peer,
            generation,
            lane: lane.into(),
            seq,
            outcome: outcome.into(),
        });
    }

    fn control_skipped(&self, pinned: Generation<'_>, frame: &[u8]) {
        self.shared.ordered(|| {
            let tag = Self::tag(frame);
            self.control_done(&tag, pinned);
            self.record(Event::ControlSkipped {
                peer: peer_index(pinned.node),
                generation: pinned.generation,
                seq: tag.seq,
            });
        });
    }

    fn data_unroutable(&self, node: &str, frame: &[u8]) {
        self.record(Event::DataUnroutable {
            peer: peer_index(node),
            seq: Self::tag(frame).seq,
        });
    }

    fn write_abandoned(&self, to: Generation<'_>, lane: SenderLane, frame: &[u8]) {
        self.write_ended(to, frame, |peer, generation, seq| Event::WriteAbandoned {
            peer,
            generation,
            lane: lane.into(),
            seq,
        });
    }

    fn control_discarded(&self, pinned: Generation<'_>, frame: &[u8]) {
        self.shared.ordered(|| {
            let tag = Self::tag(frame);
            self.control_done(&tag, pinned);
            self.record(Event::ControlDiscarded {
                peer: peer_index(pinned.node),
                generation: pinned.generation,
                seq: tag.seq,
            });
        });
    }

    fn data_discarded(&self, node: &str, frame: &[u8]) {
        self.record(Event::DataDiscarded {
            peer: peer_index(node),
            seq: Self::tag(frame).seq,
        });
    }
}

/// Dials, logging each generation's first appearance once.
struct Dialer {
    shared: Arc<Shared>,
    node: Arc<dyn Node>,
    seen: Mutex<BTreeSet<(u64, u64)>>,
    /// Peers with an on-demand dial in flight.
    on_demand: Mutex<BTreeSet<u64>>,
}

impl Dialer {
    /// Dials `peer` (a redial when `redial`): logs a new generation or the
    /// failure, and the marks.
    async fn dial(&self, peer: u64, redial: bool) -> Option<Conn> {
        let node = peer_name(peer);
        match self.node.dial(&node, &format!("{node}:{PORT}")).await {
            Ok(connection) => {
                let generation = connection.generation();
                let new = self
                    .seen
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert((peer, generation));
                if new {
                    self.shared.record(
                        LOCAL,
                        Event::ConnectionUp {
                            peer,
                            generation,
                            socket: socket_of(&*connection),
                        },
                    );
                    if redial {
                        self.shared.mark(WorldMark::RedialOk);
                        if self.shared.controls_pending_before(peer, generation) {
                            self.shared.mark(WorldMark::RedialWithControlsQueued);
                        }
                    }
                }
                Some(connection)
            }
            Err(error) => {
                if redial {
                    self.shared.mark(WorldMark::RedialFailed);
                }
                self.shared.record(
                    LOCAL,
                    Event::DialFailed {
                        peer,
                        error: error.into(),
                    },
                );
                None
            }
        }
    }

    /// Keeps `peer` connected: after every down, redials every `after` until
    /// a live generation exists.
    async fn keep(self: Arc<Self>, peer: u64, after: Duration, downs: Arc<Notify>) {
        let node = peer_name(peer);
        loop {
            downs.notified().await;
            loop {
                tokio::time::sleep(after).await;
                if self.node.connection(&node).is_some() || self.dial(peer, true).await.is_some() {
                    break;
                }
            }
        }
    }

    /// Starts a dial of `peer` unless one started this way is in flight: the
    /// workload wants a link and has no connection (it may race the keeper).
    fn dial_on_demand(self: &Arc<Self>, peer: u64) {
        let fresh = self
            .on_demand
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(peer);
        if fresh {
            let dialer = Arc::clone(self);
            tokio::spawn(async move {
                dialer.dial(peer, true).await;
                dialer
                    .on_demand
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .remove(&peer);
            });
        }
    }
}

async fn local_main(
    shared: Arc<Shared>,
    p: SenderParams,
    seed: u64,
    subject: Subject,
    mut disconnects: mpsc::UnboundedReceiver<u64>,
    net: LocalNet,
) -> turmoil::Result {
    let start = tokio::time::Instant::now();
    let mut rng = SimRng::new(seed).fork("sender");
    let tap_log = Arc::clone(&shared);
    let tap: WriteTap = Arc::new(move |socket, tapped| {
        let frame = match tapped {
            Tapped::FrameStart(frame) => frame,
            Tapped::WindowFull => {
                tap_log.mark(WorldMark::WriteBlockedOnWindow);
                return;
            }
        };
        let event = match Tag::of_frame(frame) {
            Some(tag) => Event::FrameWriteBegun {
                socket,
                lane: tag.lane,
                seq: tag.seq,
                bytes: frame_len(frame).map_or(0, |len| len as u64),
            },
            None => Event::HelloWriteBegun { socket },
        };
        tap_log.record(LOCAL, event);
    });
    let world = tokio::runtime::Handle::current();
    let (transport, runtime): (Arc<dyn Transport>, _) = match net {
        LocalNet::Sim => (
            Arc::new(TurmoilTcp {
                mss: p.mss as usize,
                tap: Some(tap),
                gate: None,
            }),
            Runtime::World(world),
        ),
        // The sender owns its runtime, as production runs it.
        LocalNet::Real { ports, buffer } => (
            Arc::new(RealTcp {
                mss: p.mss as usize,
                tap: Some(tap),
                ports,
                buffer,
            }),
            Runtime::Own {
                thread_name: "lanesim-real-sender".into(),
                world,
            },
        ),
    };
    let link_log = Arc::clone(&shared);
    let links = Links::new(move |node, link| {
        link_log.record(
            LOCAL,
            Event::NoConnection {
                peer: peer_index(node),
                generation: link.generation,
                link: link.local,
            },
        );
    });
    let downs: Vec<Arc<Notify>> = (0..p.peers).map(|_| Arc::new(Notify::new())).collect();
    let observer = Observer {
        shared: Arc::clone(&shared),
        downs: downs.clone(),
        links: links.clone(),
    };
    let target = subject
        .node()
        .expect("checked before the run: the target has a node");
    let node: Arc<dyn Node> = Arc::from(
        target
            .start(NodeSetup {
                name: LOCAL.into(),
                transport,
                runtime,
                connect_timeout: p.connect_timeout,
                write_timeout: p.write_timeout,
                // The peers are frame readers, not production nodes: they
                // never write, so a heartbeat would read their silence as
                // death (the mesh world runs heartbeats between nodes).
                heartbeat: None,
                // Small, so a peer can write a frame of exactly the
                // maximum (and one byte over) cheaply: the hostile-frame
                // faults. Nothing else is ever read from a peer.
                max_frame: MAX_INBOUND,
                data_capacity: p.data_capacity as usize,
                control_capacity: p.control_capacity as usize,
                reports: NodeReports::new(Arc::new(observer)),
            })
            .map_err(|error| format!("the node target could not start: {error}"))?,
    );
    let dialer = Arc::new(Dialer {
        shared: Arc::clone(&shared),
        node: Arc::clone(&node),
        seen: Mutex::new(BTreeSet::new()),
        on_demand: Mutex::new(BTreeSet::new()),
    });
    // Running before the first dial: a disconnect applies at its instant
    // (to no generation, if there is none yet), never later.
    let (disconnect_node, disconnect_log) = (Arc::clone(&node), Arc::clone(&shared));
    tokio::spawn(async move {
        while let Some(peer) = disconnects.recv().await {
            let name = peer_name(peer);
            let generation = disconnect_node
                .connection(&name)
                .map(|connection| connection.generation());
            disconnect_log.record(LOCAL, Event::Disconnected { peer, generation });
            disconnect_node.disconnect(&name);
        }
    });
    let nodes: Vec<String> = (0..p.peers).map(peer_name).collect();
    // Held to the end of the run; the driver's handle on it is weak.
    let live = Arc::new(Live {
        node: Arc::clone(&node),
        nodes: nodes.clone(),
    });
    *shared
        .live
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::downgrade(&live);
    let mut held: Vec<Option<Conn>> = Vec::new();
    for peer in 0..p.peers {
        shared.at(EndStep::SenderDialing { peer });
        held.push(dialer.dial(peer, false).await);
    }
    if let Some(after) = p.redial_after {
        for (peer, downs) in downs.iter().enumerate() {
            tokio::spawn(Arc::clone(&dialer).keep(peer as u64, after, Arc::clone(downs)));
        }
    }
    if let Some(at) = p.shutdown_at {
        let (shared, sender) = (Arc::clone(&shared), Arc::clone(&node));
        tokio::spawn(async move {
            tokio::time::sleep_until(start + at).await;
            shared.record(LOCAL, Event::ShutdownRequested);
            if shared.any_controls_pending() {
                shared.mark(WorldMark::ShutdownWithControlsQueued);
            }
            shared.shut_down.store(true, Ordering::Release);
            sender.shutdown();
        });
    }

    let mut data_seq: BTreeMap<u64, u64> = BTreeMap::new();
    let mut control_seq = 0u64;
    let mut next_link = 1u64;
    let mut remaining_data = p.data_frames;
    let mut remaining_links = p.links;
    let mut open_links: Vec<(u64, Conn)> = Vec::new();
    shared.at(EndStep::SenderWorkload);
    while remaining_data + remaining_links + open_links.len() as u64 > 0 {
        let pick = rng.range(
            0,
            remaining_data + remaining_links + open_links.len() as u64 - 1,
        );
        let payload = rng.range(p.frame_bytes.0, p.frame_bytes.1) as usize;
        let closed_before = shared.shut_down.load(Ordering::Acquire);
        if pick < remaining_data {
            remaining_data -= 1;
            let peer = rng.range(0, p.peers - 1);
            let seq = data_seq.entry(peer).or_default();
            *seq += 1;
            let frame = Tag {
                lane: Lane::Data,
                generation: 0,
                seq: *seq,
                link: None,
            }
            .shared_frame(payload);
            let seq = *seq;
            shared.ordered(|| {
                let outcome: DataOutcome = node.enqueue(&nodes[peer as usize], frame).into();
                shared.record(LOCAL, Event::DataEnqueued { peer, seq, outcome });
            });
        } else if pick < remaining_data + remaining_links {
            remaining_links -= 1;
            let peer = rng.range(0, p.peers - 1);
            let stale = rng.chance(STALE_LINK);
            let current = node.connection(&nodes[peer as usize]);
            if current.is_none() && p.redial_after.is_some() {
                dialer.dial_on_demand(peer);
            }
            let over = if stale {
                held[peer as usize].clone()
            } else {
                current.clone()
            };
            if current.is_some() {
                held[peer as usize].clone_from(&current);
            }
            if let Some(connection) = over {
                let link = next_link;
                next_link += 1;
                if connection.is_down() {
                    shared.mark(WorldMark::LinkOverDownGeneration);
                }
                shared.record(
                    LOCAL,
                    Event::Linked {
                        peer,
                        generation: connection.generation(),
                        link,
                    },
                );
                if links.link(&*connection, link, link).is_some() {
                    open_links.push((link, connection));
                }
            }
        } else {
            let index = rng.range(0, open_links.len() as u64 - 1) as usize;
            let (link, connection) = open_links.swap_remove(index);
            control_seq += 1;
            let (peer, generation) = (peer_index(connection.node()), connection.generation());
            let tag = Tag {
                lane: Lane::Control,
                generation,
                seq: control_seq,
                link: Some(link),
            };
            let frame = tag.shared_frame(payload);
            shared.ordered(|| {
                let outcome: ControlOutcome = node.enqueue_control(&connection, frame).into();
                if outcome == ControlOutcome::Queued {
                    shared.control_pending(peer, generation, 1);
                }
                shared.record(
                    LOCAL,
                    Event::ControlEnqueued {
                        peer,
                        generation,
                        seq: control_seq,
                        link: Some(link),
                        outcome,
                        down_at_return: connection.is_down(),
                    },
                );
            });
        }
        if closed_before {
            shared.mark(WorldMark::EnqueueAfterShutdown);
        }
        let gap = Duration::from_micros(
            rng.range(p.gap.0.as_micros() as u64, p.gap.1.as_micros() as u64),
        );
        if !gap.is_zero() {
            tokio::time::sleep(gap).await;
        }
    }
    shared.record(LOCAL, Event::WorkloadDone);
    shared.workload_done.store(true, Ordering::Release);
    // A target that keeps no counters is waited for by the quiet below
    // alone, which then also covers a write held to its deadline.
    for looks in 1.. {
        shared.at(EndStep::SenderDrain { looks });
        let Some(s) = node.stats() else {
            break;
        };
        let controls_done = s.control_queued
            == s.control_written + s.control_skipped + s.control_failed + s.control_discarded;
        let data_done = s.data_queued
            == s.data_written + s.data_no_connection + s.data_failed + s.data_discarded;
        if controls_done && data_done {
            break;
        }
        // Counters move only when the drain disposes of a frame, which
        // notifies; the timeout is a backstop, not the pace. But the drain
        // calls a skipped control's or an unroutable frame's hook before it
        // counts it (`Drain::write_control`, `write_data`): on one thread
        // (simulation) this look comes after the count anyway; on another
        // (real mode) it can come between the two, and the run then waited
        // out the whole backstop, 1 s of wall time (10 s in the log at
        // scale 0.1) in one real run of `sender_wedged_peer` seed 12 in 10.
        // So real mode looks again soon.
        let backstop = match shared.clock {
            Clock::Sim => Duration::from_secs(1),
            Clock::Real(_) => Duration::from_millis(10),
        };
        let _ = tokio::time::timeout(backstop, shared.drained.notified()).await;
    }
    // Let written frames reach peers that are still reading, and redials
    // finish: wait for the log to stay quiet for longer than the slowest
    // peer's read interval and a round trip on the slowest link.
    let longest = |kind| {
        p.faults
            .iter()
            .filter(|f| f.kind == kind)
            .map(|f| f.lasting)
            .max()
            .unwrap_or_default()
    };
    let uncounted = if node.stats().is_none() {
        p.write_timeout * 2
    } else {
        Duration::ZERO
    };
    let quiet = Duration::from_millis(200)
        + longest(FaultKind::Slow) * 2
        + longest(FaultKind::Latency) * 2
        + uncounted;
    // Every scheduled fault happens before the run may end: a run that
    // quit before its bounce or its repair never exercised them.
    let last_step = timeline(&p.faults).last().map(|step| step.0);
    if let Some(last_step) = last_step {
        shared.at(EndStep::SenderLastFault {
            at: shared.clock.in_log(last_step),
        });
        tokio::time::sleep_until(start + last_step).await;
    }
    // Quiet since the last record, not since the last look: sleeping a
    // whole `quiet` after every look waited up to twice as long (idle
    // simulation steps, a fifth of a short run) for the same silence.
    for looks in 1.. {
        shared.at(EndStep::SenderQuiet { quiet, looks });
        let (before, last) = (shared.log.len(), shared.log.last_at());
        tokio::time::sleep(shared.clock.until_quiet(last, quiet)).await;
        if shared.log.len() == before {
            break;
        }
    }
    shared.at(EndStep::SenderClosing);
    for (peer, node) in nodes.iter().enumerate() {
        shared.record(
            LOCAL,
            Event::TableAtEnd {
                peer: peer as u64,
                generation: live.node.slot(node).map(|(generation, _)| generation),
            },
        );
    }
    if let Some(stats) = node.stats() {
        shared.record(LOCAL, Event::SenderStats(stats.into()));
    }
    if matches!(shared.clock, Clock::Real(_)) {
        // Before the sender drops (its drain's drop marks connections
        // down on another thread): in simulation the run ends here too.
        shared.frozen.store(true, Ordering::Release);
    }
    drop(live);
    Ok(())
}

/// A real run: the world's log and coverage, and the wall time it took.
pub struct RealRun {
    /// What the run produced; `elapsed` is in the scenario's own units
    /// (wall time divided by the time scale).
    pub world: WorldRun,
    /// Wall time, start to `RunEnd`.
    pub wall: Duration,
    /// The worst wake-up lateness the run's runtime suffered, in wall time
    /// ([`super::Lateness`]).
    pub lateness: Duration,
}

/// Why the sender world cannot run `params` for real, if it cannot.
#[must_use]
pub fn real_refusal(params: &SenderParams) -> Option<String> {
    params
        .faults
        .iter()
        .any(|fault| fault.kind == FaultKind::Partition)
        .then(|| {
            "a partition cannot be made on loopback TCP without root (it needs packet \
             filtering, e.g. nftables, to drop segments silently while both sockets stay open)"
                .into()
        })
}

/// `params` with every duration the world acts on multiplied by `scale`:
/// gaps, write and connect timeouts, redial pause, shutdown time, fault
/// times and durations (and the tick and preemption sleeps, which real
/// mode does not use).
#[must_use]
pub fn scaled(params: &SenderParams, scale: f64) -> SenderParams {
    let by = |d: Duration| d.mul_f64(scale);
    let mut p = params.clone();
    p.gap = (by(p.gap.0), by(p.gap.1));
    p.write_timeout = by(p.write_timeout);
    p.connect_timeout = by(p.connect_timeout);
    p.redial_after = p.redial_after.map(by);
    p.tick = by(p.tick);
    p.shutdown_at = p.shutdown_at.map(by);
    p.preempt.sleep = (by(p.preempt.sleep.0), by(p.preempt.sleep.1));
    for fault in &mut p.faults {
        fault.at = by(fault.at);
        fault.lasting = by(fault.lasting);
    }
    p
}

/// The socket buffer size real mode asks for on both ends: half of
/// turmoil's segment credit in bytes each (the kernel doubles the request),
/// so a peer that stops reading parks the writer after about as many bytes
/// as in simulation.
fn real_buffer(p: &SenderParams) -> u32 {
    let credit = p.tcp_capacity.saturating_mul(p.mss) / 2;
    u32::try_from(credit.clamp(4 << 10, 4 << 20)).unwrap_or(4 << 20)
}

/// A peer's loopback listener on `port` (0: any), its accepted sockets
/// inheriting the buffer size asked for.
async fn bind_peer(port: u16, buffer: u32, mss: usize) -> std::io::Result<tokio::net::TcpListener> {
    let socket = RealTcp::socket(Some(buffer), mss)?;
    socket.set_reuseaddr(true)?;
    socket.bind(std::net::SocketAddr::from(([127, 0, 0, 1], port)))?;
    socket.listen(64)
}

/// Runs one seed of the sender world for real: the production sender on
/// its own runtime (as production runs it), its connection manager and the
/// peers on a real multi-thread tokio runtime, real loopback TCP, the
/// scenario's durations multiplied by `scale`, faults made for real (see
/// `docs/real-mode.md`). The log's times are wall time divided by `scale`.
/// Not deterministic: the seed fixes the parameters and the workload's
/// choices, real scheduling the rest.
///
/// # Panics
/// When no loopback port can be bound, or the testbed itself panics
/// (the runner reports a crash). `params` must not be refused by
/// [`real_refusal`].
#[must_use]
pub fn run_real(
    params: &SenderParams,
    scale: f64,
    seed: u64,
    budget: Duration,
    subject: &Subject,
) -> RealRun {
    let p = scaled(params, scale);
    // The scenario's preemption points answer as in simulation (their
    // sleeps scaled): real threads preempt for real too, but a race window
    // a few instructions wide is almost never hit without them.
    let probe = Arc::new(WorldProbe::new(seed, p.preempt));
    let installed = coverage::install(&probe);
    let on_worker = Arc::clone(&probe);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("lanesim-real")
        .enable_all()
        .on_thread_start(move || std::mem::forget(coverage::install(&on_worker)))
        .build()
        .expect("a real tokio runtime");
    // The sender runs on its own runtime, as production runs it: its
    // worker is watched for OS run-queue waits, not napped on.
    let lateness = super::Lateness::watch(&runtime, Some(Arc::clone(&probe)));
    let clock = RealClock::starting(scale);
    let shared = Shared::new(Clock::Real(clock), EventLog::default(), p.peers, &probe);
    let buffer = real_buffer(&p);
    let stuck = runtime.block_on(drive_real(
        &shared,
        &p,
        seed,
        budget.mul_f64(scale),
        subject,
        buffer,
    ));
    let finished = stuck.is_none();
    shared.frozen.store(true, Ordering::Release);
    shared
        .log
        .push_timed(|| shared.clock.now(), "driver", Event::RunEnd { finished });
    let coverage = probe.close();
    let elapsed = shared.clock.now();
    let wall = clock.start.elapsed(); // wall-clock: ok (real mode)
    let lateness = lateness.worst();
    let mut records = shared.log.take();
    // A hook that passed the frozen check just before may have landed
    // after the end: the run ends at `RunEnd`.
    if let Some(end) = records
        .iter()
        .position(|record| matches!(record.event, Event::RunEnd { .. }))
    {
        records.truncate(end + 1);
    }
    runtime.shutdown_timeout(Duration::from_secs(1));
    drop(installed);
    RealRun {
        world: WorldRun {
            records,
            finished,
            elapsed,
            coverage,
            stuck,
        },
        wall,
        lateness,
    }
}

/// Real mode's driver: binds the peers, starts the local node, applies the
/// fault timeline at its (scaled) times; `None` when the local node
/// finished within `budget` (wall time), else where it was then.
async fn drive_real(
    shared: &Arc<Shared>,
    p: &SenderParams,
    seed: u64,
    budget: Duration,
    subject: &Subject,
    buffer: u32,
) -> Option<Stuck> {
    let begun = tokio::time::Instant::now();
    let ports: PortMap = Arc::default();
    let mut peers = Vec::new();
    for index in 0..p.peers {
        let listener = bind_peer(0, buffer, p.mss as usize)
            .await
            .expect("a loopback port");
        let port = listener.local_addr().expect("a bound port").port();
        ports
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(peer_name(index), port);
        peers.push(Some(tokio::spawn(real_peer_main(
            Arc::clone(shared),
            index,
            listener,
        ))));
    }
    let (disconnect_tx, disconnect_rx) = mpsc::unbounded_channel();
    let main = local_main(
        Arc::clone(shared),
        p.clone(),
        seed,
        subject.clone(),
        disconnect_rx,
        LocalNet::Real {
            ports: Arc::clone(&ports),
            buffer: Some(buffer),
        },
    );
    // turmoil's error type is not `Send`: the task's output carries text.
    let local = tokio::spawn(async move { main.await.map_err(|error| error.to_string()) });
    let driver = async {
        for (at, peer, action) in timeline(&p.faults) {
            tokio::time::sleep_until(begun + at).await;
            let control = &shared.peers[peer as usize];
            let now = || shared.clock.now();
            match begin_fault(shared, &disconnect_tx, peer, action, now()) {
                Some(Action::Crash) => {
                    // The listener and every accepted socket close.
                    if let Some(task) = peers[peer as usize].take() {
                        task.abort();
                        let _ = task.await;
                    }
                }
                Some(Action::Bounce) => {
                    control.reset();
                    let port = ports
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .get(&peer_name(peer))
                        .copied()
                        .unwrap_or_default();
                    let mut listener = bind_peer(port, buffer, p.mss as usize).await;
                    for _ in 0..100 {
                        if listener.is_ok() {
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis(2)).await;
                        listener = bind_peer(port, buffer, p.mss as usize).await;
                    }
                    let listener = listener.expect("re-bind a bounced peer's port");
                    peers[peer as usize] = Some(tokio::spawn(real_peer_main(
                        Arc::clone(shared),
                        peer,
                        listener,
                    )));
                }
                Some(Action::Latency(latency)) => {
                    *control
                        .latency
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(latency);
                }
                Some(Action::Partition | Action::Repair) => {
                    unreachable!("real mode refuses partitions before the run")
                }
                Some(
                    Action::Wedge
                    | Action::Kill
                    | Action::Slow(_)
                    | Action::Disconnect
                    | Action::Hostile(_),
                )
                | None => {}
            }
            control.poke.notify_waiters();
        }
        std::future::pending::<()>().await;
    };
    tokio::select! {
        biased;
        joined = local => match joined {
            Ok(Ok(())) => None,
            Ok(Err(error)) => panic!("the local node failed: {error}"),
            Err(error) => match error.try_into_panic() {
                Ok(payload) => std::panic::resume_unwind(payload),
                Err(error) => panic!("the local node was cancelled: {error}"),
            },
        },
        // Read before the local node's task is let go of (it runs on,
        // detached, until the runtime shuts down).
        () = tokio::time::sleep(budget) => Some(shared.stuck()),
        () = driver => unreachable!("the driver never ends"),
    }
}
