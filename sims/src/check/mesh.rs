//! The mesh contracts (M1-M8), decided over the mesh world's log.
//!
//! Model. A generation is named by (node, incarnation, peer, generation):
//! a restarted node's manager counts generations afresh, so the
//! incarnation (from `NodeStarted`, in log order) is part of the name. A
//! socket is named by its dialer's address, which both ends log, so the
//! two ends of one connection are matched by socket, never by generation
//! number. A crashed incarnation's obligations end at its crash: its links
//! died with it (the other ends' obligations do not end).
//!
//! - M1 pair agreement: at the end, every pair of live nodes holds one live
//!   connection each way, and it is the same socket on both ends; and
//!   after two nodes dial each other at once (a cross-dial, or first dials
//!   in the same instant), they agree on
//!   one live socket within [`convergence_bound`], with no redial: the
//!   tie-break settles it in the dials' own round trips (redials that
//!   cross in one instant are such a pair too). Unless the
//!   connect timeout is shorter than a dial's round trips
//!   ([`CheckContext::dial_round_trips`]), a dial of the pair timed out and
//!   neither end registered a connection of the pair meanwhile: the link
//!   was slower than the timeout, not the tie-break wrong, and one redial
//!   is allowed.
//! - M2 no lost death signal: every link made is settled on the maker's
//!   end, by its EXIT arriving on the socket it was made over or by a
//!   `noconnection` there; every LINK that arrived is settled on the
//!   learner's end, by its EXIT on the same generation or a
//!   `noconnection` there. An EXIT arriving over another socket than its
//!   link's is a breach at once (DC-2 across the mesh).
//! - M3 no spurious `noconnection`: only for a link whose generation went
//!   down on that end before, and once per link and end.
//! - M4 the down hook fires at most once per generation, only for one that
//!   came up, and every generation that came up and is not a node's live
//!   one at the end went down.
//! - M6 FIFO per connection: the data frames one node sent that arrive on
//!   one generation arrive in the order sent, and no frame arrives twice
//!   anywhere.
//! - M5 a generation that can hear nothing from its peer (a partition, a
//!   half-open link, a crashed peer, a silent squatter) goes down within the
//!   heartbeat tick plus slack ([`silence_slack`]).
//! - M7 a node accepts for its whole life: at the end, after every fault
//!   (resets before accept, descriptors exhausted, ...), a fresh stream
//!   that dials a live node and proves the cookie is accepted: the node writes to
//!   it (a keepalive) before the probe gives up (`MeshProbe`); so is one
//!   that dials a node 1 s after an accept fault on it ended; and a node
//!   out of descriptors backs off instead of spinning on `EMFILE`
//!   ([`exhausted_accepts_allowed`]).
//! - M8 only proven peers: a stream whose peer did not prove the cookie
//!   (the impostor's) is never registered (no `MeshUp` on its socket) and
//!   is written nothing after the node's challenge (`MeshImpostor`).
//! - M9 no node pays for others' spending: a generation between two nodes
//!   never goes down `OverBudget`. Nodes' own frames are a few bytes, never
//!   over a share of any budget: only hosts that hold most of a large frame
//!   (the `spend` fault) may be refused for it. And spending time is
//!   bounded too: a frame trickled in slower than the frame deadline (the
//!   `trickle` fault) has its stream closed within
//!   [`mesh_trickle_bound`] of its header.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::Duration;

use super::{CheckContext, Collector, Violation};
use crate::event::{DialFailure, Down, Event, LinkMsg, LinkSide, MeshFaultApplied, Record, Side};
use crate::scenario::{mesh_trickle_bound, Contract};

/// (node, incarnation, peer, generation).
type Gen = (u64, u64, u64, u64);
/// (node, incarnation).
type Incarnation = (u64, u64);
/// Per (node, peer): (record, time, the live socket after it).
type Timeline = Vec<(usize, Duration, Option<SocketAddr>)>;
/// (node, incarnation, link, side).
type Delivery = (u64, u64, u64, LinkSide);

/// How late after a tick of silence a down may come: a segment sent just
/// before the silence may still arrive up to turmoil's largest latency
/// (100 ms) later, and times are seen at the simulation's tick.
#[must_use]
pub fn silence_slack(context: &CheckContext) -> Duration {
    Duration::from_millis(100) + context.tick * 4
}

/// How soon after a cross-dial both ends must hold the same live socket:
/// a connect and its handshake (within the connect timeout), a few
/// segments at up to turmoil's largest latency, a few ticks. A missing
/// tie-break tears both connections down and needs a redial to recover.
#[must_use]
pub fn convergence_bound(context: &CheckContext) -> Duration {
    context.connect_timeout + Duration::from_millis(400) + context.tick * 4
}

