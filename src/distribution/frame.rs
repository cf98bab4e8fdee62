//! The distribution frame: `[u32 BE control_len][u32 BE payload_len]
//! [control][payload]`; eight zero bytes are a keepalive.
//!
//! The read side trusts nothing it is sent: a header claiming more than the
//! configured maximum is refused before any allocation, and the body buffer
//! grows only as bytes actually arrive, so a peer that lies about a length
//! costs at most what it really sends.

use std::fmt;
use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::shim::sync::Counter;

/// Header size in bytes.
pub const HEADER_LEN: usize = 8;
/// Largest body (control + payload) the read side accepts unless configured.
pub const DEFAULT_MAX_FRAME: u64 = 64 * 1024 * 1024;
/// The keepalive frame.
pub const KEEPALIVE: [u8; HEADER_LEN] = [0; HEADER_LEN];

/// One decoded frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// Eight zero bytes.
    Keepalive,
    /// Anything else.
    Data {
        /// The control part.
        control: Vec<u8>,
        /// The payload part.
        payload: Vec<u8>,
    },
}

/// One frame decoded in place: its parts borrow the reader's buffer
/// ([`decode`]), so a reader that needs only the control part copies
/// nothing else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameRef<'a> {
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

impl FrameRef<'_> {
    /// The frame with its parts copied out of the buffer.
    #[must_use]
    pub fn to_frame(self) -> Frame {
        match self {
            Self::Keepalive => Frame::Keepalive,
            Self::Data { control, payload } => Frame::Data {
                control: control.to_vec(),
                payload: payload.to_vec(),
            },
        }
    }
}

/// Encodes one frame.
///
/// # Errors
/// When a part is longer than `u32::MAX` bytes.
pub fn encode(control: &[u8], payload: &[u8]) -> Result<Vec<u8>, FrameTooLong> {
    let control_len = u32::try_from(control.len()).map_err(|_| FrameTooLong)?;
    let payload_len = u32::try_from(payload.len()).map_err(|_| FrameTooLong)?;
    let mut frame = Vec::with_capacity(HEADER_LEN + control.len() + payload.len());
    frame.extend_from_slice(&control_len.to_be_bytes());
    frame.extend_from_slice(&payload_len.to_be_bytes());
    frame.extend_from_slice(control);
    frame.extend_from_slice(payload);
    Ok(frame)
}

/// A part does not fit the header's `u32` length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameTooLong;

impl fmt::Display for FrameTooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("frame part longer than u32::MAX bytes")
    }
}

impl std::error::Error for FrameTooLong {}

/// Why no frame could be read.
#[derive(Debug)]
pub enum ReadFrameError {
    /// End of stream exactly at a frame boundary: the peer closed cleanly.
    Closed,
    /// End of stream inside a header or body.
    Truncated {
        /// Bytes the frame needed (header, or header + body).
        expected: u64,
        /// Bytes that arrived.
        got: u64,
    },
    /// The header claims a body larger than the maximum.
    TooLarge {
        /// Claimed body length.
        len: u64,
        /// The configured maximum.
        max: u64,
    },
    /// The stream failed.
    Io(io::Error),
    /// Growing this frame's body would take the bytes held in partly read
    /// frames, across every connection sharing the [`FrameBudget`], over
    /// its limit: this reader is the newest offender and is refused.
    OverBudget {
        /// The budget's limit in bytes.
        limit: u64,
    },
}

impl fmt::Display for ReadFrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Closed => f.write_str("peer closed the stream"),
            Self::Truncated { expected, got } => {
                write!(f, "stream ended inside a frame: {got} of {expected} bytes")
            }
            Self::TooLarge { len, max } => {
                write!(
                    f,
                    "frame body of {len} bytes exceeds the {max}-byte maximum"
                )
            }
            Self::Io(error) => write!(f, "read failed: {error}"),
            Self::OverBudget { limit } => write!(
                f,
                "partly read frames across all connections would exceed the {limit}-byte budget"
            ),
        }
    }
}

impl std::error::Error for ReadFrameError {}

/// Reads one frame, refusing bodies over `max` bytes without allocating them.
///
/// # Errors
/// See [`ReadFrameError`]. Not cancel-safe: a cancelled read loses its
/// partial frame, so callers cancel only when abandoning the stream.
pub async fn read_frame<R: AsyncRead + Unpin + ?Sized>(
    reader: &mut R,
    max: u64,
) -> Result<Frame, ReadFrameError> {
    read_frame_within(reader, max, &FrameBudget::unlimited()).await
}

/// Bytes held in partly read frame bodies, shared by every connection of a
/// node, with a limit: a peer that sends most of a large frame and stops
/// holds what it sent, and many such peers together would otherwise hold
/// memory without bound (ten connections each sending 60 MB of a 60 MB
/// body, less one byte, held 620 MB). A reader charges each chunk before it
/// reads it and gives the whole frame's charge back once the frame is
/// complete or abandoned; a chunk that would go over the limit refuses that
/// reader (the newest offender), not the ones already holding bytes.
/// Pinned by `frame_budget_refuses_the_reader_that_would_cross_it`.
///
/// The count is a shim `Counter`: accounting, never a synchronisation
/// point, so the model checkers need not explore it.
#[derive(Debug)]
pub struct FrameBudget {
    used: Counter,
    limit: u64,
}

impl FrameBudget {
    /// A budget of `limit` bytes.
    #[must_use]
    pub fn new(limit: u64) -> Self {
        Self {
            used: Counter::new(0),
            limit,
        }
    }

