//! Scenario files: loading, validation with file:line:col and the key at
//! fault, and sampling a run's parameters from its seed.
//!
//! Bad input never panics: every failure is a [`ScenarioError`] naming the
//! file, the line and column, and the key, and the runner exits 2 on it.

pub mod marks;
mod params;
pub mod sample;
mod seeds;
pub mod shipped;
mod spec;

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize as _;
use toml::de::{DeTable, DeValue};

pub use params::{
    mesh_frame_deadline, mesh_trickle_bound, LanesParams, MeshFault, MeshParams, Params,
    ScheduledFault, SenderParams, ACCEPT_RECOVERY, HALF_OPEN_MIN_TICKS,
};
pub use seeds::{SeedRange, MAX_SEEDS};

pub use spec::{
    Contract, FaultKind, FaultSpec, LanesSpec, MeshFaultKind, MeshFaultSpec, MeshSpec, Policy,
    ScenarioFile, SenderSpec, WorldKind, TORN_FRAME_LEN,
};

use sample::{Dur, Sampled};

use crate::coverage::CoverMark;

/// A loaded, validated scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Where it came from.
    pub path: PathBuf,
    /// Its name (the file's `name`, else the file stem).
    pub name: String,
    /// The parsed file.
    pub file: ScenarioFile,
    /// The marks it exists to reach (its `reaches`, parsed).
    pub reaches: Vec<Reach>,
}

/// A mark a scenario must reach in a sweep.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Reach {
    /// The mark.
    pub mark: CoverMark,
    /// The share of seeds that must reach it; `None`: at least one seed.
    pub share: Option<f64>,
}

impl Reach {
    /// Parses `"mark"` or `"mark >= 25%"`.
    ///
    /// # Errors
    /// A message saying what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (name, share) = match text.split_once(">=") {
            Some((name, share)) => (name.trim(), Some(share.trim())),
            None => (text.trim(), None),
        };
        let mark = CoverMark::from_name(name).ok_or_else(|| {
            format!("unknown coverage mark `{name}` (`lanesim list` prints them all)")
        })?;
        let share = share
            .map(|share| {
                let percent: f64 = share
                    .strip_suffix('%')
                    .and_then(|p| p.trim().parse().ok())
                    .ok_or_else(|| format!("`{text}`: expected a share such as `>= 25%`"))?;
                if percent > 0.0 && percent <= 100.0 {
                    Ok(percent / 100.0)
                } else {
                    Err(format!("`{text}`: the share must be in (0%, 100%]"))
                }
            })
            .transpose()?;
        Ok(Self { mark, share })
    }

    /// How many of `seeds` seeds must reach the mark.
    #[must_use]
    pub fn required(&self, seeds: u64) -> u64 {
        match self.share {
            None => 1,
            Some(share) => ((share * seeds as f64).ceil() as u64).max(1),
        }
    }
}

impl fmt::Display for Reach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.share {
            None => write!(f, "{}", self.mark),
            Some(share) => write!(f, "{} >= {}%", self.mark, share * 100.0),
        }
    }
}

/// Most peers a sender world can address.
pub const MAX_PEERS: u64 = 64;

/// A scenario file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: usize,
    /// 1-based column, when known.
    pub col: usize,
    /// The key at fault (dotted path), when known.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A file that could not be read has no position.
        if self.line == 0 {
            write!(f, "{}: ", self.file.display())?;
        } else {
            write!(f, "{}:{}:{}: ", self.file.display(), self.line, self.col)?;
        }
        if let Some(key) = &self.key {
            write!(f, "{key}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl Scenario {
    /// The most bytes of frames one run of it may allocate (sender
    /// scenarios; 0 for the others, whose runs allocate little).
    #[must_use]
    pub fn frame_bytes_bound(&self) -> u64 {
        self.file.sender.as_ref().map_or(0, |sender| {
            sender
                .data_frames
                .bounds()
                .1
                .saturating_mul(sender.frame_bytes.bounds().1)
        })
    }

    /// Reads, parses and validates `path`.
    ///
    /// # Errors
    /// Unreadable file, malformed TOML, unknown keys, wrong types or
    /// impossible values.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        let refuse = |message: String| ScenarioError {
            file: path.to_path_buf(),
            line: 0,
            col: 0,
            key: None,
            message,
        };
        if let Some(text) = shipped::text(path) {
            return Self::parse(path, text);
        }
        if path
            .to_str()
            .is_some_and(|p| p.starts_with(shipped::PREFIX))
        {
            return Err(refuse(format!(
                "no such shipped scenario (`{} list @shipped` lists them)",
                "lanesim"
            )));
        }
        // A scenario is a page of TOML: a file far larger is a mistake (a
        // log or a binary named .toml) and must not be read into memory; a
        // FIFO or a device must not be opened at all.
        let bytes = crate::input::read_bounded(path, limits::FILE_BYTES, "a scenario file")
            .map_err(refuse)?;
        // Point at the first byte that is not UTF-8, not at 0:0.
        let source = String::from_utf8(bytes).map_err(|error| {
            let valid = error.utf8_error().valid_up_to();
            let bytes = error.as_bytes();
            let text = String::from_utf8_lossy(&bytes[..valid]);
            let (line, col) = line_col(&text, valid);
            ScenarioError {
                file: path.to_path_buf(),
                line,
                col,
                key: None,
                message: format!(
                    "not UTF-8: byte {:#04x} at offset {valid}",
                    bytes.get(valid).copied().unwrap_or_default()
                ),
            }
        })?;
        Self::parse(path, &source)
    }

    /// Parses and validates `source` as if read from `path`.
    ///
    /// # Errors
    /// As [`Scenario::load`].
    pub fn parse(path: &Path, source: &str) -> Result<Self, ScenarioError> {
        // Positions come from the spans the TOML parser records for every
        // key and value (`serde_spanned`), never from rescanning the text.
        let at = |span: &Range<usize>, key: Option<String>, message: &str| {
            let (line, col) = line_col(source, span.start);
            ScenarioError {
                file: path.to_path_buf(),
                line,
                col,
                key,
                message: message.trim().to_string(),
            }
        };
        let doc = DeTable::parse(source).map_err(|error| {
            let span = error.span().unwrap_or(0..0);
            // A duplicate key's span is the key written the second time;
            // its table is the last one the parser started before it.
            let key = (error.message().trim() == "duplicate key")
                .then(|| source.get(span.clone()))
                .flatten()
                .map(|key| {
                    let (partial, _) = DeTable::parse_recoverable(source);
                    let mut path = Vec::new();
                    // A table header written twice names itself.
                    let header = source[..span.start].trim_end().ends_with('[');
                    if !header {
                        last_table_before(partial.get_ref(), span.start, &mut path, &mut 0);
                    }
                    path.push(Step::Key(key.trim().to_string()));
                    dotted(&path)
                });
            at(&span, key, error.message())
        })?;
        let file = ScenarioFile::deserialize(toml::de::Deserializer::from(doc.clone())).map_err(
            |error| {
                let span = error.span().unwrap_or(0..0);
                let key = key_of_error(doc.get_ref(), &span, error.message());
                at(&span, key, error.message())
            },
        )?;
        let name = file.name.clone().unwrap_or_else(|| {
            path.file_stem().map_or_else(
                || "scenario".into(),
                |stem| stem.to_string_lossy().into_owned(),
            )
        });
        // Printed at the start of report lines: a newline or an escape
        // sequence in it would forge a line (`… 32/32 pass`).
        if let Some(why) = name_problem(&name) {
            let span = span_of(doc.get_ref(), "name");
            let key = file.name.is_some().then(|| "name".to_string());
            let whose = if key.is_some() {
                ""
            } else {
                " (the file's stem)"
            };
            return Err(at(&span, key, &format!("the scenario's name{whose} {why}")));
        }
        let reaches = file
            .reaches
            .iter()
            .filter_map(|text| Reach::parse(text).ok())
            .collect();
        let scenario = Self {
            path: path.to_path_buf(),
            name,
            file,
            reaches,
        };
        if let Some(problem) = validate(&scenario.file).into_iter().next() {
            let span = span_of(doc.get_ref(), &problem.key);
            return Err(at(&span, Some(problem.key), &problem.message));
        }
        Ok(scenario)
    }

    /// The seeds `run` uses when none are given (the file's, else 0..32).
    #[must_use]
    pub fn default_seeds(&self) -> SeedRange {
        self.file
            .seeds
            .unwrap_or(SeedRange::new(0, 31).expect("32 seeds"))
    }

    /// Real mode's time scale (`real_time_scale`, default 1).
    #[must_use]
    pub fn real_time_scale(&self) -> f64 {
        self.file.real_time_scale.unwrap_or(1.0)
    }

    /// The virtual-time budget.
    #[must_use]
    pub fn budget(&self) -> std::time::Duration {
        self.file
            .budget
            .map_or(std::time::Duration::from_secs(120), |budget| budget.0)
    }

    /// This run's parameters, drawn from `seed`.
    #[must_use]
    pub fn sample(&self, seed: u64) -> Params {
        params::sample(&self.file, seed)
    }
}

