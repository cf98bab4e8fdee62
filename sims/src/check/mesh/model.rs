//! The mesh world's log model: one pass over the records learns every
//! generation (named with its node's incarnation), each node's live socket
//! toward each peer over time, links made and settled, data arrivals, the
//! faults and what they silence or delay, and the hostile streams
//! (squatters, impostors, tricklers, probes). Every contract group reads
//! this one [`Model`], and the queries on it (`crashed_at`, `first_down`,
//! `heard_until`, ...) live here too. What the faults are is in
//! [`super::faults`].

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use crate::event::Side;

use super::faults::{AcceptFault, Bounce, CrossDial, Exhaustion, Lag, Lasting, Silence, Touch};
use crate::event::{
    DialFailure, Event, LinkMsg, LinkSide, MeshFaultApplied, MisdialOutcome, Record,
};

/// A generation: a restarted node's manager counts generations afresh, so
/// the node's incarnation is part of the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct GenId {
    pub(super) node: u64,
    pub(super) incarnation: u64,
    pub(super) peer: u64,
    pub(super) generation: u64,
}

/// One life of a node's host (from `NodeStarted`, in log order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Incarnation {
    pub(super) node: u64,
    pub(super) incarnation: u64,
}

/// One change of the socket a node holds live toward a peer.
#[derive(Clone, Copy, Debug)]
pub(super) struct LiveChange {
    pub(super) at: Duration,
    /// The live socket after it (`None`: nothing live).
    pub(super) socket: Option<SocketAddr>,
}

/// Per (node, peer): every change of its live socket, in log order.
pub(super) type Timeline = Vec<LiveChange>;

/// Where a `noconnection` was delivered: a link's end on one incarnation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct DeliveryKey {
    pub(super) node: u64,
    pub(super) incarnation: u64,
    pub(super) link: u64,
    pub(super) side: LinkSide,
}

/// A dial that timed out.
#[derive(Clone, Copy, Debug)]
pub(super) struct DialTimeout {
    pub(super) at: Duration,
    pub(super) node: u64,
    pub(super) peer: u64,
}

/// One of the end's probes (`MeshProbe`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Probe {
    pub(super) record: usize,
    pub(super) node: u64,
    pub(super) accepted: bool,
    pub(super) attempts: u64,
}

/// The prober's dials during a flood (`MeshFloodProbe`).
#[derive(Clone, Copy, Debug)]
pub(super) struct FloodProbe {
    pub(super) record: usize,
    pub(super) node: u64,
    pub(super) dials: u64,
    pub(super) accepted: u64,
}

/// A node out of descriptors (`MeshDescriptorsOut`).
#[derive(Clone, Copy, Debug)]
pub(super) struct DescriptorsOut {
    pub(super) record: usize,
    pub(super) node: u64,
    pub(super) open: u64,
    pub(super) limit: u64,
}

/// One flooder's streams during one flood (`MeshFloodHeld`).
#[derive(Clone, Copy, Debug)]
pub(super) struct FloodHeld {
    pub(super) record: usize,
    pub(super) node: u64,
    /// When the flood began (the record is at its end).
    pub(super) from: Duration,
    pub(super) hello: bool,
    pub(super) longest: Duration,
    pub(super) open_at_end: u64,
}

/// A generation coming up.
#[derive(Clone, Copy, Debug)]
pub(super) struct Up {
    pub(super) record: usize,
    pub(super) socket: SocketAddr,
    pub(super) at: Duration,
    /// The socket of the generation the node held live toward the peer
    /// when this one came up (the one it displaces), if any.
    pub(super) displaced: Option<SocketAddr>,
    /// Which end dialed it.
    pub(super) origin: Side,
}

/// A call of a generation's down hook.
#[derive(Clone, Copy, Debug)]
pub(super) struct DownCall {
    pub(super) record: usize,
    pub(super) at: Duration,
}

