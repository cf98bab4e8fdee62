//! lanesim's distribution frames: the one definition of the wire format,
//! which lanesim's own node (`lanesim::distribution`), the worlds' peers
//! and a node target all speak.
//!
//! Model:
//!
//! - A frame is `[u32 BE control_len][u32 BE payload_len][control][payload]`.
//! - Eight zero bytes are a keepalive (a frame with both parts empty).
//! - A header whose control length is [`NODE_FRAME`] (`u32::MAX`, more than
//!   any frame may hold) marks a frame of the node protocol itself, not
//!   the nodes' own: its payload (at most [`MAX_NODE_FRAME`] bytes) is a
//!   claim check on a live connection ([`crate::claim`]). No frame of the
//!   nodes' own can be mistaken for one, whatever its control bytes.
//! - A new stream starts with the handshake ([`crate::handshake`]): a
//!   hello, a challenge and a proof, three frames in this format. Frames
//!   after it are the nodes' own.
//! - Frames the world enqueues ([`crate::node::Node::enqueue`]) are whole
//!   frames already: write their bytes to the socket as given.
//! - A reader refuses a header whose body is over its maximum as soon as
//!   the header is whole, before it allocates anything for the body.
//!
//! What is here is sans-IO: encoding, and decoding from a buffer the reader
//! keeps across wake-ups (so a reader built on [`decode`] is cancel-safe).
//! How a node reads a stream (its buffers, a budget across connections, a
//! deadline per frame) is the node's own: lanesim's is
//! `lanesim::distribution::frame::read_frame_within`.

/// Header size in bytes.
pub const HEADER_LEN: usize = 8;

/// The keepalive frame.
pub const KEEPALIVE: [u8; HEADER_LEN] = [0; HEADER_LEN];

/// The control length that marks a node-protocol frame (see the model).
pub const NODE_FRAME: u32 = u32::MAX;

/// The largest node-protocol frame's payload.
pub const MAX_NODE_FRAME: u32 = 64;

/// One frame, its parts borrowing the buffer it was decoded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// Eight zero bytes.
    Keepalive,
    /// A frame of the node protocol itself (a claim query or answer,
    /// [`crate::claim`]): never delivered as the nodes' own.
    Node {
        /// Its payload, at most [`MAX_NODE_FRAME`] bytes.
        payload: &'a [u8],
    },
    /// Anything else.
    Data {
        /// The control part.
        control: &'a [u8],
        /// The payload part.
        payload: &'a [u8],
    },
}

/// A frame whose body is longer than the reader allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLarge {
    /// The body length the header claims.
    pub claimed: u64,
    /// The reader's maximum.
    pub max: u64,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "frame body of {} bytes exceeds the {}-byte maximum",
            self.claimed, self.max
        )
    }
}

impl std::error::Error for TooLarge {}

/// Encodes one frame.
///
/// # Panics
/// When a part is longer than `u32::MAX` bytes.
#[must_use]
pub fn encode(control: &[u8], payload: &[u8]) -> Vec<u8> {
    let len = |part: &[u8]| u32::try_from(part.len()).expect("a frame part fits a u32 length");
    let mut frame = Vec::with_capacity(HEADER_LEN + control.len() + payload.len());
    frame.extend_from_slice(&header(len(control), len(payload)));
    frame.extend_from_slice(control);
    frame.extend_from_slice(payload);
    frame
}

/// Encodes one node-protocol frame.
///
/// # Panics
/// When `payload` is longer than [`MAX_NODE_FRAME`].
#[must_use]
pub fn encode_node(payload: &[u8]) -> Vec<u8> {
    let len = u32::try_from(payload.len())
        .ok()
        .filter(|len| *len <= MAX_NODE_FRAME)
        .expect("a node-protocol frame fits MAX_NODE_FRAME");
    let mut frame = Vec::with_capacity(HEADER_LEN + payload.len());
    frame.extend_from_slice(&header(NODE_FRAME, len));
    frame.extend_from_slice(payload);
    frame
}

/// What a header announces once it is whole: a keepalive, a node-protocol
/// frame's payload length, or a frame of the nodes' own with its control
/// length and whole body's length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Announced {
    /// Eight zero bytes.
    Keepalive,
    /// A node-protocol frame whose payload is this long.
    Node(u32),
    /// A frame of the nodes' own: its control length and body length.
    Data {
        /// The control part's length.
        control: u32,
        /// Control and payload together.
        body: u64,
    },
}

/// What `header` announces, refused when its body is over `max` (or, for a
/// node-protocol frame, over [`MAX_NODE_FRAME`]).
///
/// # Errors
/// [`TooLarge`], for such a header.
pub fn announced(header: &[u8; HEADER_LEN], max: u64) -> Result<Announced, TooLarge> {
    let (control, payload) = part_lens(header);
    if control == NODE_FRAME {
        if payload > MAX_NODE_FRAME {
            return Err(TooLarge {
                claimed: u64::from(payload),
                max: u64::from(MAX_NODE_FRAME),
            });
        }
        return Ok(Announced::Node(payload));
    }
    let body = body_len(header);
    if body == 0 {
        return Ok(Announced::Keepalive);
    }
    if body > max {
        return Err(TooLarge { claimed: body, max });
    }
    Ok(Announced::Data { control, body })
}

