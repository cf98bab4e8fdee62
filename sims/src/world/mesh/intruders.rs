//! The mesh world's intruders: hosts that are not nodes and dial nodes to
//! do what no honest node does. The squatter proves the cookie under a
//! live node's name and stays silent (M5); the insider proves it under
//! another node's name too but keeps its heartbeat alive and denies every
//! claim it is asked about (M8, M1); the impostor has no cookie and
//! tries four ways to get in anyway (M8); the spender holds most of a
//! node's frame budget in frames it never finishes, and trickles a frame
//! slower than the node's frame deadline (M9). Each obeys the driver's
//! orders (`Orders`) and logs what it saw, for the checkers to decide.

use crate::explore::spawn_world;
use std::sync::Arc;
use std::time::Duration;

use lanesim_target::claim::{self, ClaimFrame};
use lanesim_target::handshake::{Nonce, Nonces, SeededNonces};
use lanesim_target::wire::{decode, Frame, KEEPALIVE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::listen::{listen, Heard};
use super::{
    dial_node, node_name, Shared, IMPOSTOR, INSIDER, MAX_FRAME, SPENDER, SPENDERS, SQUATTER,
};
use crate::coverage::WorldMark;
use crate::event::Event;
use crate::world::handshake::{self, COOKIE};

/// What the spender is told to do.
#[derive(Clone, Copy, Debug)]
pub(super) enum Spend {
    /// Hold most of `node`'s frame budget for `lasting` (in place of a
    /// hello, before any proof, if `before_hello`).
    Hold {
        node: u64,
        lasting: Duration,
        before_hello: bool,
    },
    /// Trickle a frame to `node` for `lasting`, unless it is cut off first.
    Trickle {
        node: u64,
        lasting: Duration,
        /// The body length its header announces.
        frame: u64,
        /// A node-protocol frame, not a data frame.
        node_frame: bool,
    },
}

/// The header of a data frame of the largest size the nodes accept, all
/// of it body: what a spender sends before (part of) that body.
fn largest_header() -> Vec<u8> {
    header_of(MAX_FRAME)
}

/// The header of a frame whose payload is `body` bytes (at most
/// [`MAX_FRAME`]).
fn header_of(body: u64) -> Vec<u8> {
    let mut header = 0_u32.to_be_bytes().to_vec();
    header.extend_from_slice(&u32::try_from(body).expect("at most 64 KiB").to_be_bytes());
    header
}

/// The squatter: on each order, dials a node, runs the handshake under
/// another node's name with the cookie, and then only reads (so the node's writes never block it
/// out) and never writes: a silent squatter.
pub(super) async fn squatter(shared: Arc<Shared>) -> turmoil::Result {
    let Some(mut orders) = shared.squats.take() else {
        return Ok(());
    };
    let nonces = handshake::nonces(shared.seed, SQUATTER);
    while let Some((target, claimed)) = orders.recv().await {
        let shared = Arc::clone(&shared);
        let nonce = nonces.next();
        spawn_world(async move {
            let Ok(mut stream) = dial_node(target).await else {
                return;
            };
            let claimed_name = node_name(claimed);
            if handshake::dial(&mut stream, &claimed_name, COOKIE, nonce)
                .await
                .is_err()
            {
                return;
            }
            if let Ok(socket) = stream.local_addr() {
                shared.record(
                    SQUATTER,
                    Event::MeshSquat {
                        node: target,
                        claimed,
                        socket,
                    },
                );
            }
            let mut sink = [0u8; 1024];
            while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
        });
    }
    Ok(())
}

/// The insider: on each order, dials a node, runs the handshake under
/// another node's name with the cookie, logs `MeshClaim`, and then acts the
/// node it claims to be as far as the heartbeat goes: a keepalive every
/// quarter tick, everything it is sent read, and every claim query it is
/// asked (`lanesim_target::claim`) answered "not mine" (an insider that
/// holds a name denies its owner's claims). It holds the stream until the
/// node closes it. A node that lets it displace a live generation of the
/// node it names breaks M8; one that lets it hold the name against the
/// owner's claims leaves the pair unagreed at the end (M1).
pub(super) async fn insider(shared: Arc<Shared>) -> turmoil::Result {
    let Some(mut orders) = shared.claims.take() else {
        return Ok(());
    };
    let nonces = handshake::nonces(shared.seed, INSIDER);
    while let Some((target, claimed)) = orders.recv().await {
        let shared = Arc::clone(&shared);
        let nonce = nonces.next();
        spawn_world(async move {
            let Ok(mut stream) = dial_node(target).await else {
                return;
            };
            if handshake::dial(&mut stream, &node_name(claimed), COOKIE, nonce)
                .await
                .is_err()
            {
                return;
            }
            let Ok(socket) = stream.local_addr() else {
                return;
            };
            shared.record(
                INSIDER,
                Event::MeshClaim {
                    node: target,
                    claimed,
                    socket,
                },
            );
            let mut keepalives = tokio::time::interval(shared.params.heartbeat / 4);
            let mut buffer = Vec::new();
            let mut chunk = [0u8; 1024];
            loop {
                tokio::select! {
                    biased;
                    got = stream.read(&mut chunk) => match got {
                        Ok(n) if n > 0 => buffer.extend_from_slice(&chunk[..n]),
                        _ => return,
                    },
                    _ = keepalives.tick() => {
                        if stream.write_all(&KEEPALIVE).await.is_err() {
                            return;
                        }
                    }
                }
                // Every whole frame: queries denied, the rest dropped.
                loop {
                    let (query, used) = match decode(&buffer, MAX_FRAME) {
                        Ok(Some((Frame::Node { payload }, used))) => (claim::parse(payload), used),
                        Ok(Some((_, used))) => (None, used),
                        Ok(None) => break,
                        Err(_) => return,
                    };
                    buffer.drain(..used);
                    if let Some(ClaimFrame::Query(asked)) = query {
                        if stream
                            .write_all(&claim::answer(&asked, false))
                            .await
                            .is_err()
                        {
                            return;
                        }
                    }
                }
            }
        });
    }
    Ok(())
}

/// The impostor: on each order, dials a node four times under another
/// node's name, without the cookie: proving another cookie, reflecting the
/// node's own proof, sending an empty proof, and replaying the first
/// stream's hello with the proof an honest dialer would have made for it
/// (as an eavesdropper would have recorded it). On each it
/// then reads what the node sends and writes a keepalive every quarter tick
/// (as a node would, so a node that registered it wrongly keeps it), until
/// the node closes the stream or two ticks have passed. Logs `MeshImpostor`
/// as each ends: a correct node closes each at once, with nothing written
/// after its challenge (M8).
pub(super) async fn impostor(shared: Arc<Shared>) -> turmoil::Result {
    let Some(mut orders) = shared.impostors.take() else {
        return Ok(());
    };
    let nonces = Arc::new(handshake::nonces(shared.seed, IMPOSTOR));
    while let Some((target, claimed)) = orders.recv().await {
        let (shared, nonces) = (Arc::clone(&shared), Arc::clone(&nonces));
        spawn_world(async move {
            let mut recorded = None;
            for attack in [
                Attack::WrongCookie,
                Attack::Reflect,
                Attack::Empty,
                Attack::Replay,
            ] {
                let attack = match (attack, recorded) {
                    (Attack::Replay, Some((dialer_nonce, acceptor_nonce))) => {
                        handshake::Attack::Replay {
                            dialer_nonce,
                            acceptor_nonce,
                        }
                    }
                    (Attack::Replay, None) => continue,
                    (Attack::Reflect, _) => handshake::Attack::Reflect,
                    (Attack::Empty, _) => handshake::Attack::Empty,
                    (Attack::WrongCookie, _) => handshake::Attack::WrongCookie,
                };
                let nonce = nonces.next();
                if let Some(seen) = impostor_stream(&shared, target, claimed, attack, nonce).await {
                    recorded.get_or_insert(seen);
                }
            }
        });
    }
    Ok(())
}

/// The impostor's attacks, in the order it tries them.
#[derive(Clone, Copy)]
enum Attack {
    WrongCookie,
    Reflect,
    Empty,
    Replay,
}

/// One impostor stream: its dialer and acceptor nonces, if it got a
/// challenge.
async fn impostor_stream(
    shared: &Arc<Shared>,
    target: u64,
    claimed: u64,
    attack: handshake::Attack,
    nonce: Nonce,
) -> Option<(Nonce, Nonce)> {
    let mut stream = dial_node(target).await.ok()?;
    let socket = stream.local_addr().ok()?;
    // Fails when the node closed it before its challenge.
    let seen = handshake::impersonate(&mut stream, &node_name(claimed), attack, nonce)
        .await
        .ok()?;
    shared.probe.world(WorldMark::FaultImpostor);
    let p = &shared.params;
    let until = tokio::time::Instant::now() + p.heartbeat * 2;
    let Heard { read, closed } = listen(&mut stream, until, Some(p.heartbeat / 4)).await;
    if closed && read == 0 {
        shared.probe.world(WorldMark::ImpostorRefused);
    }
    shared.record(
        IMPOSTOR,
        Event::MeshImpostor {
            node: target,
            claimed,
            socket,
            read,
            closed,
        },
    );
    Some(seen)
}

/// The spender: obeys each order in turn, holding ([`hold`]) or
/// trickling ([`trickle`]), both from this one host.
pub(super) async fn spender(shared: Arc<Shared>) -> turmoil::Result {
    let Some(mut orders) = shared.spends.take() else {
        return Ok(());
    };
    let nonces = Arc::new(handshake::nonces(shared.seed, SPENDER));
    let mut trickles = 0_u64;
    while let Some(order) = orders.recv().await {
        match order {
            Spend::Hold {
                node,
                lasting,
                before_hello,
            } => hold(&shared, &nonces, node, lasting, before_hello).await,
            Spend::Trickle {
                node,
                lasting,
                frame,
                node_frame,
            } => {
                // A name of its own for each: two streams under one name
                // are the tie-break's business (a second one may wait
                // unread in stand-by), not the frame deadline's.
                let name = format!("trickler{trickles}");
                trickles += 1;
                let trickle = trickle(
                    Arc::clone(&shared),
                    Trickled {
                        target: node,
                        lasting,
                        frame,
                        node_frame,
                    },
                    name,
                    nonces.next(),
                );
                spawn_world(trickle);
            }
        }
    }
    Ok(())
}

/// Opens [`SPENDERS`] streams to `target`, each proving the cookie under
/// a name of its own (`spender0`, ...), and on each writes a header for a
/// frame of [`MAX_FRAME`] bytes and all of its body but the last byte;
/// holds them for `lasting` and closes them. Together they are more than
/// the node's budget: a node that refuses whoever asks last refuses an
/// honest node's small frame meanwhile (M9). Marks `fault_applied_spend`
/// once every stream proved the cookie and wrote what the node would read
/// of its frame. `before_hello`: the frames go in place of each stream's
/// hello, with no proof (a handshake frame is a few hundred bytes at most:
/// a node that reads one as large as a data frame holds them all before it
/// knows who sent them); `fault_applied_spend_before_hello` once all are
/// written.
async fn hold(
    shared: &Arc<Shared>,
    nonces: &Arc<SeededNonces>,
    target: u64,
    lasting: Duration,
    before_hello: bool,
) {
    let mut streams = tokio::task::JoinSet::new();
    for index in 0..SPENDERS {
        let nonce = nonces.next();
        streams.spawn(async move {
            let mut stream = dial_node(target).await.ok()?;
            if !before_hello {
                let name = format!("spender{index}");
                let proved = handshake::dial(&mut stream, &name, COOKIE, nonce).await;
                (proved.ok()? == handshake::Dialed::Proved).then_some(())?;
            }
            let body = usize::try_from(MAX_FRAME).expect("64 KiB");
            let mut frame = largest_header();
            frame.resize(frame.len() + body - 1, 0x5a);
            // A node refuses some spenders part-way: their writes fail.
            let _ = stream.write_all(&frame).await;
            Some(stream)
        });
    }
    let mut held = Vec::new();
    while let Some(done) = streams.join_next().await {
        if let Ok(Some(stream)) = done {
            held.push(stream);
        }
    }
    if held.len() as u64 == SPENDERS {
        shared.probe.world(if before_hello {
            WorldMark::FaultSpendBeforeHello
        } else {
            WorldMark::FaultSpend
        });
    }
    let shared = Arc::clone(shared);
    spawn_world(async move {
        tokio::time::sleep(lasting).await;
        drop(held);
        drop(shared);
    });
}

/// What a trickle trickles, and to whom.
struct Trickled {
    target: u64,
    lasting: Duration,
    /// The body length its header announces.
    frame: u64,
    /// A node-protocol frame (control length `wire::NODE_FRAME`).
    node_frame: bool,
}

/// A trickled frame this short or shorter fits in one of a reader's
/// chunks (lanesim's are 8 KiB): `trickled_small_frame`.
const SMALL_TRICKLE: u64 = 1024;

/// A slowloris: dials `target`, proves the cookie as `name`, writes
/// the header of a frame of `frame` bytes (by default [`MAX_FRAME`]) and then one byte of its
/// body at once and every quarter tick: often enough that the node's
/// silence clock never fires, so only its frame deadline can end the
/// frame. Reads what the node writes (its keepalives) all along, until the
/// node closes the stream or `lasting` has passed since the header, and
/// logs `MeshTrickle` with how long the stream stayed open after its
/// header (M9 bounds it by the frame deadline). Marks
/// `fault_applied_trickle` once the header is written, `trickle_cut` when
/// the node closed the stream.
async fn trickle(shared: Arc<Shared>, trickled: Trickled, name: String, nonce: Nonce) {
    let Trickled {
        target,
        lasting,
        frame,
        node_frame,
    } = trickled;
    let Ok(mut stream) = dial_node(target).await else {
        return;
    };
    if !matches!(
        handshake::dial(&mut stream, &name, COOKIE, nonce).await,
        Ok(handshake::Dialed::Proved)
    ) {
        return;
    }
    let Ok(socket) = stream.local_addr() else {
        return;
    };
    let header = if node_frame {
        let len = u32::try_from(frame).expect("at most 64 bytes");
        lanesim_target::wire::header(lanesim_target::wire::NODE_FRAME, len).to_vec()
    } else {
        header_of(frame)
    };
    if stream.write_all(&header).await.is_err() {
        return;
    }
    shared.probe.world(WorldMark::FaultTrickle);
    if node_frame {
        shared.probe.world(WorldMark::TrickledNodeFrame);
    }
    if frame <= SMALL_TRICKLE {
        shared.probe.world(WorldMark::TrickledSmallFrame);
    }
    let began = tokio::time::Instant::now();
    let mut drips = tokio::time::interval(shared.params.heartbeat / 4);
    let (mut sent, mut closed) = (0_u64, false);
    let mut sink = [0u8; 1024];
    loop {
        tokio::select! {
            biased;
            () = tokio::time::sleep_until(began + lasting) => break,
            got = stream.read(&mut sink) => {
                if !matches!(got, Ok(n) if n > 0) {
                    closed = true;
                    break;
                }
            }
            // Never the last byte: the frame must not complete.
            _ = drips.tick(), if sent + 1 < frame => {
                if stream.write_all(&[0x5a]).await.is_err() {
                    closed = true;
                    break;
                }
                sent += 1;
            }
        }
    }
    if closed {
        shared.probe.world(WorldMark::TrickleCut);
    }
    let held_us = u64::try_from(began.elapsed().as_micros()).unwrap_or(u64::MAX);
    shared.record(
        SPENDER,
        Event::MeshTrickle {
            node: target,
            socket,
            sent,
            held_us,
            closed,
        },
    );
}
