//! Log capture: every tracing event on this thread, rendered as one string.

use std::fmt::{self, Write as _};
use std::sync::{Arc, Mutex};

/// Every tracing event on this thread, one rendered record per event, as a
/// `fmt` subscriber prints it: level, message, then `name=value` fields
/// (Display for `%`, Debug for `?` and for plain strings). A raw newline in
/// a record is exactly what would forge a line in a real log.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<String>>>);

impl Captured {
    /// Captures this thread's events until the guard drops.
    ///
    /// Then rebuilds tracing's per-callsite interest: a callsite first hit
    /// on another test's thread, with no subscriber there, may have cached
    /// "never" in a race with this registration, and would drop this
    /// thread's events too (CI lost `an_impostor_without_the_cookie_never_registers`'s
    /// refusal so, once, under load).
    pub fn install(&self) -> tracing::subscriber::DefaultGuard {
        let guard = tracing::subscriber::set_default(self.clone());
        tracing::callsite::rebuild_interest_cache();
        guard
    }

    pub fn records(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// Records containing every one of `needles`.
    pub fn matching(&self, needles: &[&str]) -> Vec<String> {
        self.records()
            .into_iter()
            .filter(|record| needles.iter().all(|needle| record.contains(needle)))
            .collect()
    }
}

#[derive(Default)]
struct Render {
    message: String,
    fields: String,
}

impl tracing::field::Visit for Render {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }
}

impl tracing::Subscriber for Captured {
    // Asked at every event, never cached: other threads run without it.
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut render = Render::default();
        event.record(&mut render);
        let record = format!(
            "{} {}{}",
            event.metadata().level(),
            render.message,
            render.fields
        );
        self.0.lock().unwrap().push(record);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}
