//! The protocol the worlds' peers speak, which a node target must speak
//! too: lanesim's distribution frames.
//!
//! - A frame is `[u32 BE control_len][u32 BE payload_len][control][payload]`.
//! - Eight zero bytes are a keepalive (a frame with both parts empty).
//! - A new stream starts with the handshake ([`crate::handshake`]): a
//!   hello, a challenge and a proof, three frames in this format. Frames
//!   after it are the nodes' own.
//! - Frames the world enqueues ([`crate::node::Node::enqueue`]) are whole
//!   frames already: write their bytes to the socket as given.
//!
//! This module is the testbed's own reading of the format, kept apart from
//! any implementation of it, so a codec bug in the code under test is not
//! shared by the peers that check it.

/// Header size in bytes.
pub const HEADER_LEN: usize = 8;

/// The keepalive frame.
pub const KEEPALIVE: [u8; HEADER_LEN] = [0; HEADER_LEN];

/// One frame, its parts borrowing the buffer it was decoded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// Eight zero bytes.
    Keepalive,
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

/// Encodes one frame.
///
/// # Panics
/// When a part is longer than `u32::MAX` bytes.
#[must_use]
pub fn encode(control: &[u8], payload: &[u8]) -> Vec<u8> {
    let len = |part: &[u8]| u32::try_from(part.len()).expect("a frame part fits a u32 length");
    let mut frame = Vec::with_capacity(HEADER_LEN + control.len() + payload.len());
    frame.extend_from_slice(&len(control).to_be_bytes());
    frame.extend_from_slice(&len(payload).to_be_bytes());
    frame.extend_from_slice(control);
    frame.extend_from_slice(payload);
    frame
}

/// The body length a header claims (control + payload).
#[must_use]
pub fn body_len(header: &[u8; HEADER_LEN]) -> u64 {
    let control = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
    let payload = u32::from_be_bytes([header[4], header[5], header[6], header[7]]);
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
    let claimed = body_len(header);
    if claimed == 0 {
        return Ok(Some((Frame::Keepalive, HEADER_LEN)));
    }
    if claimed > max {
        return Err(TooLarge { claimed, max });
    }
    let control_len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
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
}
