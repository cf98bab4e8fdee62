//! Reading distribution frames from a stream that trusts nothing it is
//! sent. The format itself (`[u32 BE control_len][u32 BE payload_len]
//! [control][payload]`, eight zero bytes a keepalive), its encoder and its
//! sans-IO decoder have one definition, `lanesim_target::wire`, which this
//! module reads with, as the worlds' peers and any node do.
//!
//! Model: a header claiming more than the configured maximum is refused
//! before any allocation, and the body buffer grows only as bytes actually
//! arrive, so a peer that lies about a length costs at most what it really
//! sends. Every partly read body is charged to a [`FrameBudget`] shared by
//! the node's connections, and a body must arrive within a deadline of its
//! header.

use std::fmt;
use std::io;

use std::collections::BTreeMap;
use std::time::Duration;

use lanesim_target::wire::{self, Announced, HEADER_LEN};
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::planted::{Planted, PlantedBug};
use crate::shim::sync::{Arc, Counter, Ledger, Notify};
use crate::shim::time::{sleep, timeout};

/// Largest body (control + payload) the read side accepts unless configured.
pub const DEFAULT_MAX_FRAME: u64 = 64 * 1024 * 1024;

/// One frame as [`read_frame`] returns it, owning its parts (a decoded
/// [`wire::Frame`] borrows the reader's buffer instead).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// Eight zero bytes.
    Keepalive,
    /// A node-protocol frame (`lanesim_target::claim`): the node's own
    /// business, never delivered.
    Node {
        /// Its payload, at most `wire::MAX_NODE_FRAME` bytes.
        payload: Vec<u8>,
    },
    /// Anything else.
    Data {
        /// The control part.
        control: Vec<u8>,
        /// The payload part.
        payload: Vec<u8>,
    },
}

impl Frame {
    /// The frame with its parts borrowed, as `lanesim_target::wire` and
    /// `lanesim_target::handshake` take it.
    #[must_use]
    pub fn as_wire(&self) -> wire::Frame<'_> {
        match self {
            Self::Keepalive => wire::Frame::Keepalive,
            Self::Node { payload } => wire::Frame::Node { payload },
            Self::Data { control, payload } => wire::Frame::Data { control, payload },
        }
    }
}

impl From<wire::Frame<'_>> for Frame {
    /// The frame with its parts copied out of the buffer.
    fn from(frame: wire::Frame<'_>) -> Self {
        match frame {
            wire::Frame::Keepalive => Self::Keepalive,
            wire::Frame::Node { payload } => Self::Node {
                payload: payload.to_vec(),
            },
            wire::Frame::Data { control, payload } => Self::Data {
                control: control.to_vec(),
                payload: payload.to_vec(),
            },
        }
    }
}

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
    /// The [`FrameBudget`] shared by every connection is contended and
    /// this reader holds, or would hold, more than its share of it: it is
    /// refused (or evicted, for a reader within its share that needed
    /// room).
    OverShare {
        /// Its share in bytes when it was refused.
        share: u64,
        /// The budget's limit in bytes.
        limit: u64,
    },
    /// The body did not arrive within the frame deadline after its header
    /// (a slowloris: a trickle of bytes keeps the silence clock quiet).
    Slow {
        /// The deadline.
        deadline: Duration,
        /// Bytes the frame needed.
        expected: u64,
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
            Self::OverShare { share, limit } => write!(
                f,
                "over its share ({share} bytes) of the {limit}-byte budget for partly read frames, which others need"
            ),
            Self::Slow { deadline, expected } => write!(
                f,
                "a frame of {expected} bytes did not arrive within {deadline:?} of its header"
            ),
        }
    }
}

impl std::error::Error for ReadFrameError {}

