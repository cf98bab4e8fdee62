//! What every world's validation is written in: a [`Problem`] (a key and a
//! message), and the checks of one value each world applies to its keys
//! (counts, durations, probabilities, upper bounds, preemption).

use crate::scenario::limits::MAX_PREEMPT;
use crate::scenario::position::KeyPath;
use crate::scenario::sample::{Dur, Sampled};

/// One thing wrong with a file: the key at fault and what is wrong.
pub(in crate::scenario) struct Problem {
    /// The key at fault.
    pub(in crate::scenario) key: KeyPath,
    /// What is wrong.
    pub(in crate::scenario) message: String,
}

pub(super) fn problem(key: KeyPath, message: impl Into<String>) -> Problem {
    Problem {
        key,
        message: message.into(),
    }
}

/// The simulation ticks per heartbeat tick, at least (mesh, and a sender
/// world with a heartbeat).
pub(super) const MESH_TICKS_PER_HEARTBEAT: u32 = 8;

/// `value`'s upper bound is at most `max`.
pub(super) fn at_most(key: &KeyPath, value: &Sampled<u64>, max: u64, problems: &mut Vec<Problem>) {
    if value.bounds().1 > max {
        problems.push(problem(
            key.clone(),
            format!("at most {max} (got {})", value.bounds().1),
        ));
    }
}

/// `value`'s upper bound is at most `max`.
pub(super) fn no_longer(
    key: &KeyPath,
    value: &Sampled<Dur>,
    max: std::time::Duration,
    problems: &mut Vec<Problem>,
) {
    if value.bounds().1 .0 > max {
        problems.push(problem(key.clone(), format!("at most {}", Dur(max))));
    }
}

/// `value` is an ordered range of counts, none under `min`.
pub(super) fn count(key: &KeyPath, value: &Sampled<u64>, min: u64, problems: &mut Vec<Problem>) {
    let (lo, hi) = value.bounds();
    if !value.ordered() {
        problems.push(problem(
            key.clone(),
            format!("range [{lo}, {hi}] has min > max"),
        ));
    } else if lo < min {
        problems.push(problem(
            key.clone(),
            format!("must be at least {min} (got {lo})"),
        ));
    }
}

/// `value` is an ordered range of durations, and with `positive` none zero.
pub(super) fn span(
    key: &KeyPath,
    value: &Sampled<Dur>,
    positive: bool,
    problems: &mut Vec<Problem>,
) {
    let (lo, hi) = value.bounds();
    if !value.ordered() {
        problems.push(problem(
            key.clone(),
            format!("range [\"{lo}\", \"{hi}\"] has min > max"),
        ));
    } else if positive && lo.0.is_zero() {
        problems.push(problem(key.clone(), "must be greater than zero"));
    }
}

/// `value` is an ordered range of probabilities.
pub(super) fn chance(key: &KeyPath, value: &Sampled<f64>, problems: &mut Vec<Problem>) {
    let (lo, hi) = value.bounds();
    if !value.ordered() || !(0.0..=1.0).contains(&lo) || !(0.0..=1.0).contains(&hi) {
        problems.push(problem(
            key.clone(),
            format!("must be a probability in [0, 1] with min <= max (got {lo}..{hi})"),
        ));
    }
}

/// A world's preemption and scheduling knobs, as its table writes them.
pub(super) struct Preemption<'a> {
    pub(super) preempt: Option<&'a Sampled<f64>>,
    pub(super) preempt_for: Option<&'a Sampled<Dur>>,
    pub(super) shuffle: Option<&'a Sampled<f64>>,
    pub(super) preempt_awaits: Option<&'a Sampled<f64>>,
}

/// A world's `preempt`, `shuffle` and `preempt_awaits` (chances) and
/// `preempt_for` (at most [`MAX_PREEMPT`]), under `table`.
pub(super) fn preemption(table: &str, knobs: &Preemption<'_>, problems: &mut Vec<Problem>) {
    for (name, value) in [
        ("preempt", knobs.preempt),
        ("shuffle", knobs.shuffle),
        ("preempt_awaits", knobs.preempt_awaits),
    ] {
        if let Some(value) = value {
            self::chance(&KeyPath::field(table, name), value, problems);
        }
    }
    let sleep = knobs.preempt_for;
    if let Some(value) = sleep {
        let key = KeyPath::field(table, "preempt_for");
        span(&key, value, false, problems);
        if value.bounds().1 .0 > MAX_PREEMPT {
            problems.push(problem(key, "at most 1s: a preempted thread, not a stall"));
        }
    }
}
