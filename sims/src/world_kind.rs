//! The worlds a scenario can run in, as a name.
//!
//! Model. Which world a scenario runs in is the one fact that the scenario
//! files, the coverage registry (which world reaches which code site) and
//! the targets (which world their sites are marked in) all name. It lives
//! here, importing nothing of the testbed, so that each of them can name it
//! without importing the others; `scenario` re-exports it as
//! `scenario::WorldKind`, the path scenario files are read with.

use serde::{Deserialize, Serialize};

/// The worlds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorldKind {
    /// LaneRouter / OrderedDispatcher on a paused current-thread runtime.
    Lanes,
    /// ConnectionManager + DistSender under turmoil.
    Sender,
    /// N production nodes under turmoil, every one dialing and accepting.
    Mesh,
}

impl WorldKind {
    /// Its name in files and reports.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Lanes => "lanes",
            Self::Sender => "sender",
            Self::Mesh => "mesh",
        }
    }
}
