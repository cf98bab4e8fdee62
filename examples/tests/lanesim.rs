//! The whole lanesim CLI on the example implementations:
//! `cargo test -p lanesim-examples --test lanesim -- run @shipped`.
lanesim_sims::main!(lanesim_examples::ExampleTargets);