/// Reads one frame, refusing bodies over `max` bytes without allocating them.
///
/// # Errors
/// See [`ReadFrameError`]. Not cancel-safe: a cancelled read loses its
/// partial frame, so callers cancel only when abandoning the stream (a
/// reader that must survive being woken mid-frame keeps its own buffer and
/// decodes with `lanesim_target::wire::decode`, as the worlds' peers do).
pub async fn read_frame<R: AsyncRead + Unpin + ?Sized>(
    reader: &mut R,
    max: u64,
) -> Result<Frame, ReadFrameError> {
    read_frame_within(reader, max, &FrameBudget::unlimited(), None).await
}

/// Bytes held in partly read frame bodies, shared by every connection of a
/// node, with a limit: a peer that sends most of a large frame and stops
/// holds what it sent, and many such peers together would otherwise hold
/// memory without bound (ten connections each sending 60 MB of a 60 MB
/// body, less one byte, held 620 MB). A reader charges each chunk before it
/// reads it and gives the whole frame's charge back once the frame is
/// complete or abandoned.
///
/// Fair shares. When a chunk does not fit, the budget is contended and
/// each reader holding bytes (the asking one included) is owed an equal
/// share, `limit / holders`. A reader that would go over its share is
/// refused (`OverShare`): it is the one spending others' memory. A reader
/// within its share is never refused for what others hold: every holder
/// over its share, largest first, is evicted (its read ends `OverShare` at
/// once, woken if it was waiting for bytes) until their holdings cover the
/// chunk, and the chunk is granted at once. Granted ahead of the evicted
/// holders' release, the total may pass the limit for that moment, by at
/// most what the evicted hold: never twice the limit. So an honest peer is
/// never downed because twelve others each sent 60 MiB of a 64 MiB frame
/// (`an_honest_peer_is_not_refused_for_what_others_hold`, and
/// `frame_budget_refuses_the_reader_over_its_share` for the offender's
/// side).
///
/// The count is a shim `Counter` and the table of holders a shim `Ledger`:
/// accounting, never a synchronisation point, so the model checkers need
/// not explore them.
#[derive(Debug)]
pub struct FrameBudget {
    used: Counter,
    limit: u64,
    holders: Ledger<BTreeMap<u64, Holder>>,
    next: Counter,
    planted: Planted,
}

/// One reader holding bytes, as the budget sees it.
#[derive(Debug)]
struct Holder {
    held: u64,
    /// Set when it is evicted; `evict` wakes its read.
    evicted: bool,
    evict: Arc<Notify>,
}

/// What a contended budget decided for a chunk.
enum Contended {
    /// Granted: holders over their share were evicted to make room.
    Granted,
    /// The asking reader would go over its share.
    OverShare(u64),
}

impl FrameBudget {
    /// A budget of `limit` bytes.
    #[must_use]
    pub fn new(limit: u64) -> Self {
        Self::planted(limit, Planted::none())
    }

