//! S9: independence across peers. One peer's trouble never reaches a
//! healthy peer: it never takes a healthy peer's generation down, never
//! has a healthy peer's frame refused, and delays a healthy peer's frames
//! by at most one write per other peer. The sender's L6.
//!
//! Model. Everything here is seen from outside, so S9 is decided for every
//! target: the fault timeline (`Fault`), what `enqueue` answered, the down
//! reports, the bytes each peer read (`FrameArrived`), and where a frame
//! left its lane (the drain's account when the target gives it, else the
//! first byte on a socket, which is later: a frame counts as queued for
//! longer, never shorter, so the outside view only ever excuses more).
//!
//! - *Healthy*: a peer is healthy until the first fault the driver applies
//!   to it or its link (wedge, slow, kill, crash, partition, latency,
//!   disconnect, a hostile frame), and faulty from then to the end of the
//!   run: a fault's consequences on its own peer (a stream a partition
//!   broke, frames a crash lost) outlast it, while before it nothing of
//!   the peer's own can explain its trouble. Obligations toward a peer end
//!   at its first fault and at the sender's shutdown.
//! - *Flooded*: a peer whose own accepted frames fill a lane (as many as
//!   its depth, counted from enqueue until they leave the lane). A peer's
//!   frame may be refused (`Overflow`, whose down is then the peer's own,
//!   or `DroppedFull`) only when it is flooded: the lane's depth is a
//!   promise to each peer, as a key's capacity is in L6, and a peer is
//!   never refused because others' frames fill the lane.
//! - *Downs*: a healthy peer's generation goes down only for a cause of its
//!   own ([`OwnCause`]): a disconnect or shutdown asked for, its own flood,
//!   or a write deadline no longer than one frame's write on a healthy link
//!   (S7's `write_bound`). Any other down of a healthy generation while
//!   another peer is faulty or flooded is a breach, citing the down and
//!   that peer ([`Culprit`]).
//! - *Delay*: while a healthy peer `h` has a frame waiting (accepted and
//!   not yet read nor dropped by the drain, while `h` had a live
//!   generation), it reads its next frame within
//!
//!   `B = F·D + (P − F)·W + P·pick + L + held`
//!
//!   of the later of the oldest waiting frame's enqueue and `h`'s previous
//!   read (a wait is cut at `h`'s first fault, the shutdown, or the log's
//!   end, and judged there): `P`
//!   peers, `F` of the others faulty by then, `D` the write deadline, `W`
//!   one frame's write on a healthy link (`write_bound`), `pick` the slack
//!   to pick and start a write ([`pick_slack`]), `L` the way from a write's
//!   end to its read (`delivery_bound`), `held` the time the explorer held
//!   tasks in the window (`check::holds`). Derivation: a sender that
//!   writes one frame at a time (lanesim's single drain) and gives each
//!   peer with frames a turn writes, between `h`'s previous frame and its
//!   next, at most one frame of each other peer (the one under way when
//!   the frame became ready included): at most `F` writes to faulty peers,
//!   each ended by the deadline (a wedged, partitioned or dead peer's
//!   write times out and takes its generation down; a slow peer's write is
//!   shorter than the deadline, or S7 fails it), and the rest to healthy
//!   links, then `h`'s own write, each picked within `pick`; then the frame
//!   crosses the link. A sender with a writer per peer meets it with room
//!   to spare. A sender that serves frames in enqueue order across peers
//!   meets it only while no faulty peer's backlog lies between two of `h`'s
//!   frames: a burst to a slow peer, or a flood of another peer's controls
//!   ahead of `h`'s data, holds `h` for the whole backlog. A late wait is
//!   reported with another peer to blame: a fault on it, or else its
//!   frames accepted meanwhile (a wait no other peer was part of is S2's
//!   and S6's question, not S9's).
//!
//! Pinned by `s9_detects_*` and `s9_excuses_*` in
//! `sims/tests/checkers_independence.rs`.

