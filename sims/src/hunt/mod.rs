//! Bug hunting: generated cases instead of written scenarios, run for as
//! long as the hunt is given, and a failing case shrunk to a small
//! scenario file.
//!
//! Model. A case is a run's parameters and seed (`scenario::Params`), drawn
//! by the proptest strategies of [`strategy`] from an RNG seeded per case
//! by the hunt's own seed, so the same `--seed` generates the same cases in
//! the same order. Cases run on `--jobs` threads on the engine `run` sweeps
//! use (`run::stream`), which folds results strictly in case order, so what
//! a hunt finds does not depend on the number of jobs.
//! The first failure (in that order) stops the hunt unless it keeps going;
//! it is shrunk ([`shrink`]) and written as an exact scenario file with its
//! one-line repro.
//!
//! Guidance. A case whose run reaches a coverage mark, or a pair of marks,
//! no earlier case reached joins a small corpus; later cases are drawn half
//! fresh and half mutated from the corpus (a new seed and a few knobs
//! moved). Case `i` is drawn from the corpus as it stood after case
//! `i - LAG` was folded, which keeps the order deterministic whatever the
//! workers' timing.
//!
//! Regressions. A fresh case that fails has its RNG seed saved in proptest's
//! own regression file format; a hunt replays every saved seed before it
//! generates anything new.

pub mod bench;
pub mod genes;
pub mod shrink;
pub mod strategy;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::targets::Subject;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{
    Config, FailurePersistence, FileFailurePersistence, PersistedSeed, RngAlgorithm, TestRng,
    TestRunner,
};

use self::genes::{genes, with_gene};
use self::shrink::{run_case, shrink as shrink_case, Budget, Expect, Shrunk, HORIZON};
use self::strategy::{case, HuntWorld};
use crate::coverage::CoverMark;
use crate::rng::SimRng;
use crate::run::signature::{self, Failing, Shape, Signature};
use crate::run::stream::{self, Feed};
use crate::run::RunResult;
use crate::scenario::{Contract, Params};

/// Cases drawn ahead of the last one folded; the corpus a case is mutated
/// from is the one that stood `LAG` cases before it.
const LAG: u64 = 16;
/// Most failures a hunt that keeps going keeps (and shrinks); the rest are
/// counted.
pub const MAX_FOUND: usize = 100;
/// Most cases kept in the guidance corpus.
const CORPUS: usize = 256;

/// How a hunt runs.
#[derive(Clone, Debug)]
pub struct HuntConfig {
    /// Which world's cases.
    pub world: HuntWorld,
    /// The hunt's seed: the same seed draws the same cases.
    pub seed: u64,
    /// Stop after this many cases.
    pub cases: Option<u64>,
    /// Stop after this much wall time.
    pub wall: Option<Duration>,
    /// Worker threads.
    pub jobs: usize,
    /// Go on after a failure (and shrink every one).
    pub keep_going: bool,
    /// What every case tests.
    pub subject: Subject,
    /// Draw half the cases from the coverage corpus.
    pub guided: bool,
    /// Shrink failures within this budget (none: do not shrink).
    pub shrink: Option<Budget>,
    /// Where shrunk scenarios are written.
    pub out: PathBuf,
    /// proptest's regression file: seeds replayed first, failures saved.
    pub regressions: Option<PathBuf>,
}

/// Where a case came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A seed from the regression file.
    Replayed,
    /// Drawn fresh from the strategies.
    Fresh,
    /// Mutated from a corpus case.
    Mutated,
    /// A seed of a written scenario (`lanesim shrink`).
    Written,
}

