//! The sender world: the node target (lanesim's `ConnectionManager` +
//! `DistSender`, or any other) on a turmoil host ("local"), peers on other
//! hosts that log every frame they read (`peer`), and a driver that steps
//! the simulation and injects faults.
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
//! (the peers), and what the drain did (the node's reports, if it makes
//! them).
//!
//! Rooms: this file holds what the driver and the local host share and the
//! driver's fault steps; [`local`] is the local host (the node, its
//! workload, the end of its run), [`dialer`] its dials and keepers,
//! [`observer`] its reports turned into events. Real mode's driver is
//! `crate::real::sender`.
//!
//! The log ends at `RunEnd`: what tearing the simulation down does (the
//! drain's drop marking connections down) is not part of the run, and the
//! probe stops counting marks there too.
//!
//! The local node says which step of its run it is in ([`EndStep`]), and
//! lends the driver a weak handle on its node, so a run whose
//! budget runs out reports where it was and what the sender still counted
//! as queued ([`Stuck`]), read before anything is torn down.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use lanesim_target::handshake::{Nonce, Nonces, SeededNonces};
use lanesim_target::node::{Connection, Node};
use tokio::sync::{mpsc, Notify};

mod beside;
mod dialer;
mod local;
pub(crate) mod observer;

use super::handshake;
use super::net::PortMap;
use super::peer::{peer_main, peer_name, PeerWorld};
use super::real_clock::RealClock;
use super::{EndStep, Stuck, WorldRun};
use crate::coverage::{self, WorldMark, WorldProbe};
use crate::event::{Event, EventLog};
use crate::explore::{self, WorldExplorer};
use crate::fault::{timeline, Action, PeerControl};
use crate::scenario::SenderParams;
use crate::targets::Subject;

pub(crate) use local::local_main;

const LOCAL: &str = "local";
/// Chance that a link is made over the connection the workload last held
/// for that peer rather than the one the manager hands out now (which may
/// be a newer generation, or none, while the held one is down).
const STALE_LINK: f64 = 0.15;

/// Where the log's times come from.
pub(crate) enum Clock {
    /// turmoil's virtual time.
    Sim,
    /// Real mode ([`RealClock`]).
    Real(RealClock),
}