use std::collections::BTreeMap;
use std::time::Duration;

use super::model::{DataId, Fate, GenId, Model};
use super::stall::pick_slack;
use crate::check::{CheckContext, Collector};
use crate::event::{ControlOutcome, DataOutcome, Event, Lane, Record, Written};
use crate::scenario::Contract;
use lanesim_target::node::DownReason;

/// A frame S9 follows: one `enqueue` accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum FrameId {
    /// A control, by its sequence (numbered across peers).
    Control(u64),
    /// A data frame, by its peer and its sequence (numbered per peer).
    Data(DataId),
}

/// A frame accepted for a peer, and what became of it, by record index.
#[derive(Clone, Copy, Debug)]
struct Accepted {
    /// The peer it is for (a control's pinned generation's).
    peer: u64,
    lane: Lane,
    /// Its enqueue.
    enqueued: usize,
    /// Where it left its lane: the drain took it (with the drain's
    /// account), or its first byte reached a socket (without).
    left: Option<usize>,
    /// Where its peer first read it.
    read: Option<usize>,
    /// Where the drain said it will never be read: skipped, unroutable,
    /// discarded, or its write failed (the drain's account only).
    dropped: Option<usize>,
}

/// What trouble each peer is in: its first fault.
struct Trouble<'m> {
    model: &'m Model,
    /// Per peer, its first `Fault` record.
    first: BTreeMap<u64, usize>,
}

impl<'m> Trouble<'m> {
    fn of(model: &'m Model) -> Self {
        let first = model
            .faults
            .iter()
            .filter_map(|(&peer, faults)| faults.first().map(|&f| (peer, f)))
            .collect();
        Self { model, first }
    }

    /// Whether `peer` had no fault on it or its link up to record `index`.
    fn healthy_at(&self, peer: u64, index: usize) -> bool {
        self.first.get(&peer).is_none_or(|&fault| fault > index)
    }

    /// How many peers other than `peer` had a fault by record `index`.
    fn faulty_others(&self, peer: u64, index: usize) -> u32 {
        let count = self
            .first
            .iter()
            .filter(|&(&other, &fault)| other != peer && fault <= index)
            .count();
        u32::try_from(count).unwrap_or(u32::MAX)
    }

    /// The latest fault applied to a peer other than `peer` before record
    /// `index`: the trouble that preceded it.
    fn culprit(&self, peer: u64, index: usize) -> Option<Culprit> {
        self.model
            .faults
            .iter()
            .filter(|(&other, _)| other != peer)
            .filter_map(|(&other, faults)| {
                let before = faults.partition_point(|&f| f < index);
                before.checked_sub(1).map(|last| (faults[last], other))
            })
            .max()
            .map(|(record, peer)| Culprit::Fault { peer, record })
    }
}

/// The other peer S9 blames, named in its evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Culprit {
    /// A fault applied to it or its link (its `Fault` record).
    Fault { peer: u64, record: usize },
    /// Its own frames filled the lane (its latest one accepted before).
    Flood { peer: u64, record: usize },
}

impl Culprit {
    fn record(self) -> usize {
        match self {
            Self::Fault { record, .. } | Self::Flood { record, .. } => record,
        }
    }

    fn describe(self, records: &[Record]) -> String {
        match self {
            Self::Fault { peer, record } => match &records[record].event {
                Event::Fault { fault, .. } => format!(
                    "peer{peer} had a fault ({fault:?} at {:?})",
                    records[record].at
                ),
                _ => format!("peer{peer} had a fault"),
            },
            Self::Flood { peer, .. } => format!("peer{peer}'s frames filled the lane"),
        }
    }
}

/// A cause of its own for a healthy peer's generation to go down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OwnCause {
    /// A disconnect of it, or the sender's shutdown, was asked for.
    Asked,
    /// Its own controls filled the control lane.
    OwnFlood,
    /// The write deadline is no longer than one frame's write on a healthy
    /// link: the deadline itself can fire (S7 excuses it the same way).
    DeadlineBelowLink,
}

