//! lanesim's testbed: the `lanesim` runner and, as they land, the simulated
//! worlds, fault injectors, checkers and scenario files that drive the
//! production code in the `lanesim` crate.

pub mod cli;
