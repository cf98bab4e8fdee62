//! lanesim's testbed: simulated worlds that run the production code of the
//! `lanesim` crate unchanged, fault injection, checkers over event logs, and
//! the `lanesim` runner.

pub mod check;
pub mod cli;
pub mod coverage;
pub mod event;
pub mod fault;
pub mod rng;
pub mod run;
pub mod scenario;
pub mod world;