impl Clock {
    pub(crate) fn now(&self) -> Duration {
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

    /// `d` of the log's (the scenario's) time as the world's own: itself
    /// in simulation, scaled in real mode.
    pub(crate) fn in_world(&self, d: Duration) -> Duration {
        match self {
            Self::Sim => d,
            Self::Real(real) => real.wall(d),
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
pub(crate) struct Shared {
    pub(crate) clock: Clock,
    pub(crate) log: EventLog,
    pub(crate) peers: Vec<PeerControl>,
    /// Per peer, its handshake nonces (from the run's seed).
    nonces: Vec<SeededNonces>,
    /// The local node's heartbeat, if it runs one (the peers' keepalives).
    heartbeat: Option<Duration>,
    /// Signalled whenever the drain disposes of a frame, so the end of the
    /// run waits on events instead of polling: within one turmoil tick a
    /// host's timers all fire, so a 1 ms poll costs a wake-up per virtual
    /// millisecond whatever the tick.
    pub(crate) drained: Notify,
    pub(crate) probe: Arc<WorldProbe>,
    pub(crate) workload_done: AtomicBool,
    pub(crate) shut_down: AtomicBool,
    /// Real mode: the run is over, record nothing more (what tearing the
    /// sender down does, on its own runtime's thread, is not part of it).
    pub(crate) frozen: AtomicBool,
    /// See [`Shared::ordered`].
    pub(crate) order: super::Order,
    /// Controls accepted and not yet disposed of by the drain, per pinned
    /// (peer, generation): what makes a redial "with controls queued".
    pub(crate) pending_controls: Mutex<BTreeMap<(u64, u64), u64>>,
    /// Controls accepted whose fate the world has not seen from outside:
    /// not yet begun on a socket, their pinned generation not down (seq →
    /// (peer, generation)). What the end of a run waits for when the node
    /// keeps no counters.
    pub(crate) unsettled: Mutex<BTreeMap<u64, (u64, u64)>>,
    /// Which frames a healthy peer read beside a faulty peer (a mark).
    pub(crate) beside: beside::Beside,
    /// The step of its run the local node is in.
    pub(crate) step: Mutex<EndStep>,
    /// The local node, for [`Shared::stuck`]. Weak:
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
        if let Event::FrameArrived {
            peer, lane, seq, ..
        } = &event
        {
            if self.beside.read(*peer, *lane, *seq) {
                self.mark(WorldMark::HealthyPeerBesideFault);
            }
        }
        self.ordered(|| self.log.push_timed(|| self.clock.now(), host, event));
    }

    fn control(&self, index: u64) -> &PeerControl {
        &self.peers[index as usize]
    }

    fn nonce(&self, index: u64) -> Nonce {
        self.nonces[index as usize].next()
    }

    fn keepalive_every(&self) -> Option<Duration> {
        self.heartbeat.map(|tick| tick / 4)
    }

    fn mark(&self, mark: WorldMark) {
        if !self.frozen.load(Ordering::Acquire) {
            self.probe.world(mark);
        }
    }
}

impl Shared {
    /// A run's shared state: its clock, its log, the peers of `p`, the
    /// world's probe, the seed the peers' nonces come from.
    pub(crate) fn new(
        clock: Clock,
        log: EventLog,
        p: &SenderParams,
        probe: &Arc<WorldProbe>,
        seed: u64,
    ) -> Arc<Self> {
        let peers = p.peers;
        Arc::new(Self {
            clock,
            log,
            peers: (0..peers).map(|_| PeerControl::default()).collect(),
            nonces: (0..peers)
                .map(|peer| handshake::nonces(seed, &peer_name(peer)))
                .collect(),
            heartbeat: p.heartbeat,
            drained: Notify::new(),
            probe: Arc::clone(probe),
            workload_done: AtomicBool::new(false),
            shut_down: AtomicBool::new(false),
            frozen: AtomicBool::new(false),
            order: super::Order::default(),
            pending_controls: Mutex::new(BTreeMap::new()),
            unsettled: Mutex::new(BTreeMap::new()),
            beside: beside::Beside::default(),
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
    pub(crate) fn stuck(&self) -> Stuck {
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

    /// A control's fate was seen (`None`: every control pinned to
    /// `pinned`, whose generation went down).
    pub(crate) fn settled(&self, seq: Option<u64>, pinned: (u64, u64)) {
        let mut unsettled = self
            .unsettled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match seq {
            Some(seq) => {
                unsettled.remove(&seq);
            }
            None => unsettled.retain(|_, on| *on != pinned),
        }
        drop(unsettled);
        self.drained.notify_one();
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
pub(crate) fn peer_index(node: &str) -> u64 {
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
    let explorer = Arc::new(WorldExplorer::new(seed, params.explore, Arc::clone(&probe)));
    let explored = explore::install(&explorer);
    let shared = Shared::new(Clock::Sim, log, params, &probe, seed);
    explorer.log_holds(shared.log.clone(), || {
        turmoil::sim_elapsed().unwrap_or_default()
    });
    probe.fired().watch(shared.log.clone(), || {
        turmoil::sim_elapsed().unwrap_or_default()
    });
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
    let run = WorldRun::ended(&shared.log, &probe, finished, sim.elapsed(), stuck);
    drop(installed);
    drop(sim);
    drop(explored);
    run
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
pub(crate) fn begin_fault(
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
    shared.beside.fault(peer);
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
pub(crate) enum LocalNet {
    Sim,
    Real { ports: PortMap, buffer: Option<u32> },
}

/// The sequence number logged for a frame whose tag was mangled.
const UNTAGGED: u64 = u64::MAX;