/// What a lasting fault does to what the two ends hear of each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Silence {
    /// Nothing crosses either way (a held partition).
    Both,
    /// Nothing crosses from `a` to `b` (a half-open link).
    FromAToB,
    /// Everything still crosses (latency, a wedged or slow reader).
    None,
}

/// How a lasting fault delays what was already sent: bytes a peer wrote
/// before it fell silent (a crash) still reach the other end this late.
#[derive(Clone, Copy, Debug)]
enum Lag {
    /// Delivered as on a healthy link (within the slack).
    None,
    /// What the other end sends to `reader` (to either end, if `None`) is
    /// held back until the fault ends: a backlog written before a crash is
    /// read then (a slow or wedged reader; a partition, whose segments are
    /// delivered on heal).
    HeldUntilEnd { reader: Option<u64> },
    /// Each way carries this much more latency.
    Latency(Duration),
}

/// A lasting fault on a pair.
#[derive(Clone, Copy, Debug)]
struct Lasting {
    a: u64,
    b: u64,
    silence: Silence,
    lag: Lag,
    start: Duration,
    end: Option<Duration>,
    /// The record that began it.
    cause: usize,
}

impl Lasting {
    /// Whether `to` hears nothing from `from` while it lasts.
    fn silences(&self, from: u64, to: u64) -> bool {
        match self.silence {
            Silence::Both => (from, to) == (self.a, self.b) || (from, to) == (self.b, self.a),
            Silence::FromAToB => (from, to) == (self.a, self.b),
            Silence::None => false,
        }
    }
}

/// The trickler's stream (`MeshTrickle`).
#[derive(Clone, Copy, Debug)]
struct Trickle {
    record: usize,
    node: u64,
    socket: SocketAddr,
    /// When its header was written.
    began: Duration,
    held: Duration,
    sent: u64,
    closed: bool,
}

/// An impostor's stream (`MeshImpostor`).
#[derive(Clone, Copy, Debug)]
struct Impostor {
    record: usize,
    node: u64,
    claimed: u64,
    socket: SocketAddr,
    read: u64,
}

#[derive(Default)]
struct Model {
    /// Per (node, peer): (record, time, live socket after it).
    live: BTreeMap<(u64, u64), Timeline>,
    /// Per (node, peer): the live generation now (while building).
    current: BTreeMap<(u64, u64), Gen>,
    /// Cross-dials: (record, time, a, b).
    cross_dials: Vec<(usize, Duration, u64, u64)>,
    /// Lasting faults on a pair, ended or not. The world runs at most one
    /// per link at a time, so one may be open per pair.
    lasting: Vec<Lasting>,
    open_lasting: BTreeMap<(u64, u64), Lasting>,
    /// Dials that timed out: (time, node, peer).
    dial_timeouts: Vec<(Duration, u64, u64)>,
    /// Restarts: (node, time of the bounce).
    bounced: Vec<(u64, Duration)>,
    /// Every fault: (record, time, nodes it touches).
    touches: Vec<(usize, Duration, u64, u64)>,
    /// Faults on one node's accepts and dials: (node, start, end), the end
    /// `None` while open.
    accept_faults: Vec<(u64, Duration, Option<Duration>)>,
    /// The end's probes: (record, node, accepted, attempts).
    probes: Vec<(usize, u64, bool, u64)>,
    /// Ended exhaustions: (record, node, how long, accepts that failed).
    exhaustions: Vec<(usize, u64, Duration, u64)>,
    incarnation: BTreeMap<u64, u64>,
    ups: BTreeMap<Gen, (usize, SocketAddr, Duration)>,
    downs: BTreeMap<Gen, Vec<(usize, Duration)>>,
    crashed: BTreeMap<Incarnation, Duration>,
    /// (maker incarnation, link) -> (record, generation made over).
    linked: Vec<(usize, Gen, u64)>,
    /// Data arrivals: (record, receiving generation, sequence number).
    data: Vec<(usize, Gen, u64)>,
    /// Arrivals: (learner gen, link, msg) with the record.
    arrived: Vec<(usize, Gen, u64, LinkMsg)>,
    /// (node, incarnation, link, side) -> records.
    noconnections: BTreeMap<Delivery, Vec<(usize, Gen)>>,
    squats: BTreeMap<SocketAddr, usize>,
    /// The impostors' streams, as each ended.
    impostors: Vec<Impostor>,
    /// The trickler's streams, as each ended.
    trickles: Vec<Trickle>,
    table: BTreeMap<(u64, u64), (usize, Option<SocketAddr>)>,
    end: Duration,
    finished: bool,
}

impl Model {
    fn inc(&self, node: u64) -> u64 {
        self.incarnation.get(&node).copied().unwrap_or(0)
    }