/// A failing case.
#[derive(Clone, Debug)]
pub struct Found {
    /// Its place in the hunt.
    pub index: u64,
    /// Where it came from.
    pub origin: Origin,
    /// Its parameters and seed.
    pub params: Params,
    /// The run's seed.
    pub seed: u64,
    /// How it failed.
    pub expect: Expect,
    /// Every contract it broke.
    pub contracts: Vec<Contract>,
    /// The first violation's message (or the verdict).
    pub message: String,
    /// What makes it the same failure as others: how it failed, the kind
    /// of event that decided it, and once shrunk the shape it shrank to.
    pub signature: Signature,
    /// Its shrink and the file written, if shrunk.
    pub shrunk: Option<(Shrunk, PathBuf)>,
}

/// Why a hunt stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// It ran the cases it was given.
    Cases,
    /// Its wall time was up.
    Time,
    /// It found a failure.
    Failure,
}

/// What a hunt did.
#[derive(Debug)]
pub struct HuntReport {
    /// The world it generated for.
    pub world: HuntWorld,
    /// Cases run (folded).
    pub cases: u64,
    /// Of which mutated from the corpus.
    pub mutated: u64,
    /// Failures found, in case order (the first `MAX_FOUND`).
    pub found: Vec<Found>,
    /// Failing cases in all, kept or not.
    pub failures: u64,
    /// Every failing case, kept or not, by its signature before shrinking
    /// (how it failed and the kind of event that decided it), with how
    /// many: what the report says of the cases it did not keep.
    pub signatures: Vec<(Signature, u64)>,
    /// Cases that reached each mark.
    pub marks: BTreeMap<CoverMark, u64>,
    /// Cases in the guidance corpus at the end.
    pub corpus: usize,
    /// Wall time.
    pub wall: Duration,
    /// Why it stopped.
    pub stop: Stop,
    /// The event-log hashes of every case run, folded in case order: equal
    /// for two hunts that drew the same cases and ran them the same way.
    pub digest: u64,
}

/// The signature of a case that crashed before it ran.
fn crashed() -> Signature {
    Signature {
        scenario: None,
        failing: Failing::Crash,
        decided_by: None,
        shape: None,
    }
}

/// A case drawn, with what the workers need to run it.
struct Job {
    index: u64,
    origin: Origin,
    params: Params,
    seed: u64,
    /// The proptest seed a fresh or replayed case was drawn from.
    persisted: Option<[u8; 32]>,
}

/// What a worker sends back: enough to fold, never the event log.
struct Outcome {
    expect: Option<Expect>,
    signature: Option<Signature>,
    contracts: Vec<Contract>,
    message: String,
    marks: BTreeSet<CoverMark>,
    /// The run's event-log hash (0: it did not run).
    hash: u64,
}

fn outcome(result: Result<RunResult, String>) -> Outcome {
    let result = match result {
        Ok(result) => result,
        // A case the file format refuses: a bug in the strategies.
        Err(error) => {
            return Outcome {
                expect: Some(Expect::Crash),
                signature: Some(crashed()),
                contracts: Vec::new(),
                message: format!("the generated case is not a valid scenario: {error}"),
                marks: BTreeSet::new(),
                hash: 0,
            }
        }
    };
    let mut contracts: Vec<Contract> = result.violations.iter().map(|v| v.contract).collect();
    contracts.dedup();
    Outcome {
        expect: Expect::of(&result),
        signature: Signature::of(&result),
        message: signature::first_message(&result),
        contracts,
        marks: result.coverage.keys().copied().collect(),
        hash: result.hash,
    }
}

/// The coverage-guided corpus: cases that reached a mark or a pair of
/// marks first. Entries are numbered in the order they joined; a snapshot
/// is a range of numbers, and an entry leaves (oldest first, once the
/// corpus holds `CORPUS`) only when no snapshot still names it, so the
/// corpus holds at most `CORPUS + LAG` cases and a snapshot costs nothing.
#[derive(Default)]
struct Corpus {
    cases: VecDeque<(u64, Params, u64)>,
    next: u64,
    seen: BTreeSet<CoverMark>,
    pairs: BTreeSet<(CoverMark, CoverMark)>,
}

