//! What a node holds of frames it has not finished reading, measured from
//! outside: the bytes its read halves took from the network that belong to
//! a frame whose last byte it has not read yet.
//!
//! Model. Every read a production node makes passes through the world's
//! transport (`net::GatedRead`), which feeds the bytes to a [`FrameMeter`]:
//! the wire's framing (an 8-byte header saying how long the body is), so
//! the meter knows how much of the current frame's body was read. A
//! [`Holding`] sums that over the node's open streams; when the sum crosses
//! the node's frame budget (either way) it calls its watcher, which logs
//! `MeshHeld` (M9: a node may not hold more than its budget for longer than
//! an instant). What a node read ahead of its budget counts as held: it is
//! in the node's memory all the same. Pinned by the unit tests below and by
//! `mesh_spender` (M9).

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use lanesim_target::wire::{body_len, part_lens, HEADER_LEN, NODE_FRAME};

/// One stream's framing, as its reader read it.
#[derive(Debug, Default)]
pub struct FrameMeter {
    header: [u8; HEADER_LEN],
    /// Header bytes read of the current frame.
    filled: usize,
    /// Body bytes still to come of the current frame.
    remaining: u64,
    /// Body bytes read of the current frame.
    read: u64,
}

impl FrameMeter {
    /// Takes `bytes` read from the stream; returns how many body bytes of
    /// an unfinished frame the reader now holds.
    pub fn feed(&mut self, mut bytes: &[u8]) -> u64 {
        while !bytes.is_empty() {
            if self.remaining == 0 {
                let take = (HEADER_LEN - self.filled).min(bytes.len());
                self.header[self.filled..self.filled + take].copy_from_slice(&bytes[..take]);
                self.filled += take;
                bytes = &bytes[take..];
                if self.filled == HEADER_LEN {
                    self.filled = 0;
                    // A node-protocol frame's control length is its
                    // marker, not a length: its body is its payload.
                    self.remaining = match part_lens(&self.header) {
                        (NODE_FRAME, payload) => u64::from(payload),
                        _ => body_len(&self.header),
                    };
                    self.read = 0;
                }
            } else {
                let take = self.remaining.min(bytes.len() as u64);
                self.remaining -= take;
                self.read += take;
                bytes = &bytes[usize::try_from(take).unwrap_or(usize::MAX)..];
                if self.remaining == 0 {
                    self.read = 0;
                }
            }
        }
        self.read
    }
}

/// What a [`Watcher`] is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crossing {
    /// Past half the budget, the first time: the spending pressed it.
    Half,
    /// Over the budget, holding this much.
    Over(u64),
    /// Back within it, having held at most this much meanwhile.
    Under(u64),
}

/// Told when a node's held bytes cross half its budget (once) or the
/// budget (either way).
pub type Watcher = Box<dyn Fn(Crossing) + Send + Sync>;

/// The held bytes of one node's open streams.
#[derive(Default)]
pub struct Holding {
    state: Mutex<State>,
    watch: OnceLock<(u64, Watcher)>,
}

#[derive(Default)]
struct State {
    streams: BTreeMap<u64, u64>,
    next: u64,
    total: u64,
    over: bool,
    /// The most held while over.
    peak: u64,
    /// Past half the budget once.
    pressed: bool,
}

impl Holding {
    /// Calls `watcher` when the total first passes half of `budget`, and
    /// whenever it crosses `budget`: with the total when it goes over, with
    /// the peak when it comes back.
    pub fn watch(&self, budget: u64, watcher: Watcher) {
        let _ = self.watch.set((budget, watcher));
    }

    /// What the node's open streams hold now.
    pub fn total(&self) -> u64 {
        self.lock().total
    }

    /// A new stream's id.
    pub fn open(&self) -> u64 {
        let mut state = self.lock();
        state.next += 1;
        state.next
    }

    /// Stream `id` now holds `held` bytes (0: done, closed or dropped).
    pub fn hold(&self, id: u64, held: u64) {
        let crossed = {
            let mut state = self.lock();
            let before = if held == 0 {
                state.streams.remove(&id)
            } else {
                state.streams.insert(id, held)
            }
            .unwrap_or(0);
            state.total = state.total - before + held;
            let Some((budget, _)) = self.watch.get() else {
                return;
            };
            let mut told = Vec::new();
            if !state.pressed && state.total > budget / 2 {
                state.pressed = true;
                told.push(Crossing::Half);
            }
            let over = state.total > *budget;
            let crossed = over != state.over;
            state.over = over;
            if over {
                state.peak = state.peak.max(state.total);
            }
            if crossed {
                told.push(if over {
                    Crossing::Over(state.total)
                } else {
                    Crossing::Under(std::mem::take(&mut state.peak))
                });
            }
            told
        };
        // Told without the lock: the watcher logs.
        if let Some((_, watcher)) = self.watch.get() {
            for crossing in crossed {
                watcher(crossing);
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn frame(body: usize) -> Vec<u8> {
        let mut frame = 0_u32.to_be_bytes().to_vec();
        frame.extend_from_slice(&u32::try_from(body).unwrap().to_be_bytes());
        frame.resize(HEADER_LEN + body, 7);
        frame
    }

    #[test]
    fn a_meter_holds_the_unfinished_frames_body_read_so_far() {
        let mut meter = FrameMeter::default();
        let mut bytes = frame(3);
        bytes.extend(frame(0));
        bytes.extend(frame(100));
        // Two whole frames and the header and 10 bytes of a third.
        assert_eq!(meter.feed(&bytes[..3 + HEADER_LEN * 3 + 10]), 10);
        assert_eq!(meter.feed(&bytes[3 + HEADER_LEN * 3 + 10..][..89]), 99);
        assert_eq!(meter.feed(&bytes[bytes.len() - 1..]), 0);
        // A header split across reads holds nothing yet.
        assert_eq!(meter.feed(&frame(5)[..4]), 0);
        assert_eq!(meter.feed(&frame(5)[4..10]), 2);
    }

    /// A claim query between two frames: its 17-byte payload is its body
    /// (the control length is the node-protocol marker, not a length), so
    /// the frame after it is metered from its own header. Read as a
    /// 4 GiB body, the query held every later byte of the stream (found
    /// by `hunt --world mesh --seed 1`, an M9 breach of 17 bytes).
    #[test]
    fn a_node_protocol_frame_ends_with_its_payload() {
        let mut meter = FrameMeter::default();
        let query = lanesim_target::claim::query(&[3; 16]);
        assert_eq!(meter.feed(&query), 0);
        assert_eq!(meter.feed(&frame(50)[..HEADER_LEN + 20]), 20);
    }

    #[test]
    fn a_holding_tells_its_watcher_half_once_then_each_crossing_with_the_total_then_the_peak() {
        let holding = Holding::default();
        let told = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&told);
        holding.watch(
            100,
            Box::new(move |crossing| log.lock().unwrap().push(crossing)),
        );
        let (a, b) = (holding.open(), holding.open());
        holding.hold(a, 60);
        holding.hold(b, 50);
        holding.hold(b, 70);
        holding.hold(a, 20);
        holding.hold(b, 0);
        holding.hold(a, 0);
        holding.hold(a, 60);
        assert_eq!(
            *told.lock().unwrap(),
            vec![Crossing::Half, Crossing::Over(110), Crossing::Under(130)]
        );
    }
}
