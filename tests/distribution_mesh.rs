//! The distribution layer as a mesh on real loopback TCP (127.0.0.1 only):
//! real `ConnectionManager`s, each serving its own listener, and raw sockets
//! playing hostile peers. Covers the simultaneous-connect tie-break (and,
//! with `planted-bugs`, that its absence shows), heartbeats (an idle pair
//! stays up; a silent squatter is evicted and the real node then gets in),
//! the hello deadline, node-name validation and how refusals are logged,
//! slot removal under name churn, the shared frame budget, and a panicking
//! frame callback.
//!
//! Every wait is bounded (`wait_for`, or `BOUND`), so a broken claim fails
//! in seconds instead of hanging. Tests that read the log run on a
//! current-thread runtime: the managers' tasks then log on the test's own
//! thread, where a thread-local subscriber sees them and no other test's.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::capture::Captured;
use common::raw::{closed_by_the_other_end, hello, prove, raw_peer, COOKIE};
use common::{framed, log, record_downs, snapshot, wait_for, Log};
use lanesim::distribution::{
    ConnectionManager, DistConnection, DownEvent, DownReason, InboundFrame, ManagerConfig,
    NodeName, MAX_NODE_NAME,
};
use lanesim::shim::net::{BoxFuture, Connected, Listener, TokioTcp, Transport};
use lanesim::shim::rt::RuntimeChoice;
use lanesim_target::wire::encode;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};

/// Bound on any single wait: generous for a loaded CI machine, still only
/// seconds when a claim fails.
const BOUND: Duration = Duration::from_secs(5);

/// The heartbeat tick of the heartbeat tests: short enough for a fast
/// suite, long enough that a busy machine does not miss a keepalive (they
/// go out every quarter tick, 75 ms).
const TICK: Duration = Duration::from_millis(300);

const MIB: usize = 1 << 20;

// ---------------------------------------------------------------------------
// Nodes and raw peers

/// A manager serving its own listener on 127.0.0.1, and its down events.
struct Node {
    manager: ConnectionManager,
    addr: String,
    downs: Log<DownEvent>,
}

impl Node {
    fn name(&self) -> &NodeName {
        self.manager.local()
    }

    /// The live connection to `other`, if any.
    fn to(&self, other: &Node) -> Option<Arc<DistConnection>> {
        self.manager.get_connection(other.name())
    }

    fn downs(&self) -> Vec<DownEvent> {
        snapshot(&self.downs)
    }
}

fn config() -> ManagerConfig {
    ManagerConfig::new(RuntimeChoice::current(), common::raw::cookie())
}

fn ticking(tick: Duration) -> ManagerConfig {
    let mut config = config();
    config.tick = Some(tick);
    config
}

/// A node named `name` serving a real TCP listener on 127.0.0.1.
async fn node(name: &str, config: ManagerConfig) -> Node {
    let listener = TokioTcp.bind("127.0.0.1:0").await.unwrap();
    node_on(name, config, listener)
}

fn node_on(name: &str, config: ManagerConfig, listener: Box<dyn Listener>) -> Node {
    let manager =
        ConnectionManager::new(NodeName::from(name), Arc::new(TokioTcp), config).expect("manager");
    let downs = record_downs(&manager);
    let addr = listener.local_addr().unwrap();
    manager.serve(listener);
    Node {
        manager,
        addr,
        downs,
    }
}

/// The connection each end holds for the other, if both hold one and it is
/// the same socket (one end's local address is the other's peer address).
fn agreed(a: &Node, b: &Node) -> Option<(Arc<DistConnection>, Arc<DistConnection>)> {
    let (on_a, on_b) = (a.to(b)?, b.to(a)?);
    (on_a.local() == on_b.peer() && on_a.peer() == on_b.local()).then_some((on_a, on_b))
}

/// Both ends' view of the pair, for failure messages.
fn describe(a: &Node, b: &Node) -> String {
    let view = |from: &Node, to: &Node| match from.to(to) {
        Some(c) => format!(
            "gen {} {} -> {} down={:?}",
            c.generation(),
            c.local(),
            c.peer(),
            c.down_reason()
        ),
        None => "none".into(),
    };
    format!(
        "{} (listening {}): {}, slots {:?}, downs {:?}; {} (listening {}): {}, slots {:?}, downs {:?}",
        a.name(),
        a.addr,
        view(a, b),
        a.manager.slots(),
        a.downs(),
        b.name(),
        b.addr,
        view(b, a),
        b.manager.slots(),
        b.downs(),
    )
}