impl Corpus {
    /// Takes the case in if it reached something new.
    fn offer(&mut self, params: &Params, seed: u64, marks: &BTreeSet<CoverMark>) {
        let mut new = false;
        for &mark in marks {
            new |= self.seen.insert(mark);
            for &other in marks.range(mark..).skip(1) {
                new |= self.pairs.insert((mark, other));
            }
        }
        if new {
            self.cases.push_back((self.next, params.clone(), seed));
            self.next += 1;
        }
    }

    /// The entries joined so far: a snapshot.
    fn snapshot(&self) -> std::ops::Range<u64> {
        let first = self.cases.front().map_or(self.next, |(id, _, _)| *id);
        let first = first.max(self.next.saturating_sub(CORPUS as u64));
        first..self.next
    }

    /// The entry numbered `id`, if it is still here.
    fn get(&self, id: u64) -> Option<&(u64, Params, u64)> {
        let first = self.cases.front()?.0;
        self.cases
            .get(usize::try_from(id.checked_sub(first)?).ok()?)
    }

    /// Lets go of entries older than both the newest `CORPUS` and every
    /// snapshot from `oldest` on.
    fn evict(&mut self, oldest: u64) {
        let keep_from = oldest.min(self.next.saturating_sub(CORPUS as u64));
        while self.cases.front().is_some_and(|(id, _, _)| *id < keep_from) {
            self.cases.pop_front();
        }
    }

    fn len(&self) -> usize {
        self.snapshot().count()
    }
}

fn seed_bytes(rng: &mut SimRng) -> [u8; 32] {
    let mut bytes = [0u8; 32];
    for chunk in bytes.chunks_mut(8) {
        chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    bytes
}

/// The case proptest's strategies draw from `bytes`.
fn draw(world: HuntWorld, bytes: &[u8; 32]) -> (Params, u64) {
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    case(world)
        .new_tree(&mut runner)
        .expect("the case strategies never reject")
        .current()
}

/// A corpus case with a new seed and one to three knobs moved anywhere
/// between their least and their mutation bound.
fn mutate(parent: &Params, bytes: &[u8; 32]) -> (Params, u64) {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    let mut rng = SimRng::new(u64::from_le_bytes(word));
    let mut params = parent.clone();
    for _ in 0..=rng.range(0, 2) {
        let knobs = genes(&params);
        let index = rng.range(0, knobs.len() as u64 - 1) as usize;
        let knob = knobs[index];
        params = with_gene(&params, index, rng.range(knob.min, knob.max));
    }
    (params, rng.next_u64())
}

fn persisted(bytes: &[u8; 32]) -> Option<PersistedSeed> {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    PersistedSeed::from_str(&format!("cc {hex}")).ok()
}

fn persistence(path: &Path) -> FileFailurePersistence {
    // proptest wants a `'static` path; a hunt makes one or two.
    FileFailurePersistence::Direct(Box::leak(path.display().to_string().into_boxed_str()))
}

/// The ChaCha seeds saved in a regression file.
fn replayed(path: &Path) -> Vec<[u8; 32]> {
    persistence(path)
        .load_persisted_failures2(None)
        .into_iter()
        .filter_map(|seed| {
            let text = seed.to_string();
            let hex = text.strip_prefix("cc ")?;
            let mut bytes = [0u8; 32];
            for (byte, pair) in bytes.iter_mut().zip(hex.as_bytes().chunks(2)) {
                *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
            }
            Some(bytes)
        })
        .collect()
}

/// A hunt as a [`Feed`]: draws cases (replayed, fresh or mutated from the
/// corpus as it stood `LAG` cases ago) and folds their outcomes.
struct HuntFeed<'a> {
    config: &'a HuntConfig,
    progress: &'a dyn Fn(u64, usize, usize),
    started: Instant,
    master: SimRng,
    replay: VecDeque<[u8; 32]>,
    corpus: Corpus,
    snapshots: VecDeque<std::ops::Range<u64>>,
    report: HuntReport,
    stop: Option<Stop>,
}

