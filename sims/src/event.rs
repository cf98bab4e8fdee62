//! The event log every world records and every checker reads: (virtual time,
//! host, event). Worlds are single-threaded, so the log's order is a
//! linearisation of what happened; checkers rely on that.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;

/// One thing that happened.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    // ---- lanes world ----
    /// `route` / `dispatch` returned. `depth` is the reported depth before
    /// the item when admitted, `None` when refused.
    Routed {
        key: u64,
        item: u64,
        capacity: Option<u64>,
        depth: Option<u64>,
    },
    /// A lane task was spawned.
    LaneCreated { key: u64, lane: u64 },
    /// A lane task ended (`exit` is the router's `LaneExit`, lower case).
    LaneClosed { key: u64, lane: u64, exit: String },
    /// A handler began running an item on a lane.
    HandleStart { key: u64, item: u64, lane: u64 },
    /// A handler finished (or panicked: the item still counts as handled).
    HandleEnd {
        key: u64,
        item: u64,
        lane: u64,
        panicked: bool,
    },
    /// The world made this key's handler hang forever from this item on.
    Stuck { key: u64, item: u64, lane: u64 },
    /// The world dropped the router.
    RouterDropped,

    // ---- sender world ----
    /// A connection generation was registered (`local` is our socket address).
    ConnectionUp {
        node: String,
        generation: u64,
        local: String,
    },
    /// The down hook fired.
    ConnectionDown {
        node: String,
        generation: u64,
        reason: String,
    },
    /// A dial failed.
    DialFailed { node: String, error: String },
    /// A data frame was offered to `enqueue`; `blocked_us` is the virtual
    /// time the call took (S1: always 0 for a call that never awaits).
    DataEnqueued {
        node: String,
        seq: u64,
        outcome: String,
        blocked_us: u64,
    },
    /// A control was offered to `enqueue_control`, pinned to a generation;
    /// `down_at_return` records whether that generation was already down
    /// when the call returned.
    ControlEnqueued {
        node: String,
        generation: u64,
        seq: u64,
        link: Option<u64>,
        outcome: String,
        down_at_return: bool,
        blocked_us: u64,
    },
    /// The drain began writing a frame (`lane`: data or control).
    WriteStarted {
        node: String,
        generation: u64,
        lane: String,
        seq: u64,
    },
    /// That write ended (`outcome`: written, failed, timed_out).
    WriteFinished {
        node: String,
        generation: u64,
        lane: String,
        seq: u64,
        outcome: String,
    },
    /// The drain skipped a control whose pinned generation was down.
    ControlSkipped {
        node: String,
        generation: u64,
        seq: u64,
    },
    /// The drain dropped a data frame: no live connection.
    DataUnroutable { node: String, seq: u64 },
    /// A local link was made over a generation.
    Linked {
        node: String,
        generation: u64,
        link: u64,
    },
    /// The local side delivered `noconnection` for a link.
    NoConnection {
        node: String,
        generation: u64,
        link: u64,
    },
    /// A peer accepted a socket from `remote` (our local address).
    PeerAccepted { peer: String, remote: String },
    /// A peer read a frame from the socket whose far end is `remote`.
    FrameArrived {
        peer: String,
        remote: String,
        lane: String,
        generation: u64,
        seq: u64,
        link: Option<u64>,
    },
    /// A peer's socket ended (`how`: eof, error, dropped).
    PeerSocketClosed {
        peer: String,
        remote: String,
        how: String,
    },
    /// A fault was injected.
    Fault { what: String, peer: String },
    /// The sender's final counters (S4).
    SenderStats {
        data_queued: u64,
        data_written: u64,
        data_failed: u64,
        data_no_connection: u64,
        control_queued: u64,
        control_written: u64,
        control_failed: u64,
        control_skipped: u64,
    },
    /// The sender was dropped (S5); `panicked` if the drop panicked.
    SenderDropped { panicked: bool },

    // ---- both ----
    /// The workload finished and the world began its end-of-run checks.
    WorkloadDone,
    /// The run ended; `finished` is false when the virtual-time budget ran out.
    RunEnd { finished: bool },
}

/// An event with its time and host.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Record {
    /// Virtual time since the world started.
    #[serde(serialize_with = "as_micros")]
    pub at: Duration,
    /// Which simulated host recorded it (interned: one allocation per host
    /// name per run, not per event).
    pub host: Arc<str>,
    /// What happened.
    #[serde(flatten)]
    pub event: Event,
}

fn as_micros<S: serde::Serializer>(at: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(at.as_micros() as u64)
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{:>12.6}s {:>6}] {:?}",
            self.at.as_secs_f64(),
            self.host,
            self.event
        )
    }
}

/// The shared, append-only log. Cheap to clone; `Send + Sync` because the
/// production code's hooks must be.
#[derive(Clone, Default)]
pub struct EventLog {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    records: Vec<Record>,
    hosts: Vec<Arc<str>>,
}

impl EventLog {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends `event` at virtual time `at`, from `host`.
    pub fn push(&self, at: Duration, host: &str, event: Event) {
        tracing::debug!(target: "lanesim::event", at = %format_args!("{:.6}s", at.as_secs_f64()), host, ?event);
        let mut inner = self.inner();
        let host = match inner.hosts.iter().find(|known| &***known == host) {
            Some(known) => Arc::clone(known),
            None => {
                let interned: Arc<str> = Arc::from(host);
                inner.hosts.push(Arc::clone(&interned));
                interned
            }
        };
        inner.records.push(Record { at, host, event });
    }

    /// How many records so far.
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner().records.len()
    }

    /// Whether nothing was recorded yet.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Everything so far.
    #[must_use]
    pub fn snapshot(&self) -> Vec<Record> {
        self.inner().records.clone()
    }
}

/// 64-bit FNV-1a: a hasher with no seed, so equal logs hash equal in every
/// process on every machine.
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// A record's hash.
#[must_use]
pub fn record_hash(record: &Record) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = Fnv(0xcbf2_9ce4_8422_2325);
    record.hash(&mut hasher);
    hasher.finish()
}

/// The hash of a whole log, in order.
#[must_use]
pub fn log_hash(records: &[Record]) -> u64 {
    records
        .iter()
        .fold(0x8422_2325_cbf2_9ce4u64, |acc, record| {
            (acc ^ record_hash(record))
                .wrapping_mul(0x100_0000_01b3)
                .rotate_left(5)
        })
}