struct Problem {
    key: String,
    message: String,
}

/// Why `name` cannot name a scenario in a report, if it cannot: empty,
/// over [`limits::NAME_CHARS`] characters, or holding a control character
/// or a line or paragraph separator.
fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("is empty".into());
    }
    if name.chars().count() > limits::NAME_CHARS {
        return Some(format!("is longer than {} characters", limits::NAME_CHARS));
    }
    name.chars()
        .find(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
        .map(|c| {
            format!(
                "holds {c:?} (U+{:04X}): a name is printed in report lines",
                c as u32
            )
        })
}

fn problem(key: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem {
        key: key.into(),
        message: message.into(),
    }
}

fn validate(file: &ScenarioFile) -> Vec<Problem> {
    let mut problems = Vec::new();
    let world = file.world.name();
    let tables = [
        (WorldKind::Lanes, file.lanes.is_some()),
        (WorldKind::Sender, file.sender.is_some()),
        (WorldKind::Mesh, file.mesh.is_some()),
    ];
    for (kind, present) in tables {
        if kind == file.world && !present {
            problems.push(problem(
                "world",
                format!("world = \"{world}\" needs a [{world}] table"),
            ));
        } else if kind != file.world && present {
            problems.push(problem(
                kind.name(),
                format!("a {world} world has no [{}] table", kind.name()),
            ));
        }
    }
    if file.checks.is_empty() {
        problems.push(problem("checks", "name at least one contract to check"));
    }
    for (index, contract) in file.checks.iter().enumerate() {
        let key = format!("checks[{index}]");
        if file.checks[..index].contains(contract) {
            problems.push(problem(&key, format!("{} is listed twice", contract.id())));
        }
        if contract.world() != file.world {
            problems.push(problem(
                &key,
                format!("{} is not a contract of the {world} world", contract.id()),
            ));
        }
        if let Some(why) = contract.undecidable_in_simulation() {
            problems.push(problem(key, why));
        }
    }
    let redials = file
        .sender
        .as_ref()
        .is_some_and(|s| s.redial_after.is_some());
    if let Some(index) = file
        .checks
        .iter()
        .position(|c| *c == Contract::S8)
        .filter(|_| !redials)
    {
        problems.push(problem(
            format!("checks[{index}]"),
            "S8 (redial liveness) needs sender.redial_after: a world that never redials cannot fail it",
        ));
    }
    if file.reaches.len() > limits::REACHES {
        problems.push(problem(
            "reaches",
            format!("at most {} marks", limits::REACHES),
        ));
    }
    for (index, text) in file.reaches.iter().enumerate() {
        let key = format!("reaches[{index}]");
        match Reach::parse(text) {
            Err(message) => problems.push(problem(key, message)),
            Ok(reach) if !marks::reachable_in(reach.mark, file.world) => problems.push(problem(
                key,
                format!("`{}` is not a mark the {world} world can reach", reach.mark),
            )),
            Ok(_) => {}
        }
    }
    if file.exact && file.sender.as_ref().is_some_and(|s| s.chaos.is_some()) {
        problems.push(problem(
            "sender.chaos",
            "an exact file lists every fault: no chaos",
        ));
    }
    if let Some(scale) = file.real_time_scale {
        if !(limits::MIN_REAL_TIME_SCALE..=1.0).contains(&scale) {
            problems.push(problem(
                "real_time_scale",
                format!(
                    "must be in [{}, 1] (got {scale})",
                    limits::MIN_REAL_TIME_SCALE
                ),
            ));
        }
    }
    if file.budget.is_some_and(|budget| budget.0.is_zero()) {
        problems.push(problem("budget", "must be greater than zero"));
    }
    if file.budget.is_some_and(|budget| budget.0 > limits::BUDGET) {
        problems.push(problem(
            "budget",
            format!("at most {}", Dur(limits::BUDGET)),
        ));
    }
    if let Some(lanes) = &file.lanes {
        validate_lanes(lanes, &mut problems);
    }
    if let Some(sender) = &file.sender {
        validate_sender(sender, &mut problems);
    }
    if let Some(mesh) = &file.mesh {
        validate_mesh(mesh, file.exact, &mut problems);
    }
    // A fault scheduled after the budget would silently never happen.
    let budget = file
        .budget
        .map_or(std::time::Duration::from_secs(120), |b| b.0);
    if let Some(mesh) = &file.mesh {
        mesh_timing(mesh, budget, &mut problems);
    }
    if let Some(sender) = &file.sender {
        sender_timing(sender, &mut problems);
    }
    let ats = file
        .sender
        .iter()
        .flat_map(|s| s.fault.iter().map(|f| ("sender", f.at)))
        .chain(
            file.mesh
                .iter()
                .flat_map(|m| m.fault.iter().map(|f| ("mesh", f.at))),
        );
    // Nor may anything else be timed at or past it: a shutdown, a router
    // drop or a mesh workload the run never gets to; a fault lasting longer
    // than the whole run (a latency of 5000 s once ran out of budget).
    let mut timed: Vec<(String, std::time::Duration)> = Vec::new();
    if let Some(at) = file.sender.as_ref().and_then(|s| s.shutdown_at.as_ref()) {
        timed.push(("sender.shutdown_at".into(), at.bounds().1 .0));
    }
    if let Some(at) = file.lanes.as_ref().and_then(|l| l.drop_router_at.as_ref()) {
        timed.push(("lanes.drop_router_at".into(), at.bounds().1 .0));
    }
    if let Some(mesh) = &file.mesh {
        timed.push(("mesh.workload".into(), mesh.workload.0));
    }
    for (index, fault) in file.sender.iter().flat_map(|s| s.fault.iter().enumerate()) {
        if let Some(lasting) = &fault.lasting {
            timed.push((format!("sender.fault[{index}].for"), lasting.bounds().1 .0));
        }
    }
    for (key, time) in timed {
        if time >= budget {
            problems.push(problem(
                key,
                format!(
                    "{} is not within the run's budget ({})",
                    Dur(time),
                    Dur(budget)
                ),
            ));
        }
    }
    for (index, (world, at)) in ats.enumerate() {
        if at.bounds().1 .0 >= budget {
            let index = if world == "mesh" {
                index - file.sender.as_ref().map_or(0, |s| s.fault.len())
            } else {
                index
            };
            problems.push(problem(
                format!("{world}.fault[{index}].at"),
                format!(
                    "{} is not before the run's budget ({}): the fault would never happen",
                    at.bounds().1,
                    Dur(budget)
                ),
            ));
        }
    }
    problems
}

