//! The handshake on a new stream, both ends: the dialer's hello, the
//! acceptor's challenge and the dialer's proof. The frames and the proofs
//! are `lanesim_target::handshake`'s (the one definition, with why the
//! proofs are made so; docs/protocol.md the wire); here are the steps each
//! end takes, its deadlines, and what it refuses. Only a stream whose peer
//! proved the cookie is registered, so the tie-break and the table only
//! ever see authenticated streams, and a peer without the cookie never
//! receives a frame after the challenge
//! (`an_impostor_without_the_cookie_never_registers` in
//! tests/hostile_impostor.rs).

use std::time::Duration;

use lanesim_target::handshake::{
    self, parse_challenge, parse_hello, Nonce, Role, Transcript, CHALLENGE, HELLO, PROOF, REFUSED,
};
use lanesim_target::node::DownReason;
use lanesim_target::wire::KEEPALIVE;
use tokio::io::AsyncWriteExt;

use super::claim::Claim;
use super::table::Promote;
use super::{ConnectionManager, DialError, InboundCap, Origin};
use crate::distribution::connection::DistConnection;
use crate::distribution::frame::{read_frame, Frame, ReadFrameError};
use crate::distribution::node::{NameError, NodeName};
use crate::planted::PlantedBug;
use crate::shim::net::{Connected, Listener};
use crate::shim::probe::{mark, Mark};
use crate::shim::sync::Arc;
use crate::shim::time::timeout;

/// The largest handshake frame read: a nonce, a proof and a name.
const MAX_HANDSHAKE_FRAME: u64 = 1024;

/// Claim checks a stream gets before it is refused, each against the live
/// generation that holds its slot then: the slot changing hands under
/// every check is a race an honest stream does not lose three times.
const CLAIM_ROUNDS: usize = 3;

fn bad(error: ReadFrameError) -> DialError {
    DialError::BadHello(error.to_string())
}

/// `frame`, where a step expected `what`: another frame.
fn unexpected(frame: &Frame, what: &str) -> DialError {
    DialError::BadHello(match frame {
        Frame::Data { control, .. } => format!(
            "expected {what}, got a frame with a {}-byte control",
            control.len()
        ),
        Frame::Keepalive => format!("expected {what}, got a keepalive"),
        Frame::Node { .. } => format!("expected {what}, got a node-protocol frame"),
    })
}

/// Why `frame` does not parse as `what`: another frame, or one with its
/// control (`expected`) and a payload shorter than `needs`.
fn not_a(frame: &Frame, expected: &[u8], what: &str, needs: &str) -> DialError {
    match frame {
        Frame::Data { control, payload } if control == expected => DialError::BadHello(format!(
            "{what} of {} bytes, shorter than {needs}",
            payload.len()
        )),
        other => unexpected(other, what),
    }
}

impl ConnectionManager {
    /// Accepts one inbound stream, runs the handshake (bounded by twice the
    /// connect timeout) and registers it under the name it proved.
    ///
    /// Twice: the dialer counts a dial as made once it connected, read our
    /// challenge and wrote its proof within the connect timeout, and the
    /// acceptor's wait starts when the connection arrives, after the
    /// dialer's started. The proof can reach it up to one one-way delay
    /// (itself within the timeout) after the dialer's deadline. Waiting
    /// only the connect timeout refused streams the dialer had already
    /// registered: with both ends dialing at once, the dialer's stream then
    /// won the tie-break over the acceptor's, the acceptor dropped it, and
    /// both ends were left without a connection until a redial (the mesh
    /// hunt found it: `hunt --world mesh --seed 41`,
    /// `scenarios/regressions/mesh_hello_slower_than_the_connect_timeout.toml`).
    ///
    /// The stream takes its places under the caps as in
    /// [`serve`](Self::serve).
    ///
    /// # Errors
    /// When accepting fails, a cap is reached, or the handshake is late,
    /// malformed, or its proof does not verify.
    pub async fn accept(
        &self,
        listener: &mut dyn Listener,
    ) -> Result<Arc<DistConnection>, DialError> {
        let stream = listener.accept().await.map_err(DialError::Io)?;
        let places = self
            .shared
            .admit(&stream.peer)
            .map_err(DialError::Refused)?;
        let (stream, handshake) = super::serve::hold(stream, places);
        // Evicted as in `serve`: the place is another source's now.
        tokio::select! {
            biased;
            () = handshake.evicted.notified() => Err(DialError::Refused(InboundCap::Handshakes)),
            registered = self.handshake(stream) => registered,
        }
    }

