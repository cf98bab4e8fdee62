//! What a host that is not a node hears from one: it reads a stream until
//! the node closes it or a time passes, counting the bytes, and (as a node
//! would, so a node that registered it keeps it) may write a keepalive
//! every so often meanwhile. The impostor, the stranger and the flooders
//! listen this way; what they conclude is theirs.

use std::time::Duration;

use lanesim_target::wire::KEEPALIVE;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

/// What a stream carried until it ended or the time passed.
#[derive(Clone, Copy, Debug)]
pub(super) struct Heard {
    /// Bytes the node wrote.
    pub(super) read: u64,
    /// The node closed the stream (or it failed) before the time passed.
    pub(super) closed: bool,
}

/// Reads `stream` until the node closes it or `until`, writing a keepalive
/// every `keepalive` if given (the first at once).
pub(super) async fn listen(
    stream: &mut turmoil::net::TcpStream,
    until: Instant,
    keepalive: Option<Duration>,
) -> Heard {
    let mut keepalives = keepalive.map(tokio::time::interval);
    let mut heard = Heard {
        read: 0,
        closed: false,
    };
    let mut sink = [0u8; 1024];
    loop {
        tokio::select! {
            biased;
            () = tokio::time::sleep_until(until) => return heard,
            got = stream.read(&mut sink) => match got {
                Ok(n) if n > 0 => heard.read += n as u64,
                _ => break,
            },
            _ = async { keepalives.as_mut().expect("polled only when some").tick().await },
                if keepalives.is_some() =>
            {
                if stream.write_all(&KEEPALIVE).await.is_err() {
                    break;
                }
            }
        }
    }
    heard.closed = true;
    heard
}