/// Most nodes a mesh world runs.
pub const MAX_MESH_NODES: u64 = 64;
/// Most links a mesh node makes.
pub const MAX_MESH_LINKS: u64 = 10_000;
/// Longest mesh workload window, and longest fault.
pub const MAX_MESH_SPAN: std::time::Duration = std::time::Duration::from_secs(600);

/// Mesh timings that can only fail for the testbed's own reasons: a
/// simulation tick too coarse for the heartbeat (keepalives a quarter tick
/// apart, quantised to a tick of 200 ms at a 250 ms heartbeat, failed M1
/// with 2 nodes and no fault), and a run whose workload, holds, faults and
/// settle time cannot end within its budget (every seed liveness).
fn mesh_timing(mesh: &MeshSpec, budget: std::time::Duration, problems: &mut Vec<Problem>) {
    use std::time::Duration;
    let heartbeat = mesh.heartbeat.map_or(Duration::from_secs(1), |d| d.0);
    let tick = mesh.tick.map_or(Duration::from_millis(1), |d| d.0);
    if tick > heartbeat / MESH_TICKS_PER_HEARTBEAT {
        problems.push(problem(
            "mesh.tick",
            format!(
                "at most heartbeat / {MESH_TICKS_PER_HEARTBEAT} ({}): keepalives go out a quarter heartbeat apart, and a coarser tick delays them past the heartbeat",
                Dur(heartbeat / MESH_TICKS_PER_HEARTBEAT)
            ),
        ));
    }
    let connect = mesh
        .connect_timeout
        .map_or(Duration::from_millis(500), |d| d.0);
    let redial = mesh
        .redial_after
        .as_ref()
        .map_or(Duration::from_millis(300), |r| r.bounds().1 .0);
    let settle = params::settle_time(heartbeat, redial, connect);
    let faults = mesh
        .fault
        .iter()
        .map(|f| {
            let lasting = f
                .lasting
                .as_ref()
                .map_or(Duration::ZERO, |l| l.bounds().1 .0);
            let recovery = if f.kind.on_accepts() {
                params::accept_fault_tail(heartbeat)
            } else {
                Duration::ZERO
            };
            f.at.bounds().1 .0 + lasting + recovery
        })
        .max()
        .unwrap_or_default();
    let end = (mesh.workload.0 + mesh.hold.bounds().1 .0).max(faults) + settle;
    if end >= budget {
        problems.push(problem(
            "budget",
            format!(
                "a run may need {} of virtual time (the workload and its longest hold, or the last fault, then {} to settle) and the budget is {}: every such seed would run out of time",
                Dur(end),
                Dur(settle),
                Dur(budget)
            ),
        ));
    }
}

/// Mesh: the simulation ticks per heartbeat tick, at least.
const MESH_TICKS_PER_HEARTBEAT: u32 = 8;

