//! The cookie handshake as the worlds' own hosts speak it (the sender
//! world's peers accept with it; the mesh world's squatter, impostor and
//! prober dial with it; its stranger answers misdials with a cookie it
//! does not hold), over `lanesim_target::handshake`: the protocol's
//! one definition, which lanesim's own node uses too. What is the hosts'
//! own here is their steps (and the impostor's attacks on them).
//!
//! Every node and host of a world shares [`COOKIE`]; the impostor proves
//! [`WRONG_COOKIE`]. Each host takes its nonces from the run's seed
//! ([`nonces`]), so a run's bytes replay.

use std::io;

use lanesim_target::handshake::{
    challenge, hello, parse_challenge, parse_hello, parse_proof, proof, Nonce, Role, SeededNonces,
    Transcript,
};
use lanesim_target::wire::{body_len, decode, HEADER_LEN};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The cluster cookie every world hands its nodes.
pub const COOKIE: &[u8] = b"lanesim world cookie";
/// What the impostor proves instead.
pub const WRONG_COOKIE: &[u8] = b"not the cookie";

/// The largest handshake frame a host reads.
const MAX_HANDSHAKE_FRAME: u64 = 1024;

/// The nonces of host `host` in the run of `seed`: one sequence per host,
/// so no host's nonces depend on another's order of work.
#[must_use]
pub fn nonces(seed: u64, host: &str) -> SeededNonces {
    let salt = host.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    SeededNonces::new(seed ^ salt)
}

/// Reads exactly one frame (no byte past it: what follows is the node's),
/// of at most [`MAX_HANDSHAKE_FRAME`] bytes of body.
async fn read_one<R: AsyncRead + Unpin>(read: &mut R) -> io::Result<Vec<u8>> {
    let mut frame = vec![0; HEADER_LEN];
    read.read_exact(&mut frame).await?;
    let header: [u8; HEADER_LEN] = frame[..].try_into().expect("a header's length");
    let body = body_len(&header);
    if body > MAX_HANDSHAKE_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a handshake frame of {body} bytes"),
        ));
    }
    frame.resize(HEADER_LEN + body as usize, 0);
    read.read_exact(&mut frame[HEADER_LEN..]).await?;
    Ok(frame)
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// The acceptor's part, as `name` with `cookie`: reads the hello, writes
/// the challenge, reads and checks the proof. The name the dialer proved.
///
/// # Errors
/// When the stream fails or the dialer's frames or proof are not good.
pub async fn accept<S>(
    stream: &mut S,
    name: &str,
    cookie: &[u8],
    nonce: Nonce,
) -> io::Result<String>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (dialer, dialer_nonce) = read_hello(stream).await?;
    let transcript = Transcript {
        dialer: &dialer,
        acceptor: name.as_bytes(),
        dialer_nonce,
        acceptor_nonce: nonce,
    };
    write_challenge(stream, &transcript, cookie).await?;
    let dialer = String::from_utf8_lossy(&dialer).into_owned();
    let frame = read_one(stream).await?;
    let (frame, _) = decode(&frame, MAX_HANDSHAKE_FRAME)
        .ok()
        .flatten()
        .ok_or_else(|| invalid("a torn proof"))?;
    let theirs = parse_proof(&frame).ok_or_else(|| invalid("not a proof"))?;
    if !transcript.verify(cookie, Role::Dialer, &theirs) {
        return Err(invalid("a proof that does not verify"));
    }
    Ok(dialer)
}

/// The acceptor's first read: the hello. The dialer's name, as its hello
/// spelled it, and its nonce.
///
/// # Errors
/// When the stream fails or its first frame is not a hello.
pub async fn read_hello<S>(stream: &mut S) -> io::Result<(Vec<u8>, Nonce)>
where
    S: AsyncRead + Unpin,
{
    let frame = read_one(stream).await?;
    let (frame, _) = decode(&frame, MAX_HANDSHAKE_FRAME)
        .ok()
        .flatten()
        .ok_or_else(|| invalid("a torn hello"))?;
    let hello = parse_hello(&frame).ok_or_else(|| invalid("not a hello"))?;
    Ok((hello.name.to_vec(), hello.nonce))
}

/// The acceptor's challenge to `transcript`'s dialer, its proof made with
/// `cookie` (the mesh world's stranger writes one with a cookie it does
/// not hold).
///
/// # Errors
/// When the stream fails.
pub async fn write_challenge<S>(
    stream: &mut S,
    transcript: &Transcript<'_>,
    cookie: &[u8],
) -> io::Result<()>
where
    S: AsyncWrite + Unpin,
{
    stream.write_all(&challenge(transcript, cookie)).await
}

