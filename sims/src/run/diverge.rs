//! Why a seed's two runs diverged: the likely sources `audit` names, read
//! from the first pair of events that differ.
//!
//! Model. A heuristic, and said to be one ("likely"): it looks at the two
//! diverging records and, where `audit` ran the seed in two fresh
//! processes as well, at whether those two agreed.
//!
//! - Different virtual times: something read the wall clock
//!   (`std::time::Instant::now`, `SystemTime`, a deadline computed from
//!   either) and the run took a different time for it: [`Source::WallClock`].
//! - The same instant, events of different keys, peers, nodes or hosts:
//!   things done at one instant came in another order, the order of a map
//!   with a randomly seeded hasher iterated, drained or dropped
//!   ([`Source::HashOrder`]); with stock tokio, also an un-`biased`
//!   `select!`, whose branch order is drawn from OS entropy
//!   ([`Source::UnbiasedSelect`]; with lanesim's tokio it is seeded); last,
//!   any decision drawn from OS entropy ([`Source::Entropy`]), which can
//!   put anything first.
//! - The same instant, different kinds of event for the same key or peer:
//!   one branch taken instead of another, first an un-`biased` `select!`
//!   (stock tokio), then a map's order.
//! - The same event for the same key or peer with another value (an id, a
//!   count): a value carried from the first run into the second in one
//!   process, a `static` ([`Source::Static`]: a global counter, a
//!   `OnceLock` or lazy cache, a thread-local), or a decision drawn from
//!   OS entropy ([`Source::Entropy`]), which another branch taken can be
//!   too.
//! - Two fresh processes that each ran the seed once agree, though two
//!   runs in one process did not: state kept in the process between runs,
//!   a `static`, whatever the events look like. Fresh processes that
//!   disagree rule a `static` out (it would start the same in each), and
//!   leave OS entropy when the events point at nothing else.
//!
//! Each hint is pinned by a test on a constructed divergence
//! (`*_hints_*` below).

use std::fmt;

use serde_json::Value;

use crate::event::Record;

/// A likely source of a divergence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The wall clock read inside a run.
    WallClock,
    /// The order of a map with a randomly seeded hasher.
    HashOrder,
    /// An un-`biased` `select!` under stock tokio.
    UnbiasedSelect,
    /// State kept in the process between runs.
    Static,
    /// A decision drawn from OS entropy.
    Entropy,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::WallClock => {
                "the wall clock: std::time::Instant::now or SystemTime read in the run (take time from tokio::time)"
            }
            Self::HashOrder => {
                "a map with a randomly seeded hasher (HashMap/HashSet with RandomState) iterated, drained, cleared or dropped in its order (use BTreeMap or a fixed hasher)"
            }
            Self::UnbiasedSelect => {
                "an un-biased tokio::select!: stock tokio draws its branch order from OS entropy (write `biased;`, or add lanesim's [patch.crates-io] tokio line)"
            }
            Self::Static => {
                "a static: a global counter, a OnceLock or lazy cache, a thread-local, carried from one run to the next in one process"
            }
            Self::Entropy => {
                "OS entropy deciding something: rand::thread_rng, getrandom, a RandomState hash of a value (draw from the world's seed instead)"
            }
        })
    }
}

/// A likely source, and what in the divergence points at it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hint {
    /// The source.
    pub source: Source,
    /// What points at it.
    pub why: String,
}

/// Fields of an event that name *which* thing it is about: a difference
/// there is a difference of order, elsewhere one of value.
const WHICH: &[&str] = &[
    "key", "lane", "peer", "node", "a", "b", "socket", "intruder",
];

/// The likely sources of a divergence whose first differing records are
/// `first` and `second` (`None`: that run's log ended), most likely first.
/// `stock_tokio`: the build's tokio does not seed `select!`. `fresh`: two
/// fresh processes ran the seed once each and agreed (`Some(true)`) or
/// not; `None`: not tried.
#[must_use]
pub fn likely(
    first: Option<&Record>,
    second: Option<&Record>,
    stock_tokio: bool,
    fresh: Option<bool>,
) -> Vec<Hint> {
    let hint = |source, why: String| Hint { source, why };
    if fresh == Some(true) {
        return vec![hint(
            Source::Static,
            "the seed replays in two fresh processes but not twice in one".into(),
        )];
    }
    let mut hints = Vec::new();
    if let (Some(a), Some(b)) = (first, second) {
        let select = |why: &str| hint(Source::UnbiasedSelect, why.to_string());
        if a.at != b.at {
            hints.push(hint(
                Source::WallClock,
                format!(
                    "the runs differ in virtual time ({:.6}s vs {:.6}s)",
                    a.at.as_secs_f64(),
                    b.at.as_secs_f64()
                ),
            ));
        } else {
            let (which, values) = differing_fields(a, b);
            let same_thing = a.host == b.host && which.is_empty();
            if a.event.kind() != b.event.kind() && same_thing {
                if stock_tokio {
                    hints.push(select(
                        "another branch was taken for the same thing at the same instant",
                    ));
                }
                hints.push(hint(
                    Source::HashOrder,
                    "different events at the same instant".into(),
                ));
                hints.push(hint(
                    Source::Entropy,
                    "another branch was taken for the same thing".into(),
                ));
            } else if !same_thing {
                let about = if a.host == b.host {
                    which.join(", ")
                } else {
                    "host".to_string()
                };
                hints.push(hint(
                    Source::HashOrder,
                    format!("events for different {about} at the same instant, in another order"),
                ));
                if stock_tokio {
                    hints.push(select("events at the same instant in another order"));
                }
                hints.push(hint(
                    Source::Entropy,
                    "a decision that put another event first".into(),
                ));
            } else if !values.is_empty() {
                let why = format!(
                    "the same event with another {} in the second run",
                    values.join(", ")
                );
                hints.push(hint(Source::Static, why.clone()));
                hints.push(hint(Source::Entropy, why));
            }
        }
    }
    if fresh == Some(false) {
        // Two fresh processes differ too: a static starts the same in
        // each, so it is not the (only) cause.
        hints.retain(|h| h.source != Source::Static);
        if hints.is_empty() {
            hints.push(hint(
                Source::Entropy,
                "two fresh processes differ too".into(),
            ));
        }
    }
    hints
}

