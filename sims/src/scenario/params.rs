//! One run's parameters, drawn from its seed before the run starts (and
//! printed, so a reader of a failure knows exactly what ran).
//!
//! Swarm style: a per-run quantity (keys, capacity, TTL, ...) is drawn once;
//! a per-event quantity (gaps, handler times, bursts) gets a per-run
//! sub-range, and each event draws inside it. Different seeds thus explore
//! different *regimes*, not just different noise.

use std::fmt::{self, Write as _};
use std::time::Duration;

use super::sample::{fmt_duration, Dur, Sampled};
use super::spec::{
    Contract, FaultKind, FaultSpec, LanesSpec, MeshFaultKind, MeshFaultSpec, MeshSpec, MisdialBy,
    OversizeSplit, Policy, ScenarioFile, SenderSpec, TORN_FRAME_LEN,
};
use crate::coverage::PreemptPolicy;
use crate::explore::Exploration;
use crate::rng::SimRng;
use crate::world_kind::WorldKind;

/// A run's parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum Params {
    /// The lanes world's.
    Lanes(LanesParams),
    /// The sender world's.
    Sender(SenderParams),
    /// The mesh world's.
    Mesh(MeshParams),
}

/// A mesh fault at a time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshFault {
    pub kind: MeshFaultKind,
    pub a: u64,
    pub b: u64,
    pub at: Duration,
    pub lasting: Duration,
    /// trickle: the body length its header announces (`None`: the
    /// largest frame of its kind).
    pub frame: Option<u64>,
    /// trickle: a node-protocol frame, not a data frame.
    pub node_frame: bool,
    /// spend: the frames in place of a hello, before any proof.
    pub before_hello: bool,
    /// misdial: who answers (`None` for every other kind).
    pub by: Option<MisdialBy>,
    /// flood: how many addresses it comes from (1 for every other kind).
    pub hosts: u64,
    /// flood: each stream says hello, then nothing.
    pub hello: bool,
}

/// Who answers a misdial: as written, else drawn from `draws` (a stream of
/// its own, so no other draw of any file moves); a node only when the
/// mesh has a third one.
fn misdial_by(
    kind: MeshFaultKind,
    by: Option<MisdialBy>,
    nodes: u64,
    draws: &mut SimRng,
) -> Option<MisdialBy> {
    if kind != MeshFaultKind::Misdial {
        return None;
    }
    Some(match by {
        Some(by) => by,
        None if nodes < 3 => MisdialBy::Stranger,
        None => MisdialBy::ALL[draws.range(0, MisdialBy::ALL.len() as u64 - 1) as usize],
    })
}

/// How long after an accept fault ends a node may take to accept again:
/// the longest back-off between retries a node may use (hyper's and
/// lanesim's, 1 s). M7 probes only after it.
pub const ACCEPT_RECOVERY: Duration = Duration::from_secs(1);

/// The mesh world, sampled.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshParams {
    pub nodes: u64,
    pub links: u64,
    pub data: u64,
    pub workload: Duration,
    pub hold: (Duration, Duration),
    /// Per node, per other node: when its first dial leaves.
    pub first_dials: Vec<Vec<Duration>>,
    pub heartbeat: Duration,
    /// The nodes' frame deadline (`frame_timeout`).
    pub frame_timeout: Duration,
    pub connect_timeout: Duration,
    /// The descriptor limit each node is told (`None`: none).
    pub descriptors: Option<u64>,
    /// The inbound caps each node is configured with (`None`: its own).
    pub inbound_caps: Option<lanesim_target::node::InboundCaps>,
    pub redial_after: Duration,
    pub tick: Duration,
    pub faults: Vec<MeshFault>,
    /// Scheduling exploration (`shuffle`, `preempt_awaits`, `preempt_for`).
    pub explore: Exploration,
}

impl MeshParams {
    /// When the last fault is over (a restart's bounce, a heal).
    #[must_use]
    pub fn faults_end(&self) -> Duration {
        self.faults
            .iter()
            .map(|fault| fault.at + fault.lasting)
            .max()
            .unwrap_or_default()
    }

    /// How long after the workload and the faults end every pair must
    /// have converged (M1's bound): a silent generation's heartbeat (plus
    /// slack), then a redial and its connect, twice (a failed one first).
    #[must_use]
    pub fn settle(&self) -> Duration {
        settle_time(self.heartbeat, self.redial_after, self.connect_timeout)
    }

