//! lanesim's production components: velo's ordering [`lanes`] and beamr's
//! distribution sender ([`distribution`]), written against swappable
//! primitives ([`shim`]) so the testbed can run them unchanged under
//! simulated time and network (turmoil) and under model checkers (loom,
//! shuttle).
//!
//! # Start here
//!
//! [`lanes::LaneRouter::route`] and [`distribution::DistSender`] are the two
//! entry points a service calls; each module opens with the model its
//! invariants rest on.
//!
//! # Module map
//!
//! | module | what it holds |
//! |---|---|
//! | [`lanes`] | `LaneRouter` (per-key FIFO lanes, idle reaping, capacity), the lane task and its exit guard, `OrderedDispatcher` (panic isolation, overflow policy) |
//! | [`distribution`] | the frame reader and its budget, the cookie, `DistConnection` (one generation, down once), `ConnectionManager` (the node table, dial, accept and each end's handshake, read loops), `DistSender` (data and control lanes, the drain), `LinkTable` |
//! | [`shim`] | the one switch point: sync, map, chan and time (the public crate `lanesim-shim`), net, rt, entropy, and `probe` (the testbed's coverage marks and preemption points) |
//! | [`planted`] | the planted-bug catalogue: compiled to nothing without the `planted-bugs` feature |
//!
//! The protocol these components speak has one definition, in
//! `lanesim-target` (the public crate a user's node implements against):
//! the frame format (`lanesim_target::wire`), the handshake's frames and
//! proofs (`lanesim_target::handshake`) and the down reasons
//! ([`distribution::DownReason`], re-exported from
//! `lanesim_target::node`). `distribution` imports them as any node would.
//!
//! Features: `planted-bugs` compiles the catalogue in, `testbed` the coverage
//! marks and preemption points; a production build has neither.

pub mod distribution;
pub mod lanes;
pub mod planted;
pub mod shim;
