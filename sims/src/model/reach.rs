//! What a model-world execution reached: the states each workload is named
//! for, read from its log. A workload lists the ones it must reach and in
//! what share of its executions ([`Workload::reaches`]); an exploration
//! that falls short is reported (exit 5), as a sweep that misses a mark.
//!
//! States of lanes (a reap, a lane rebuilt after one, two lanes live) are
//! seen only in a target's lifecycle reports; for a target without them
//! those requirements are not decided.

use std::collections::{BTreeMap, BTreeSet};

use crate::event::{Event, Exit, Record};

use super::workload::Workload;

/// A state an execution can reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reach {
    /// A lane reaped itself.
    Reaped,
    /// A key got a new lane after its previous one was reaped.
    RebuiltAfterReap,
    /// Two keys had live lanes at once.
    TwoLanesLive,
    /// An item was admitted behind another of its key (depth at least 1).
    QueuedBehind,
    /// The router was dropped while an admitted item had not started.
    DroppedWithWork,
    /// An item was refused.
    Refused,
    /// A handler panicked and a later item of its key was handled.
    HandledAfterPanic,
    /// A route of a key began while another route of it was under way.
    RoutesOverlapped,
    /// A frame was offered after the sender was asked to shut down.
    EnqueuedAfterShutdown,
    /// The sender was asked to shut down holding a frame with no fate yet.
    ShutdownWithQueued,
    /// A generation went down holding a control pinned to it with no fate
    /// yet.
    DownWithQueued,
    /// A control was offered pinned to a generation already logged down.
    PinnedToDown,
    /// A peer got a second generation.
    Reconnected,
    /// A write's deadline took its generation down.
    WriteTimedOut,
    /// A control lane overflowed.
    Overflowed,
    /// Two causes asked for one generation's down: its write's deadline,
    /// a disconnect or an overflow.
    DownAskedTwice,
    /// A data frame was refused as its lane was full.
    DataRefused,
    /// A generation went down while the drain was writing to it (from its
    /// report of the write's start, before the writer lock, to its end).
    DownMidWrite,
}

impl Reach {
    /// Its name in reports.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Reaped => "reaped",
            Self::RebuiltAfterReap => "rebuilt-after-reap",
            Self::TwoLanesLive => "two-lanes-live",
            Self::QueuedBehind => "queued-behind",
            Self::DroppedWithWork => "dropped-with-work",
            Self::Refused => "refused",
            Self::HandledAfterPanic => "handled-after-panic",
            Self::RoutesOverlapped => "routes-overlapped",
            Self::EnqueuedAfterShutdown => "enqueued-after-shutdown",
            Self::ShutdownWithQueued => "shutdown-with-queued",
            Self::DownWithQueued => "down-with-queued",
            Self::PinnedToDown => "pinned-to-down",
            Self::Reconnected => "reconnected",
            Self::WriteTimedOut => "write-timed-out",
            Self::Overflowed => "overflowed",
            Self::DownAskedTwice => "down-asked-twice",
            Self::DataRefused => "data-refused",
            Self::DownMidWrite => "down-mid-write",
        }
    }

    /// Whether only lifecycle reports show it.
    #[must_use]
    pub fn needs_lifecycle(self) -> bool {
        match self {
            Self::Reaped | Self::RebuiltAfterReap | Self::TwoLanesLive => true,
            Self::QueuedBehind
            | Self::DroppedWithWork
            | Self::Refused
            | Self::HandledAfterPanic
            | Self::RoutesOverlapped
            | Self::EnqueuedAfterShutdown
            | Self::ShutdownWithQueued
            | Self::DownWithQueued
            | Self::PinnedToDown
            | Self::Reconnected
            | Self::WriteTimedOut
            | Self::Overflowed
            | Self::DownAskedTwice
            | Self::DataRefused
            | Self::DownMidWrite => false,
        }
    }
}

/// The states `records` reached.
#[must_use]
pub fn reached(records: &[Record]) -> BTreeSet<Reach> {
    let mut out = super::sender::reach::reached(records);
    let mut reaped_keys: BTreeSet<u64> = BTreeSet::new();
    let mut live: BTreeMap<u64, u64> = BTreeMap::new();
    let mut admitted: BTreeSet<u64> = BTreeSet::new();
    let mut started: BTreeSet<u64> = BTreeSet::new();
    let mut panicked_keys: BTreeSet<u64> = BTreeSet::new();
    // Per key, routes begun and not yet returned.
    let mut routing: BTreeMap<u64, u32> = BTreeMap::new();
    for record in records {
        if let Event::Routed { key, .. } = &record.event {
            if let Some(n) = routing.get_mut(key) {
                *n = n.saturating_sub(1);
            }
        }
        match &record.event {
            Event::RouteBegan { key, .. } => {
                let under_way = routing.entry(*key).or_default();
                if *under_way > 0 {
                    out.insert(Reach::RoutesOverlapped);
                }
                *under_way += 1;
            }
            Event::LaneCreated { key, lane } => {
                if reaped_keys.remove(key) {
                    out.insert(Reach::RebuiltAfterReap);
                }
                live.insert(*key, *lane);
                if live.len() >= 2 {
                    out.insert(Reach::TwoLanesLive);
                }
            }
            Event::LaneClosed { key, lane, exit } => {
                if live.get(key) == Some(lane) {
                    live.remove(key);
                }
                if *exit == Exit::Reaped {
                    out.insert(Reach::Reaped);
                    reaped_keys.insert(*key);
                }
            }
            Event::Routed { depth: None, .. } => {
                out.insert(Reach::Refused);
            }
            Event::Routed {
                item,
                depth: Some(depth),
                ..
            } => {
                admitted.insert(*item);
                if *depth >= 1 {
                    out.insert(Reach::QueuedBehind);
                }
            }
            Event::HandleStart { key, item, .. } => {
                started.insert(*item);
                if panicked_keys.contains(key) {
                    out.insert(Reach::HandledAfterPanic);
                }
            }
            Event::HandleEnd {
                key,
                panicked: true,
                ..
            } => {
                panicked_keys.insert(*key);
            }
            Event::RouterDropped if admitted.iter().any(|item| !started.contains(item)) => {
                out.insert(Reach::DroppedWithWork);
            }
            _ => {}
        }
    }
    out
}

/// One requirement of a workload, as an exploration met it.
#[derive(Clone, Debug, PartialEq)]
pub struct ReachTally {
    /// The state.
    pub reach: Reach,
    /// Executions that reached it.
    pub count: usize,
    /// Executions judged.
    pub of: usize,
    /// The share required.
    pub required: f64,
    /// Why it is not decided for this target, if it is not.
    pub undecided: Option<&'static str>,
}

impl ReachTally {
    /// Decided, and below its share.
    #[must_use]
    pub fn fell_short(&self) -> bool {
        self.undecided.is_none()
            && (self.of == 0 || (self.count as f64) < self.required * self.of as f64)
    }
}

/// The tallies of `workload`'s requirements from `counts` over `of`
/// executions, for a target that reports its lifecycle or not.
#[must_use]
pub fn tallies(
    workload: &Workload,
    counts: &BTreeMap<Reach, usize>,
    of: usize,
    lifecycle: bool,
) -> Vec<ReachTally> {
    workload
        .reaches
        .iter()
        .map(|&(reach, required)| ReachTally {
            reach,
            count: counts.get(&reach).copied().unwrap_or(0),
            of,
            required,
            undecided: (reach.needs_lifecycle() && !lifecycle)
                .then_some("seen only in lane lifecycle reports, which the target does not give"),
        })
        .collect()
}
