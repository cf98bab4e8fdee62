//! lanesim's production components: velo's ordering [`lanes`] and beamr's
//! distribution sender ([`dist`]), written against swappable primitives
//! ([`shim`]) so the testbed can run them unchanged under simulated time and
//! network (turmoil) and under a model checker (loom).
//!
//! [`planted`] holds the catalogue of known bug classes the testbed must
//! catch; without the `planted-bugs` feature it compiles to nothing.

pub mod distribution;
pub mod lanes;
pub mod planted;
pub mod shim;
