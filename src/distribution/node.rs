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
    /// A character that changes how text around it is laid out or shown
    /// without showing itself: a line or paragraph separator (a log viewer
    /// breaks the line there, as at a newline), a bidirectional override,
    /// embedding, isolate or mark (a name that reads as another: "Trojan
    /// Source"), a zero-width character or a byte-order mark.
    InvisibleCharacter(char),
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
            Self::InvisibleCharacter(c) => {
                write!(f, "node name holds the invisible layout character {c:?}")
            }
            Self::Ours => f.write_str("hello names this node"),
        }
    }
}

impl std::error::Error for NameError {}

impl NodeName {
    /// A name a hello may announce: non-empty, at most [`MAX_NODE_NAME`]
    /// bytes of UTF-8, no control characters and no invisible layout
    /// characters ([`NameError::InvisibleCharacter`]). Checked before the
    /// name is looked at any further, so an error quotes only its first
    /// offence.
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
        if let Some(c) = name.chars().find(|&c| invisible(c)) {
            return Err(NameError::InvisibleCharacter(c));
        }
        Ok(Self::from(name))
    }

    /// The name as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The characters [`NameError::InvisibleCharacter`] names: Unicode's line
/// and paragraph separators, zero-width and joiner characters, the
/// bidirectional marks, embeddings, overrides and isolates, the word
/// joiner and invisible operators, and the byte-order mark.
/// (`char::is_control` covers only the C0 and C1 controls.)
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{061C}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
    )
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
