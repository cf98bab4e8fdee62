//! Preemptions that fired, kept beside the event log, never in it: what
//! `replay -v` shows between the log's events at the point each fired.
//!
//! Model. A preemption point that preempted (a yield or a sleep drawn by
//! the probe, `coverage`) and an await the scheduling explorer preempted
//! (`explore`) change what runs next, so a person reading a run's events
//! wants to see them where they happened. They are not events: the event
//! log is what the checkers decide and what the run's hash covers, and a
//! run's hash must not change because somebody can now see its
//! preemptions (pinned by `preemptions_fired_are_beside_the_log_not_in_it`
//! and by the log hashes of every shipped scenario, unchanged). So each is
//! noted in a side list, with the virtual time it fired at and the number
//! of log records made before it, which places it exactly among the
//! records when they are printed. (The explorer's holds are events
//! already, `TaskHeld`: the checkers allow for them.)
//!
//! A world turns the list on ([`Fired::watch`]) with its log and clock;
//! real mode never does, and an unwatched list notes nothing.

use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use crate::event::EventLog;

/// What preempted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Preempted {
    /// A preemption point in the code under test yielded (`sleep` none)
    /// or slept.
    Point {
        /// The point's name.
        point: &'static str,
        /// How long it slept (none: it yielded).
        sleep: Option<Duration>,
    },
    /// The explorer's budget ran out at one of a task's awaits: it yielded
    /// there and the other ready tasks ran first.
    Await {
        /// Where the task was spawned (`file:line`), when known.
        spawned_at: Option<String>,
        /// A task the world spawned for itself (not the target's).
        world: bool,
    },
}

/// A preemption that fired, where it fired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preemption {
    /// Records in the log when it fired: it comes after record
    /// `index - 1` and before record `index`.
    pub index: usize,
    /// Virtual time it fired at.
    pub at: Duration,
    /// What preempted.
    pub what: Preempted,
}

impl Preemption {
    /// The pseudo-host its line shows: the probe's points, the scheduler's
    /// awaits.
    fn host(&self) -> &'static str {
        match self.what {
            Preempted::Point { .. } => "probe",
            Preempted::Await { .. } => crate::explore::HOST,
        }
    }
}

/// `[    0.003000s  probe] ~ preempted at drain.picked: slept 120us`: a
/// record's layout, marked `~` as not in the log.
impl fmt::Display for Preemption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{:>12.6}s {:>6}] ~ ",
            self.at.as_secs_f64(),
            self.host()
        )?;
        match &self.what {
            Preempted::Point { point, sleep: None } => {
                write!(f, "preempted at {point}: yielded")
            }
            Preempted::Point {
                point,
                sleep: Some(sleep),
            } => write!(f, "preempted at {point}: slept {}us", sleep.as_micros()),
            Preempted::Await { spawned_at, world } => write!(
                f,
                "await preempted: {} task{} yielded at an await",
                if *world { "a world" } else { "the target's" },
                spawned_at
                    .as_ref()
                    .map_or(String::new(), |site| format!(" spawned at {site}"))
            ),
        }
    }
}

/// The side list of one run.
#[derive(Default)]
pub struct Fired {
    inner: Mutex<Option<Watched>>,
}

/// A watched list: the log whose length places each entry, the world's
/// clock, and the entries so far.
struct Watched {
    log: EventLog,
    now: Box<dyn Fn() -> Duration + Send + Sync>,
    list: Vec<Preemption>,
}

impl Fired {
    fn inner(&self) -> std::sync::MutexGuard<'_, Option<Watched>> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes preemptions from now on, placed in `log` at the time `now`
    /// reads (the world's virtual clock).
    pub fn watch(&self, log: EventLog, now: impl Fn() -> Duration + Send + Sync + 'static) {
        *self.inner() = Some(Watched {
            log,
            now: Box::new(now),
            list: Vec::new(),
        });
    }

    /// Notes that `what` fired (nothing when unwatched).
    pub fn note(&self, what: Preempted) {
        if let Some(watched) = self.inner().as_mut() {
            let (index, at) = (watched.log.len(), (watched.now)());
            watched.list.push(Preemption { index, at, what });
        }
    }

    /// What fired, in order; the list stops noting.
    pub fn take(&self) -> Vec<Preemption> {
        self.inner().take().map(|w| w.list).unwrap_or_default()
    }
}