    /// When the world stops and compares the tables: after the settle
    /// time, and after the probe of every node's accepts (M7) has had its
    /// span from [`ACCEPT_RECOVERY`] past the last accept fault.
    #[must_use]
    pub fn end(&self) -> Duration {
        let settled = (self.workload + self.hold.1).max(self.faults_end()) + self.settle();
        let accepts = self
            .faults
            .iter()
            .filter(|fault| fault.kind.on_accepts())
            .map(|fault| fault.at + fault.lasting + accept_fault_tail(self.heartbeat))
            .max()
            .unwrap_or_default();
        settled.max(accepts)
    }

    /// Whether the run ends with a probe of every node's accepts (M7): it
    /// has a fault on accepts. (Only then: a probe is a host and a stream
    /// more, and every other run keeps the steps it always took.)
    #[must_use]
    pub fn probes_accepts(&self) -> bool {
        self.faults
            .iter()
            .any(|fault| fault.kind.on_accepts() || fault.kind == MeshFaultKind::Flood)
    }

    /// How long before the end the probe of every node's accepts begins
    /// (M7): two heartbeat ticks, room for a dial, its handshake and the
    /// keepalive that says the stream was accepted, and a retry.
    #[must_use]
    pub fn probe_span(&self) -> Duration {
        probe_span(self.heartbeat)
    }
}

/// [`MeshParams::settle`] from its parts (validation bounds a file's
/// worst case with it).
#[must_use]
pub fn settle_time(heartbeat: Duration, redial_after: Duration, connect: Duration) -> Duration {
    heartbeat * 2 + (redial_after + connect) * 2
}

/// [`MeshParams::probe_span`] at `heartbeat`.
#[must_use]
pub fn probe_span(heartbeat: Duration) -> Duration {
    heartbeat * 2
}

/// The mesh world's default frame deadline (its nodes' `frame_timeout`):
/// two heartbeat ticks, past the silence clock, so a stream gone silent is
/// the heartbeat's (M5) and a frame trickling in is this deadline's (M9).
#[must_use]
pub fn mesh_frame_deadline(heartbeat: Duration) -> Duration {
    heartbeat * 2
}

/// A mesh file's frame deadline: its `frame_timeout`, else the default.
#[must_use]
pub fn mesh_frame_timeout(spec: &MeshSpec) -> Duration {
    spec.frame_timeout.map_or_else(
        || mesh_frame_deadline(spec.heartbeat.map_or(Duration::from_secs(1), |d| d.0)),
        |d| d.0,
    )
}

/// How long after its header a trickled frame's stream may still be open
/// (M9): the frame deadline, the header's way to the node and the close's
/// way back (up to turmoil's largest latency, 100 ms, each), and four of
/// the simulation's ticks. A `trickle` must last longer, or a node that
/// never cuts it off could not be told from one that does.
#[must_use]
pub fn mesh_trickle_bound(frame_deadline: Duration, tick: Duration) -> Duration {
    frame_deadline + Duration::from_millis(200) + tick * 4
}

/// How long a run goes on after an accept fault ends: the recovery M7
/// allows, then the probe's span.
#[must_use]
pub fn accept_fault_tail(heartbeat: Duration) -> Duration {
    ACCEPT_RECOVERY + probe_span(heartbeat)
}

/// The lanes world, sampled.
#[derive(Clone, Debug, PartialEq)]
pub struct LanesParams {
    pub keys: u64,
    pub producers: u64,
    pub items_per_producer: u64,
    pub burst: (u64, u64),
    pub gap: (Duration, Duration),
    pub pause: (Duration, Duration),
    pub handler: (Duration, Duration),
    pub hot_key: f64,
    pub idle_ttl: Option<Duration>,
    pub capacity: Option<u64>,
    pub policy: Policy,
    pub panic_chance: f64,
    pub sync_panic_chance: f64,
    pub drop_router_at: Option<Duration>,
    pub stuck_keys: u64,
    pub buggify: f64,
    pub preempt: PreemptPolicy,
    /// Scheduling exploration (`shuffle`, `preempt_awaits`).
    pub explore: Exploration,
}

/// A fault at a time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScheduledFault {
    pub kind: FaultKind,
    pub peer: u64,
    pub at: Duration,
    pub lasting: Duration,
    /// torn_frame: bytes of the frame written before the close (else 0).
    pub bytes: u32,
    /// oversize_frame: which header length carries the excess (else
    /// `Payload`, unused).
    pub split: OversizeSplit,
}

/// The sender world, sampled.
#[derive(Clone, Debug, PartialEq)]
pub struct SenderParams {
    pub peers: u64,
    pub data_frames: u64,
    pub links: u64,
    pub frame_bytes: (u64, u64),
    pub gap: (Duration, Duration),
    pub data_capacity: u64,
    pub control_capacity: u64,
    pub write_timeout: Duration,
    pub connect_timeout: Duration,
    pub redial_after: Option<Duration>,
    pub mss: u64,
    pub tick: Duration,
    pub tcp_capacity: u64,
    pub faults: Vec<ScheduledFault>,
    pub shutdown_at: Option<Duration>,
    /// The local node's heartbeat tick, and a quarter of it the peers'
    /// keepalive period.
    pub heartbeat: Option<Duration>,
    pub preempt: PreemptPolicy,
    /// Scheduling exploration (`shuffle`, `preempt_awaits`).
    pub explore: Exploration,
}

