//! A peer host of the sender world: accepts sockets and logs every tagged
//! frame it reads, obeying its fault controls.
//!
//! Model. Each socket is read by one task through a framed reader
//! ([`FramedRead`] over [`PeerCodec`], built on the production codec's
//! sans-IO [`decode`]): the partial frame lives in the reader's buffer, not
//! in a future, so waking the task for a fault (a `select!` that drops the
//! pending read) loses nothing. An earlier peer read with `read_frame`
//! inside the `select!`, lost half a frame on every poke and read payload
//! bytes as a header; slow and latency faults then took generations down
//! with `ReadError` (pinned by `slow_and_latency_faults_never_take_a_generation_down`
//! in `sims/tests/scenarios_ci.rs`).
//!
//! A fault acts between frames, on the first socket that sees it, and the
//! peer logs which socket (`PeerActed`): wedge = stop reading and keep the
//! socket open; kill = close it. Slow = sleep before each frame. A
//! hostile-frame fault makes the peer *write* to the local node, which no
//! other fault does: a frame of exactly the local node's inbound maximum
//! ([`MAX_INBOUND`]; read on), a header one byte over it (read on), or the
//! first bytes of a frame and then the close (a torn stream). That is what
//! puts the production read side's frame decoder in reach: its maximum
//! check and its end-of-stream classification.

use crate::explore::spawn_world;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use bytes::{Buf, BytesMut};
use futures_util::StreamExt;
use lanesim_target::handshake::Nonce;
use lanesim_target::wire::{decode, Frame, HEADER_LEN};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, WriteHalf};
use tokio_util::codec::{Decoder, FramedRead};

use super::handshake::{self, COOKIE};
use super::tag::Tag;
use crate::coverage::WorldMark;
use crate::event::{Event, PeerAct, SocketEnd};
use crate::fault::{Hostile, PeerControl};
use crate::scenario::OversizeSplit;

/// The local node's largest inbound frame body (its
/// `ManagerConfig::max_frame`): small, so a hostile peer writes a frame of
/// exactly the maximum, and one byte over, cheaply.
pub const MAX_INBOUND: u64 = 16 * 1024;

/// The largest frame body a peer reads.
const MAX_FRAME: u64 = 64 * 1024 * 1024;

/// lanesim's frame format as a `tokio_util` decoder. It keeps only a
/// frame's parsed tag ([`PeerFrame`]) and checks the payload in place:
/// copying it out was a fifth of a partition sweep's copying (perf, 600
/// seeds of `sender_partition_heal`).
pub struct PeerCodec {
    max: u64,
}

impl PeerCodec {
    /// Refuses bodies over `max` bytes.
    #[must_use]
    pub fn new(max: u64) -> Self {
        Self { max }
    }
}

/// What a peer keeps of a frame: its tag, parsed once here, and nothing
/// of its bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum PeerFrame {
    /// Eight zero bytes.
    Keepalive,
    /// A node-protocol frame (a claim query the node asks a peer that
    /// holds a live generation): the peer keeps no dials to answer for,
    /// so it reads past it as a node that does not answer would.
    Node,
    /// A tagged frame whose payload is the filler the world wrote.
    Tagged(Tag),
    /// Not a frame the world wrote: an untagged control part, or a tagged
    /// frame whose payload is not filler (the stream lost a frame boundary,
    /// or its bytes were changed).
    Garbled,
}

impl Decoder for PeerCodec {
    type Item = PeerFrame;
    type Error = io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> io::Result<Option<PeerFrame>> {
        match decode(src, self.max) {
            Ok(Some((frame, used))) => {
                let frame = match frame {
                    Frame::Keepalive => PeerFrame::Keepalive,
                    Frame::Node { .. } => PeerFrame::Node,
                    Frame::Data { control, payload } => match Tag::parse(control) {
                        Some(tag) if Tag::payload_intact(payload) => PeerFrame::Tagged(tag),
                        _ => PeerFrame::Garbled,
                    },
                };
                src.advance(used);
                Ok(Some(frame))
            }
            Ok(None) => Ok(None),
            Err(error) => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "a frame of {} bytes, over the maximum of {}",
                    error.claimed, error.max
                ),
            )),
        }
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> io::Result<Option<PeerFrame>> {
        match self.decode(src)? {
            Some(frame) => Ok(Some(frame)),
            None if src.is_empty() => Ok(None),
            None => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the stream ended inside a frame, {} bytes in", src.len()),
            )),
        }
    }
}

