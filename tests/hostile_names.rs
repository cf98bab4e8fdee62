//! Names belong to their owners: real nodes on loopback, each on an
//! address of its own in 127.0.0.0/8, against insiders that hold the
//! cookie and claim a live node's name. An insider's claim is denied by
//! the live generation's node and refused without standing by; a
//! squatter that keeps its heartbeat alive gives the name back when the
//! owner, at the address the node dials for the name, claims it.

mod common;

use std::net::IpAddr;
use std::time::Duration;

use common::capture::Captured;
use common::served::{config, served_on, Served};
use common::{record_downs, snapshot, wait_for};
use lanesim::distribution::{DownReason, NodeName};
use lanesim_target::wire::encode;

fn ip(last: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, last])
}

/// The node the table holds for `name` at `node`: its generation and the
/// host its peer is on.
fn held(node: &Served, name: &NodeName) -> Option<(u64, String)> {
    node.manager.get_connection(name).map(|connection| {
        let host = connection.peer().rsplit_once(':').unwrap().0.to_owned();
        (connection.generation(), host)
    })
}

/// z dialed the real a; an insider with the cookie dials z as a. The
/// tie-break alone would hand the insider a's slot (a stream dialed by
/// the lower name beats z's own dial); a, asked over the live connection,
/// denies dialing it, so z refuses it and keeps a's generation, and z's
/// next frame for a reaches the real a.
#[tokio::test]
async fn an_insider_claiming_a_live_name_is_denied_and_the_generation_stays() {
    let captured = Captured::default();
    let _log = captured.install();
    let z = served_on("z@test", ip(1), config()).await;
    let a = served_on("a@test", ip(3), config()).await;
    let a_name = NodeName::from("a@test");
    let real = z.manager.dial(&a_name, &a.addr).await.unwrap();

    let insider = served_on("a@test", ip(2), config()).await;
    let claimed = insider
        .manager
        .dial(z.manager.local(), &z.addr)
        .await
        .expect("the insider's handshake completes: it holds the cookie");
    wait_for("z to close the insider's stream", || claimed.is_down()).await;

    assert_eq!(
        held(&z, &a_name),
        Some((real.generation(), "127.0.0.3".to_owned())),
        "the insider displaced a's generation"
    );
    assert!(!real.is_down());
    real.write_frame(&encode(b"for a", b""), Some(Duration::from_secs(5)))
        .await
        .unwrap();
    wait_for("the real a to get z's frame", || {
        snapshot(&a.frames).iter().any(|f| f.control == b"for a")
    })
    .await;
    assert!(
        snapshot(&insider.frames).is_empty(),
        "the insider read frames meant for a"
    );
    wait_for("the denial logged", || {
        !captured
            .matching(&["inbound connection refused", "claim refused"])
            .is_empty()
    })
    .await;
}