/// A per-event quantity's sub-range for one run: drawn from the file's
/// range (swarm style), or, in an `exact` file, the range as written.
fn sub_range(value: &Sampled<u64>, rng: &mut SimRng, exact: bool) -> (u64, u64) {
    if exact {
        return value.bounds();
    }
    let (a, b) = (value.sample(rng), value.sample(rng));
    (a.min(b), a.max(b))
}

fn sub_span(value: &Sampled<Dur>, rng: &mut SimRng, exact: bool) -> (Duration, Duration) {
    if exact {
        let (lo, hi) = value.bounds();
        return (lo.0, hi.0);
    }
    let (a, b) = (value.sample(rng), value.sample(rng));
    (a.min(b), a.max(b))
}

pub(super) fn sample(file: &ScenarioFile, seed: u64) -> Params {
    let mut rng = SimRng::new(seed).fork("params");
    match (&file.lanes, &file.sender, &file.mesh) {
        (Some(lanes), _, _) => Params::Lanes(sample_lanes(lanes, &mut rng, file.exact)),
        (None, Some(sender), _) => Params::Sender(sample_sender(sender, &mut rng, file.exact)),
        (None, None, Some(mesh)) => Params::Mesh(sample_mesh(mesh, &mut rng, file.exact)),
        (None, None, None) => unreachable!("validated: every scenario has its world's table"),
    }
}

fn sample_lanes(spec: &LanesSpec, rng: &mut SimRng, exact: bool) -> LanesParams {
    let keys = spec.keys.sample(rng);
    let mut params = LanesParams {
        keys,
        producers: spec.producers.sample(rng),
        items_per_producer: spec.items_per_producer.sample(rng),
        burst: sub_range(&spec.burst, rng, exact),
        gap: sub_span(&spec.gap, rng, exact),
        pause: sub_span(&spec.pause, rng, exact),
        handler: sub_span(&spec.handler, rng, exact),
        hot_key: spec.hot_key.map_or(0.0, |p| p.sample(rng)),
        idle_ttl: spec.idle_ttl.map(|ttl| ttl.sample(rng)),
        capacity: spec.capacity.map(|capacity| capacity.sample(rng)),
        policy: spec.policy,
        panic_chance: spec.panic_chance.map_or(0.0, |p| p.sample(rng)),
        sync_panic_chance: spec.sync_panic_chance.map_or(0.0, |p| p.sample(rng)),
        drop_router_at: spec.drop_router_at.map(|at| at.sample(rng)),
        stuck_keys: spec
            .stuck_keys
            .map_or(0, |stuck| stuck.sample(rng).min(keys - 1)),
        buggify: spec.buggify.map_or(0.0, |p| p.sample(rng)),
        preempt: preempt_policy(spec.preempt.as_ref(), spec.preempt_for.as_ref(), rng, exact),
        explore: Exploration::default(),
    };
    // Drawn last, and only when written, so no other draw moves.
    params.explore = exploration(
        spec.shuffle.as_ref(),
        spec.preempt_awaits.as_ref(),
        params.preempt,
        rng,
    );
    params
}

/// The scheduling knobs: chances drawn only when the file writes them;
/// holds last as long as a preempted point sleeps.
fn exploration(
    shuffle: Option<&Sampled<f64>>,
    awaits: Option<&Sampled<f64>>,
    preempt: PreemptPolicy,
    rng: &mut SimRng,
) -> Exploration {
    Exploration {
        shuffle: shuffle.map_or(0.0, |p| p.sample(rng)),
        awaits: awaits.map_or(0.0, |p| p.sample(rng)),
        hold: preempt.sleep,
    }
}

fn preempt_policy(
    chance: Option<&Sampled<f64>>,
    sleep: Option<&Sampled<Dur>>,
    rng: &mut SimRng,
    exact: bool,
) -> PreemptPolicy {
    PreemptPolicy {
        chance: chance.map_or(0.0, |p| p.sample(rng)),
        sleep: sleep.map_or((Duration::ZERO, Duration::ZERO), |s| {
            sub_span(s, rng, exact)
        }),
    }
}