/// Whose frames filled a lane when it refused a peer's frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Filled {
    /// The peer's own: it held the lane's depth itself (flooded).
    Own,
    /// Others': the peer held `own` of `depth`; `by` is the peer that held
    /// the most besides, with its latest frame accepted before.
    Others {
        own: u64,
        depth: u64,
        by: Option<Culprit>,
    },
    /// The scenario does not say how deep the lanes are.
    Unknown,
}

/// Every frame accepted, with where it left its lane, was read, or was
/// dropped.
fn accepted(
    records: &[Record],
    model: &Model,
    context: &CheckContext,
) -> BTreeMap<FrameId, Accepted> {
    let mut frames: BTreeMap<FrameId, Accepted> = BTreeMap::new();
    let fresh = |peer, lane, enqueued| Accepted {
        peer,
        lane,
        enqueued,
        left: None,
        read: None,
        dropped: None,
    };
    for (&seq, control) in &model.controls {
        if control.outcome == ControlOutcome::Queued {
            frames.insert(
                FrameId::Control(seq),
                fresh(control.pinned.peer, Lane::Control, control.record),
            );
        }
    }
    for (&id, &index) in &model.data_queued {
        frames.insert(FrameId::Data(id), fresh(id.peer, Lane::Data, index));
    }
    let id = |lane: Lane, peer: u64, seq: u64| match lane {
        Lane::Control => FrameId::Control(seq),
        Lane::Data => FrameId::Data(DataId { peer, seq }),
    };
    for (index, record) in records.iter().enumerate() {
        let (frame, left, read) = match record.event {
            Event::WriteStarted {
                peer, lane, seq, ..
            } if context.reported.drain => (id(lane, peer, seq), true, false),
            Event::ControlSkipped { seq, .. } | Event::ControlDiscarded { seq, .. }
                if context.reported.drain =>
            {
                (FrameId::Control(seq), true, false)
            }
            Event::DataUnroutable { peer, seq } | Event::DataDiscarded { peer, seq }
                if context.reported.drain =>
            {
                (id(Lane::Data, peer, seq), true, false)
            }
            Event::FrameWriteBegun {
                socket, lane, seq, ..
            } if !context.reported.drain => {
                let Some(gen) = model.socket_gen.get(&socket) else {
                    continue;
                };
                (id(lane, gen.peer, seq), true, false)
            }
            Event::FrameArrived {
                peer, lane, seq, ..
            } => (id(lane, peer, seq), false, true),
            _ => continue,
        };
        let Some(accepted) = frames.get_mut(&frame) else {
            continue;
        };
        if left {
            accepted.left.get_or_insert(index);
        }
        if read && accepted.peer == record_peer(record) {
            accepted.read.get_or_insert(index);
        }
    }
    // The drain's word that a frame will never be read.
    for (frame, accepted) in &mut frames {
        let fates = match frame {
            FrameId::Control(seq) => model.control_fates.get(seq),
            FrameId::Data(id) => model.data_fates.get(id),
        };
        accepted.dropped = fates
            .into_iter()
            .flatten()
            .find_map(|fate| match fate.fate {
                Fate::Written(Written::Written) => None,
                Fate::Written(Written::Failed | Written::TimedOut)
                | Fate::Skipped
                | Fate::Unroutable
                | Fate::Discarded
                | Fate::Abandoned => Some(fate.record),
            });
    }
    frames
}

/// The peer a `FrameArrived` record was read by.
fn record_peer(record: &Record) -> u64 {
    match record.event {
        Event::FrameArrived { peer, .. } => peer,
        _ => u64::MAX,
    }
}

