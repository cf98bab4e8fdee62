//! The authenticated handshake the worlds' peers speak, which a node target
//! must speak too: both ends prove they hold the cluster cookie, each to a
//! nonce the other just chose (Erlang distribution's challenge/response,
//! with HMAC-SHA256 in place of MD5).
//!
//! Three frames, in [`crate::wire`]'s format, on every new stream:
//!
//! 1. dialer → acceptor, [`HELLO`]: payload `nonce_d (16) ‖ dialer name`;
//! 2. acceptor → dialer, [`CHALLENGE`]: payload `nonce_a (16) ‖ mac_a (32)
//!    ‖ acceptor name`, where `mac_a` is the acceptor's proof
//!    ([`Role::Acceptor`]);
//! 3. dialer → acceptor, [`PROOF`]: payload `mac_d (32)`, the dialer's
//!    proof ([`Role::Dialer`]).
//!
//! A proof is `HMAC-SHA256(cookie, label ‖ u32 BE len ‖ dialer name ‖ u32
//! BE len ‖ acceptor name ‖ nonce_d ‖ nonce_a)`, with a label per role, so
//! neither end's proof can be replayed as the other's (a reflection), and
//! both nonces, so no proof is good on another stream. The dialer checks
//! the acceptor's proof and that it is the node it dialed before it sends
//! its own; the acceptor checks the dialer's before it registers the
//! stream. Either end that finds a bad proof closes the stream: nothing
//! else is written on it. Proofs are compared in constant time.
//!
//! What this does not do: it authenticates the start of a stream, not its
//! later frames, and hides nothing (as Erlang distribution without TLS). A
//! peer that holds the cookie is trusted with any name.
//!
//! This module is the one definition of the handshake's frames and proofs:
//! lanesim's own node (`lanesim::distribution`) builds, parses and checks
//! them with it, as the worlds' peers and a node target do. What each end
//! does with a frame that is not the one it expects, how long it waits,
//! and where its nonces come from ([`Nonces`]) are the node's own.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::wire::{encode, Frame};

/// The control part of a hello.
pub const HELLO: &[u8] = b"lanesim/hello";
/// The control part of the acceptor's challenge.
pub const CHALLENGE: &[u8] = b"lanesim/challenge";
/// The control part of the dialer's proof.
pub const PROOF: &[u8] = b"lanesim/proof";
/// The control part of an acceptor's refusal, sent instead of a challenge
/// to a stream it will not take (a cap reached); its payload names the cap.
/// The acceptor closes the stream after it, and the dialer that reads it
/// knows why it was turned away.
pub const REFUSED: &[u8] = b"lanesim/refused";

/// A refusal frame naming `cap` (a configuration knob, such as
/// `max_handshakes_per_source`).
#[must_use]
pub fn refused(cap: &str) -> Vec<u8> {
    encode(REFUSED, cap.as_bytes())
}
/// A nonce's length in bytes.
pub const NONCE_LEN: usize = 16;
/// A proof's length in bytes (an HMAC-SHA256 tag).
pub const MAC_LEN: usize = 32;

/// A nonce.
pub type Nonce = [u8; NONCE_LEN];
/// A proof.
pub type Proof = [u8; MAC_LEN];

/// Which end a proof is from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The end that dialed.
    Dialer,
    /// The end that accepted.
    Acceptor,
}

impl Role {
    fn label(self) -> &'static [u8] {
        match self {
            Self::Dialer => b"lanesim/dialer-proof",
            Self::Acceptor => b"lanesim/acceptor-proof",
        }
    }
}

/// What both proofs of one stream cover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transcript<'a> {
    /// The dialer's name, as its hello says.
    pub dialer: &'a [u8],
    /// The acceptor's name, as its challenge says.
    pub acceptor: &'a [u8],
    /// The dialer's nonce.
    pub dialer_nonce: Nonce,
    /// The acceptor's nonce.
    pub acceptor_nonce: Nonce,
}

impl Transcript<'_> {
    fn mac(&self, cookie: &[u8], role: Role) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(cookie)
            .expect("HMAC takes a key of any length");
        mac.update(role.label());
        for name in [self.dialer, self.acceptor] {
            let len = u32::try_from(name.len()).unwrap_or(u32::MAX);
            mac.update(&len.to_be_bytes());
            mac.update(name);
        }
        mac.update(&self.dialer_nonce);
        mac.update(&self.acceptor_nonce);
        mac
    }

    /// `role`'s proof of this stream under `cookie`.
    #[must_use]
    pub fn proof(&self, cookie: &[u8], role: Role) -> Proof {
        self.mac(cookie, role).finalize().into_bytes().into()
    }

    /// Whether `proof` is `role`'s proof of this stream under `cookie`,
    /// compared in constant time.
    #[must_use]
    pub fn verify(&self, cookie: &[u8], role: Role, proof: &[u8]) -> bool {
        self.mac(cookie, role).verify_slice(proof).is_ok()
    }
}

