//! Node identity: an interned-by-`Arc` name, cheap to clone and compare, and
//! ordered so `connected_nodes` and every table are deterministic.

use std::fmt;

use crate::shim::sync::Arc;

/// A node's name, e.g. `peer@10.0.0.2`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeName(Arc<str>);

/// The longest node name a hello may announce, in bytes.
pub const MAX_NODE_NAME: usize = 255;

/// Why a name is not a node name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameError {
    /// Zero bytes.
    Empty,
    /// Longer than [`MAX_NODE_NAME`] bytes.
    TooLong(usize),
    /// Not UTF-8.
    NotUtf8,
    /// A control character (a newline would forge log lines).
    ControlCharacter(char),
    /// The name of the node reading the hello.
    Ours,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("empty node name"),
            Self::TooLong(len) => {
                write!(f, "node name of {len} bytes is longer than {MAX_NODE_NAME}")
            }
            Self::NotUtf8 => f.write_str("node name is not UTF-8"),
            Self::ControlCharacter(c) => {
                write!(f, "node name holds the control character {c:?}")
            }
            Self::Ours => f.write_str("hello names this node"),
        }
    }
}

impl std::error::Error for NameError {}

impl NodeName {
    /// A name a hello may announce: non-empty, at most [`MAX_NODE_NAME`]
    /// bytes of UTF-8, no control characters. Checked before the name is
    /// looked at any further, so an error quotes only its first offence.
    ///
    /// # Errors
    /// As [`NameError`].
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self, NameError> {
        if bytes.is_empty() {
            return Err(NameError::Empty);
        }
        if bytes.len() > MAX_NODE_NAME {
            return Err(NameError::TooLong(bytes.len()));
        }
        let name = std::str::from_utf8(bytes).map_err(|_| NameError::NotUtf8)?;
        if let Some(c) = name.chars().find(|c| c.is_control()) {
            return Err(NameError::ControlCharacter(c));
        }
        Ok(Self::from(name))
    }

    /// The name as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for NodeName {
    fn from(name: &str) -> Self {
        Self(Arc::from(name))
    }
}

impl From<String> for NodeName {
    fn from(name: String) -> Self {
        Self(Arc::from(name))
    }
}

impl fmt::Display for NodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for NodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", &*self.0)
    }
}