/// The port that names a socket in the log (the local node's end).
pub fn socket_of(addr: &SocketAddr) -> u16 {
    addr.port()
}

/// The port every peer listens on.
pub const PORT: u16 = 9000;

/// The host name of peer `index`, which is also its node name.
#[must_use]
pub fn peer_name(index: u64) -> String {
    format!("peer{index}")
}

/// What a peer needs from the world it lives in: a log and its fault
/// controls. A trait, so the peer (a child of the world) calls back
/// without depending on the world's module.
pub trait PeerWorld: Send + Sync + 'static {
    /// Logs `event` from `host`.
    fn record(&self, host: &str, event: Event);
    /// Peer `index`'s fault controls.
    fn control(&self, index: u64) -> &PeerControl;
    /// A fresh handshake nonce for peer `index` (from the run's seed).
    fn nonce(&self, index: u64) -> Nonce;
    /// How often a peer writes a keepalive (a quarter of the local node's
    /// heartbeat), if the local node runs one.
    fn keepalive_every(&self) -> Option<std::time::Duration>;
    /// Counts a coverage mark.
    fn mark(&self, mark: WorldMark);
}

/// A peer host's main task.
pub async fn peer_main<W: PeerWorld>(shared: Arc<W>, index: u64) -> turmoil::Result {
    let listener = turmoil::net::TcpListener::bind(("0.0.0.0", PORT)).await?;
    loop {
        let (stream, remote) = listener.accept().await?;
        let socket = accepted(&*shared, index, &remote);
        spawn_world(read_socket(Arc::clone(&shared), index, stream, socket));
    }
}

/// A peer of the real-mode sender world: the same reader as
/// [`peer_main`], on a real loopback listener. Its readers live in a
/// `JoinSet` this task owns, so aborting the task (a crash) drops the
/// listener and closes every socket it accepted.
pub async fn real_peer_main<W: PeerWorld>(
    shared: Arc<W>,
    index: u64,
    listener: tokio::net::TcpListener,
) {
    let mut readers = tokio::task::JoinSet::new();
    loop {
        // Biased, like every select here: the order arms are tried in
        // never depends on a random draw.
        tokio::select! {
            biased;
            next = listener.accept() => {
                let Ok((stream, remote)) = next else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let socket = accepted(&*shared, index, &remote);
                readers.spawn(read_socket(Arc::clone(&shared), index, stream, socket));
            }
            Some(_) = readers.join_next(), if !readers.is_empty() => {}
        }
    }
}

/// Logs that peer `index` accepted a socket from `remote`; its name.
fn accepted<W: PeerWorld>(shared: &W, index: u64, remote: &SocketAddr) -> u16 {
    let socket = socket_of(remote);
    shared.record(
        &peer_name(index),
        Event::PeerAccepted {
            peer: index,
            socket,
        },
    );
    socket
}

/// A hostile frame being written while the peer reads on: the write half
/// comes back with the result.
type Writing<S> = Pin<Box<dyn Future<Output = (WriteHalf<S>, io::Result<()>)> + Send>>;

