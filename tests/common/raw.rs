//! Raw sockets playing peers: the handshake by hand (with the cookie, or
//! without it), and waiting for the node to close a stream.

use std::io;
use std::time::Duration;

use lanesim::distribution::frame::{read_frame, Frame};
use lanesim::distribution::Cookie;
use lanesim_target::handshake::{parse_challenge, Role, Transcript, HELLO, NONCE_LEN, PROOF};
use lanesim_target::wire;
use lanesim_target::wire::encode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Bound on a wait for the node to close a stream.
const BOUND: Duration = Duration::from_secs(5);

/// The cookie every node of the tests holds.
pub const COOKIE: &[u8] = b"the tests' cookie";
/// What an impostor proves instead.
pub const WRONG_COOKIE: &[u8] = b"a guessed cookie";

/// The tests' cookie.
pub fn cookie() -> Cookie {
    Cookie::new(COOKIE).unwrap()
}

/// The nonce the raw peers announce (they need no fresh one: the node's
/// nonce makes each stream's proofs its own).
const NONCE: [u8; NONCE_LEN] = [7; NONCE_LEN];

/// A hello frame announcing `name` (any bytes).
pub fn hello(name: &[u8]) -> Vec<u8> {
    let mut payload = NONCE.to_vec();
    payload.extend_from_slice(name);
    encode(HELLO, &payload)
}

/// The dialer's part of the handshake on `stream`, as `name`, proving
/// `cookie`: the hello, the node's challenge read, and the proof written
/// whether the node's own proof verified or not. Whether it verified.
///
/// # Errors
/// When the node closes the stream or answers with no challenge.
pub async fn prove(stream: &mut TcpStream, name: &[u8], cookie: &[u8]) -> io::Result<bool> {
    stream.write_all(&hello(name)).await?;
    answer_challenge(stream, name, cookie).await
}

/// The rest of [`prove`] after the hello: the challenge read, the proof
/// written.
///
/// # Errors
/// As [`prove`].
pub async fn answer_challenge(
    stream: &mut TcpStream,
    name: &[u8],
    cookie: &[u8],
) -> io::Result<bool> {
    let frame = read_frame(stream, 1024)
        .await
        .map_err(|error| io::Error::other(error.to_string()))?;
    let Frame::Data { control, payload } = frame else {
        return Err(io::Error::other("a keepalive in place of the challenge"));
    };
    let bytes = encode(&control, &payload);
    let (frame, _) = wire::decode(&bytes, 1024).unwrap().unwrap();
    let challenge = parse_challenge(&frame).ok_or_else(|| io::Error::other("not a challenge"))?;
    let transcript = Transcript {
        dialer: name,
        acceptor: challenge.name,
        dialer_nonce: NONCE,
        acceptor_nonce: challenge.nonce,
    };
    let verified = transcript.verify(cookie, Role::Acceptor, &challenge.proof);
    let proof = encode(PROOF, &transcript.proof(cookie, Role::Dialer));
    stream.write_all(&proof).await?;
    Ok(verified)
}

/// A raw socket to `addr` that has tried the handshake as `name` with the
/// cookie (a node that refuses the name closes it: see
/// [`closed_by_the_other_end`]).
pub async fn raw_peer(addr: &str, name: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let _ = prove(&mut stream, name, COOKIE).await;
    stream
}

/// Waits until the other end closed `stream` (end of stream, or a reset),
/// discarding whatever arrives before (keepalives). The bytes it read.
pub async fn closed_by_the_other_end(stream: &mut TcpStream, what: &str) -> u64 {
    tokio::time::timeout(BOUND, async {
        let mut buf = [0u8; 4096];
        let mut read = 0;
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return read,
                Ok(n) => read += n as u64,
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{what}: the stream was never closed"))
}