    /// Runs an inbound stream's handshake and registers it.
    pub(super) async fn handshake(
        &self,
        mut stream: Connected,
    ) -> Result<Arc<DistConnection>, DialError> {
        let whole = if self
            .shared
            .planted
            .has(PlantedBug::ProofWaitsWithoutDeadline)
        {
            Duration::MAX
        } else {
            self.shared.connect_timeout.saturating_mul(2)
        };
        let (node, nonce) = timeout(whole, self.answer(&mut stream))
            .await
            .map_err(|_| DialError::Timeout)??;
        // Names belong to their owners (`claim`). The dialer registered
        // its end as it wrote its proof; while this end checks, a
        // keepalive keeps its silence clock quiet.
        if self.get_connection(&node).is_some() {
            let _ = stream.write.write_all(&KEEPALIVE).await;
        }
        self.settle_claim(node, nonce, stream, true).await
    }

    /// Checks an accepted stream's claim and registers it by the verdict
    /// (`claim`'s module doc), re-checking against whatever live generation
    /// holds the slot when it registers. `may_stand_by`: whether a claim
    /// the incumbent left unanswered may stand by; one that stood by
    /// already is settled here again when its incumbent goes down, and
    /// dropped if it is left unanswered a second time.
    pub(super) async fn settle_claim(
        &self,
        node: NodeName,
        nonce: Nonce,
        mut stream: Connected,
        may_stand_by: bool,
    ) -> Result<Arc<DistConnection>, DialError> {
        for _ in 0..CLAIM_ROUNDS {
            let checked = match self.check_claim(&node, nonce, &stream.peer).await {
                Claim::TableDecides(checked) => checked,
                Claim::Reclaimed(squatter) => {
                    tracing::warn!(
                        %node,
                        generation = squatter.generation(),
                        squatter = %squatter.peer(),
                        owner = %stream.peer,
                        "a stream from the name's own address reclaimed it from a squatter"
                    );
                    squatter.mark_down(DownReason::NameReclaimed);
                    None
                }
                Claim::Denied => return Err(DialError::ClaimDenied(node)),
                Claim::Busy(pending) => {
                    pending.ended().await;
                    continue;
                }
                Claim::StandBy {
                    incumbent,
                    simultaneous,
                } => {
                    // Refused as the table refuses a stream for a live
                    // incumbent (logged, marked), and standing by.
                    let _ = Self::refuse(
                        Arc::clone(&incumbent),
                        Origin::Accepted,
                        &stream.peer,
                        simultaneous,
                    );
                    if may_stand_by {
                        self.stand_by(
                            node,
                            stream,
                            Origin::Accepted,
                            Arc::clone(&incumbent),
                            Promote::Claim(nonce),
                        );
                    }
                    return Ok(incumbent);
                }
            };
            match self.register_checked(node.clone(), stream, checked) {
                Ok(registered) => return Ok(registered.into_connection()),
                // Another live generation took the slot: check again.
                Err(back) => stream = back,
            }
        }
        Err(DialError::ClaimDenied(node))
    }