/// A link made by its maker.
#[derive(Clone, Copy, Debug)]
pub(super) struct Linked {
    pub(super) record: usize,
    /// The generation it was made over.
    pub(super) over: GenId,
    pub(super) link: u64,
}

/// A data frame read.
#[derive(Clone, Copy, Debug)]
pub(super) struct DataArrival {
    pub(super) record: usize,
    /// The receiving generation.
    pub(super) on: GenId,
    pub(super) seq: u64,
}

/// A link's control frame arriving at its learner.
#[derive(Clone, Copy, Debug)]
pub(super) struct Arrival {
    pub(super) record: usize,
    /// The learner's generation it arrived on.
    pub(super) on: GenId,
    pub(super) link: u64,
    pub(super) msg: LinkMsg,
}

/// A `noconnection` delivered.
#[derive(Clone, Copy, Debug)]
pub(super) struct NoConnection {
    pub(super) record: usize,
    /// The generation it names.
    pub(super) over: GenId,
}

/// What a node's table held at the end toward a peer.
#[derive(Clone, Copy, Debug)]
pub(super) struct TableEntry {
    pub(super) record: usize,
    pub(super) socket: Option<SocketAddr>,
}

/// The trickler's stream (`MeshTrickle`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Trickle {
    pub(super) record: usize,
    pub(super) node: u64,
    pub(super) socket: SocketAddr,
    /// When its header was written.
    pub(super) began: Duration,
    pub(super) held: Duration,
    pub(super) sent: u64,
    pub(super) closed: bool,
}

/// An impostor's stream (`MeshImpostor`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Impostor {
    pub(super) record: usize,
    pub(super) node: u64,
    pub(super) claimed: u64,
    pub(super) socket: SocketAddr,
    pub(super) read: u64,
}

/// A misdialed dial's end (`MeshMisdialed`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Misdialed {
    pub(super) record: usize,
    pub(super) node: u64,
    pub(super) named: u64,
    /// The node that answered (`None`: the stranger).
    pub(super) answerer: Option<u64>,
    pub(super) outcome: MisdialOutcome,
}

/// What a node wrote the stranger after its challenge (`MeshStranger`).
#[derive(Clone, Copy, Debug)]
pub(super) struct StrangerRead {
    pub(super) record: usize,
    pub(super) node: u64,
    pub(super) named: u64,
    pub(super) socket: SocketAddr,
    pub(super) wrote: u64,
}