/// How far into its frame a `torn_frame` peer tears (0 for every other
/// kind, with no draw).
fn torn_bytes(kind: FaultKind, bytes: Option<&Sampled<u64>>, rng: &mut SimRng) -> u32 {
    if kind != FaultKind::TornFrame {
        return 0;
    }
    let bytes = match bytes {
        Some(bytes) => bytes.sample(rng),
        None => rng.range(1, TORN_FRAME_LEN - 1),
    };
    u32::try_from(bytes.clamp(1, TORN_FRAME_LEN - 1)).expect("under 40")
}

/// Where an `oversize_frame` header puts its excess: the file's, else
/// drawn from `splits` (a stream of its own, so the other draws of every
/// scenario stay where they were); `Payload`, with no draw, for other kinds.
fn oversize_split(
    kind: FaultKind,
    split: Option<OversizeSplit>,
    splits: &mut SimRng,
) -> OversizeSplit {
    match (kind, split) {
        (FaultKind::OversizeFrame, Some(split)) => split,
        (FaultKind::OversizeFrame, None) => {
            OversizeSplit::ALL[splits.range(0, OversizeSplit::ALL.len() as u64 - 1) as usize]
        }
        _ => OversizeSplit::Payload,
    }
}

fn sample_sender(spec: &SenderSpec, rng: &mut SimRng, exact: bool) -> SenderParams {
    let mut splits = rng.fork("oversize split");
    let peers = spec.peers.sample(rng);
    let write_timeout = spec
        .write_timeout
        .map_or(Duration::from_secs(5), |t| t.sample(rng));
    let mut faults: Vec<ScheduledFault> = spec
        .fault
        .iter()
        .map(|fault| ScheduledFault {
            kind: fault.kind,
            peer: fault.peer.sample(rng).min(peers - 1),
            at: fault.at.sample(rng),
            lasting: fault.lasting.map_or(Duration::ZERO, |d| d.sample(rng)),
            // Drawn only for a tear, so no other scenario's draws move.
            bytes: torn_bytes(fault.kind, fault.bytes.as_ref(), rng),
            split: oversize_split(fault.kind, fault.split, &mut splits),
        })
        .collect();
    let data_frames = spec.data_frames.sample(rng);
    let links = spec.links.sample(rng);
    let gap = sub_span(&spec.gap, rng, exact);
    // Every workload step is followed by a gap of at least `gap.0`, and
    // there are at least `data_frames + links` steps: chaos faults land
    // before the workload can have ended, so each one meets traffic.
    let workload_floor_us = ((data_frames + links) * gap.0.as_micros() as u64).max(1000);
    let connect_timeout = spec
        .connect_timeout
        .map_or(Duration::from_secs(1), |t| t.sample(rng));
    let chaos = spec.chaos.map_or(0, |n| n.sample(rng));
    let kinds = spec
        .chaos_kinds
        .clone()
        .unwrap_or_else(|| FaultKind::DRAWN.to_vec());
    for _ in 0..chaos {
        if kinds.is_empty() {
            break;
        }
        let kind = kinds[rng.range(0, kinds.len() as u64 - 1) as usize];
        let deadline_ms = write_timeout.as_millis() as u64;
        // A slow peer's read interval stays far under the deadline: slow is
        // not wedged, and a long interval would only starve the run.
        // Latency stays well inside the connect timeout: a link a round
        // trip cannot cross in time is a partition, which chaos has too.
        let lasting_ms = match kind {
            FaultKind::Slow => rng.range(1, (deadline_ms / 50).max(1)),
            FaultKind::Latency => rng.range(1, (connect_timeout.as_millis() as u64 / 4).max(1)),
            _ => rng.range(1, deadline_ms + 1),
        };
        faults.push(ScheduledFault {
            kind,
            peer: rng.range(0, peers - 1),
            at: Duration::from_micros(rng.range(0, workload_floor_us)),
            // (drawn either way, so the draws stay in step)
            lasting: if kind.lasts() {
                Duration::from_millis(lasting_ms)
            } else {
                Duration::ZERO
            },
            bytes: torn_bytes(kind, None, rng),
            split: oversize_split(kind, None, &mut splits),
        });
    }
    faults.sort_by_key(|fault| (fault.at, fault.peer));
    let mut params = SenderParams {
        peers,
        data_frames,
        links,
        frame_bytes: sub_range(&spec.frame_bytes, rng, exact),
        gap,
        data_capacity: spec.data_capacity.map_or(1024, |c| c.sample(rng)),
        control_capacity: spec.control_capacity.map_or(256, |c| c.sample(rng)),
        write_timeout,
        connect_timeout,
        redial_after: spec.redial_after.map(|t| t.sample(rng)),
        mss: spec.mss.map_or(1460, |m| m.sample(rng)),
        tick: spec.tick.map_or(Duration::from_millis(1), |t| t.0),
        tcp_capacity: spec.tcp_capacity.map_or(64, |c| c.sample(rng)),
        faults,
        shutdown_at: spec.shutdown_at.map(|at| at.sample(rng)),
        heartbeat: spec.heartbeat.map(|h| h.0),
        preempt: preempt_policy(spec.preempt.as_ref(), spec.preempt_for.as_ref(), rng, exact),
        explore: Exploration::default(),
    };
    // Drawn last, and only when written, so no other draw moves.
    params.explore = exploration(
        spec.shuffle.as_ref(),
        spec.preempt_awaits.as_ref(),
        params.preempt,
        rng,
    );
    params
}