/// The fields of two events' JSON that differ: those naming which thing
/// the event is about ([`WHICH`]), and the others (values); a different
/// kind of event differs in its kind only.
fn differing_fields(a: &Record, b: &Record) -> (Vec<String>, Vec<String>) {
    let (Ok(Value::Object(x)), Ok(Value::Object(y))) = (
        serde_json::to_value(&a.event),
        serde_json::to_value(&b.event),
    ) else {
        return (Vec::new(), Vec::new());
    };
    let mut which = Vec::new();
    let mut values = Vec::new();
    for (name, value) in &x {
        if name == "event" {
            continue;
        }
        match y.get(name) {
            Some(other) if other == value => {}
            Some(_) if WHICH.contains(&name.as_str()) => which.push(name.clone()),
            Some(_) => values.push(name.clone()),
            None => {}
        }
    }
    (which, values)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::event::Event;

    fn routed(at_us: u64, key: u64, item: u64, depth: Option<u64>) -> Record {
        Record {
            at: Duration::from_micros(at_us),
            host: Arc::from("lanes"),
            event: Event::Routed {
                key,
                item,
                capacity: None,
                depth,
            },
        }
    }

    fn sources(hints: &[Hint]) -> Vec<Source> {
        hints.iter().map(|h| h.source).collect()
    }

    #[test]
    fn a_divergence_in_virtual_time_hints_the_wall_clock() {
        let hints = likely(
            Some(&routed(1_000, 2, 17, Some(0))),
            Some(&routed(1_250, 2, 17, Some(0))),
            false,
            None,
        );
        assert_eq!(sources(&hints), [Source::WallClock]);
        assert!(hints[0].why.contains("0.001000s vs 0.001250s"), "{hints:?}");
    }

    #[test]
    fn other_keys_at_one_instant_hint_a_maps_order_then_an_unbiased_select() {
        let (a, b) = (routed(1_000, 2, 17, Some(0)), routed(1_000, 5, 18, Some(0)));
        let hints = likely(Some(&a), Some(&b), false, None);
        assert_eq!(sources(&hints), [Source::HashOrder, Source::Entropy]);
        assert!(hints[0].why.contains("different key"), "{hints:?}");
        // With stock tokio a select! is a suspect too, after the map.
        let stock = likely(Some(&a), Some(&b), true, None);
        assert_eq!(
            sources(&stock),
            [Source::HashOrder, Source::UnbiasedSelect, Source::Entropy]
        );
    }

    #[test]
    fn another_event_for_one_thing_at_one_instant_hints_an_unbiased_select_first() {
        let a = routed(1_000, 2, 17, Some(0));
        let mut b = a.clone();
        b.event = Event::WorkloadDone;
        let stock = likely(Some(&a), Some(&b), true, None);
        assert_eq!(
            sources(&stock),
            [Source::UnbiasedSelect, Source::HashOrder, Source::Entropy]
        );
        // lanesim's tokio seeds select!: it is no suspect.
        let patched = likely(Some(&a), Some(&b), false, None);
        assert_eq!(sources(&patched), [Source::HashOrder, Source::Entropy]);
    }

    #[test]
    fn another_value_of_one_event_hints_a_static_or_entropy() {
        let (a, b) = (routed(1_000, 2, 17, Some(0)), routed(1_000, 2, 17, Some(3)));
        let hints = likely(Some(&a), Some(&b), false, None);
        assert_eq!(sources(&hints), [Source::Static, Source::Entropy]);
        assert!(hints[0].why.contains("another depth"), "{hints:?}");
        // Fresh processes that differ too rule a static out.
        let fresh = likely(Some(&a), Some(&b), false, Some(false));
        assert_eq!(sources(&fresh), [Source::Entropy]);
    }

    #[test]
    fn fresh_processes_that_agree_hint_a_static_whatever_the_events() {
        let (a, b) = (routed(1_000, 2, 17, Some(0)), routed(2_000, 5, 18, None));
        let hints = likely(Some(&a), Some(&b), true, Some(true));
        assert_eq!(sources(&hints), [Source::Static]);
        assert!(hints[0].why.contains("two fresh processes"), "{hints:?}");
    }

    #[test]
    fn a_log_that_ended_hints_nothing() {
        assert!(likely(Some(&routed(1, 2, 3, None)), None, true, None).is_empty());
    }
}
