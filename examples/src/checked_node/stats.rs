//! The sender's counters: one atomic per fate a frame can meet, read as the
//! API's `SenderStats`.

use std::sync::atomic::{AtomicU64, Ordering};

use lanesim_target::node::SenderStats;

/// Counters, bumped where each fate is decided.
#[derive(Default)]
pub(super) struct Counters {
    pub data_queued: AtomicU64,
    pub data_written: AtomicU64,
    pub data_failed: AtomicU64,
    pub data_no_connection: AtomicU64,
    pub data_discarded: AtomicU64,
    pub control_queued: AtomicU64,
    pub control_written: AtomicU64,
    pub control_failed: AtomicU64,
    pub control_skipped: AtomicU64,
    pub control_discarded: AtomicU64,
}

/// One more.
pub(super) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

impl Counters {
    /// A snapshot.
    pub fn snapshot(&self) -> SenderStats {
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        SenderStats {
            data_queued: read(&self.data_queued),
            data_written: read(&self.data_written),
            data_failed: read(&self.data_failed),
            data_no_connection: read(&self.data_no_connection),
            data_discarded: read(&self.data_discarded),
            control_queued: read(&self.control_queued),
            control_written: read(&self.control_written),
            control_failed: read(&self.control_failed),
            control_skipped: read(&self.control_skipped),
            control_discarded: read(&self.control_discarded),
        }
    }
}