#[derive(Default)]
pub(super) struct Model {
    /// Per (node, peer): every change of its live socket.
    pub(super) live: BTreeMap<(u64, u64), Timeline>,
    /// Per (node, peer): the live generation now (while building).
    current: BTreeMap<(u64, u64), GenId>,
    /// Cross-dials.
    pub(super) cross_dials: Vec<CrossDial>,
    /// Lasting faults on a pair, ended or not. The world runs at most one
    /// per link at a time, so one may be open per pair.
    pub(super) lasting: Vec<Lasting>,
    open_lasting: BTreeMap<(u64, u64), Lasting>,
    /// Dials that timed out.
    pub(super) dial_timeouts: Vec<DialTimeout>,
    /// Restarts.
    pub(super) bounced: Vec<Bounce>,
    /// Every fault, with the nodes it touches.
    pub(super) touches: Vec<Touch>,
    /// Faults on one node's accepts and dials.
    pub(super) accept_faults: Vec<AcceptFault>,
    /// The end's probes.
    pub(super) probes: Vec<Probe>,
    /// Ended exhaustions.
    pub(super) exhaustions: Vec<Exhaustion>,
    incarnation: BTreeMap<u64, u64>,
    pub(super) ups: BTreeMap<GenId, Up>,
    pub(super) downs: BTreeMap<GenId, Vec<DownCall>>,
    pub(super) crashed: BTreeMap<Incarnation, Duration>,
    /// Links made, by their makers.
    pub(super) linked: Vec<Linked>,
    /// Data arrivals.
    pub(super) data: Vec<DataArrival>,
    /// Frames no node writes, delivered (record indices).
    pub(super) strays: Vec<usize>,
    /// Link frames' arrivals.
    pub(super) arrived: Vec<Arrival>,
    /// Every `noconnection`, by where it was delivered.
    pub(super) noconnections: BTreeMap<DeliveryKey, Vec<NoConnection>>,
    pub(super) squats: BTreeMap<SocketAddr, usize>,
    /// The insider's streams (`MeshClaim`), by socket: the record.
    pub(super) claims: BTreeMap<SocketAddr, usize>,
    /// The prober's dials during floods.
    pub(super) flood_probes: Vec<FloodProbe>,
    /// What each flooder's streams held, per flood.
    pub(super) flood_holds: Vec<FloodHeld>,
    /// Each run of sockets refused for want of a descriptor.
    pub(super) descriptors_out: Vec<DescriptorsOut>,
    /// The impostors' streams, as each ended.
    pub(super) impostors: Vec<Impostor>,
    /// The trickler's streams, as each ended.
    pub(super) trickles: Vec<Trickle>,
    /// Misdialed dials, as each ended.
    pub(super) misdials: Vec<Misdialed>,
    /// The stranger's streams, as each ended.
    pub(super) strangers: Vec<StrangerRead>,
    /// Per (node, peer): the table at the end.
    pub(super) table: BTreeMap<(u64, u64), TableEntry>,
    pub(super) end: Duration,
    pub(super) finished: bool,
}

impl Model {
    fn inc(&self, node: u64) -> u64 {
        self.incarnation.get(&node).copied().unwrap_or(0)
    }

    /// `node`'s last life (its incarnation at the end of the log).
    pub(super) fn incarnation_at_end(&self, node: u64) -> u64 {
        self.inc(node)
    }

    /// Generation `generation` of `node`'s current incarnation toward
    /// `peer`.
    fn gen(&self, node: u64, peer: u64, generation: u64) -> GenId {
        GenId {
            node,
            incarnation: self.inc(node),
            peer,
            generation,
        }
    }

