//! The production `Transport` over turmoil's simulated TCP, with an
//! MSS-capped write half: each `poll_write` passes at most `mss` bytes, so a
//! frame is several segments (turmoil's flow control counts segments) and a
//! write deadline can cancel `write_all` mid-frame, as on a real socket.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use lanesim::shim::net::{BoxFuture, Connected, Listener, Transport};
use tokio::io::AsyncWrite;

/// turmoil TCP for `ConnectionManager`.
pub struct TurmoilTcp {
    /// Largest write passed to the socket at once.
    pub mss: usize,
}

fn split(stream: turmoil::net::TcpStream, mss: usize) -> io::Result<Connected> {
    let peer = stream.peer_addr()?.to_string();
    let local = stream.local_addr()?.to_string();
    let (read, write) = stream.into_split();
    Ok(Connected {
        read: Box::new(read),
        write: Box::new(MssCapped { inner: write, mss }),
        peer,
        local,
    })
}

impl Transport for TurmoilTcp {
    fn connect<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Connected>> {
        Box::pin(async move { split(turmoil::net::TcpStream::connect(addr).await?, self.mss) })
    }

    fn bind<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Box<dyn Listener>>> {
        Box::pin(async move {
            let listener = turmoil::net::TcpListener::bind(addr).await?;
            Ok(Box::new(TurmoilListener {
                listener,
                mss: self.mss,
            }) as Box<dyn Listener>)
        })
    }
}

struct TurmoilListener {
    listener: turmoil::net::TcpListener,
    mss: usize,
}

impl Listener for TurmoilListener {
    fn accept(&mut self) -> BoxFuture<'_, io::Result<Connected>> {
        Box::pin(async move {
            let (stream, _) = self.listener.accept().await?;
            split(stream, self.mss)
        })
    }

    fn local_addr(&self) -> io::Result<String> {
        Ok(self.listener.local_addr()?.to_string())
    }
}

/// A write half that accepts at most `mss` bytes per call.
pub struct MssCapped<W> {
    inner: W,
    mss: usize,
}

impl<W: AsyncWrite + Unpin> AsyncWrite for MssCapped<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let cap = buf.len().min(self.mss.max(1));
        Pin::new(&mut self.inner).poll_write(cx, &buf[..cap])
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
