//! proptest strategies for whole runs: a world's parameters (workload,
//! configuration, faults at generated virtual times) and the seed the run
//! uses. Everything a scenario file can say, within bounds that keep one
//! run cheap, and nothing a file cannot: every generated case is written
//! out (`Params::to_file`) as a scenario `lanesim run` accepts.
//!
//! What the checkers assume of a scenario, the strategies respect: a slow
//! peer reads well within the write deadline (slow is not wedged), link
//! latency stays well inside the connect timeout (a link no dial can cross
//! is a partition), dispatcher policies have a limit.

use std::time::Duration;

use proptest::prelude::*;

use crate::coverage::PreemptPolicy;
use crate::explore::Exploration;
use crate::scenario::{
    FaultKind, LanesParams, MeshFault, MeshFaultKind, MeshParams, MisdialBy, OversizeSplit, Params,
    Policy, ScheduledFault, SenderParams, WorldKind, HALF_OPEN_MIN_TICKS, SLOW_FRACTION,
    TORN_FRAME_LEN,
};

/// The most each knob is drawn at (the least, where it is not 0 or 1):
/// one table for generation and for mutation (`genes`), so a mutant is a
/// case the strategies could have drawn. Sized so one run stays cheap: a
/// lanes case runs at most a few seconds of virtual time, a sender case
/// stays within a few write deadlines of its last fault.
pub mod bounds {
    /// Keys.
    pub const L_KEYS: u64 = 12;
    /// Producers.
    pub const L_PRODUCERS: u64 = 4;
    /// Items per producer.
    pub const L_ITEMS: u64 = 120;
    /// Items per burst.
    pub const L_BURST: u64 = 16;
    /// Gap between items, µs.
    pub const L_GAP_US: u64 = 1_000;
    /// Pause between bursts, µs.
    pub const L_PAUSE_US: u64 = 5_000;
    /// Handler time, µs.
    pub const L_HANDLER_US: u64 = 3_000;
    /// Share of items sent to the hot key.
    pub const L_HOT_KEY: f64 = 0.9;
    /// Idle TTL, µs.
    pub const L_TTL_US: (u64, u64) = (1_000, 10_000);
    /// Lane capacity.
    pub const L_CAPACITY: u64 = 16;
    /// Handler panic chance (each kind).
    pub const L_PANIC: f64 = 0.3;
    /// When the router is dropped, µs.
    pub const L_DROP_AT_US: u64 = 60_000;
    /// Keys whose handler hangs.
    pub const L_STUCK: u64 = 3;
    /// Buggify chance.
    pub const L_BUGGIFY: f64 = 0.5;
    /// Preemption chance, in millionths (certainty).
    pub const PPM: u64 = 1_000_000;
    /// Preemption length, µs.
    pub const PREEMPT_US: u64 = 2_000;
    /// Peers.
    pub const S_PEERS: u64 = 5;
    /// Data frames.
    pub const S_DATA: u64 = 250;
    /// Links (each a control frame).
    pub const S_LINKS: u64 = 60;
    /// Frame payload bytes.
    pub const S_FRAME_BYTES: u64 = 20_000;
    /// Gap between sends, µs.
    pub const S_GAP_US: u64 = 5_000;
    /// Data lane capacity.
    pub const S_DATA_CAPACITY: u64 = 1_024;
    /// Control lane capacity.
    pub const S_CONTROL_CAPACITY: u64 = 64;
    /// Write deadline, ms.
    pub const S_WRITE_MS: (u64, u64) = (100, 5_000);
    /// Connect timeout, ms.
    pub const S_CONNECT_MS: (u64, u64) = (50, 1_000);
    /// Redial delay, µs.
    pub const S_REDIAL_US: (u64, u64) = (1_000, 300_000);
    /// When the sender shuts down, µs.
    pub const S_SHUTDOWN_US: u64 = 500_000;
    /// When a fault strikes, µs.
    pub const S_FAULT_AT_US: u64 = 400_000;
    /// Most faults.
    pub const S_FAULTS: usize = 5;
    /// Mesh nodes.
    pub const M_NODES: u64 = 5;
    /// Links each mesh node makes.
    pub const M_LINKS: u64 = 12;
    /// Data frames each mesh node sends.
    pub const M_DATA: u64 = 30;
    /// The mesh workload window, ms.
    pub const M_WORKLOAD_MS: u64 = 3_000;
    /// How long a mesh link lives, ms.
    pub const M_HOLD_MS: u64 = 1_000;
    /// The first dials' spread, µs.
    pub const M_SPREAD_US: u64 = 200_000;
    /// The heartbeat tick, ms.
    pub const M_TICK_MS: (u64, u64) = (250, 1_500);
    /// The mesh connect timeout, ms.
    pub const M_CONNECT_MS: (u64, u64) = (100, 1_000);
    /// The mesh redial delay, ms.
    pub const M_REDIAL_MS: (u64, u64) = (50, 1_500);
    /// Most mesh faults.
    pub const M_FAULTS: usize = 4;
}

