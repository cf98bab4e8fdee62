//! A real `ConnectionManager` on loopback against peers that do not hold
//! the cluster cookie: an impostor claiming a connected node's name, a
//! replayed proof, a reflected proof, and a listener without the cookie at
//! the address a node dials. Each asserts that the impostor registers
//! nothing, displaces nothing and receives nothing after the node's
//! challenge, that the honest node it claimed to be keeps its connection
//! and is delivered to, and that the refusal is logged with its reason.

mod common;

use std::time::Duration;

use common::capture::Captured;
use common::raw::{closed_by_the_other_end, hello, prove, COOKIE, WRONG_COOKIE};
use common::served::{an_honest_peer_is_delivered, config, served, Memory};
use common::{snapshot, wait_for};
use lanesim::distribution::frame::{read_frame, Frame};
use lanesim::distribution::{DialError, NodeName};
use lanesim::planted::PlantedBug;
use lanesim_target::handshake::{parse_challenge, Role, Transcript, CHALLENGE, PROOF};
use lanesim_target::wire::{self, encode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// z holds a live connection to the real a; an impostor without the cookie
/// dials z as a. The tie-break would favour the impostor's stream (dialed
/// by a, the lower name, over z's own dial of a), so only the proof stands
/// between it and a's slot: it is refused, z keeps the real a's generation,
/// and z's next frame for a reaches the real a, not the impostor.
#[tokio::test]
async fn an_impostor_without_the_cookie_never_registers() {
    let captured = Captured::default();
    let _log = captured.install();
    let z = served("z@test", config()).await;
    let a = served("a@test", config()).await;
    let a_name = NodeName::from("a@test");
    let real = z.manager.dial(&a_name, &a.addr).await.unwrap();
    let memory = Memory::now();

    let mut impostor = TcpStream::connect(&z.addr).await.unwrap();
    let verified = prove(&mut impostor, b"a@test", WRONG_COOKIE).await.unwrap();
    assert!(!verified, "z's proof verified under another cookie");
    let read = closed_by_the_other_end(&mut impostor, "the impostor").await;
    assert_eq!(read, 0, "z wrote to the impostor after its challenge");

    let now = z.manager.get_connection(&a_name).expect("z lost a");
    assert_eq!(
        now.generation(),
        real.generation(),
        "the impostor displaced a"
    );
    assert!(!real.is_down());
    real.write_frame(&encode(b"for a", b""), Some(Duration::from_secs(5)))
        .await
        .unwrap();
    wait_for("the real a to get z's frame", || {
        snapshot(&a.frames).iter().any(|f| f.control == b"for a")
    })
    .await;
    wait_for("the refusal logged with its reason", || {
        !captured
            .matching(&["inbound connection refused", "proof does not verify"])
            .is_empty()
    })
    .await;
    an_honest_peer_is_delivered(&z, "b@test", b"after the impostor").await;
    memory.grew_less_than(64 << 20, "the impostor");
}

/// A proof taken from one honest handshake and replayed on a new stream
/// (same hello, same nonce) is refused: the node's fresh nonce makes each
/// stream's proof its own.
#[tokio::test]
async fn a_replayed_proof_is_refused() {
    let z = served("z@test", config()).await;
    // The honest stream whose proof the attacker recorded.
    let mut honest = TcpStream::connect(&z.addr).await.unwrap();
    honest.write_all(&hello(b"r@test")).await.unwrap();
    let challenge = read_challenge(&mut honest).await;
    let recorded = Transcript {
        dialer: b"r@test",
        acceptor: b"z@test",
        dialer_nonce: [7; 16],
        acceptor_nonce: challenge,
    }
    .proof(COOKIE, Role::Dialer);
    let recorded = encode(PROOF, &recorded);
    honest.write_all(&recorded).await.unwrap();
    wait_for("the honest stream registered", || {
        z.manager
            .get_connection(&NodeName::from("r@test"))
            .is_some()
    })
    .await;
    drop(honest);
    wait_for("the honest stream gone", || {
        z.manager
            .get_connection(&NodeName::from("r@test"))
            .is_none()
    })
    .await;

    let mut replay = TcpStream::connect(&z.addr).await.unwrap();
    replay.write_all(&hello(b"r@test")).await.unwrap();
    let fresh = read_challenge(&mut replay).await;
    assert_ne!(fresh, challenge, "the node reused its nonce");
    replay.write_all(&recorded).await.unwrap();
    assert_eq!(closed_by_the_other_end(&mut replay, "the replay").await, 0);
    assert!(z
        .manager
        .get_connection(&NodeName::from("r@test"))
        .is_none());
}

/// The node's own proof, sent back as the dialer's, is refused: the two
/// roles' proofs are made under different labels.
#[tokio::test]
async fn a_reflected_proof_is_refused() {
    let z = served("z@test", config()).await;
    let mut reflector = TcpStream::connect(&z.addr).await.unwrap();
    reflector.write_all(&hello(b"a@test")).await.unwrap();
    let frame = read_frame(&mut reflector, 1024).await.unwrap();
    let Frame::Data { control, payload } = frame else {
        panic!("no challenge");
    };
    assert_eq!(control, CHALLENGE);
    let theirs = &payload[16..48];
    reflector.write_all(&encode(PROOF, theirs)).await.unwrap();
    assert_eq!(
        closed_by_the_other_end(&mut reflector, "the reflector").await,
        0
    );
    assert!(z.manager.slots().is_empty(), "{:?}", z.manager.slots());
}

/// z dials an address where something without the cookie listens and
/// answers as a: the dial fails `BadProof`, nothing is registered, and the
/// listener gets the hello and nothing else (no proof, no frame).
#[tokio::test]
async fn a_listener_without_the_cookie_gets_no_frame() {
    let z = served("z@test", config()).await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let fake = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let Frame::Data { payload, .. } = read_frame(&mut stream, 1024).await.unwrap() else {
            panic!("no hello");
        };
        let transcript = Transcript {
            dialer: &payload[16..],
            acceptor: b"a@test",
            dialer_nonce: payload[..16].try_into().unwrap(),
            acceptor_nonce: [3; 16],
        };
        let challenge = lanesim_target::handshake::challenge(&transcript, WRONG_COOKIE);
        stream.write_all(&challenge).await.unwrap();
        closed_by_the_other_end(&mut stream, "the fake listener").await
    });
    let dialed = z.manager.dial(&NodeName::from("a@test"), &addr).await;
    assert!(matches!(dialed, Err(DialError::BadProof)), "{dialed:?}");
    assert_eq!(fake.await.unwrap(), 0, "z wrote past its hello");
    assert!(z.manager.slots().is_empty());
}

