//! A generation's writer task ([`Writer`]): owns the socket's write half,
//! writes its generation's queue in order, each write whole and under the
//! write deadline, sends keepalives at a third of the heartbeat tick while
//! idle, and takes its generation down when a write fails, times out or is
//! cut off part-way, or when shutdown abandons a control. Writers are
//! independent: a wedged peer stalls only its own.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use lanesim_target::net::BoxWrite;
use lanesim_target::node::{Connection, DownReason, SenderLane, WriteOutcome};
use lanesim_target::wire;
use tokio::io::AsyncWriteExt;
use tokio::sync::watch;
use tokio::time::{self, Instant, Interval, MissedTickBehavior};

use super::link::{Item, Link};
use super::shared::{bump, Shared};
use super::sync::{lock, raised};

/// How one write attempt ended.
enum Attempt {
    Written,
    Failed,
    TimedOut,
    /// The generation went down (someone else took it down) mid-write.
    Down,
    /// Shutdown (or the node's end) stopped the write.
    Abandoned,
}

async fn write_whole(out: &mut BoxWrite, bytes: &[u8], written: &mut usize) -> io::Result<()> {
    while *written < bytes.len() {
        let n = out.write(&bytes[*written..]).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        *written += n;
    }
    out.flush().await
}

async fn next_tick(keepalive: &mut Option<Interval>) {
    match keepalive {
        Some(interval) => {
            interval.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// A generation's writer task: owns the write half.
pub(super) struct Writer {
    shared: Arc<Shared>,
    link: Arc<Link>,
    out: BoxWrite,
    down: watch::Receiver<bool>,
    shut: watch::Receiver<bool>,
    stop: watch::Receiver<bool>,
    keepalive: Option<Interval>,
}

impl Writer {
    pub(super) fn new(shared: Arc<Shared>, link: Arc<Link>, out: BoxWrite) -> Self {
        let keepalive = shared.heartbeat.map(|tick| {
            let period = (tick / 3).max(Duration::from_millis(1));
            let mut interval = time::interval_at(Instant::now() + period, period);
            interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
            interval
        });
        Self {
            down: link.down_signal.subscribe(),
            shut: shared.shutdown_signal.subscribe(),
            stop: shared.stop_signal.subscribe(),
            shared,
            link,
            out,
            keepalive,
        }
    }

    pub(super) async fn run(mut self) {
        loop {
            if self.link.is_down() || *self.stop.borrow() {
                break;
            }
            let shut = *self.shut.borrow();
            if !shut {
                if let Some(item) = self.shared.pop(&self.link) {
                    self.send(item).await;
                    continue;
                }
            }
            tokio::select! {
                biased;
                () = raised(&mut self.stop) => break,
                () = raised(&mut self.down) => break,
                () = raised(&mut self.shut), if !shut => {
                    self.shared.discard_queue(&self.link);
                }
                () = self.link.wake.notified(), if !shut => {}
                () = next_tick(&mut self.keepalive) => self.send_keepalive().await,
            }
        }
        if !self.link.is_down() {
            // Only when the node itself ends.
            self.shared
                .take_down(&self.link, DownReason::ManualDisconnect);
        }
        self.shared.drain_dead(&self.link);
    }

    /// One whole write under the write deadline; `written` bytes made it.
    async fn write(&mut self, bytes: &[u8], abandon_on_shutdown: bool) -> (Attempt, usize) {
        let mut written = 0;
        let limit = self.shared.write_timeout;
        let attempt = {
            let Self {
                out,
                down,
                shut,
                stop,
                ..
            } = self;
            let io = time::timeout(limit, write_whole(out, bytes, &mut written));
            tokio::select! {
                biased;
                () = raised(shut), if abandon_on_shutdown => Attempt::Abandoned,
                () = raised(down) => Attempt::Down,
                () = raised(stop) => Attempt::Abandoned,
                result = io => match result {
                    Ok(Ok(())) => Attempt::Written,
                    Ok(Err(_)) => Attempt::Failed,
                    Err(_) => Attempt::TimedOut,
                },
            }
        };
        (attempt, written)
    }

    fn wrote(&mut self) {
        if let Some(interval) = &mut self.keepalive {
            interval.reset();
        }
    }

    async fn send_keepalive(&mut self) {
        let (attempt, _) = self.write(&wire::KEEPALIVE, false).await;
        match attempt {
            Attempt::Written => {}
            Attempt::Failed => {
                self.shared.take_down(&self.link, DownReason::WriteError);
            }
            Attempt::TimedOut => {
                self.shared.take_down(&self.link, DownReason::WriteTimeout);
            }
            Attempt::Down | Attempt::Abandoned => {}
        }
    }

    async fn send(&mut self, item: Item) {
        let lane = item.lane();
        if self.link.is_down() {
            lock(&self.link.queue).in_flight = None;
            self.shared.account_dead(&self.link, &item);
            return;
        }
        let frame = Arc::clone(item.frame());
        let shared = Arc::clone(&self.shared);
        let reports = &shared.reports;
        let counters = &shared.counters;
        let (written_counter, failed_counter, discarded_counter) = match lane {
            SenderLane::Data => (
                &counters.data_written,
                &counters.data_failed,
                &counters.data_discarded,
            ),
            SenderLane::Control => (
                &counters.control_written,
                &counters.control_failed,
                &counters.control_discarded,
            ),
        };

        reports.write_started(self.link.id(), lane, &frame);
        let (attempt, written) = self.write(&frame, true).await;
        lock(&self.link.queue).in_flight = None;
        match attempt {
            Attempt::Written => {
                self.wrote();
                bump(written_counter);
                reports.write_finished(self.link.id(), lane, &frame, WriteOutcome::Written);
            }
            Attempt::Failed => {
                shared.take_down(&self.link, DownReason::WriteError);
                bump(failed_counter);
                reports.write_finished(self.link.id(), lane, &frame, WriteOutcome::Failed);
            }
            Attempt::TimedOut => {
                shared.take_down(&self.link, DownReason::WriteTimeout);
                bump(failed_counter);
                reports.write_finished(self.link.id(), lane, &frame, WriteOutcome::TimedOut);
            }
            Attempt::Down => {
                bump(failed_counter);
                reports.write_finished(self.link.id(), lane, &frame, WriteOutcome::Failed);
            }
            Attempt::Abandoned => {
                if written > 0 && written < frame.len() {
                    // Part of a frame is on the wire: the stream is unusable.
                    shared.take_down(&self.link, DownReason::WriteCancelled);
                } else if lane == SenderLane::Control {
                    shared.take_down(&self.link, DownReason::ManualDisconnect);
                }
                bump(discarded_counter);
                reports.write_abandoned(self.link.id(), lane, &frame);
            }
        }
    }
}
