//! A real node serving loopback, and the well-behaved peer every hostile
//! test ends with.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use super::{log, snapshot, wait_for, Log};
use lanesim::distribution::{ConnectionManager, InboundFrame, ManagerConfig, NodeName};
use lanesim::shim::net::{BoxFuture, Connected, Listener, TokioTcp, Transport};
use lanesim::shim::rt::RuntimeChoice;
use lanesim_target::wire::encode;
use tokio::net::TcpSocket;

/// A manager serving a loopback listener, and the frames it received.
pub struct Served {
    pub manager: ConnectionManager,
    pub addr: String,
    pub frames: Log<InboundFrame>,
}

/// A node named `name` with `config` (its frame callback replaced by a log),
/// serving 127.0.0.1.
pub async fn served(name: &str, config: ManagerConfig) -> Served {
    served_on(name, IpAddr::from([127, 0, 0, 1]), config).await
}

/// As [`served`], with every socket of the node on `ip` (a loopback
/// address of its own): it listens there and dials from there.
pub async fn served_on(name: &str, ip: IpAddr, mut config: ManagerConfig) -> Served {
    let frames = log();
    let sink = Arc::clone(&frames);
    config.on_frame = Some(Arc::new(move |frame| sink.lock().unwrap().push(frame)));
    let transport = TcpOn(ip);
    let manager =
        ConnectionManager::new(NodeName::from(name), Arc::new(transport), config).expect("manager");
    let listener = transport.bind(&format!("{ip}:0")).await.unwrap();
    let addr = listener.local_addr().unwrap();
    manager.serve(listener);
    Served {
        manager,
        addr,
        frames,
    }
}

/// Real TCP with every socket on one address: a node bound to one
/// interface of a multi-homed host (here, one loopback address of
/// 127.0.0.0/8), so its streams come from the host it listens on.
#[derive(Clone, Copy, Debug)]
pub struct TcpOn(pub IpAddr);

impl Transport for TcpOn {
    fn connect<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Connected>> {
        Box::pin(async move {
            let target = tokio::net::lookup_host(addr)
                .await?
                .next()
                .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, addr.to_owned()))?;
            let socket = TcpSocket::new_v4()?;
            socket.bind(SocketAddr::new(self.0, 0))?;
            Connected::from_tcp(socket.connect(target).await?)
        })
    }

    fn bind<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Box<dyn Listener>>> {
        TokioTcp.bind(addr)
    }
}

/// The node's default configuration on the test's runtime.
pub fn config() -> ManagerConfig {
    ManagerConfig::new(RuntimeChoice::current(), super::raw::cookie())
}

/// A well-behaved node dials `to`, sends one frame tagged `tag`, and `to`
/// must receive it from that node.
pub async fn an_honest_peer_is_delivered(to: &Served, from: &str, tag: &[u8]) {
    let honest = served(from, config()).await;
    let connection = honest
        .manager
        .dial(to.manager.local(), &to.addr)
        .await
        .unwrap_or_else(|error| panic!("{from} cannot dial {}: {error}", to.addr));
    let frame = encode(tag, b"");
    connection
        .write_frame(&frame, Some(Duration::from_secs(5)))
        .await
        .unwrap();
    wait_for("the honest peer's frame", || {
        snapshot(&to.frames)
            .iter()
            .any(|f| f.node.as_str() == from && f.control == tag)
    })
    .await;
}

/// The process's resident memory when it was taken (Linux; `None`
/// elsewhere), to bound what an attack made the node hold. Resident memory
/// is the process's, and a test file's tests run on threads of one
/// process: a measure holds a lock until it drops, so two measures never
/// overlap (the 24 spenders' 64 MiB once landed inside the slowloris
/// test's window).
pub struct Memory(Option<u64>, std::sync::MutexGuard<'static, ()>);

/// Held by each [`Memory`] while it lives.
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Memory {
    /// Resident memory now (after waiting for any other measure to end).
    pub fn now() -> Self {
        let turn = MEASURING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Self(resident(), turn)
    }

    /// Fails unless resident memory grew by less than `bound` bytes since.
    pub fn grew_less_than(&self, bound: u64, what: &str) {
        if let (Some(before), Some(after)) = (self.0, resident()) {
            let grown = after.saturating_sub(before);
            assert!(
                grown < bound,
                "{what}: resident memory grew by {} KiB, the bound is {} KiB",
                grown / 1024,
                bound / 1024
            );
        }
    }
}

fn resident() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
