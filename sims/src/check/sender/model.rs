//! The sender world's log model: one pass over the records learns which
//! socket is which generation, when each came up and went down, when its
//! peer could not read it (impaired) or could not be reached, and every
//! frame's enqueue and fates. Every contract group reads this one
//! [`Model`]; the queries more than one group asks (`down_at`, `begun_on`)
//! live here too.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use lanesim_target::node::DownReason;

use crate::check::holds::Holds;
use crate::check::CheckContext;
use crate::event::{
    ControlOutcome, DataOutcome, Event, FaultApplied, Lane, PeerAct, Record, Written,
};

/// A generation: a peer and one of its generations (generations count
/// from 1 on every node, so the peer is part of the name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct GenId {
    pub(super) peer: u64,
    pub(super) generation: u64,
}

/// A data frame: data is numbered per node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct DataId {
    pub(super) peer: u64,
    pub(super) seq: u64,
}

/// How a frame left the drain's hands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fate {
    Written(Written),
    Skipped,
    Unroutable,
    Discarded,
    Abandoned,
}

/// One fate a frame met.
#[derive(Clone, Copy, Debug)]
pub(super) struct FateAt {
    /// The record that says so.
    pub(super) record: usize,
    pub(super) fate: Fate,
    /// The generation written to, if the drain wrote it.
    pub(super) written_to: Option<GenId>,
}

/// Where a frame's fates are.
pub(super) type Fates = Vec<FateAt>;

/// One call of the down hook.
#[derive(Clone, Copy, Debug)]
pub(super) struct DownCall {
    /// The `ConnectionDown` record.
    pub(super) record: usize,
    pub(super) reason: DownReason,
    /// The node's table slot after it.
    pub(super) table: Option<u64>,
}

/// A span in which a generation's peer could not read it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Impairment {
    /// The record that began it.
    pub(super) from: usize,
    /// `None`: for good.
    pub(super) until: Option<Duration>,
}

/// A span in which a peer was unreachable, `[from, to)`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Unreachable {
    pub(super) from: Duration,
    /// `None`: still unreachable at the end.
    pub(super) to: Option<Duration>,
}

/// A control frame as `enqueue` took it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Control {
    /// The `ControlEnqueued` record.
    pub(super) record: usize,
    /// The generation it was pinned to.
    pub(super) pinned: GenId,
    pub(super) link: Option<u64>,
    pub(super) outcome: ControlOutcome,
}

/// A frame that began to reach a socket.
#[derive(Clone, Copy, Debug)]
pub(super) struct Begun {
    /// The `FrameWriteBegun` record.
    pub(super) record: usize,
    pub(super) socket: u16,
}

/// A partition of a peer, while building.
struct Partition {
    peer: u64,
    /// The `Fault` record that began it.
    record: usize,
    /// When it began.
    from: Duration,
    /// When it was repaired, if it was.
    repaired: Option<Duration>,
}

/// A crash or restart of a peer, while building.
struct Crash {
    peer: u64,
    record: usize,
    at: Duration,
}

