//! The whole lanesim CLI on the DashMap router written blind for the model
//! world: `cargo test -p lanesim-examples --test sharded_lanes -- model`.
lanesim_sims::main!(lanesim_examples::sharded_lanes::ShardedTargets);