    /// No limit (a single stream read on its own).
    #[must_use]
    pub fn unlimited() -> Self {
        Self::new(u64::MAX)
    }

    /// Bytes now held in partly read frames.
    #[must_use]
    pub fn used(&self) -> u64 {
        self.used.get()
    }

    /// The limit.
    #[must_use]
    pub fn limit(&self) -> u64 {
        self.limit
    }

    fn try_charge(&self, bytes: u64) -> bool {
        self.used.add_within(bytes, self.limit)
    }

    fn release(&self, bytes: u64) {
        self.used.sub(bytes);
    }
}

/// One reader's charge against a [`FrameBudget`], given back on drop
/// (whether the frame completed, failed or the read was cancelled).
struct Charge<'a> {
    budget: &'a FrameBudget,
    held: u64,
}

impl Charge<'_> {
    fn grow(&mut self, bytes: u64) -> bool {
        let ok = self.budget.try_charge(bytes);
        if ok {
            self.held += bytes;
        }
        ok
    }

    fn shrink(&mut self, bytes: u64) {
        self.budget.release(bytes);
        self.held -= bytes;
    }
}

impl Drop for Charge<'_> {
    fn drop(&mut self) {
        self.budget.release(self.held);
    }
}

/// The most a reader charges and reads into a body at once.
const CHUNK: u64 = 8 * 1024;

/// [`read_frame`], charging the body's bytes to `budget` as they are read.
///
/// # Errors
/// As [`read_frame`], and [`ReadFrameError::OverBudget`].
pub async fn read_frame_within<R: AsyncRead + Unpin + ?Sized>(
    reader: &mut R,
    max: u64,
    budget: &FrameBudget,
) -> Result<Frame, ReadFrameError> {
    let mut header = [0u8; HEADER_LEN];
    let mut filled = 0;
    while filled < HEADER_LEN {
        match reader.read(&mut header[filled..]).await {
            Ok(0) if filled == 0 => return Err(ReadFrameError::Closed),
            Ok(0) => {
                return Err(ReadFrameError::Truncated {
                    expected: HEADER_LEN as u64,
                    got: filled as u64,
                })
            }
            Ok(n) => filled += n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(ReadFrameError::Io(error)),
        }
    }
    let Some((control_len, len)) = body_len(&header, max)? else {
        return Ok(Frame::Keepalive);
    };
    // Grows with what arrives (a chunk at a time), never to the claimed
    // size up front, and every chunk is charged before it is read.
    let mut body = Vec::new();
    let mut charge = Charge { budget, held: 0 };
    while (body.len() as u64) < len {
        let want = (len - body.len() as u64).min(CHUNK);
        if !charge.grow(want) {
            return Err(ReadFrameError::OverBudget {
                limit: budget.limit(),
            });
        }
        let start = body.len();
        // `want <= CHUNK`, and `len <= max` bounds the whole body.
        body.resize(start + want as usize, 0);
        let got = loop {
            match reader.read(&mut body[start..]).await {
                Ok(n) => break n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(ReadFrameError::Io(error)),
            }
        };
        body.truncate(start + got);
        charge.shrink(want - got as u64);
        if got == 0 {
            return Err(ReadFrameError::Truncated {
                expected: HEADER_LEN as u64 + len,
                got: HEADER_LEN as u64 + body.len() as u64,
            });
        }
    }
    drop(charge);
    // `control_len <= len <= max`, and `max` bounds what we could allocate.
    let payload = body.split_off(control_len as usize);
    Ok(Frame::Data {
        control: body,
        payload,
    })
}

/// What a header announces: `None` for a keepalive, else the control
/// length and the whole body's length, refused over `max`.
fn body_len(header: &[u8; HEADER_LEN], max: u64) -> Result<Option<(u64, u64)>, ReadFrameError> {
    if *header == KEEPALIVE {
        return Ok(None);
    }
    let [c0, c1, c2, c3, p0, p1, p2, p3] = *header;
    let control_len = u64::from(u32::from_be_bytes([c0, c1, c2, c3]));
    let payload_len = u64::from(u32::from_be_bytes([p0, p1, p2, p3]));
    let len = control_len + payload_len;
    if len > max {
        return Err(ReadFrameError::TooLarge { len, max });
    }
    Ok(Some((control_len, len)))
}

/// Decodes the frame at the front of `buf` without any I/O: `Ok(None)` while
/// more bytes are needed, else the frame (borrowing `buf`) and how many
/// bytes of `buf` it took. For readers that keep their own buffer across
/// wake-ups, which makes them cancel-safe where [`read_frame`] is not (a
/// `tokio_util` codec, a peer that must survive being woken mid-frame). A
/// header over `max` is refused as soon as it is complete.
///
/// # Errors
/// [`ReadFrameError::TooLarge`]; never the others, which need a stream.
pub fn decode(buf: &[u8], max: u64) -> Result<Option<(FrameRef<'_>, usize)>, ReadFrameError> {
    let Some(header) = buf.first_chunk::<HEADER_LEN>() else {
        return Ok(None);
    };
    let Some((control_len, len)) = body_len(header, max)? else {
        return Ok(Some((FrameRef::Keepalive, HEADER_LEN)));
    };
    // `len <= max`, which the caller chose to be addressable.
    let (control_len, end) = (control_len as usize, HEADER_LEN + len as usize);
    let Some(body) = buf.get(HEADER_LEN..end) else {
        return Ok(None);
    };
    let (control, payload) = body.split_at(control_len);
    Ok(Some((FrameRef::Data { control, payload }, end)))
}