    fn build(records: &[Record]) -> Self {
        let mut m = Model::default();
        for (index, record) in records.iter().enumerate() {
            let at = record.at;
            match record.event {
                Event::NodeStarted { node, incarnation } => {
                    m.incarnation.insert(node, incarnation);
                }
                Event::MeshUp {
                    node,
                    peer,
                    generation,
                    socket,
                    ..
                } => {
                    let gen = (node, m.inc(node), peer, generation);
                    m.ups.insert(gen, (index, socket, at));
                    m.current.insert((node, peer), gen);
                    m.live
                        .entry((node, peer))
                        .or_default()
                        .push((index, at, Some(socket)));
                }
                Event::MeshDown {
                    node,
                    peer,
                    generation,
                    ..
                } => {
                    let gen = (node, m.inc(node), peer, generation);
                    m.downs.entry(gen).or_default().push((index, at));
                    if m.current.get(&(node, peer)) == Some(&gen) {
                        m.current.remove(&(node, peer));
                        m.live
                            .entry((node, peer))
                            .or_default()
                            .push((index, at, None));
                    }
                }
                Event::MeshLinked {
                    node,
                    peer,
                    generation,
                    link,
                } => m
                    .linked
                    .push((index, (node, m.inc(node), peer, generation), link)),
                Event::MeshArrived {
                    node,
                    peer,
                    generation,
                    link,
                    msg,
                } => m
                    .arrived
                    .push((index, (node, m.inc(node), peer, generation), link, msg)),
                Event::MeshNoConnection {
                    node,
                    peer,
                    generation,
                    link,
                    side,
                } => {
                    let inc = m.inc(node);
                    m.noconnections
                        .entry((node, inc, link, side))
                        .or_default()
                        .push((index, (node, inc, peer, generation)));
                }
                Event::MeshDataArrived {
                    node,
                    peer,
                    generation,
                    seq,
                } => m
                    .data
                    .push((index, (node, m.inc(node), peer, generation), seq)),
                Event::MeshFault { fault } => m.fault(index, at, fault),
                // Converging after simultaneous first dials is the same
                // duty as after a cross-dial.
                Event::MeshDialedTogether { a, b } => m.cross_dials.push((index, at, a, b)),
                Event::MeshSquat { socket, .. } => {
                    m.squats.insert(socket, index);
                }
                Event::MeshTableAtEnd { node, peer, socket } => {
                    m.table.insert((node, peer), (index, socket));
                }
                Event::MeshProbe {
                    node,
                    accepted,
                    attempts,
                } => m.probes.push((index, node, accepted, attempts)),
                Event::MeshImpostor {
                    node,
                    claimed,
                    socket,
                    read,
                    ..
                } => m.impostors.push(Impostor {
                    record: index,
                    node,
                    claimed,
                    socket,
                    read,
                }),
                Event::MeshTrickle {
                    node,
                    socket,
                    sent,
                    held_us,
                    closed,
                } => {
                    let held = Duration::from_micros(held_us);
                    m.trickles.push(Trickle {
                        record: index,
                        node,
                        socket,
                        began: at.saturating_sub(held),
                        held,
                        sent,
                        closed,
                    });
                }
                Event::MeshDialFailed {
                    node,
                    peer,
                    error: DialFailure::Timeout,
                } => m.dial_timeouts.push((at, node, peer)),
                Event::RunEnd { finished } => {
                    m.finished = finished;
                    m.end = at;
                }
                _ => {}
            }
        }
        let open = std::mem::take(&mut m.open_lasting);
        m.lasting.extend(open.into_values());
        m
    }