use bounds::*;

/// Which world a hunt generates for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum HuntWorld {
    /// Lanes and sender cases, alternating.
    Both,
    /// LaneRouter / OrderedDispatcher.
    Lanes,
    /// DistSender and its connections.
    Sender,
    /// N production nodes dialing each other.
    Mesh,
}

impl HuntWorld {
    /// Its name on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Both => "both",
            Self::Lanes => "lanes",
            Self::Sender => "sender",
            Self::Mesh => "mesh",
        }
    }

    /// Whether its cases run in `world`.
    #[must_use]
    pub fn covers(self, world: WorldKind) -> bool {
        match self {
            Self::Both => world != WorldKind::Mesh,
            Self::Lanes => world == WorldKind::Lanes,
            Self::Sender => world == WorldKind::Sender,
            Self::Mesh => world == WorldKind::Mesh,
        }
    }
}

fn us(micros: u64) -> Duration {
    Duration::from_micros(micros)
}

fn ordered((a, b): (u64, u64)) -> (u64, u64) {
    (a.min(b), a.max(b))
}

fn span((a, b): (u64, u64)) -> (Duration, Duration) {
    let (lo, hi) = ordered((a, b));
    (us(lo), us(hi))
}

/// A chance: zero half the time (a feature off), else up to `max`, in
/// millionths so a shrink step changes it by a whole unit.
fn chance(max: f64) -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        (1..=(max * 1e6) as u64).prop_map(|millionths| millionths as f64 / 1e6),
    ]
}

/// The preemption points' policy and the scheduling explorer's knobs: a
/// held task waits as long as a preempted point sleeps, so the sleep is
/// kept when either preempts.
fn preempt() -> impl Strategy<Value = (PreemptPolicy, Exploration)> {
    (
        chance(1.0),
        (0..=PREEMPT_US, 0..=PREEMPT_US),
        chance(1.0),
        chance(1.0),
    )
        .prop_map(|(chance, sleep, shuffle, awaits)| {
            let sleep = if chance > 0.0 || awaits > 0.0 {
                span(sleep)
            } else {
                (Duration::ZERO, Duration::ZERO)
            };
            (
                PreemptPolicy { chance, sleep },
                Exploration {
                    shuffle,
                    awaits,
                    hold: sleep,
                },
            )
        })
}

/// The lanes world's parameters.
pub fn lanes() -> impl Strategy<Value = LanesParams> {
    let workload = (
        1..=L_KEYS,
        1..=L_PRODUCERS,
        1..=L_ITEMS,
        (1..=L_BURST, 1..=L_BURST),
        (0..=L_GAP_US, 0..=L_GAP_US),
        (0..=L_PAUSE_US, 0..=L_PAUSE_US),
        (0..=L_HANDLER_US, 0..=L_HANDLER_US),
        chance(L_HOT_KEY),
    );
    let config = (
        prop::option::weighted(0.7, L_TTL_US.0..=L_TTL_US.1),
        prop_oneof![Just(Policy::Raw), Just(Policy::Reject), Just(Policy::Warn)],
        prop::option::weighted(0.6, 1..=L_CAPACITY),
        chance(L_PANIC),
        chance(L_PANIC),
        prop::option::weighted(0.3, 0..=L_DROP_AT_US),
        prop::option::weighted(0.2, 1..=L_STUCK),
        chance(L_BUGGIFY),
        preempt(),
    );
    (workload, config).prop_map(
        |(
            (keys, producers, items, burst, gap, pause, handler, hot_key),
            (ttl, policy, capacity, panic, sync_panic, drop_at, stuck, buggify, preempt),
        )| LanesParams {
            keys,
            producers,
            items_per_producer: items,
            burst: ordered(burst),
            gap: span(gap),
            pause: span(pause),
            handler: span(handler),
            hot_key,
            idle_ttl: ttl.map(us),
            // The dispatcher's policies need a limit.
            capacity: match policy {
                Policy::Raw => capacity,
                Policy::Reject | Policy::Warn => Some(capacity.unwrap_or(4)),
            },
            policy,
            panic_chance: panic,
            sync_panic_chance: sync_panic,
            drop_router_at: drop_at.map(us),
            stuck_keys: stuck.map_or(0, |stuck| stuck.min(keys - 1)),
            buggify,
            preempt: preempt.0,
            explore: preempt.1,
        },
    )
}