/// Per refusal (a control's `Overflow`, a data frame's `DroppedFull`),
/// by its record: whose frames filled the lane.
fn refusals(
    records: &[Record],
    frames: &BTreeMap<FrameId, Accepted>,
    context: &CheckContext,
) -> BTreeMap<usize, Filled> {
    // Per record, the frames that began or stopped counting there:
    // counted from just after their enqueue until they left the lane (a
    // frame settled inside `enqueue` is logged leaving before it arrives,
    // and never counts).
    let mut deltas: BTreeMap<usize, Vec<(Lane, u64, i64)>> = BTreeMap::new();
    for accepted in frames.values() {
        if accepted.left.is_some_and(|left| left < accepted.enqueued) {
            continue;
        }
        let (lane, peer) = (accepted.lane, accepted.peer);
        deltas
            .entry(accepted.enqueued)
            .or_default()
            .push((lane, peer, 1));
        if let Some(left) = accepted.left {
            deltas.entry(left).or_default().push((lane, peer, -1));
        }
    }
    // Per lane and peer: frames held, and the latest one accepted.
    let mut held: BTreeMap<(Lane, u64), (i64, usize)> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (index, record) in records.iter().enumerate() {
        let refused = match record.event {
            Event::ControlEnqueued {
                peer,
                outcome: ControlOutcome::Overflow,
                ..
            } => Some((Lane::Control, peer)),
            Event::DataEnqueued {
                peer,
                outcome: DataOutcome::DroppedFull,
                ..
            } => Some((Lane::Data, peer)),
            _ => None,
        };
        if let Some((lane, peer)) = refused {
            let filled = match context.lane_capacity {
                None => Filled::Unknown,
                Some((data, control)) => {
                    let depth = match lane {
                        Lane::Data => data,
                        Lane::Control => control,
                    };
                    let own = held.get(&(lane, peer)).map_or(0, |&(count, _)| count);
                    let own = u64::try_from(own).unwrap_or(0);
                    if own >= depth {
                        Filled::Own
                    } else {
                        let by = held
                            .iter()
                            .filter(|(&(l, p), &(count, _))| l == lane && p != peer && count > 0)
                            .max_by_key(|(_, &(count, _))| count)
                            .map(|(&(_, p), &(_, latest))| Culprit::Flood {
                                peer: p,
                                record: latest,
                            });
                        Filled::Others { own, depth, by }
                    }
                }
            };
            out.insert(index, filled);
        }
        for &(lane, peer, delta) in deltas.get(&index).into_iter().flatten() {
            let entry = held.entry((lane, peer)).or_insert((0, index));
            entry.0 += delta;
            if delta > 0 {
                entry.1 = index;
            }
        }
    }
    out
}

pub(super) fn s9(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    let records = out.records();
    let trouble = Trouble::of(model);
    let frames = accepted(records, model, context);
    let refused = refusals(records, &frames, context);
    downs(out, model, context, &trouble, &refused);
    data_refusals(out, records, &trouble, &refused);
    delays(out, model, context, &trouble, &frames);
}

