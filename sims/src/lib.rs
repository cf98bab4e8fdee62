//! lanesim's testbed: simulated worlds that run the production code of the
//! `lanesim` crate unchanged, fault injection, checkers over event logs,
//! coverage, and the `lanesim` runner.
//!
//! # Start here
//!
//! [`run::execute`] is one run: sample the scenario's parameters from the
//! seed ([`scenario`]), run its world ([`world`]) to get an event log
//! ([`event`]) and the marks it reached ([`coverage`]), and decide the log
//! against the scenario's contracts ([`check`]). Everything else is built on
//! it: sweeps and the mark table ([`run`]), generated cases and their
//! shrinking ([`hunt`]), the CLI ([`cli`]).
//!
//! # Module map
//!
//! | module | what it holds |
//! |---|---|
//! | [`scenario`] | scenario files: TOML model (`spec`), validation (`validate/`, by world) with file:line:col (`position`: typed key paths), bounds (`limits`), `reaches`, seeded sampling (`params`) |
//! | [`world`] | the lanes world (paused tokio), the sender world (turmoil, peers, TCP tap) and the mesh world (turmoil, N production nodes, restarts, squatters, cross-dials) |
//! | [`fault`] | the sender world's fault timeline and the peers' controls |
//! | [`event`] | the typed event log every world writes and every checker reads (down reasons are `lanesim_target::node::DownReason` itself) |
//! | [`coverage`] | coverage marks (code, world, preemption) and the probe that counts them and answers preemption points |
//! | [`sites`] | code sites (the names the code under test marks) and the registry of which world reaches each |
//! | [`world_kind`] | the worlds' names ([`world_kind::WorldKind`], also `scenario::WorldKind`) |
//! | [`fired`] | preemptions that fired (points and the explorer's awaits), beside the log and out of its hash: where `replay -v` shows them |
//! | [`explore`] | scheduling exploration: the seeded explorer lanesim's tokio asks for task order, await-point preemptions and holds, and `select!`'s seed |
//! | [`check`] | L1–L6, DC-1/DC-2/DC-5/S2–S4/S6–S9/E2E and M1–M9 over a log, one evidence collector; `check::sender` and `check::mesh` each a model (`model.rs`) and its contract groups |
//! | [`run`] | one run; the ordered parallel engine (`run::stream`); streamed sweeps in bounded memory, shards and their merge (`run::sweep`); audit, selftest (planted bugs), bench; reports (human, JSON, JSON lines, JUnit) |
//! | [`hunt`] | bug hunting: proptest strategies for whole cases, a coverage-guided corpus, shrinking to exact scenario files, the detection benchmark |
//! | [`model`] | the model world: a lanes target's own code under shuttle (PCT, random), small racing workloads, each execution decided by the lanes checkers, a find replayed from `(strategy, seed, executions)` |
//! | [`chase`] | a failure only real mode saw, chased into the simulation: its parameters with scheduling exploration on, a bounded number of seeds, a find shrunk to a file |
//! | [`real`] | real mode: a seed on a real runtime and loopback TCP, judged by the same checkers; its clock and lateness; `fidelity` |
//! | [`report`] | everything shown: the typed outcome of each subcommand, the one printer, sweeps as human text, JSON, JSON lines and JUnit, the one exit code type |
//! | [`input`] | every user-named file read bounded: regular files only, size checked before reading |
//! | [`workdir`] | the directory the user invoked from (`cargo test` moves a test into its package): user-given relative paths resolve against it, paths are shown relative to it |
//! | [`cli`] | the `lanesim` binary: arguments (`cli::args`), one function per subcommand returning a typed outcome (`run`, `replay`, `hunt`, `testbed`), bounded inputs |
//! | [`rng`] | the run's only randomness: seeded xoshiro256** |
//! | [`guide`] | docs/your-implementation.md: testing your own implementation (its example is a doc test) |
//! | [`runner`] | a user's runner: `main!(MyTargets)` (the whole CLI on their targets) and `Runner::check` for plain tests |
//! | [`targets`] | the implementations the worlds run, through `lanesim_target`'s traits; lanesim's own components are one of them |
//!
//! Dependencies point one way: `cli` → `report` → `hunt`, `real` → `run` →
//! `world`, `check` → `event`, `scenario` → `coverage` → `sites` →
//! `world_kind`, `rng`. What several layers name lives below all of them:
//! the worlds' names in `world_kind`, the code sites in `sites`, real
//! mode's clock in `world::real_clock`.

pub mod chase;
pub mod check;
pub mod cli;
pub mod coverage;
pub mod event;
pub mod explore;
pub mod fault;
pub mod fired;
pub mod guide;
pub mod hunt;
pub mod input;
pub mod model;
pub mod real;
pub mod report;
pub mod rng;
pub mod run;
pub mod runner;
pub mod scenario;
pub mod sites;
pub mod targets;
pub mod workdir;
pub mod world;
pub mod world_kind;

pub use runner::{Failed, Runner};