/// The hello a node named `name` sends first on every dial.
#[must_use]
pub fn hello(name: &str, nonce: &Nonce) -> Vec<u8> {
    let mut payload = nonce.to_vec();
    payload.extend_from_slice(name.as_bytes());
    encode(HELLO, &payload)
}

/// The acceptor's challenge: its nonce, its proof and its name.
#[must_use]
pub fn challenge(transcript: &Transcript<'_>, cookie: &[u8]) -> Vec<u8> {
    let mut payload = transcript.acceptor_nonce.to_vec();
    payload.extend_from_slice(&transcript.proof(cookie, Role::Acceptor));
    payload.extend_from_slice(transcript.acceptor);
    encode(CHALLENGE, &payload)
}

/// The dialer's proof frame.
#[must_use]
pub fn proof(transcript: &Transcript<'_>, cookie: &[u8]) -> Vec<u8> {
    encode(PROOF, &transcript.proof(cookie, Role::Dialer))
}

/// A hello, read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hello<'a> {
    /// The dialer's nonce.
    pub nonce: Nonce,
    /// The name it announces.
    pub name: &'a [u8],
}

/// The hello `frame` is, if it is one.
#[must_use]
pub fn parse_hello<'a>(frame: &Frame<'a>) -> Option<Hello<'a>> {
    match frame {
        Frame::Data { control, payload } if *control == HELLO => {
            let (nonce, name) = payload.split_first_chunk::<NONCE_LEN>()?;
            Some(Hello {
                nonce: *nonce,
                name,
            })
        }
        Frame::Data { .. } | Frame::Keepalive | Frame::Node { .. } => None,
    }
}

/// A challenge, read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Challenge<'a> {
    /// The acceptor's nonce.
    pub nonce: Nonce,
    /// The acceptor's proof.
    pub proof: Proof,
    /// The acceptor's name.
    pub name: &'a [u8],
}

/// The challenge `frame` is, if it is one.
#[must_use]
pub fn parse_challenge<'a>(frame: &Frame<'a>) -> Option<Challenge<'a>> {
    match frame {
        Frame::Data { control, payload } if *control == CHALLENGE => {
            let (nonce, rest) = payload.split_first_chunk::<NONCE_LEN>()?;
            let (proof, name) = rest.split_first_chunk::<MAC_LEN>()?;
            Some(Challenge {
                nonce: *nonce,
                proof: *proof,
                name,
            })
        }
        Frame::Data { .. } | Frame::Keepalive | Frame::Node { .. } => None,
    }
}

/// The proof `frame` carries, if it is a proof frame.
#[must_use]
pub fn parse_proof(frame: &Frame<'_>) -> Option<Proof> {
    match frame {
        Frame::Data { control, payload } if *control == PROOF => <Proof>::try_from(*payload).ok(),
        Frame::Data { .. } | Frame::Keepalive | Frame::Node { .. } => None,
    }
}

/// Where a node takes its nonces from: the world hands each node one
/// ([`crate::node::NodeSetup::nonces`]), so a run's nonces follow from its
/// seed; a production node takes them from the OS.
pub trait Nonces: Send + Sync + 'static {
    /// A fresh nonce.
    fn next(&self) -> Nonce;
}

/// Nonces drawn from a seed: distinct for each call, and the same sequence
/// for the same seed (splitmix64 over a counter). For simulated worlds
/// only: anyone who knows the seed knows the nonces.
pub struct SeededNonces {
    seed: u64,
    counter: AtomicU64,
}

impl SeededNonces {
    /// Nonces from `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            counter: AtomicU64::new(0),
        }
    }
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Nonces for SeededNonces {
    fn next(&self) -> Nonce {
        let count = self.counter.fetch_add(1, Ordering::Relaxed);
        let high = splitmix64(self.seed ^ splitmix64(count.wrapping_mul(2)));
        let low = splitmix64(self.seed ^ splitmix64(count.wrapping_mul(2) + 1));
        let mut nonce = [0; NONCE_LEN];
        nonce[..8].copy_from_slice(&high.to_be_bytes());
        nonce[8..].copy_from_slice(&low.to_be_bytes());
        nonce
    }
}

