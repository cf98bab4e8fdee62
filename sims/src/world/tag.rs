//! What the sender world writes in each frame's control part, so a peer can
//! log exactly what arrived: lane, pinned generation (0 for data, which is
//! resolved at write time), sequence number, and link (0 for none).

use std::sync::Arc;

use lanesim_target::wire::{encode, header, part_lens, HEADER_LEN};

use crate::event::Lane;

/// Bytes in a tag.
pub const TAG_LEN: usize = 25;

/// What a frame's payload is filled with.
const FILLER: u8 = 0xA5;

/// A decoded tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag {
    /// Which lane the frame was enqueued on.
    pub lane: Lane,
    /// The pinned generation (controls).
    pub generation: u64,
    /// Per-node (data) or global (control) sequence number.
    pub seq: u64,
    /// The link an EXIT control is for.
    pub link: Option<u64>,
}

fn lane_byte(lane: Lane) -> u8 {
    match lane {
        Lane::Data => b'D',
        Lane::Control => b'C',
    }
}

impl Tag {
    /// A whole frame: this tag as control, `payload_len` filler bytes.
    #[must_use]
    pub fn frame(&self, payload_len: usize) -> Vec<u8> {
        encode(&self.control(), &vec![FILLER; payload_len])
    }

    /// The same frame as [`Tag::frame`], shared as the sender takes it:
    /// written once, in place, into the `Arc` the sender keeps. Encoding a
    /// fresh filler vector and converting it cost three allocations and
    /// copies of every frame (a sixth of the sender world's time with 40 kB
    /// frames); copying from a reused scratch buffer still cost a read and
    /// a write of every byte; filling in place is ~6% of a control-flood
    /// seed faster than that copy (A/B, 6 alternating runs of 1,000 seeds). `iter().collect()` into an `Arc<[u8]>` would be safe,
    /// but writes byte by byte: 4.5x slower.
    #[must_use]
    pub fn shared_frame(&self, payload_len: usize) -> Arc<[u8]> {
        let start = HEADER_LEN + TAG_LEN;
        let control_len = u32::try_from(TAG_LEN).expect("a tag is short");
        let payload = u32::try_from(payload_len).expect("small frames");
        let mut head = [0u8; HEADER_LEN + TAG_LEN];
        head[..HEADER_LEN].copy_from_slice(&header(control_len, payload));
        head[HEADER_LEN..].copy_from_slice(&self.control());
        let mut frame = Arc::<[u8]>::new_uninit_slice(start + payload_len);
        let bytes = Arc::get_mut(&mut frame).expect("a fresh Arc is unique");
        for (slot, byte) in bytes.iter_mut().zip(head) {
            slot.write(byte);
        }
        for slot in &mut bytes[start..] {
            slot.write(FILLER);
        }
        // SAFETY: the two loops above wrote every byte: the first `start`
        // from `head` (exactly `start` long), the rest with the filler.
        unsafe { frame.assume_init() }
    }

    /// Whether `payload` is what [`Tag::frame`] puts after a tag: filler
    /// only. A reader that lost a frame boundary (a write cut short and
    /// another frame appended) takes the next frame's header and tag into
    /// its payload, which this refuses.
    #[must_use]
    pub fn payload_intact(payload: &[u8]) -> bool {
        // A chunk at a time with no early exit inside one, which the
        // compiler vectorizes: a byte-at-a-time `all` (an exit per byte)
        // cost a sixth of a `sender_chaos` sweep.
        payload
            .chunks(256)
            .all(|chunk| chunk.iter().fold(0, |acc, &byte| acc | (byte ^ FILLER)) == 0)
    }

    /// The tag as a frame's control part.
    fn control(&self) -> [u8; TAG_LEN] {
        let mut control = [0; TAG_LEN];
        control[0] = lane_byte(self.lane);
        control[1..9].copy_from_slice(&self.generation.to_be_bytes());
        control[9..17].copy_from_slice(&self.seq.to_be_bytes());
        control[17..25].copy_from_slice(&self.link.unwrap_or(0).to_be_bytes());
        control
    }

    /// The tag in a frame's control part.
    #[must_use]
    pub fn parse(control: &[u8]) -> Option<Self> {
        if control.len() != TAG_LEN {
            return None;
        }
        let lane = match control[0] {
            b'D' => Lane::Data,
            b'C' => Lane::Control,
            _ => return None,
        };
        let word = |at: usize| u64::from_be_bytes(control[at..at + 8].try_into().expect("8 bytes"));
        let link = word(17);
        Some(Self {
            lane,
            generation: word(1),
            seq: word(9),
            link: (link != 0).then_some(link),
        })
    }

    /// The tag of a whole encoded frame (or of a buffer that starts with
    /// one: the control part follows the header).
    #[must_use]
    pub fn of_frame(frame: &[u8]) -> Option<Self> {
        let control_len = part_lens(frame.first_chunk::<HEADER_LEN>()?).0 as usize;
        Self::parse(frame.get(HEADER_LEN..HEADER_LEN + control_len)?)
    }
}

/// The whole length (header and body) of the frame a buffer starts with.
#[must_use]
pub fn frame_len(frame: &[u8]) -> Option<usize> {
    let (control, payload) = part_lens(frame.first_chunk::<HEADER_LEN>()?);
    Some(HEADER_LEN + control as usize + payload as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_through_a_frame() {
        let tag = Tag {
            lane: Lane::Control,
            generation: 3,
            seq: 77,
            link: Some(9),
        };
        let frame = tag.frame(100);
        assert_eq!(Tag::of_frame(&frame), Some(tag));
        assert_eq!(frame_len(&frame), Some(frame.len()));
        let data = Tag {
            lane: Lane::Data,
            generation: 0,
            seq: 1,
            link: None,
        };
        assert_eq!(Tag::of_frame(&data.frame(0)), Some(data));
        for len in [0, 1, 40_000, 1460, 0, 7] {
            assert_eq!(*tag.shared_frame(len), *tag.frame(len), "{len} bytes");
            assert_eq!(*data.shared_frame(len), *data.frame(len), "{len} bytes");
        }
        assert_eq!(Tag::parse(b"garbage"), None);
    }
}