    fn fault(&mut self, index: usize, at: Duration, fault: MeshFaultApplied) {
        let (a, b) = match fault {
            MeshFaultApplied::Crash { node }
            | MeshFaultApplied::Bounce { node }
            | MeshFaultApplied::Resets { node }
            | MeshFaultApplied::ResetsEnd { node, .. }
            | MeshFaultApplied::Spend { node, .. }
            | MeshFaultApplied::Trickle { node, .. }
            | MeshFaultApplied::Exhaust { node }
            | MeshFaultApplied::ExhaustEnd { node, .. } => (node, node),
            MeshFaultApplied::Partition { a, b }
            | MeshFaultApplied::Heal { a, b }
            | MeshFaultApplied::Kill { a, b }
            | MeshFaultApplied::Latency { a, b, .. }
            | MeshFaultApplied::LatencyEnd { a, b }
            | MeshFaultApplied::Squat { a, b }
            | MeshFaultApplied::Impostor { a, b }
            | MeshFaultApplied::CrossDial { a, b } => (a, b),
            MeshFaultApplied::HalfOpen { from, to }
            | MeshFaultApplied::HalfOpenHealed { from, to } => (from, to),
            MeshFaultApplied::Wedge { node, peer }
            | MeshFaultApplied::Unwedge { node, peer }
            | MeshFaultApplied::Slow { node, peer, .. }
            | MeshFaultApplied::SlowEnd { node, peer } => (node, peer),
        };
        self.touches.push((index, at, a, b));
        let pair = (a.min(b), a.max(b));
        let starts = match fault {
            MeshFaultApplied::Partition { .. } => {
                Some((Silence::Both, Lag::HeldUntilEnd { reader: None }))
            }
            MeshFaultApplied::HalfOpen { .. } => Some((Silence::FromAToB, Lag::None)),
            MeshFaultApplied::Latency { us, .. } => {
                Some((Silence::None, Lag::Latency(Duration::from_micros(us))))
            }
            MeshFaultApplied::Wedge { node, .. } | MeshFaultApplied::Slow { node, .. } => {
                Some((Silence::None, Lag::HeldUntilEnd { reader: Some(node) }))
            }
            _ => None,
        };
        if let Some((silence, lag)) = starts {
            let lasting = Lasting {
                a,
                b,
                silence,
                lag,
                start: at,
                end: None,
                cause: index,
            };
            self.open_lasting.insert(pair, lasting);
        }
        let stops = matches!(
            fault,
            MeshFaultApplied::Heal { .. }
                | MeshFaultApplied::HalfOpenHealed { .. }
                | MeshFaultApplied::LatencyEnd { .. }
                | MeshFaultApplied::Unwedge { .. }
                | MeshFaultApplied::SlowEnd { .. }
        );
        if let Some(mut lasting) = stops.then(|| self.open_lasting.remove(&pair)).flatten() {
            lasting.end = Some(at);
            self.lasting.push(lasting);
        }
        match fault {
            MeshFaultApplied::Crash { node } => {
                let inc = self.inc(node);
                self.crashed.insert((node, inc), at);
                // A crashed node holds nothing.
                for ((holder, _), timeline) in &mut self.live {
                    if *holder == node {
                        timeline.push((index, at, None));
                    }
                }
                self.current.retain(|(holder, _), _| *holder != node);
            }
            MeshFaultApplied::CrossDial { a, b } => self.cross_dials.push((index, at, a, b)),
            MeshFaultApplied::Bounce { node } => self.bounced.push((node, at)),
            MeshFaultApplied::Resets { node } | MeshFaultApplied::Exhaust { node } => {
                self.accept_faults.push((node, at, None));
            }
            MeshFaultApplied::ResetsEnd { node, .. }
            | MeshFaultApplied::ExhaustEnd { node, .. } => {
                if let MeshFaultApplied::ExhaustEnd { accepts, .. } = fault {
                    let start = self
                        .accept_faults
                        .iter()
                        .rev()
                        .find(|(n, _, end)| *n == node && end.is_none())
                        .map_or(at, |(_, start, _)| *start);
                    self.exhaustions.push((index, node, at - start, accepts));
                }
                if let Some(open) = self
                    .accept_faults
                    .iter_mut()
                    .rev()
                    .find(|(n, _, end)| *n == node && end.is_none())
                {
                    open.2 = Some(at);
                }
            }
            MeshFaultApplied::Partition { .. }
            | MeshFaultApplied::Heal { .. }
            | MeshFaultApplied::HalfOpen { .. }
            | MeshFaultApplied::HalfOpenHealed { .. }
            | MeshFaultApplied::Kill { .. }
            | MeshFaultApplied::Latency { .. }
            | MeshFaultApplied::LatencyEnd { .. }
            | MeshFaultApplied::Squat { .. }
            | MeshFaultApplied::Impostor { .. }
            | MeshFaultApplied::Spend { .. }
            | MeshFaultApplied::Trickle { .. }
            | MeshFaultApplied::Wedge { .. }
            | MeshFaultApplied::Unwedge { .. }
            | MeshFaultApplied::Slow { .. }
            | MeshFaultApplied::SlowEnd { .. } => {}
        }
    }

    /// Whether `node`'s host is up at `at`: no crash yet, or a bounce
    /// since the last one.
    fn alive_at(&self, node: u64, at: Duration) -> bool {
        let crash = self
            .crashed
            .iter()
            .filter(|(&(n, _), &t)| n == node && t <= at)
            .map(|(_, &t)| t)
            .max();
        crash.is_none_or(|crash| {
            self.bounced
                .iter()
                .any(|&(n, t)| n == node && t > crash && t <= at)
        })
    }