    pub(super) fn build(records: &[Record]) -> Self {
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
                    origin,
                } => {
                    let gen = m.gen(node, peer, generation);
                    let displaced = m
                        .current
                        .get(&(node, peer))
                        .and_then(|held| m.ups.get(held))
                        .map(|held| held.socket);
                    m.ups.insert(
                        gen,
                        Up {
                            record: index,
                            socket,
                            at,
                            displaced,
                            origin,
                        },
                    );
                    m.current.insert((node, peer), gen);
                    m.live.entry((node, peer)).or_default().push(LiveChange {
                        at,
                        socket: Some(socket),
                    });
                }
                Event::MeshDown {
                    node,
                    peer,
                    generation,
                    ..
                } => {
                    let gen = m.gen(node, peer, generation);
                    m.downs
                        .entry(gen)
                        .or_default()
                        .push(DownCall { record: index, at });
                    if m.current.get(&(node, peer)) == Some(&gen) {
                        m.current.remove(&(node, peer));
                        m.live
                            .entry((node, peer))
                            .or_default()
                            .push(LiveChange { at, socket: None });
                    }
                }
                Event::MeshLinked {
                    node,
                    peer,
                    generation,
                    link,
                } => m.linked.push(Linked {
                    record: index,
                    over: m.gen(node, peer, generation),
                    link,
                }),
                Event::MeshArrived {
                    node,
                    peer,
                    generation,
                    link,
                    msg,
                } => m.arrived.push(Arrival {
                    record: index,
                    on: m.gen(node, peer, generation),
                    link,
                    msg,
                }),
                Event::MeshNoConnection {
                    node,
                    peer,
                    generation,
                    link,
                    side,
                } => {
                    let over = m.gen(node, peer, generation);
                    m.noconnections
                        .entry(DeliveryKey {
                            node,
                            incarnation: over.incarnation,
                            link,
                            side,
                        })
                        .or_default()
                        .push(NoConnection {
                            record: index,
                            over,
                        });
                }
                Event::MeshDataArrived {
                    node,
                    peer,
                    generation,
                    seq,
                } => m.data.push(DataArrival {
                    record: index,
                    on: m.gen(node, peer, generation),
                    seq,
                }),
                Event::MeshStrayFrame { .. } => m.strays.push(index),
                Event::MeshFault { fault } => m.fault(index, at, fault),
                // Converging after simultaneous first dials is the same
                // duty as after a cross-dial.
                Event::MeshDialedTogether { a, b } => m.cross_dials.push(CrossDial {
                    record: index,
                    at,
                    a,
                    b,
                }),
                Event::MeshSquat { socket, .. } => {
                    m.squats.insert(socket, index);
                }
                Event::MeshClaim { socket, .. } => {
                    m.claims.insert(socket, index);
                }
                Event::MeshTableAtEnd { node, peer, socket } => {
                    m.table.insert(
                        (node, peer),
                        TableEntry {
                            record: index,
                            socket,
                        },
                    );
                }
                Event::MeshProbe {
                    node,
                    accepted,
                    attempts,
                } => m.probes.push(Probe {
                    record: index,
                    node,
                    accepted,
                    attempts,
                }),
                Event::MeshFloodProbe {
                    node,
                    dials,
                    accepted,
                } => m.flood_probes.push(FloodProbe {
                    record: index,
                    node,
                    dials,
                    accepted,
                }),
                Event::MeshFloodHeld {
                    node,
                    us,
                    hello,
                    longest_us,
                    open_at_end,
                    ..
                } => m.flood_holds.push(FloodHeld {
                    record: index,
                    node,
                    from: at.saturating_sub(Duration::from_micros(us)),
                    hello,
                    longest: Duration::from_micros(longest_us),
                    open_at_end,
                }),
                Event::MeshDescriptorsOut { node, open, limit } => {
                    m.descriptors_out.push(DescriptorsOut {
                        record: index,
                        node,
                        open,
                        limit,
                    });
                }
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
                } => m.dial_timeouts.push(DialTimeout { at, node, peer }),
                Event::MeshMisdialed {
                    node,
                    named,
                    answerer,
                    outcome,
                } => m.misdials.push(Misdialed {
                    record: index,
                    node,
                    named,
                    answerer,
                    outcome,
                }),
                Event::MeshStranger {
                    node,
                    named,
                    socket,
                    wrote,
                } => m.strangers.push(StrangerRead {
                    record: index,
                    node,
                    named,
                    socket,
                    wrote,
                }),
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
            | MeshFaultApplied::Flood { node, .. }
            | MeshFaultApplied::Trickle { node, .. }
            | MeshFaultApplied::Exhaust { node }
            | MeshFaultApplied::ExhaustEnd { node, .. } => (node, node),
            MeshFaultApplied::Partition { a, b }
            | MeshFaultApplied::Heal { a, b }
            | MeshFaultApplied::Kill { a, b }
            | MeshFaultApplied::Latency { a, b, .. }
            | MeshFaultApplied::LatencyEnd { a, b }
            | MeshFaultApplied::Squat { a, b }
            | MeshFaultApplied::Claim { a, b }
            | MeshFaultApplied::Impostor { a, b }
            | MeshFaultApplied::CrossDial { a, b }
            | MeshFaultApplied::Misdial { a, b, .. } => (a, b),
            MeshFaultApplied::HalfOpen { from, to }
            | MeshFaultApplied::HalfOpenHealed { from, to } => (from, to),
            MeshFaultApplied::Wedge { node, peer }
            | MeshFaultApplied::Unwedge { node, peer }
            | MeshFaultApplied::Slow { node, peer, .. }
            | MeshFaultApplied::SlowEnd { node, peer } => (node, peer),
        };
        self.touches.push(Touch {
            record: index,
            at,
            a,
            b,
        });
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
                let incarnation = self.inc(node);
                self.crashed.insert(Incarnation { node, incarnation }, at);
                // A crashed node holds nothing.
                for ((holder, _), timeline) in &mut self.live {
                    if *holder == node {
                        timeline.push(LiveChange { at, socket: None });
                    }
                }
                self.current.retain(|(holder, _), _| *holder != node);
            }
            MeshFaultApplied::CrossDial { a, b } => self.cross_dials.push(CrossDial {
                record: index,
                at,
                a,
                b,
            }),
            MeshFaultApplied::Bounce { node } => self.bounced.push(Bounce { node, at }),
            MeshFaultApplied::Resets { node } | MeshFaultApplied::Exhaust { node } => {
                self.accept_faults.push(AcceptFault {
                    node,
                    start: at,
                    end: None,
                });
            }
            MeshFaultApplied::ResetsEnd { node, .. }
            | MeshFaultApplied::ExhaustEnd { node, .. } => {
                if let MeshFaultApplied::ExhaustEnd { accepts, .. } = fault {
                    let start = self
                        .accept_faults
                        .iter()
                        .rev()
                        .find(|f| f.node == node && f.end.is_none())
                        .map_or(at, |f| f.start);
                    self.exhaustions.push(Exhaustion {
                        record: index,
                        node,
                        lasted: at - start,
                        accepts,
                    });
                }
                if let Some(open) = self
                    .accept_faults
                    .iter_mut()
                    .rev()
                    .find(|f| f.node == node && f.end.is_none())
                {
                    open.end = Some(at);
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
            | MeshFaultApplied::Claim { .. }
            | MeshFaultApplied::Impostor { .. }
            | MeshFaultApplied::Spend { .. }
            | MeshFaultApplied::Flood { .. }
            | MeshFaultApplied::Trickle { .. }
            | MeshFaultApplied::Wedge { .. }
            | MeshFaultApplied::Unwedge { .. }
            | MeshFaultApplied::Slow { .. }
            | MeshFaultApplied::SlowEnd { .. }
            | MeshFaultApplied::Misdial { .. } => {}
        }
    }

    /// Whether `node`'s host is up at `at`: no crash yet, or a bounce
    /// since the last one.
    pub(super) fn alive_at(&self, node: u64, at: Duration) -> bool {
        let crash = self
            .crashed
            .iter()
            .filter(|(crashed, &t)| crashed.node == node && t <= at)
            .map(|(_, &t)| t)
            .max();
        crash.is_none_or(|crash| {
            self.bounced
                .iter()
                .any(|bounce| bounce.node == node && bounce.at > crash && bounce.at <= at)
        })
    }

    /// Until when `node` may still read what `peer` wrote before falling
    /// silent at `at`: later than `at` when a lasting fault on the pair
    /// delays delivery then. `None`: a hold that never ends, so the
    /// backlog may outlast the run. The hunt found the slow case: a reader
    /// draining a peer's keepalives one every 26 ms for half a second
    /// after the peer's crash was taken for a generation left up in
    /// silence (`m5_detects_a_silent_generation_left_up_but_not_a_backlog_still_draining`).
    pub(super) fn heard_until(&self, node: u64, peer: u64, at: Duration) -> Option<Duration> {
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

    pub(super) fn crashed_at(&self, node: u64, incarnation: u64) -> Option<Duration> {
        self.crashed
            .get(&Incarnation { node, incarnation })
            .copied()
    }

    pub(super) fn socket(&self, gen: &GenId) -> Option<SocketAddr> {
        self.ups.get(gen).map(|up| up.socket)
    }

    pub(super) fn first_down(&self, gen: &GenId) -> Option<DownCall> {
        self.downs.get(gen).and_then(|downs| downs.first().copied())
    }
}