async fn read_socket<W, S>(shared: Arc<W>, peer: u64, mut stream: S, socket: u16)
where
    W: PeerWorld,
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let host = peer_name(peer);
    let control: &PeerControl = shared.control(peer);
    let ended = |how| Event::PeerSocketClosed { peer, socket, how };
    // The handshake first, as any node accepts: the local node proves the
    // cookie before it writes a frame. A stream that ends inside it is
    // logged as ended; one whose proof fails as garbage (the world's node
    // holds the cookie: a bad proof is its bug).
    let nonce = shared.nonce(peer);
    if let Err(error) = handshake::accept(&mut stream, &host, COOKIE, nonce).await {
        let how = match error.kind() {
            io::ErrorKind::InvalidData => SocketEnd::Garbage,
            io::ErrorKind::UnexpectedEof => SocketEnd::Eof,
            _ => SocketEnd::Error,
        };
        shared.record(&host, ended(how));
        return;
    }
    // Split, so a frame at the maximum (16 KiB through a window of a few
    // segments) is written while the peer goes on reading: a peer that
    // stopped reading to write would wedge the local node's writes (a
    // write deadline a healthy peer never causes).
    let (reader, writer) = tokio::io::split(stream);
    let mut writer = Some(writer);
    let mut writing: Option<Writing<S>> = None;
    let mut frames = FramedRead::new(reader, PeerCodec::new(MAX_FRAME));
    let acted = |act| Event::PeerActed { peer, socket, act };
    // A node's keepalives, when the local node runs a heartbeat: written
    // between frames whenever the write half is free (a hostile write
    // holds it meanwhile), and also while a slow peer pauses.
    let mut keepalives = shared.keepalive_every().map(|every| {
        let mut interval = tokio::time::interval(every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        interval
    });
    loop {
        if PeerControl::take(&control.kill) {
            shared.record(&host, acted(PeerAct::Killed));
            return; // dropping both halves closes the stream
        }
        if PeerControl::take(&control.wedge) {
            shared.record(&host, acted(PeerAct::Wedged));
            // Holds the socket open and never reads again.
            std::future::pending::<()>().await;
        }
        // One hostile write at a time: the next waits for the write half.
        let hostile = if writer.is_some() {
            control
                .hostile
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .pop_front()
        } else {
            None
        };
        if let Some(hostile) = hostile {
            let mut half = writer.take().expect("looked at just above");
            // Logged before the first byte leaves: the local node may act
            // on it (and log its down) within the write.
            shared.record(&host, acted(hostile.act()));
            if let Hostile::Oversize { split } = hostile {
                shared.mark(match split {
                    OversizeSplit::Payload => WorldMark::PeerWroteOversizePayload,
                    OversizeSplit::Control => WorldMark::PeerWroteOversizeControl,
                    OversizeSplit::Both => WorldMark::PeerWroteOversizeBoth,
                });
            }
            shared.mark(match hostile {
                Hostile::MaxFrame => WorldMark::PeerWroteMaxFrame,
                Hostile::Oversize { .. } => WorldMark::PeerWroteOversize,
                Hostile::Torn { bytes } if (bytes as usize) < HEADER_LEN => {
                    WorldMark::PeerToreHeader
                }
                Hostile::Torn { .. } => WorldMark::PeerToreBody,
            });
            let bytes = hostile.bytes(MAX_INBOUND);
            match hostile {
                Hostile::MaxFrame => {
                    writing = Some(Box::pin(async move {
                        let written = half.write_all(&bytes).await;
                        (half, written)
                    }));
                }
                // A few bytes: written in place.
                Hostile::Oversize { .. } | Hostile::Torn { .. } => {
                    let written = half.write_all(&bytes).await;
                    if written.is_err() {
                        shared.record(&host, ended(SocketEnd::Error));
                        return;
                    }
                    if let Hostile::Torn { .. } = hostile {
                        // Dropping both halves closes the stream mid-frame.
                        shared.record(&host, ended(SocketEnd::Torn));
                        return;
                    }
                    writer = Some(half);
                }
            }
            continue;
        }
        let slow = *control.slow.lock().unwrap();
        let latency = *control.latency.lock().unwrap();
        let pause = match (slow, latency) {
            (Some(every), Some(latency)) => Some(every + latency),
            (slow, latency) => slow.or(latency),
        };
        if let Some(every) = pause {
            let until = tokio::time::Instant::now() + every;
            loop {
                tokio::select! {
                    biased;
                    () = control.poke.notified() => break,
                    () = tokio::time::sleep_until(until) => break,
                    () = next_tick(&mut keepalives), if writer.is_some() => {
                        if !keepalive(writer.as_mut()).await {
                            shared.record(&host, ended(SocketEnd::Error));
                            return;
                        }
                    }
                }
            }
            if tokio::time::Instant::now() < until {
                continue; // poked
            }
        }
        // Cancel-safe: a poke drops this `next()`, never a partial frame,
        // and the write in flight is kept, not dropped.
        let next = tokio::select! {
            biased;
            () = control.poke.notified() => continue,
            (half, written) = async { writing.as_mut().expect("guarded").await }, if writing.is_some() => {
                writing = None;
                if written.is_err() {
                    shared.record(&host, ended(SocketEnd::Error));
                    return;
                }
                writer = Some(half);
                continue;
            }
            () = next_tick(&mut keepalives), if writer.is_some() => {
                if !keepalive(writer.as_mut()).await {
                    shared.record(&host, ended(SocketEnd::Error));
                    return;
                }
                continue;
            }
            next = frames.next() => next,
        };
        let how = match next {
            Some(Ok(PeerFrame::Tagged(tag))) => {
                shared.record(
                    &host,
                    Event::FrameArrived {
                        peer,
                        socket,
                        lane: tag.lane,
                        generation: tag.generation,
                        seq: tag.seq,
                        link: tag.link,
                    },
                );
                continue;
            }
            Some(Ok(PeerFrame::Keepalive | PeerFrame::Node)) => continue,
            Some(Ok(PeerFrame::Garbled)) => SocketEnd::Garbage,
            // A header over the peer's maximum: not a frame the world wrote.
            Some(Err(error)) if error.kind() == io::ErrorKind::InvalidData => SocketEnd::Garbage,
            Some(Err(_)) => SocketEnd::Error,
            None => SocketEnd::Eof,
        };
        shared.record(&host, ended(how));
        return;
    }
}

