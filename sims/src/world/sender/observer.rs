//! The local node's reports turned into events: its downs (each breaking
//! the links over it), its inbound frames, and the drain's account of every
//! frame, tagged so the log says which frame each report is about.

use std::sync::Arc;

use lanesim_target::node::{
    Down, DownReason, Generation, Link, NodeEvents, SenderLane, Up, WriteOutcome,
};
use tokio::sync::Notify;

use super::{peer_index, Shared, LOCAL, UNTAGGED};
use crate::coverage::WorldMark;
use crate::event::{Event, Lane};
use crate::world::links::Keeper;
use crate::world::peer::PeerWorld;
use crate::world::tag::Tag;

/// Where an [`Observer`]'s events go, and what else its host does with a
/// report: the sender world keeps its end-of-run accounting and its links
/// ([`WorldHost`]); the model world only logs (`model::sender`).
pub(crate) trait ReportHost: Send + Sync {
    /// Logs `event`.
    fn record(&self, event: Event);
    /// Logs `event`, the drain having disposed of a frame.
    fn disposed(&self, event: Event) {
        self.record(event);
    }
    /// Runs `step` under the log's order.
    fn ordered(&self, step: &mut dyn FnMut());
    /// A control (its tag) pinned to `to` left the drain's hands for good.
    fn control_done(&self, _tag: &Tag, _to: Generation<'_>) {}
    /// A generation went down, its down logged.
    fn after_down(&self, _down: &Down<'_>) {}
    /// The target's link table broke `link` over `node`.
    fn noconnection(&self, _node: &str, _link: Link) {}
}

/// The local side's `noconnection` for `link` over `node`.
pub(super) fn record_noconnection(shared: &Shared, node: &str, link: Link) {
    shared.record(
        LOCAL,
        Event::NoConnection {
            peer: peer_index(node),
            generation: link.generation,
            link: link.local,
        },
    );
}

/// Turns a node's reports into events: its downs, its inbound frames, and
/// the drain's account of every frame, each tagged so the log says which
/// frame a report is about.
pub(crate) struct Observer<H>(pub(crate) H);

/// The sender world's host: its shared state, what each peer's keeper
/// waits on for a down, and the local processes' links.
pub(super) struct WorldHost {
    pub(super) shared: Arc<Shared>,
    /// Per peer, what a keeper waits on for a down.
    pub(super) downs: Vec<Arc<Notify>>,
    /// The local processes' links.
    pub(super) links: Keeper,
}

impl ReportHost for WorldHost {
    fn record(&self, event: Event) {
        self.shared.record(LOCAL, event);
    }

    fn disposed(&self, event: Event) {
        self.shared.drained.notify_one();
        self.shared.record(LOCAL, event);
    }

    fn ordered(&self, step: &mut dyn FnMut()) {
        self.shared.ordered(step);
    }

    fn control_done(&self, tag: &Tag, to: Generation<'_>) {
        self.shared
            .control_pending(peer_index(to.node), tag.generation, -1);
        self.shared
            .settled(Some(tag.seq), (peer_index(to.node), tag.generation));
    }

    fn after_down(&self, down: &Down<'_>) {
        let peer = peer_index(down.node);
        self.shared.mark(WorldMark::GenerationDown);
        if down.reason == DownReason::HeartbeatTimeout {
            self.shared.mark(WorldMark::HeartbeatDown);
        }
        if let Some(wake) = self.downs.get(peer as usize) {
            wake.notify_one();
        }
        self.shared.settled(None, (peer, down.generation));
        // After the down's record: the log shows a generation's down
        // before the noconnections it causes.
        self.links.down(down.node, down.generation);
    }

    fn noconnection(&self, node: &str, link: Link) {
        record_noconnection(&self.shared, node, link);
    }
}

impl<H: ReportHost> Observer<H> {
    /// The frame's tag. Every frame the world enqueues is tagged, so a
    /// frame without one was mangled by the code under test: it is logged
    /// under `UNTAGGED`, which no enqueue ever used, and the checkers flag
    /// it (S4: left the drain but never queued). Never a panic: these hooks
    /// also run in the drain's drop, where a panic aborts the process.
    fn tag(frame: &[u8]) -> Tag {
        Tag::of_frame(frame).unwrap_or(Tag {
            lane: Lane::Data,
            generation: 0,
            seq: UNTAGGED,
            link: None,
        })
    }

    /// A control's end (`tag` pinned to `to`) and `event`, under one order.
    fn control_ended(&self, tag: &Tag, to: Generation<'_>, event: Event) {
        let mut event = Some(event);
        self.0.ordered(&mut || {
            if tag.lane == Lane::Control {
                self.0.control_done(tag, to);
            }
            if let Some(event) = event.take() {
                self.0.disposed(event);
            }
        });
    }

    /// A control left the drain unwritten (skipped, discarded): it is done
    /// with, and `event` (given peer, generation, seq) is logged, under one
    /// order. Counted as a control whatever its tag says.
    fn pinned_ended(
        &self,
        pinned: Generation<'_>,
        frame: &[u8],
        event: impl FnOnce(u64, u64, u64) -> Event,
    ) {
        let tag = Self::tag(frame);
        let event = event(peer_index(pinned.node), pinned.generation, tag.seq);
        let control = Tag {
            lane: Lane::Control,
            ..tag
        };
        self.control_ended(&control, pinned, event);
    }

    /// A write ended (finished or abandoned): a control is done with, and
    /// `event` (given peer, generation, seq) is logged, under one order.
    fn write_ended(
        &self,
        to: Generation<'_>,
        frame: &[u8],
        event: impl FnOnce(u64, u64, u64) -> Event,
    ) {
        let tag = Self::tag(frame);
        let event = event(peer_index(to.node), to.generation, tag.seq);
        self.control_ended(&tag, to, event);
    }
}

impl<H: ReportHost> NodeEvents for Observer<H> {
    /// The world logs a generation when its dial returns it
    /// ([`Dialer::dial`]): the local node only dials.
    fn up(&self, _: Up<'_>) {}

    fn noconnection(&self, node: &str, link: Link) {
        self.0.noconnection(node, link);
    }

    fn down(&self, down: Down<'_>) {
        self.0.record(Event::ConnectionDown {
            peer: peer_index(down.node),
            generation: down.generation,
            reason: down.reason,
            table: down.table,
        });
        self.0.after_down(&down);
    }

    /// Which inbound frames were read whole: a local close before the end
    /// of one resets the stream (S6's excuse for what the reset discards).
    fn frame(&self, from: Generation<'_>, control: &[u8], payload: &[u8]) {
        self.0.record(Event::InboundFrameRead {
            peer: peer_index(from.node),
            generation: from.generation,
            bytes: (control.len() + payload.len()) as u64,
        });
    }

    fn write_started(&self, to: Generation<'_>, lane: SenderLane, frame: &[u8]) {
        self.0.record(Event::WriteStarted {
            peer: peer_index(to.node),
            generation: to.generation,
            lane: lane.into(),
            seq: Self::tag(frame).seq,
        });
    }

    fn write_finished(
        &self,
        to: Generation<'_>,
        lane: SenderLane,
        frame: &[u8],
        outcome: WriteOutcome,
    ) {
        self.write_ended(to, frame, |peer, generation, seq| Event::WriteFinished {
            peer,
            generation,
            lane: lane.into(),
            seq,
            outcome: outcome.into(),
        });
    }

    fn control_skipped(&self, pinned: Generation<'_>, frame: &[u8]) {
        self.pinned_ended(pinned, frame, |peer, generation, seq| {
            Event::ControlSkipped {
                peer,
                generation,
                seq,
            }
        });
    }

    fn data_unroutable(&self, node: &str, frame: &[u8]) {
        self.0.disposed(Event::DataUnroutable {
            peer: peer_index(node),
            seq: Self::tag(frame).seq,
        });
    }

    fn write_abandoned(&self, to: Generation<'_>, lane: SenderLane, frame: &[u8]) {
        self.write_ended(to, frame, |peer, generation, seq| Event::WriteAbandoned {
            peer,
            generation,
            lane: lane.into(),
            seq,
        });
    }

    fn control_discarded(&self, pinned: Generation<'_>, frame: &[u8]) {
        self.pinned_ended(pinned, frame, |peer, generation, seq| {
            Event::ControlDiscarded {
                peer,
                generation,
                seq,
            }
        });
    }

    fn data_discarded(&self, node: &str, frame: &[u8]) {
        self.0.disposed(Event::DataDiscarded {
            peer: peer_index(node),
            seq: Self::tag(frame).seq,
        });
    }
}