    /// Until when `node` may still read what `peer` wrote before falling
    /// silent at `at`: later than `at` when a lasting fault on the pair
    /// delays delivery then. `None`: a hold that never ends, so the
    /// backlog may outlast the run. The hunt found the slow case: a reader
    /// draining a peer's keepalives one every 26 ms for half a second
    /// after the peer's crash was taken for a generation left up in
    /// silence (`m5_detects_a_silent_generation_left_up_but_not_a_backlog_still_draining`).
    fn heard_until(&self, node: u64, peer: u64, at: Duration) -> Option<Duration> {
        let pair = (node.min(peer), node.max(peer));
        let active = self.lasting.iter().filter(|l| {
            (l.a.min(l.b), l.a.max(l.b)) == pair
                && l.start <= at
                && l.end.is_none_or(|end| end > at)
        });
        let mut until = at;
        for lasting in active {
            match lasting.lag {
                Lag::None => {}
                Lag::HeldUntilEnd { reader } if reader.is_none_or(|reader| reader == node) => {
                    until = until.max(lasting.end?);
                }
                Lag::HeldUntilEnd { .. } => {}
                Lag::Latency(extra) => until = until.max(at + extra),
            }
        }
        Some(until)
    }

    fn crashed_at(&self, node: u64, inc: u64) -> Option<Duration> {
        self.crashed.get(&(node, inc)).copied()
    }

    fn socket(&self, gen: &Gen) -> Option<SocketAddr> {
        self.ups.get(gen).map(|(_, socket, _)| *socket)
    }

    fn first_down(&self, gen: &Gen) -> Option<(usize, Duration)> {
        self.downs.get(gen).and_then(|downs| downs.first().copied())
    }
}

/// Every mesh contract over `records`.
#[must_use]
pub fn check(records: &[Record], context: &CheckContext) -> Vec<Violation> {
    let model = Model::build(records);
    let mut out = Collector::new(records);
    m1(&mut out, &model);
    m1_origins(&mut out);
    m1_convergence(&mut out, &model, context);
    m2(&mut out, &model);
    m3(&mut out, &model);
    m4(&mut out, &model);
    m5(&mut out, &model, context);
    m6(&mut out, &model);
    m7(&mut out, &model);
    m8(&mut out, &model);
    m9(&mut out, &model, records, context);
    out.into_violations()
}

fn m1(out: &mut Collector<'_>, model: &Model) {
    if !model.finished {
        return;
    }
    for (&(node, peer), &(index, socket)) in &model.table {
        if node > peer {
            continue;
        }
        let Some(&(other_index, other)) = model.table.get(&(peer, node)) else {
            continue; // the peer is not alive at the end
        };
        if socket.is_none() || other.is_none() || socket != other {
            let describe = |s: Option<SocketAddr>| s.map_or("none".into(), |s| s.to_string());
            out.violate(
                Contract::M1,
                format!(
                    "node{node} and node{peer} disagree at the end: node{node} holds {}, node{peer} holds {}",
                    describe(socket),
                    describe(other)
                ),
                &[index, other_index],
            );
        }
    }
}

/// M1: the two ends of one socket agree on which of them dialed it (a
/// socket both call their own dial, or both an accept, is a pair that does
/// not agree on what it holds). Only sockets seen up exactly once at each
/// end are judged: a dialer address a restarted host reused names two
/// connections.
fn m1_origins(out: &mut Collector<'_>) {
    let mut by_socket: BTreeMap<SocketAddr, Vec<(usize, u64, u64, Side)>> = BTreeMap::new();
    for (index, record) in out.records().iter().enumerate() {
        if let Event::MeshUp {
            node,
            peer,
            origin,
            socket,
            ..
        } = record.event
        {
            by_socket
                .entry(socket)
                .or_default()
                .push((index, node, peer, origin));
        }
    }
    for (socket, ups) in by_socket {
        let [(a_index, a, a_peer, a_origin), (b_index, b, b_peer, b_origin)] = ups[..] else {
            continue;
        };
        if a == b_peer && b == a_peer && a_origin == b_origin {
            out.violate(
                Contract::M1,
                format!("node{a} and node{b} both registered socket {socket} as {a_origin:?}: the ends of one socket disagree on which of them dialed it"),
                &[a_index, b_index],
            );
        }
    }
}

/// The socket `node` holds live toward `peer` at `at` (after every record
/// up to `at`).
fn live_at(model: &Model, node: u64, peer: u64, at: Duration) -> Option<SocketAddr> {
    model
        .live
        .get(&(node, peer))
        .and_then(|timeline| timeline.iter().rev().find(|(_, t, _)| *t <= at))
        .and_then(|(_, _, socket)| *socket)
}

