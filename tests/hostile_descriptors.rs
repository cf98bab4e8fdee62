//! Descriptor exhaustion against a real `ConnectionManager` on loopback: the
//! process's descriptor limit is lowered, every descriptor left is taken,
//! and one more peer connects, so the node's `accept` fails with `EMFILE`.
//! It used to end the accept loop for good (every later dial refused, also
//! once descriptors were free); now the loop backs off and retries, logs the
//! burst once, and serves again as soon as descriptors are free.
//!
//! Its own test binary, with one test: the limit is the process's.
#![cfg(unix)]

mod common;

use std::fs::File;
use std::io;

use common::capture::Captured;
use common::raw::{answer_challenge, hello, COOKIE};
use common::served::{an_honest_peer_is_delivered, config, served};
use common::set_soft_limit;
use common::{snapshot, wait_for};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// The descriptors this process has open now.
fn open_descriptors() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(0, |dir| dir.count() as u64)
}

#[tokio::test]
async fn descriptor_exhaustion_backs_off_and_the_node_serves_again() {
    let captured = Captured::default();
    let _log = captured.install();
    let node = served("z@test", config()).await;
    let before = set_soft_limit(open_descriptors() + 16);

    // Take every descriptor left, then give one back for a peer's socket:
    // its connection then waits in the backlog, and accepting it needs a
    // descriptor there is none of.
    let mut ballast = Vec::new();
    loop {
        match File::open("/dev/null") {
            Ok(file) => ballast.push(file),
            Err(error) => {
                assert_eq!(error.raw_os_error(), Some(libc::EMFILE), "{error}");
                break;
            }
        }
        assert!(ballast.len() < 64, "the lowered limit did not hold");
    }
    ballast.pop();
    // The connect and hello complete (the peer's descriptor is the one given
    // back); the node's accept cannot take the stream.
    let mut stream = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        let mut stream = TcpStream::connect(&node.addr).await.unwrap();
        stream.write_all(&hello(b"r@test")).await.unwrap();
        stream
    })
    .await
    .expect("the peer connects");
    wait_for("accept to fail and back off a few times", || {
        node.manager.inbound().backed_off >= 3
    })
    .await;
    let failing = captured.matching(&["accept failing; retrying with back-off"]);
    assert_eq!(
        failing.len(),
        1,
        "one log line per burst: {:?}",
        captured.records()
    );
    assert!(failing[0].contains("Too many open files"), "{failing:?}");

    drop(ballast);
    restore(before);
    // The stream that waited is accepted, and so is everyone after it.
    assert!(answer_challenge(&mut stream, b"r@test", COOKIE)
        .await
        .unwrap());
    wait_for("the waiting peer to be registered", || {
        node.manager
            .connected_nodes()
            .iter()
            .any(|n| n.as_str() == "r@test")
    })
    .await;
    let recovered = captured.matching(&["accepting again"]);
    assert_eq!(recovered.len(), 1, "{:?}", captured.records());
    an_honest_peer_is_delivered(&node, "a@test", b"after the exhaustion").await;
    assert!(snapshot(&node.frames)
        .iter()
        .any(|f| f.node.as_str() == "a@test"));
    drop(stream);
}

fn restore(limit: libc::rlimit) {
    // SAFETY: setrlimit reads the struct passed.
    let restored = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
    assert_eq!(restored, 0, "{}", io::Error::last_os_error());
}