    /// The acceptor's part: reads the hello, writes the challenge, reads
    /// and checks the proof. The node the dialer proved it is, and the
    /// nonce its hello carried (what the claim check asks about).
    ///
    /// The hello has a deadline of its own, the connect timeout: the dialer
    /// writes it the moment it connects, so it lands within a round trip of
    /// the accept, and a stream that says nothing gives its place up then,
    /// not at the end of the whole handshake's twice that
    /// (`a_hello_that_misses_the_connect_timeout_is_closed_and_nothing_registered`).
    async fn answer(&self, stream: &mut Connected) -> Result<(NodeName, Nonce), DialError> {
        let hello = timeout(
            self.shared.connect_timeout,
            read_frame(&mut stream.read, MAX_HANDSHAKE_FRAME),
        )
        .await
        .map_err(|_| DialError::Timeout)?
        .map_err(bad)?;
        let Some(read) = parse_hello(&hello.as_wire()) else {
            mark(Mark::HelloRefused);
            return Err(not_a(&hello, HELLO, "a hello", "its nonce"));
        };
        let node = NodeName::parse_bytes(read.name).map_err(|error| {
            mark(Mark::HelloRefused);
            DialError::BadName(error)
        })?;
        if node == self.local {
            mark(Mark::HelloRefused);
            return Err(DialError::BadName(NameError::Ours));
        }
        let transcript = Transcript {
            dialer: node.as_str().as_bytes(),
            acceptor: self.local.as_str().as_bytes(),
            dialer_nonce: read.nonce,
            acceptor_nonce: self.shared.nonces.next(),
        };
        let challenge = handshake::challenge(&transcript, self.shared.cookie.as_bytes());
        stream
            .write
            .write_all(&challenge)
            .await
            .map_err(DialError::Io)?;
        stream.write.flush().await.map_err(DialError::Io)?;
        let proof = read_frame(&mut stream.read, MAX_HANDSHAKE_FRAME)
            .await
            .map_err(bad)?;
        // Any payload is checked as a proof: one of the wrong length is a
        // bad proof (`proof_refused`), not a malformed frame.
        let proof = match proof {
            Frame::Data { control, payload } if control == PROOF => payload,
            other => return Err(unexpected(&other, "a proof")),
        };
        if !transcript.verify(self.shared.cookie.as_bytes(), Role::Dialer, &proof)
            && !self.shared.planted.has(PlantedBug::HandshakeSkipsProof)
        {
            mark(Mark::ProofRefused);
            return Err(DialError::BadProof);
        }
        Ok((node, read.nonce))
    }

    /// The dialer's part, on a stream just connected to `node`: writes the
    /// hello, reads the challenge, checks that `node` answered with its
    /// proof, writes ours.
    pub(super) async fn prove(
        &self,
        stream: &mut Connected,
        node: &NodeName,
    ) -> Result<(), DialError> {
        let dialer_nonce = self.shared.nonces.next();
        // Remembered before the hello leaves: the node dialed may ask
        // over a live connection whether this stream is ours (`claim`).
        self.shared.claims.dialing(node, dialer_nonce);
        let hello = handshake::hello(self.local.as_str(), &dialer_nonce);
        stream
            .write
            .write_all(&hello)
            .await
            .map_err(DialError::Io)?;
        stream.write.flush().await.map_err(DialError::Io)?;
        let challenge = read_frame(&mut stream.read, MAX_HANDSHAKE_FRAME)
            .await
            .map_err(bad)?;
        // The node turned the stream away at a cap and said which.
        if let Frame::Data { control, payload } = &challenge {
            if control == REFUSED {
                return Err(InboundCap::of_knob(payload).map_or_else(
                    || {
                        DialError::BadHello(format!(
                            "refused by the node for a reason it named {:?}",
                            String::from_utf8_lossy(payload)
                        ))
                    },
                    DialError::Refused,
                ));
            }
        }
        let Some(read) = parse_challenge(&challenge.as_wire()) else {
            return Err(not_a(
                &challenge,
                CHALLENGE,
                "a challenge",
                "its nonce and proof",
            ));
        };
        if read.name != node.as_str().as_bytes() {
            return Err(DialError::WrongNode(
                String::from_utf8_lossy(read.name).into_owned(),
            ));
        }
        let transcript = Transcript {
            dialer: self.local.as_str().as_bytes(),
            acceptor: read.name,
            dialer_nonce,
            acceptor_nonce: read.nonce,
        };
        let cookie = self.shared.cookie.as_bytes();
        if !transcript.verify(cookie, Role::Acceptor, &read.proof) {
            return Err(DialError::BadProof);
        }
        let proof = handshake::proof(&transcript, cookie);
        stream
            .write
            .write_all(&proof)
            .await
            .map_err(DialError::Io)?;
        stream.write.flush().await.map_err(DialError::Io)?;
        Ok(())
    }
}
