//! The whole lanesim CLI on the router written blind under "no lock across
//! a send": `cargo test -p lanesim-examples --test unlocked_lanes -- model`.
lanesim_sims::main!(lanesim_examples::unlocked_lanes::UnlockedTargets);