/// A healthy peer's generation goes down only for a cause of its own.
fn downs(
    out: &mut Collector<'_>,
    model: &Model,
    context: &CheckContext,
    trouble: &Trouble<'_>,
    refused: &BTreeMap<usize, Filled>,
) {
    let records = out.records();
    for (gen, downs) in &model.downs {
        let Some(first) = downs.first() else {
            continue;
        };
        let (down, reason) = (first.record, first.reason);
        let GenId { peer, generation } = *gen;
        if !trouble.healthy_at(peer, down) {
            continue;
        }
        let asked = |since: Option<usize>| since.is_some_and(|at| at <= down);
        // The refusal that took it down: an overflow marks the pinned
        // generation down inside `enqueue_control`, so its down is logged
        // before the enqueue's own record.
        let refusal = records
            .iter()
            .enumerate()
            .skip(down)
            .find_map(|(index, r)| {
                matches!(
                    r.event,
                    Event::ControlEnqueued {
                        peer: p,
                        generation: g,
                        outcome: ControlOutcome::Overflow,
                        ..
                    } if p == peer && g == generation
                )
                .then(|| (index, refused.get(&index).copied()))
            });
        let below_link = context
            .write_timeout
            .is_some_and(|deadline| deadline <= context.write_bound);
        let own: Option<OwnCause> = match reason {
            DownReason::ManualDisconnect => (asked(model.shutdown)
                || asked(model.disconnected.get(gen).copied()))
            .then_some(OwnCause::Asked),
            DownReason::WriteCancelled if asked(model.shutdown) => Some(OwnCause::Asked),
            DownReason::WriteTimeout | DownReason::WriteCancelled => {
                below_link.then_some(OwnCause::DeadlineBelowLink)
            }
            DownReason::ControlOverflow => match refusal {
                Some((_, Some(Filled::Own))) => Some(OwnCause::OwnFlood),
                // With no depth to count against, an overflow is taken at
                // its word, as S7 takes it.
                Some((_, Some(Filled::Unknown))) => Some(OwnCause::OwnFlood),
                Some((_, Some(Filled::Others { .. }) | None)) | None => None,
            },
            // A healthy peer does nothing that ends a stream, and the
            // sender world's one node has no other peer to tie-break, no
            // frame callback and an ample budget.
            DownReason::PeerClosed
            | DownReason::ReadError
            | DownReason::WriteError
            | DownReason::HeartbeatTimeout
            | DownReason::FrameTimeout
            | DownReason::SimultaneousConnect
            | DownReason::HandlerPanicked
            | DownReason::OverBudget
            | DownReason::NameReclaimed => None,
        };
        if own.is_some() {
            continue;
        }
        let fault = trouble.culprit(peer, down);
        let (flood, filled) = match refusal {
            Some((_, Some(Filled::Others { own, depth, by }))) => (
                by,
                format!(": refused a control while it held {own} of its own in a lane of {depth}"),
            ),
            _ => (None, String::new()),
        };
        // No other peer in trouble: not S9's to say (S7 decides its cause).
        if fault.is_none() && flood.is_none() {
            continue;
        }
        let blamed: Vec<String> = [fault, flood]
            .into_iter()
            .flatten()
            .map(|c| c.describe(records))
            .collect();
        let mut cited = vec![down];
        cited.extend(refusal.map(|(index, _)| index));
        cited.extend([fault, flood].into_iter().flatten().map(Culprit::record));
        out.violate(
            Contract::S9,
            format!(
                "peer{peer}/{generation}, a healthy peer, went down ({reason:?}){filled}, while {}",
                blamed.join(" and ")
            ),
            &cited,
        );
    }
}

/// A healthy peer's data frame is refused only when its own frames fill
/// the data lane (first refusal per peer).
fn data_refusals(
    out: &mut Collector<'_>,
    records: &[Record],
    trouble: &Trouble<'_>,
    refused: &BTreeMap<usize, Filled>,
) {
    let mut reported: Vec<u64> = Vec::new();
    for (&index, &filled) in refused {
        let Event::DataEnqueued { peer, seq, .. } = records[index].event else {
            continue;
        };
        let Filled::Others { own, depth, by } = filled else {
            continue;
        };
        if !trouble.healthy_at(peer, index) || reported.contains(&peer) {
            continue;
        }
        let fault = trouble.culprit(peer, index);
        if fault.is_none() && by.is_none() {
            continue;
        }
        reported.push(peer);
        let blamed: Vec<String> = [fault, by]
            .into_iter()
            .flatten()
            .map(|c| c.describe(records))
            .collect();
        let mut cited = vec![index];
        cited.extend([fault, by].into_iter().flatten().map(Culprit::record));
        out.violate(
            Contract::S9,
            format!(
                "data frame {seq} for peer{peer}, a healthy peer, was refused while it held {own} of its own in a lane of {depth}, while {}",
                blamed.join(" and ")
            ),
            &cited,
        );
    }
}

