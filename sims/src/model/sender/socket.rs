//! The model world's sockets: in memory, one per generation. The local
//! node writes; the far end is the peer, which reads every byte at once
//! and logs each whole tagged frame (`FrameArrived`), or, wedged, never
//! takes a byte, so a write to it waits until its deadline fires (where
//! the checker chooses). The write half is tapped as every world's is
//! (`world::net::tapped_write`), so the log says when each frame's first
//! byte reached the socket. The read half never yields a byte: the peers
//! of this world only read.
//!
//! The far end's state sits under a std mutex: it is the world's, not the
//! target's, and is held for no await, so the checker has nothing of the
//! world's own to interleave here.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::BytesMut;
use lanesim_target::net::Connected;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::codec::Decoder;

use super::world::Execution;
use crate::event::{Event, SocketEnd};
use crate::world::net::{tapped_write, Tapped, WriteTap};
use crate::world::peer::{PeerCodec, PeerFrame, MAX_INBOUND};
use crate::world::tag::{frame_len, Tag};

/// The far end of one socket: the peer's reading side.
struct Far {
    execution: Arc<Execution>,
    peer: u64,
    socket: u16,
    wedged: bool,
    /// Each frame's first write waits a turn.
    slow: bool,
    state: Mutex<FarState>,
}

#[derive(Default)]
struct FarState {
    unread: BytesMut,
    /// A slow socket let the current write wait its turn.
    waited: bool,
    /// The peer saw the stream end (or gave up on it).
    ended: bool,
}

impl Far {
    /// Bytes reach the socket; the peer reads them at the writer's next
    /// call (its flush, its next write, its close), so the tap's record of a
    /// frame's first byte, made when this write returns, comes before the
    /// peer's record of the frame.
    fn arrive(&self, bytes: &[u8]) {
        let mut state = self.state.lock().unwrap();
        if !state.ended {
            state.unread.extend_from_slice(bytes);
        }
    }

    /// The peer reads what reached it: each whole tagged frame is logged.
    fn read(&self) {
        let mut state = self.state.lock().unwrap();
        if state.ended {
            return;
        }
        let mut codec = PeerCodec::new(MAX_INBOUND.max(1 << 20));
        loop {
            match codec.decode(&mut state.unread) {
                Ok(Some(PeerFrame::Tagged(tag))) => {
                    self.execution.record_now(Event::FrameArrived {
                        peer: self.peer,
                        socket: self.socket,
                        lane: tag.lane,
                        generation: tag.generation,
                        seq: tag.seq,
                        link: tag.link,
                    })
                }
                Ok(Some(PeerFrame::Keepalive | PeerFrame::Node)) => {}
                Ok(None) => return,
                Ok(Some(PeerFrame::Garbled)) | Err(_) => {
                    state.ended = true;
                    self.execution.record_now(Event::PeerSocketClosed {
                        peer: self.peer,
                        socket: self.socket,
                        how: SocketEnd::Garbage,
                    });
                    return;
                }
            }
        }
    }

    /// The local node closed its end.
    fn closed(&self) {
        self.read();
        let mut state = self.state.lock().unwrap();
        if std::mem::replace(&mut state.ended, true) {
            return;
        }
        let how = if state.unread.is_empty() {
            SocketEnd::Eof
        } else {
            SocketEnd::Error
        };
        self.execution.record_now(Event::PeerSocketClosed {
            peer: self.peer,
            socket: self.socket,
            how,
        });
    }
}

/// The local node's write half.
struct Write(Arc<Far>);

impl AsyncWrite for Write {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.0.wedged {
            // Never woken: only the write's deadline ends it.
            return Poll::Pending;
        }
        if self.0.slow {
            let mut state = self.0.state.lock().unwrap();
            state.waited = !state.waited;
            if state.waited {
                // Ready at the writer's next turn: the others run first.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
        self.0.read();
        self.0.arrive(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.read();
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.closed();
        Poll::Ready(Ok(()))
    }
}

impl Drop for Write {
    fn drop(&mut self) {
        self.0.closed();
    }
}

/// The local node's read half: the peer never writes.
struct Silent;

impl AsyncRead for Silent {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        _: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Poll::Pending
    }
}

/// The tap every socket of `execution` reports to: the first byte of each
/// tagged frame (`FrameWriteBegun`).
fn tap(execution: &Arc<Execution>) -> WriteTap {
    let execution = Arc::clone(execution);
    Arc::new(move |socket, tapped| {
        let Tapped::FrameStart(frame) = tapped else {
            return;
        };
        if let Some(tag) = Tag::of_frame(frame) {
            execution.record_now(Event::FrameWriteBegun {
                socket,
                lane: tag.lane,
                seq: tag.seq,
                bytes: frame_len(frame).map_or(0, |len| len as u64),
            });
        }
    })
}

/// A new socket to `peer`, named `socket` in the log; `wedged`: its peer
/// never reads; `slow`: each frame's first write waits a turn.
pub(super) fn connect(
    execution: &Arc<Execution>,
    peer: u64,
    socket: u16,
    wedged: bool,
    slow: bool,
) -> Connected {
    let far = Arc::new(Far {
        execution: Arc::clone(execution),
        peer,
        socket,
        wedged,
        slow,
        state: Mutex::new(FarState::default()),
    });
    Connected {
        read: Box::new(Silent),
        write: tapped_write(Write(far), usize::MAX, socket, Some(tap(execution))),
        peer: format!("peer{peer}:{socket}"),
        local: format!("local:{socket}"),
    }
}
