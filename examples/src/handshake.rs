//! The cookie handshake (`lanesim_target::handshake`), the way this node
//! reads: into a buffer, keeping whatever arrived after the last
//! handshake frame for the reader that takes the stream over.

use lanesim_target::handshake::{self, Nonce, Role, Transcript};
use lanesim_target::net::{BoxRead, Connected};
use lanesim_target::node::DialFailure;
use lanesim_target::wire;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Bytes asked of the socket per read.
const READ_CHUNK: usize = 4 * 1024;
/// The largest handshake frame: a nonce, a proof and a name.
const MAX_FRAME: u64 = 1024;

/// Reads until `buf` starts with a whole frame; returns its bytes and
/// leaves the rest in `buf`. `None` on a bad frame or a closed stream.
async fn next_frame(read: &mut BoxRead, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    let mut chunk = vec![0_u8; READ_CHUNK];
    loop {
        match wire::decode(buf, MAX_FRAME) {
            Ok(Some((_, len))) => {
                let rest = buf.split_off(len);
                return Some(std::mem::replace(buf, rest));
            }
            Ok(None) => {}
            Err(_) => return None,
        }
        match read.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

fn decoded(frame: &[u8]) -> Option<wire::Frame<'_>> {
    wire::decode(frame, MAX_FRAME)
        .ok()
        .flatten()
        .map(|(frame, _)| frame)
}

/// The dialer's part, as `me` dialing `node`: the bytes read past the
/// challenge.
pub async fn dial(
    connected: &mut Connected,
    me: &str,
    node: &str,
    cookie: &[u8],
    nonce: Nonce,
) -> Result<Vec<u8>, DialFailure> {
    let io = |_| DialFailure::Io;
    connected
        .write
        .write_all(&handshake::hello(me, &nonce))
        .await
        .map_err(io)?;
    connected.write.flush().await.map_err(io)?;
    let mut buf = Vec::new();
    let frame = next_frame(&mut connected.read, &mut buf)
        .await
        .ok_or(DialFailure::BadHello)?;
    let challenge = decoded(&frame)
        .as_ref()
        .and_then(handshake::parse_challenge)
        .ok_or(DialFailure::BadHello)?;
    if challenge.name != node.as_bytes() {
        return Err(DialFailure::Unauthenticated);
    }
    let transcript = Transcript {
        dialer: me.as_bytes(),
        acceptor: challenge.name,
        dialer_nonce: nonce,
        acceptor_nonce: challenge.nonce,
    };
    if !transcript.verify(cookie, Role::Acceptor, &challenge.proof) {
        return Err(DialFailure::Unauthenticated);
    }
    connected
        .write
        .write_all(&handshake::proof(&transcript, cookie))
        .await
        .map_err(io)?;
    connected.write.flush().await.map_err(io)?;
    Ok(buf)
}

/// The acceptor's part, as `me`: the name the dialer proved, and the bytes
/// read past its proof. `None` if anything is wrong.
pub async fn accept(
    connected: &mut Connected,
    me: &str,
    cookie: &[u8],
    nonce: Nonce,
) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let frame = next_frame(&mut connected.read, &mut buf).await?;
    let hello = decoded(&frame).as_ref().and_then(handshake::parse_hello)?;
    let name = std::str::from_utf8(hello.name).ok()?.to_owned();
    let transcript = Transcript {
        dialer: name.as_bytes(),
        acceptor: me.as_bytes(),
        dialer_nonce: hello.nonce,
        acceptor_nonce: nonce,
    };
    let challenge = handshake::challenge(&transcript, cookie);
    connected.write.write_all(&challenge).await.ok()?;
    connected.write.flush().await.ok()?;
    let frame = next_frame(&mut connected.read, &mut buf).await?;
    let proof = decoded(&frame).as_ref().and_then(handshake::parse_proof)?;
    transcript
        .verify(cookie, Role::Dialer, &proof)
        .then_some((name, buf))
}
