//! The one switch point between real primitives and model-checked ones.
//!
//! Production code in `src/` names time, sync, maps, channels, spawning and
//! sockets only through this module (the rule tokio follows with its own
//! `src/loom/`). One file per primitive; every file exports the same names on
//! both sides of the switch, so the code that uses them compiles unchanged:
//!
//! - `sync`, `map`, `chan`: std / dashmap / flume normally; under
//!   `--cfg loom` or `--cfg shuttle` the checker's types (through `mc`), a
//!   sharded map of checker mutexes and a checker-visible channel.
//! - `time`: `tokio::time`, which turmoil virtualises per simulated host.
//! - `net`: a [`Transport`](net::Transport) trait for dial / accept. A trait,
//!   not a cfg, because one binary runs real TCP and simulated TCP side by side.
//! - `rt`: where background tasks run ([`RuntimeChoice`](rt::RuntimeChoice)), chosen at
//!   construction for the same reason.
//! - `entropy`: the handshake's nonces, from the OS or (in a world) a seed.
//! - `probe`: coverage marks and preemption points for the testbed; nothing
//!   at all without the `testbed` feature.

pub(crate) mod chan;
pub mod entropy;
pub(crate) mod map;
#[cfg(any(loom, shuttle))]
mod mc;
pub mod net;
pub mod probe;
pub mod rt;
pub(crate) mod sync;
pub(crate) mod time;