/// `records` with `fired` among them, each before the record it preceded,
/// as printed lines (`replay -v`).
#[must_use]
pub fn interleaved(records: &[crate::event::Record], fired: &[Preemption]) -> Vec<String> {
    let mut lines = Vec::with_capacity(records.len() + fired.len());
    let mut next = fired.iter().peekable();
    for (index, record) in records.iter().enumerate() {
        while let Some(preemption) = next.next_if(|p| p.index <= index) {
            lines.push(preemption.to_string());
        }
        lines.push(record.to_string());
    }
    lines.extend(next.map(ToString::to_string));
    lines
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::event::{Event, Record};

    fn record(at_ms: u64) -> Record {
        Record {
            at: Duration::from_millis(at_ms),
            host: Arc::from("lanes"),
            event: Event::WorkloadDone,
        }
    }

    /// Each preemption prints between the records made before and after
    /// it fired, marked as not in the log.
    #[test]
    fn a_preemption_prints_where_it_fired_among_the_records() {
        let records = [record(1), record(2), record(3)];
        let fired = [
            Preemption {
                index: 1,
                at: Duration::from_millis(1),
                what: Preempted::Point {
                    point: "drain.picked",
                    sleep: None,
                },
            },
            Preemption {
                index: 3,
                at: Duration::from_millis(4),
                what: Preempted::Await {
                    spawned_at: Some("src/lanes/router.rs:120".into()),
                    world: false,
                },
            },
        ];
        let lines = interleaved(&records, &fired);
        assert_eq!(lines.len(), 5);
        assert!(lines[0].contains("0.001000s"), "{lines:?}");
        assert!(
            lines[1].ends_with("probe] ~ preempted at drain.picked: yielded"),
            "{lines:?}"
        );
        assert!(lines[2].contains("0.002000s"), "{lines:?}");
        assert!(
            lines[4].ends_with(
                "sched] ~ await preempted: the target's task spawned at src/lanes/router.rs:120 yielded at an await"
            ),
            "{lines:?}"
        );
    }

    /// Every preemption point that preempted and every await the explorer
    /// preempted is in the side list, as many as the marks count, and none
    /// is in the log: the hash is the log's alone. (That the hashes of the
    /// shipped scenarios did not change when the list came is checked
    /// against the hashes before it, `run scenarios --format jsonl`.)
    #[test]
    fn preemptions_fired_are_beside_the_log_not_in_it() {
        use crate::coverage::{CoverMark, TaskMark};
        let load = |file: &str| {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../scenarios")
                .join(file);
            crate::scenario::Scenario::load(&path).unwrap()
        };
        let subject = crate::targets::Subject::default();
        let (mut points, mut awaits) = (0, 0);
        for (file, seeds) in [
            ("lanes_reap_race.toml", 0..4),
            ("sender_explore_contention.toml", 0..3),
        ] {
            let scenario = load(file);
            for seed in seeds {
                let result = crate::run::execute(&scenario, seed, &subject);
                assert_eq!(result.hash, crate::event::log_hash(&result.records));
                let counted = |pick: &dyn Fn(&CoverMark) -> bool| -> u64 {
                    result
                        .coverage
                        .iter()
                        .filter(|(mark, _)| pick(mark))
                        .map(|(_, n)| *n)
                        .sum()
                };
                let noted = |pick: &dyn Fn(&Preempted) -> bool| -> u64 {
                    result.preemptions.iter().filter(|p| pick(&p.what)).count() as u64
                };
                let point = noted(&|w| matches!(w, Preempted::Point { .. }));
                assert_eq!(
                    point,
                    counted(&|m| matches!(m, CoverMark::Preempted(_))),
                    "{file} seed {seed}"
                );
                let awaited = noted(&|w| matches!(w, Preempted::Await { .. }));
                assert_eq!(
                    awaited,
                    counted(&|m| matches!(m, CoverMark::Task(TaskMark::Preempted, _))),
                    "{file} seed {seed}"
                );
                assert!(result
                    .preemptions
                    .iter()
                    .all(|p| p.index <= result.records.len()));
                points += point;
                awaits += awaited;
            }
        }
        assert!(points > 0 && awaits > 0, "{points} points, {awaits} awaits");
    }

    /// An unwatched list (real mode) notes nothing; a watched one places
    /// each note by the log's length then.
    #[test]
    fn a_watched_list_notes_where_the_log_stood() {
        let fired = Fired::default();
        let point = Preempted::Point {
            point: "p",
            sleep: Some(Duration::from_micros(5)),
        };
        fired.note(point.clone());
        assert!(fired.take().is_empty());
        let log = EventLog::default();
        fired.watch(log.clone(), || Duration::from_millis(7));
        log.push(Duration::ZERO, "x", Event::WorkloadDone);
        fired.note(point.clone());
        assert_eq!(
            fired.take(),
            [Preemption {
                index: 1,
                at: Duration::from_millis(7),
                what: point
            }]
        );
    }
}