impl fmt::Debug for SeededNonces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SeededNonces").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::decode;

    const COOKIE: &[u8] = b"cluster cookie";

    fn transcript() -> Transcript<'static> {
        Transcript {
            dialer: b"a@test",
            acceptor: b"z@test",
            dialer_nonce: [1; NONCE_LEN],
            acceptor_nonce: [2; NONCE_LEN],
        }
    }

    #[test]
    fn each_frame_parses_back_to_what_was_encoded() {
        let t = transcript();
        let frame = hello("a@test", &t.dialer_nonce);
        let (frame, _) = decode(&frame, 1024).unwrap().unwrap();
        let read = parse_hello(&frame).unwrap();
        assert_eq!((read.nonce, read.name), (t.dialer_nonce, &b"a@test"[..]));
        assert_eq!(parse_challenge(&frame), None);

        let frame = challenge(&t, COOKIE);
        let (frame, _) = decode(&frame, 1024).unwrap().unwrap();
        let read = parse_challenge(&frame).unwrap();
        assert_eq!(read.name, b"z@test");
        assert!(t.verify(COOKIE, Role::Acceptor, &read.proof));

        let frame = proof(&t, COOKIE);
        let (frame, _) = decode(&frame, 1024).unwrap().unwrap();
        assert!(t.verify(COOKIE, Role::Dialer, &parse_proof(&frame).unwrap()));
        assert_eq!(parse_hello(&frame), None);
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|byte| format!("{byte:02x}")).collect()
    }

    /// The bytes docs/protocol.md specifies, pinned against an independent
    /// reading: the proofs were computed with Python's `hmac` from the
    /// formula on that page, the frames laid out by hand. lanesim's node and
    /// the worlds' peers both use this module, so talking to each other no
    /// longer checks it; this does.
    #[test]
    fn the_frames_and_proofs_are_the_documented_bytes() {
        let t = transcript();
        assert_eq!(
            hex(&t.proof(COOKIE, Role::Dialer)),
            "1897746d65a833bf3886a9f6edb9d2d6a85d7fcbe705593b5aca94596b8a8dfa"
        );
        let acceptor = t.proof(COOKIE, Role::Acceptor);
        assert_eq!(
            hex(&acceptor),
            "024e583984917d2ab9f5736e472cefbc9a657af81724f7b11bb9374dbc573ac4"
        );
        let framed = |control: &[u8], payload: &[u8]| {
            let mut frame = u32::try_from(control.len()).unwrap().to_be_bytes().to_vec();
            frame.extend_from_slice(&u32::try_from(payload.len()).unwrap().to_be_bytes());
            frame.extend_from_slice(control);
            frame.extend_from_slice(payload);
            frame
        };
        let mut payload = vec![1; NONCE_LEN];
        payload.extend_from_slice(b"a@test");
        assert_eq!(
            hello("a@test", &t.dialer_nonce),
            framed(b"lanesim/hello", &payload)
        );
        let mut payload = vec![2; NONCE_LEN];
        payload.extend_from_slice(&acceptor);
        payload.extend_from_slice(b"z@test");
        assert_eq!(
            challenge(&t, COOKIE),
            framed(b"lanesim/challenge", &payload)
        );
        assert_eq!(
            proof(&t, COOKIE),
            framed(b"lanesim/proof", &t.proof(COOKIE, Role::Dialer))
        );
    }

    #[test]
    fn a_proof_is_good_only_for_its_role_cookie_names_and_nonces() {
        let t = transcript();
        let good = t.proof(COOKIE, Role::Dialer);
        assert!(t.verify(COOKIE, Role::Dialer, &good));
        assert!(!t.verify(COOKIE, Role::Acceptor, &good), "reflected");
        assert!(!t.verify(b"another cookie", Role::Dialer, &good));
        let others = [
            Transcript {
                dialer: b"b@test",
                ..t
            },
            Transcript {
                acceptor: b"y@test",
                ..t
            },
            Transcript {
                dialer_nonce: [3; NONCE_LEN],
                ..t
            },
            Transcript {
                acceptor_nonce: [3; NONCE_LEN],
                ..t
            },
            // The length prefixes keep the split between the names.
            Transcript {
                dialer: b"a@testz",
                acceptor: b"@test",
                ..t
            },
        ];
        for other in others {
            assert!(!other.verify(COOKIE, Role::Dialer, &good), "{other:?}");
        }
        assert!(!t.verify(COOKIE, Role::Dialer, &good[..31]), "short");
    }

    #[test]
    fn seeded_nonces_differ_call_by_call_and_repeat_seed_by_seed() {
        let (a, b) = (SeededNonces::new(7), SeededNonces::new(7));
        let first: Vec<Nonce> = (0..100).map(|_| a.next()).collect();
        let again: Vec<Nonce> = (0..100).map(|_| b.next()).collect();
        assert_eq!(first, again);
        let mut distinct = first.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 100);
        assert_ne!(SeededNonces::new(8).next(), first[0]);
    }
}