fn m1_convergence(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    let short_dials = context.dials_may_time_out();
    for &(index, at, a, b) in &model.cross_dials {
        // A dial of the pair that timed out, with neither end registering
        // a connection of the pair before it did.
        let window = at + context.connect_timeout + context.tick * 4;
        let timed_out = model
            .dial_timeouts
            .iter()
            .find(|&&(t, x, y)| t > at && t <= window && ((x, y) == (a, b) || (x, y) == (b, a)));
        let registered = timed_out.is_some_and(|&(until, _, _)| {
            [(a, b), (b, a)].iter().any(|key| {
                model
                    .live
                    .get(key)
                    .into_iter()
                    .flatten()
                    .any(|(_, t, socket)| socket.is_some() && *t > at && *t <= until)
            })
        });
        let bound = match context.redial {
            Some((after, connect)) if short_dials && timed_out.is_some() && !registered => {
                convergence_bound(context) + after + connect
            }
            _ => convergence_bound(context),
        };
        let due = at + bound;
        if model.end < due {
            continue;
        }
        // Another fault on this pair (or a crash of either) inside the
        // window has its own say.
        let pair = |x: u64, y: u64| (x == a && y == b) || (x == b && y == a);
        let disturbed = model.touches.iter().any(|&(i, t, x, y)| {
            i != index
                && t + bound >= at
                && t <= due
                && (pair(x, y) || (x == y && (x == a || x == b)))
        }) || model.lasting.iter().any(|l| {
            // A partition, half-open link, latency, wedge or slow reader
            // between them over the window.
            pair(l.a, l.b) && l.start <= due && l.end.is_none_or(|end| end + bound >= at)
        }) || model.accept_faults.iter().any(|&(node, start, end)| {
            // Either end unable to accept or dial over the window.
            (node == a || node == b) && start <= due && end.is_none_or(|end| end + bound >= at)
        }) || [a, b].iter().any(|&node| !model.alive_at(node, at));
        if disturbed {
            continue;
        }
        // Every instant either end's table changed, within the window.
        let mut instants: Vec<Duration> = [(a, b), (b, a)]
            .iter()
            .filter_map(|key| model.live.get(key))
            .flatten()
            .map(|(_, t, _)| *t)
            .filter(|t| *t > at && *t <= due)
            .collect();
        instants.push(due);
        instants.sort_unstable();
        let agreed = instants.iter().any(|&t| {
            let (x, y) = (live_at(model, a, b, t), live_at(model, b, a, t));
            x.is_some() && x == y
        });
        if !agreed {
            out.violate(
                Contract::M1,
                format!(
                    "node{a} and node{b} dialed each other at {:.3}s and held no common live socket within {:.3}s",
                    at.as_secs_f64(),
                    bound.as_secs_f64()
                ),
                &[index],
            );
        }
    }
}

fn m2(out: &mut Collector<'_>, model: &Model) {
    // EXITs and LINKs by link id.
    let mut exits: BTreeMap<u64, Vec<(usize, Gen)>> = BTreeMap::new();
    for &(index, gen, link, msg) in &model.arrived {
        if msg == LinkMsg::Exit {
            exits.entry(link).or_default().push((index, gen));
        }
    }
    for &(index, gen, link) in &model.linked {
        let (node, inc, _, _) = gen;
        let made_over = model.socket(&gen);
        let arrivals = exits.get(&link).map(Vec::as_slice).unwrap_or_default();
        for &(arrived, learner) in arrivals {
            let over = model.socket(&learner);
            if over.is_some() && over != made_over {
                out.violate(
                    Contract::M2,
                    format!(
                        "link {link:#x}'s EXIT arrived over another socket than the one it was made over"
                    ),
                    &[index, arrived],
                );
            }
        }
        if !model.finished || model.crashed_at(node, inc).is_some() {
            continue;
        }
        let settled = arrivals.iter().any(|(_, learner)| {
            model.socket(learner).is_some() && model.socket(learner) == made_over
        }) || model
            .noconnections
            .contains_key(&(node, inc, link, LinkSide::Maker));
        if !settled {
            out.violate(
                Contract::M2,
                format!(
                    "link {link:#x} made by node{node} was never settled: its EXIT never arrived over its socket and no noconnection was delivered"
                ),
                &[index],
            );
        }
    }
    if !model.finished {
        return;
    }
    for &(index, gen, link, msg) in &model.arrived {
        let (node, inc, _, _) = gen;
        if msg != LinkMsg::Link || model.crashed_at(node, inc).is_some() {
            continue;
        }
        let exited = model
            .arrived
            .iter()
            .any(|&(_, g, l, m)| g == gen && l == link && m == LinkMsg::Exit);
        let broken = model
            .noconnections
            .contains_key(&(node, inc, link, LinkSide::Learner));
        if !exited && !broken {
            out.violate(
                Contract::M2,
                format!(
                    "node{node} learned link {link:#x} and it was never settled: no EXIT on its generation, no noconnection"
                ),
                &[index],
            );
        }
    }
}