/// The next tick of `keepalives`; never without them.
async fn next_tick(keepalives: &mut Option<tokio::time::Interval>) {
    match keepalives {
        Some(interval) => {
            interval.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// Writes a keepalive on `writer`; whether it went out.
async fn keepalive<S: AsyncWrite>(writer: Option<&mut WriteHalf<S>>) -> bool {
    match writer {
        Some(writer) => writer
            .write_all(&lanesim_target::wire::KEEPALIVE)
            .await
            .is_ok(),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Lane;

    fn tagged(seq: u64, payload: usize) -> Vec<u8> {
        Tag {
            lane: Lane::Data,
            generation: 0,
            seq,
            link: None,
        }
        .frame(payload)
    }

    fn decode_all(stream: &[u8]) -> Vec<PeerFrame> {
        let mut codec = PeerCodec::new(MAX_FRAME);
        let mut buf = BytesMut::from(stream);
        let mut frames = Vec::new();
        // The peer stops at the first garbled frame or error; so does this.
        while let Ok(Some(frame)) = codec.decode(&mut buf) {
            let garbled = frame == PeerFrame::Garbled;
            frames.push(frame);
            if garbled {
                break;
            }
        }
        frames
    }

    /// Whole frames decode to their tags; a frame cut short with the next
    /// one appended (a lost boundary) is garbled at once, not read on as
    /// if the next frame's header were payload.
    #[test]
    fn a_lost_frame_boundary_is_garbled_not_read_on() {
        let mut whole = tagged(1, 100);
        whole.extend(tagged(2, 0));
        let frames = decode_all(&whole);
        let seqs: Vec<Option<u64>> = frames
            .iter()
            .map(|frame| match frame {
                PeerFrame::Tagged(tag) => Some(tag.seq),
                _ => None,
            })
            .collect();
        assert_eq!(seqs, [Some(1), Some(2)]);

        let mut cut = tagged(1, 100);
        cut.truncate(cut.len() - 40);
        cut.extend(tagged(2, 100));
        assert_eq!(decode_all(&cut), [PeerFrame::Garbled]);

        let mut changed = tagged(1, 100);
        let last = changed.len() - 1;
        changed[last] ^= 1;
        assert_eq!(decode_all(&changed), [PeerFrame::Garbled]);
    }
}
