//! The whole lanesim CLI on the layer sender, over lanesim's connection
//! layer: `cargo test -p lanesim-examples --test layer_sender -- run @shipped`.
lanesim_sims::main!(lanesim_examples::LayerSenderTargets);
