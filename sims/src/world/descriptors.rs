//! A node's descriptor table in the simulated network: the limit its
//! transport tells it (the mesh's `descriptors`), kept.
//!
//! Model. A process holds [`PROCESS_HELD`] descriptors of its own (three
//! standard streams, its runtime's poller and waker, its listener), and
//! every socket a node opens holds one more: a dial from the moment it
//! starts (its socket exists before it connects), an accepted stream from
//! its accept, each until both its halves are dropped. With none left a
//! dial fails with `EMFILE`, and so does an accept (the stream waits in
//! the backlog, as in a kernel's), as on Linux. A node told its limit keeps
//! its streams within it with room for its own dials; running out is the
//! node's doing (an `exhaust` fault's refusals are the gate's, not the
//! table's: M7, `m7_detects_a_node_running_out_of_the_descriptors_it_was_told`).
//! The table tells its [`Watch`] once per run of refusals, and when a
//! node's sockets first fill half of what the limit leaves it
//! (the reach a scenario near the limit names).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Descriptors a process holds besides its sockets: stdin, stdout and
/// stderr, its runtime's poller and waker, and its listener.
pub const PROCESS_HELD: u64 = 6;

/// What a table tells the world (the mesh world logs and marks it).
pub trait Watch: Send + Sync {
    /// The node ran out: a socket refused with `open` sockets open (every
    /// descriptor it had). Once per run of refusals.
    fn ran_out(&self, open: u64);
    /// The node's open sockets reached half of what the limit
    /// leaves after the process's own (once per table).
    fn near_limit(&self, open: u64);
}

/// One node's descriptors (for one life of its host).
pub struct Descriptors {
    limit: u64,
    /// Sockets open now.
    open: AtomicU64,
    /// The most sockets open at once.
    peak: AtomicU64,
    /// A refusal since the last descriptor taken (one report per run).
    out: AtomicBool,
    /// Three quarters reached (reported once).
    near: AtomicBool,
    watch: Option<Box<dyn Watch>>,
}

/// One socket's descriptor: given back on drop.
pub struct Descriptor(Arc<Descriptors>);

impl Drop for Descriptor {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Descriptors {
    /// A table of `limit` descriptors, telling `watch`.
    #[must_use]
    pub fn new(limit: u64, watch: Option<Box<dyn Watch>>) -> Arc<Self> {
        Arc::new(Self {
            limit,
            open: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            out: AtomicBool::new(false),
            near: AtomicBool::new(false),
            watch,
        })
    }

    /// The limit the node is told.
    #[must_use]
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Whether a socket could be opened now.
    #[must_use]
    pub fn available(&self) -> bool {
        self.open.load(Ordering::Acquire) + PROCESS_HELD < self.limit
    }

    /// The most sockets the node held open at once.
    #[must_use]
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Acquire)
    }

    /// A descriptor for a new socket, if one is left; none counts as
    /// running out (`EMFILE` to the node).
    pub fn take(self: &Arc<Self>) -> Option<Descriptor> {
        if !self.available() {
            self.ran_out();
            return None;
        }
        let open = self.open.fetch_add(1, Ordering::AcqRel) + 1;
        self.peak.fetch_max(open, Ordering::AcqRel);
        self.out.store(false, Ordering::Release);
        let usable = self.limit.saturating_sub(PROCESS_HELD);
        if open * 2 >= usable && !self.near.swap(true, Ordering::AcqRel) {
            if let Some(watch) = &self.watch {
                watch.near_limit(open);
            }
        }
        Some(Descriptor(Arc::clone(self)))
    }

    /// Notes a refusal for want of a descriptor (an accept that found none
    /// left); the first of a run is reported.
    pub fn ran_out(&self) {
        if !self.out.swap(true, Ordering::AcqRel) {
            if let Some(watch) = &self.watch {
                watch.ran_out(self.open.load(Ordering::Acquire));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Told(Mutex<Vec<(&'static str, u64)>>);

    impl Watch for Arc<Told> {
        fn ran_out(&self, open: u64) {
            self.0.lock().unwrap().push(("out", open));
        }
        fn near_limit(&self, open: u64) {
            self.0.lock().unwrap().push(("near", open));
        }
    }

    /// The table refuses the socket past its limit, reports the first
    /// refusal of a run only and half the limit reached once, and gives a
    /// descriptor back on drop.
    #[test]
    fn a_table_refuses_past_its_limit_and_reports_each_run_of_refusals_once() {
        let told = Arc::new(Told::default());
        let table = Descriptors::new(PROCESS_HELD + 4, Some(Box::new(Arc::clone(&told))));
        let taken: Vec<_> = (0..4)
            .map(|_| table.take().expect("a descriptor"))
            .collect();
        assert!(table.take().is_none());
        assert!(table.take().is_none());
        assert_eq!(*told.0.lock().unwrap(), vec![("near", 2), ("out", 4)]);
        let mut taken = taken.into_iter();
        drop(taken.next());
        let again = table.take().expect("one given back");
        assert!(table.take().is_none());
        assert_eq!(
            *told.0.lock().unwrap(),
            vec![("near", 2), ("out", 4), ("out", 4)]
        );
        assert_eq!(table.peak(), 4);
        drop((taken, again));
        assert!(table.available());
    }
}