    /// A budget of `limit` bytes, with `planted` (#16 refuses the reader
    /// that would cross it, whatever its share).
    #[must_use]
    pub fn planted(limit: u64, planted: Planted) -> Self {
        Self {
            used: Counter::new(0),
            limit,
            holders: Ledger::new(BTreeMap::new()),
            next: Counter::new(0),
            planted,
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

    /// Readers now holding bytes.
    #[must_use]
    pub fn holders(&self) -> usize {
        self.holders.lock().values().filter(|h| h.held > 0).count()
    }

    /// Charges `bytes` to reader `id` (holding `held`), which `evict`
    /// wakes: `Ok` when granted.
    fn charge(&self, id: u64, held: u64, bytes: u64, evict: &Arc<Notify>) -> Result<(), u64> {
        let mut holders = self.holders.lock();
        if holders.get(&id).is_some_and(|h| h.evicted) {
            return Err(self.limit);
        }
        if !self.used.add_within(bytes, self.limit) {
            match self.contended(&mut holders, id, held, bytes) {
                Contended::Granted => self.used.add(bytes),
                Contended::OverShare(share) => return Err(share),
            }
        }
        let holder = holders.entry(id).or_insert_with(|| Holder {
            held: 0,
            evicted: false,
            evict: Arc::clone(evict),
        });
        holder.held += bytes;
        Ok(())
    }

    fn contended(
        &self,
        holders: &mut BTreeMap<u64, Holder>,
        id: u64,
        held: u64,
        bytes: u64,
    ) -> Contended {
        let others = holders
            .iter()
            .filter(|(other, h)| **other != id && h.held > 0 && !h.evicted)
            .count() as u64;
        let share = self.limit / (others + 1);
        if held + bytes > share || self.planted.has(PlantedBug::BudgetRefusesTheNewest) {
            return Contended::OverShare(share);
        }
        // Every other holder holds at most `share` once those over it are
        // evicted, so the sum fits: evict largest first until it does.
        let need = (self.used.get() + bytes).saturating_sub(self.limit);
        let mut over: Vec<(u64, u64)> = holders
            .iter()
            .filter(|(other, h)| **other != id && h.held > share && !h.evicted)
            .map(|(other, h)| (h.held, *other))
            .collect();
        over.sort_unstable_by(|a, b| b.cmp(a));
        let mut freed = 0;
        for (amount, other) in over {
            if freed >= need {
                break;
            }
            let holder = holders.get_mut(&other).expect("listed just above");
            holder.evicted = true;
            holder.evict.notify_one();
            freed += amount;
        }
        Contended::Granted
    }

    fn release(&self, id: u64, bytes: u64) {
        self.used.sub(bytes);
        let mut holders = self.holders.lock();
        if let Some(holder) = holders.get_mut(&id) {
            holder.held = holder.held.saturating_sub(bytes);
        }
    }

    fn forget(&self, id: u64) {
        self.holders.lock().remove(&id);
    }
}

/// One reader's charge against a [`FrameBudget`], given back on drop
/// (whether the frame completed, failed or the read was cancelled).
struct Charge<'a> {
    budget: &'a FrameBudget,
    id: u64,
    held: u64,
    evict: Arc<Notify>,
}

impl<'a> Charge<'a> {
    fn new(budget: &'a FrameBudget) -> Self {
        let id = budget.next.next();
        Self {
            budget,
            id,
            held: 0,
            evict: Arc::new(Notify::new()),
        }
    }

    fn grow(&mut self, bytes: u64) -> Result<(), ReadFrameError> {
        self.budget
            .charge(self.id, self.held, bytes, &self.evict)
            .map_err(|share| ReadFrameError::OverShare {
                share,
                limit: self.budget.limit(),
            })?;
        self.held += bytes;
        Ok(())
    }

    fn shrink(&mut self, bytes: u64) {
        self.budget.release(self.id, bytes);
        self.held -= bytes;
    }
}

impl Drop for Charge<'_> {
    fn drop(&mut self) {
        self.budget.release(self.id, self.held);
        self.budget.forget(self.id);
    }
}

/// The most a reader charges and reads into a body at once.
const CHUNK: u64 = 8 * 1024;

/// How [`buffer_within`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Buffered {
    /// The other end closed the stream, or reading it failed.
    Closed,
    /// The budget evicted the buffer for others' frames: drop the stream.
    Evicted,
}