/// The header of a frame with no control and a `len`-byte payload.
fn header(len: usize) -> [u8; 8] {
    let mut header = [0u8; 8];
    header[4..].copy_from_slice(&u32::try_from(len).unwrap().to_be_bytes());
    header
}

// ---------------------------------------------------------------------------
// 1. The simultaneous-connect tie-break

/// Rounds per runtime flavour, each a fresh pair: one race from a clean
/// table.
const RACE_ROUNDS: usize = 20;

/// The runtimes the races run on: a current-thread one, where the two
/// dials, the accept loops and the handshakes interleave only at awaits,
/// and a multi-threaded one, where the handshakes run on other workers
/// while the dials register, so registrations land in varying orders.
fn race_runtimes() -> [(&'static str, tokio::runtime::Runtime); 2] {
    [
        (
            "current-thread",
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
        ),
        (
            "multi-thread",
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(4)
                .enable_all()
                .build()
                .unwrap(),
        ),
    ]
}

/// `a@test` and `b@test`, fresh, dial each other in the same poll
/// (`join!`): both dials look for a live connection before either stream
/// exists, so both streams are dialed. Returns the pair and what each dial
/// returned.
async fn race(
    config: impl Fn() -> ManagerConfig,
) -> (Node, Node, Arc<DistConnection>, Arc<DistConnection>) {
    let a = node("a@test", config()).await;
    let b = node("b@test", config()).await;
    let (from_a, from_b) = tokio::time::timeout(BOUND, async {
        tokio::join!(
            a.manager.dial(b.name(), &b.addr),
            b.manager.dial(a.name(), &a.addr)
        )
    })
    .await
    .expect("the dials hung");
    let (from_a, from_b) = (from_a.expect("a's dial"), from_b.expect("b's dial"));
    (a, b, from_a, from_b)
}

/// Of two live connections between a pair, both ends keep the one dialed by
/// the node whose name sorts lower, so a simultaneous connect ends with
/// exactly one connection, the same socket on both ends, a's. Pins the
/// manager's module doc.
#[test]
fn simultaneous_dials_converge_on_one_connection() {
    let mut incumbents_displaced = 0;
    for (flavour, runtime) in race_runtimes() {
        runtime.block_on(async {
            for round in 0..RACE_ROUNDS {
                let (a, b, from_a, _) = race(config).await;
                // At a the stream a dialed always wins, so its dial returns it.
                assert_eq!(from_a.peer(), b.addr, "{flavour} round {round}");
                let settled = tokio::time::timeout(BOUND, async {
                    loop {
                        match agreed(&a, &b) {
                            Some(pair) if pair.0.peer() == b.addr => return pair,
                            _ => tokio::time::sleep(Duration::from_millis(10)).await,
                        }
                    }
                })
                .await;
                let Ok((on_a, on_b)) = settled else {
                    panic!(
                        "{flavour} round {round}: no agreement on a's socket: {}",
                        describe(&a, &b)
                    );
                };
                assert!(Arc::ptr_eq(&on_a, &from_a), "{flavour} round {round}");
                // Nothing still in flight may flip it: b's stream, wherever
                // it lands now, loses the tie-break at both ends.
                tokio::time::sleep(Duration::from_millis(20)).await;
                let still = agreed(&a, &b);
                assert!(
                    still
                        .is_some_and(|(a2, b2)| Arc::ptr_eq(&on_a, &a2) && Arc::ptr_eq(&on_b, &b2)),
                    "{flavour} round {round}: the agreed connection was replaced: {}",
                    describe(&a, &b)
                );
                // Exactly one live connection per pair; every other
                // generation, at either end, is down.
                assert_eq!(a.manager.connected_nodes(), vec![b.name().clone()]);
                assert_eq!(b.manager.connected_nodes(), vec![a.name().clone()]);
                for (end, winner) in [(&a, &on_a), (&b, &on_b)] {
                    let slots = end.manager.slots();
                    assert_eq!(slots.len(), 1, "{flavour} round {round}: {slots:?}");
                    assert_eq!(slots[0].current, Some((winner.generation(), false)));
                    assert!(
                        end.downs()
                            .iter()
                            .all(|d| d.generation != winner.generation()),
                        "{flavour} round {round}: the winner went down: {}",
                        describe(&a, &b)
                    );
                }
                incumbents_displaced += [&a, &b]
                    .iter()
                    .flat_map(|end| end.downs())
                    .filter(|d| d.reason == DownReason::SimultaneousConnect)
                    .count();
                a.manager.disconnect_node(b.name());
            }
        });
    }
    // The race was real: b's stream had registered at b (and lost to a's
    // when it arrived) at least once, not always refused on arrival.
    assert!(
        incumbents_displaced > 0,
        "no live incumbent ever lost the tie-break"
    );
}

/// Dials of one node from one node take turns: eight dials of `b` started
/// in the same poll by `a` share one socket, so both ends hold the same
/// connection and no generation goes down. Without the turns, two of those
/// sockets can register in opposite orders on the two ends (the tie-break
/// cannot order two dials from the same side), each end closes the one the
/// other kept, and the pair ends with none: the mesh hunt found it (a
/// keeper's dial racing the workload's).
#[test]
fn concurrent_dials_of_one_node_share_one_socket() {
    for (flavour, runtime) in race_runtimes() {
        runtime.block_on(async {
            for round in 0..RACE_ROUNDS {
                let a = node("a@test", config()).await;
                let b = node("b@test", config()).await;
                let dials = (0..8).map(|_| a.manager.dial(b.name(), &b.addr));
                let dialed = tokio::time::timeout(BOUND, futures_join_all(dials))
                    .await
                    .expect("the dials hung");
                let first = dialed[0].as_ref().expect("a dial").clone();
                for other in &dialed {
                    let other = other.as_ref().expect("a dial");
                    assert!(
                        Arc::ptr_eq(other, &first),
                        "{flavour} round {round}: two dials made two connections: {}",
                        describe(&a, &b)
                    );
                }
                let settled = tokio::time::timeout(BOUND, async {
                    loop {
                        if agreed(&a, &b).is_some() {
                            return;
                        }
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                })
                .await;
                assert!(
                    settled.is_ok(),
                    "{flavour} round {round}: {}",
                    describe(&a, &b)
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
                assert!(
                    a.downs().is_empty() && b.downs().is_empty(),
                    "{flavour} round {round}: a generation went down: {}",
                    describe(&a, &b)
                );
            }
        });
    }
}

/// Runs every future to its end, concurrently, in order.
async fn futures_join_all<F: std::future::Future>(
    futures: impl Iterator<Item = F>,
) -> Vec<F::Output> {
    let mut pending: Vec<_> = futures.map(Box::pin).collect();
    let mut done: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut all = true;
        for (future, slot) in pending.iter_mut().zip(done.iter_mut()) {
            if slot.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(value) => *slot = Some(value),
                    std::task::Poll::Pending => all = false,
                }
            }
        }
        if all {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    done.into_iter()
        .map(|value| value.expect("finished"))
        .collect()
}

/// With `NoTieBreak` a live incumbent always wins, at both ends: each node
/// keeps the stream it registered first and refuses the other's. Before
/// the claim check, when both registered their own first, each refusal
/// closed the other's winner and the pair ended with no connection at
/// all. Now the side whose newcomer would win asks the other end before it
/// registers; that end has refused and closed the losing stream, which is
/// this side's incumbent, so the newcomer takes an empty slot: the pair
/// converges without the tie-break, every round, on both runtimes.
#[cfg(feature = "planted-bugs")]
#[test]
fn without_the_tie_break_the_claim_check_still_settles_simultaneous_dials() {
    use lanesim::planted::{Planted, PlantedBug};
    let planted = || {
        let mut config = config();
        config.planted = Planted::bug(PlantedBug::NoTieBreak);
        config
    };
    for (flavour, runtime) in race_runtimes() {
        runtime.block_on(async {
            for round in 0..RACE_ROUNDS {
                let (a, b, _, _) = race(planted).await;
                // Production converges in milliseconds; this is many times that.
                let converged = tokio::time::timeout(Duration::from_millis(500), async {
                    while agreed(&a, &b).is_none() {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                })
                .await;
                assert!(
                    converged.is_ok(),
                    "{flavour} round {round}: the pair disagrees: {}",
                    describe(&a, &b)
                );
                a.manager.disconnect_node(b.name());
            }
        });
    }
}

// ---------------------------------------------------------------------------
// 2. Heartbeats and the hello deadline

/// Keepalives go out every quarter tick, so a healthy pair that has nothing
/// to say never reads its silence as death.
#[tokio::test]
async fn an_idle_pair_stays_up_for_several_ticks_on_keepalives_alone() {
    let a = node("a@test", ticking(TICK)).await;
    let b = node("b@test", ticking(TICK)).await;
    a.manager.dial(b.name(), &b.addr).await.unwrap();
    wait_for("b registers a", || agreed(&a, &b).is_some()).await;
    let (on_a, on_b) = agreed(&a, &b).unwrap();
    tokio::time::sleep(TICK * 4).await;
    assert!(
        a.downs().is_empty() && b.downs().is_empty(),
        "an idle pair went down: {}",
        describe(&a, &b)
    );
    let (still_a, still_b) = agreed(&a, &b).expect("the pair still agrees");
    assert!(Arc::ptr_eq(&on_a, &still_a) && Arc::ptr_eq(&on_b, &still_b));
}

/// A peer that sends a valid hello and then nothing holds the name's slot
/// for one tick at most: meanwhile the real node is refused (the squatter
/// is a live incumbent), then the heartbeat evicts the squatter and the
/// real node gets in.
#[tokio::test]
async fn a_silent_squatter_is_evicted_after_a_tick_and_the_real_node_then_connects() {
    let captured = Captured::default();
    let _log = captured.install();
    let server = node("server@test", ticking(TICK)).await;
    let x_name = NodeName::from("x@test");
    let started = Instant::now();
    let mut squatter = raw_peer(&server.addr, b"x@test").await;
    wait_for("the squatter holds x's slot", || {
        server.manager.get_connection(&x_name).is_some()
    })
    .await;
    let squatted = server.manager.get_connection(&x_name).unwrap();

    // The real x, while the squatter holds the slot: its stream is refused.
    // It stands by (the incumbent could have been a stale stream of x's)
    // and is closed when its window ends with the squatter still up. x sees
    // that as its peer closing, or as a reset when the server closed it
    // with x's keepalive unread.
    let x = node("x@test", ticking(TICK)).await;
    let refused = x.manager.dial(server.name(), &server.addr).await.unwrap();
    wait_for("x's refused generation goes down", || refused.is_down()).await;
    assert!(
        matches!(
            refused.down_reason(),
            Some(DownReason::PeerClosed | DownReason::ReadError | DownReason::WriteError)
        ),
        "{:?}",
        refused.down_reason()
    );
    assert!(
        !squatted.is_down(),
        "the squatter went down before x was refused: tick too short for this machine?"
    );
    assert!(Arc::ptr_eq(
        &server.manager.get_connection(&x_name).unwrap(),
        &squatted
    ));
    assert_eq!(
        captured
            .matching(&[
                "WARN connection refused: the node already has a live connection",
                "node=x@test"
            ])
            .len(),
        1,
        "{:#?}",
        captured.records()
    );

    // The squatter has been silent since its hello: down within the tick
    // (plus scheduling slack), never before it.
    wait_for("the squatter goes down", || squatted.is_down()).await;
    let evicted_after = started.elapsed();
    assert_eq!(squatted.down_reason(), Some(DownReason::HeartbeatTimeout));
    assert!(
        evicted_after >= TICK && evicted_after <= TICK + Duration::from_secs(1),
        "evicted after {evicted_after:?} with a {TICK:?} tick"
    );
    assert_eq!(
        server.downs(),
        vec![DownEvent {
            node: x_name.clone(),
            generation: squatted.generation(),
            reason: DownReason::HeartbeatTimeout
        }]
    );
    closed_by_the_other_end(&mut squatter, "the squatter").await;
    assert_eq!(
        captured
            .matching(&["WARN nothing read for a heartbeat tick", "node=x@test"])
            .len(),
        1
    );

    // Now the real x connects, and stays.
    x.manager.dial(server.name(), &server.addr).await.unwrap();
    wait_for("the server registers the real x", || {
        agreed(&x, &server).is_some()
    })
    .await;
    let (_, real) = agreed(&x, &server).unwrap();
    assert!(real.generation() > squatted.generation());
    assert_eq!(server.downs().len(), 1, "{}", describe(&x, &server));
}

/// With `NoHeartbeat` nothing reads silence as death: the squatter keeps
/// the slot tick after tick. The eviction test above catches that.
#[cfg(feature = "planted-bugs")]
#[tokio::test]
async fn without_heartbeats_a_silent_squatter_holds_the_slot() {
    use lanesim::planted::{Planted, PlantedBug};
    let mut config = ticking(TICK);
    config.planted = Planted::bug(PlantedBug::NoHeartbeat);
    let server = node("server@test", config).await;
    let x_name = NodeName::from("x@test");
    let _squatter = raw_peer(&server.addr, b"x@test").await;
    wait_for("the squatter holds x's slot", || {
        server.manager.get_connection(&x_name).is_some()
    })
    .await;
    tokio::time::sleep(TICK * 3).await;
    assert!(
        server.manager.get_connection(&x_name).is_some() && server.downs().is_empty(),
        "the planted bug did not show: the squatter was evicted"
    );
}

/// A caller that connects and never finishes its hello holds a socket for
/// the connect timeout at most (the hello's own deadline: the dialer writes
/// it as it connects; the rest of the handshake has twice that, as a dial
/// the dialer made in time can need that long to land:
/// `ConnectionManager::accept`), and never a slot.
#[tokio::test]
async fn a_hello_that_misses_the_connect_timeout_is_closed_and_nothing_registered() {
    const CONNECT_TIMEOUT: Duration = Duration::from_millis(200);
    let captured = Captured::default();
    let _log = captured.install();
    let mut config = config();
    config.connect_timeout = CONNECT_TIMEOUT;
    let server = node("server@test", config).await;
    let started = Instant::now();
    // One says nothing; the other stops three bytes short of its hello.
    let mut mute = TcpStream::connect(&server.addr).await.unwrap();
    let mut stalled = TcpStream::connect(&server.addr).await.unwrap();
    let partial = hello(b"slow@test");
    stalled
        .write_all(&partial[..partial.len() - 3])
        .await
        .unwrap();
    closed_by_the_other_end(&mut mute, "the mute caller").await;
    closed_by_the_other_end(&mut stalled, "the stalled caller").await;
    assert!(
        started.elapsed() >= CONNECT_TIMEOUT && started.elapsed() < CONNECT_TIMEOUT * 2,
        "closed after {:?}: not at the hello's deadline, the connect timeout",
        started.elapsed()
    );
    assert!(server.manager.slots().is_empty());
    assert!(
        server.downs().is_empty(),
        "a refused hello became a generation"
    );
    // Both refusals are logged, the burst's reason once at WARN (the
    // second is counted, at DEBUG).
    wait_for("both refusals logged", || {
        captured
            .matching(&["inbound connection refused", "connect timed out"])
            .len()
            == 2
    })
    .await;
    assert_eq!(
        captured
            .matching(&["WARN inbound connection refused", "connect timed out"])
            .len(),
        1,
        "{:#?}",
        captured.records()
    );
    // The node still serves.
    let _slow = raw_peer(&server.addr, b"slow@test").await;
    wait_for("a timely hello registers", || {
        server.manager.slots().len() == 1
    })
    .await;
}

/// A flood of streams that fail their handshake for one reason logs that
/// reason once at WARN, not once per stream; the rest are counted, and the
/// burst's end (the next handshake that succeeds) is logged with the
/// count.
#[tokio::test]
async fn a_burst_of_failed_handshakes_logs_each_reason_once() {
    const FLOOD: usize = 40;
    let captured = Captured::default();
    let _log = captured.install();
    let server = node("server@test", config()).await;
    for _ in 0..FLOOD {
        let mut stream = raw_peer(&server.addr, b"").await;
        closed_by_the_other_end(&mut stream, "an empty name").await;
    }
    wait_for("every refusal counted", || {
        captured
            .matching(&["inbound connection refused", "empty node name"])
            .len()
            == FLOOD
    })
    .await;
    assert_eq!(
        captured
            .matching(&["WARN inbound connection refused"])
            .len(),
        1,
        "{:#?}",
        captured.records()
    );
    let _honest = raw_peer(&server.addr, b"honest@test").await;
    wait_for("the burst's end logged with its count", || {
        !captured
            .matching(&[
                "INFO an inbound handshake succeeded after a burst of failed ones",
                &format!("failed={FLOOD}"),
            ])
            .is_empty()
    })
    .await;
    // A burst of 24 distinct reasons (names with 24 distinct control
    // characters) logs 16 of them at WARN, and counts the rest.
    let before = captured
        .matching(&["WARN inbound connection refused"])
        .len();
    for c in 1u8..=24 {
        let mut stream = raw_peer(&server.addr, &[b'e', b'v', b'i', b'l', c]).await;
        closed_by_the_other_end(&mut stream, "a control character").await;
    }
    wait_for("every distinct refusal counted", || {
        captured
            .matching(&["inbound connection refused", "node name holds"])
            .len()
            == 24
    })
    .await;
    assert_eq!(
        captured
            .matching(&["WARN inbound connection refused"])
            .len()
            - before,
        16,
        "{:#?}",
        captured.records()
    );
}

// ---------------------------------------------------------------------------
// 3. Node names

/// The hello is the only place a peer names itself, so that is where a bad
/// name stops: nothing registered, the stream closed, one log line that
/// quotes the offence escaped (a newline in a name must not forge a log
/// line), and the node goes on serving.
#[tokio::test]
async fn hellos_with_invalid_names_are_refused_and_logged_escaped_and_the_node_stays_up() {
    let captured = Captured::default();
    let _log = captured.install();
    let server = node("server@test", config()).await;
    let cases: [(&str, Vec<u8>, &str); 8] = [
        ("empty", Vec::new(), "bad hello: empty node name"),
        (
            "256 bytes",
            vec![b'n'; MAX_NODE_NAME + 1],
            "node name of 256 bytes is longer than 255",
        ),
        (
            "a newline",
            b"evil\nFAKE LOG LINE".to_vec(),
            r"node name holds '\n' (U+000A)",
        ),
        (
            "a carriage return and an escape sequence",
            b"evil\r\x1b[2J".to_vec(),
            r"node name holds '\r' (U+000D)",
        ),
        (
            "not UTF-8",
            vec![b'n', 0xFF, 0xFE],
            "node name is not UTF-8",
        ),
        (
            "a line separator",
            "evil\u{2028}FAKE LOG LINE".as_bytes().to_vec(),
            r"node name holds '\u{2028}' (U+2028)",
        ),
        (
            "a right-to-left override",
            "peer\u{202E}tset@".as_bytes().to_vec(),
            r"node name holds '\u{202e}' (U+202E)",
        ),
        ("our own", b"server@test".to_vec(), "hello names this node"),
    ];
    for (what, name, why) in cases {
        let mut stream = raw_peer(&server.addr, &name).await;
        closed_by_the_other_end(&mut stream, what).await;
        assert!(
            server.manager.slots().is_empty(),
            "a name with {what} got a slot: {:?}",
            server.manager.slots()
        );
        wait_for(&format!("the refusal of a name with {what} logged"), || {
            captured
                .matching(&["WARN inbound connection refused", why])
                .len()
                == 1
        })
        .await;
    }
    let records = captured.records();
    assert!(
        records
            .iter()
            .all(|record| !record.contains(['\n', '\r', '\x1b', '\u{2028}', '\u{202E}'])),
        "a record holds a raw control character: {records:#?}"
    );
    assert!(
        !records
            .iter()
            .any(|record| record.contains("FAKE LOG LINE")),
        "the forged name reached the log"
    );
    assert!(
        server.downs().is_empty(),
        "a refused hello became a generation"
    );

    // The longest valid name is fine, and a real peer still dials in.
    let _longest = raw_peer(&server.addr, &[b'n'; MAX_NODE_NAME]).await;
    let peer = node("peer@test", config()).await;
    peer.manager
        .dial(server.name(), &server.addr)
        .await
        .unwrap();
    wait_for("both valid peers registered", || {
        server.manager.connected_nodes().len() == 2
    })
    .await;
    assert!(agreed(&peer, &server).is_some());
}

// ---------------------------------------------------------------------------
// 4. Slot removal

/// Peers announcing ever new names must not grow the table: each slot goes
/// with its last live connection, while generations, drawn from one
/// counter, keep growing.
#[tokio::test]
async fn slots_of_names_announced_once_are_removed_and_generations_keep_growing() {
    const PEERS: usize = 1000;
    const AT_ONCE: usize = 100;
    let server = node("server@test", config()).await;
    for batch in 0..PEERS / AT_ONCE {
        let mut peers = tokio::task::JoinSet::new();
        for i in batch * AT_ONCE..(batch + 1) * AT_ONCE {
            let addr = server.addr.clone();
            // Hello, then close at once.
            peers.spawn(async move {
                drop(raw_peer(&addr, format!("churn-{i}@test").as_bytes()).await)
            });
        }
        while let Some(joined) = peers.join_next().await {
            joined.unwrap();
        }
    }
    wait_for("every churned generation goes down", || {
        server.downs().len() == PEERS
    })
    .await;
    wait_for("the table empties", || server.manager.slots().is_empty()).await;
    let downs = server.downs();
    let mut generations: Vec<u64> = downs.iter().map(|d| d.generation).collect();
    generations.sort_unstable();
    assert_eq!(generations, (1..=PEERS as u64).collect::<Vec<_>>());
    assert!(downs.iter().all(|d| d.reason == DownReason::PeerClosed));
    let mut names: Vec<&str> = downs.iter().map(|d| d.node.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), PEERS);

    // The next generation still comes after all of them.
    let _fresh = raw_peer(&server.addr, b"fresh@test").await;
    wait_for("the fresh peer registers", || {
        server.manager.slots().len() == 1
    })
    .await;
    assert_eq!(server.manager.slots()[0].last_generation, PEERS as u64 + 1);
}

// ---------------------------------------------------------------------------
// 5. The frame budget

/// A loopback listener whose accepted sockets have a small, fixed receive
/// buffer. The budget test needs each holder's bytes *read by the server*
/// (charged) before the offender starts; with narrow buffers at both ends
/// a client's `write_all` returns only once all but a few KiB of it has
/// been read, and that remainder is read long before the offender has
/// pushed a MiB through its own narrow window.
struct NarrowListener(tokio::net::TcpListener);

const NARROW: u32 = 16 * 1024;

impl NarrowListener {
    fn bind() -> Box<dyn Listener> {
        let socket = TcpSocket::new_v4().unwrap();
        // Inherited by accepted sockets; set before listening so the
        // advertised window scale matches.
        socket.set_recv_buffer_size(NARROW).unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        Box::new(Self(socket.listen(128).unwrap()))
    }
}

impl Listener for NarrowListener {
    fn accept(&mut self) -> BoxFuture<'_, std::io::Result<Connected>> {
        Box::pin(async move { Connected::from_tcp(self.0.accept().await?.0) })
    }
    fn local_addr(&self) -> std::io::Result<String> {
        Ok(self.0.local_addr()?.to_string())
    }
}

/// A raw socket with a narrow send buffer that has done the handshake.
async fn narrow_peer(addr: &str, name: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_send_buffer_size(NARROW).unwrap();
    let mut stream = socket.connect(addr.parse().unwrap()).await.unwrap();
    assert!(prove(&mut stream, name.as_bytes(), COOKIE).await.unwrap());
    stream
}

/// Two holders each sit 1 MiB into a 3 MiB frame (2 MiB of a 4 MiB
/// budget); the offender's chunk that would take the total past 4 MiB
/// comes when it holds 2 MiB, over its share of a third: it is refused,
/// the holders (within theirs) keep theirs, and every charge comes back:
/// once the holders go, one frame the size of the whole budget is
/// delivered.
#[tokio::test]
async fn frame_budget_refuses_the_reader_over_its_share() {
    const BUDGET: usize = 4 * MIB;
    const CLAIM: usize = 3 * MIB;
    const SENT: usize = MIB;
    let captured = Captured::default();
    let _log = captured.install();
    let inbox = log::<InboundFrame>();
    let sink = Arc::clone(&inbox);
    let mut config = config();
    config.frame_budget = BUDGET as u64;
    config.max_frame = BUDGET as u64;
    config.on_frame = Some(Arc::new(move |frame| sink.lock().unwrap().push(frame)));
    let server = node_on("server@test", config, NarrowListener::bind());
    let body = vec![0u8; SENT];

    let mut holders = Vec::new();
    for i in 0..2 {
        let mut holder = narrow_peer(&server.addr, &format!("holder-{i}@test")).await;
        holder.write_all(&header(CLAIM)).await.unwrap();
        holder.write_all(&body).await.unwrap();
        holders.push(holder);
    }
    wait_for("both holders registered", || {
        server.manager.slots().len() == 2
    })
    .await;

    let offender_name = NodeName::from("offender@test");
    let mut offender = narrow_peer(&server.addr, offender_name.as_str()).await;
    offender.write_all(&header(CLAIM)).await.unwrap();
    // Fails part-way once the server refuses the stream.
    let _ = offender.write_all(&vec![0u8; CLAIM]).await;
    closed_by_the_other_end(&mut offender, "the offender").await;
    wait_for("the offender's generation goes down", || {
        !server.downs().is_empty()
    })
    .await;
    let downs = server.downs();
    assert_eq!(downs.len(), 1, "{downs:?}");
    assert_eq!(
        (&downs[0].node, downs[0].reason),
        (&offender_name, DownReason::OverBudget)
    );
    assert_eq!(
        captured
            .matching(&[
                "WARN connection refused: over its share of the frame budget",
                "node=offender@test"
            ])
            .len(),
        1,
        "{:#?}",
        captured.records()
    );
    for i in 0..2 {
        assert!(
            server
                .manager
                .get_connection(&NodeName::from(format!("holder-{i}@test").as_str()))
                .is_some(),
            "holder {i} lost its connection: {:?}",
            server.downs()
        );
    }

    // The node still accepts, and a small frame fits in what is left.
    let mut fresh = raw_peer(&server.addr, b"fresh@test").await;
    fresh
        .write_all(&encode(b"small", &[1; 1024]))
        .await
        .unwrap();
    wait_for("the small frame is delivered", || {
        snapshot(&inbox).len() == 1
    })
    .await;
    assert_eq!(snapshot(&inbox)[0].node.as_str(), "fresh@test");

    // The holders go; if any charge leaked (theirs, the offender's, the
    // small frame's), a frame of the whole budget no longer fits.
    drop(holders);
    wait_for("both holders go down", || server.downs().len() == 3).await;
    let control = b"whole budget";
    let payload = vec![7u8; BUDGET - control.len()];
    fresh.write_all(&encode(control, &payload)).await.unwrap();
    wait_for("the whole-budget frame is delivered", || {
        snapshot(&inbox).len() == 2
    })
    .await;
    let big = snapshot(&inbox).pop().unwrap();
    assert_eq!(
        (big.control.as_slice(), big.payload.len()),
        (control.as_slice(), payload.len())
    );
    assert_eq!(server.downs().len(), 3, "{:?}", server.downs());
}

// ---------------------------------------------------------------------------
// 6. A panicking frame callback

/// A panic in `on_frame` is caught: that frame's generation goes down
/// `HandlerPanicked` (its read loop cannot go on, and its links must be
/// told), and every other connection, and the node, carry on.
#[tokio::test]
async fn a_panicking_frame_callback_downs_only_that_generation() {
    let captured = Captured::default();
    let _log = captured.install();
    let inbox = log::<InboundFrame>();
    let sink = Arc::clone(&inbox);
    let mut serving = config();
    serving.on_frame = Some(Arc::new(move |frame: InboundFrame| {
        if frame.control == b"boom" {
            panic!("the frame callback was told to panic");
        }
        sink.lock().unwrap().push(frame);
    }));
    let server = node("server@test", serving).await;
    let a = node("a@test", config()).await;
    let b = node("b@test", config()).await;
    let on_a = a.manager.dial(server.name(), &server.addr).await.unwrap();
    let on_b = b.manager.dial(server.name(), &server.addr).await.unwrap();
    wait_for("the server registers both", || {
        server.manager.connected_nodes().len() == 2
    })
    .await;
    let (_, a_at_server) = agreed(&a, &server).unwrap();
    let (_, b_at_server) = agreed(&b, &server).unwrap();

    on_a.write_raw(&framed(b"boom")).await.unwrap();
    wait_for("a's generation at the server goes down", || {
        !server.downs().is_empty()
    })
    .await;
    assert_eq!(
        server.downs(),
        vec![DownEvent {
            node: a.name().clone(),
            generation: a_at_server.generation(),
            reason: DownReason::HandlerPanicked
        }]
    );
    assert_eq!(
        captured
            .matching(&["ERROR the frame callback panicked", "node=a@test"])
            .len(),
        1
    );
    // a sees its stream closed.
    wait_for("a's end goes down", || on_a.is_down()).await;

    // b's generation is untouched and still delivers.
    on_b.write_raw(&framed(b"ping")).await.unwrap();
    wait_for("b's frame is delivered", || snapshot(&inbox).len() == 1).await;
    let got = snapshot(&inbox);
    assert_eq!(
        (&got[0].node, got[0].generation, got[0].control.as_slice()),
        (b.name(), b_at_server.generation(), b"ping".as_slice())
    );
    assert!(!b_at_server.is_down());

    // And a can come back on a new generation.
    let again = a.manager.dial(server.name(), &server.addr).await.unwrap();
    again.write_raw(&framed(b"back")).await.unwrap();
    wait_for("a's frame on its new generation", || {
        snapshot(&inbox).len() == 2
    })
    .await;
    let back = snapshot(&inbox).pop().unwrap();
    assert_eq!(back.node, *a.name());
    assert!(back.generation > a_at_server.generation());
    assert_eq!(server.downs().len(), 1);
}
