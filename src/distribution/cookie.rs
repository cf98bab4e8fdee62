//! The handshake's secret: a [`Cookie`] shared by every node of a cluster.
//!
//! Model (Erlang distribution's cookie): each end of a new stream proves it
//! holds the cookie to a nonce the other end just chose, and a stream is
//! registered only once its peer's proof verifies. The proofs, the frames
//! that carry them and why they are made so are `lanesim_target::handshake`
//! (the one definition, which the worlds' peers speak too); the two ends'
//! steps are `manager::handshake`. Here is only what production adds: a
//! cookie is 1 to [`MAX_COOKIE`] bytes, and never printed.

use std::fmt;

/// The longest cookie accepted, in bytes.
pub const MAX_COOKIE: usize = 1024;

/// The cluster's shared secret. Its `Debug` shows its length only.
#[derive(Clone, PartialEq, Eq)]
pub struct Cookie(Vec<u8>);

/// A cookie that cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CookieError {
    /// No bytes: every peer would know it.
    Empty,
    /// Longer than [`MAX_COOKIE`].
    TooLong(usize),
}

impl fmt::Display for CookieError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("the cookie is empty"),
            Self::TooLong(len) => write!(
                f,
                "the cookie is {len} bytes, over the {MAX_COOKIE}-byte maximum"
            ),
        }
    }
}

impl std::error::Error for CookieError {}

impl Cookie {
    /// A cookie of these bytes.
    ///
    /// # Errors
    /// When it is empty or longer than [`MAX_COOKIE`] bytes.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Self, CookieError> {
        let bytes = bytes.into();
        match bytes.len() {
            0 => Err(CookieError::Empty),
            len if len > MAX_COOKIE => Err(CookieError::TooLong(len)),
            _ => Ok(Self(bytes)),
        }
    }

    /// The secret's bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Cookie {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cookie({} bytes)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_is_refused_empty_or_too_long_and_never_printed() {
        assert_eq!(Cookie::new(Vec::new()), Err(CookieError::Empty));
        assert_eq!(
            Cookie::new(vec![1; MAX_COOKIE + 1]),
            Err(CookieError::TooLong(MAX_COOKIE + 1))
        );
        let cookie = Cookie::new("secret").unwrap();
        assert_eq!(format!("{cookie:?}"), "Cookie(6 bytes)");
    }
}
