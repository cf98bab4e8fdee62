//! Sockets behind a trait: tokio TCP in production, turmoil's simulated TCP in
//! the testbed. A trait rather than a cfg because one binary runs both (the
//! benchmark puts a real loopback exchange beside its simulated twin).
//!
//! A connection is handed over as two boxed halves: the connection layer owns
//! the write half behind its writer mutex and gives the read half to its read
//! loop, so it never needs to know the concrete stream type.

use std::future::Future;
use std::io;
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};
#[cfg(not(loom))]
use tokio::net::{TcpListener, TcpStream};

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

/// Real TCP through tokio. (Absent under `--cfg loom`, where tokio has no
/// sockets; loom models hand the connection layer in-memory streams.)
#[cfg(not(loom))]
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioTcp;

#[cfg(not(loom))]
impl Transport for TokioTcp {
    fn connect<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Connected>> {
        Box::pin(async move { Connected::from_tcp(TcpStream::connect(addr).await?) })
    }

    fn bind<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Box<dyn Listener>>> {
        Box::pin(async move {
            let listener = TcpListener::bind(addr).await?;
            Ok(Box::new(TokioListener(listener)) as Box<dyn Listener>)
        })
    }
}

#[cfg(not(loom))]
struct TokioListener(TcpListener);

#[cfg(not(loom))]
impl Listener for TokioListener {
    fn accept(&mut self) -> BoxFuture<'_, io::Result<Connected>> {
        Box::pin(async move {
            let (stream, _) = self.0.accept().await?;
            Connected::from_tcp(stream)
        })
    }

    fn local_addr(&self) -> io::Result<String> {
        Ok(self.0.local_addr()?.to_string())
    }
}
