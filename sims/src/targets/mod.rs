//! The implementations the worlds run. A world sees a target only through
//! the public traits of `lanesim_target`; lanesim's own components are one
//! target among others ([`lanesim`]), the only module of the testbed that
//! names their types.

pub mod lanesim;
