//! Channels: flume's unbounded (lanes) and bounded (sender lanes).
//!
//! Only the operations the production code needs are used: `send`,
//! `try_send`, `try_recv` and `recv_async`. flume's `Selector` is never used
//! (it draws from fastrand and would break seeded replay).

#[cfg(not(loom))]
pub(crate) use flume::{bounded, unbounded, Receiver, Sender, TrySendError};

#[cfg(loom)]
compile_error!(
    "the loom channel (Mutex<VecDeque> + Condvar with an explicit disconnect) is not \
     written yet: see the loom issue"
);
