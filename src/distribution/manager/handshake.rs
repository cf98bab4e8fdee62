//! The handshake on a new stream, both ends: the dialer's hello, the
//! acceptor's challenge and the dialer's proof (`distribution::auth` has
//! the proofs and why they are made so; docs/protocol.md the wire). Only a
//! stream whose peer proved the cookie is registered, so the tie-break and
//! the table only ever see authenticated streams.

use tokio::io::AsyncWriteExt;

use super::{ConnectionManager, DialError, Origin};
use crate::distribution::auth::{Role, Transcript, NONCE_LEN, PROOF_LEN};
use crate::distribution::connection::DistConnection;
use crate::distribution::frame::{encode, read_frame, Frame, ReadFrameError};
use crate::distribution::node::{NameError, NodeName};
use crate::planted::PlantedBug;
use crate::shim::net::{Connected, Listener};
use crate::shim::probe::{mark, Mark};
use crate::shim::sync::Arc;
use crate::shim::time::timeout;

/// The control part of the dialer's first frame; payload: its nonce and
/// its name.
pub const HELLO: &[u8] = b"lanesim/hello";
/// The control part of the acceptor's answer; payload: its nonce, its
/// proof and its name.
pub const CHALLENGE: &[u8] = b"lanesim/challenge";
/// The control part of the dialer's last frame; payload: its proof.
pub const PROOF: &[u8] = b"lanesim/proof";

/// The largest handshake frame read: a nonce, a proof and a name.
const MAX_HANDSHAKE_FRAME: u64 = 1024;

fn bad(error: ReadFrameError) -> DialError {
    DialError::BadHello(error.to_string())
}

/// `frame`'s payload if its control is `expected`, else why not.
fn payload_of(frame: Frame, expected: &[u8], what: &str) -> Result<Vec<u8>, DialError> {
    match frame {
        Frame::Data { control, payload } if control == expected => Ok(payload),
        Frame::Data { control, .. } => Err(DialError::BadHello(format!(
            "expected {what}, got a frame with a {}-byte control",
            control.len()
        ))),
        Frame::Keepalive => Err(DialError::BadHello(format!(
            "expected {what}, got a keepalive"
        ))),
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
        let places = self.shared.admit().map_err(DialError::Refused)?;
        let (stream, _handshake) = super::serve::hold(stream, places);
        self.handshake(stream).await
    }

    /// Runs an inbound stream's handshake and registers it.
    pub(super) async fn handshake(
        &self,
        mut stream: Connected,
    ) -> Result<Arc<DistConnection>, DialError> {
        let node = timeout(
            self.shared.connect_timeout.saturating_mul(2),
            self.answer(&mut stream),
        )
        .await
        .map_err(|_| DialError::Timeout)??;
        Ok(self
            .register_as(node, stream, Origin::Accepted)
            .into_connection())
    }

    /// The acceptor's part: reads the hello, writes the challenge, reads
    /// and checks the proof. The node the dialer proved it is.
    async fn answer(&self, stream: &mut Connected) -> Result<NodeName, DialError> {
        let hello = read_frame(&mut stream.read, MAX_HANDSHAKE_FRAME)
            .await
            .map_err(bad)?;
        let hello =
            payload_of(hello, HELLO, "a hello").inspect_err(|_| mark(Mark::HelloRefused))?;
        let Some((dialer_nonce, name)) = hello.split_first_chunk::<NONCE_LEN>() else {
            mark(Mark::HelloRefused);
            return Err(DialError::BadHello(format!(
                "a hello of {} bytes, shorter than its nonce",
                hello.len()
            )));
        };
        let node = NodeName::parse_bytes(name).map_err(|error| {
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
            dialer_nonce: *dialer_nonce,
            acceptor_nonce: self.shared.nonces.next(),
        };
        let mut challenge = transcript.acceptor_nonce.to_vec();
        challenge.extend_from_slice(&transcript.proof(&self.shared.cookie, Role::Acceptor));
        challenge.extend_from_slice(transcript.acceptor);
        let challenge = encode(CHALLENGE, &challenge).expect("a challenge is short");
        stream
            .write
            .write_all(&challenge)
            .await
            .map_err(DialError::Io)?;
        stream.write.flush().await.map_err(DialError::Io)?;
        let proof = read_frame(&mut stream.read, MAX_HANDSHAKE_FRAME)
            .await
            .map_err(bad)?;
        let proof = payload_of(proof, PROOF, "a proof")?;
        if !transcript.verify(&self.shared.cookie, Role::Dialer, &proof)
            && !self.shared.planted.has(PlantedBug::HandshakeSkipsProof)
        {
            mark(Mark::ProofRefused);
            return Err(DialError::BadProof);
        }
        Ok(node)
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
        let mut hello = dialer_nonce.to_vec();
        hello.extend_from_slice(self.local.as_str().as_bytes());
        let hello = encode(HELLO, &hello).expect("a hello is short");
        stream
            .write
            .write_all(&hello)
            .await
            .map_err(DialError::Io)?;
        stream.write.flush().await.map_err(DialError::Io)?;
        let challenge = read_frame(&mut stream.read, MAX_HANDSHAKE_FRAME)
            .await
            .map_err(bad)?;
        let challenge = payload_of(challenge, CHALLENGE, "a challenge")?;
        let parsed = challenge
            .split_first_chunk::<NONCE_LEN>()
            .and_then(|(nonce, rest)| Some((nonce, rest.split_first_chunk::<PROOF_LEN>()?)));
        let Some((acceptor_nonce, (theirs, name))) = parsed else {
            return Err(DialError::BadHello(format!(
                "a challenge of {} bytes, shorter than its nonce and proof",
                challenge.len()
            )));
        };
        if name != node.as_str().as_bytes() {
            return Err(DialError::WrongNode(
                String::from_utf8_lossy(name).into_owned(),
            ));
        }
        let transcript = Transcript {
            dialer: self.local.as_str().as_bytes(),
            acceptor: name,
            dialer_nonce,
            acceptor_nonce: *acceptor_nonce,
        };
        if !transcript.verify(&self.shared.cookie, Role::Acceptor, theirs) {
            return Err(DialError::BadProof);
        }
        let proof = transcript.proof(&self.shared.cookie, Role::Dialer);
        let proof = encode(PROOF, &proof).expect("a proof is short");
        stream
            .write
            .write_all(&proof)
            .await
            .map_err(DialError::Io)?;
        stream.write.flush().await.map_err(DialError::Io)?;
        Ok(())
    }
}
