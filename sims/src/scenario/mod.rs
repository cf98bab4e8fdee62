//! Scenario files: loading, validation with file:line:col and the key at
//! fault, and sampling a run's parameters from its seed.
//!
//! Bad input never panics: every failure is a [`ScenarioError`] naming the
//! file, the line and column, and the key, and the runner exits 2 on it.
//!
//! Start here: [`Scenario::load`] reads a file (or a shipped one) and
//! [`Scenario::parse`] turns its text into a [`Scenario`]: TOML into a
//! [`ScenarioFile`] (`document`), whose every problem `validate` finds and
//! `position` places; then [`Scenario::sample`] draws one run's [`Params`].
//!
//! - this file: [`Scenario`], loading, [`ScenarioError`], the re-exports.
//! - `spec`: the file's model ([`ScenarioFile`], one struct per table);
//!   [`sample`]: one value or a `[min, max]` range, and durations; `seeds`:
//!   [`SeedRange`].
//! - `validate`: every impossible value, by key: the file's own keys, then
//!   one submodule per world (`lanes`, `sender`, `mesh`) over `common`'s
//!   checks of one value; [`limits`]: the bounds it holds files to.
//! - `document`: the parsed TOML walked into a [`ScenarioFile`] with typed
//!   errors, each at the key the walk was on; `position`: typed key paths
//!   (`mesh.fault[2].at`), their file:line:col, and the key written twice
//!   that a parse error is about.
//! - `reach`: `reaches`, the marks a sweep must reach; [`marks`]: which
//!   world can reach which.
//! - `params`: a run's parameters, sampled from its seed; [`shipped`]: the
//!   scenarios built into the binary (`@shipped/…`).

mod document;
pub mod limits;
pub mod marks;
mod params;
mod position;
mod reach;
pub mod sample;
mod seeds;
pub mod shipped;
mod spec;
mod validate;

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::de::DeTable;

pub use limits::{
    MAX_MESH_LINKS, MAX_MESH_NODES, MAX_MESH_SPAN, MAX_PEERS, MAX_PREEMPT, MESH_MAX_FRAME,
    SLOW_FRACTION,
};
pub use params::{
    mesh_frame_deadline, mesh_trickle_bound, LanesParams, MeshFault, MeshParams, Params,
    ScheduledFault, SenderParams, ACCEPT_RECOVERY, HALF_OPEN_MIN_TICKS,
};
pub use reach::Reach;
pub use seeds::{SeedRange, MAX_SEEDS};
pub use spec::{
    Contract, FaultKind, FaultSpec, LanesSpec, MeshFaultKind, MeshFaultSpec, MeshSpec, MisdialBy,
    OversizeSplit, Policy, ScenarioFile, SenderSpec, TORN_FRAME_LEN,
};
// Defined in `world_kind`, which the coverage registry and the targets
// import too: this path is the one callers name.
pub use crate::world_kind::WorldKind;

use position::{line_col, span_of, span_of_key, KeyPath};

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
    /// Whether its file asks the scheduler to explore (`shuffle` or
    /// `preempt_awaits` above zero in some seed).
    #[must_use]
    pub fn explores(&self) -> bool {
        let file = &self.file;
        let knobs = [
            file.lanes.as_ref().map(|s| (&s.shuffle, &s.preempt_awaits)),
            file.sender
                .as_ref()
                .map(|s| (&s.shuffle, &s.preempt_awaits)),
            file.mesh.as_ref().map(|s| (&s.shuffle, &s.preempt_awaits)),
        ];
        knobs.into_iter().flatten().any(|(shuffle, awaits)| {
            [shuffle, awaits]
                .into_iter()
                .flatten()
                .any(|knob| knob.bounds().1 > 0.0)
        })
    }

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
        let at = |span: &Range<usize>, key: Option<KeyPath>, message: &str| {
            let (line, col) = line_col(source, span.start);
            ScenarioError {
                file: path.to_path_buf(),
                line,
                col,
                key: key.map(|key| key.to_string()),
                message: message.trim().to_string(),
            }
        };
        let doc = DeTable::parse(source).map_err(|error| {
            let span = error.span().unwrap_or(0..0);
            at(
                &span,
                position::key_of_parse_error(source, &error),
                error.message(),
            )
        })?;
        let file: ScenarioFile = document::from_document(doc.get_ref()).map_err(|error| {
            let key = error.key.clone().filter(|key| !key.is_empty());
            let span = key.as_ref().map_or(0..0, |key| {
                if error.at_key {
                    span_of_key(doc.get_ref(), key)
                } else {
                    span_of(doc.get_ref(), key)
                }
            });
            at(&span, key, &error.to_string())
        })?;
        let name = file.name.clone().unwrap_or_else(|| {
            path.file_stem().map_or_else(
                || "scenario".into(),
                |stem| stem.to_string_lossy().into_owned(),
            )
        });
        // Printed at the start of report lines: a newline or an escape
        // sequence in it would forge a line (`… 32/32 pass`).
        if let Some(why) = validate::name_problem(&name) {
            let key = KeyPath::top("name");
            let span = span_of(doc.get_ref(), &key);
            let key = file.name.is_some().then_some(key);
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
        if let Some(problem) = validate::validate(&scenario.file).into_iter().next() {
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
