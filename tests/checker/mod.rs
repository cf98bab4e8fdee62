//! Helpers the loom model files share.
#![allow(dead_code)] // each model file uses its own subset

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Runs `f` under loom at preemption bound `bound` and prints how many
/// schedules it explored (docs/model-checking.md quotes these).
pub fn model(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let schedules = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&schedules);
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(bound);
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        f();
    });
    eprintln!(
        "loom: {} schedules at preemption bound {bound}",
        schedules.load(Ordering::Relaxed)
    );
}

/// Runs a model expected to fail and returns loom's panic message.
pub fn failure_of(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let payload = std::panic::catch_unwind(f).expect_err("loom found no failing interleaving");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
        .unwrap_or_default()
}