/// Sender timings that can only fail for the testbed's own reasons: a
/// simulation tick longer than the shortest write deadline it must time.
fn sender_timing(sender: &SenderSpec, problems: &mut Vec<Problem>) {
    if let Some(heartbeat) = sender.heartbeat {
        let tick = sender
            .tick
            .map_or(std::time::Duration::from_millis(1), |t| t.0);
        if heartbeat.0 < limits::MIN_HEARTBEAT || heartbeat.0 > std::time::Duration::from_secs(60) {
            problems.push(problem(
                "sender.heartbeat",
                format!(
                    "from {} to 60s: a keepalive every quarter tick must cross a simulated link whose latency reaches 100ms",
                    Dur(limits::MIN_HEARTBEAT)
                ),
            ));
        } else if tick > heartbeat.0 / MESH_TICKS_PER_HEARTBEAT {
            problems.push(problem(
                "sender.tick",
                format!(
                    "at most heartbeat / {MESH_TICKS_PER_HEARTBEAT} ({}): keepalives go out a quarter heartbeat apart, and a coarser tick delays them past the heartbeat",
                    Dur(heartbeat.0 / MESH_TICKS_PER_HEARTBEAT)
                ),
            ));
        }
    }
    let (Some(tick), Some(deadline)) = (sender.tick, sender.write_timeout.as_ref()) else {
        return;
    };
    let deadline = deadline.bounds().0 .0;
    if tick.0 > deadline {
        problems.push(problem(
            "sender.tick",
            format!(
                "at most the shortest write_timeout ({}): every host is polled once per tick, so a deadline shorter than a tick cannot be timed",
                Dur(deadline)
            ),
        ));
    }
}

fn validate_mesh(mesh: &MeshSpec, exact: bool, problems: &mut Vec<Problem>) {
    count("mesh.nodes", &mesh.nodes, 2, problems);
    if mesh.nodes.bounds().1 > MAX_MESH_NODES {
        problems.push(problem(
            "mesh.nodes",
            format!("at most {MAX_MESH_NODES} nodes"),
        ));
    }
    count("mesh.links", &mesh.links, 0, problems);
    if let Some(data) = &mesh.data {
        count("mesh.data", data, 0, problems);
        if data.bounds().1 > MAX_MESH_LINKS {
            problems.push(problem(
                "mesh.data",
                format!("at most {MAX_MESH_LINKS} data frames per node"),
            ));
        }
    }
    if mesh.links.bounds().1 > MAX_MESH_LINKS {
        problems.push(problem(
            "mesh.links",
            format!("at most {MAX_MESH_LINKS} links per node"),
        ));
    }
    if mesh.workload.0 > MAX_MESH_SPAN {
        problems.push(problem(
            "mesh.workload",
            format!("at most {}", Dur(MAX_MESH_SPAN)),
        ));
    }
    span("mesh.hold", &mesh.hold, false, problems);
    if mesh.hold.bounds().1 .0 > MAX_MESH_SPAN {
        problems.push(problem(
            "mesh.hold",
            format!("at most {}", Dur(MAX_MESH_SPAN)),
        ));
    }
    if let Some(cross) = &mesh.cross_dial {
        chance("mesh.cross_dial", cross, problems);
    }
    if let Some(rows) = &mesh.first_dials {
        let (lo, hi) = mesh.nodes.bounds();
        let square =
            lo == hi && rows.len() as u64 == lo && rows.iter().all(|r| r.len() as u64 == lo);
        if !square {
            problems.push(problem(
                "mesh.first_dials",
                "needs one fixed `nodes` and that many rows of that many times",
            ));
        }
        if rows.iter().flatten().any(|at| at.0 > MAX_MESH_SPAN) {
            problems.push(problem(
                "mesh.first_dials",
                format!("at most {}", Dur(MAX_MESH_SPAN)),
            ));
        }
    }
    let heartbeat = mesh
        .heartbeat
        .map_or(std::time::Duration::from_secs(1), |d| d.0);
    for (key, value) in [
        ("mesh.heartbeat", mesh.heartbeat),
        ("mesh.connect_timeout", mesh.connect_timeout),
        ("mesh.tick", mesh.tick),
    ] {
        if let Some(value) = value {
            if value.0.is_zero() {
                problems.push(problem(key, "must be greater than zero"));
            } else if value.0 > std::time::Duration::from_secs(60) {
                problems.push(problem(key, "at most 60s"));
            }
        }
    }
    // A keepalive goes out every quarter tick and may take turmoil's
    // largest latency (100 ms) to cross, so a tick under ~133 ms declares
    // healthy links dead by design and no pair ever settles: at 40 ms every
    // seed of a fault-free mesh failed M1 (`docs/scenario-format.md`). The
    // floor is the hunt's (`M_TICK_MS`), which never saw such flapping.
    if mesh.heartbeat.is_some_and(|h| h.0 < limits::MIN_HEARTBEAT) {
        problems.push(problem(
            "mesh.heartbeat",
            format!(
                "at least {}: a keepalive every quarter tick must cross a simulated link whose latency reaches 100ms, or healthy links are declared dead",
                Dur(limits::MIN_HEARTBEAT)
            ),
        ));
    }
    if let Some(redial) = &mesh.redial_after {
        span("mesh.redial_after", redial, true, problems);
        if redial.bounds().1 .0 > std::time::Duration::from_secs(60) {
            problems.push(problem("mesh.redial_after", "at most 60s"));
        }
    }
    // A run costs its virtual time over the tick, times its hosts: a
    // microsecond tick over minutes of workload would never end.
    if mesh
        .tick
        .is_some_and(|t| t.0 < std::time::Duration::from_millis(1) && !t.0.is_zero())
    {
        problems.push(problem(
            "mesh.tick",
            "at least 1ms: every host is polled once per tick",
        ));
    }
    if mesh.dial_spread.is_some_and(|d| d.0 > MAX_MESH_SPAN) {
        problems.push(problem(
            "mesh.dial_spread",
            format!("at most {}", Dur(MAX_MESH_SPAN)),
        ));
    }
    if let Some(chaos) = &mesh.chaos {
        count("mesh.chaos", chaos, 0, problems);
        if chaos.bounds().1 > 64 {
            problems.push(problem("mesh.chaos", "at most 64 chaos faults"));
        }
        if exact {
            problems.push(problem(
                "mesh.chaos",
                "an exact file lists every fault: no chaos",
            ));
        }
    }
    if mesh.chaos_kinds.as_ref().is_some_and(Vec::is_empty) {
        problems.push(problem(
            "mesh.chaos_kinds",
            "name at least one kind (or leave it out for all)",
        ));
    }
    if mesh.fault.len() > 64 {
        problems.push(problem("mesh.fault", "at most 64 scripted faults"));
    }
    let min_nodes = mesh.nodes.bounds().0;
    for (index, fault) in mesh.fault.iter().enumerate() {
        let key = |field: &str| format!("mesh.fault[{index}].{field}");
        for (field, node) in [("a", Some(&fault.a)), ("b", fault.b.as_ref())] {
            let Some(node) = node else { continue };
            count(&key(field), node, 0, problems);
            if node.bounds().1 >= min_nodes {
                problems.push(problem(
                    key(field),
                    format!(
                        "node index {} does not exist: there may be only {min_nodes} nodes",
                        node.bounds().1
                    ),
                ));
            }
        }
        if !fault.kind.one_node()
            && fault
                .b
                .as_ref()
                .is_some_and(|b| b.bounds() == fault.a.bounds() && b.bounds().0 == b.bounds().1)
        {
            problems.push(problem(key("b"), "a fault between a node and itself"));
        }
        span(&key("at"), &fault.at, false, problems);
        if fault.at.bounds().1 .0 > MAX_MESH_SPAN {
            problems.push(problem(
                key("at"),
                format!("at most {}", Dur(MAX_MESH_SPAN)),
            ));
        }
        match (&fault.lasting, fault.kind.lasts()) {
            (Some(lasting), true) => {
                span(&key("for"), lasting, true, problems);
                if lasting.bounds().1 .0 > MAX_MESH_SPAN {
                    problems.push(problem(
                        key("for"),
                        format!("at most {}", Dur(MAX_MESH_SPAN)),
                    ));
                }
                if fault.kind == MeshFaultKind::HalfOpen
                    && lasting.bounds().0 .0.as_secs_f64()
                        <= heartbeat.as_secs_f64() * HALF_OPEN_MIN_TICKS
                {
                    problems.push(problem(
                        key("for"),
                        format!(
                            "a half-open drop must last more than {HALF_OPEN_MIN_TICKS} heartbeat ticks ({}): a shorter one loses bytes from a stream that goes on, which no real TCP does",
                            Dur(heartbeat.mul_f64(HALF_OPEN_MIN_TICKS))
                        ),
                    ));
                }
                let trickle_bound = mesh_trickle_bound(heartbeat, params::mesh_tick(mesh));
                if fault.kind == MeshFaultKind::Trickle && lasting.bounds().0 .0 <= trickle_bound {
                    problems.push(problem(
                        key("for"),
                        format!(
                            "a trickle must last more than {}, the frame deadline (twice the heartbeat) and its slack: a shorter one ends before a node that never cuts it off could be caught",
                            Dur(trickle_bound)
                        ),
                    ));
                }
            }
            (None, true) => problems.push(problem(key("kind"), "this fault needs `for`")),
            (Some(_), false) => problems.push(problem(
                key("for"),
                "this fault happens once; `for` would be ignored",
            )),
            (None, false) => {}
        }
    }
}

