//! The whole lanesim CLI on the `select!` lanes router:
//! `cargo test -p lanesim-examples --test select_lanes -- run @shipped`.
lanesim_sims::main!(lanesim_examples::SelectTargets);
