//! The model channel under shuttle: flume's semantics (order, capacity,
//! waiting for room, disconnects), and no lost wake-up in any schedule.
//!
//! Run: `RUSTFLAGS="--cfg shuttle" cargo test --release -p lanesim-shim --test shuttle_chan`
#![cfg(shuttle)]

use lanesim_shim::chan::{self, SendError, TrySendError};

/// A sender blocked on a full channel of one goes on as the receiver takes
/// items: every item arrives once, in order, and the channel never holds
/// more than its capacity (a second `try_send` while one is queued is
/// refused as full).
#[test]
fn a_full_bounded_channel_holds_its_sender_until_a_receive_makes_room() {
    shuttle::check_random(
        || {
            let (tx, rx) = chan::bounded::<u32>(1);
            let probe = tx.clone();
            let sender = shuttle::thread::spawn(move || {
                for item in 0..3 {
                    tx.send(item).unwrap();
                }
            });
            let mut got = Vec::new();
            while got.len() < 3 {
                got.push(shuttle::future::block_on(rx.recv_async()).unwrap());
            }
            sender.join().unwrap();
            assert_eq!(got, [0, 1, 2]);
            probe.try_send(10).ok().unwrap();
            assert!(matches!(probe.try_send(11), Err(TrySendError::Full(11))));
        },
        300,
    );
}

/// `send_async` waits for room and is woken by every receive: two tasks
/// sending 10 items each through a channel of one, against one receiver,
/// never deadlock (shuttle fails a schedule where every task waits) and
/// deliver each sender's items in its order.
#[test]
fn send_async_never_misses_the_receive_that_makes_room() {
    shuttle::check_random(
        || {
            let (tx, rx) = chan::bounded::<(u32, u32)>(1);
            let senders: Vec<_> = (0..2)
                .map(|who| {
                    let tx = tx.clone();
                    shuttle::thread::spawn(move || {
                        shuttle::future::block_on(async {
                            for seq in 0..10 {
                                tx.send_async((who, seq)).await.unwrap();
                            }
                        });
                    })
                })
                .collect();
            drop(tx);
            let mut next = [0, 0];
            while let Ok((who, seq)) = shuttle::future::block_on(rx.recv_async()) {
                assert_eq!(seq, next[who as usize], "sender {who} reordered");
                next[who as usize] += 1;
            }
            assert_eq!(next, [10, 10]);
            for sender in senders {
                sender.join().unwrap();
            }
        },
        300,
    );
}

/// A sender waiting for room is told when the receiver goes, with its item
/// back, in every schedule (never left waiting).
#[test]
fn a_waiting_sender_gets_its_item_back_when_the_receiver_goes() {
    shuttle::check_random(
        || {
            let (tx, rx) = chan::bounded::<u32>(1);
            tx.try_send(1).ok().unwrap();
            let sender =
                shuttle::thread::spawn(move || shuttle::future::block_on(tx.send_async(2)));
            drop(rx);
            assert!(matches!(sender.join().unwrap(), Err(SendError(2))));
        },
        300,
    );
}

/// A receiver that only polls (`try_recv`) still makes room for a sender
/// waiting in `send_async`: every take wakes the waiting senders.
#[test]
fn a_try_recv_wakes_a_sender_waiting_for_room() {
    shuttle::check_random(
        || {
            let (tx, rx) = chan::bounded::<u32>(1);
            let sender = shuttle::thread::spawn(move || {
                shuttle::future::block_on(async {
                    for item in 0..3 {
                        tx.send_async(item).await.unwrap();
                    }
                });
            });
            let mut got = Vec::new();
            // A sender left waiting would never send again: the bound turns
            // that into a failure instead of a spin.
            for _ in 0..10_000 {
                match rx.try_recv() {
                    Ok(item) => got.push(item),
                    Err(_) if got.len() == 3 => break,
                    Err(_) => shuttle::thread::yield_now(),
                }
            }
            assert_eq!(got, [0, 1, 2], "a sender waiting for room was not woken");
            sender.join().unwrap();
        },
        200,
    );
}