/// Upper bounds on what a file may ask for, chosen so one run fits in a
/// small machine's memory and finishes in seconds to minutes: each is the
/// most a run is sized by (items, frames, queue slots, segments, bytes),
/// and every event costs a log record.
pub mod limits {
    use std::time::Duration;

    /// Largest scenario file, in bytes.
    pub const FILE_BYTES: u64 = 1024 * 1024;
    /// Longest scenario name, in characters.
    pub const NAME_CHARS: usize = 128;
    /// Most entries in `reaches`.
    pub const REACHES: usize = 256;
    /// Shortest mesh heartbeat tick (see `validate_mesh`).
    pub const MIN_HEARTBEAT: Duration = Duration::from_millis(250);

    /// Smallest `real_time_scale`: below it a scaled deadline drowns in
    /// real scheduling noise (a millisecond of jitter reads as 0.1 s).
    pub const MIN_REAL_TIME_SCALE: f64 = 0.01;
    /// Virtual-time budget of one run.
    pub const BUDGET: Duration = Duration::from_secs(3_600);
    /// Lanes: keys.
    pub const KEYS: u64 = 100_000;
    /// Lanes: producer tasks.
    pub const PRODUCERS: u64 = 1_000;
    /// Lanes: items in all (producers x items per producer).
    pub const ITEMS: u64 = 2_000_000;
    /// Lanes: a lane's capacity, and a burst.
    pub const CAPACITY: u64 = 1_000_000;
    /// Sender: data frames, and links.
    pub const FRAMES: u64 = 1_000_000;
    /// Sender: a frame's payload, well under the 64 MiB frame cap.
    pub const FRAME_BYTES: u64 = 16 * 1024 * 1024;
    /// Sender: the frames one run may allocate in all (data frames x frame
    /// bytes).
    pub const RUN_FRAME_BYTES: u64 = 1 << 30;
    /// A sweep: the frames its runs in flight may allocate together
    /// (`--jobs` x the largest run's).
    pub const SWEEP_FRAME_BYTES: u64 = 4 << 30;
    /// Sender: a lane's depth.
    pub const QUEUE: u64 = 1_000_000;
    /// Sender: the simulated socket's segment size and segment credit.
    pub const SEGMENTS: u64 = 65_536;
    /// Sender: the simulation's tick, at least (every host is polled once
    /// per tick: a microsecond tick over an hour would never end).
    pub const MIN_TICK: Duration = Duration::from_micros(100);
    /// Faults, scripted or chaos.
    pub const FAULTS: u64 = 64;
    /// Any time in a file other than the budget.
    pub const SPAN: Duration = Duration::from_secs(3_600);
}

/// `value`'s upper bound is at most `max`.
fn at_most(key: &str, value: &Sampled<u64>, max: u64, problems: &mut Vec<Problem>) {
    if value.bounds().1 > max {
        problems.push(problem(
            key,
            format!("at most {max} (got {})", value.bounds().1),
        ));
    }
}