/// One fault as drawn: kind, peer index (taken modulo the peers), when, and
/// a length in thousandths of the kind's longest (so it scales with the
/// run's deadlines; for a torn frame, how far into the frame it tears).
type RawFault = (usize, u64, u64, u64);

fn fault() -> impl Strategy<Value = RawFault> {
    (
        0..FaultKind::ALL.len(),
        0..8u64,
        0..=S_FAULT_AT_US,
        1..=1_000u64,
    )
}

/// The sender world's parameters.
pub fn sender() -> impl Strategy<Value = SenderParams> {
    let workload = (
        1..=S_PEERS,
        0..=S_DATA,
        0..=S_LINKS,
        (0..=S_FRAME_BYTES, 0..=S_FRAME_BYTES),
        (0..=S_GAP_US, 0..=S_GAP_US),
        1..=S_DATA_CAPACITY,
        1..=S_CONTROL_CAPACITY,
    );
    let config = (
        S_WRITE_MS.0..=S_WRITE_MS.1,
        S_CONNECT_MS.0..=S_CONNECT_MS.1,
        prop::option::weighted(0.7, S_REDIAL_US.0..=S_REDIAL_US.1),
        536..=1_460u64,
        prop_oneof![Just(1u64), Just(2), Just(5), Just(10), Just(20)],
        4..=64u64,
        prop::option::weighted(0.2, 0..=S_SHUTDOWN_US),
        preempt(),
        prop::collection::vec(fault(), 0..=S_FAULTS),
    );
    (workload, config).prop_map(
        |(
            (peers, data_frames, links, frame_bytes, gap, data_capacity, control_capacity),
            (write_ms, connect_ms, redial, mss, tick_ms, tcp_capacity, shutdown, preempt, faults),
        )| {
            let write_timeout = Duration::from_millis(write_ms);
            let connect_timeout = Duration::from_millis(connect_ms);
            let mut faults: Vec<ScheduledFault> = faults
                .into_iter()
                .map(|(kind, peer, at, permille)| {
                    let kind = FaultKind::ALL[kind];
                    let longest = match kind {
                        FaultKind::Slow => write_timeout / (SLOW_FRACTION * 2),
                        FaultKind::Latency => connect_timeout / 4,
                        _ => write_timeout * 2,
                    };
                    let lasting = (longest * permille as u32 / 1_000).max(us(1));
                    ScheduledFault {
                        kind,
                        peer: peer % peers,
                        at: us(at),
                        lasting: if kind.lasts() {
                            lasting
                        } else {
                            Duration::ZERO
                        },
                        bytes: if kind == FaultKind::TornFrame {
                            // 1 to 39: inside the header for 7 in 39.
                            1 + (permille % (TORN_FRAME_LEN - 1)) as u32
                        } else {
                            0
                        },
                        // From the same gene: no case's other draws move
                        // (and `Payload`, unused, for the other kinds, as a
                        // file's sampling gives them).
                        split: if kind == FaultKind::OversizeFrame {
                            OversizeSplit::ALL[(permille % 3) as usize]
                        } else {
                            OversizeSplit::Payload
                        },
                    }
                })
                .collect();
            faults.sort_by_key(|f| (f.at, f.peer));
            SenderParams {
                peers,
                data_frames,
                links,
                frame_bytes: ordered(frame_bytes),
                gap: span(gap),
                data_capacity,
                control_capacity,
                write_timeout,
                connect_timeout,
                redial_after: redial.map(us),
                mss,
                tick: Duration::from_millis(tick_ms),
                tcp_capacity,
                faults,
                shutdown_at: shutdown.map(us),
                heartbeat: None,
                preempt: preempt.0,
                explore: preempt.1,
            }
        },
    )
}

