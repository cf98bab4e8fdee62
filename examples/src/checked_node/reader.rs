//! The reader task of one generation: reads inbound frames, reports each
//! whole one that is not a keepalive, and takes the generation down when
//! the stream ends or fails.
//!
//! Model. Bytes are read into a buffer and whole frames cut from its front
//! (`lanesim_target::wire::decode`). The stream ending at a frame boundary
//! is `PeerClosed`; ending inside a frame, a read error, or a header over
//! the largest inbound frame is `ReadError`; nothing read for a whole
//! heartbeat tick is `HeartbeatTimeout`; a frame whose body is not whole
//! within the frame deadline after its header is `FrameTimeout`. The task
//! ends quietly when the generation goes down for another cause.

use std::sync::Arc;

use lanesim_target::net::BoxRead;
use lanesim_target::node::DownReason;
use lanesim_target::wire::{self, Frame, HEADER_LEN};
use tokio::io::AsyncReadExt;
use tokio::time::Instant;

use super::connection::Link;
use super::shared::Shared;

/// How many bytes one read asks for at least.
const READ_CHUNK: usize = 8 * 1024;

/// Reads `link`'s stream until it ends or the generation goes down.
pub(super) async fn run(shared: Arc<Shared>, link: Arc<Link>, mut read: BoxRead) {
    let reason = tokio::select! {
        biased;
        () = link.wait_down() => return,
        reason = read_frames(&shared, &link, &mut read) => reason,
    };
    link.mark_down(reason);
}

/// Reads and reports frames; why the stream stopped.
async fn read_frames(shared: &Shared, link: &Link, read: &mut BoxRead) -> DownReason {
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    let mut last_heard = Instant::now();
    let mut frame_started: Option<Instant> = None;
    loop {
        loop {
            match wire::decode(&buf, shared.max_frame) {
                Err(_) => return DownReason::ReadError,
                Ok(None) => break,
                Ok(Some((frame, used))) => {
                    if let Frame::Data { control, payload } = frame {
                        shared.reports.frame(link.id(), control, payload);
                    }
                    buf.drain(..used);
                    frame_started = None;
                }
            }
        }
        if buf.len() >= HEADER_LEN && frame_started.is_none() {
            frame_started = Some(Instant::now());
        }
        let silence = shared
            .heartbeat
            .map(|tick| (last_heard + tick, DownReason::HeartbeatTimeout));
        let slow = frame_started
            .zip(shared.frame_timeout)
            .map(|(started, limit)| (started + limit, DownReason::FrameTimeout));
        let deadline = match (silence, slow) {
            (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
            (a, b) => a.or(b),
        };
        buf.reserve(READ_CHUNK);
        let result = match deadline {
            Some((at, why)) => match tokio::time::timeout_at(at, read.read_buf(&mut buf)).await {
                Ok(result) => result,
                Err(_) => return why,
            },
            None => read.read_buf(&mut buf).await,
        };
        match result {
            Ok(0) if buf.is_empty() => return DownReason::PeerClosed,
            Ok(0) | Err(_) => return DownReason::ReadError,
            Ok(_) => last_heard = Instant::now(),
        }
    }
}
