//! The production `Transport` over turmoil's simulated TCP, with an
//! MSS-capped write half: each `poll_write` passes at most `mss` bytes, so a
//! frame is several segments (turmoil's flow control counts segments) and a
//! write deadline can cancel `write_all` mid-frame, as on a real socket.
//!
//! The write half also follows the frame boundaries in what it passes and
//! can report (`WriteTap`) the moment the first byte of each frame reaches
//! the socket: ground truth for "no frame starts to be written to a
//! generation after it went down", which the drain's own report (made
//! before it takes the writer lock) cannot give.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use lanesim::shim::net::{BoxFuture, Connected, Listener, Transport};
use tokio::io::AsyncWrite;

use super::tag::frame_len;

/// Told `(socket, frame)` when a frame's first byte reaches `socket` (the
/// local port); `frame` starts with the whole frame.
pub type WriteTap = Arc<dyn Fn(u16, &[u8]) + Send + Sync>;

/// turmoil TCP for `ConnectionManager`.
pub struct TurmoilTcp {
    /// Largest write passed to the socket at once.
    pub mss: usize,
    /// Frame starts are reported here, if set.
    pub tap: Option<WriteTap>,
}

impl TurmoilTcp {
    /// Segments of at most `mss` bytes, no tap.
    #[must_use]
    pub fn new(mss: usize) -> Self {
        Self { mss, tap: None }
    }

    fn split(&self, stream: turmoil::net::TcpStream) -> io::Result<Connected> {
        let peer = stream.peer_addr()?;
        let local = stream.local_addr()?;
        let (read, write) = stream.into_split();
        Ok(Connected {
            read: Box::new(read),
            write: Box::new(MssCapped {
                inner: write,
                mss: self.mss,
                socket: local.port(),
                remaining: 0,
                tap: self.tap.clone(),
            }),
            peer: peer.to_string(),
            local: local.to_string(),
        })
    }
}

impl Transport for TurmoilTcp {
    fn connect<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Connected>> {
        Box::pin(async move { self.split(turmoil::net::TcpStream::connect(addr).await?) })
    }

    fn bind<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Box<dyn Listener>>> {
        Box::pin(async move {
            let listener = turmoil::net::TcpListener::bind(addr).await?;
            Ok(Box::new(TurmoilListener {
                listener,
                transport: TurmoilTcp {
                    mss: self.mss,
                    tap: self.tap.clone(),
                },
            }) as Box<dyn Listener>)
        })
    }
}

struct TurmoilListener {
    listener: turmoil::net::TcpListener,
    transport: TurmoilTcp,
}

impl Listener for TurmoilListener {
    fn accept(&mut self) -> BoxFuture<'_, io::Result<Connected>> {
        Box::pin(async move {
            let (stream, _) = self.listener.accept().await?;
            self.transport.split(stream)
        })
    }

    fn local_addr(&self) -> io::Result<String> {
        Ok(self.listener.local_addr()?.to_string())
    }
}

/// A write half that accepts at most `mss` bytes per call and reports the
/// start of each frame.
struct MssCapped<W> {
    inner: W,
    mss: usize,
    socket: u16,
    /// Bytes of the current frame not yet passed on; 0 at a boundary.
    remaining: usize,
    tap: Option<WriteTap>,
}

impl<W: AsyncWrite + Unpin> AsyncWrite for MssCapped<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let cap = buf.len().min(self.mss.max(1));
        let written = Pin::new(&mut self.inner).poll_write(cx, &buf[..cap]);
        if let Poll::Ready(Ok(n)) = written {
            if n > 0 {
                // `write_all` hands over exactly what is left of its frame;
                // anything else is a new frame, after a boundary or after a
                // write cut short (abandoned, timed out) mid-frame.
                if self.remaining != buf.len() {
                    self.remaining = frame_len(buf).unwrap_or(n);
                    if let Some(tap) = &self.tap {
                        tap(self.socket, buf);
                    }
                }
                self.remaining = self.remaining.saturating_sub(n);
            }
        }
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tokio::io::AsyncWriteExt;

    use super::*;
    use crate::event::Lane;
    use crate::world::tag::Tag;

    fn tag(seq: u64) -> Vec<u8> {
        Tag {
            lane: Lane::Data,
            generation: 0,
            seq,
            link: None,
        }
        .frame(40)
    }

    /// The tap sees each frame's start once, in segments or not, and a
    /// frame written after another was cut off mid-way is a new frame.
    #[tokio::test]
    async fn the_tap_reports_each_frame_start_even_after_a_cut_write() {
        let starts: Arc<Mutex<Vec<u64>>> = Arc::default();
        let seen = Arc::clone(&starts);
        let mut socket = MssCapped {
            inner: Vec::new(),
            mss: 10,
            socket: 1,
            remaining: 0,
            tap: Some(Arc::new(move |_, frame: &[u8]| {
                seen.lock().unwrap().push(Tag::of_frame(frame).unwrap().seq);
            })),
        };
        socket.write_all(&tag(1)).await.unwrap();
        socket.write_all(&tag(2)).await.unwrap();
        // A write of frame 3 cut after its first segment ...
        let cut = tag(3);
        let first = std::future::poll_fn(|cx| Pin::new(&mut socket).poll_write(cx, &cut)).await;
        assert_eq!(first.unwrap(), 10);
        // ... then frame 4, whole.
        socket.write_all(&tag(4)).await.unwrap();
        assert_eq!(*starts.lock().unwrap(), [1, 2, 3, 4]);
    }
}
