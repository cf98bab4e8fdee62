//! The states a sender workload's execution reached, read from its log
//! (the lanes states are `model::reach`'s).

use std::collections::{BTreeMap, BTreeSet};

use lanesim_target::node::DownReason;

use crate::event::{ControlOutcome, DataOutcome, Event, Lane, Record, Written};
use crate::model::reach::Reach;

/// A generation: a peer and its generation number.
type Gen = (u64, u64);

/// What asked for a generation's down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Cause {
    Deadline,
    Disconnect,
    Overflow,
}

/// The sender states `records` reached.
#[must_use]
pub fn reached(records: &[Record]) -> BTreeSet<Reach> {
    let mut out = BTreeSet::new();
    let mut shutdown = false;
    // Accepted frames with no fate yet: data by (peer, seq), controls by
    // seq with their pinned generation.
    let mut data: BTreeSet<(u64, u64)> = BTreeSet::new();
    let mut controls: BTreeMap<u64, Gen> = BTreeMap::new();
    let mut down: BTreeSet<Gen> = BTreeSet::new();
    // Writes under way: (generation, lane, seq).
    let mut writing: BTreeSet<(Gen, Lane, u64)> = BTreeSet::new();
    // Peers connected so far.
    let mut connected: BTreeSet<u64> = BTreeSet::new();
    let mut causes: BTreeMap<Gen, BTreeSet<Cause>> = BTreeMap::new();
    for record in records {
        match record.event {
            Event::ShutdownRequested => {
                shutdown = true;
                if !data.is_empty() || !controls.is_empty() {
                    out.insert(Reach::ShutdownWithQueued);
                }
            }
            Event::DataEnqueued { peer, seq, outcome } => {
                if shutdown {
                    out.insert(Reach::EnqueuedAfterShutdown);
                }
                match outcome {
                    DataOutcome::Queued => {
                        data.insert((peer, seq));
                    }
                    DataOutcome::DroppedFull => {
                        out.insert(Reach::DataRefused);
                    }
                    DataOutcome::DroppedClosed => {}
                }
            }
            Event::ControlEnqueued {
                peer,
                generation,
                seq,
                outcome,
                ..
            } => {
                if shutdown {
                    out.insert(Reach::EnqueuedAfterShutdown);
                }
                if down.contains(&(peer, generation)) {
                    out.insert(Reach::PinnedToDown);
                }
                match outcome {
                    ControlOutcome::Queued => {
                        controls.insert(seq, (peer, generation));
                    }
                    ControlOutcome::Overflow => {
                        out.insert(Reach::Overflowed);
                        causes
                            .entry((peer, generation))
                            .or_default()
                            .insert(Cause::Overflow);
                    }
                    ControlOutcome::Closed => {}
                }
            }
            Event::Disconnected {
                peer,
                generation: Some(generation),
            } => {
                causes
                    .entry((peer, generation))
                    .or_default()
                    .insert(Cause::Disconnect);
            }
            Event::ConnectionDown {
                peer,
                generation,
                reason,
                ..
            } => {
                down.insert((peer, generation));
                if writing.iter().any(|(on, ..)| *on == (peer, generation)) {
                    out.insert(Reach::DownMidWrite);
                }
                if reason == DownReason::WriteTimeout {
                    out.insert(Reach::WriteTimedOut);
                }
                if controls
                    .values()
                    .any(|&pinned| pinned == (peer, generation))
                {
                    out.insert(Reach::DownWithQueued);
                }
            }
            Event::ConnectionUp { peer, .. } if !connected.insert(peer) => {
                out.insert(Reach::Reconnected);
            }
            Event::WriteStarted {
                peer,
                generation,
                lane,
                seq,
            } => {
                writing.insert(((peer, generation), lane, seq));
            }
            Event::WriteFinished {
                lane,
                peer,
                generation,
                seq,
                outcome,
            } => {
                writing.remove(&((peer, generation), lane, seq));
                if outcome == Written::TimedOut {
                    causes
                        .entry((peer, generation))
                        .or_default()
                        .insert(Cause::Deadline);
                }
                match lane {
                    Lane::Data => data.remove(&(peer, seq)),
                    Lane::Control => controls.remove(&seq).is_some(),
                };
            }
            Event::WriteAbandoned {
                lane,
                peer,
                generation,
                seq,
            } => {
                writing.remove(&((peer, generation), lane, seq));
                match lane {
                    Lane::Data => data.remove(&(peer, seq)),
                    Lane::Control => controls.remove(&seq).is_some(),
                };
            }
            Event::ControlSkipped { seq, .. } | Event::ControlDiscarded { seq, .. } => {
                controls.remove(&seq);
            }
            Event::DataUnroutable { peer, seq } | Event::DataDiscarded { peer, seq } => {
                data.remove(&(peer, seq));
            }
            _ => {}
        }
    }
    if causes.values().any(|asked| asked.len() >= 2) {
        out.insert(Reach::DownAskedTwice);
    }
    out
}