fn m3(out: &mut Collector<'_>, model: &Model) {
    for (&(node, _, link, side), deliveries) in &model.noconnections {
        let &(index, gen) = &deliveries[0];
        match model.first_down(&gen) {
            Some((down, _)) if down < index => {}
            _ => out.violate(
                Contract::M3,
                format!(
                    "node{node} delivered noconnection for link {link:#x} ({side:?}) though its generation had not gone down"
                ),
                &[index],
            ),
        }
        if deliveries.len() > 1 {
            let cited: Vec<usize> = deliveries.iter().map(|(i, _)| *i).collect();
            out.violate(
                Contract::M3,
                format!(
                    "node{node} delivered noconnection for link {link:#x} ({side:?}) {} times",
                    deliveries.len()
                ),
                &cited,
            );
        }
    }
}

fn m4(out: &mut Collector<'_>, model: &Model) {
    for (gen, downs) in &model.downs {
        let (node, _, peer, generation) = *gen;
        if downs.len() > 1 {
            let cited: Vec<usize> = downs.iter().map(|(i, _)| *i).collect();
            out.violate(
                Contract::M4,
                format!(
                    "node{node}'s down hook fired {} times for generation {generation} of node{peer}",
                    downs.len()
                ),
                &cited,
            );
        }
        if !model.ups.contains_key(gen) {
            out.violate(
                Contract::M4,
                format!(
                    "node{node}'s down hook fired for generation {generation} of node{peer}, which never came up"
                ),
                &[downs[0].0],
            );
        }
    }
    if !model.finished {
        return;
    }
    for (gen, &(index, socket, _)) in &model.ups {
        let (node, inc, peer, generation) = *gen;
        if model.downs.contains_key(gen) || model.crashed_at(node, inc).is_some() {
            continue;
        }
        let live = model
            .table
            .get(&(node, peer))
            .is_some_and(|&(_, held)| held == Some(socket));
        if !live {
            out.violate(
                Contract::M4,
                format!(
                    "node{node}'s generation {generation} of node{peer} is neither live at the end nor went down"
                ),
                &[index],
            );
        }
    }
}

fn m5(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    let Some(tick) = context.heartbeat else {
        return;
    };
    let bound = tick + silence_slack(context);
    let mut reported: BTreeSet<Gen> = BTreeSet::new();
    for (gen, &(up, socket, up_at)) in &model.ups {
        let (node, inc, peer, generation) = *gen;
        // Every silence this generation lived through: (start, end, cause).
        let mut silences: Vec<(Duration, Option<Duration>, usize)> = model
            .lasting
            .iter()
            .filter(|l| l.silences(peer, node))
            .map(|l| (l.start.max(up_at), l.end, l.cause))
            .collect();
        // A crashed peer: the sockets it had are silent from when the
        // last of what it wrote before the crash could arrive.
        for (&(crashed, _), &at) in &model.crashed {
            if crashed == peer && at >= up_at {
                if let Some(heard_until) = model.heard_until(node, peer, at) {
                    silences.push((heard_until, None, up));
                }
            }
        }
        if let Some(&squat) = model.squats.get(&socket) {
            silences.push((up_at, None, squat));
        }
        for (start, end, cause) in silences {
            let due = start + bound;
            let lasted = end.is_none_or(|end| end > due);
            let observed =
                model.end >= due && model.crashed_at(node, inc).is_none_or(|crash| crash > due);
            if !lasted || !observed {
                continue;
            }
            let down = model.first_down(gen);
            if down.is_some_and(|(_, at)| at <= due) || down.is_some_and(|(_, at)| at < start) {
                continue;
            }
            if reported.insert(*gen) {
                let mut cited = vec![up, cause];
                cited.extend(down.map(|(i, _)| i));
                out.violate(
                    Contract::M5,
                    format!(
                        "node{node}'s generation {generation} of node{peer} heard nothing from {:.3}s and was still up {:.3}s later (tick {:.3}s + slack)",
                        start.as_secs_f64(),
                        bound.as_secs_f64(),
                        tick.as_secs_f64()
                    ),
                    &cited,
                );
            }
        }
    }
}

fn m6(out: &mut Collector<'_>, model: &Model) {
    // Per receiving generation: the last sequence number read; per
    // (sender, seq): the first arrival.
    let mut last: BTreeMap<Gen, (u64, usize)> = BTreeMap::new();
    let mut seen: BTreeMap<(u64, u64), usize> = BTreeMap::new();
    for &(index, gen, seq) in &model.data {
        let (node, _, peer, _) = gen;
        if let Some(&(previous, at)) = last.get(&gen) {
            if seq <= previous {
                out.violate(
                    Contract::M6,
                    format!(
                        "node{node} read node{peer}'s data frame {seq:#x} after {previous:#x} on one generation: out of order"
                    ),
                    &[at, index],
                );
            }
        }
        last.insert(gen, (seq, index));
        if let Some(&first) = seen.get(&(peer, seq)) {
            out.violate(
                Contract::M6,
                format!("node{peer}'s data frame {seq:#x} arrived twice"),
                &[first, index],
            );
        } else {
            seen.insert((peer, seq), index);
        }
    }
}

