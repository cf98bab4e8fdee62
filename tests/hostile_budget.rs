//! A real `ConnectionManager` on loopback against peers that spend the
//! shared budget for partly read frames, and against a slowloris: one test
//! per attack, each ending with an honest peer that must be delivered to,
//! and each asserting that only the offenders went down, with the reason
//! logged, and that the process's memory stayed bounded.

mod common;

use std::time::{Duration, Instant};

use common::capture::Captured;
use common::raw::raw_peer;
use common::served::{an_honest_peer_is_delivered, config, served, Memory};
use common::{snapshot, wait_for};
use lanesim::distribution::{DownReason, NodeName};
use lanesim_target::wire::encode;
use tokio::io::AsyncWriteExt;

const MIB: usize = 1024 * 1024;

fn header(body: usize) -> Vec<u8> {
    let mut header = 0u32.to_be_bytes().to_vec();
    header.extend_from_slice(&u32::try_from(body).unwrap().to_be_bytes());
    header
}

/// Twenty-four peers each send 15 MiB of a 16 MiB frame and stop: together
/// 22 times a 16 MiB budget. Each is owed an equal share; those over theirs
/// are evicted as others need room. Then an honest peer sends a 4 MiB
/// frame and a 4 KiB one: both are delivered, it is never downed, the
/// process held at most about twice the budget, and every peer that went
/// down was a spender, `OverBudget`, with the reason logged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_honest_peer_is_not_refused_for_what_others_hold() {
    const BUDGET: usize = 16 * MIB;
    let captured = Captured::default();
    let _log = captured.install();
    let mut config = config();
    config.frame_budget = BUDGET as u64;
    config.max_frame = BUDGET as u64;
    let node = served("z@test", config).await;
    let memory = Memory::now();

    let mut spenders = Vec::new();
    let body = vec![0u8; 15 * MIB];
    for i in 0..24 {
        let mut spender = raw_peer(&node.addr, format!("s{i}@test").as_bytes()).await;
        spender.write_all(&header(16 * MIB)).await.unwrap();
        // A spender the node evicted is closed: its write fails part-way.
        let write = tokio::time::timeout(Duration::from_secs(10), spender.write_all(&body));
        let _ = write.await;
        spenders.push(spender);
    }

    let honest = served("a@test", common::served::config()).await;
    let connection = honest
        .manager
        .dial(node.manager.local(), &node.addr)
        .await
        .unwrap();
    for (tag, size) in [(&b"big"[..], 4 * MIB), (&b"small"[..], 4096)] {
        connection
            .write_frame(&encode(tag, &vec![1; size]), Some(Duration::from_secs(10)))
            .await
            .unwrap();
    }
    wait_for("both honest frames delivered", || {
        let frames = snapshot(&node.frames);
        ["big", "small"].iter().all(|tag| {
            frames
                .iter()
                .any(|f| f.node.as_str() == "a@test" && f.control == tag.as_bytes())
        })
    })
    .await;
    assert!(!connection.is_down(), "the honest peer was downed");
    let a = NodeName::from("a@test");
    assert!(node.manager.get_connection(&a).is_some());
    let evicted = captured.matching(&["over its share of the frame budget"]);
    assert!(
        evicted.iter().all(|line| line.contains("node=s")),
        "a non-spender was refused: {evicted:?}"
    );
    // The budget twice over (each holder's buffer rounded up to its
    // capacity), the honest frames and their copies on both ends; without
    // the budget the spenders alone would hold 360 MiB.
    memory.grew_less_than((4 * BUDGET + 32 * MIB) as u64, "24 spenders");
    drop(spenders);
    an_honest_peer_is_delivered(&node, "b@test", b"after the spenders").await;
}

/// A peer that sends a frame's header and then one byte every 50 ms keeps
/// its silence clock quiet forever; the frame deadline takes it down
/// `FrameTimeout` once the body is late, logged, while an honest peer is
/// delivered to.
#[tokio::test]
async fn a_slowloris_frame_is_cut_off_at_the_frame_deadline() {
    const DEADLINE: Duration = Duration::from_millis(500);
    let captured = Captured::default();
    let _log = captured.install();
    let mut config = config();
    config.frame_timeout = Some(DEADLINE);
    let node = served("z@test", config).await;
    let memory = Memory::now();
    let downs = common::log::<(NodeName, DownReason)>();
    let sink = std::sync::Arc::clone(&downs);
    node.manager.register_connection_down(move |event| {
        sink.lock()
            .unwrap()
            .push((event.node.clone(), event.reason));
    });
    let mut slow = raw_peer(&node.addr, b"slow@test").await;
    wait_for("the slowloris registered", || {
        node.manager
            .get_connection(&NodeName::from("slow@test"))
            .is_some()
    })
    .await;
    let started = Instant::now();
    slow.write_all(&header(1024)).await.unwrap();
    let trickle = tokio::spawn(async move {
        for _ in 0..100 {
            if slow.write_all(&[0]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    wait_for("the slowloris goes down", || !snapshot(&downs).is_empty()).await;
    let took = started.elapsed();
    assert_eq!(
        snapshot(&downs),
        [(NodeName::from("slow@test"), DownReason::FrameTimeout)]
    );
    assert!(
        took >= DEADLINE && took < DEADLINE * 4,
        "down after {took:?} for a {DEADLINE:?} deadline"
    );
    assert_eq!(
        captured
            .matching(&["a frame slower than the frame deadline", "node=slow@test"])
            .len(),
        1,
        "{:?}",
        captured.records()
    );
    an_honest_peer_is_delivered(&node, "a@test", b"after the slowloris").await;
    memory.grew_less_than(64 << 20, "the slowloris");
    trickle.abort();
}

/// Planted bug #18 is what the test above rules out: with the deadline on
/// each read, a slowloris that sends a byte every 50 ms against a 500 ms
/// deadline is still up after four deadlines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_deadline_per_read_a_slowloris_is_never_cut_off() {
    const DEADLINE: Duration = Duration::from_millis(500);
    let Some(planted) =
        lanesim::planted::Planted::select(lanesim::planted::PlantedBug::FrameDeadlinePerRead)
    else {
        return; // a build without planted bugs
    };
    let mut config = config();
    config.frame_timeout = Some(DEADLINE);
    config.planted = planted;
    let node = served("z@test", config).await;
    let mut slow = raw_peer(&node.addr, b"slow@test").await;
    wait_for("the slowloris registered", || {
        node.manager
            .get_connection(&NodeName::from("slow@test"))
            .is_some()
    })
    .await;
    slow.write_all(&header(1024)).await.unwrap();
    let started = Instant::now();
    while started.elapsed() < DEADLINE * 4 {
        slow.write_all(&[0]).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        node.manager
            .get_connection(&NodeName::from("slow@test"))
            .is_some(),
        "cut off: the bug is not planted"
    );
}