/// Draws of a case the target cannot run before one is taken anyway (and
/// reported as the crash it then is: the hunt's world is one the target
/// barely has).
const MAX_REDRAWS: u32 = 100;

impl HuntFeed<'_> {
    /// One case: replayed, mutated from the corpus, or fresh.
    fn draw_one(&mut self) -> (Origin, Option<[u8; 32]>, (Params, u64)) {
        let bytes = seed_bytes(&mut self.master);
        let pick = self.master.next_u64();
        if let Some(saved) = self.replay.pop_front() {
            (
                Origin::Replayed,
                Some(saved),
                draw(self.config.world, &saved),
            )
        } else {
            let pool = self.snapshots.front().filter(|pool| !pool.is_empty());
            let parent = pool
                .filter(|_| self.config.guided && pick % 2 == 1)
                .and_then(|pool| {
                    self.corpus
                        .get(pool.start + (pick / 2) % (pool.end - pool.start))
                });
            match parent {
                Some((_, parent, _)) => (Origin::Mutated, None, mutate(parent, &bytes)),
                None => (Origin::Fresh, Some(bytes), draw(self.config.world, &bytes)),
            }
        }
    }

    /// Whether the target can run `params` (it has the component and the
    /// mode).
    fn runnable(&self, params: &Params, seed: u64) -> bool {
        self.config.subject.is_builtin()
            || shrink::scenario_of(params, seed, HORIZON, "a generated case")
                .is_ok_and(|scenario| self.config.subject.decidable(&scenario).refused.is_none())
    }
}

impl Feed for HuntFeed<'_> {
    type Job = Job;
    type Done = Outcome;

    fn draw(&mut self, index: u64) -> Option<Job> {
        if self.config.cases.is_some_and(|cases| index >= cases) {
            return None;
        }
        // The corpus this case may be mutated from: as it stood `LAG`
        // cases ago.
        while self.snapshots.len() as u64 > LAG {
            self.snapshots.pop_front();
        }
        if let Some(oldest) = self.snapshots.front() {
            self.corpus.evict(oldest.start);
        }
        // A case the target cannot run (a policy its lanes lack) is drawn
        // again: a hunt spends its cases on what the target can decide.
        let mut tries = 0;
        let (origin, persisted, (params, seed)) = loop {
            let drawn = self.draw_one();
            tries += 1;
            if tries >= MAX_REDRAWS || self.runnable(&drawn.2 .0, drawn.2 .1) {
                break drawn;
            }
        };
        Some(Job {
            index,
            origin,
            params,
            seed,
            persisted,
        })
    }

    fn fold(&mut self, _: u64, job: Job, folded: Outcome) -> ControlFlow<()> {
        let (config, report) = (self.config, &mut self.report);
        report.cases += 1;
        report.mutated += u64::from(job.origin == Origin::Mutated);
        report.digest = (report.digest ^ folded.hash)
            .wrapping_mul(0x100_0000_01b3)
            .rotate_left(5);
        for mark in &folded.marks {
            *report.marks.entry(*mark).or_default() += 1;
        }
        self.corpus.offer(&job.params, job.seed, &folded.marks);
        self.snapshots.push_back(self.corpus.snapshot());
        if let Some(expect) = folded.expect {
            report.failures += 1;
            let signature = folded.signature.unwrap_or_else(crashed);
            match report
                .signatures
                .binary_search_by(|(known, _)| known.cmp(&signature))
            {
                Ok(at) => report.signatures[at].1 += 1,
                Err(at) => report.signatures.insert(at, (signature.clone(), 1)),
            }
            if let (Some(path), Some(bytes), Origin::Fresh) =
                (&config.regressions, job.persisted, job.origin)
            {
                if let Some(seed) = persisted(&bytes) {
                    persistence(path).save_persisted_failure2(None, seed, &folded.message);
                }
            }
            if report.found.len() < MAX_FOUND {
                report.found.push(Found {
                    index: job.index,
                    origin: job.origin,
                    params: job.params,
                    seed: job.seed,
                    expect,
                    contracts: folded.contracts,
                    message: folded.message,
                    signature,
                    shrunk: None,
                });
            }
            if !config.keep_going {
                self.stop = Some(Stop::Failure);
            }
        }
        if self.stop.is_none()
            && config
                .wall
                .is_some_and(|wall| self.started.elapsed() >= wall)
        {
            self.stop = Some(Stop::Time);
        }
        (self.progress)(report.cases, report.found.len(), report.marks.len());
        if self.stop.is_some() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }

    fn lost(_: &Job, panic: String) -> Outcome {
        Outcome {
            expect: Some(Expect::Crash),
            signature: Some(crashed()),
            contracts: Vec::new(),
            message: format!("the testbed panicked outside the run: {panic}"),
            marks: BTreeSet::new(),
            hash: 0,
        }
    }
}