/// A hunted trickle lasts at least this many heartbeat ticks: past the
/// frame deadline (two) and its slack at the hunt's shortest heartbeat and
/// longest simulation tick.
const TRICKLE_MIN_TICKS: f64 = 3.0;

/// How long a mesh fault of `kind` lasts for a length in thousandths: a
/// half-open drop always outlasts 1.5 ticks (shorter ones lose bytes no
/// real TCP would), a trickle always outlasts the frame deadline's bound,
/// the rest up to three ticks.
#[must_use]
pub fn mesh_lasting(kind: MeshFaultKind, heartbeat: Duration, permille: u64) -> Duration {
    if !kind.lasts() {
        return Duration::ZERO;
    }
    let share = permille.min(1_000) as f64 / 1_000.0;
    match kind {
        MeshFaultKind::HalfOpen => {
            heartbeat.mul_f64(HALF_OPEN_MIN_TICKS + 1.5 * share) + Duration::from_millis(1)
        }
        // Past the frame deadline's bound at every tick the hunt draws
        // (`hunted_trickles_outlast_the_frame_deadline`).
        MeshFaultKind::Trickle => heartbeat.mul_f64(TRICKLE_MIN_TICKS + share),
        _ => heartbeat.mul_f64(3.0 * share).max(Duration::from_millis(1)),
    }
}

/// The thousandths [`mesh_lasting`] turns into `lasting` (its inverse).
#[must_use]
pub fn mesh_permille(kind: MeshFaultKind, heartbeat: Duration, lasting: Duration) -> u64 {
    if !kind.lasts() {
        return 0;
    }
    let ticks = lasting.as_secs_f64() / heartbeat.as_secs_f64().max(1e-9);
    let share = match kind {
        MeshFaultKind::HalfOpen => (ticks - HALF_OPEN_MIN_TICKS) / 1.5,
        MeshFaultKind::Trickle => ticks - TRICKLE_MIN_TICKS,
        _ => ticks / 3.0,
    };
    ((share * 1_000.0).round().max(1.0) as u64).min(1_000)
}

/// The mesh world's parameters.
pub fn mesh() -> impl Strategy<Value = MeshParams> {
    let workload = (
        2..=M_NODES,
        (0..=M_LINKS, 0..=M_DATA),
        1..=M_WORKLOAD_MS,
        (0..=M_HOLD_MS, 0..=M_HOLD_MS),
        // Per pair: both first dials, and whether they coincide.
        prop::collection::vec((0..=M_SPREAD_US, 0..=M_SPREAD_US, any::<bool>()), 10),
    );
    let config = (
        M_TICK_MS.0..=M_TICK_MS.1,
        M_CONNECT_MS.0..=M_CONNECT_MS.1,
        M_REDIAL_MS.0..=M_REDIAL_MS.1,
        prop_oneof![Just(1u64), Just(5), Just(10)],
        prop::collection::vec(
            (
                0..MeshFaultKind::ALL.len(),
                0..8u64,
                1..8u64,
                0..=M_WORKLOAD_MS,
                1..=1_000u64,
            ),
            0..=M_FAULTS,
        ),
        preempt(),
    );
    (workload, config).prop_map(
        |(
            (nodes, (links, data), workload_ms, hold, dials),
            (tick_ms, connect_ms, redial_ms, sim_ms, faults, (_, explore)),
        )| {
            let heartbeat = Duration::from_millis(tick_ms);
            let n = nodes as usize;
            let mut first_dials = vec![vec![Duration::ZERO; n]; n];
            let pairs = (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b)));
            for ((a, b), (at_a, at_b, same)) in pairs.zip(dials) {
                first_dials[a][b] = us(at_a);
                first_dials[b][a] = if same { us(at_a) } else { us(at_b) };
            }
            let mut faults: Vec<MeshFault> = faults
                .into_iter()
                .map(|(kind, a, step, at_ms, permille)| {
                    let kind = MeshFaultKind::ALL[kind];
                    let a = a % nodes;
                    MeshFault {
                        kind,
                        a,
                        b: (a + 1 + step % (nodes - 1)) % nodes,
                        at: Duration::from_millis(at_ms.min(workload_ms)),
                        lasting: mesh_lasting(kind, heartbeat, permille),
                        frame: None,
                        node_frame: false,
                        before_hello: false,
                        // Written out by the shrink, so it replays as drawn.
                        by: (kind == MeshFaultKind::Misdial).then_some(
                            if nodes >= 3 && permille % 2 == 0 {
                                MisdialBy::Node
                            } else {
                                MisdialBy::Stranger
                            },
                        ),
                        hosts: 1,
                        // Written out by the shrink as drawn, as `by`.
                        hello: kind == MeshFaultKind::Flood && permille % 2 == 1,
                    }
                })
                .collect();
            faults.sort_by_key(|f| (f.at, f.a, f.b));
            MeshParams {
                nodes,
                links,
                data,
                workload: Duration::from_millis(workload_ms),
                hold: span((hold.0 * 1_000, hold.1 * 1_000)),
                first_dials,
                heartbeat,
                frame_timeout: crate::scenario::mesh_frame_deadline(heartbeat),
                connect_timeout: Duration::from_millis(connect_ms),
                descriptors: None,
                inbound_caps: None,
                redial_after: Duration::from_millis(redial_ms),
                tick: Duration::from_millis(sim_ms),
                faults,
                // The mesh has no preemption points: only the explorer.
                explore,
            }
        },
    )
}

