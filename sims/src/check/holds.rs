//! The time the scheduling explorer held tasks back, which every timing
//! bound allows for.
//!
//! Model. A hold (`Event::TaskHeld`) keeps one task from running for a
//! span of virtual time, as an OS keeps a descheduled thread: whatever
//! that task was about to do happens that much later. A chain of steps
//! (a timer fires, a lane wakes, it takes the lock, it logs its end) runs
//! one task at a time, so the holds that delayed the chain are disjoint
//! spans of time inside the chain's window: their sum is at most the
//! measure of the union of every hold overlapping the window. A bound
//! "`b` happens within `d` of `a`" therefore becomes "within
//! `d + held(a, b)`", whatever task the holds fell on; with no holds (the
//! explorer's `preempt_awaits` at zero) it is the bound as written. Each
//! hold is counted up to the next timer boundary after it (a held task is
//! released there, like a sleep) plus the run's tick.
//!
//! Pinned by `holds::tests` and, in a checker, by
//! `l5_allows_for_the_time_tasks_were_held` (sims/tests/checkers_lanes.rs).

use std::time::Duration;

use crate::event::{Event, Record};

/// The spans tasks were held, merged, with running totals.
#[derive(Debug, Default)]
pub struct Holds {
    /// Disjoint spans `[from, to)`, in order.
    spans: Vec<(Duration, Duration)>,
    /// `before[i]`: the held time of `spans[..i]`.
    before: Vec<Duration>,
}

/// What a held task may lose beyond its hold: the millisecond boundary it
/// is released at.
const TIMER_GRAIN: Duration = Duration::from_millis(1);

impl Holds {
    /// The holds in `records`, each counted until the timer boundary after
    /// it and a `tick` more.
    #[must_use]
    pub fn of(records: &[Record], tick: Duration) -> Self {
        let mut raw: Vec<(Duration, Duration)> = records
            .iter()
            .filter_map(|record| match record.event {
                Event::TaskHeld { held_us } => Some((
                    record.at,
                    record.at + Duration::from_micros(held_us) + TIMER_GRAIN + tick,
                )),
                _ => None,
            })
            .collect();
        raw.sort();
        let mut spans: Vec<(Duration, Duration)> = Vec::with_capacity(raw.len());
        for (from, to) in raw {
            match spans.last_mut() {
                Some(last) if from <= last.1 => last.1 = last.1.max(to),
                _ => spans.push((from, to)),
            }
        }
        let mut before = Vec::with_capacity(spans.len());
        let mut total = Duration::ZERO;
        for &(from, to) in &spans {
            before.push(total);
            total += to - from;
        }
        Self { spans, before }
    }

    /// How long tasks were held within `[from, to]` (the measure of the
    /// held spans' union there).
    #[must_use]
    pub fn within(&self, from: Duration, to: Duration) -> Duration {
        if to <= from || self.spans.is_empty() {
            return Duration::ZERO;
        }
        // The first span ending after `from`, the first starting at or
        // after `to`: whole spans between them count in full (by the
        // running totals), the two ends clipped.
        let first = self.spans.partition_point(|&(_, end)| end <= from);
        let last = self.spans.partition_point(|&(start, _)| start < to);
        if first >= last {
            return Duration::ZERO;
        }
        let whole = self.before.get(last).copied().unwrap_or_else(|| {
            self.before[last - 1] + (self.spans[last - 1].1 - self.spans[last - 1].0)
        }) - self.before[first];
        let head = from.saturating_sub(self.spans[first].0);
        let tail = self.spans[last - 1].1.saturating_sub(to);
        whole.saturating_sub(head).saturating_sub(tail)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn held(at_ms: u64, held_us: u64) -> Record {
        Record {
            at: Duration::from_millis(at_ms),
            host: Arc::from("sched"),
            event: Event::TaskHeld { held_us },
        }
    }

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn no_holds_allow_nothing() {
        let holds = Holds::of(&[], MS);
        assert_eq!(holds.within(Duration::ZERO, MS * 100), Duration::ZERO);
    }

    #[test]
    fn a_hold_counts_its_span_clipped_to_the_window() {
        // Held at 10 ms for 3 ms: counted 10..15 (3 ms, the boundary, a tick).
        let holds = Holds::of(&[held(10, 3_000)], MS);
        assert_eq!(holds.within(Duration::ZERO, MS * 100), MS * 5);
        assert_eq!(holds.within(MS * 12, MS * 100), MS * 3);
        assert_eq!(holds.within(MS * 11, MS * 13), MS * 2);
        assert_eq!(holds.within(MS * 15, MS * 20), Duration::ZERO);
        assert_eq!(holds.within(Duration::ZERO, MS * 10), Duration::ZERO);
    }

    #[test]
    fn overlapping_holds_count_once_and_disjoint_ones_add_up() {
        // 10..15 and 12..17 merge to 10..17; 30..33 apart.
        let holds = Holds::of(&[held(12, 3_000), held(10, 3_000), held(30, 1_000)], MS);
        assert_eq!(holds.within(Duration::ZERO, MS * 100), MS * 10);
        assert_eq!(holds.within(MS * 16, MS * 31), MS * 2);
        assert_eq!(holds.within(MS * 17, MS * 30), Duration::ZERO);
    }

    #[test]
    fn the_measure_never_exceeds_the_window() {
        let records: Vec<Record> = (0..50).map(|i| held(i * 2, 1_500)).collect();
        let holds = Holds::of(&records, MS);
        for from in 0..110 {
            for len in 0..20 {
                let (a, b) = (MS * from, MS * (from + len));
                assert!(holds.within(a, b) <= b - a, "{a:?}..{b:?}");
            }
        }
    }
}