/// Runs a hunt. `progress` is told (cases run, failures, marks reached)
/// after each case is folded.
pub fn hunt(config: &HuntConfig, progress: &dyn Fn(u64, usize, usize)) -> HuntReport {
    let mut feed = HuntFeed {
        config,
        progress,
        started: Instant::now(), // wall-clock: ok (the hunt's own time budget, outside any run)
        master: SimRng::new(config.seed).fork("hunt"),
        replay: config
            .regressions
            .as_deref()
            .map(replayed)
            .unwrap_or_default()
            .into(),
        corpus: Corpus::default(),
        snapshots: VecDeque::new(),
        report: HuntReport {
            world: config.world,
            cases: 0,
            mutated: 0,
            found: Vec::new(),
            failures: 0,
            signatures: Vec::new(),
            marks: BTreeMap::new(),
            corpus: 0,
            wall: Duration::ZERO,
            stop: Stop::Cases,
            digest: 0,
        },
        stop: None,
    };
    let subject = &config.subject;
    stream::drive(&mut feed, config.jobs, LAG, |job: &Job| {
        outcome(run_case(&job.params, job.seed, HORIZON, subject))
    });
    let HuntFeed {
        mut report,
        corpus,
        stop,
        started,
        ..
    } = feed;
    report.stop = stop.unwrap_or(Stop::Cases);
    report.corpus = corpus.len();
    if let Some(budget) = config.shrink {
        for found in &mut report.found {
            let description = format!(
                "Found by `lanesim hunt --seed {} --world {}` (case {}): {}",
                config.seed,
                config.world.name(),
                found.index,
                found.message
            );
            // A file that cannot be written leaves the failure unshrunk
            // (its parameters are still reported).
            let _ = shrink_found(
                found,
                HORIZON,
                &config.subject,
                budget,
                &config.out,
                &description,
            );
        }
    }
    report.wall = started.elapsed();
    report
}

/// How many names `free_path` tries before it gives up.
const NAMES: u32 = 1000;

/// `<out>/<stem>.toml`, or, when a file of that name is there already (an
/// earlier shrink of the same seed), the first free `<out>/<stem>-N.toml`:
/// a shrink never overwrites another's file.
fn free_path(out: &Path, stem: &str) -> std::io::Result<PathBuf> {
    let first = out.join(format!("{stem}.toml"));
    if !first.exists() {
        return Ok(first);
    }
    (2..=NAMES)
        .map(|n| out.join(format!("{stem}-{n}.toml")))
        .find(|path| !path.exists())
        .ok_or_else(|| {
            std::io::Error::other(format!(
                "{} and {NAMES} numbered names after it are taken: clear the directory or pass --out",
                first.display()
            ))
        })
}