/// What one pass over the log learns, for every contract to use.
#[derive(Default)]
pub(super) struct Model {
    /// The time the scheduling explorer held tasks ([`Holds`]).
    pub(super) holds: Holds,
    /// Socket → generation, and back.
    pub(super) socket_gen: BTreeMap<u16, GenId>,
    pub(super) gen_socket: BTreeMap<GenId, u16>,
    /// When each generation came up (record index).
    pub(super) up: BTreeMap<GenId, usize>,
    /// Every down hook call per generation.
    pub(super) downs: BTreeMap<GenId, Vec<DownCall>>,
    /// When each generation's peer could not read it.
    pub(super) impaired: BTreeMap<GenId, Vec<Impairment>>,
    /// Per peer: when it was unreachable.
    pub(super) unreachable: BTreeMap<u64, Vec<Unreachable>>,
    /// Generations the local node disconnected (record index).
    pub(super) disconnected: BTreeMap<GenId, usize>,
    /// When the sender's shutdown was asked for.
    pub(super) shutdown: Option<usize>,
    /// Generations that had an overflow.
    pub(super) overflowed: BTreeSet<GenId>,
    /// Controls by seq.
    pub(super) controls: BTreeMap<u64, Control>,
    /// Control fates by seq.
    pub(super) control_fates: BTreeMap<u64, Fates>,
    /// Data frames queued → index.
    pub(super) data_queued: BTreeMap<DataId, usize>,
    /// Data fates.
    pub(super) data_fates: BTreeMap<DataId, Fates>,
    /// Generations whose stream was reset (record index of the down): a
    /// frame their peer wrote to the local node was still unread when the
    /// local node closed (or reached it after the close). A close with
    /// unread data, and data reaching a closed socket, send a reset, and a
    /// reset discards whatever the peer had not read yet (RFC 9293 3.10.4;
    /// turmoil models it). Found by hunts (seeds 11 and 12) once peers
    /// could write.
    pub(super) resets: BTreeMap<GenId, usize>,
    /// When the run ended.
    pub(super) end: Duration,
    /// Every frame that began to reach a socket, by (lane, seq).
    pub(super) begun: BTreeMap<(Lane, u64), Vec<Begun>>,
    /// Per peer, the `Fault` records of faults applied to it or its link,
    /// in log order.
    pub(super) faults: BTreeMap<u64, Vec<usize>>,
}

impl Model {
    /// Without the drain's account: where control `seq` began to reach
    /// the socket of generation `gen` (its record), if it did.
    pub(super) fn begun_on(&self, lane: Lane, seq: u64, gen: &GenId) -> Option<usize> {
        let socket = self.gen_socket.get(gen)?;
        self.begun
            .get(&(lane, seq))?
            .iter()
            .find(|begun| begun.socket == *socket)
            .map(|begun| begun.record)
    }
}

