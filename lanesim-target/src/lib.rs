//! What an implementation offers lanesim's worlds.
//!
//! lanesim runs a lanes router, or a node (a sender and its connection
//! layer), in simulated worlds that inject wedged and dead peers, redials,
//! reap races, floods and partitions, and decides every run against the
//! contracts such code promises (per-key FIFO, exactly-once, one live lane
//! per key, capacity, send-or-down, generation pinning, FIFO per node, …).
//! This crate is the seam: implement its traits for your code and the
//! whole testbed runs on it. It has no dependency on the runner; the runner
//! (`lanesim-sims`) depends on it.
//!
//! # Start here
//!
//! [`probe`]: coverage marks and preemption points for your own code
//! (nothing at all in a production build), and [`net`]: the transport
//! seam your node dials and listens through.
//!
//! # Module map
//!
//! | module | what it holds |
//! |---|---|
//! | [`probe`] | `mark`, `preempt_point`, the `Probe` the testbed installs, `Sites` a target declares |
//! | [`net`] | `Transport`, `Listener`, `Connected`: the sockets a world hands a node |

pub mod net;
pub mod probe;
