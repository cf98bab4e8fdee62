//! The whole lanesim CLI on the router written blind for the model world:
//! `cargo test -p lanesim-examples --test blind_lanes -- model`.
lanesim_sims::main!(lanesim_examples::blind_lanes::BlindTargets);
