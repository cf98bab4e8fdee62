//! S4 and the lanes' depths: counting frames. S4 holds every queued data
//! frame to exactly one fate, nothing arriving unwritten, and the sender's
//! counters to the events; the depth check counts what each lane holds
//! between enqueue and fate against its capacity (S4 for data, DC-1 for
//! controls). Both are the same bookkeeping over enqueues and fates.

use std::collections::{BTreeMap, BTreeSet};

use super::model::{DataId, Fate, Fates, Model};
use crate::check::{CheckContext, Collector};
use crate::event::{ControlOutcome, Counts, DataOutcome, Event, Lane, SocketEnd, Written};
use crate::scenario::Contract;

/// The sender's lanes are bounded, and a lane's depth is per destination
/// peer: a lane never holds more than its depth of one peer's frames (S4
/// for data, DC-1 for controls), and refuses a frame (`DroppedFull`,
/// `Overflow`) only when it holds at least its depth (of every peer's
/// frames together: whether a refusal was the refused peer's own doing is
/// S9's question). A sender whose lane is one depth shared by every peer
/// holds fewer; one that counts a depth per peer may hold that many of
/// each. (The depth was counted per sender until lanesim's lanes became
/// per node for S9: `examples/src/checked_node` read it per node too.)
/// The log counts a frame from its enqueue to its fate; each writer may
/// hold one frame taken off a lane in between (a drain that took it and
/// has not begun its write, or a write under way), so a full share shows
/// as up to `depth + writers` frames, where `writers` is the writes under
/// way then, and at least one: a single drain's share never shows more
/// than `depth + 1` (`lane_depths_allow_one_frame_per_writer_in_flight`).
pub(super) fn lane_depths(out: &mut Collector<'_>, context: &CheckContext) {
    let Some((data_depth, control_depth)) = context.lane_capacity else {
        return;
    };
    // Per lane: frames held in all, and per peer (a control's peer is the
    // one its enqueue pinned it to).
    let (mut data, mut controls) = (0i64, 0i64);
    let mut held: BTreeMap<(Lane, u64), i64> = BTreeMap::new();
    let mut pinned: BTreeMap<u64, u64> = BTreeMap::new();
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
        let (lane, peer, counted, depth, refused, accepted) = match record.event {
            Event::DataEnqueued { peer, outcome, .. } => {
                let (before, accepted) = (data, outcome == DataOutcome::Queued);
                data += i64::from(accepted);
                let refused = outcome == DataOutcome::DroppedFull;
                (Lane::Data, peer, before, data_depth, refused, accepted)
            }
            Event::ControlEnqueued {
                peer, seq, outcome, ..
            } => {
                let (before, accepted) = (controls, outcome == ControlOutcome::Queued);
                controls += i64::from(accepted);
                pinned.insert(seq, peer);
                let refused = outcome == ControlOutcome::Overflow;
                (
                    Lane::Control,
                    peer,
                    before,
                    control_depth,
                    refused,
                    accepted,
                )
            }
            Event::WriteFinished {
                peer, lane, seq, ..
            }
            | Event::WriteAbandoned {
                peer, lane, seq, ..
            } => {
                match lane {
                    Lane::Data => data -= 1,
                    Lane::Control => controls -= 1,
                }
                let peer = match lane {
                    Lane::Data => peer,
                    Lane::Control => pinned.get(&seq).copied().unwrap_or(peer),
                };
                *held.entry((lane, peer)).or_default() -= 1;
                continue;
            }
            Event::DataUnroutable { peer, .. } | Event::DataDiscarded { peer, .. } => {
                data -= 1;
                *held.entry((Lane::Data, peer)).or_default() -= 1;
                continue;
            }
            Event::ControlSkipped { peer, seq, .. } | Event::ControlDiscarded { peer, seq, .. } => {
                controls -= 1;
                let peer = pinned.get(&seq).copied().unwrap_or(peer);
                *held.entry((Lane::Control, peer)).or_default() -= 1;
                continue;
            }
            _ => continue,
        };
        let share = held.entry((lane, peer)).or_default();
        let own = *share;
        *share += i64::from(accepted);
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
        } else if accepted && own > depth + in_hand - 1 && context.reported.drain {
            out.violate(
                contract,
                format!("the {lane:?} lane accepted a frame for peer{peer} while it held {own} of that peer's, of a depth of {depth}: more than it may hold"),
                &[index],
            );
        }
    }
}

pub(super) fn s4(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    let mut started: BTreeSet<DataId> = BTreeSet::new();
    let mut stats = None;
    // Where each frame first began to reach each socket: a peer reads a
    // frame only after its first byte reached the socket (in real mode
    // the two are logged by different threads: within the race window).
    let mut begun: BTreeMap<(u16, Lane, u64), usize> = BTreeMap::new();
    for (index, record) in out.records().iter().enumerate() {
        if let Event::FrameWriteBegun {
            socket, lane, seq, ..
        } = record.event
        {
            begun.entry((socket, lane, seq)).or_insert(index);
        }
    }
    for (index, record) in out.records().iter().enumerate() {
        if let Event::FrameArrived {
            peer,
            socket,
            lane,
            seq,
            ..
        } = record.event
        {
            if let Some(&first) = begun.get(&(socket, lane, seq)) {
                let records = out.records();
                if first > index && !context.may_precede(records[first].at, record.at) {
                    out.violate(
                        Contract::S4,
                        format!("{lane:?} frame {seq} arrived at peer{peer} on socket {socket} before its first byte began to reach that socket"),
                        &[index, first],
                    );
                }
            }
        }
        match record.event {
            Event::WriteStarted {
                peer,
                lane: Lane::Data,
                seq,
                ..
            } => {
                started.insert(DataId { peer, seq });
            }
            Event::FrameArrived {
                peer,
                lane: Lane::Data,
                seq,
                ..
            } if !started.contains(&DataId { peer, seq }) => {
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
    for (&DataId { peer, seq }, fates) in &model.data_fates {
        let cited: Vec<usize> = fates.iter().map(|f| f.record).collect();
        if fates.len() > 1 {
            out.violate(
                Contract::S4,
                format!("data frame {seq} to peer{peer} met {} fates", fates.len()),
                &cited,
            );
        }
        if !model.data_queued.contains_key(&DataId { peer, seq }) {
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
    for (&frame, &index) in &model.data_queued {
        let DataId { peer, seq } = frame;
        if !model.data_fates.contains_key(&frame) {
            out.violate(
                Contract::S4,
                format!("queued data frame {seq} to peer{peer} has no fate: neither written, failed, unroutable nor discarded"),
                &[index],
            );
        }
    }
    let Some(index) = stats else {
        // A sender that declares its counters has them logged at the end
        // of every finished run; a log without them could not be checked
        // against them, which is no pass.
        if context.reported.stats {
            let last = out.records().len().saturating_sub(1);
            out.violate(
                Contract::S4,
                "the sender declares its counters, but the finished run logged none at its end: they cannot be checked".into(),
                &[last],
            );
        }
        return;
    };
    let Event::SenderStats(said) = out.records()[index].event else {
        return;
    };
    fn count<'a>(fates: impl Iterator<Item = &'a Fates>, wanted: &[Fate]) -> u64 {
        fates.flatten().filter(|f| wanted.contains(&f.fate)).count() as u64
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
            .filter(|c| c.outcome == ControlOutcome::Queued)
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