/// A half-open drop must outlast the heartbeat by this factor: a shorter
/// drop can lose a whole frame from a stream that then goes on, which no
/// real TCP does (it retransmits).
pub const HALF_OPEN_MIN_TICKS: f64 = 1.5;

/// The mesh simulation's tick a file asks for (default 1 ms).
#[must_use]
pub fn mesh_tick(spec: &MeshSpec) -> Duration {
    spec.tick.map_or(Duration::from_millis(1), |t| t.0)
}

fn sample_mesh(spec: &MeshSpec, rng: &mut SimRng, exact: bool) -> MeshParams {
    let nodes = spec.nodes.sample(rng);
    let links = spec.links.sample(rng);
    let data = spec.data.map_or(0, |d| d.sample(rng));
    let hold = sub_span(&spec.hold, rng, exact);
    let cross = spec.cross_dial.map_or(0.0, |p| p.sample(rng));
    let spread = spec
        .dial_spread
        .map_or(Duration::from_millis(100), |d| d.0)
        .as_micros() as u64;
    let heartbeat = spec.heartbeat.map_or(Duration::from_secs(1), |d| d.0);
    let connect_timeout = spec
        .connect_timeout
        .map_or(Duration::from_millis(500), |d| d.0);
    let redial_after = spec
        .redial_after
        .map_or(Duration::from_millis(300), |d| d.sample(rng));
    let n = nodes as usize;
    let mut first_dials = vec![vec![Duration::ZERO; n]; n];
    let pairs = if spec.first_dials.is_some() {
        Vec::new()
    } else {
        (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .collect()
    };
    if let Some(written) = &spec.first_dials {
        for (a, row) in written.iter().enumerate().take(n) {
            for (b, at) in row.iter().enumerate().take(n) {
                first_dials[a][b] = at.0;
            }
        }
    }
    for (a, b) in pairs {
        let at_a = Duration::from_micros(rng.range(0, spread));
        let at_b = if rng.chance(cross) {
            at_a
        } else {
            Duration::from_micros(rng.range(0, spread))
        };
        first_dials[a][b] = at_a;
        first_dials[b][a] = at_b;
    }
    let mut answerers = rng.fork("misdial by");
    let mut faults: Vec<MeshFault> = spec
        .fault
        .iter()
        .map(|fault| {
            let a = fault.a.sample(rng).min(nodes - 1);
            let b = fault
                .b
                .map_or((a + 1) % nodes, |b| b.sample(rng).min(nodes - 1));
            // Ranged `a` and `b` may draw the same node; a fault between a
            // node and itself would silently do nothing (validation refuses
            // only equal fixed values), so `b` moves to the next node. No
            // extra draw: the rest of the run samples as before.
            let own_name_claimed = fault.kind == MeshFaultKind::Claim
                && fault.b.is_some_and(|b| {
                    b.bounds() == fault.a.bounds() && b.bounds().0 == b.bounds().1
                });
            let b = if b == a && !fault.kind.one_node() && !own_name_claimed {
                (a + 1) % nodes
            } else {
                b
            };
            MeshFault {
                kind: fault.kind,
                a,
                b,
                at: fault.at.sample(rng),
                lasting: fault.lasting.map_or(Duration::ZERO, |d| d.sample(rng)),
                // Drawn only when written, so no other file's draws move.
                frame: fault.frame.map(|frame| frame.sample(rng)),
                node_frame: fault.node_frame.unwrap_or(false),
                before_hello: fault.before_hello.unwrap_or(false),
                by: misdial_by(fault.kind, fault.by, nodes, &mut answerers),
                hosts: fault.hosts.unwrap_or(1),
                hello: fault.hello.unwrap_or(false),
            }
        })
        .collect();
    let chaos = spec.chaos.map_or(0, |n| n.sample(rng));
    let kinds = spec
        .chaos_kinds
        .clone()
        .unwrap_or_else(|| MeshFaultKind::DRAWN.to_vec());
    let window = spec.workload.0.as_micros() as u64;
    for _ in 0..chaos {
        if kinds.is_empty() {
            break;
        }
        let kind = kinds[rng.range(0, kinds.len() as u64 - 1) as usize];
        let a = rng.range(0, nodes - 1);
        let b = (a + rng.range(1, nodes - 1)) % nodes;
        let at = Duration::from_micros(rng.range(0, window));
        let beat = heartbeat.as_millis() as u64;
        let lasting_ms = match kind {
            MeshFaultKind::HalfOpen => rng.range(beat * 3 / 2 + 1, beat * 3),
            MeshFaultKind::Trickle => {
                let bound = mesh_trickle_bound(mesh_frame_timeout(spec), mesh_tick(spec))
                    .as_millis() as u64;
                rng.range(bound + 1, bound + beat)
            }
            _ => rng.range(1, beat * 3),
        };
        faults.push(MeshFault {
            kind,
            a,
            b,
            at,
            lasting: if kind.lasts() {
                Duration::from_millis(lasting_ms)
            } else {
                Duration::ZERO
            },
            frame: None,
            node_frame: false,
            before_hello: false,
            by: misdial_by(kind, None, nodes, &mut answerers),
            hosts: 1,
            hello: false,
        });
    }
    faults.sort_by_key(|fault| (fault.at, fault.a, fault.b));
    // Drawn last, and only when written, so no other draw moves.
    let held = preempt_policy(None, spec.preempt_for.as_ref(), rng, exact);
    let explore = exploration(
        spec.shuffle.as_ref(),
        spec.preempt_awaits.as_ref(),
        held,
        rng,
    );
    MeshParams {
        nodes,
        links,
        data,
        workload: spec.workload.0,
        hold,
        first_dials,
        heartbeat,
        frame_timeout: mesh_frame_timeout(spec),
        connect_timeout,
        descriptors: spec.descriptors,
        inbound_caps: spec
            .inbound_caps
            .map(|caps| lanesim_target::node::InboundCaps {
                handshakes: caps.handshakes,
                connections: caps.connections,
            }),
        redial_after,
        tick: mesh_tick(spec),
        faults,
        explore,
    }
}

struct D(Duration);

impl fmt::Display for D {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_duration(self.0, f)
    }
}