impl Model {
    pub(super) fn build(records: &[Record], context: &CheckContext) -> Self {
        let (redial, tick) = (context.redial, context.tick);
        let mut model = Self {
            holds: Holds::of(records, tick),
            ..Self::default()
        };
        let mut open_faults: BTreeMap<(u64, bool), Duration> = BTreeMap::new();
        let mut socket_impaired: BTreeMap<u16, usize> = BTreeMap::new();
        let mut socket_writes: BTreeMap<u16, Vec<Duration>> = BTreeMap::new();
        let mut partitions: Vec<Partition> = Vec::new();
        // Crashes and restarts.
        let mut crashes: Vec<Crash> = Vec::new();
        // Per socket, when its peer began writing the local node a frame
        // at the maximum; per generation, when the local node read one.
        let mut max_frames: BTreeMap<u16, Vec<usize>> = BTreeMap::new();
        let mut inbound: BTreeMap<GenId, Vec<usize>> = BTreeMap::new();
        for (index, record) in records.iter().enumerate() {
            model.end = model.end.max(record.at);
            match record.event {
                Event::ConnectionUp {
                    peer,
                    generation,
                    socket,
                } => {
                    let gen = GenId { peer, generation };
                    model.socket_gen.insert(socket, gen);
                    model.gen_socket.insert(gen, socket);
                    model.up.insert(gen, index);
                }
                Event::ConnectionDown {
                    peer,
                    generation,
                    reason,
                    table,
                } => model
                    .downs
                    .entry(GenId { peer, generation })
                    .or_default()
                    .push(DownCall {
                        record: index,
                        reason,
                        table,
                    }),
                Event::InboundFrameRead {
                    peer, generation, ..
                } => inbound
                    .entry(GenId { peer, generation })
                    .or_default()
                    .push(index),
                Event::PeerActed {
                    socket,
                    act: PeerAct::WroteMaxFrame,
                    ..
                } => max_frames.entry(socket).or_default().push(index),
                Event::ControlEnqueued {
                    peer,
                    generation,
                    seq,
                    link,
                    outcome,
                    ..
                } => {
                    let pinned = GenId { peer, generation };
                    model.controls.insert(
                        seq,
                        Control {
                            record: index,
                            pinned,
                            link,
                            outcome,
                        },
                    );
                    if outcome == ControlOutcome::Overflow {
                        model.overflowed.insert(pinned);
                    }
                }
                Event::DataEnqueued {
                    peer,
                    seq,
                    outcome: DataOutcome::Queued,
                } => {
                    model.data_queued.insert(DataId { peer, seq }, index);
                }
                Event::WriteFinished {
                    peer,
                    generation,
                    lane,
                    seq,
                    outcome,
                } => model.fate(
                    lane,
                    peer,
                    seq,
                    index,
                    Fate::Written(outcome),
                    Some(GenId { peer, generation }),
                ),
                Event::WriteAbandoned {
                    peer,
                    generation,
                    lane,
                    seq,
                } => model.fate(
                    lane,
                    peer,
                    seq,
                    index,
                    Fate::Abandoned,
                    Some(GenId { peer, generation }),
                ),
                Event::ControlSkipped { peer, seq, .. } => {
                    model.fate(Lane::Control, peer, seq, index, Fate::Skipped, None);
                }
                Event::ControlDiscarded { peer, seq, .. } => {
                    model.fate(Lane::Control, peer, seq, index, Fate::Discarded, None);
                }
                Event::DataUnroutable { peer, seq } => {
                    model.fate(Lane::Data, peer, seq, index, Fate::Unroutable, None);
                }
                Event::DataDiscarded { peer, seq } => {
                    model.fate(Lane::Data, peer, seq, index, Fate::Discarded, None);
                }
                Event::FrameWriteBegun {
                    socket, lane, seq, ..
                } => {
                    socket_writes.entry(socket).or_default().push(record.at);
                    model.begun.entry((lane, seq)).or_default().push(Begun {
                        record: index,
                        socket,
                    });
                }
                Event::HandshakeWriteBegun { socket } => {
                    socket_writes.entry(socket).or_default().push(record.at);
                }
                Event::PeerActed { socket, act, .. } if act.impairs() => {
                    // The peer may act on a socket before the local side has
                    // registered it: resolved to a generation at the end.
                    // A frame at the maximum impairs nothing: the local node
                    // must read it and carry on.
                    socket_impaired.entry(socket).or_insert(index);
                }
                Event::Fault { peer, fault } => {
                    model.faults.entry(peer).or_default().push(index);
                    match fault {
                        FaultApplied::Crash
                        | FaultApplied::Partition
                        | FaultApplied::Bounce
                        | FaultApplied::Repair => {
                            // A crash, a partition, and a restart (which closes
                            // every socket of a host that is up) cut off every
                            // socket of the peer's that exists: its frames in
                            // flight may be lost, down generation or not. Which
                            // generations those are is settled at the end: one
                            // may come up in the very tick the fault lands,
                            // logged after it (the hunt found a hello lost so).
                            match fault {
                                FaultApplied::Crash | FaultApplied::Bounce => {
                                    crashes.push(Crash {
                                        peer,
                                        record: index,
                                        at: record.at,
                                    });
                                }
                                FaultApplied::Partition => {
                                    partitions.push(Partition {
                                        peer,
                                        record: index,
                                        from: record.at,
                                        repaired: None,
                                    });
                                }
                                _ => {
                                    for open in partitions.iter_mut().filter(|p| p.peer == peer) {
                                        open.repaired.get_or_insert(record.at);
                                    }
                                }
                            }
                            let partition =
                                matches!(fault, FaultApplied::Partition | FaultApplied::Repair);
                            if matches!(fault, FaultApplied::Crash | FaultApplied::Partition) {
                                open_faults.entry((peer, partition)).or_insert(record.at);
                            } else if let Some(from) = open_faults.remove(&(peer, partition)) {
                                model
                                    .unreachable
                                    .entry(peer)
                                    .or_default()
                                    .push(Unreachable {
                                        from,
                                        to: Some(record.at),
                                    });
                            }
                        }
                        FaultApplied::Latency { us } => {
                            // Latency persists: once a round trip cannot fit in
                            // the connect timeout, no redial can succeed.
                            let latency = Duration::from_micros(us);
                            if let Some((_, connect_timeout)) = redial {
                                if latency * 2 + tick >= connect_timeout {
                                    open_faults.entry((peer, false)).or_insert(record.at);
                                }
                            }
                        }
                        FaultApplied::Disconnect
                        | FaultApplied::Wedge
                        | FaultApplied::Kill
                        | FaultApplied::Slow { .. }
                        | FaultApplied::MaxFrame
                        | FaultApplied::OversizeFrame
                        | FaultApplied::TornFrame { .. } => {}
                    }
                }
                Event::Disconnected {
                    peer,
                    generation: Some(generation),
                } => {
                    model
                        .disconnected
                        .entry(GenId { peer, generation })
                        .or_insert(index);
                }
                Event::ShutdownRequested => {
                    model.shutdown.get_or_insert(index);
                }
                _ => {}
            }
        }
        for (gen, downs) in &model.downs {
            let (Some(&DownCall { record: down, .. }), Some(socket)) =
                (downs.first(), model.gen_socket.get(gen))
            else {
                continue;
            };
            let reads = inbound.get(gen).map_or(&[][..], Vec::as_slice);
            let unread = max_frames.get(socket).is_some_and(|acts| {
                acts.iter()
                    .any(|&act| !reads.iter().any(|&read| act < read && read < down))
            });
            if unread {
                model.resets.insert(*gen, down);
            }
        }
        for ((peer, _), from) in open_faults {
            model
                .unreachable
                .entry(peer)
                .or_default()
                .push(Unreachable { from, to: None });
        }
        for (socket, index) in socket_impaired {
            if let Some(&gen) = model.socket_gen.get(&socket) {
                model.impaired.entry(gen).or_default().push(Impairment {
                    from: index,
                    until: None,
                });
            }
        }
        // The generations of `peer` whose sockets existed at `at`: from
        // the first byte written (the dialer's hello precedes the
        // generation's registration, a preemption point may sit between).
        let existing = |model: &Self, peer: u64, at: Duration| -> Vec<GenId> {
            model
                .up
                .iter()
                .filter(|(gen, &up)| {
                    let socket = model.gen_socket.get(gen);
                    let first_write = socket
                        .and_then(|socket| socket_writes.get(socket))
                        .and_then(|writes| writes.first().copied());
                    let born = first_write.map_or(records[up].at, |w| w.min(records[up].at));
                    gen.peer == peer && born <= at
                })
                .map(|(gen, _)| *gen)
                .collect()
        };
        for Crash {
            peer,
            record: index,
            at,
        } in crashes
        {
            for gen in existing(&model, peer, at) {
                model.impaired.entry(gen).or_default().push(Impairment {
                    from: index,
                    until: None,
                });
            }
        }
        for Partition {
            peer,
            record: index,
            from,
            repaired: until,
        } in partitions
        {
            for gen in existing(&model, peer, from) {
                // Bytes sent into (or just before) a partition are dropped
                // for good and the stream never recovers; an idle stream
                // does.
                let written = |to: Duration| {
                    model.gen_socket.get(&gen).is_some_and(|socket| {
                        socket_writes.get(socket).is_some_and(|writes| {
                            writes
                                .iter()
                                .any(|&at| at + context.delivery_bound >= from && at <= to)
                        })
                    })
                };
                let until = until.filter(|&to| !written(to));
                model
                    .impaired
                    .entry(gen)
                    .or_default()
                    .push(Impairment { from: index, until });
            }
        }
        model
    }

    fn fate(
        &mut self,
        lane: Lane,
        peer: u64,
        seq: u64,
        index: usize,
        fate: Fate,
        written_to: Option<GenId>,
    ) {
        let fates = match lane {
            Lane::Control => self.control_fates.entry(seq).or_default(),
            Lane::Data => self.data_fates.entry(DataId { peer, seq }).or_default(),
        };
        fates.push(FateAt {
            record: index,
            fate,
            written_to,
        });
    }

    /// The index of the generation's first down, if it went down.
    pub(super) fn down_at(&self, gen: &GenId) -> Option<usize> {
        self.downs
            .get(gen)
            .and_then(|d| d.first())
            .map(|d| d.record)
    }
}