/// How an impostor tries to get in without the cookie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attack {
    /// Proves another cookie.
    WrongCookie,
    /// Sends back the acceptor's own proof as its own (a reflection).
    Reflect,
    /// Replays a recorded stream: its hello (the same dialer nonce) and
    /// the proof an honest dialer with the cookie made for it, for the
    /// acceptor nonce it was then challenged with.
    Replay {
        /// The recorded stream's dialer nonce.
        dialer_nonce: Nonce,
        /// The recorded stream's acceptor nonce.
        acceptor_nonce: Nonce,
    },
    /// Sends a proof frame with nothing in it.
    Empty,
}

/// An impostor's part, claiming to be `claimed`: the hello, the challenge
/// read, and a proof that is not this stream's (see [`Attack`]). The
/// dialer and acceptor nonces of the stream, which a later replay can use.
///
/// # Errors
/// When the stream fails or the challenge is malformed.
pub async fn impersonate<S>(
    stream: &mut S,
    claimed: &str,
    attack: Attack,
    nonce: Nonce,
) -> io::Result<(Nonce, Nonce)>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let nonce = match attack {
        Attack::Replay { dialer_nonce, .. } => dialer_nonce,
        _ => nonce,
    };
    stream.write_all(&hello(claimed, &nonce)).await?;
    let frame = read_one(stream).await?;
    let (frame, _) = decode(&frame, MAX_HANDSHAKE_FRAME)
        .ok()
        .flatten()
        .ok_or_else(|| invalid("a torn challenge"))?;
    let theirs = parse_challenge(&frame).ok_or_else(|| invalid("not a challenge"))?;
    let transcript = Transcript {
        dialer: claimed.as_bytes(),
        acceptor: theirs.name,
        dialer_nonce: nonce,
        acceptor_nonce: theirs.nonce,
    };
    let forged = match attack {
        Attack::WrongCookie => proof(&transcript, WRONG_COOKIE),
        Attack::Reflect => {
            lanesim_target::wire::encode(lanesim_target::handshake::PROOF, &theirs.proof)
        }
        Attack::Replay { acceptor_nonce, .. } => proof(
            &Transcript {
                acceptor_nonce,
                ..transcript
            },
            COOKIE,
        ),
        Attack::Empty => lanesim_target::wire::encode(lanesim_target::handshake::PROOF, &[]),
    };
    stream.write_all(&forged).await?;
    Ok((nonce, theirs.nonce))
}

/// How the dialer's part ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialed {
    /// The acceptor's proof verified under our cookie; ours is written.
    Proved,
    /// The acceptor's proof did not verify under our cookie (we are the
    /// impostor): ours, under our cookie, is written anyway.
    ProvedAnyway,
}

/// The dialer's part, claiming to be `claimed` and proving `cookie`:
/// writes the hello, reads the challenge, writes the proof (also when the
/// acceptor's proof does not verify under `cookie`: an impostor tries).
///
/// # Errors
/// When the stream fails or the challenge is malformed.
pub async fn dial<S>(
    stream: &mut S,
    claimed: &str,
    cookie: &[u8],
    nonce: Nonce,
) -> io::Result<Dialed>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    stream.write_all(&hello(claimed, &nonce)).await?;
    let frame = read_one(stream).await?;
    let (frame, _) = decode(&frame, MAX_HANDSHAKE_FRAME)
        .ok()
        .flatten()
        .ok_or_else(|| invalid("a torn challenge"))?;
    let theirs = parse_challenge(&frame).ok_or_else(|| invalid("not a challenge"))?;
    let transcript = Transcript {
        dialer: claimed.as_bytes(),
        acceptor: theirs.name,
        dialer_nonce: nonce,
        acceptor_nonce: theirs.nonce,
    };
    let verified = transcript.verify(cookie, Role::Acceptor, &theirs.proof);
    stream.write_all(&proof(&transcript, cookie)).await?;
    Ok(if verified {
        Dialed::Proved
    } else {
        Dialed::ProvedAnyway
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two halves agree with each other, and the acceptor refuses a
    /// dialer with another cookie.
    #[tokio::test]
    async fn a_dialer_with_the_cookie_is_accepted_and_one_without_is_not() {
        for (cookie, accepted) in [(COOKIE, true), (WRONG_COOKIE, false)] {
            let (mut a, mut b) = tokio::io::duplex(4096);
            let dialer = tokio::spawn(async move { dial(&mut a, "x", cookie, [1; 16]).await });
            let got = accept(&mut b, "y", COOKIE, [2; 16]).await;
            assert_eq!(got.is_ok(), accepted, "{got:?}");
            let dialed = dialer.await.unwrap().unwrap();
            let expected = if accepted {
                Dialed::Proved
            } else {
                Dialed::ProvedAnyway
            };
            assert_eq!(dialed, expected);
        }
    }
}
