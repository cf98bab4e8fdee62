//! The transport seam: sockets behind a trait, so a world can hand the code
//! under test its own network (turmoil's simulated TCP, or real loopback
//! TCP with a tap on every write) and production hands it tokio's. A trait
//! rather than a cfg because one binary runs both (real mode runs a
//! scenario on loopback beside its simulated twin).
//!
//! A node target dials and listens only through the [`Transport`] the
//! world gives it: a socket opened any other way bypasses the world's
//! faults and the tap, and the checkers would not see its bytes.
//!
//! A connection is handed over as two boxed halves: the connection layer owns
//! the write half behind its writer mutex and gives the read half to its read
//! loop, so it never needs to know the concrete stream type.

use std::future::Future;
use std::io;
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};
#[cfg(not(loom))]
use tokio::net::TcpStream;

/// A boxed future, as the object-safe transport methods return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
/// The read half of a connection.
pub type BoxRead = Box<dyn AsyncRead + Send + Unpin>;
/// The write half of a connection.
pub type BoxWrite = Box<dyn AsyncWrite + Send + Unpin>;

/// An established stream, split.
pub struct Connected {
    /// Where the stream reads from.
    pub read: BoxRead,
    /// Where the stream writes to.
    pub write: BoxWrite,
    /// The remote address.
    pub peer: String,
    /// Our own address on this stream: with `peer`, what names the socket
    /// on both sides (the testbed matches a peer's arrivals to generations
    /// by it).
    pub local: String,
}

#[cfg(not(loom))]
impl Connected {
    /// Splits a tokio TCP stream (with `TCP_NODELAY`: frames are small and
    /// latency-sensitive).
    ///
    /// # Errors
    /// When the socket's options or peer address cannot be read.
    pub fn from_tcp(stream: TcpStream) -> io::Result<Self> {
        stream.set_nodelay(true)?;
        let peer = stream.peer_addr()?.to_string();
        let local = stream.local_addr()?.to_string();
        let (read, write) = stream.into_split();
        Ok(Self {
            read: Box::new(read),
            write: Box::new(write),
            peer,
            local,
        })
    }
}

/// Dials and listens. Addresses are `host:port` strings so that simulated
/// host names work as well as IP addresses.
pub trait Transport: Send + Sync + 'static {
    /// Opens a stream to `addr`. No timeout here: callers bound it.
    fn connect<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Connected>>;
    /// Listens on `addr`.
    fn bind<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Box<dyn Listener>>>;
    /// How many descriptors its streams may use in all (the process's
    /// `RLIMIT_NOFILE` for real sockets), if it has such a limit: a node
    /// holds its inbound caps within it. `None` (the default): no limit a
    /// node must fit, as for a simulated network.
    fn descriptor_limit(&self) -> Option<u64> {
        None
    }
}

/// Accepts inbound streams.
pub trait Listener: Send {
    /// Waits for the next inbound stream.
    fn accept(&mut self) -> BoxFuture<'_, io::Result<Connected>>;
    /// The address actually bound (useful after binding port 0).
    ///
    /// # Errors
    /// When the socket cannot report it.
    fn local_addr(&self) -> io::Result<String>;
}