/// The real a dialed z; an insider claims a's name the same way. Such a
/// stream used to stand by for the incumbent and take the slot the moment
/// a blipped; denied, it is closed at once, and when a's generation goes
/// down and a dials again, the slot is a's.
#[tokio::test]
async fn a_denied_insider_does_not_stand_by_for_the_owners_next_blip() {
    let z = served_on("z@test", ip(1), config()).await;
    let a = served_on("a@test", ip(3), config()).await;
    let a_name = NodeName::from("a@test");
    let first = a.manager.dial(z.manager.local(), &z.addr).await.unwrap();
    wait_for("z to register a", || held(&z, &a_name).is_some()).await;

    let insider = served_on("a@test", ip(2), config()).await;
    let claimed = insider
        .manager
        .dial(z.manager.local(), &z.addr)
        .await
        .unwrap();
    wait_for("z to close the insider's stream", || claimed.is_down()).await;

    // a blips: its generation goes down at both ends, and a dials again.
    assert!(a.manager.disconnect_node(z.manager.local()));
    wait_for("z to see a's generation end", || {
        held(&z, &a_name).is_none_or(|(generation, _)| generation != first.generation())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_ne!(
        held(&z, &a_name).map(|(_, host)| host),
        Some("127.0.0.2".to_owned()),
        "the insider took the slot when a blipped"
    );
    a.manager.dial(z.manager.local(), &z.addr).await.unwrap();
    wait_for("z to hold a's new generation", || {
        held(&z, &a_name).is_some_and(|(_, host)| host == "127.0.0.3")
    })
    .await;
}

/// z has dialed a before, so it knows the host a's name is at. While a is
/// away, a squatter with the cookie (another host) takes the name and
/// keeps its heartbeat alive; when a dials z again, z takes the squatter
/// down `NameReclaimed` and a holds its name.
#[tokio::test]
async fn a_keepalive_squatter_gives_the_name_back_to_its_owner() {
    let captured = Captured::default();
    let _log = captured.install();
    let z = served_on("z@test", ip(1), config()).await;
    let downs = record_downs(&z.manager);
    let a = served_on("a@test", ip(3), config()).await;
    let a_name = NodeName::from("a@test");
    let first = z.manager.dial(&a_name, &a.addr).await.unwrap();
    assert!(z.manager.disconnect_node(&a_name));
    wait_for("a to see the disconnect", || {
        a.manager.get_connection(z.manager.local()).is_none()
    })
    .await;

    let squatter = served_on("a@test", ip(2), config()).await;
    let squatting = squatter
        .manager
        .dial(z.manager.local(), &z.addr)
        .await
        .unwrap();
    wait_for("z to register the squatter", || {
        held(&z, &a_name).is_some_and(|(_, host)| host == "127.0.0.2")
    })
    .await;
    let squatted = held(&z, &a_name).unwrap().0;
    assert!(squatted > first.generation());

    a.manager.dial(z.manager.local(), &z.addr).await.unwrap();
    wait_for("z to hand the name back to a", || {
        held(&z, &a_name).is_some_and(|(_, host)| host == "127.0.0.3")
    })
    .await;
    wait_for("the squatter's stream to be closed", || squatting.is_down()).await;
    assert!(
        snapshot(&downs)
            .iter()
            .any(|down| down.generation == squatted && down.reason == DownReason::NameReclaimed),
        "the squatter's generation did not go down NameReclaimed: {:?}",
        snapshot(&downs)
    );
    wait_for("the reclaim logged", || {
        !captured
            .matching(&["reclaimed it from a squatter"])
            .is_empty()
    })
    .await;
}

/// Nonces an insider chooses itself.
struct Fixed(lanesim_target::handshake::Nonce);

impl lanesim_target::handshake::Nonces for Fixed {
    fn next(&self) -> lanesim_target::handshake::Nonce {
        self.0
    }
}

/// Two insiders claim the live a at z at once: with one nonce between them
/// (a second stream with a nonce already being asked about once slipped
/// past the check), and with two (the real a answers one query at a time;
/// a second claim meanwhile once went unanswered and the table waved it
/// through). Either way neither claim displaces a's generation: a claim
/// that cannot be asked about is refused, never let through.
#[tokio::test]
async fn concurrent_insider_claims_never_displace_a_live_generation() {
    for same_nonce in [true, false] {
        let z = served_on("z@test", ip(1), config()).await;
        let a = served_on("a@test", ip(3), config()).await;
        let a_name = NodeName::from("a@test");
        let real = z.manager.dial(&a_name, &a.addr).await.unwrap();
        let insider = |last: u8| {
            let mut insider_config = config();
            if same_nonce {
                insider_config.nonces = std::sync::Arc::new(Fixed([9; 16]));
            }
            served_on("a@test", ip(last), insider_config)
        };
        let (one, two) = (insider(2).await, insider(4).await);
        let (first, second) = tokio::join!(
            one.manager.dial(z.manager.local(), &z.addr),
            two.manager.dial(z.manager.local(), &z.addr)
        );
        for claimed in [first, second].into_iter().flatten() {
            wait_for("z to close each insider's stream", || claimed.is_down()).await;
        }
        assert_eq!(
            held(&z, &a_name),
            Some((real.generation(), "127.0.0.3".to_owned())),
            "an insider displaced a's generation (same nonce: {same_nonce}): {:?}",
            real.down_reason()
        );
        assert!(!real.is_down());
    }
}

/// One live connection is asked about claim after claim: the real a
/// answers every query, one after another, so each insider in turn is
/// denied and closed at once (an answer that never gave its turn back
/// would leave the second claim unanswered, standing by for a's next
/// blip).
#[tokio::test]
async fn the_live_node_answers_claim_after_claim_on_one_connection() {
    let z = served_on("z@test", ip(1), config()).await;
    let a = served_on("a@test", ip(3), config()).await;
    let a_name = NodeName::from("a@test");
    let real = z.manager.dial(&a_name, &a.addr).await.unwrap();
    for round in 0..3_u8 {
        let insider = served_on("a@test", ip(10 + round), config()).await;
        let claimed = insider
            .manager
            .dial(z.manager.local(), &z.addr)
            .await
            .unwrap();
        let began = std::time::Instant::now();
        wait_for("z to close the insider's stream", || claimed.is_down()).await;
        assert!(
            began.elapsed() < Duration::from_secs(1),
            "claim {round} waited {:?}: it was not answered",
            began.elapsed()
        );
    }
    assert!(!real.is_down());
}
