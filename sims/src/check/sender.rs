//! DC-1, DC-2, DC-5, S2–S4, S6–S8 and the end-to-end "no death signal
//! lost, none invented" over a sender-world log.
//!
//! Ground truth: the transport's `FrameWriteBegun` says what reached which
//! socket and when; the peers' `FrameArrived` what was read; the drain's
//! observer what the drain did; `ConnectionUp` names each generation's
//! socket. A generation is *impaired* while a fault may stop its peer
//! reading it: for good once the peer wedged or killed that very socket
//! (`PeerActed`) or the peer host crashed or restarted; for the length of a
//! partition, or for good if bytes were on their way through it (turmoil
//! does not retransmit what a partition dropped). Slow and latency faults
//! impair nothing.
//!
//! What each contract means here:
//! - DC-1: `Overflow` only once the pinned generation is down; `Closed`
//!   only after a shutdown was asked for; every accepted control reaches the
//!   drain and meets exactly one fate (written, failed, skipped, discarded);
//!   it is written to its pinned generation or that generation goes down;
//!   a control is skipped only when its generation is down.
//! - DC-2: a control is written to, and arrives on, only the generation it
//!   was pinned to; no frame begins to reach a generation's socket after
//!   that generation went down.
//! - DC-5: per node, the drain writes data frames in enqueue order (a
//!   subsequence); per socket, each lane arrives in enqueue order.
//! - S2: no write holds the drain longer than the deadline (+ slack); a
//!   write that hits the deadline has taken its generation down, with
//!   `WriteTimeout`, by the time it returns; the drain never sits idle
//!   while frames are queued.
//! - S3: the down hook fires at most once per generation; a generation
//!   whose socket the peer closed, or whose write failed, goes down; a down
//!   generation's socket is closed (its peer, if still reading, sees the
//!   stream end) and it leaves the table (at its down, and at the end);
//!   generations per node count 1, 2, 3, ...
//! - S4: every queued data frame meets exactly one fate, nothing arrives
//!   that was not written, and the sender's counters agree with the events.
//! - S6: a frame written whole to a generation arrives at its peer, unless
//!   the generation was impaired before it could be read.
//! - S7: no spurious down: a generation goes down only for a cause — a
//!   peer-side reason only once it was impaired, `ControlOverflow` only with
//!   an overflow, `ManualDisconnect` only after a disconnect or shutdown was
//!   asked for, `WriteCancelled` (a write dropped mid-frame) only after a
//!   shutdown or as a deadline would (`WriteTimeout`'s causes); a live
//!   generation is never displaced by a new one.
//! - S8: with redial on, a node that went down is connected again within
//!   the redial bound of its peer becoming reachable (not crashed, not
//!   partitioned, and a round trip fits in the connect timeout).
//! - E2E: every link is told: its EXIT arrives on the link's generation, or
//!   `noconnection` is delivered (or its EXIT was written to an impaired
//!   generation, which only a heartbeat could tell); `noconnection` only
//!   for a generation that went down, and once per link.
//!
//! Without the drain's account (`Reported::drain` false: a target that does
//! not report its writes and skips) the socket is the ground truth: a
//! control is "written" to its generation when it began to reach that
//! generation's socket (DC-1), a frame written to the wrong generation is
//! one that began on another generation's socket (DC-2), and "written
//! means delivered" holds for every frame that began on a socket whose
//! generation never went down (S6: a write that failed or missed its
//! deadline must take its generation down, so such a frame was written
//! whole); the checks that need a frame's fate (a skip, an unroutable
//! frame, a discard) are left out, and S2 and S4 are not decided
//! (`targets::decide`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::{CheckContext, Collector, Violation};
use crate::event::{
    ControlOutcome, Counts, DataOutcome, DialFailure, Down, Event, FaultApplied, Lane, PeerAct,
    Record, SocketEnd, Written,
};
use crate::scenario::Contract;

/// A generation: (peer, generation).
type Gen = (u64, u64);

/// How a frame left the drain's hands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Written(Written),
    Skipped,
    Unroutable,
    Discarded,
    Abandoned,
}

/// Where a frame's fates are: (record index, fate, generation written to,
/// node included: generations count from 1 on every node).
type Fates = Vec<(usize, Fate, Option<Gen>)>;

/// What one pass over the log learns, for every contract to use.
#[derive(Default)]
struct Model {
    /// Socket → generation, and back.
    socket_gen: BTreeMap<u16, Gen>,
    gen_socket: BTreeMap<Gen, u16>,
    /// When each generation came up (record index).
    up: BTreeMap<Gen, usize>,
    /// Every down hook call per generation: (index, reason, table after).
    downs: BTreeMap<Gen, Vec<(usize, Down, Option<u64>)>>,
    /// When each generation's peer could not read it: (from record index,
    /// until; `None` = for good).
    impaired: BTreeMap<Gen, Vec<(usize, Option<Duration>)>>,
    /// Per peer: when it was unreachable, `[from, to)` (to = None: still).
    unreachable: BTreeMap<u64, Vec<(Duration, Option<Duration>)>>,
    /// Generations the local node disconnected (record index).
    disconnected: BTreeMap<Gen, usize>,
    /// When the sender's shutdown was asked for.
    shutdown: Option<usize>,
    /// Generations that had an overflow.
    overflowed: BTreeSet<Gen>,
    /// Controls: seq → (enqueue index, pinned gen, link, outcome).
    controls: BTreeMap<u64, (usize, Gen, Option<u64>, ControlOutcome)>,
    /// Control fates: seq → [(index, fate, generation written to)].
    control_fates: BTreeMap<u64, Fates>,
    /// Data frames queued: (peer, seq) → index.
    data_queued: BTreeMap<(u64, u64), usize>,
    /// Data fates: (peer, seq) → [(index, fate, generation written to)].
    data_fates: BTreeMap<(u64, u64), Fates>,
    /// Generations whose stream was reset (record index of the down): a
    /// frame their peer wrote to the local node was still unread when the
    /// local node closed (or reached it after the close). A close with
    /// unread data, and data reaching a closed socket, send a reset, and a
    /// reset discards whatever the peer had not read yet (RFC 9293 3.10.4;
    /// turmoil models it). Found by hunts (seeds 11 and 12) once peers
    /// could write.
    resets: BTreeMap<Gen, usize>,
    /// When the run ended.
    end: Duration,
    /// Every frame that began to reach a socket: (lane, seq) → (record
    /// index, socket).
    begun: BTreeMap<(Lane, u64), Vec<(usize, u16)>>,
}