/// Reads what a stream sends before it has a read loop (a stream standing
/// by) into `early`, at most `max` bytes, charging them to `budget` as a
/// reader of its own: a buffer is bytes of frames not yet read, and the
/// budget bounds them all. Resolves when the other end closes the stream
/// or reading fails, or when the budget evicts the buffer; once `early`
/// holds `max` bytes, or the budget refuses it more, it stops reading and
/// waits (for an eviction, or for ever). Dropped, it gives its charge
/// back: the bytes go on to a read loop that charges them as it reads.
/// Without the charge, streams standing by under names of live ones held
/// 64 KiB each outside the budget (`mesh_spender` M9, seed 28;
/// `a_stream_standing_by_charges_what_it_buffers_to_the_frame_budget`).
pub(crate) async fn buffer_within<R: AsyncRead + Unpin + ?Sized>(
    read: &mut R,
    early: &mut Vec<u8>,
    max: usize,
    budget: &FrameBudget,
) -> Buffered {
    let mut charge = Charge::new(budget);
    let mut chunk = [0u8; 1024];
    loop {
        let room = chunk.len().min(max.saturating_sub(early.len()));
        if room == 0 || charge.grow(room as u64).is_err() {
            charge.evict.notified().await;
            return Buffered::Evicted;
        }
        let read = tokio::select! {
            biased;
            () = charge.evict.notified() => return Buffered::Evicted,
            read = read.read(&mut chunk[..room]) => read,
        };
        match read {
            Ok(0) | Err(_) => return Buffered::Closed,
            Ok(n) => {
                charge.shrink((room - n) as u64);
                early.extend_from_slice(&chunk[..n]);
            }
        }
    }
}

/// [`read_frame`], charging the body's bytes to `budget` as they are read,
/// and giving the body `deadline` from the moment its header is whole.
///
/// # Errors
/// As [`read_frame`], [`ReadFrameError::OverShare`] and
/// [`ReadFrameError::Slow`].
pub async fn read_frame_within<R: AsyncRead + Unpin + ?Sized>(
    reader: &mut R,
    max: u64,
    budget: &FrameBudget,
    deadline: Option<Duration>,
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
    let (control_len, len) = match body_len(&header, max)? {
        Announced::Keepalive => return Ok(Frame::Keepalive),
        Announced::Node(len) => {
            // At most `MAX_NODE_FRAME` bytes: read whole, charged to nobody,
            // and held to the frame deadline like any body (a node frame
            // trickled a byte at a time would otherwise hold the stream for
            // as long as its bytes last:
            // `a_node_frame_trickled_is_cut_at_the_frame_deadline`).
            let mut payload = vec![0; len as usize];
            let expected = HEADER_LEN as u64 + u64::from(len);
            within(deadline, expected, read_node_payload(reader, &mut payload)).await?;
            return Ok(Frame::Node { payload });
        }
        Announced::Data { control, body } => (u64::from(control), body),
    };
    let mut body = Vec::new();
    // #18 times each read instead of the frame (`read_body`).
    let per_read = deadline.filter(|_| budget.planted.has(PlantedBug::FrameDeadlinePerRead));
    let read_body = read_body(reader, len, budget, &mut body, per_read);
    let whole = deadline.filter(|_| per_read.is_none());
    within(whole, HEADER_LEN as u64 + len, read_body).await?;
    // `control_len <= len <= max`, and `max` bounds what we could allocate.
    let payload = body.split_off(control_len as usize);
    Ok(Frame::Data {
        control: body,
        payload,
    })
}