/// One healthy peer's wait, as [`delays`] follows it.
#[derive(Default)]
struct Waiting {
    /// Frames accepted for it and not yet read, by enqueue record.
    pending: BTreeMap<usize, FrameId>,
    /// Its latest read.
    last_read: Option<usize>,
    /// Its live generations.
    live: u32,
    /// Judged no more: its first fault, a late frame already reported.
    done: bool,
}

/// Why a wait is judged where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Judged {
    /// The peer read a frame.
    Read,
    /// The peer's first fault: obligations toward it end.
    Fault,
    /// The sender's shutdown: obligations toward every peer end.
    Shutdown,
    /// The log's end.
    End,
}

/// A healthy peer waiting for a frame reads its next one within the bound
/// of the later of that frame's enqueue and its previous read.
fn delays(
    out: &mut Collector<'_>,
    model: &Model,
    context: &CheckContext,
    trouble: &Trouble<'_>,
    frames: &BTreeMap<FrameId, Accepted>,
) {
    let Some(deadline) = context.write_timeout else {
        return;
    };
    let records = out.records();
    // Per record: the frames accepted there, read there, dropped there.
    let mut at: BTreeMap<usize, Vec<(FrameId, Step)>> = BTreeMap::new();
    for (&frame, accepted) in frames {
        at.entry(accepted.enqueued)
            .or_default()
            .push((frame, Step::Accepted));
        if let Some(read) = accepted.read {
            at.entry(read).or_default().push((frame, Step::Read));
        }
        if let Some(dropped) = accepted.dropped {
            at.entry(dropped).or_default().push((frame, Step::Dropped));
        }
    }
    // Every frame accepted, by enqueue record, with its peer: who else had
    // frames to write while a peer waited.
    let mut accepted_at: Vec<(usize, u64)> =
        frames.values().map(|a| (a.enqueued, a.peer)).collect();
    accepted_at.sort_unstable();
    let competitor = |peer: u64, from: usize, to: usize| {
        let window = &accepted_at[accepted_at.partition_point(|&(i, _)| i < from)
            ..accepted_at.partition_point(|&(i, _)| i <= to)];
        let mut counts: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
        for &(index, other) in window.iter().filter(|&&(_, other)| other != peer) {
            let entry = counts.entry(other).or_insert((0, index));
            *entry = (entry.0 + 1, index);
        }
        counts
            .into_iter()
            .max_by_key(|&(_, (count, _))| count)
            .map(|(peer, (_, record))| Culprit::Flood { peer, record })
    };
    let peers = peers_of(records);
    let mut waiting: BTreeMap<u64, Waiting> =
        peers.iter().map(|&p| (p, Waiting::default())).collect();
    let bound = |peer: u64, ready: Duration, then: Duration, index: usize| {
        let faulty = trouble.faulty_others(peer, index);
        let all = u32::try_from(peers.len()).unwrap_or(u32::MAX);
        deadline * faulty
            + context.write_bound * all.saturating_sub(faulty)
            + pick_slack(context) * all
            + context.delivery_bound
            + model.holds.within(ready, then)
    };
    let judge = |out: &mut Collector<'_>,
                 peer: u64,
                 state: &mut Waiting,
                 index: usize,
                 how: Judged| {
        let Some((&oldest, &frame)) = state.pending.first_key_value() else {
            return;
        };
        let then = records[index].at;
        let ready = state.last_read.map_or(records[oldest].at, |read| {
            records[read].at.max(records[oldest].at)
        });
        let waited = then.saturating_sub(ready);
        let allowed = bound(peer, ready, then, index);
        if waited <= allowed {
            return;
        }
        // Another peer's trouble, or else its frames written meanwhile: a
        // wait with no other peer in it is S2's and S6's question.
        let Some(blamed) = trouble
            .culprit(peer, index)
            .or_else(|| competitor(peer, state.last_read.unwrap_or(oldest).min(oldest), index))
        else {
            return;
        };
        state.done = true;
        let mut cited = vec![oldest, index, blamed.record()];
        cited.extend(state.last_read);
        let what = match frame {
            FrameId::Control(seq) => format!("control {seq}"),
            FrameId::Data(DataId { seq, .. }) => format!("data frame {seq}"),
        };
        let ended = match how {
            Judged::Read => "before it read its next frame",
            Judged::Fault => "until its own first fault",
            Judged::Shutdown => "until the sender's shutdown",
            Judged::End => "until the end of the run, never reading it",
        };
        let beside = match blamed {
            Culprit::Fault { .. } => blamed.describe(records),
            Culprit::Flood { peer: other, .. } => {
                format!("peer{other}'s frames were written meanwhile")
            }
        };
        out.violate(
            Contract::S9,
            format!(
                "peer{peer}, a healthy peer, waited {waited:?} for {what} (enqueued at {:?}) {ended}: more than one write per other peer allows ({allowed:?}), while {beside}",
                records[oldest].at
            ),
            &cited,
        );
    };
    for (index, record) in records.iter().enumerate() {
        // Obligations end at the shutdown, for every peer.
        if model.shutdown == Some(index) {
            for (&peer, state) in &mut waiting {
                if !state.done {
                    judge(out, peer, state, index, Judged::Shutdown);
                }
            }
            return;
        }
        match record.event {
            Event::Fault { peer, .. } => {
                if let Some(state) = waiting.get_mut(&peer).filter(|s| !s.done) {
                    judge(out, peer, state, index, Judged::Fault);
                    state.done = true;
                }
            }
            Event::ConnectionUp { peer, .. } => {
                if let Some(state) = waiting.get_mut(&peer) {
                    state.live += 1;
                }
            }
            Event::ConnectionDown {
                peer, generation, ..
            } if model.down_at(&GenId { peer, generation }) == Some(index) => {
                // The frames it held go with it (its down is judged by
                // itself, above).
                if let Some(state) = waiting.get_mut(&peer) {
                    state.live = state.live.saturating_sub(1);
                    state.pending.clear();
                }
            }
            Event::FrameArrived { peer, .. } => {
                if let Some(state) = waiting.get_mut(&peer).filter(|s| !s.done) {
                    judge(out, peer, state, index, Judged::Read);
                    state.last_read = Some(index);
                }
            }
            _ => {}
        }
        for &(frame, step) in at.get(&index).into_iter().flatten() {
            let accepted = &frames[&frame];
            let Some(state) = waiting.get_mut(&accepted.peer) else {
                continue;
            };
            match step {
                // A frame accepted while its peer has no live generation
                // has nowhere to go (a data frame is unroutable).
                Step::Accepted if state.live > 0 => {
                    state.pending.insert(accepted.enqueued, frame);
                }
                Step::Accepted => {}
                Step::Read | Step::Dropped => {
                    state.pending.remove(&accepted.enqueued);
                }
            }
        }
    }
    let Some(last) = records.len().checked_sub(1) else {
        return;
    };
    for (&peer, state) in &mut waiting {
        if !state.done {
            judge(out, peer, state, last, Judged::End);
        }
    }
}

/// What happened to a frame at a record, as [`delays`] replays it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Accepted,
    Read,
    Dropped,
}

/// Every peer the log names.
fn peers_of(records: &[Record]) -> Vec<u64> {
    let mut peers: Vec<u64> = records
        .iter()
        .filter_map(|record| match record.event {
            Event::ConnectionUp { peer, .. }
            | Event::DataEnqueued { peer, .. }
            | Event::ControlEnqueued { peer, .. }
            | Event::PeerAccepted { peer, .. }
            | Event::Fault { peer, .. } => Some(peer),
            _ => None,
        })
        .collect();
    peers.sort_unstable();
    peers.dedup();
    peers
}
