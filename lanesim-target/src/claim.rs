//! The claim check: asking a live connection's node whether a new stream
//! that claims its name is its own.
//!
//! Model: every stream names its dialer in its hello, and a cookie holder
//! can name any node. So a node that already holds a live generation of a
//! name does not let a new stream claiming that name displace it on the
//! stream's word alone: it asks the generation's node, over the live
//! connection, whether it dialed the stream whose hello carried this nonce.
//! The real node knows its own dials; an impostor's stream is denied. Two
//! node-protocol frames ([`crate::wire::encode_node`]) carry it:
//!
//! | frame | payload |
//! |---|---|
//! | query | `?` ‖ the new stream's hello nonce (16 bytes) |
//! | answer | `!` ‖ the same nonce ‖ `1` (mine) or `0` (not mine) |
//!
//! The asker keys its wait by the nonce and takes an answer only from the
//! connection it asked. docs/protocol.md ("Names belong to their owners")
//! says what the node does with each answer.

use crate::handshake::{Nonce, NONCE_LEN};
use crate::wire::encode_node;

/// A query's first byte.
pub const QUERY: u8 = b'?';
/// An answer's first byte.
pub const ANSWER: u8 = b'!';

/// What a node-protocol frame's payload says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimFrame {
    /// Did you dial the stream whose hello carried this nonce?
    Query(Nonce),
    /// The answer for this nonce: `true` if the answering node dialed it.
    Answer(Nonce, bool),
}

/// The query frame, whole.
#[must_use]
pub fn query(nonce: &Nonce) -> Vec<u8> {
    let mut payload = Vec::with_capacity(1 + NONCE_LEN);
    payload.push(QUERY);
    payload.extend_from_slice(nonce);
    encode_node(&payload)
}

/// The answer frame, whole.
#[must_use]
pub fn answer(nonce: &Nonce, mine: bool) -> Vec<u8> {
    let mut payload = Vec::with_capacity(2 + NONCE_LEN);
    payload.push(ANSWER);
    payload.extend_from_slice(nonce);
    payload.push(u8::from(mine));
    encode_node(&payload)
}

/// A node-protocol frame's payload read as a claim frame; `None` when it
/// is neither (a reader drops it).
#[must_use]
pub fn parse(payload: &[u8]) -> Option<ClaimFrame> {
    let (&kind, rest) = payload.split_first()?;
    match kind {
        QUERY => Some(ClaimFrame::Query(rest.try_into().ok()?)),
        ANSWER => {
            let (nonce, verdict) = rest.split_first_chunk::<NONCE_LEN>()?;
            match verdict {
                [0] => Some(ClaimFrame::Answer(*nonce, false)),
                [1] => Some(ClaimFrame::Answer(*nonce, true)),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{decode, Frame};

    fn payload(frame: &[u8]) -> &[u8] {
        match decode(frame, 0) {
            Ok(Some((Frame::Node { payload }, used))) if used == frame.len() => payload,
            other => panic!("not one node frame: {other:?}"),
        }
    }

    #[test]
    fn queries_and_answers_are_the_documented_bytes_and_parse_back() {
        let nonce = [7; NONCE_LEN];
        let q = query(&nonce);
        assert_eq!(q[..8], [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 17]);
        assert_eq!(payload(&q)[0], b'?');
        assert_eq!(parse(payload(&q)), Some(ClaimFrame::Query(nonce)));
        for mine in [true, false] {
            let a = answer(&nonce, mine);
            assert_eq!(a[..8], [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 18]);
            assert_eq!(*payload(&a).last().unwrap(), u8::from(mine));
            assert_eq!(parse(payload(&a)), Some(ClaimFrame::Answer(nonce, mine)));
        }
    }

    #[test]
    fn anything_else_is_not_a_claim_frame() {
        let nonce = [7; NONCE_LEN];
        for bad in [
            &b""[..],
            b"x",
            &[b'?'; 16],
            &[b'?'; 18],
            &[&[b'!'][..], &nonce[..]].concat(),
            &[&[b'!'][..], &nonce[..], &[2]].concat(),
            &[&[b'!'][..], &nonce[..], &[1, 1]].concat(),
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