/// The header of a frame whose parts are this long.
#[must_use]
pub fn header(control_len: u32, payload_len: u32) -> [u8; HEADER_LEN] {
    let mut header = [0; HEADER_LEN];
    header[..4].copy_from_slice(&control_len.to_be_bytes());
    header[4..].copy_from_slice(&payload_len.to_be_bytes());
    header
}

/// The control and payload lengths a header claims.
#[must_use]
pub fn part_lens(header: &[u8; HEADER_LEN]) -> (u32, u32) {
    let [c0, c1, c2, c3, p0, p1, p2, p3] = *header;
    (
        u32::from_be_bytes([c0, c1, c2, c3]),
        u32::from_be_bytes([p0, p1, p2, p3]),
    )
}

/// The body length a header claims (control + payload): 0 for a keepalive.
#[must_use]
pub fn body_len(header: &[u8; HEADER_LEN]) -> u64 {
    let (control, payload) = part_lens(header);
    u64::from(control) + u64::from(payload)
}

/// Decodes the frame at the start of `buf`: `Ok(None)` when more bytes are
/// needed, else the frame and how many bytes of `buf` it took. A header
/// claiming a body over `max` is refused as soon as the header is whole.
///
/// # Errors
/// [`TooLarge`], for such a header.
pub fn decode(buf: &[u8], max: u64) -> Result<Option<(Frame<'_>, usize)>, TooLarge> {
    let Some(header) = buf.first_chunk::<HEADER_LEN>() else {
        return Ok(None);
    };
    let (control_len, claimed) = match announced(header, max)? {
        Announced::Keepalive => return Ok(Some((Frame::Keepalive, HEADER_LEN))),
        Announced::Node(len) => {
            let end = HEADER_LEN + len as usize;
            return Ok(buf
                .get(HEADER_LEN..end)
                .map(|payload| (Frame::Node { payload }, end)));
        }
        Announced::Data { control, body } => (control as usize, body),
    };
    let end = HEADER_LEN + usize::try_from(claimed).unwrap_or(usize::MAX);
    let Some(body) = buf.get(HEADER_LEN..end) else {
        return Ok(None);
    };
    let (control, payload) = body.split_at(control_len);
    Ok(Some((Frame::Data { control, payload }, end)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_decodes_to_what_was_encoded_and_no_sooner_than_it_is_whole() {
        let frame = encode(b"ctl", b"payload");
        assert_eq!(
            frame[..HEADER_LEN],
            [0, 0, 0, 3, 0, 0, 0, 7],
            "control first"
        );
        assert_eq!(frame.len(), HEADER_LEN + 10);
        for cut in 0..frame.len() {
            assert_eq!(decode(&frame[..cut], 64), Ok(None), "cut at {cut}");
        }
        let mut two = frame.clone();
        two.extend_from_slice(&KEEPALIVE);
        let (first, used) = decode(&two, 64).unwrap().unwrap();
        assert_eq!(
            first,
            Frame::Data {
                control: b"ctl",
                payload: b"payload"
            }
        );
        assert_eq!(decode(&two[used..], 64), Ok(Some((Frame::Keepalive, 8))));
    }

    #[test]
    fn a_header_over_the_maximum_is_refused_before_its_body_arrives() {
        let frame = encode(b"", &[7; 65]);
        assert_eq!(
            decode(&frame[..HEADER_LEN], 64),
            Err(TooLarge {
                claimed: 65,
                max: 64
            })
        );
        assert!(decode(&frame, 65).unwrap().is_some());
    }

    #[test]
    fn a_node_frame_is_told_apart_by_its_header_whatever_the_nodes_send() {
        let node = encode_node(b"?claim");
        assert_eq!(node[..4], [0xff; 4], "the marker is the control length");
        for cut in 0..node.len() {
            assert_eq!(decode(&node[..cut], 64), Ok(None), "cut at {cut}");
        }
        assert_eq!(
            decode(&node, 64),
            Ok(Some((Frame::Node { payload: b"?claim" }, node.len())))
        );
        // The same bytes as a frame of the nodes' own stay theirs.
        let data = encode(b"?claim", b"");
        assert!(matches!(
            decode(&data, 64),
            Ok(Some((Frame::Data { .. }, _)))
        ));
        // Exactly at its bound it is whole; over it, refused whatever the
        // reader's maximum.
        let largest = encode_node(&[b'?'; MAX_NODE_FRAME as usize]);
        assert!(matches!(
            decode(&largest, 0),
            Ok(Some((Frame::Node { .. }, _)))
        ));
        let mut long = header(NODE_FRAME, MAX_NODE_FRAME + 1).to_vec();
        long.extend_from_slice(&[0; 65]);
        assert_eq!(
            decode(&long, u64::MAX),
            Err(TooLarge {
                claimed: 65,
                max: 64
            })
        );
    }
}
