//! Log capture: every tracing event on this thread, rendered as one string.
//!
//! One subscriber, set as the binary's global default the first time a
//! test captures, hands each event to the capture installed on the thread
//! that emits it (a thread-local). It is interested in every callsite,
//! always, so tracing's per-callsite interest cache can never hold "never"
//! for a callsite a capturing test hits: with a scoped subscriber per test
//! (`set_default`) it could, when the callsite was first hit on another
//! test's thread while no capture was alive, and CI lost
//! `a_refused_dialer_is_told_which_cap_turned_it_away`'s and
//! `an_impostor_without_the_cookie_never_registers`'s lines so, under load.

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::sync::{Arc, Mutex, Once};

/// Every tracing event on this thread, one rendered record per event, as a
/// `fmt` subscriber prints it: level, message, then `name=value` fields
/// (Display for `%`, Debug for `?` and for plain strings). A raw newline in
/// a record is exactly what would forge a line in a real log.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<String>>>);

thread_local! {
    /// The capture events on this thread go to, if any.
    static CURRENT: RefCell<Option<Captured>> = const { RefCell::new(None) };
}

/// Capturing on this thread until dropped.
pub struct Installed(());

impl Drop for Installed {
    fn drop(&mut self) {
        CURRENT.with(|current| current.borrow_mut().take());
    }
}

impl Captured {
    /// Captures this thread's events until the guard drops.
    pub fn install(&self) -> Installed {
        static ROUTER: Once = Once::new();
        ROUTER.call_once(|| {
            tracing::subscriber::set_global_default(Router)
                .expect("no other global subscriber in a test binary");
            // A callsite registered on another thread while the router was
            // being set may have stored the interest it computed before.
            tracing::callsite::rebuild_interest_cache();
        });
        CURRENT.with(|current| *current.borrow_mut() = Some(self.clone()));
        Installed(())
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

/// The global subscriber: each event to its thread's capture.
struct Router;

impl tracing::Subscriber for Router {
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::always()
    }
    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::TRACE)
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
        // `try_with`: an event while the thread's locals are torn down.
        let Ok(Some(captured)) = CURRENT.try_with(|current| current.borrow().clone()) else {
            return;
        };
        let mut render = Render::default();
        event.record(&mut render);
        let record = format!(
            "{} {}{}",
            event.metadata().level(),
            render.message,
            render.fields
        );
        captured.0.lock().unwrap().push(record);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}
