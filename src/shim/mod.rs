//! The one switch point between real primitives and model-checked ones.
//!
//! Production code in `src/` names time, sync, maps, channels, spawning and
//! sockets only through this module (the rule tokio follows with its own
//! `src/loom/`). One file per primitive; every file exports the same names on
//! both sides of the switch, so the code that uses them compiles unchanged:
//!
//! - `sync`, `map`, `chan`, `time`: the public crate `lanesim-shim`, as any
//!   user's code would use it: std / dashmap / flume / `tokio::time`
//!   normally (turmoil virtualises time per simulated host); under
//!   `--cfg loom` or `--cfg shuttle` the checker's types, a sharded map of
//!   checker mutexes, a checker-visible channel and eager timeouts.
//! - `net`: a [`Transport`](net::Transport) trait for dial / accept. A trait,
//!   not a cfg, because one binary runs real TCP and simulated TCP side by side.
//! - `rt`: where background tasks run ([`RuntimeChoice`](rt::RuntimeChoice)), chosen at
//!   construction for the same reason.
//! - `entropy`: the handshake's nonces, from the OS or (in a world) a seed.
//! - `probe`: coverage marks and preemption points for the testbed; nothing
//!   at all without the `testbed` feature.

pub mod entropy;
pub mod net;
pub mod probe;
pub mod rt;
pub(crate) use lanesim_shim::{chan, map, sync, time};
