//! What the sender world writes in each frame's control part, so a peer can
//! log exactly what arrived: lane, pinned generation (0 for data, which is
//! resolved at write time), sequence number, and link (0 for none).

use lanesim::distribution::frame::encode;

/// Bytes in a tag.
pub const TAG_LEN: usize = 25;

/// A decoded tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag {
    /// `b'D'` data, `b'C'` control.
    pub lane: u8,
    /// The pinned generation (controls).
    pub generation: u64,
    /// Per-node (data) or global (control) sequence number.
    pub seq: u64,
    /// The link an EXIT control is for.
    pub link: Option<u64>,
}

impl Tag {
    /// The lane's name in events.
    #[must_use]
    pub fn lane_name(&self) -> &'static str {
        if self.lane == b'C' {
            "control"
        } else {
            "data"
        }
    }

    /// A whole frame: this tag as control, `payload_len` filler bytes.
    #[must_use]
    pub fn frame(&self, payload_len: usize) -> Vec<u8> {
        let mut control = Vec::with_capacity(TAG_LEN);
        control.push(self.lane);
        control.extend_from_slice(&self.generation.to_be_bytes());
        control.extend_from_slice(&self.seq.to_be_bytes());
        control.extend_from_slice(&self.link.unwrap_or(0).to_be_bytes());
        encode(&control, &vec![0xA5; payload_len]).expect("small frames")
    }

    /// The tag in a frame's control part.
    #[must_use]
    pub fn parse(control: &[u8]) -> Option<Self> {
        if control.len() != TAG_LEN || !matches!(control[0], b'D' | b'C') {
            return None;
        }
        let word = |at: usize| u64::from_be_bytes(control[at..at + 8].try_into().expect("8 bytes"));
        let link = word(17);
        Some(Self {
            lane: control[0],
            generation: word(1),
            seq: word(9),
            link: (link != 0).then_some(link),
        })
    }

    /// The tag of a whole encoded frame.
    #[must_use]
    pub fn of_frame(frame: &[u8]) -> Option<Self> {
        let control_len = u32::from_be_bytes(frame.get(0..4)?.try_into().ok()?) as usize;
        Self::parse(frame.get(8..8 + control_len)?)
    }
}

#[cfg(test)]
mod tests {
    use super::Tag;

    #[test]
    fn tags_round_trip_through_a_frame() {
        let tag = Tag {
            lane: b'C',
            generation: 3,
            seq: 77,
            link: Some(9),
        };
        assert_eq!(Tag::of_frame(&tag.frame(100)), Some(tag));
        let data = Tag {
            lane: b'D',
            generation: 0,
            seq: 1,
            link: None,
        };
        assert_eq!(Tag::of_frame(&data.frame(0)), Some(data));
        assert_eq!(Tag::parse(b"garbage"), None);
    }
}