fn span(range: (Duration, Duration)) -> String {
    format!("{}..{}", D(range.0), D(range.1))
}

fn preempt(policy: PreemptPolicy) -> String {
    format!("{:.2}@{}", policy.chance, span(policy.sleep))
}

/// The scheduling knobs, only when a run explores (every other run prints
/// as it always did).
fn explored(f: &mut fmt::Formatter<'_>, explore: Exploration) -> fmt::Result {
    if explore.explores() {
        write!(
            f,
            " shuffle={:.2} preempt_awaits={:.2}",
            explore.shuffle, explore.awaits
        )?;
    }
    Ok(())
}

fn opt(value: Option<Duration>) -> String {
    value.map_or_else(|| "none".into(), |d| D(d).to_string())
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Lanes(p) => write!(
                f,
                "keys={} producers={} items/producer={} burst={}..{} gap={} pause={} handler={} hot_key={:.2} \
                 idle_ttl={} capacity={} policy={:?} panic={:.3} sync_panic={:.3} drop_router_at={} stuck_keys={} \
                 buggify={:.2} preempt={}",
                p.keys,
                p.producers,
                p.items_per_producer,
                p.burst.0,
                p.burst.1,
                span(p.gap),
                span(p.pause),
                span(p.handler),
                p.hot_key,
                opt(p.idle_ttl),
                p.capacity.map_or_else(|| "none".into(), |c| c.to_string()),
                p.policy,
                p.panic_chance,
                p.sync_panic_chance,
                opt(p.drop_router_at),
                p.stuck_keys,
                p.buggify,
                preempt(p.preempt),
            )
            .and_then(|()| explored(f, p.explore)),
            Self::Sender(p) => {
                let mut faults = String::new();
                for fault in &p.faults {
                    let _ = write!(faults, " {:?}(peer{} at {} for {})", fault.kind, fault.peer, D(fault.at), D(fault.lasting));
                }
                write!(
                    f,
                    "peers={} data_frames={} links={} frame_bytes={}..{} gap={} data_capacity={} control_capacity={} \
                     write_timeout={} connect_timeout={} redial_after={} mss={} tick={} tcp_capacity={} \
                     shutdown_at={} preempt={} faults=[{}]",
                    p.peers,
                    p.data_frames,
                    p.links,
                    p.frame_bytes.0,
                    p.frame_bytes.1,
                    span(p.gap),
                    p.data_capacity,
                    p.control_capacity,
                    D(p.write_timeout),
                    D(p.connect_timeout),
                    opt(p.redial_after),
                    p.mss,
                    D(p.tick),
                    p.tcp_capacity,
                    opt(p.shutdown_at),
                    preempt(p.preempt),
                    faults.trim(),
                )?;
                // Only when set: every other run prints as it always did.
                if let Some(heartbeat) = p.heartbeat {
                    write!(f, " heartbeat={}", D(heartbeat))?;
                }
                explored(f, p.explore)
            }
            Self::Mesh(p) => {
                let mut faults = String::new();
                for fault in &p.faults {
                    let _ = write!(
                        faults,
                        " {:?}(node{} node{} at {} for {})",
                        fault.kind,
                        fault.a,
                        fault.b,
                        D(fault.at),
                        D(fault.lasting)
                    );
                }
                let simultaneous = (0..p.nodes as usize)
                    .flat_map(|a| (a + 1..p.nodes as usize).map(move |b| (a, b)))
                    .filter(|&(a, b)| p.first_dials[a][b] == p.first_dials[b][a])
                    .count();
                write!(
                    f,
                    "nodes={} links={} data={} workload={} hold={} simultaneous_first_dials={} heartbeat={} \
                     frame_timeout={} connect_timeout={} redial_after={} tick={} faults=[{}]",
                    p.nodes,
                    p.links,
                    p.data,
                    D(p.workload),
                    span(p.hold),
                    simultaneous,
                    D(p.heartbeat),
                    D(p.frame_timeout),
                    D(p.connect_timeout),
                    D(p.redial_after),
                    D(p.tick),
                    faults.trim(),
                )?;
                explored(f, p.explore)
            }
        }
    }
}