/// Reads a body of `len` bytes into `body`. It grows with what arrives (a
/// chunk at a time), never to the claimed size up front, and every chunk
/// is charged before it is read.
async fn read_body<R: AsyncRead + Unpin + ?Sized>(
    reader: &mut R,
    len: u64,
    budget: &FrameBudget,
    body: &mut Vec<u8>,
    per_read: Option<Duration>,
) -> Result<(), ReadFrameError> {
    let mut charge = Charge::new(budget);
    while (body.len() as u64) < len {
        let want = (len - body.len() as u64).min(CHUNK);
        charge.grow(want)?;
        let start = body.len();
        // `want <= CHUNK`, and `len <= max` bounds the whole body.
        body.resize(start + want as usize, 0);
        let got = loop {
            let read = tokio::select! {
                biased;
                () = charge.evict.notified() => {
                    return Err(ReadFrameError::OverShare {
                        share: budget.limit() / (budget.holders() as u64).max(1),
                        limit: budget.limit(),
                    });
                }
                read = reader.read(&mut body[start..]) => read,
                () = per_read_deadline(per_read) => {
                    return Err(ReadFrameError::Slow {
                        deadline: per_read.unwrap_or_default(),
                        expected: HEADER_LEN as u64 + len,
                    });
                }
            };
            match read {
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
    Ok(())
}

/// `read` within `deadline` of now, if any: past it, `Slow` for a frame
/// of `expected` bytes (a body and a node payload alike).
async fn within(
    deadline: Option<Duration>,
    expected: u64,
    read: impl std::future::Future<Output = Result<(), ReadFrameError>>,
) -> Result<(), ReadFrameError> {
    match deadline {
        None => read.await,
        Some(deadline) => timeout(deadline, read)
            .await
            .map_err(|_| ReadFrameError::Slow { deadline, expected })?,
    }
}

/// Planted #18's deadline on one read (never, without the bug).
async fn per_read_deadline(per_read: Option<Duration>) {
    match per_read {
        Some(deadline) => sleep(deadline).await,
        None => std::future::pending().await,
    }
}

/// What a header announces, its body refused over `max`.
fn body_len(header: &[u8; HEADER_LEN], max: u64) -> Result<Announced, ReadFrameError> {
    wire::announced(header, max).map_err(|too| ReadFrameError::TooLarge {
        len: too.claimed,
        max: too.max,
    })
}

/// Reads a node-protocol frame's small payload whole.
async fn read_node_payload<R: AsyncRead + Unpin + ?Sized>(
    reader: &mut R,
    payload: &mut [u8],
) -> Result<(), ReadFrameError> {
    let mut filled = 0;
    while filled < payload.len() {
        match reader.read(&mut payload[filled..]).await {
            Ok(0) => {
                return Err(ReadFrameError::Truncated {
                    expected: (HEADER_LEN + payload.len()) as u64,
                    got: (HEADER_LEN + filled) as u64,
                })
            }
            Ok(n) => filled += n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(ReadFrameError::Io(error)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holding<'a>(budget: &'a FrameBudget, amounts: &[u64]) -> Vec<Charge<'a>> {
        amounts
            .iter()
            .map(|&amount| {
                let mut charge = Charge::new(budget);
                charge.grow(amount).expect("room for the holders");
                charge
            })
            .collect()
    }

    fn evicted(budget: &FrameBudget, charge: &Charge<'_>) -> bool {
        budget
            .holders
            .lock()
            .get(&charge.id)
            .is_some_and(|h| h.evicted)
    }

    /// A stream standing by buffers what it is sent as a reader of the
    /// budget: charged while it holds it, stopped (not dropped) when the
    /// budget has no more room for it, given back when it is dropped, and
    /// ended when a reader within its share evicts it.
    #[tokio::test(start_paused = true)]
    async fn a_stream_standing_by_charges_what_it_buffers_to_the_frame_budget() {
        let budget = FrameBudget::new(4096);
        let sent = vec![7u8; 10 * 1024];
        let mut read: &[u8] = &sent;
        let mut early = Vec::new();
        {
            let buffering = buffer_within(&mut read, &mut early, 64 * 1024, &budget);
            tokio::pin!(buffering);
            tokio::select! {
                biased;
                ended = &mut buffering => panic!("ended with room in the socket: {ended:?}"),
                () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
            }
            assert_eq!(budget.used(), 4096, "charged what it buffered");
            // A reader within its share (half) evicts the buffer.
            let mut reader = Charge::new(&budget);
            assert!(reader.grow(1024).is_ok());
            assert_eq!(buffering.await, Buffered::Evicted);
        }
        assert_eq!(early.len(), 4096, "it stopped at the budget");
        assert_eq!(budget.used(), 0, "dropped, it gave its charge back");
        // A close ends it, and a buffer held to `max` stops there.
        let mut closed: &[u8] = &sent[..100];
        let mut early = Vec::new();
        let ended = buffer_within(&mut closed, &mut early, 64 * 1024, &budget).await;
        assert_eq!(
            (ended, early.len(), budget.used()),
            (Buffered::Closed, 100, 0)
        );
    }

    /// A node frame's payload is bounded by the frame deadline as a data
    /// frame's body is: one trickled a byte at a time is cut at it.
    #[tokio::test(start_paused = true)]
    async fn a_node_frame_trickled_is_cut_at_the_frame_deadline() {
        use tokio::io::AsyncWriteExt;
        const DEADLINE: Duration = Duration::from_millis(500);
        let (mut writer, mut reader) = tokio::io::duplex(1024);
        let mut header = wire::header(wire::NODE_FRAME, 40).to_vec();
        header.push(1);
        writer.write_all(&header).await.unwrap();
        let drip = tokio::spawn(async move {
            // The whole frame, over 3.9 s: a read with no deadline on it
            // returns it whole.
            for _ in 0..39 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                if writer.write_all(&[1]).await.is_err() {
                    return;
                }
            }
        });
        let started = tokio::time::Instant::now();
        let budget = FrameBudget::unlimited();
        let read = read_frame_within(&mut reader, 1024, &budget, Some(DEADLINE)).await;
        assert!(
            matches!(read, Err(ReadFrameError::Slow { deadline, expected: 48 }) if deadline == DEADLINE),
            "{read:?}"
        );
        assert_eq!(started.elapsed(), DEADLINE);
        drip.abort();
    }

    /// 60 and 30 of 100 held; a newcomer's 20 does not fit. Its share is a
    /// third (33): it is granted, and the holder over its share (60) is
    /// evicted, not the one within it (30).
    #[test]
    fn a_reader_within_its_share_evicts_the_holder_over_it() {
        let budget = FrameBudget::new(100);
        let held = holding(&budget, &[60, 30]);
        let mut newcomer = Charge::new(&budget);
        assert!(newcomer.grow(20).is_ok());
        assert!(evicted(&budget, &held[0]) && !evicted(&budget, &held[1]));
        assert_eq!(budget.used(), 110, "granted ahead of the release");
        // The evicted holder's next chunk is refused; the other's is not
        // refused for the newcomer's sake (its share is a third: 33).
        let mut held = held;
        assert!(matches!(
            held[0].grow(1),
            Err(ReadFrameError::OverShare { .. })
        ));
        drop(held.remove(0));
        assert_eq!(budget.used(), 50);
        assert!(held[0].grow(3).is_ok());
    }

    /// The reader that would go over its share is the one refused, and it
    /// evicts nobody.
    #[test]
    fn a_reader_over_its_share_is_refused_and_evicts_nobody() {
        let budget = FrameBudget::new(100);
        let mut held = holding(&budget, &[60, 30]);
        let refused = held[0].grow(20);
        assert!(
            matches!(
                refused,
                Err(ReadFrameError::OverShare {
                    share: 50,
                    limit: 100
                })
            ),
            "{refused:?}"
        );
        assert!(!evicted(&budget, &held[1]));
        assert_eq!(budget.used(), 90);
    }

    /// Largest first, and only as many as the chunk needs.
    #[test]
    fn evictions_take_the_largest_over_the_share_first_and_stop_when_enough() {
        let budget = FrameBudget::new(100);
        let held = holding(&budget, &[40, 35, 25]);
        let mut newcomer = Charge::new(&budget);
        assert!(newcomer.grow(10).is_ok());
        let flags: Vec<bool> = held.iter().map(|c| evicted(&budget, c)).collect();
        assert_eq!(flags, [true, false, false]);
    }

    /// Every charge comes back when its readers are gone, evicted or not.
    #[test]
    fn every_charge_comes_back() {
        let budget = FrameBudget::new(100);
        let held = holding(&budget, &[60, 30]);
        let mut newcomer = Charge::new(&budget);
        newcomer.grow(20).unwrap();
        drop(held);
        drop(newcomer);
        assert_eq!((budget.used(), budget.holders()), (0, 0));
        assert!(budget.holders.lock().is_empty());
    }
}