/// z dials an address where another node of the cluster (y, with the
/// cookie) listens, expecting x: the dial fails `WrongNode` and registers
/// nothing.
#[tokio::test]
async fn a_node_answering_under_another_name_is_refused() {
    let z = served("z@test", config()).await;
    let y = served("y@test", config()).await;
    let dialed = z.manager.dial(&NodeName::from("x@test"), &y.addr).await;
    assert!(
        matches!(&dialed, Err(DialError::WrongNode(name)) if name == "y@test"),
        "{dialed:?}"
    );
    assert!(z.manager.slots().is_empty());
}

/// Planted bug #15 is what the tests above rule out: with it, the
/// impostor registers under a's name and z writes to it.
#[tokio::test]
async fn with_the_proof_skipped_an_impostor_registers() {
    let Some(planted) = lanesim::planted::Planted::select(PlantedBug::HandshakeSkipsProof) else {
        return; // a build without planted bugs
    };
    let mut config = config();
    config.planted = planted;
    let z = served("z@test", config).await;
    let mut impostor = TcpStream::connect(&z.addr).await.unwrap();
    prove(&mut impostor, b"a@test", WRONG_COOKIE).await.unwrap();
    wait_for("the impostor registered", || {
        z.manager
            .get_connection(&NodeName::from("a@test"))
            .is_some()
    })
    .await;
    // The keepalive z writes at registration: the first byte it was never
    // to send.
    let mut keepalive = [1u8; 8];
    tokio::time::timeout(Duration::from_secs(5), impostor.read_exact(&mut keepalive))
        .await
        .expect("z wrote nothing to the registered impostor")
        .unwrap();
    assert_eq!(keepalive, [0; 8]);
}

async fn read_challenge(stream: &mut TcpStream) -> [u8; 16] {
    let Frame::Data { control, payload } = read_frame(stream, 1024).await.unwrap() else {
        panic!("a keepalive in place of the challenge");
    };
    let bytes = encode(&control, &payload);
    let (frame, _) = wire::decode(&bytes, 1024).unwrap().unwrap();
    parse_challenge(&frame).expect("a challenge").nonce
}
