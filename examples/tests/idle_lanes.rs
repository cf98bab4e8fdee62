//! The whole lanesim CLI on the idle-reaping lanes router:
//! `cargo test -p lanesim-examples --test idle_lanes -- run @shipped`.
lanesim_sims::main!(lanesim_examples::IdleTargets);