impl Model {
    /// Without the drain's account: where control `seq` began to reach
    /// the socket of generation `gen` (its record), if it did.
    fn begun_on(&self, lane: Lane, seq: u64, gen: &Gen) -> Option<usize> {
        let socket = self.gen_socket.get(gen)?;
        self.begun
            .get(&(lane, seq))?
            .iter()
            .find(|(_, on)| on == socket)
            .map(|(index, _)| *index)
    }
}

impl Model {
    fn build(records: &[Record], context: &CheckContext) -> Self {
        let (redial, tick) = (context.redial, context.tick);
        let mut model = Self::default();
        let mut open_faults: BTreeMap<(u64, bool), Duration> = BTreeMap::new();
        let mut socket_impaired: BTreeMap<u16, usize> = BTreeMap::new();
        let mut socket_writes: BTreeMap<u16, Vec<Duration>> = BTreeMap::new();
        // (peer, from index, from time, repaired at)
        let mut partitions: Vec<(u64, usize, Duration, Option<Duration>)> = Vec::new();
        // (peer, index, time) of crashes and restarts
        let mut crashes: Vec<(u64, usize, Duration)> = Vec::new();
        // Per socket, when its peer began writing the local node a frame
        // at the maximum; per generation, when the local node read one.
        let mut max_frames: BTreeMap<u16, Vec<usize>> = BTreeMap::new();
        let mut inbound: BTreeMap<Gen, Vec<usize>> = BTreeMap::new();
        for (index, record) in records.iter().enumerate() {
            model.end = model.end.max(record.at);
            match record.event {
                Event::ConnectionUp {
                    peer,
                    generation,
                    socket,
                } => {
                    model.socket_gen.insert(socket, (peer, generation));
                    model.gen_socket.insert((peer, generation), socket);
                    model.up.insert((peer, generation), index);
                }
                Event::ConnectionDown {
                    peer,
                    generation,
                    reason,
                    table,
                } => model
                    .downs
                    .entry((peer, generation))
                    .or_default()
                    .push((index, reason, table)),
                Event::InboundFrameRead {
                    peer, generation, ..
                } => inbound.entry((peer, generation)).or_default().push(index),
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
                    model
                        .controls
                        .insert(seq, (index, (peer, generation), link, outcome));
                    if outcome == ControlOutcome::Overflow {
                        model.overflowed.insert((peer, generation));
                    }
                }
                Event::DataEnqueued {
                    peer,
                    seq,
                    outcome: DataOutcome::Queued,
                } => {
                    model.data_queued.insert((peer, seq), index);
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
                    Some((peer, generation)),
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
                    Some((peer, generation)),
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
                    model
                        .begun
                        .entry((lane, seq))
                        .or_default()
                        .push((index, socket));
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
                Event::Fault { peer, fault } => match fault {
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
                                crashes.push((peer, index, record.at));
                            }
                            FaultApplied::Partition => {
                                partitions.push((peer, index, record.at, None));
                            }
                            _ => {
                                for open in partitions.iter_mut().filter(|p| p.0 == peer) {
                                    open.3.get_or_insert(record.at);
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
                                .push((from, Some(record.at)));
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
                },
                Event::Disconnected {
                    peer,
                    generation: Some(generation),
                } => {
                    model
                        .disconnected
                        .entry((peer, generation))
                        .or_insert(index);
                }
                Event::ShutdownRequested => {
                    model.shutdown.get_or_insert(index);
                }
                _ => {}
            }
        }
        for (gen, downs) in &model.downs {
            let (Some(&(down, _, _)), Some(socket)) = (downs.first(), model.gen_socket.get(gen))
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
                .push((from, None));
        }
        for (socket, index) in socket_impaired {
            if let Some(&gen) = model.socket_gen.get(&socket) {
                model.impaired.entry(gen).or_default().push((index, None));
            }
        }
        // The generations of `peer` whose sockets existed at `at`: from
        // the first byte written (the dialer's hello precedes the
        // generation's registration, a preemption point may sit between).
        let existing = |model: &Self, peer: u64, at: Duration| -> Vec<Gen> {
            model
                .up
                .iter()
                .filter(|(gen, &up)| {
                    let socket = model.gen_socket.get(gen);
                    let first_write = socket
                        .and_then(|socket| socket_writes.get(socket))
                        .and_then(|writes| writes.first().copied());
                    let born = first_write.map_or(records[up].at, |w| w.min(records[up].at));
                    gen.0 == peer && born <= at
                })
                .map(|(gen, _)| *gen)
                .collect()
        };
        for (peer, index, at) in crashes {
            for gen in existing(&model, peer, at) {
                model.impaired.entry(gen).or_default().push((index, None));
            }
        }
        for (peer, index, from, until) in partitions {
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
                model.impaired.entry(gen).or_default().push((index, until));
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
        written_to: Option<Gen>,
    ) {
        let fates = match lane {
            Lane::Control => self.control_fates.entry(seq).or_default(),
            Lane::Data => self.data_fates.entry((peer, seq)).or_default(),
        };
        fates.push((index, fate, written_to));
    }

    /// The index of the generation's first down, if it went down.
    fn down_at(&self, gen: &Gen) -> Option<usize> {
        self.downs.get(gen).and_then(|d| d.first()).map(|d| d.0)
    }
}

/// All sender-contract violations in `records`.
#[must_use]
pub fn check(records: &[Record], context: &CheckContext) -> Vec<Violation> {
    let model = Model::build(records, context);
    let mut out = Collector::new(records);
    lane_depths(&mut out, context);
    dc1(&mut out, &model, context);
    dc2(&mut out, &model, context);
    dc5(&mut out);
    s2(&mut out, &model, context);
    s3(&mut out, &model, context);
    s4(&mut out, &model, context);
    s6(&mut out, &model, context);
    s7(&mut out, &model, context);
    s8(&mut out, &model, context);
    end_to_end(&mut out, &model, context);
    out.into_violations()
}

fn dc1(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    for (index, record) in out.records().iter().enumerate() {
        if let Event::ControlEnqueued {
            peer,
            generation,
            seq,
            outcome,
            down_at_return,
            ..
        } = record.event
        {
            match outcome {
                ControlOutcome::Overflow if !down_at_return => out.violate(
                    Contract::Dc1,
                    format!("control {seq}: Overflow returned while its pinned generation peer{peer}/{generation} was still up"),
                    &[index],
                ),
                ControlOutcome::Closed if model.shutdown.is_none_or(|s| s > index) => {
                    out.violate(
                        Contract::Dc1,
                        format!("control {seq}: Closed returned though no shutdown was asked for"),
                        &[index],
                    );
                }
                ControlOutcome::Queued | ControlOutcome::Overflow | ControlOutcome::Closed => {}
            }
        }
    }
    for (&seq, &(index, pinned, _, outcome)) in &model.controls {
        if outcome != ControlOutcome::Queued {
            continue;
        }
        let fates = model.control_fates.get(&seq).map_or(&[][..], Vec::as_slice);
        let (peer, generation) = pinned;
        if fates.len() > 1 {
            let mut cited: Vec<usize> = fates.iter().map(|f| f.0).collect();
            cited.push(index);
            out.violate(
                Contract::Dc1,
                format!("control {seq} met {} fates", fates.len()),
                &cited,
            );
        }
        for &(at, fate, _) in fates {
            if fate == Fate::Skipped && model.down_at(&pinned).is_none_or(|down| down > at) {
                out.violate(
                    Contract::Dc1,
                    format!("control {seq} was skipped while its pinned generation peer{peer}/{generation} was up"),
                    &[index, at],
                );
            }
        }
        if !context.finished {
            continue;
        }
        let drain = context.reported.drain;
        if fates.is_empty() && drain {
            out.violate(
                Contract::Dc1,
                format!("control {seq} was accepted against peer{peer}/{generation} but the drain never saw it: neither written, skipped nor discarded"),
                &[index],
            );
        }
        let written = if drain {
            fates
                .iter()
                .any(|&(_, fate, to)| fate == Fate::Written(Written::Written) && to == Some(pinned))
        } else {
            model.begun_on(Lane::Control, seq, &pinned).is_some()
        };
        if !written && model.down_at(&pinned).is_none() {
            let mut cited: Vec<usize> = fates.iter().map(|f| f.0).collect();
            cited.push(index);
            out.violate(
                Contract::Dc1,
                format!("control {seq} accepted against peer{peer}/{generation} was neither written to it nor was it marked down: silently lost"),
                &cited,
            );
        }
    }
}

/// The sender's lanes are bounded: a frame is refused (`DroppedFull`,
/// `Overflow`) only when its lane was full, and a lane never holds more
/// than its depth (S4 for data, DC-1 for controls: an early `Overflow`
/// takes a healthy generation down). The log counts a frame from its
/// enqueue to its fate; each writer may hold one frame taken off a lane in
/// between (a drain that took it and has not begun its write, or a write
/// under way), so a full lane shows as up to `depth + writers` frames,
/// where `writers` is the writes under way then, and at least one: a
/// single drain's lane never shows more than `depth + 1`
/// (`lane_depths_allow_one_frame_per_writer_in_flight`).
fn lane_depths(out: &mut Collector<'_>, context: &CheckContext) {
    let Some((data_depth, control_depth)) = context.lane_capacity else {
        return;
    };
    let (mut data, mut controls) = (0i64, 0i64);
    let mut writing: BTreeSet<(u64, u64, Lane, u64)> = BTreeSet::new();
    for (index, record) in out.records().iter().enumerate() {
        match record.event {
            Event::WriteStarted {
                peer,
                generation,
                lane,
                seq,
            } => {
                writing.insert((peer, generation, lane, seq));
            }
            Event::WriteFinished {
                peer,
                generation,
                lane,
                seq,
                ..
            }
            | Event::WriteAbandoned {
                peer,
                generation,
                lane,
                seq,
            } => {
                writing.remove(&(peer, generation, lane, seq));
            }
            _ => {}
        }
        let in_hand = (writing.len() as i64).max(1);
        // Signed, like `s2`'s count: a fate settled inside `enqueue` is
        // logged just before the enqueue it belongs to.
        let (lane, counted, depth, refused, accepted) = match record.event {
            Event::DataEnqueued { outcome, .. } => {
                let (before, accepted) = (data, outcome == DataOutcome::Queued);
                data += i64::from(accepted);
                let refused = outcome == DataOutcome::DroppedFull;
                (Lane::Data, before, data_depth, refused, accepted)
            }
            Event::ControlEnqueued { outcome, .. } => {
                let (before, accepted) = (controls, outcome == ControlOutcome::Queued);
                controls += i64::from(accepted);
                let refused = outcome == ControlOutcome::Overflow;
                (Lane::Control, before, control_depth, refused, accepted)
            }
            Event::WriteFinished { lane, .. } | Event::WriteAbandoned { lane, .. } => {
                match lane {
                    Lane::Data => data -= 1,
                    Lane::Control => controls -= 1,
                }
                continue;
            }
            Event::DataUnroutable { .. } | Event::DataDiscarded { .. } => {
                data -= 1;
                continue;
            }
            Event::ControlSkipped { .. } | Event::ControlDiscarded { .. } => {
                controls -= 1;
                continue;
            }
            _ => continue,
        };
        let depth = i64::try_from(depth).unwrap_or(i64::MAX);
        let contract = match lane {
            Lane::Data => Contract::S4,
            Lane::Control => Contract::Dc1,
        };
        if refused && counted < depth {
            out.violate(
                contract,
                format!("the {lane:?} lane refused a frame while it held {counted} of {depth}"),
                &[index],
            );
        } else if accepted && counted > depth + in_hand - 1 && context.reported.drain {
            out.violate(
                contract,
                format!("the {lane:?} lane accepted a frame while it held {counted} of {depth}: more than it may hold"),
                &[index],
            );
        }
    }
}

fn dc2(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    for (index, record) in out.records().iter().enumerate() {
        match record.event {
            Event::WriteStarted {
                peer,
                generation,
                lane: Lane::Control,
                seq,
            } => {
                if let Some(&(_, pinned, _, _)) = model.controls.get(&seq) {
                    if pinned != (peer, generation) {
                        out.violate(
                            Contract::Dc2,
                            format!("control {seq} pinned to peer{}/{} was written to peer{peer}/{generation}", pinned.0, pinned.1),
                            &[index],
                        );
                    }
                }
            }
            Event::FrameWriteBegun {
                socket,
                lane: Lane::Control,
                seq,
                ..
            } if !context.reported.drain => {
                let pinned = model.controls.get(&seq).map(|c| c.1);
                let on = model.socket_gen.get(&socket).copied();
                if let (Some(pinned), Some(on)) = (pinned, on) {
                    if pinned != on {
                        out.violate(
                            Contract::Dc2,
                            format!(
                                "control {seq} pinned to peer{}/{} began to be written to peer{}/{}'s socket",
                                pinned.0, pinned.1, on.0, on.1
                            ),
                            &[index],
                        );
                    }
                }
                dc2_after_down(out, model, context, index, socket, Lane::Control, seq);
            }
            Event::FrameArrived {
                socket,
                lane: Lane::Control,
                seq,
                ..
            } => {
                let pinned = model.controls.get(&seq).map(|c| c.1);
                let arrived_on = model.socket_gen.get(&socket).copied();
                if let (Some(pinned), Some(on)) = (pinned, arrived_on) {
                    if pinned != on {
                        out.violate(
                            Contract::Dc2,
                            format!(
                                "control {seq} pinned to peer{}/{} arrived on peer{}/{}'s socket",
                                pinned.0, pinned.1, on.0, on.1
                            ),
                            &[index],
                        );
                    }
                }
            }
            Event::FrameWriteBegun {
                socket, lane, seq, ..
            } => dc2_after_down(out, model, context, index, socket, lane, seq),
            _ => {}
        }
    }
}

/// DC-2: no frame begins to reach a generation's socket after that
/// generation went down.
fn dc2_after_down(
    out: &mut Collector<'_>,
    model: &Model,
    context: &CheckContext,
    index: usize,
    socket: u16,
    lane: Lane,
    seq: u64,
) {
    let Some(gen) = model.socket_gen.get(&socket) else {
        return;
    };
    // For real, a write that passed its down check just before another
    // thread marked the generation down is logged (at the socket) just
    // after the down: excused within the race window. In simulation (no
    // window) log order alone decides, even within one tick
    // (`real_dc2_excuses_only_a_write_racing_the_down`).
    let records = out.records();
    let at = records[index].at;
    if let Some(down) = model
        .down_at(gen)
        .filter(|&down| down < index && !context.may_precede(at, records[down].at))
    {
        out.violate(
            Contract::Dc2,
            format!(
                "{lane:?} frame {seq} began to be written to peer{}/{} after that generation went down",
                gen.0, gen.1
            ),
            &[down, index],
        );
    }
}

/// DC-5. Controls are numbered globally and data per node, both in
/// enqueue order, so order is "seq only grows" on each key: the drain must
/// start writing each node's data in enqueue order (whatever generation it
/// resolves to), and each socket must deliver each lane in that order.
/// Across two generations of a node nothing orders arrivals: frames left
/// in the old socket may arrive after the new one's, which only the
/// receiving node can sort out.
fn dc5(out: &mut Collector<'_>) {
    let mut last: BTreeMap<(u8, u64, Lane), (u64, usize)> = BTreeMap::new();
    for (index, record) in out.records().iter().enumerate() {
        let (key, seq, text) = match record.event {
            Event::WriteStarted {
                peer,
                lane: Lane::Data,
                seq,
                ..
            } => (
                (0, peer, Lane::Data),
                seq,
                format!("data to peer{peer} written"),
            ),
            Event::FrameArrived {
                peer,
                socket,
                lane,
                seq,
                ..
            } => (
                (1, u64::from(socket), lane),
                seq,
                format!("{lane:?} frames on socket {socket} of peer{peer} arrived"),
            ),
            _ => continue,
        };
        if let Some((previous, at)) = last
            .insert(key, (seq, index))
            .filter(|&(previous, _)| seq <= previous)
        {
            out.violate(
                Contract::Dc5,
                format!("{text} out of order: {seq} after {previous}"),
                &[at, index],
            );
        }
    }
}

fn s2(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    let Some(deadline) = context.write_timeout else {
        return;
    };
    let slack = context.tick * 3 + Duration::from_millis(5);
    // The drain picks the next frame within two preemption points.
    let pick_slack = slack + context.preempt_max * 2;
    let records = out.records();
    let mut open: BTreeMap<(u64, Lane, u64), usize> = BTreeMap::new();
    // Signed: a target may settle a frame's fate inside `enqueue` (a frame
    // with no connection, reported unroutable at once), and then the fate
    // is logged before the enqueue it belongs to.
    let mut queued: i64 = 0;
    let mut idle_since: Option<usize> = None;
    let mut stalled_reported = false;
    for (index, record) in records.iter().enumerate() {
        // Drain progress: idle with work queued for longer than it takes to
        // pick a frame.
        if let Some(since) = idle_since {
            let waited = record.at.saturating_sub(records[since].at);
            if waited > pick_slack && !stalled_reported && model.shutdown.is_none_or(|s| s > index)
            {
                stalled_reported = true;
                out.violate(
                    Contract::S2,
                    format!("the drain sat idle for {waited:?} with {queued} frame(s) queued"),
                    &[since, index],
                );
            }
        }
        let mut picked = false;
        match record.event {
            Event::DataEnqueued {
                outcome: DataOutcome::Queued,
                ..
            }
            | Event::ControlEnqueued {
                outcome: ControlOutcome::Queued,
                ..
            } => queued += 1,
            Event::WriteStarted {
                peer, lane, seq, ..
            } => {
                open.insert((peer, lane, seq), index);
                queued -= 1;
                picked = true;
            }
            Event::ControlSkipped { .. }
            | Event::DataUnroutable { .. }
            | Event::ControlDiscarded { .. }
            | Event::DataDiscarded { .. } => {
                queued -= 1;
                picked = true;
            }
            Event::WriteFinished {
                peer,
                generation,
                lane,
                seq,
                outcome,
            } => {
                picked = true;
                let open_started = open.remove(&(peer, lane, seq));
                if let Some(started) = open_started {
                    let took = record.at.saturating_sub(records[started].at);
                    if took > deadline + slack {
                        out.violate(
                            Contract::S2,
                            format!("a write to peer{peer}/{generation} held the drain for {took:?} (deadline {deadline:?})"),
                            &[started, index],
                        );
                    }
                }
                let gen = (peer, generation);
                let first_down = model.downs.get(&gen).and_then(|d| d.first()).copied();
                match outcome {
                    Written::TimedOut if first_down.is_none_or(|down| down.0 > index) => {
                        out.violate(
                            Contract::S2,
                            format!("a write to peer{peer}/{generation} timed out but the generation was not down when it returned"),
                            &[index],
                        );
                    }
                    // Down by this write's deadline, unless something else
                    // downed it while the write was under way.
                    Written::TimedOut => {
                        let started = open_started.unwrap_or(index);
                        if let Some((down, reason, _)) = first_down.filter(|&(down, reason, _)| {
                            down > started && reason != Down::WriteTimeout
                        }) {
                            out.violate(
                                Contract::S2,
                                format!("a write to peer{peer}/{generation} timed out but its generation went down as {reason:?}"),
                                &[started, down, index],
                            );
                        }
                    }
                    // For real, another thread's down (the flag a refused
                    // or abandoned write saw) may be logged just after the
                    // write's end: excused within the race window (zero in
                    // simulation; `real_s3_excuses_only_a_down_racing_the_failed_write`).
                    // A write its generation's deadline ended (the down
                    // came while it was under way, as `WriteTimeout`) timed
                    // out: the drain's account says so.
                    Written::Failed
                        if first_down.is_some_and(|(down, reason, _)| {
                            reason == Down::WriteTimeout
                                && open_started.is_some_and(|started| down > started)
                        }) =>
                    {
                        out.violate(
                            Contract::S2,
                            format!("a write to peer{peer}/{generation} was ended by its deadline (its generation went down as WriteTimeout while it was under way) but was reported failed, not timed out"),
                            &[index],
                        );
                    }
                    Written::Failed
                        if first_down.is_none_or(|down| {
                            down.0 > index && !context.may_precede(records[down.0].at, record.at)
                        }) =>
                    {
                        out.violate(
                            Contract::S3,
                            format!("a write to peer{peer}/{generation} failed but the generation was not down when it returned"),
                            &[index],
                        );
                    }
                    Written::Written | Written::Failed => {}
                }
            }
            Event::WriteAbandoned {
                peer, lane, seq, ..
            } => {
                open.remove(&(peer, lane, seq));
                picked = true;
            }
            _ => {}
        }
        if picked {
            idle_since = None;
            stalled_reported = false;
        }
        if open.is_empty() && queued > 0 && idle_since.is_none() {
            idle_since = Some(index);
        }
    }
    for ((peer, _, _), started) in open {
        let waited = model.end.saturating_sub(records[started].at);
        if waited > deadline + slack {
            out.violate(
                Contract::S2,
                format!("a write to peer{peer} has held the drain for {waited:?} and never finished (deadline {deadline:?})"),
                &[started],
            );
        }
    }
}

fn s3(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    for (gen, downs) in &model.downs {
        let cited: Vec<usize> = downs.iter().map(|d| d.0).collect();
        if downs.len() > 1 {
            out.violate(
                Contract::S3,
                format!(
                    "down hook fired {} times for peer{}/{}",
                    downs.len(),
                    gen.0,
                    gen.1
                ),
                &cited,
            );
        }
        for &(index, _, table) in downs {
            if table == Some(gen.1) {
                out.violate(
                    Contract::S3,
                    format!(
                        "peer{}/{} went down but its table slot still holds it",
                        gen.0, gen.1
                    ),
                    &[index],
                );
            }
        }
    }
    // A generation that went down has its socket closed, so its peer (if
    // it is still reading) sees the stream end.
    if context.finished {
        let records = out.records();
        let ended: BTreeSet<u16> = records
            .iter()
            .filter_map(|r| match r.event {
                Event::PeerSocketClosed { socket, .. }
                | Event::PeerActed {
                    socket,
                    act: PeerAct::Killed,
                    ..
                } => Some(socket),
                _ => None,
            })
            .collect();
        let bound = context.delivery_bound + context.preempt_max * 2 + context.connect_timeout;
        for (gen, downs) in &model.downs {
            let (Some(&(index, reason, _)), Some(socket)) =
                (downs.first(), model.gen_socket.get(gen))
            else {
                continue;
            };
            let cut_off = model.impaired.contains_key(gen);
            if !cut_off && !ended.contains(socket) && records[index].at + bound <= model.end {
                out.violate(
                    Contract::S3,
                    format!(
                        "peer{}/{} went down ({reason:?}) but its socket was never closed: its peer, still reading, never saw the stream end",
                        gen.0, gen.1
                    ),
                    &[index],
                );
            }
        }
    }
    let mut latest: BTreeMap<u64, (u64, usize)> = BTreeMap::new();
    for (index, record) in out.records().iter().enumerate() {
        // What the peer did that must take the socket's generation down.
        let ended = match record.event {
            Event::ConnectionUp {
                peer, generation, ..
            } => {
                // Every generation the manager installs is handed to the
                // dial that made it, and logged. They come from one counter
                // per manager (a node's slot is removed when it has no live
                // connection), so a node's generations only grow, from 1.
                let (previous, at) = latest.get(&peer).copied().unwrap_or((0, index));
                if generation <= previous {
                    out.violate(
                        Contract::S3,
                        format!("peer{peer}: generation {generation} came up after generation {previous}: generations start at 1 and only grow"),
                        &[at, index],
                    );
                }
                latest.insert(peer, (generation, index));
                None
            }
            Event::TableAtEnd {
                peer,
                generation: Some(generation),
            } => {
                if let Some(down) = model.down_at(&(peer, generation)) {
                    out.violate(
                        Contract::S3,
                        format!("at the end the table still holds peer{peer}/{generation}, which went down"),
                        &[down, index],
                    );
                }
                None
            }
            Event::PeerActed {
                socket,
                act: act @ (PeerAct::WroteOversize | PeerAct::Tore { .. }),
                ..
            } => {
                // A header over the maximum and a stream that ends inside a
                // frame are read errors, never a clean close: a decoder
                // that calls either "closed" reports a broken peer as one
                // that said goodbye.
                let down = model.socket_gen.get(&socket).and_then(|gen| {
                    let downs = model.downs.get(gen)?;
                    downs.first().map(|&(at, reason, _)| (gen, at, reason))
                });
                if let Some((gen, at, Down::PeerClosed)) = down {
                    if at > index {
                        out.violate(
                            Contract::S3,
                            format!(
                                "the peer {} on peer{}/{}'s socket, but the generation went down as PeerClosed: that is a read error, not a clean close",
                                match act {
                                    PeerAct::Tore { bytes } => format!("tore its stream {bytes} bytes into a frame"),
                                    _ => "wrote a header over the maximum".to_owned(),
                                },
                                gen.0, gen.1
                            ),
                            &[index, at],
                        );
                    }
                }
                Some((
                    socket,
                    "the peer wrote a header over the maximum or tore its stream",
                ))
            }
            Event::PeerActed {
                socket,
                act: PeerAct::Killed,
                ..
            }
            | Event::PeerSocketClosed {
                socket,
                how: SocketEnd::Eof,
                ..
            } => Some((socket, "the peer closed")),
            _ => None,
        };
        if let Some((socket, what)) = ended {
            must_go_down(out, model, context, record, socket, index, what);
        }
    }
}

/// S3: the generation on `socket` goes down once the peer did what
/// `what` says to it at `record` (`index`), unless the run did not finish
/// or a partition swallowed it (turmoil drops what crosses a partition for
/// good, the FIN too: the hunt found a kill inside a partition).
fn must_go_down(
    out: &mut Collector<'_>,
    model: &Model,
    context: &CheckContext,
    record: &Record,
    socket: u16,
    index: usize,
    what: &str,
) {
    if !context.finished {
        return;
    }
    if let Some(gen) = model.socket_gen.get(&socket) {
        let lost = model.unreachable.get(&gen.0).is_some_and(|windows| {
            windows.iter().any(|&(from, to)| {
                from <= record.at + context.delivery_bound && to.is_none_or(|to| record.at <= to)
            })
        });
        if !model.downs.contains_key(gen) && !lost {
            out.violate(
                Contract::S3,
                format!(
                    "{what} peer{}/{}'s socket but the generation never went down",
                    gen.0, gen.1
                ),
                &[index],
            );
        }
    }
}

fn s4(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    let mut started: BTreeSet<(u64, u64)> = BTreeSet::new();
    let mut stats = None;
    for (index, record) in out.records().iter().enumerate() {
        match record.event {
            Event::WriteStarted {
                peer,
                lane: Lane::Data,
                seq,
                ..
            } => {
                started.insert((peer, seq));
            }
            Event::FrameArrived {
                peer,
                lane: Lane::Data,
                seq,
                ..
            } if !started.contains(&(peer, seq)) => {
                out.violate(
                    Contract::S4,
                    format!("data frame {seq} arrived at peer{peer} but was never written"),
                    &[index],
                );
            }
            // `DroppedClosed` says the sender is shut down: only once a
            // shutdown was asked for (a full lane is `DroppedFull`).
            Event::DataEnqueued {
                peer,
                seq,
                outcome: DataOutcome::DroppedClosed,
            } if model.shutdown.is_none_or(|s| s > index) => {
                out.violate(
                    Contract::S4,
                    format!("data frame {seq} to peer{peer} was dropped as closed though no shutdown was asked for"),
                    &[index],
                );
            }
            // The local node only ever writes whole frames it was given (and
            // its hello); a peer reading anything else read a stream that
            // lost a frame boundary or had its bytes changed.
            Event::PeerSocketClosed {
                peer,
                socket,
                how: SocketEnd::Garbage,
            } => {
                out.violate(
                    Contract::S4,
                    format!("peer{peer} read bytes on socket {socket} that are not a frame the local node was given (a lost frame boundary or changed bytes)"),
                    &[index],
                );
            }
            Event::SenderStats(_) => stats = Some(index),
            _ => {}
        }
    }
    for ((peer, seq), fates) in &model.data_fates {
        let cited: Vec<usize> = fates.iter().map(|f| f.0).collect();
        if fates.len() > 1 {
            out.violate(
                Contract::S4,
                format!("data frame {seq} to peer{peer} met {} fates", fates.len()),
                &cited,
            );
        }
        if !model.data_queued.contains_key(&(*peer, *seq)) {
            out.violate(
                Contract::S4,
                format!("data frame {seq} to peer{peer} left the drain but was never queued"),
                &cited,
            );
        }
    }
    if !context.finished {
        return;
    }
    for (&(peer, seq), &index) in &model.data_queued {
        if !model.data_fates.contains_key(&(peer, seq)) {
            out.violate(
                Contract::S4,
                format!("queued data frame {seq} to peer{peer} has no fate: neither written, failed, unroutable nor discarded"),
                &[index],
            );
        }
    }
    let Some(index) = stats else {
        return;
    };
    let Event::SenderStats(said) = out.records()[index].event else {
        return;
    };
    fn count<'a>(fates: impl Iterator<Item = &'a Fates>, wanted: &[Fate]) -> u64 {
        fates.flatten().filter(|f| wanted.contains(&f.1)).count() as u64
    }
    let (written, failed, discarded) = (
        [Fate::Written(Written::Written)],
        [
            Fate::Written(Written::Failed),
            Fate::Written(Written::TimedOut),
        ],
        [Fate::Discarded, Fate::Abandoned],
    );
    let seen = Counts {
        data_queued: model.data_queued.len() as u64,
        data_written: count(model.data_fates.values(), &written),
        data_failed: count(model.data_fates.values(), &failed),
        data_no_connection: count(model.data_fates.values(), &[Fate::Unroutable]),
        data_discarded: count(model.data_fates.values(), &discarded),
        control_queued: model
            .controls
            .values()
            .filter(|c| c.3 == ControlOutcome::Queued)
            .count() as u64,
        control_written: count(model.control_fates.values(), &written),
        control_failed: count(model.control_fates.values(), &failed),
        control_skipped: count(model.control_fates.values(), &[Fate::Skipped]),
        control_discarded: count(model.control_fates.values(), &discarded),
    };
    if said != seen {
        out.violate(
            Contract::S4,
            format!("the sender's counters {said:?} disagree with the events {seen:?}"),
            &[index],
        );
    }
}

/// Whether `gen` was impaired while a frame written at `written_at` could
/// still have been on its way (within `bound`): the only excuse for its
/// never arriving.
fn excused(
    model: &Model,
    records: &[Record],
    gen: &Gen,
    written_at: Duration,
    bound: Duration,
) -> bool {
    let reset = model
        .resets
        .get(gen)
        .is_some_and(|&down| written_at <= records[down].at);
    reset
        || model.impaired.get(gen).is_some_and(|spans| {
            spans.iter().any(|&(from, until)| {
                records[from].at <= written_at + bound
                    && until.is_none_or(|until| until >= written_at)
            })
        })
}

/// Whether `gen`'s peer was cut off when record `index` was logged. For
/// real, a fault made on the driver's thread (a peer aborted, a socket
/// closed) can reach the local node's read before the driver logs it: a
/// fault logged within the race window after the record counts
/// ([`CheckContext::may_precede`];
/// `real_s7_excuses_only_a_fault_logged_just_after_its_down`).
fn impaired_at(
    model: &Model,
    records: &[Record],
    gen: &Gen,
    index: usize,
    context: &CheckContext,
) -> bool {
    let at = records[index].at;
    model.impaired.get(gen).is_some_and(|spans| {
        spans.iter().any(|&(from, until)| {
            let begun = from <= index || context.may_precede(records[from].at, at);
            begun && until.is_none_or(|until| until >= at)
        })
    })
}

fn s6(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    if !context.finished {
        return;
    }
    let records = out.records();
    let mut arrived: BTreeSet<(u16, Lane, u64)> = BTreeSet::new();
    for record in records {
        if let Event::FrameArrived {
            socket, lane, seq, ..
        } = record.event
        {
            arrived.insert((socket, lane, seq));
        }
    }
    for (index, record) in records.iter().enumerate() {
        let (gen, lane, seq) = match record.event {
            Event::WriteFinished {
                peer,
                generation,
                lane,
                seq,
                outcome: Written::Written,
            } if context.reported.drain => ((peer, generation), lane, seq),
            // Without the drain's account: a frame that began on a socket
            // whose generation never went down was written whole (a write
            // that fails or misses its deadline takes its generation down).
            Event::FrameWriteBegun {
                socket, lane, seq, ..
            } if !context.reported.drain => {
                let Some(&gen) = model.socket_gen.get(&socket) else {
                    continue;
                };
                if model.down_at(&gen).is_some() {
                    continue;
                }
                (gen, lane, seq)
            }
            _ => continue,
        };
        let (peer, generation) = gen;
        let Some(&socket) = model.gen_socket.get(&gen) else {
            continue;
        };
        // From a write's begin, it may take a whole write to finish.
        let bound = if context.reported.drain {
            context.delivery_bound
        } else {
            context.delivery_bound + context.write_bound
        };
        if !arrived.contains(&(socket, lane, seq))
            && !excused(model, records, &gen, record.at, bound)
        {
            out.violate(
                Contract::S6,
                format!("{lane:?} frame {seq} was written whole to peer{peer}/{generation}, whose peer kept reading, but never arrived"),
                &[index],
            );
        }
    }
}

fn s7(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    for (gen, downs) in &model.downs {
        let Some(&(index, reason, _)) = downs.first() else {
            continue;
        };
        let (peer, generation) = *gen;
        let asked = |since: Option<usize>| since.is_some_and(|at| at <= index);
        let justified = match reason {
            Down::ControlOverflow => model.overflowed.contains(gen),
            Down::ManualDisconnect => {
                asked(model.shutdown) || asked(model.disconnected.get(gen).copied())
            }
            // A write dropped mid-frame: by a shutdown's abort, or by a
            // sender that bounds a write by dropping it, which is a
            // deadline as good as a `WriteTimeout` (beamr's drain, over
            // lanesim's connection layer, does: docs/examples.md).
            Down::WriteCancelled if asked(model.shutdown) => true,
            // A deadline a healthy link cannot meet is its own cause
            // (found by the hunt: 12 KB controls over a 4-segment window
            // against a 100 ms deadline).
            Down::WriteTimeout | Down::WriteCancelled => {
                context
                    .write_timeout
                    .is_some_and(|t| t <= context.write_bound)
                    || impaired_at(model, out.records(), gen, index, context)
            }
            // A frame that trickles in past its deadline needs a peer
            // that was cut off or slowed mid-frame.
            Down::PeerClosed
            | Down::ReadError
            | Down::WriteError
            | Down::HeartbeatTimeout
            | Down::FrameTimeout => impaired_at(model, out.records(), gen, index, context),
            // The sender world has one production node, no frame
            // callback, and peers that write one small frame at a time
            // against an ample budget: none of these can happen there.
            Down::SimultaneousConnect | Down::HandlerPanicked | Down::OverBudget => false,
        };
        if !justified {
            out.violate(
                Contract::S7,
                format!("peer{peer}/{generation} went down ({reason:?}) with no cause: its peer was never cut off and nothing local asked for it"),
                &[index],
            );
        }
    }
    for (&gen, &up) in &model.up {
        let displaced = model.up.iter().find(|(older, &older_up)| {
            older.0 == gen.0
                && older.1 < gen.1
                && older_up < up
                && model.down_at(older).is_none_or(|down| down > up)
        });
        if let Some((older, &older_up)) = displaced {
            out.violate(
                Contract::S7,
                format!(
                    "peer{}/{} came up while peer{}/{} was still live: a live generation was displaced",
                    gen.0, gen.1, older.0, older.1
                ),
                &[older_up, up],
            );
        }
    }
}

fn s8(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    let Some((after, connect_timeout)) = context.redial else {
        return;
    };
    let records = out.records();
    // A keeper sleeps `after` and dials, an attempt fails within the
    // connect timeout; three attempts after the peer is reachable (one may
    // have started while it was not, one may lose to turmoil's random
    // latency), then the network and one preemption point.
    let bound = (after + connect_timeout) * 3 + context.delivery_bound + context.preempt_max;
    for (gen, downs) in &model.downs {
        let Some(&(index, _, _)) = downs.first() else {
            continue;
        };
        let (peer, generation) = *gen;
        let down_at = records[index].at;
        let windows = model.unreachable.get(&peer).map_or(&[][..], Vec::as_slice);
        // The first moment from which the peer stays reachable for a whole
        // bound: step past every window that covers it or opens within it.
        let mut reachable = Some(down_at);
        while let Some(from) = reachable {
            let blocking = windows
                .iter()
                .filter(|(start, end)| *start <= from + bound && end.is_none_or(|end| from < end))
                .map(|(_, end)| *end)
                .next();
            match blocking {
                None => break,
                Some(end) => reachable = end,
            }
        }
        let Some(reachable) = reachable.filter(|r| *r + bound <= model.end) else {
            continue;
        };
        let by = reachable + bound;
        let reconnected = model
            .up
            .iter()
            .any(|(up, &at)| up.0 == peer && up.1 > generation && records[at].at <= by);
        // Under a connect timeout a healthy dial may outlast, dials that
        // all timed out are the world's timing, not the code's: no verdict.
        let timed_out = context.dials_may_time_out() && {
            let dials: Vec<DialFailure> = records
                .iter()
                .filter(|r| r.at > reachable && r.at <= by)
                .filter_map(|r| match r.event {
                    Event::DialFailed { peer: p, error } if p == peer => Some(error),
                    _ => None,
                })
                .collect();
            !dials.is_empty() && dials.iter().all(|e| *e == DialFailure::Timeout)
        };
        if !reconnected && !timed_out {
            out.violate(
                Contract::S8,
                format!("peer{peer}/{generation} went down at {down_at:?}; its peer was reachable from {reachable:?} but no new generation came up by {by:?}"),
                &[index],
            );
        }
    }
}

fn end_to_end(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    let records = out.records();
    let mut told: BTreeSet<u64> = BTreeSet::new();
    let mut delivered: BTreeMap<u64, usize> = BTreeMap::new();
    for (index, record) in records.iter().enumerate() {
        match record.event {
            Event::FrameArrived {
                socket,
                lane: Lane::Control,
                seq,
                link: Some(link),
                ..
            } if model.socket_gen.get(&socket).is_some_and(|on| {
                model
                    .controls
                    .get(&seq)
                    .is_some_and(|control| control.1 == *on)
            }) =>
            {
                told.insert(link);
            }
            Event::NoConnection {
                peer,
                generation,
                link,
            } => {
                told.insert(link);
                if let Some(first) = delivered.insert(link, index) {
                    out.violate(
                        Contract::EndToEnd,
                        format!("link {link}: noconnection delivered twice"),
                        &[first, index],
                    );
                }
                if model
                    .down_at(&(peer, generation))
                    .is_none_or(|down| down > index)
                {
                    out.violate(
                        Contract::EndToEnd,
                        format!("link {link}: noconnection delivered for peer{peer}/{generation}, which had not gone down: an invented death signal"),
                        &[index],
                    );
                }
            }
            _ => {}
        }
    }
    if !context.finished {
        return;
    }
    // Links whose EXIT only a heartbeat could account for (written to an
    // impaired generation) or that were never sent (the sender was shut).
    let mut excused_links: BTreeSet<u64> = BTreeSet::new();
    for (&seq, &(_, pinned, link, outcome)) in &model.controls {
        let Some(link) = link else { continue };
        if outcome == ControlOutcome::Closed {
            excused_links.insert(link);
            continue;
        }
        let fates = model.control_fates.get(&seq).map_or(&[][..], Vec::as_slice);
        let written_at: Vec<usize> = if context.reported.drain {
            fates
                .iter()
                .filter(|&&(_, fate, to)| {
                    fate == Fate::Written(Written::Written) && to == Some(pinned)
                })
                .map(|&(at, _, _)| at)
                .collect()
        } else {
            model
                .begun_on(Lane::Control, seq, &pinned)
                .into_iter()
                .collect()
        };
        let bound = if context.reported.drain {
            context.delivery_bound
        } else {
            context.delivery_bound + context.write_bound
        };
        for at in written_at {
            if excused(model, records, &pinned, records[at].at, bound) {
                excused_links.insert(link);
            }
        }
    }
    for (index, record) in records.iter().enumerate() {
        if let Event::Linked {
            peer,
            generation,
            link,
        } = record.event
        {
            if !told.contains(&link) && !excused_links.contains(&link) {
                out.violate(
                    Contract::EndToEnd,
                    format!("link {link} over peer{peer}/{generation}: its EXIT never arrived and no noconnection was delivered: a lost death signal"),
                    &[index],
                );
            }
        }
    }
}
