//! A generation's reader task: decodes the frames the socket carries and
//! reports each, and takes the generation down on a close, a read or
//! decode error, a panicking handler, or (with a heartbeat) a whole tick
//! in which nothing at all was read.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use lanesim_target::net::BoxRead;
use lanesim_target::node::{Connection, DownReason};
use lanesim_target::wire::{self, Frame};
use tokio::io::AsyncReadExt;
use tokio::time;

use super::link::Link;
use super::shared::Shared;
use super::sync::raised;

/// Bytes asked of the socket per read.
const READ_CHUNK: usize = 16 * 1024;

/// `f`, bounded by `limit` if there is one: `None` when it ran out.
async fn bounded<F: Future>(limit: Option<Duration>, f: F) -> Option<F::Output> {
    match limit {
        Some(limit) => time::timeout(limit, f).await.ok(),
        None => Some(f.await),
    }
}

impl Shared {
    pub(super) async fn run_reader(
        self: Arc<Self>,
        link: Arc<Link>,
        mut read: BoxRead,
        mut buf: Vec<u8>,
    ) {
        let mut down = link.down_signal.subscribe();
        let mut stop = self.stop_signal.subscribe();
        let mut chunk = vec![0_u8; READ_CHUNK];
        loop {
            let mut used = 0;
            loop {
                if link.is_down() {
                    return;
                }
                match wire::decode(&buf[used..], self.max_frame) {
                    Ok(Some((frame, len))) => {
                        used += len;
                        if let Frame::Data { control, payload } = frame {
                            let delivered = catch_unwind(AssertUnwindSafe(|| {
                                self.reports.frame(link.id(), control, payload);
                            }));
                            if delivered.is_err() {
                                self.take_down(&link, DownReason::HandlerPanicked);
                                return;
                            }
                        }
                    }
                    Ok(None) => break,
                    Err(_) => {
                        self.take_down(&link, DownReason::ReadError);
                        return;
                    }
                }
            }
            buf.drain(..used);

            let outcome = tokio::select! {
                biased;
                () = raised(&mut stop) => return,
                () = raised(&mut down) => return,
                outcome = bounded(self.heartbeat, read.read(&mut chunk)) => outcome,
            };
            let reason = match outcome {
                Some(Ok(0)) if buf.is_empty() => DownReason::PeerClosed,
                Some(Ok(0) | Err(_)) => DownReason::ReadError,
                Some(Ok(n)) => {
                    buf.extend_from_slice(&chunk[..n]);
                    continue;
                }
                None => DownReason::HeartbeatTimeout,
            };
            self.take_down(&link, reason);
            return;
        }
    }
}
