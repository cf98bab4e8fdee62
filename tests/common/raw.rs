//! Raw sockets playing peers: a hello by hand, and waiting for the node to
//! close a stream.

use std::time::Duration;

use lanesim::distribution::frame::encode;
use lanesim::distribution::HELLO;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Bound on a wait for the node to close a stream.
const BOUND: Duration = Duration::from_secs(5);

/// A hello frame announcing `name`.
pub fn hello(name: &[u8]) -> Vec<u8> {
    encode(HELLO, name).unwrap()
}

/// A raw socket to `addr` that has sent a hello announcing `name`.
pub async fn raw_peer(addr: &str, name: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(&hello(name)).await.unwrap();
    stream
}

/// Waits until the other end closed `stream` (end of stream, or a reset),
/// discarding whatever arrives before (keepalives).
pub async fn closed_by_the_other_end(stream: &mut TcpStream, what: &str) {
    tokio::time::timeout(BOUND, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{what}: the stream was never closed"));
}