/// `value`'s upper bound is at most `max`.
fn no_longer(
    key: &str,
    value: &Sampled<Dur>,
    max: std::time::Duration,
    problems: &mut Vec<Problem>,
) {
    if value.bounds().1 .0 > max {
        problems.push(problem(key, format!("at most {}", Dur(max))));
    }
}

fn count(key: &str, value: &Sampled<u64>, min: u64, problems: &mut Vec<Problem>) {
    let (lo, hi) = value.bounds();
    if !value.ordered() {
        problems.push(problem(key, format!("range [{lo}, {hi}] has min > max")));
    } else if lo < min {
        problems.push(problem(key, format!("must be at least {min} (got {lo})")));
    }
}

fn span(key: &str, value: &Sampled<Dur>, positive: bool, problems: &mut Vec<Problem>) {
    let (lo, hi) = value.bounds();
    if !value.ordered() {
        problems.push(problem(
            key,
            format!("range [\"{lo}\", \"{hi}\"] has min > max"),
        ));
    } else if positive && lo.0.is_zero() {
        problems.push(problem(key, "must be greater than zero"));
    }
}

fn chance(key: &str, value: &Sampled<f64>, problems: &mut Vec<Problem>) {
    let (lo, hi) = value.bounds();
    if !value.ordered() || !(0.0..=1.0).contains(&lo) || !(0.0..=1.0).contains(&hi) {
        problems.push(problem(
            key,
            format!("must be a probability in [0, 1] with min <= max (got {lo}..{hi})"),
        ));
    }
}

fn validate_lanes(lanes: &LanesSpec, problems: &mut Vec<Problem>) {
    count("lanes.keys", &lanes.keys, 1, problems);
    count("lanes.producers", &lanes.producers, 1, problems);
    count(
        "lanes.items_per_producer",
        &lanes.items_per_producer,
        1,
        problems,
    );
    count("lanes.burst", &lanes.burst, 1, problems);
    at_most("lanes.keys", &lanes.keys, limits::KEYS, problems);
    at_most(
        "lanes.producers",
        &lanes.producers,
        limits::PRODUCERS,
        problems,
    );
    at_most("lanes.burst", &lanes.burst, limits::CAPACITY, problems);
    let items = lanes
        .producers
        .bounds()
        .1
        .saturating_mul(lanes.items_per_producer.bounds().1);
    if items > limits::ITEMS {
        problems.push(problem(
            "lanes.items_per_producer",
            format!(
                "producers x items_per_producer may reach {items}: at most {} items in all",
                limits::ITEMS
            ),
        ));
    }
    for (key, value) in [
        ("lanes.gap", Some(&lanes.gap)),
        ("lanes.pause", Some(&lanes.pause)),
        ("lanes.handler", Some(&lanes.handler)),
        ("lanes.idle_ttl", lanes.idle_ttl.as_ref()),
        ("lanes.drop_router_at", lanes.drop_router_at.as_ref()),
    ] {
        if let Some(value) = value {
            no_longer(key, value, limits::SPAN, problems);
        }
    }
    if let Some(capacity) = &lanes.capacity {
        at_most("lanes.capacity", capacity, limits::CAPACITY, problems);
    }
    span("lanes.gap", &lanes.gap, false, problems);
    span("lanes.pause", &lanes.pause, false, problems);
    span("lanes.handler", &lanes.handler, false, problems);
    if let Some(ttl) = &lanes.idle_ttl {
        span("lanes.idle_ttl", ttl, true, problems);
    }
    match &lanes.capacity {
        Some(capacity) => count("lanes.capacity", capacity, 1, problems),
        None if lanes.policy != Policy::Raw => {
            problems.push(problem(
                "lanes.policy",
                "reject and warn need a capacity (the dispatcher's limit)",
            ));
        }
        None => {}
    }
    for (key, value) in [
        ("lanes.hot_key", &lanes.hot_key),
        ("lanes.panic_chance", &lanes.panic_chance),
        ("lanes.sync_panic_chance", &lanes.sync_panic_chance),
        ("lanes.buggify", &lanes.buggify),
    ] {
        if let Some(value) = value {
            chance(key, value, problems);
        }
    }
    if let Some(at) = &lanes.drop_router_at {
        span("lanes.drop_router_at", at, false, problems);
    }
    preemption(
        "lanes",
        lanes.preempt.as_ref(),
        lanes.preempt_for.as_ref(),
        problems,
    );
    if let Some(stuck) = &lanes.stuck_keys {
        count("lanes.stuck_keys", stuck, 0, problems);
        if stuck.bounds().1 >= lanes.keys.bounds().0 {
            problems.push(problem(
                "lanes.stuck_keys",
                "must leave at least one key that is not stuck",
            ));
        }
    }
}

/// A slow peer's read interval is at most this fraction of the write
/// deadline (the chaos sampler draws up to 1/50).
pub const SLOW_FRACTION: u32 = 20;

/// Longest a preempted point may sleep: a preempted thread, not a stall.
pub const MAX_PREEMPT: std::time::Duration = std::time::Duration::from_secs(1);

fn preemption(
    table: &str,
    chance: Option<&Sampled<f64>>,
    sleep: Option<&Sampled<Dur>>,
    problems: &mut Vec<Problem>,
) {
    if let Some(value) = chance {
        self::chance(&format!("{table}.preempt"), value, problems);
    }
    if let Some(value) = sleep {
        let key = format!("{table}.preempt_for");
        span(&key, value, false, problems);
        if value.bounds().1 .0 > MAX_PREEMPT {
            problems.push(problem(key, "at most 1s: a preempted thread, not a stall"));
        }
    }
}

