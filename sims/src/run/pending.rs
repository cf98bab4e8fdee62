//! What a run that outlived its budget left pending, so a liveness verdict
//! says what it was waiting for instead of only that it did not finish.
//!
//! Model: three views of the same instant, the budget's end. The world's
//! own account ([`Stuck`]: the step of its run it was waiting in, and the
//! sender's counters and table read then); what the log shows accepted and
//! never given a fate ([`Unresolved`], the fates the checkers count: a
//! frame's write ended, was skipped, unroutable or discarded; an item's
//! handler ended); and the log's last records, where it went quiet or
//! kept busy. Built when a run is judged, in simulation and in real mode
//! alike; printed by `report`.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::event::{ControlOutcome, DataOutcome, Event, Lane, Record};
use crate::world::Stuck;

/// Records of the log's end kept in a report.
pub const TAIL: usize = 20;
/// Unresolved frames or items kept in a report (those being written first,
/// then the oldest); the rest are counted.
pub const UNRESOLVED_KEPT: usize = 20;

/// What a run left pending when its budget ran out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    /// Where the world was (`None`: it did not say).
    pub stuck: Option<Stuck>,
    /// Accepted and without a fate in the log: the ones being written,
    /// then the oldest, at most [`UNRESOLVED_KEPT`].
    pub unresolved: Vec<Unresolved>,
    /// How many there were in all.
    pub unresolved_total: usize,
    /// The log's last [`TAIL`] records, printed (as a violation's evidence
    /// is).
    pub tail: Vec<String>,
}

/// One thing the log shows accepted and not yet disposed of. Times are in
/// the log's units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Unresolved {
    /// A data frame queued for `peer` with no fate.
    Data {
        /// Its peer.
        peer: u64,
        /// Its sequence number (per peer).
        seq: u64,
        /// When it was queued.
        queued: Duration,
        /// The generation the drain began writing it to, and when.
        writing: Option<(u64, Duration)>,
    },
    /// A control queued pinned to `peer`'s `generation`, with no fate.
    Control {
        /// Its peer.
        peer: u64,
        /// The generation it is pinned to.
        generation: u64,
        /// Its sequence number.
        seq: u64,
        /// When it was queued.
        queued: Duration,
        /// When the drain began writing it.
        writing: Option<Duration>,
    },
    /// A lanes-world item admitted whose handler has not ended.
    Item {
        /// Its key.
        key: u64,
        /// The item.
        item: u64,
        /// When it was routed.
        routed: Duration,
        /// When its handler began.
        started: Option<Duration>,
    },
}

impl Unresolved {
    /// When a write or handler began on it, if one did.
    fn begun(&self) -> Option<Duration> {
        match *self {
            Self::Data { writing, .. } => writing.map(|(_, at)| at),
            Self::Control { writing, .. } => writing,
            Self::Item { started, .. } => started,
        }
    }

    /// When it was accepted.
    fn accepted(&self) -> Duration {
        match *self {
            Self::Data { queued, .. } | Self::Control { queued, .. } => queued,
            Self::Item { routed, .. } => routed,
        }
    }
}

/// What `records` leave pending, with the world's own account `stuck`.
#[must_use]
pub fn pending(records: &[Record], stuck: Option<Stuck>) -> Pending {
    let mut open = unresolved(records);
    let unresolved_total = open.len();
    // What is being written (or handled) says what the run waits on; then
    // the oldest, which waited longest.
    open.sort_by_key(|u| (u.begun().is_none(), u.begun(), u.accepted()));
    open.truncate(UNRESOLVED_KEPT);
    Pending {
        stuck,
        unresolved: open,
        unresolved_total,
        tail: records[records.len().saturating_sub(TAIL)..]
            .iter()
            .map(ToString::to_string)
            .collect(),
    }
}

/// Everything the log shows accepted and without a fate, in no order.
fn unresolved(records: &[Record]) -> Vec<Unresolved> {
    // Keys as the checkers match fates: data by (peer, seq), controls by
    // seq (one counter for the run), items by (key, item).
    let mut data: BTreeMap<(u64, u64), Unresolved> = BTreeMap::new();
    let mut controls: BTreeMap<u64, Unresolved> = BTreeMap::new();
    let mut items: BTreeMap<(u64, u64), Unresolved> = BTreeMap::new();
    for record in records {
        let at = record.at;
        match record.event {
            Event::DataEnqueued {
                peer,
                seq,
                outcome: DataOutcome::Queued,
            } => {
                data.insert(
                    (peer, seq),
                    Unresolved::Data {
                        peer,
                        seq,
                        queued: at,
                        writing: None,
                    },
                );
            }
            Event::ControlEnqueued {
                peer,
                generation,
                seq,
                outcome: ControlOutcome::Queued,
                ..
            } => {
                controls.insert(
                    seq,
                    Unresolved::Control {
                        peer,
                        generation,
                        seq,
                        queued: at,
                        writing: None,
                    },
                );
            }
            Event::WriteStarted {
                peer,
                generation,
                lane,
                seq,
            } => match lane {
                Lane::Data => {
                    if let Some(Unresolved::Data { writing, .. }) = data.get_mut(&(peer, seq)) {
                        *writing = Some((generation, at));
                    }
                }
                Lane::Control => {
                    if let Some(Unresolved::Control { writing, .. }) = controls.get_mut(&seq) {
                        *writing = Some(at);
                    }
                }
            },
            Event::WriteFinished {
                peer, lane, seq, ..
            }
            | Event::WriteAbandoned {
                peer, lane, seq, ..
            } => match lane {
                Lane::Data => {
                    data.remove(&(peer, seq));
                }
                Lane::Control => {
                    controls.remove(&seq);
                }
            },
            Event::ControlSkipped { seq, .. } | Event::ControlDiscarded { seq, .. } => {
                controls.remove(&seq);
            }
            Event::DataUnroutable { peer, seq } | Event::DataDiscarded { peer, seq } => {
                data.remove(&(peer, seq));
            }
            Event::Routed {
                key,
                item,
                depth: Some(_),
                ..
            } => {
                items.insert(
                    (key, item),
                    Unresolved::Item {
                        key,
                        item,
                        routed: at,
                        started: None,
                    },
                );
            }
            Event::HandleStart { key, item, .. } => {
                if let Some(Unresolved::Item { started, .. }) = items.get_mut(&(key, item)) {
                    *started = Some(at);
                }
            }
            Event::HandleEnd { key, item, .. } => {
                items.remove(&(key, item));
            }
            _ => {}
        }
    }
    data.into_values()
        .chain(controls.into_values())
        .chain(items.into_values())
        .collect()
}
