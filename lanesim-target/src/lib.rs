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
//! | [`lanes`] | `LanesTarget`: build a router on the world's runtime; `Lanes::route`; lifecycle reports |
//! | [`node`] | `NodeTarget`: a sender and its connection layer; dial, serve, enqueue, enqueue a control pinned to a generation; up/down/frame reports and the drain's account; `DownReason`, the one list of why a generation goes down |
//! | [`layer`] | `SenderTarget`: a sender alone, run over lanesim's connection layer (`ConnectionLayer`, `LayerConnection`) |
//! | [`wire`] | the frame format (encode, sans-IO decode, keepalive) |
//! | [`claim`] | the claim check: a live connection's node asked whether a stream claiming its name is its own |
//! | [`handshake`] | the authenticated handshake on every new stream: hello, challenge, proof (HMAC-SHA256 over the cluster cookie), and where nonces come from |
//! | [`probe`] | `mark`, `preempt_point`, the `Probe` the testbed installs, `Sites` a target declares |
//! | [`net`] | `Transport`, `Listener`, `Connected`: the sockets a world hands a node |
//! | [`hazard`] | `Hazard`: a contract a target breaks knowingly, and why |
//! | [`shim`] | the `lanesim-shim` crate: maps, channels, locks, atomics, tasks and time that are the real crates normally and the model checker's under `--cfg shuttle` / `--cfg loom` |
//!
//! The protocol has one home: [`wire`], [`handshake`] and
//! [`node::DownReason`] are what lanesim's own node (`lanesim::distribution`)
//! speaks and reports, as a node of yours would, and what the worlds' peers
//! and the event log use.

pub mod claim;
pub mod handshake;
pub mod hazard;
pub mod lanes;
pub mod layer;
pub mod net;
pub mod node;
pub mod probe;
pub mod wire;

/// The public shim (the `lanesim-shim` crate): name your primitives through
/// it, and the same code runs on the real crates and under a model checker.
pub use lanesim_shim as shim;

/// The implementations one run of the testbed tests: at most one of each
/// component. A world whose component the target lacks does not run; its
/// scenarios are reported as not decided.
pub trait Targets: Send + Sync + 'static {
    /// The name reports print ("lanesim", your crate's name).
    fn name(&self) -> &str;

    /// The lanes router, if the target has one.
    fn lanes(&self) -> Option<&dyn lanes::LanesTarget> {
        None
    }

    /// The node (sender and connection layer), if the target has one.
    fn node(&self) -> Option<&dyn node::NodeTarget> {
        None
    }

    /// A sender alone, to run over lanesim's connection layer as the node
    /// (used when [`Targets::node`] is `None`).
    fn sender(&self) -> Option<&dyn layer::SenderTarget> {
        None
    }
}