fn one(value: u64) -> Sampled<u64> {
    Sampled::One(value)
}

fn dur(value: Duration) -> Sampled<Dur> {
    Sampled::One(Dur(value))
}

fn span_of((lo, hi): (Duration, Duration)) -> Sampled<Dur> {
    Sampled::Range(Dur(lo), Dur(hi))
}

/// A chance as a file says it: absent when zero.
fn chance_of(p: f64) -> Option<Sampled<f64>> {
    (p > 0.0).then_some(Sampled::One(p))
}

impl Params {
    /// Every contract a simulated world decides for these parameters (S8
    /// only with redials).
    #[must_use]
    pub fn contracts(&self) -> Vec<Contract> {
        Contract::ALL
            .into_iter()
            .filter(|c| c.undecidable_in_simulation().is_none())
            .filter(|c| match self {
                Self::Lanes(_) => c.world() == WorldKind::Lanes,
                Self::Sender(p) => {
                    c.world() == WorldKind::Sender
                        && (*c != Contract::S8 || p.redial_after.is_some())
                }
                Self::Mesh(_) => c.world() == WorldKind::Mesh,
            })
            .collect()
    }

    /// The parameters as one JSON object: the world's name and its table,
    /// keyed and written as an exact scenario file writes them
    /// (`--format json` and `jsonl`).
    #[must_use]
    pub fn to_object(&self) -> serde_json::Value {
        let (world, table) = match self {
            Self::Lanes(p) => ("lanes", serde_json::to_value(p.to_spec())),
            Self::Sender(p) => ("sender", serde_json::to_value(p.to_spec())),
            Self::Mesh(p) => ("mesh", serde_json::to_value(p.to_spec())),
        };
        serde_json::json!({ "world": world, world: table.unwrap_or_default() })
    }

    /// The `exact` scenario file that pins these parameters: sampled with
    /// any seed, it gives back exactly these (per-run values as single
    /// values, per-event sub-ranges as written, every fault listed). It
    /// checks every contract its world decides, within the virtual-time
    /// `budget` of the run it pins.
    #[must_use]
    pub fn to_file(&self, description: String, seed: u64, budget: Duration) -> ScenarioFile {
        let (world, lanes, sender, mesh) = match self {
            Self::Lanes(p) => (WorldKind::Lanes, Some(p.to_spec()), None, None),
            Self::Sender(p) => (WorldKind::Sender, None, Some(p.to_spec()), None),
            Self::Mesh(p) => (WorldKind::Mesh, None, None, Some(p.to_spec())),
        };
        ScenarioFile {
            name: None,
            description,
            world,
            checks: self.contracts(),
            seeds: Some(super::seeds::SeedRange::one(seed)),
            budget: Some(Dur(budget)),
            exact: true,
            real_time_scale: None,
            reaches: Vec::new(),
            lanes,
            sender,
            mesh,
        }
    }
}

