//! Sockets behind a trait: tokio TCP in production, the world's network in
//! the testbed. The seam itself ([`Transport`], [`Listener`], [`Connected`])
//! is the public target API's (`lanesim_target::net`), so the worlds hand
//! lanesim's components the same network they hand any implementation;
//! this module adds the production transport, tokio's TCP.

#[cfg(not(loom))]
use std::io;

#[cfg(not(loom))]
use tokio::net::{TcpListener, TcpStream};

pub use lanesim_target::net::{BoxFuture, BoxRead, BoxWrite, Connected, Listener, Transport};

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