/// Failed accepts a node may make while out of descriptors: 16, then 25 a
/// second (one every 40 ms). A back-off from 1 ms doubling to 1 s (hyper's,
/// lanesim's) fails about a dozen times in its first second and once a
/// second after; a fixed pause of 50 ms (the example node's) twenty times a
/// second; a node that retries at once, or every millisecond, spins on
/// `EMFILE` a thousand times a second and is caught.
fn exhausted_accepts_allowed(lasting: Duration) -> u64 {
    16 + (25.0 * lasting.as_secs_f64()).ceil() as u64
}

fn m7(out: &mut Collector<'_>, model: &Model) {
    for &(index, node, lasting, accepts) in &model.exhaustions {
        let allowed = exhausted_accepts_allowed(lasting);
        if accepts > allowed {
            out.violate(
                Contract::M7,
                format!(
                    "node{node} spun on EMFILE: {accepts} failed accepts in {:.3}s without descriptors, more than the {allowed} allowed (16, then 25 a second): it retries without pausing",
                    lasting.as_secs_f64()
                ),
                &[index],
            );
        }
    }
    for &(index, node, accepted, attempts) in &model.probes {
        if !accepted {
            let by = out.records()[index].at.as_secs_f64();
            out.violate(
                Contract::M7,
                format!(
                    "node{node} stopped accepting: {attempts} fresh dial(s) up to {by:.3}s, each \
                     with the handshake, and none was accepted (nothing written back)"
                ),
                &[index],
            );
        }
    }
}

fn m8(out: &mut Collector<'_>, model: &Model) {
    let by_socket: BTreeMap<SocketAddr, &Impostor> =
        model.impostors.iter().map(|i| (i.socket, i)).collect();
    for (&(node, _, peer, generation), &(up, socket, _)) in &model.ups {
        if let Some(impostor) = by_socket.get(&socket) {
            out.violate(
                Contract::M8,
                format!(
                    "node{node} registered generation {generation} for node{peer} on the \
                     impostor's stream {socket}, whose peer never proved the cookie"
                ),
                &[up, impostor.record],
            );
        }
    }
    for impostor in model.impostors.iter().filter(|i| i.read > 0) {
        out.violate(
            Contract::M8,
            format!(
                "node{} wrote {} bytes after its challenge to the impostor's stream {} (which \
                 claimed to be node{} and never proved the cookie)",
                impostor.node, impostor.read, impostor.socket, impostor.claimed
            ),
            &[impostor.record],
        );
    }
}

fn m9(out: &mut Collector<'_>, model: &Model, records: &[Record], context: &CheckContext) {
    for (index, record) in records.iter().enumerate() {
        if let Event::MeshDown {
            node,
            peer,
            generation,
            reason: Down::OverBudget,
        } = record.event
        {
            // Hosts that are not nodes (spenders, the prober) are named
            // u64::MAX.
            if peer != u64::MAX {
                out.violate(
                    Contract::M9,
                    format!(
                        "node{node} downed its generation {generation} to node{peer} for the \
                         frame budget (OverBudget): an honest node's small frames were refused \
                         for what others held"
                    ),
                    &[index],
                );
            }
        }
    }
    let Some(heartbeat) = context.heartbeat else {
        return;
    };
    let bound = mesh_trickle_bound(heartbeat, context.tick);
    for trickle in model.trickles.iter().filter(|t| t.held > bound) {
        // A crash tears the node's streams down with its host: what the
        // trickler saw of them then is not something the node did.
        let end = trickle.began + trickle.held;
        let crashed = model
            .crashed
            .iter()
            .any(|(&(n, _), &t)| n == trickle.node && t >= trickle.began && t <= end);
        if crashed {
            continue;
        }
        let how = if trickle.closed {
            "before the node closed it"
        } else {
            "and the node never closed it (the trickler gave up)"
        };
        out.violate(
            Contract::M9,
            format!(
                "node{} let a frame trickle in on stream {} for {:.3}s after its header ({} \
                 bytes, one per quarter tick) {how}: past the frame deadline's bound of {:.3}s",
                trickle.node,
                trickle.socket,
                trickle.held.as_secs_f64(),
                trickle.sent,
                bound.as_secs_f64()
            ),
            &[trickle.record],
        );
    }
}