/// A whole case for `world`: parameters and the seed the run uses.
pub fn case(world: HuntWorld) -> BoxedStrategy<(Params, u64)> {
    let lanes = (lanes(), any::<u64>()).prop_map(|(p, seed)| (Params::Lanes(p), seed));
    let sender = (sender(), any::<u64>()).prop_map(|(p, seed)| (Params::Sender(p), seed));
    match world {
        HuntWorld::Lanes => lanes.boxed(),
        HuntWorld::Sender => sender.boxed(),
        HuntWorld::Both => prop_oneof![lanes, sender].boxed(),
        HuntWorld::Mesh => (mesh(), any::<u64>())
            .prop_map(|(p, seed)| (Params::Mesh(p), seed))
            .boxed(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::mesh_trickle_bound;

    /// One list of every kind, each kind once: `index` is exhaustive, so
    /// a new variant cannot compile until it has a place, and this pins
    /// that the place holds it.
    #[test]
    fn every_fault_kind_is_in_all() {
        for (index, kind) in FaultKind::ALL.iter().enumerate() {
            assert_eq!(kind.index(), index, "{kind:?}");
        }
        for kind in FaultKind::DRAWN {
            assert_eq!(FaultKind::ALL[kind.index()], kind);
        }
        for (index, kind) in MeshFaultKind::ALL.iter().enumerate() {
            assert!(
                !MeshFaultKind::ALL[..index].contains(kind),
                "{kind:?} twice"
            );
        }
        for kind in MeshFaultKind::DRAWN {
            assert!(MeshFaultKind::ALL.contains(&kind), "{kind:?}");
        }
    }

    #[test]
    fn hunted_trickles_outlast_the_frame_deadline() {
        // The hunt's heartbeats and simulation ticks (`mesh`): a trickle
        // shorter than the bound could not show a node that never cuts it.
        for heartbeat_ms in [M_TICK_MS.0, 400, 1_000, M_TICK_MS.1] {
            let heartbeat = Duration::from_millis(heartbeat_ms);
            let bound = mesh_trickle_bound(
                crate::scenario::mesh_frame_deadline(heartbeat),
                Duration::from_millis(10),
            );
            for permille in [0, 1, 500, 1_000] {
                let lasting = mesh_lasting(MeshFaultKind::Trickle, heartbeat, permille);
                assert!(
                    lasting > bound,
                    "{lasting:?} at heartbeat {heartbeat:?}, permille {permille}: not past {bound:?}"
                );
                let back = mesh_permille(MeshFaultKind::Trickle, heartbeat, lasting);
                assert_eq!(back, permille.max(1), "heartbeat {heartbeat:?}");
            }
        }
    }
}
