//! Whether a healthy peer's traffic shared the node with a faulty peer's:
//! the world mark `healthy_peer_beside_fault`, what a scenario checking S9
//! (independence across peers) must reach for S9 to have decided anything.
//!
//! Model. A peer is faulty from the first fault the driver applies to it
//! or its link, for the rest of the run (S9's own definition of healthy,
//! `check::sender::independence`). A frame is *beside a fault* when it was
//! accepted for a peer that was healthy then while some other peer was
//! already faulty; the mark is made when such a frame is read by its peer,
//! still healthy: the frame was in flight, and read, while another peer was
//! in trouble. Marks stay out of the log, so keeping them changes no run's
//! hash.

use std::collections::BTreeSet;
use std::sync::Mutex;

use crate::event::Lane;

/// The peers faulted so far and the frames accepted beside a fault.
#[derive(Default)]
pub(crate) struct Beside {
    /// Peers a fault was applied to (or to their link), so far.
    faulted: Mutex<BTreeSet<u64>>,
    /// Frames accepted for a healthy peer while another was faulty, by
    /// (lane, peer, seq): controls are numbered across peers, data per
    /// peer, so the peer is part of the name.
    frames: Mutex<BTreeSet<(Lane, u64, u64)>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Beside {
    /// A fault was applied to `peer` or its link.
    pub(crate) fn fault(&self, peer: u64) {
        lock(&self.faulted).insert(peer);
    }

    /// Frame `seq` of `lane` was accepted for `peer`.
    pub(crate) fn accepted(&self, peer: u64, lane: Lane, seq: u64) {
        let faulted = lock(&self.faulted);
        if !faulted.contains(&peer) && faulted.iter().any(|&other| other != peer) {
            lock(&self.frames).insert((lane, peer, seq));
        }
    }

    /// `peer` read frame `seq` of `lane`: whether it was accepted beside a
    /// fault and `peer` is still healthy (the mark is due).
    pub(crate) fn read(&self, peer: u64, lane: Lane, seq: u64) -> bool {
        let healthy = !lock(&self.faulted).contains(&peer);
        lock(&self.frames).remove(&(lane, peer, seq)) && healthy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a frame accepted for a healthy peer after another peer's fault,
    /// and read while its peer is still healthy, counts.
    #[test]
    fn only_a_healthy_peers_frame_accepted_after_another_peers_fault_counts() {
        let beside = Beside::default();
        beside.accepted(1, Lane::Data, 1);
        assert!(!beside.read(1, Lane::Data, 1), "no fault yet");
        beside.fault(0);
        beside.accepted(0, Lane::Data, 1);
        assert!(
            !beside.read(0, Lane::Data, 1),
            "the faulty peer's own frame"
        );
        beside.accepted(1, Lane::Control, 7);
        beside.accepted(2, Lane::Data, 1);
        assert!(beside.read(1, Lane::Control, 7));
        assert!(!beside.read(1, Lane::Control, 7), "counted once per frame");
        beside.fault(2);
        assert!(
            !beside.read(2, Lane::Data, 1),
            "its peer has a fault by now"
        );
    }
}