impl MeshParams {
    /// Every first dial is written out: the file pins the schedule.
    fn to_spec(&self) -> MeshSpec {
        MeshSpec {
            nodes: one(self.nodes),
            links: one(self.links),
            data: Some(one(self.data)),
            workload: Dur(self.workload),
            hold: span_of(self.hold),
            cross_dial: None,
            dial_spread: None,
            first_dials: Some(
                self.first_dials
                    .iter()
                    .map(|row| row.iter().map(|at| Dur(*at)).collect())
                    .collect(),
            ),
            heartbeat: Some(Dur(self.heartbeat)),
            frame_timeout: (self.frame_timeout != mesh_frame_deadline(self.heartbeat))
                .then_some(Dur(self.frame_timeout)),
            connect_timeout: Some(Dur(self.connect_timeout)),
            descriptors: self.descriptors,
            inbound_caps: self
                .inbound_caps
                .map(|caps| crate::scenario::spec::InboundCapsSpec {
                    handshakes: caps.handshakes,
                    connections: caps.connections,
                }),
            redial_after: Some(dur(self.redial_after)),
            tick: Some(Dur(self.tick)),
            chaos: None,
            chaos_kinds: None,
            shuffle: chance_of(self.explore.shuffle),
            preempt_awaits: chance_of(self.explore.awaits),
            preempt_for: (self.explore.awaits > 0.0).then_some(span_of(self.explore.hold)),
            fault: self
                .faults
                .iter()
                .map(|f| MeshFaultSpec {
                    kind: f.kind,
                    a: one(f.a),
                    b: Some(one(f.b)),
                    at: dur(f.at),
                    lasting: f.kind.lasts().then_some(dur(f.lasting)),
                    frame: f.frame.map(one),
                    node_frame: f.node_frame.then_some(true),
                    before_hello: f.before_hello.then_some(true),
                    by: f.by,
                    hosts: (f.hosts > 1).then_some(f.hosts),
                    hello: f.hello.then_some(true),
                })
                .collect(),
        }
    }
}

impl LanesParams {
    fn to_spec(&self) -> LanesSpec {
        let preempting = self.preempt.chance > 0.0 || self.explore.awaits > 0.0;
        LanesSpec {
            keys: one(self.keys),
            producers: one(self.producers),
            items_per_producer: one(self.items_per_producer),
            burst: Sampled::Range(self.burst.0, self.burst.1),
            gap: span_of(self.gap),
            pause: span_of(self.pause),
            hot_key: chance_of(self.hot_key),
            handler: span_of(self.handler),
            idle_ttl: self.idle_ttl.map(dur),
            capacity: self.capacity.map(one),
            policy: self.policy,
            panic_chance: chance_of(self.panic_chance),
            sync_panic_chance: chance_of(self.sync_panic_chance),
            drop_router_at: self.drop_router_at.map(dur),
            stuck_keys: (self.stuck_keys > 0).then_some(one(self.stuck_keys)),
            buggify: chance_of(self.buggify),
            preempt: chance_of(self.preempt.chance),
            preempt_for: preempting.then_some(span_of(self.preempt.sleep)),
            shuffle: chance_of(self.explore.shuffle),
            preempt_awaits: chance_of(self.explore.awaits),
        }
    }
}

impl SenderParams {
    fn to_spec(&self) -> SenderSpec {
        let preempting = self.preempt.chance > 0.0 || self.explore.awaits > 0.0;
        SenderSpec {
            peers: one(self.peers),
            data_frames: one(self.data_frames),
            links: one(self.links),
            frame_bytes: Sampled::Range(self.frame_bytes.0, self.frame_bytes.1),
            gap: span_of(self.gap),
            data_capacity: Some(one(self.data_capacity)),
            control_capacity: Some(one(self.control_capacity)),
            write_timeout: Some(dur(self.write_timeout)),
            connect_timeout: Some(dur(self.connect_timeout)),
            redial_after: self.redial_after.map(dur),
            mss: Some(one(self.mss)),
            tick: Some(Dur(self.tick)),
            tcp_capacity: Some(one(self.tcp_capacity)),
            chaos: None,
            chaos_kinds: None,
            shutdown_at: self.shutdown_at.map(dur),
            heartbeat: self.heartbeat.map(Dur),
            preempt: chance_of(self.preempt.chance),
            preempt_for: preempting.then_some(span_of(self.preempt.sleep)),
            shuffle: chance_of(self.explore.shuffle),
            preempt_awaits: chance_of(self.explore.awaits),
            fault: {
                // In the order sampling gives them back.
                let mut faults = self.faults.clone();
                faults.sort_by_key(|fault| (fault.at, fault.peer));
                faults
            }
            .iter()
            .map(|f| FaultSpec {
                kind: f.kind,
                peer: one(f.peer),
                at: dur(f.at),
                lasting: f.kind.lasts().then_some(dur(f.lasting)),
                bytes: (f.kind == FaultKind::TornFrame).then_some(one(u64::from(f.bytes))),
                split: (f.kind == FaultKind::OversizeFrame).then_some(f.split),
            })
            .collect(),
        }
    }
}
