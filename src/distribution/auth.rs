//! The handshake's secret and its proofs: a [`Cookie`] shared by every node
//! of a cluster, and the HMAC-SHA256 proofs each end of a new stream makes
//! of it.
//!
//! Model (Erlang distribution's cookie challenge, with HMAC-SHA256 in place
//! of MD5). Three frames on every new stream: the dialer's hello (its nonce
//! and name), the acceptor's challenge (its nonce, its proof and its name)
//! and the dialer's proof. A proof is `HMAC-SHA256(cookie, label ‖ u32 BE
//! len ‖ dialer name ‖ u32 BE len ‖ acceptor name ‖ dialer nonce ‖
//! acceptor nonce)`: a label per role, so one end's proof is never good as
//! the other's (a reflection), and both fresh nonces, so no proof is good
//! on another stream (a replay). Each end checks the other's proof, in
//! constant time, before anything else: the dialer before it sends its own
//! proof, the acceptor before it registers the stream. So a peer without
//! the cookie never registers, never takes part in a tie-break, never
//! receives a frame (`an_impostor_without_the_cookie_never_registers` in
//! tests/hostile_impostor.rs).
//!
//! Not covered: a peer that holds the cookie is trusted with any name, and
//! frames after the handshake are neither authenticated nor hidden (TLS is
//! for that). The wire format is in docs/protocol.md.

use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// A nonce's length in bytes.
pub const NONCE_LEN: usize = 16;
/// A proof's length in bytes.
pub const PROOF_LEN: usize = 32;
/// The longest cookie accepted, in bytes.
pub const MAX_COOKIE: usize = 1024;

/// A nonce.
pub type Nonce = [u8; NONCE_LEN];

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

/// Which end of a stream a proof is from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Dialer,
    Acceptor,
}

/// What both proofs of one stream cover.
pub(crate) struct Transcript<'a> {
    pub dialer: &'a [u8],
    pub acceptor: &'a [u8],
    pub dialer_nonce: Nonce,
    pub acceptor_nonce: Nonce,
}

impl Transcript<'_> {
    fn mac(&self, cookie: &Cookie, role: Role) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(cookie.as_bytes())
            .expect("HMAC takes a key of any length");
        mac.update(match role {
            Role::Dialer => b"lanesim/dialer-proof",
            Role::Acceptor => b"lanesim/acceptor-proof",
        });
        for name in [self.dialer, self.acceptor] {
            // Names are at most a few hundred bytes (`NodeName`).
            let len = u32::try_from(name.len()).unwrap_or(u32::MAX);
            mac.update(&len.to_be_bytes());
            mac.update(name);
        }
        mac.update(&self.dialer_nonce);
        mac.update(&self.acceptor_nonce);
        mac
    }

    /// `role`'s proof of this stream.
    pub fn proof(&self, cookie: &Cookie, role: Role) -> [u8; PROOF_LEN] {
        self.mac(cookie, role).finalize().into_bytes().into()
    }

    /// Whether `proof` is `role`'s proof of this stream, in constant time.
    pub fn verify(&self, cookie: &Cookie, role: Role, proof: &[u8]) -> bool {
        self.mac(cookie, role).verify_slice(proof).is_ok()
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

    /// The testbed's own reading of the handshake
    /// (`lanesim_target::handshake`) computes the same proofs: the worlds'
    /// peers and this node speak one protocol.
    #[test]
    fn proofs_match_the_testbeds_reading_and_only_for_their_role() {
        use lanesim_target::handshake as theirs;
        let cookie = Cookie::new("cluster").unwrap();
        let ours = Transcript {
            dialer: b"a@test",
            acceptor: b"z@test",
            dialer_nonce: [4; NONCE_LEN],
            acceptor_nonce: [9; NONCE_LEN],
        };
        let reading = theirs::Transcript {
            dialer: b"a@test",
            acceptor: b"z@test",
            dialer_nonce: [4; NONCE_LEN],
            acceptor_nonce: [9; NONCE_LEN],
        };
        for (role, their_role) in [
            (Role::Dialer, theirs::Role::Dialer),
            (Role::Acceptor, theirs::Role::Acceptor),
        ] {
            let proof = ours.proof(&cookie, role);
            assert_eq!(proof, reading.proof(b"cluster", their_role));
            assert!(ours.verify(&cookie, role, &proof));
        }
        let dialer = ours.proof(&cookie, Role::Dialer);
        assert!(!ours.verify(&cookie, Role::Acceptor, &dialer));
        assert!(!ours.verify(&Cookie::new("other").unwrap(), Role::Dialer, &dialer));
    }
}
