//! The whole lanesim CLI on the checked node:
//! `cargo test -p lanesim-examples --test checked_node -- run @shipped`.
lanesim_sims::main!(lanesim_examples::CheckedNodeTargets);