/// Shrinks a failure and writes it as `<out>/<label>-<seed>.toml` (or, if
/// that is taken, the next free numbered name).
fn shrink_found(
    found: &mut Found,
    horizon: Duration,
    subject: &Subject,
    budget: Budget,
    out: &Path,
    description: &str,
) -> std::io::Result<()> {
    let shrunk = shrink_case(
        &found.params,
        found.seed,
        horizon,
        found.expect,
        subject,
        budget,
    );
    let path = free_path(out, &format!("{}-{}", found.expect.label(), found.seed))?;
    let description = format!("{description} (shrunk in {} runs)", shrunk.runs);
    write_case(&shrunk.params, found.seed, horizon, &description, &path)?;
    found.signature = found.signature.clone().shrunk_to(Shape::of(&shrunk.params));
    found.shrunk = Some((shrunk, path));
    Ok(())
}

/// Shrinks a failing run of a written scenario: `params` sampled from it on
/// `seed`, run within its `horizon`; the shrunk case goes to `out`.
///
/// # Errors
/// When the run does not fail (nothing to shrink) or the file cannot be
/// written.
pub fn shrink_run(
    params: &Params,
    seed: u64,
    horizon: Duration,
    subject: &Subject,
    budget: Budget,
    out: &Path,
) -> Result<Found, String> {
    let result = run_case(params, seed, horizon, subject)
        .map_err(|error| format!("its parameters do not make a valid scenario file: {error}"))?;
    let folded = outcome(Ok(result));
    let expect = folded.expect.ok_or("the run passes: nothing to shrink")?;
    let mut found = Found {
        index: 0,
        origin: Origin::Written,
        params: params.clone(),
        seed,
        expect,
        contracts: folded.contracts,
        message: folded.message,
        signature: folded.signature.unwrap_or_else(crashed),
        shrunk: None,
    };
    let description = format!(
        "Shrunk by `lanesim shrink` from seed {seed}: {}",
        found.message
    );
    shrink_found(&mut found, horizon, subject, budget, out, &description)
        .map_err(|error| format!("{}: {error}", out.display()))?;
    Ok(found)
}

/// Writes a case as its exact scenario file.
///
/// # Errors
/// When the file cannot be written.
pub fn write_case(
    params: &Params,
    seed: u64,
    horizon: Duration,
    description: &str,
    path: &Path,
) -> std::io::Result<()> {
    let horizon = shrink::fitted_horizon(params, horizon);
    let file = params.to_file(description.to_string(), seed, horizon);
    let text = toml::to_string(&file).map_err(std::io::Error::other)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The corpus keeps every case a live snapshot names, drops the rest
    /// oldest first, and never holds more than `CORPUS + LAG`.
    #[test]
    fn a_snapshot_keeps_its_cases_until_it_is_let_go() {
        let (params, _) = draw(HuntWorld::Lanes, &[7; 32]);
        let marks = CoverMark::all();
        let pairs = marks
            .iter()
            .enumerate()
            .flat_map(|(i, a)| marks[i + 1..].iter().map(move |b| BTreeSet::from([*a, *b])));
        let mut corpus = Corpus::default();
        let mut snapshots: VecDeque<std::ops::Range<u64>> = VecDeque::new();
        for (seed, pair) in pairs.take(CORPUS * 3).enumerate() {
            corpus.offer(&params, seed as u64, &pair);
            snapshots.push_back(corpus.snapshot());
            while snapshots.len() as u64 > LAG {
                snapshots.pop_front();
            }
            corpus.evict(snapshots.front().unwrap().start);
            assert!(corpus.cases.len() <= CORPUS + LAG as usize);
            for snapshot in &snapshots {
                for id in snapshot.clone() {
                    let (got, _, seed) = corpus.get(id).expect("a live snapshot's case");
                    assert_eq!((*got, *seed), (id, id));
                }
            }
        }
        assert_eq!(corpus.len(), CORPUS);
    }
}
