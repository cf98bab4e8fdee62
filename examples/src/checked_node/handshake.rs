//! The cookie handshake on every new stream, both ends (hello, challenge,
//! proof; `lanesim_target::handshake` builds and parses the frames and
//! computes the proofs), and the node-name rule.
//!
//! Model. The dialer sends a hello with its nonce and name, checks that the
//! challenge names the node it dialed and carries a good acceptor proof,
//! and only then sends its own proof; the acceptor checks the hello's name,
//! answers with a challenge, and accepts only a good dialer proof. Each
//! handshake frame is read exactly (header, then body), so nothing after
//! the handshake is swallowed. The caller bounds each end in time.

use std::io;

use lanesim_target::handshake::{self as hs, Role, Transcript};
use lanesim_target::net::{BoxRead, Connected};
use lanesim_target::node::DialFailure;
use lanesim_target::wire::{self, HEADER_LEN};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::shared::Shared;

/// The largest handshake frame body: a nonce, a proof and a 255-byte name,
/// with room to spare.
const MAX_HANDSHAKE: u64 = 1024;

/// Whether `name` is a node name: 1 to 255 bytes of ASCII letters, digits
/// and `_ - . @`.
pub(super) fn valid_name(name: &[u8]) -> bool {
    (1..=255).contains(&name.len())
        && name
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"_-.@".contains(&b))
}

/// Reads one whole handshake frame.
async fn read_frame(read: &mut BoxRead) -> io::Result<Vec<u8>> {
    let mut frame = vec![0; HEADER_LEN];
    read.read_exact(&mut frame).await?;
    let header: [u8; HEADER_LEN] = frame[..].try_into().expect("a header");
    let body = wire::body_len(&header);
    if body > MAX_HANDSHAKE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "handshake frame too large",
        ));
    }
    frame.resize(HEADER_LEN + usize::try_from(body).expect("small"), 0);
    read.read_exact(&mut frame[HEADER_LEN..]).await?;
    Ok(frame)
}

async fn write_frame(stream: &mut Connected, frame: &[u8]) -> io::Result<()> {
    stream.write.write_all(frame).await?;
    stream.write.flush().await
}

/// Dials `node` at `addr` and runs the dialer's side of the handshake,
/// within the connect timeout.
pub(super) async fn dial(
    shared: &Shared,
    node: &str,
    addr: &str,
) -> Result<Connected, DialFailure> {
    let dial = async {
        let mut stream = shared
            .transport
            .connect(addr)
            .await
            .map_err(|_| DialFailure::Io)?;
        let dialer_nonce = shared.nonces.next();
        write_frame(&mut stream, &hs::hello(&shared.name, &dialer_nonce))
            .await
            .map_err(|_| DialFailure::Io)?;
        let frame = read_frame(&mut stream.read)
            .await
            .map_err(|_| DialFailure::Io)?;
        let Ok(Some((frame, _))) = wire::decode(&frame, MAX_HANDSHAKE) else {
            return Err(DialFailure::BadHello);
        };
        let challenge = hs::parse_challenge(&frame).ok_or(DialFailure::BadHello)?;
        if challenge.name != node.as_bytes() {
            return Err(DialFailure::Unauthenticated);
        }
        let transcript = Transcript {
            dialer: shared.name.as_bytes(),
            acceptor: node.as_bytes(),
            dialer_nonce,
            acceptor_nonce: challenge.nonce,
        };
        if !transcript.verify(&shared.cookie, Role::Acceptor, &challenge.proof) {
            return Err(DialFailure::Unauthenticated);
        }
        write_frame(&mut stream, &hs::proof(&transcript, &shared.cookie))
            .await
            .map_err(|_| DialFailure::Io)?;
        Ok(stream)
    };
    tokio::time::timeout(shared.connect_timeout, dial)
        .await
        .unwrap_or(Err(DialFailure::Timeout))
}

/// Runs the acceptor's side of the handshake on `stream`: the proven peer's
/// name, or `None` (the caller drops the stream).
pub(super) async fn accept(shared: &Shared, stream: &mut Connected) -> Option<String> {
    let frame = read_frame(&mut stream.read).await.ok()?;
    let Ok(Some((frame, _))) = wire::decode(&frame, MAX_HANDSHAKE) else {
        return None;
    };
    let hello = hs::parse_hello(&frame)?;
    if !valid_name(hello.name) || hello.name == shared.name.as_bytes() {
        return None;
    }
    let name = String::from_utf8(hello.name.to_vec()).ok()?;
    let transcript = Transcript {
        dialer: name.as_bytes(),
        acceptor: shared.name.as_bytes(),
        dialer_nonce: hello.nonce,
        acceptor_nonce: shared.nonces.next(),
    };
    write_frame(stream, &hs::challenge(&transcript, &shared.cookie))
        .await
        .ok()?;
    let frame = read_frame(&mut stream.read).await.ok()?;
    let Ok(Some((frame, _))) = wire::decode(&frame, MAX_HANDSHAKE) else {
        return None;
    };
    let proof = hs::parse_proof(&frame)?;
    transcript
        .verify(&shared.cookie, Role::Dialer, &proof)
        .then_some(name)
}