fn validate_sender(sender: &SenderSpec, problems: &mut Vec<Problem>) {
    count("sender.peers", &sender.peers, 1, problems);
    if sender.peers.bounds().1 > MAX_PEERS {
        problems.push(problem(
            "sender.peers",
            format!("more peers than the simulated network has addresses ({MAX_PEERS})"),
        ));
    }
    count("sender.data_frames", &sender.data_frames, 0, problems);
    count("sender.links", &sender.links, 0, problems);
    count("sender.frame_bytes", &sender.frame_bytes, 0, problems);
    span("sender.gap", &sender.gap, false, problems);
    at_most(
        "sender.data_frames",
        &sender.data_frames,
        limits::FRAMES,
        problems,
    );
    at_most("sender.links", &sender.links, limits::FRAMES, problems);
    at_most(
        "sender.frame_bytes",
        &sender.frame_bytes,
        limits::FRAME_BYTES,
        problems,
    );
    no_longer("sender.gap", &sender.gap, limits::SPAN, problems);
    // Each frame's payload is allocated when it is enqueued, and a run may
    // hold all of them at once (a wedged peer): bound their product, not
    // only each, so no file inside the bounds exhausts the memory.
    let frames = sender
        .data_frames
        .bounds()
        .1
        .saturating_mul(sender.frame_bytes.bounds().1);
    if frames > limits::RUN_FRAME_BYTES {
        problems.push(problem(
            "sender.frame_bytes",
            format!(
                "data_frames x frame_bytes may reach {} MiB of frames in one run; at most {} MiB (lower either)",
                frames >> 20,
                limits::RUN_FRAME_BYTES >> 20
            ),
        ));
    }
    for (key, value, max) in [
        ("sender.data_capacity", &sender.data_capacity, limits::QUEUE),
        (
            "sender.control_capacity",
            &sender.control_capacity,
            limits::QUEUE,
        ),
        ("sender.mss", &sender.mss, limits::SEGMENTS),
        (
            "sender.tcp_capacity",
            &sender.tcp_capacity,
            limits::SEGMENTS,
        ),
        ("sender.chaos", &sender.chaos, limits::FAULTS),
    ] {
        if let Some(value) = value {
            at_most(key, value, max, problems);
        }
    }
    for (key, value) in [
        ("sender.write_timeout", sender.write_timeout.as_ref()),
        ("sender.connect_timeout", sender.connect_timeout.as_ref()),
        ("sender.redial_after", sender.redial_after.as_ref()),
        ("sender.shutdown_at", sender.shutdown_at.as_ref()),
    ] {
        if let Some(value) = value {
            no_longer(key, value, limits::SPAN, problems);
        }
    }
    if sender
        .tick
        .is_some_and(|tick| !tick.0.is_zero() && tick.0 < limits::MIN_TICK)
    {
        problems.push(problem(
            "sender.tick",
            format!(
                "at least {}: every host is polled once per tick",
                Dur(limits::MIN_TICK)
            ),
        ));
    }
    if sender
        .tick
        .is_some_and(|tick| tick.0 > std::time::Duration::from_secs(1))
    {
        problems.push(problem("sender.tick", "at most 1s"));
    }
    if sender.chaos_kinds.as_ref().is_some_and(Vec::is_empty) {
        problems.push(problem(
            "sender.chaos_kinds",
            "name at least one kind (or leave it out for all)",
        ));
    }
    if sender.fault.len() as u64 > limits::FAULTS {
        problems.push(problem(
            "sender.fault",
            format!("at most {} scripted faults", limits::FAULTS),
        ));
    }
    for (key, value) in [
        ("sender.data_capacity", &sender.data_capacity),
        ("sender.control_capacity", &sender.control_capacity),
        ("sender.mss", &sender.mss),
        ("sender.tcp_capacity", &sender.tcp_capacity),
    ] {
        if let Some(value) = value {
            count(key, value, 1, problems);
        }
    }
    for (key, value) in [
        ("sender.write_timeout", &sender.write_timeout),
        ("sender.connect_timeout", &sender.connect_timeout),
        ("sender.redial_after", &sender.redial_after),
    ] {
        if let Some(value) = value {
            span(key, value, true, problems);
        }
    }
    if sender.tick.is_some_and(|tick| tick.0.is_zero()) {
        problems.push(problem("sender.tick", "must be greater than zero"));
    }
    if let Some(chaos) = &sender.chaos {
        count("sender.chaos", chaos, 0, problems);
    }
    if let Some(at) = &sender.shutdown_at {
        span("sender.shutdown_at", at, false, problems);
    }
    preemption(
        "sender",
        sender.preempt.as_ref(),
        sender.preempt_for.as_ref(),
        problems,
    );
    let min_peers = sender.peers.bounds().0;
    for (index, fault) in sender.fault.iter().enumerate() {
        let key = |field: &str| format!("sender.fault[{index}].{field}");
        count(&key("peer"), &fault.peer, 0, problems);
        if fault.peer.bounds().1 >= min_peers {
            problems.push(problem(
                key("peer"),
                format!(
                    "peer index {} does not exist: there may be only {min_peers} peers",
                    fault.peer.bounds().1
                ),
            ));
        }
        span(&key("at"), &fault.at, false, problems);
        match (&fault.bytes, fault.kind == FaultKind::TornFrame) {
            (Some(bytes), true) => {
                count(&key("bytes"), bytes, 1, problems);
                if bytes.bounds().1 >= TORN_FRAME_LEN {
                    problems.push(problem(
                        key("bytes"),
                        format!(
                            "a torn frame is {TORN_FRAME_LEN} bytes long: tear it 1 to {} bytes in (got {})",
                            TORN_FRAME_LEN - 1,
                            bytes.bounds().1
                        ),
                    ));
                }
            }
            (Some(_), false) => problems.push(problem(
                key("bytes"),
                "only a torn_frame fault takes `bytes`",
            )),
            (None, _) => {}
        }
        match (&fault.lasting, fault.kind.lasts()) {
            (Some(lasting), true) => span(&key("for"), lasting, true, problems),
            (None, true) => problems.push(problem(
                key("kind"),
                "this fault needs `for` (how long, or the read interval for slow)",
            )),
            (Some(_), false) => problems.push(problem(
                key("for"),
                "this fault happens once; `for` would be ignored",
            )),
            (None, false) => {}
        }
        // Slow is not wedged: a reader that takes longer between frames than
        // a fraction of the deadline can make a healthy write time out, and
        // S7 holds that a slow peer never goes down.
        if let (FaultKind::Slow, Some(every)) = (fault.kind, &fault.lasting) {
            let deadline = sender
                .write_timeout
                .map_or(std::time::Duration::from_secs(5), |t| t.bounds().0 .0);
            if every.bounds().1 .0 * SLOW_FRACTION > deadline {
                problems.push(problem(
                    key("for"),
                    format!(
                        "a slow peer's read interval must be at most 1/{SLOW_FRACTION} of the write deadline ({}): slower is a wedge",
                        Dur(deadline)
                    ),
                ));
            }
        }
    }
}

fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(offset, |nl| offset - nl - 1) + 1;
    (line, col)
}

/// A key path's steps: `sender.fault[2].at` is table `sender`, key
/// `fault`, entry 2, key `at`.
#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// The path of the innermost key or array entry of `table` whose span (the
/// key's or its value's, as the TOML parser recorded them) holds `offset`;
/// whether one does. A `[table]`'s own span is its header, so tables are
/// searched whether or not their span holds the offset.
fn path_at(table: &DeTable<'_>, offset: usize, path: &mut Vec<Step>) -> bool {
    let holds = |span: Range<usize>| span.start <= offset && offset < span.end.max(span.start + 1);
    for (key, value) in table {
        path.push(Step::Key(key.get_ref().to_string()));
        if holds(key.span()) || value_path_at(value.get_ref(), offset, path) {
            return true;
        }
        if holds(value.span()) {
            return true;
        }
        path.pop();
    }
    false
}

/// Like [`path_at`], inside a value: a table's keys, an array's entries.
fn value_path_at(value: &DeValue<'_>, offset: usize, path: &mut Vec<Step>) -> bool {
    match value {
        DeValue::Table(table) => path_at(table, offset, path),
        DeValue::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                path.push(Step::Index(index));
                let span = item.span();
                let inside = span.start <= offset && offset < span.end;
                if value_path_at(item.get_ref(), offset, path)
                    || (inside && item.get_ref().is_table())
                {
                    return true;
                }
                path.pop();
            }
            false
        }
        _ => false,
    }
}

/// The path of the table (or array entry) whose span starts last before
/// `offset`, in `best` its start; empty for the document itself.
fn last_table_before(table: &DeTable<'_>, offset: usize, best: &mut Vec<Step>, start: &mut usize) {
    let mut path = Vec::new();
    walk_tables(table, &mut path, &mut |path, span| {
        if span.start <= offset && span.start >= *start {
            *start = span.start;
            best.clear();
            best.extend(path.iter().map(|step| match step {
                Step::Key(key) => Step::Key(key.clone()),
                Step::Index(index) => Step::Index(*index),
            }));
        }
    });
}

/// Calls `visit` with the path and span of every table and array entry
/// under `table`.
fn walk_tables(
    table: &DeTable<'_>,
    path: &mut Vec<Step>,
    visit: &mut dyn FnMut(&[Step], Range<usize>),
) {
    for (key, value) in table {
        path.push(Step::Key(key.get_ref().to_string()));
        match value.get_ref() {
            DeValue::Table(inner) => {
                visit(path, value.span());
                walk_tables(inner, path, visit);
            }
            DeValue::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    if let DeValue::Table(inner) = item.get_ref() {
                        path.push(Step::Index(index));
                        visit(path, item.span());
                        walk_tables(inner, path, visit);
                        path.pop();
                    }
                }
            }
            _ => {}
        }
        path.pop();
    }
}

/// `a.b[2].c`.
fn dotted(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(key) if out.is_empty() => out.push_str(key),
            Step::Key(key) => {
                out.push('.');
                out.push_str(key);
            }
            Step::Index(index) => out.push_str(&format!("[{index}]")),
        }
    }
    out
}

/// Parses `a.b[2].c` into its steps.
fn steps(key: &str) -> Vec<Step> {
    let mut out = Vec::new();
    for part in key.split('.') {
        let mut pieces = part.split('[');
        if let Some(name) = pieces.next().filter(|n| !n.is_empty()) {
            out.push(Step::Key(name.to_string()));
        }
        for index in pieces {
            if let Ok(index) = index.trim_end_matches(']').parse() {
                out.push(Step::Index(index));
            }
        }
    }
    out
}

/// The span the parser recorded for `key` (`table.field`,
/// `sender.fault[N].field`, or a top-level field): its value's, else (the
/// field is absent) the innermost table or entry that holds it, else the
/// document's start.
fn span_of(doc: &DeTable<'_>, key: &str) -> Range<usize> {
    let mut found = 0..0;
    let mut here: Option<&DeValue<'_>> = None;
    for step in steps(key) {
        let next = match (step, here) {
            (Step::Key(name), None) => doc.get(name.as_str()),
            (Step::Key(name), Some(DeValue::Table(table))) => table.get(name.as_str()),
            (Step::Index(index), Some(DeValue::Array(items))) => items.get(index),
            _ => None,
        };
        let Some(next) = next else { break };
        found = next.span();
        here = Some(next.get_ref());
    }
    found
}

/// The key an error at `span` is about: the path of the key or entry the
/// parser recorded there, and for a missing field (whose span is its
/// table's) that field under it.
fn key_of_error(doc: &DeTable<'_>, span: &Range<usize>, message: &str) -> Option<String> {
    let mut path = Vec::new();
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
    {
        // The span is the table's that lacks it (the document's: none).
        table_spanning(doc, span, &mut path);
        path.push(Step::Key(field.to_string()));
    } else if !path_at(doc, span.start, &mut path) {
        path.clear();
    }
    (!path.is_empty()).then(|| dotted(&path))
}

/// The path of the table or array entry whose span is exactly `span`.
fn table_spanning(table: &DeTable<'_>, span: &Range<usize>, path: &mut Vec<Step>) -> bool {
    for (key, value) in table {
        path.push(Step::Key(key.get_ref().to_string()));
        if value.span() == *span && value.get_ref().is_table() {
            return true;
        }
        match value.get_ref() {
            DeValue::Table(inner) if table_spanning(inner, span, path) => return true,
            DeValue::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    path.push(Step::Index(index));
                    if item.span() == *span {
                        return true;
                    }
                    if let DeValue::Table(inner) = item.get_ref() {
                        if table_spanning(inner, span, path) {
                            return true;
                        }
                    }
                    path.pop();
                }
            }
            _ => {}
        }
        path.pop();
    }
    false
}
