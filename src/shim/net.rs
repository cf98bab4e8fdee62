//! Sockets behind a trait: tokio TCP in production, the world's network in
//! the testbed. The seam itself ([`Transport`], [`Listener`], [`Connected`])
//! is the public target API's (`lanesim_target::net`), so the worlds hand
//! lanesim's components the same network they hand any implementation;
//! this module adds the production transport, tokio's TCP, and what an
//! accept error means ([`accept_failure`]): the errno tables are the one
//! platform-specific part of the accept loop, so they live here.

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

    fn descriptor_limit(&self) -> Option<u64> {
        descriptor_limit()
    }
}

/// The process's soft descriptor limit (`RLIMIT_NOFILE`), where the
/// platform has one and it is finite.
#[cfg(all(unix, not(any(loom, shuttle))))]
#[must_use]
pub fn descriptor_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given, nothing else.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    (read == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// No descriptor limit to read on this platform (or under a model
/// checker, which has no sockets).
#[cfg(not(all(unix, not(any(loom, shuttle)))))]
#[must_use]
pub fn descriptor_limit() -> Option<u64> {
    None
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

/// What an error from [`Listener::accept`] says about the listener.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcceptFailure {
    /// The failure belongs to one inbound connection (it was reset or
    /// aborted before it was accepted, its peer address could not be read,
    /// a pending network error was passed on): skip it, accept the next.
    Connection,
    /// The process or the system is out of something (descriptors, buffers,
    /// memory), or the error is not known to be the connection's own: wait
    /// and retry, as hyper's and axum's servers do.
    Resources,
}

/// Classifies an accept error. Linux's accept(2) passes a new socket's
/// pending network errors (`EPROTO`, `ENETDOWN`, `EHOSTUNREACH`, ...) on as
/// accept's own and asks callers to retry them; `ENOTCONN` comes from
/// reading the peer address of a socket the peer already reset. Anything
/// not listed counts as resources: a wrong guess then costs a short pause,
/// where the opposite guess would spin on `EMFILE`. Pinned by
/// `accept_failures_are_classified_by_errno_and_kind`.
#[must_use]
pub fn accept_failure(error: &io::Error) -> AcceptFailure {
    use io::ErrorKind as K;
    if let Some(code) = error.raw_os_error() {
        return errno_failure(code);
    }
    match error.kind() {
        K::ConnectionAborted
        | K::ConnectionReset
        | K::ConnectionRefused
        | K::NotConnected
        | K::BrokenPipe
        | K::UnexpectedEof
        | K::Interrupted
        | K::WouldBlock
        | K::TimedOut
        | K::InvalidData
        | K::HostUnreachable
        | K::NetworkUnreachable
        | K::NetworkDown
        | K::PermissionDenied => AcceptFailure::Connection,
        _ => AcceptFailure::Resources,
    }
}

#[cfg(unix)]
fn errno_failure(code: i32) -> AcceptFailure {
    const CONNECTION: &[i32] = &[
        libc::ECONNABORTED,
        libc::ECONNRESET,
        libc::ECONNREFUSED,
        libc::ENOTCONN,
        libc::EPIPE,
        libc::EINTR,
        libc::EAGAIN,
        libc::ETIMEDOUT,
        libc::EPROTO,
        libc::ENOPROTOOPT,
        libc::EHOSTDOWN,
        libc::EHOSTUNREACH,
        libc::EOPNOTSUPP,
        libc::ENETUNREACH,
        libc::ENETDOWN,
        libc::EPERM,
    ];
    if CONNECTION.contains(&code) {
        AcceptFailure::Connection
    } else {
        AcceptFailure::Resources
    }
}

#[cfg(not(unix))]
fn errno_failure(code: i32) -> AcceptFailure {
    accept_failure(&io::Error::from(io::Error::from_raw_os_error(code).kind()))
}

#[cfg(all(test, unix))]
mod tests {
    use super::{accept_failure, AcceptFailure};
    use std::io;

    #[test]
    fn accept_failures_are_classified_by_errno_and_kind() {
        let by_errno = [
            (libc::ECONNABORTED, AcceptFailure::Connection),
            (libc::ECONNRESET, AcceptFailure::Connection),
            (libc::ENOTCONN, AcceptFailure::Connection),
            (libc::EPROTO, AcceptFailure::Connection),
            (libc::ENETDOWN, AcceptFailure::Connection),
            (libc::EPERM, AcceptFailure::Connection),
            (libc::EINTR, AcceptFailure::Connection),
            (libc::EMFILE, AcceptFailure::Resources),
            (libc::ENFILE, AcceptFailure::Resources),
            (libc::ENOBUFS, AcceptFailure::Resources),
            (libc::ENOMEM, AcceptFailure::Resources),
            (libc::EBADF, AcceptFailure::Resources),
        ];
        for (code, expected) in by_errno {
            let error = io::Error::from_raw_os_error(code);
            assert_eq!(accept_failure(&error), expected, "{error}");
        }
        let by_kind = [
            (io::ErrorKind::ConnectionReset, AcceptFailure::Connection),
            (io::ErrorKind::NotConnected, AcceptFailure::Connection),
            (io::ErrorKind::OutOfMemory, AcceptFailure::Resources),
            (io::ErrorKind::Other, AcceptFailure::Resources),
        ];
        for (kind, expected) in by_kind {
            assert_eq!(accept_failure(&io::Error::from(kind)), expected, "{kind:?}");
        }
    }
}
