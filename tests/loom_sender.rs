//! Loom models of the sender and connection races, on the production
//! `ConnectionManager` / `DistSender` compiled under `--cfg loom` (the drain
//! and read loops are loom threads, streams are in-memory, and a write that
//! cannot finish at once hits its deadline).
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test --release --test loom_sender`
//! (add `--features planted-bugs` for the `*_detects_*` models).
#![cfg(loom)]

mod checker;

use std::sync::Arc;

use checker::model;
use lanesim::distribution::{
    ConnectionManager, ControlEnqueueError, ControlOutbound, DistConnection, DistSender,
    DownReason, LinkTable, ManagerConfig, NodeName, SenderConfig, SenderLane, SenderObserver,
    WriteOutcome,
};
use lanesim::planted::Planted;
use lanesim::shim::net::{BoxFuture, Connected, Listener, Transport};
use lanesim::shim::rt::RuntimeChoice;
use loom::sync::atomic::{AtomicUsize, Ordering};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The models never dial.
struct NoTransport;

impl Transport for NoTransport {
    fn connect<'a>(&'a self, _: &'a str) -> BoxFuture<'a, std::io::Result<Connected>> {
        Box::pin(async { Err(std::io::ErrorKind::Unsupported.into()) })
    }
    fn bind<'a>(&'a self, _: &'a str) -> BoxFuture<'a, std::io::Result<Box<dyn Listener>>> {
        Box::pin(async { Err(std::io::ErrorKind::Unsupported.into()) })
    }
}

fn runtime() -> RuntimeChoice {
    RuntimeChoice::Dedicated {
        thread_name: "loom".into(),
    }
}

/// A manager counting down-hook calls.
fn manager(planted: Planted) -> (ConnectionManager, Arc<AtomicUsize>) {
    let mut config = ManagerConfig::new(
        runtime(),
        lanesim::distribution::Cookie::new("loom").unwrap(),
    );
    // No clock in a model: no heartbeat.
    config.tick = None;
    config.planted = planted;
    let manager =
        ConnectionManager::new(NodeName::from("local"), Arc::new(NoTransport), config).unwrap();
    let downs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&downs);
    manager.register_connection_down(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    (manager, downs)
}

/// A peer that never sends: reads stay pending (the read loop ends through
/// its down notification). No locks and no wakers inside, so loom sees every
/// switch point (tokio's duplex wakes while holding a std mutex, which loom
/// cannot switch around).
struct Silent;

impl AsyncRead for Silent {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        _: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Poll::Pending
    }
}

/// A socket that takes `room` bytes in all, then never again.
struct Window {
    room: usize,
}

impl AsyncWrite for Window {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.room == 0 {
            return Poll::Pending;
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Poll::Ready(Ok(n))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// A connection to a silent peer whose socket takes `room` bytes.
fn stream(room: usize) -> Connected {
    Connected {
        read: Box::new(Silent),
        write: Box::new(Window { room }),
        peer: "far".into(),
        local: "near".into(),
    }
}

fn frame(len: usize) -> Arc<[u8]> {
    Arc::from(lanesim_target::wire::encode(&vec![7; len], b""))
}

fn sender(manager: &ConnectionManager, planted: Planted) -> DistSender {
    let mut config = SenderConfig::new(runtime());
    config.control_capacity = 1;
    config.planted = planted;
    DistSender::new(manager.clone(), config).unwrap()
}

/// Waits (yielding to loom) for the drain to dispose of every queued control.
fn drained(sender: &DistSender) {
    loop {
        let s = sender.stats();
        if s.control_queued
            == s.control_written + s.control_skipped_down + s.control_failed + s.control_discarded
        {
            return;
        }
        loom::thread::yield_now();
    }
}

/// Two controls into a lane of one, against a connection whose socket takes
/// `buffer` bytes: every accepted control is written or its connection goes
/// down (DC-1), `Overflow` only after down, and the hook fires at most once
/// (S3) even when the drain's deadline and the overflow race to mark down.
fn control_lane_model(buffer: usize, frame_len: usize, planted: Planted) {
    let (manager, downs) = manager(planted);
    let connected = stream(buffer);
    let connection = manager.register(NodeName::from("peer"), connected);
    let sender = sender(&manager, planted);
    let pin = || ControlOutbound {
        connection: Arc::clone(&connection),
        frame: frame(frame_len),
    };
    let mut accepted = 0;
    for _ in 0..2 {
        match sender.enqueue_control(pin()) {
            Ok(()) => accepted += 1,
            Err(ControlEnqueueError::Overflow) => {
                assert!(
                    connection.is_down(),
                    "DC-1: Overflow returned before the pinned connection was down"
                );
            }
            Err(ControlEnqueueError::Closed) => panic!("closed while live"),
        }
    }
    drained(&sender);
    let s = sender.stats();
    assert!(
        connection.is_down() || s.control_written as usize == accepted,
        "DC-1: {accepted} control(s) accepted, {} written, and the connection is still up: one was lost silently",
        s.control_written
    );
    drop(sender);
    manager.disconnect_node(&NodeName::from("peer"));
    assert!(
        downs.load(Ordering::SeqCst) <= 1,
        "S3: the down hook fired more than once for one generation"
    );
}

#[test]
fn a_full_control_lane_marks_down_before_overflow_and_the_hook_fires_once_against_a_racing_deadline(
) {
    // 64-byte socket, 200-byte frames: the drain's write cannot finish, so
    // its deadline marks down while the second control may overflow.
    model(3, || control_lane_model(64, 200, Planted::none()));
}

#[test]
fn every_accepted_control_is_written_or_its_connection_goes_down() {
    model(3, || control_lane_model(4096, 16, Planted::none()));
}

/// Two threads mark one generation down with different reasons.
fn racing_mark_down_model(planted: Planted) {
    let (manager, downs) = manager(planted);
    let connected = stream(64);
    let connection = manager.register(NodeName::from("peer"), connected);
    let racer = {
        let connection = Arc::clone(&connection);
        loom::thread::spawn(move || connection.mark_down(DownReason::WriteTimeout))
    };
    connection.mark_down(DownReason::ControlOverflow);
    racer.join().unwrap();
    assert_eq!(
        downs.load(Ordering::SeqCst),
        1,
        "S3: racing mark_down calls fired the hook more or less than once"
    );
    assert!(
        manager.get_connection(&NodeName::from("peer")).is_none(),
        "the downed generation stayed in the table"
    );
}

#[test]
fn racing_mark_down_calls_fire_the_hook_once() {
    model(3, || racing_mark_down_model(Planted::none()));
}

/// A generation goes down on another thread while this one redials as soon
/// as it sees the down flag: the redial must get a new generation, never the
/// displaced one, and the displaced one never returns to the table.
fn redial_model(planted: Planted) {
    let (manager, downs) = manager(planted);
    let node = NodeName::from("peer");
    let first = stream(64);
    let old: Arc<DistConnection> = manager.register(node.clone(), first);
    let killer = {
        let old = Arc::clone(&old);
        loom::thread::spawn(move || old.mark_down(DownReason::PeerClosed))
    };
    while !old.is_down() {
        loom::thread::yield_now();
    }
    let second = stream(64);
    let new = manager.register(node.clone(), second);
    assert!(
        !Arc::ptr_eq(&new, &old),
        "liveness: the redial was handed the down generation"
    );
    assert_eq!(new.generation(), 2);
    killer.join().unwrap();
    let current = manager.get_connection(&node);
    assert!(
        current.is_none_or(|c| !Arc::ptr_eq(&c, &old)),
        "the displaced generation returned to the table"
    );
    assert_eq!(
        downs.load(Ordering::SeqCst),
        1,
        "S3: generation 1's hook did not fire exactly once"
    );
    manager.disconnect_node(&node);
}

#[test]
fn a_redial_racing_a_down_gets_a_new_generation_and_the_old_one_never_returns() {
    model(3, || redial_model(Planted::none()));
}

/// A socket that takes `stall_at` bytes, then refuses once (so a write
/// that meets it hits its eager loom deadline), then takes everything; it
/// records what reached it.
struct Stutter {
    written: Arc<std::sync::Mutex<Vec<u8>>>,
    stall_at: usize,
    stalled: bool,
}

impl AsyncWrite for Stutter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let written = Arc::clone(&self.written);
        let mut written = written.lock().unwrap();
        if !self.stalled && written.len() >= self.stall_at {
            self.stalled = true;
            return Poll::Pending;
        }
        let n = if self.stalled {
            buf.len()
        } else {
            buf.len().min(self.stall_at - written.len())
        };
        written.extend_from_slice(&buf[..n]);
        Poll::Ready(Ok(n))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// A connection whose socket stalls once 20 bytes in (mid-frame for the
/// long frame), and what reached the socket.
fn stuttering(
    manager: &ConnectionManager,
) -> (Arc<DistConnection>, Arc<std::sync::Mutex<Vec<u8>>>) {
    let written = Arc::new(std::sync::Mutex::new(Vec::new()));
    let connection = manager.register(
        NodeName::from("peer"),
        Connected {
            read: Box::new(Silent),
            write: Box::new(Stutter {
                written: Arc::clone(&written),
                stall_at: 20,
                stalled: false,
            }),
            peer: "far".into(),
            local: "near".into(),
        },
    );
    (connection, written)
}

/// A 48-byte frame the stuttering socket cuts, and a 16-byte one it takes.
fn long_and_short() -> (Arc<[u8]>, Arc<[u8]>) {
    (
        Arc::from(lanesim_target::wire::encode(&[0xAA; 40], b"")),
        Arc::from(lanesim_target::wire::encode(&[0xBB; 8], b"")),
    )
}

/// DC-2 on the socket: whole frames, then at most one cut one, and nothing
/// after it.
fn assert_nothing_after_a_cut_frame(bytes: &[u8], long: &[u8], short: &[u8]) {
    let whole_then_cut = |first: &[u8], second: &[u8]| {
        bytes.starts_with(first) && second.starts_with(&bytes[first.len()..])
    };
    assert!(
        long.starts_with(bytes)
            || short.starts_with(bytes)
            || whole_then_cut(long, short)
            || whole_then_cut(short, long),
        "DC-2: a frame was written after a cut one: {bytes:02x?}"
    );
}

/// Two writers with a deadline on one connection whose socket stalls in the
/// middle of the first frame: a write cut by its deadline takes its
/// connection down before it lets go of the writer, so the other writer
/// never appends a frame to half of one (the peer would read garbage).
fn shared_socket_model() {
    let (manager, _) = manager(Planted::none());
    let (connection, written) = stuttering(&manager);
    let deadline = Some(std::time::Duration::from_secs(5));
    let (long, short) = long_and_short();
    let other = {
        let (connection, short) = (Arc::clone(&connection), Arc::clone(&short));
        loom::thread::spawn(move || {
            let _ = loom::future::block_on(connection.write_frame(&short, deadline));
        })
    };
    let _ = loom::future::block_on(connection.write_frame(&long, deadline));
    other.join().unwrap();
    assert_nothing_after_a_cut_frame(&written.lock().unwrap(), &long, &short);
    manager.disconnect_node(&NodeName::from("peer"));
}

#[test]
fn a_write_cut_by_its_deadline_never_shares_the_socket_with_another_writer() {
    model(3, shared_socket_model);
}

/// A link table attached to `manager` and how many `noconnection`s it has
/// delivered. A loom atomic: read after a join, loom orders it after the
/// deliveries (a std counter there would not be).
fn counting_link_table(manager: &ConnectionManager) -> (LinkTable, Arc<AtomicUsize>) {
    let delivered = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&delivered);
    let table = LinkTable::new(move |_, _| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    table.attach(manager);
    (table, delivered)
}

/// A link made on this thread while another marks its generation down (the
/// link table's down hook sweeping it): either the link goes in first and
/// the sweep breaks it, or the link reads its generation down and is broken
/// at once. Both ways, `noconnection` exactly once and nothing left in the
/// table (DC-3's duty, E2E's no lost death signal). The link's look at the
/// down flag and its insert share the table lock the sweep takes; with the
/// look taken before that lock, a sweep between the two leaves the link in a
/// dead generation's table for good. That mutant
/// (`links-down-check-outside-lock`) passes every simulated world and every
/// other model; this one fails on it ("made Some(..), left [..]").
fn link_vs_down_model() {
    let (manager, _) = manager(Planted::none());
    let (table, delivered) = counting_link_table(&manager);
    let node = NodeName::from("peer");
    let connection = manager.register(node.clone(), stream(64));
    let downer = {
        let connection = Arc::clone(&connection);
        // The hooks run on this thread, inside `mark_down`: the join below
        // waits for the sweep too.
        loom::thread::spawn(move || connection.mark_down(DownReason::ManualDisconnect))
    };
    let made = table.link(&connection, 1, 2);
    downer.join().unwrap();
    assert_eq!(
        delivered.load(Ordering::SeqCst),
        1,
        "E2E: a link racing its generation's down got {} noconnection(s) (made {made:?}, left {:?})",
        delivered.load(Ordering::SeqCst),
        table.links_over(&node)
    );
    assert!(
        table.links_over(&node).is_empty(),
        "E2E: a link stayed in the table of a dead generation: {:?}",
        table.links_over(&node)
    );
}

#[test]
fn a_link_racing_its_generations_down_gets_noconnection_exactly_once() {
    model(3, link_vs_down_model);
}

/// A redial registers the next generation and links over it as soon as the
/// old one's flag is down, while the old one's down hook may not have run
/// yet: that hook breaks the links of its own generation or older, never the
/// fresh one. Mutant `links-down-breaks-newer` breaks every link over the
/// node: an invented `noconnection` for a live link.
fn redial_link_vs_late_hook_model() {
    let (manager, _) = manager(Planted::none());
    let (table, delivered) = counting_link_table(&manager);
    let node = NodeName::from("peer");
    let old = manager.register(node.clone(), stream(64));
    let downer = {
        let old = Arc::clone(&old);
        loom::thread::spawn(move || old.mark_down(DownReason::ManualDisconnect))
    };
    while !old.is_down() {
        loom::thread::yield_now();
    }
    let new = manager.register(node.clone(), stream(64));
    let fresh = table.link(&new, 1, 2);
    downer.join().unwrap();
    assert!(
        fresh.is_some(),
        "the redialed generation {} read down",
        new.generation()
    );
    assert_eq!(
        delivered.load(Ordering::SeqCst),
        0,
        "E2E: noconnection invented for a link over live generation {} (left {:?})",
        new.generation(),
        table.links_over(&node)
    );
    assert_eq!(
        table.links_over(&node),
        fresh.into_iter().collect::<Vec<_>>(),
        "the fresh link left the table"
    );
    manager.disconnect_node(&node);
}

#[test]
fn a_late_down_hook_never_breaks_a_link_over_the_next_generation() {
    model(3, redial_link_vs_late_hook_model);
}

/// A write dropped in the middle of its frame (its caller's `select!` or
/// timeout gave up on it, or the sender's shutdown aborted the drain
/// mid-write) leaves half a frame on the stream: its connection goes down
/// before the writer lock is released, so no other writer appends a frame
/// to the cut one (DC-2; the peer would read garbage).
fn cancelled_write_model() {
    let (manager, _) = manager(Planted::none());
    let (connection, written) = stuttering(&manager);
    let (long, short) = long_and_short();
    let other = {
        let (connection, short) = (Arc::clone(&connection), Arc::clone(&short));
        loom::thread::spawn(move || {
            let _ = loom::future::block_on(connection.write_frame(&short, None));
        })
    };
    {
        // One poll, then the write is dropped wherever it got to: waiting
        // for the lock, stalled mid-frame, or done.
        let mut write = std::pin::pin!(connection.write_frame(&long, None));
        let _ = loom::future::block_on(std::future::poll_fn(|cx| {
            Poll::Ready(std::future::Future::poll(write.as_mut(), cx))
        }));
    }
    other.join().unwrap();
    assert_nothing_after_a_cut_frame(&written.lock().unwrap(), &long, &short);
    manager.disconnect_node(&NodeName::from("peer"));
}

#[test]
fn a_write_dropped_mid_frame_never_shares_the_socket_with_another_writer() {
    model(3, cancelled_write_model);
}

/// Counts what became of each control: written (or failed, which marks its
/// connection down), skipped on a down generation, or discarded (its
/// generation marked down first). In a loom atomic, so a model that reads
/// it is ordered after the drain's thread that wrote it.
struct Dispositions(Arc<AtomicUsize>);

impl SenderObserver for Dispositions {
    fn write_started(&self, _: &DistConnection, _: SenderLane, _: &[u8]) {}
    fn write_finished(&self, _: &DistConnection, _: SenderLane, _: &[u8], _: WriteOutcome) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    fn control_skipped(&self, _: &DistConnection, _: &[u8]) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    fn data_unroutable(&self, _: &NodeName, _: &[u8]) {}
    fn write_abandoned(&self, _: &DistConnection, _: SenderLane, _: &[u8]) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    fn control_discarded(&self, _: &DistConnection, _: &[u8]) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A control enqueued on one thread while another shuts the sender down:
/// accepted, it is written or its generation goes down (DC-1), whichever
/// side of the aborted drain's last sweep it lands. `enqueue_control` looks
/// at the closed flag before its send and again after; without the second
/// look, a control that lands after that sweep stays in the lane, unwritten
/// with its generation up, until the lane is dropped (mutant
/// `sender-shutdown-race-recheck-removed`). Needs `abort` to end the drain
/// as tokio's does, by dropping it at its next poll (the shim's loom
/// runtime).
fn control_vs_shutdown_model() {
    let (manager, _) = manager(Planted::none());
    let connection = manager.register(NodeName::from("peer"), stream(64));
    let disposed = Arc::new(AtomicUsize::new(0));
    let sender = {
        let mut config = SenderConfig::new(runtime());
        config.control_capacity = 1;
        config.observer = Some(Arc::new(Dispositions(Arc::clone(&disposed))));
        DistSender::new(manager.clone(), config).unwrap()
    };
    let frame = frame(8);
    let enqueuer = {
        let (sender, connection, frame) =
            (sender.clone(), Arc::clone(&connection), Arc::clone(&frame));
        loom::thread::spawn(move || {
            sender
                .enqueue_control(ControlOutbound { connection, frame })
                .is_ok()
        })
    };
    sender.shutdown();
    let accepted = enqueuer.join().unwrap();
    drop(sender);
    // Settled once nothing else holds the frame: disposed of, or dropped
    // with the lane when the drain and the last handle are gone. That count
    // is std's, which loom does not order by, so the disposition count is
    // read with a read-modify-write: it sees the latest value.
    while Arc::strong_count(&frame) > 1 {
        loom::thread::yield_now();
    }
    let disposed = disposed.fetch_add(0, Ordering::SeqCst);
    assert!(
        !accepted || disposed == 1,
        "DC-1: a control accepted while the sender shut down was {} (1 expected: written, \
         skipped on a down generation, or discarded with its generation marked down)",
        match disposed {
            0 => "never disposed of (lost with its generation up)".to_string(),
            n => format!("disposed of {n} times"),
        }
    );
    manager.disconnect_node(&NodeName::from("peer"));
}

#[test]
fn a_control_racing_a_shutdown_is_written_or_its_generation_goes_down() {
    // Two preemptions: the window needs one (the enqueuer stopped between
    // its look and its send while the drain is aborted and swept). Three
    // took 48 s against 2 s and caught nothing more.
    model(2, control_vs_shutdown_model);
}

#[cfg(feature = "planted-bugs")]
mod detects {
    use lanesim::planted::{Planted, PlantedBug};

    use super::*;
    use crate::checker::failure_of;

    #[test]
    fn silent_control_overflow_detects_a_lost_control() {
        let message = failure_of(|| {
            model(3, || {
                control_lane_model(4096, 16, Planted::bug(PlantedBug::SilentControlOverflow))
            })
        });
        assert!(
            message.contains("DC-1") && message.contains("lost silently"),
            "{message}"
        );
    }

    #[test]
    fn down_hook_not_once_guarded_detects_a_second_hook() {
        let message = failure_of(|| {
            model(3, || {
                racing_mark_down_model(Planted::bug(PlantedBug::DownHookNotOnceGuarded))
            })
        });
        assert!(message.contains("S3"), "{message}");
    }

    #[test]
    fn down_entry_treated_as_connected_detects_a_redial_handed_the_dead_generation() {
        let message = failure_of(|| {
            model(3, || {
                redial_model(Planted::bug(PlantedBug::DownEntryTreatedAsConnected))
            })
        });
        assert!(message.contains("liveness"), "{message}");
    }
}
