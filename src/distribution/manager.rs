//! [`ConnectionManager`]: the table of node → current connection, and the
//! generations.
//!
//! Model: per node, generations start at 1 and only grow (the counter
//! outlives the connection). At most one *live* connection per node is in the
//! table; a down one may linger for an instant between its `mark_down` and
//! its removal, and must then count as absent: it neither blocks a redial
//! nor is handed out (liveness). On down, the entry is removed only if it is
//! still that connection (a redial may already have displaced it), and the
//! down hook fires once per generation regardless (S3). Hooks run outside the
//! table lock, so they may call back into the manager.

use crate::shim::time::Duration;
use std::collections::BTreeMap;
use std::fmt;
use std::io;

use crate::shim::rt::JoinHandle;
use tokio::io::AsyncWriteExt;

use super::connection::{DistConnection, DownEvent, DownListener, DownReason};
use super::frame::{encode, read_frame, Frame, ReadFrameError, DEFAULT_MAX_FRAME};
use super::node::NodeName;
use crate::planted::{Planted, PlantedBug};
use crate::shim::net::{BoxRead, Connected, Listener, Transport};
use crate::shim::probe::{mark, preempt_point, Mark, Point};
use crate::shim::rt::{RuntimeChoice, TaskRuntime};
use crate::shim::sync::{Arc, Mutex, Weak};
use crate::shim::time::timeout;

/// Default bound on a dial (connect plus hello).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The first frame on a dialed stream: this control, and the dialer's name as
/// payload. Lets `accept` learn who is calling.
pub const HELLO: &[u8] = b"lanesim/hello";

/// A frame that arrived on a connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InboundFrame {
    /// From this node.
    pub node: NodeName,
    /// On this generation.
    pub generation: u64,
    /// The control part.
    pub control: Vec<u8>,
    /// The payload part.
    pub payload: Vec<u8>,
}

type DownHook = Arc<dyn Fn(&DownEvent) + Send + Sync>;
type FrameHook = Arc<dyn Fn(InboundFrame) + Send + Sync>;

/// How a [`ConnectionManager`] runs.
pub struct ManagerConfig {
    /// Where read loops run.
    pub runtime: RuntimeChoice,
    /// Bound on a dial and on reading an inbound hello.
    pub connect_timeout: Duration,
    /// Largest inbound frame body; a larger header marks the connection down
    /// with `ReadError`.
    pub max_frame: u64,
    /// Called for every inbound non-keepalive frame, on the read loop.
    pub on_frame: Option<FrameHook>,
    /// Planted bug, if any.
    pub planted: Planted,
}

impl ManagerConfig {
    /// Defaults: 5 s connect timeout, 64 MiB frames, no frame callback.
    #[must_use]
    pub fn new(runtime: RuntimeChoice) -> Self {
        Self {
            runtime,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_frame: DEFAULT_MAX_FRAME,
            on_frame: None,
            planted: Planted::none(),
        }
    }
}

/// Why a dial or accept failed.
#[derive(Debug)]
pub enum DialError {
    /// The transport did not connect (or send the hello) in time.
    Timeout,
    /// The transport failed.
    Io(io::Error),
    /// The inbound stream did not start with a valid hello.
    BadHello(String),
}

impl fmt::Display for DialError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout => f.write_str("connect timed out"),
            Self::Io(error) => write!(f, "connect failed: {error}"),
            Self::BadHello(why) => write!(f, "bad hello: {why}"),
        }
    }
}

impl std::error::Error for DialError {}

/// One node's slot in the table, as [`ConnectionManager::slots`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotView {
    /// The node.
    pub node: NodeName,
    /// The last generation issued for it (0: none yet).
    pub last_generation: u64,
    /// The connection the slot holds: its generation and whether it is down.
    pub current: Option<(u64, bool)>,
}

/// Per node: the last generation issued and the current connection.
#[derive(Default)]
struct Slot {
    generation: u64,
    current: Option<Arc<DistConnection>>,
}

struct ManagerShared {
    table: Mutex<BTreeMap<NodeName, Slot>>,
    down_hooks: Mutex<Vec<DownHook>>,
    on_frame: Option<FrameHook>,
    connect_timeout: Duration,
    max_frame: u64,
    planted: Planted,
    runtime: TaskRuntime,
}

impl ManagerShared {
    /// Whether `connection` counts as connected (planted bug #11 counts a
    /// down-but-not-yet-removed entry too).
    fn usable(&self, connection: &DistConnection) -> bool {
        !connection.is_down() || self.planted.has(PlantedBug::DownEntryTreatedAsConnected)
    }
}

impl DownListener for ManagerShared {
    fn connection_down_again(&self, connection: &DistConnection) {
        let table = self.table.lock();
        if table
            .get(connection.node())
            .is_some_and(|slot| slot.generation > connection.generation())
        {
            mark(Mark::LateDownOfOldGeneration);
        }
    }

    /// Called once per generation by `DistConnection::mark_down`.
    fn connection_down(&self, connection: &DistConnection, reason: DownReason) {
        {
            let mut table = self.table.lock();
            if let Some(slot) = table.get_mut(connection.node()) {
                if slot
                    .current
                    .as_ref()
                    .is_some_and(|current| std::ptr::eq(Arc::as_ptr(current), connection))
                {
                    slot.current = None;
                }
            }
        }
        let event = DownEvent {
            node: connection.node().clone(),
            generation: connection.generation(),
            reason,
        };
        tracing::debug!(node = %event.node, generation = event.generation, ?reason, "connection down");
        let hooks = self.down_hooks.lock().clone();
        for hook in hooks {
            // One panicking hook must neither starve the others (the link
            // table's noconnections) nor unwind into whoever marked down.
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(&event))).is_err() {
                tracing::error!(node = %event.node, generation = event.generation, "a connection-down hook panicked");
            }
        }
    }
}

/// The node → connection table, dialing, accepting and read loops. Cheap to
/// clone; clones share one table.
#[derive(Clone)]
pub struct ConnectionManager {
    shared: Arc<ManagerShared>,
    transport: Arc<dyn Transport>,
    local: NodeName,
}

impl ConnectionManager {
    /// A manager for `local`, dialing through `transport`.
    ///
    /// # Errors
    /// When a dedicated runtime cannot start.
    pub fn new(
        local: NodeName,
        transport: Arc<dyn Transport>,
        config: ManagerConfig,
    ) -> io::Result<Self> {
        Ok(Self {
            shared: Arc::new(ManagerShared {
                table: Mutex::new(BTreeMap::new()),
                down_hooks: Mutex::new(Vec::new()),
                on_frame: config.on_frame,
                connect_timeout: config.connect_timeout,
                max_frame: config.max_frame,
                planted: config.planted,
                runtime: TaskRuntime::start(config.runtime, config.planted)?,
            }),
            transport,
            local,
        })
    }

    /// This node's name.
    #[must_use]
    pub fn local(&self) -> &NodeName {
        &self.local
    }

    /// A handle that does not keep the manager alive: for a down hook that
    /// wants to look at the table (a hook holding the manager itself would
    /// be a reference cycle through the hook list).
    #[must_use]
    pub fn downgrade(&self) -> WeakConnectionManager {
        WeakConnectionManager {
            shared: Arc::downgrade(&self.shared),
            transport: Arc::clone(&self.transport),
            local: self.local.clone(),
        }
    }

    /// Adds a hook fired once per generation that goes down, outside any lock.
    pub fn register_connection_down(&self, hook: impl Fn(&DownEvent) + Send + Sync + 'static) {
        self.shared.down_hooks.lock().push(Arc::new(hook));
    }

    /// The node's live connection, if any. Never a down one.
    #[must_use]
    pub fn get_connection(&self, node: &NodeName) -> Option<Arc<DistConnection>> {
        let table = self.shared.table.lock();
        let current = table.get(node)?.current.as_ref()?;
        self.shared.usable(current).then(|| Arc::clone(current))
    }

    /// The table as it is now, node by node (sorted): the last generation
    /// issued and the connection the slot holds, if any, with its down
    /// flag. Diagnostics: unlike [`get_connection`](Self::get_connection)
    /// it shows a down connection still in its slot (the testbed's S3 check
    /// reads it: a down generation must leave the table).
    #[must_use]
    pub fn slots(&self) -> Vec<SlotView> {
        let table = self.shared.table.lock();
        table
            .iter()
            .map(|(node, slot)| SlotView {
                node: node.clone(),
                last_generation: slot.generation,
                current: slot.current.as_ref().map(|c| (c.generation(), c.is_down())),
            })
            .collect()
    }

    /// Nodes with a live connection, sorted.
    #[must_use]
    pub fn connected_nodes(&self) -> Vec<NodeName> {
        let table = self.shared.table.lock();
        table
            .iter()
            .filter(|(_, slot)| slot.current.as_ref().is_some_and(|c| self.shared.usable(c)))
            .map(|(node, _)| node.clone())
            .collect()
    }

    /// Installs `stream` as `node`'s connection and starts its read loop.
    /// A live incumbent wins: it is returned and `stream` is dropped. A down
    /// incumbent is displaced by a new generation.
    pub fn register(&self, node: NodeName, stream: Connected) -> Arc<DistConnection> {
        let Connected {
            read,
            write,
            peer,
            local,
        } = stream;
        let (connection, displaced) = {
            let mut table = self.shared.table.lock();
            let slot = table.entry(node.clone()).or_default();
            if let Some(current) = &slot.current {
                if self.shared.usable(current) {
                    mark(Mark::RegisterIncumbentKept);
                    return Arc::clone(current);
                }
                mark(Mark::RegisterDisplacedDown);
            }
            slot.generation += 1;
            let connection = Arc::new(DistConnection::new(
                node,
                slot.generation,
                peer,
                local,
                write,
                Arc::downgrade(&self.shared) as Weak<dyn DownListener>,
                self.shared.planted,
            ));
            let displaced = slot.current.replace(Arc::clone(&connection));
            (connection, displaced)
        };
        if let Some(displaced) = displaced {
            // Already down (that is why it was displaced); makes sure of it,
            // and is a no-op for the once-guarded hook.
            displaced.mark_down(DownReason::ManualDisconnect);
        }
        tracing::debug!(node = %connection.node(), generation = connection.generation(), "connection up");
        self.shared.runtime.spawn(read_loop(
            Arc::downgrade(&self.shared),
            Arc::clone(&connection),
            read,
        ));
        connection
    }

    /// The live connection to `node`, dialing `addr` if there is none. The
    /// dial is bounded by the connect timeout and announces us with a hello.
    ///
    /// # Errors
    /// When the connect or hello fails or times out.
    pub async fn dial(
        &self,
        node: &NodeName,
        addr: &str,
    ) -> Result<Arc<DistConnection>, DialError> {
        if let Some(connection) = self.get_connection(node) {
            return Ok(connection);
        }
        let hello = encode(HELLO, self.local.as_str().as_bytes()).expect("node names are short");
        let connect = async {
            let mut stream = self.transport.connect(addr).await?;
            stream.write.write_all(&hello).await?;
            stream.write.flush().await?;
            Ok::<_, io::Error>(stream)
        };
        let stream = timeout(self.shared.connect_timeout, connect)
            .await
            .map_err(|_| DialError::Timeout)?
            .map_err(DialError::Io)?;
        // Another dial of the same node, or a down of its generation, may
        // land here: `register` decides under the table lock.
        preempt_point(Point::DialBeforeRegister).await;
        Ok(self.register(node.clone(), stream))
    }

    /// Accepts one inbound stream, reads its hello (bounded by the connect
    /// timeout) and registers it under the name it announced.
    ///
    /// # Errors
    /// When accepting fails, or the hello is late or malformed.
    pub async fn accept(
        &self,
        listener: &mut dyn Listener,
    ) -> Result<Arc<DistConnection>, DialError> {
        let stream = listener.accept().await.map_err(DialError::Io)?;
        self.handshake(stream).await
    }

    /// Reads an inbound stream's hello and registers it.
    async fn handshake(&self, mut stream: Connected) -> Result<Arc<DistConnection>, DialError> {
        let max = self.shared.max_frame.min(1024);
        let hello = timeout(
            self.shared.connect_timeout,
            read_frame(&mut stream.read, max),
        )
        .await
        .map_err(|_| DialError::Timeout)?
        .map_err(|error| DialError::BadHello(error.to_string()))?;
        let node = match hello {
            Frame::Data { control, payload } if control == HELLO => String::from_utf8(payload)
                .map_err(|_| DialError::BadHello("node name is not UTF-8".into()))?,
            other => {
                return Err(DialError::BadHello(format!(
                    "expected a hello, got {other:?}"
                )))
            }
        };
        Ok(self.register(NodeName::from(node), stream))
    }

    /// Accepts inbound connections on `listener` until it fails. Each
    /// stream's hello is read in its own task, so a caller that never sends
    /// one delays nobody else; a bad stream is dropped. The loop holds the
    /// manager weakly: it ends when the manager is gone.
    pub fn serve(&self, mut listener: Box<dyn Listener>) -> JoinHandle<()> {
        let shared = Arc::downgrade(&self.shared);
        let (transport, local) = (Arc::clone(&self.transport), self.local.clone());
        self.shared.runtime.spawn(async move {
            loop {
                let stream = match listener.accept().await {
                    Ok(stream) => stream,
                    Err(error) => {
                        tracing::warn!(%error, "accept loop stopped");
                        return;
                    }
                };
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                let manager = ConnectionManager {
                    shared,
                    transport: Arc::clone(&transport),
                    local: local.clone(),
                };
                let runtime = Arc::clone(&manager.shared);
                runtime.runtime.spawn(async move {
                    if let Err(error) = manager.handshake(stream).await {
                        tracing::warn!(%error, "inbound connection refused");
                    }
                });
            }
        })
    }

    /// Marks `node`'s live connection down (`ManualDisconnect`). Returns
    /// whether there was one.
    pub fn disconnect_node(&self, node: &NodeName) -> bool {
        let connection = self.get_connection(node);
        if let Some(connection) = &connection {
            connection.mark_down(DownReason::ManualDisconnect);
        }
        connection.is_some()
    }
}

/// A [`ConnectionManager`] that may be gone (see
/// [`ConnectionManager::downgrade`]).
#[derive(Clone)]
pub struct WeakConnectionManager {
    shared: Weak<ManagerShared>,
    transport: Arc<dyn Transport>,
    local: NodeName,
}

impl WeakConnectionManager {
    /// The manager, if it still exists.
    #[must_use]
    pub fn upgrade(&self) -> Option<ConnectionManager> {
        Some(ConnectionManager {
            shared: self.shared.upgrade()?,
            transport: Arc::clone(&self.transport),
            local: self.local.clone(),
        })
    }
}

/// Reads frames until the peer closes, a read fails or the connection is
/// marked down; then closes the write half so the peer sees end of stream.
async fn read_loop(
    manager: Weak<ManagerShared>,
    connection: Arc<DistConnection>,
    mut read: BoxRead,
) {
    let Some(max) = manager.upgrade().map(|m| m.max_frame) else {
        return;
    };
    let close_bound = manager
        .upgrade()
        .map_or(DEFAULT_CONNECT_TIMEOUT, |m| m.connect_timeout);
    // The generation is registered and handed out, but nobody watches for
    // its down until this loop first waits: a down that lands here must
    // still close the socket.
    preempt_point(Point::ReadLoopStarting).await;
    let reason = loop {
        let frame = tokio::select! {
            biased;
            () = connection.down_notified() => break None,
            frame = read_frame(&mut read, max) => frame,
        };
        match frame {
            Ok(Frame::Keepalive) => {}
            Ok(Frame::Data { control, payload }) => {
                let Some(manager) = manager.upgrade() else {
                    break None;
                };
                if let Some(on_frame) = &manager.on_frame {
                    on_frame(InboundFrame {
                        node: connection.node().clone(),
                        generation: connection.generation(),
                        control,
                        payload,
                    });
                }
            }
            Err(ReadFrameError::Closed) => break Some(DownReason::PeerClosed),
            Err(error) => {
                tracing::debug!(node = %connection.node(), %error, "read failed");
                break Some(DownReason::ReadError);
            }
        }
    };
    if let Some(reason) = reason {
        // The stream is dead but the generation still up: a write may
        // start in this window, and must fail or be refused, never hang.
        preempt_point(Point::ReadBeforeMarkDown).await;
        connection.mark_down(reason);
    }
    drop(read);
    connection.close_writer(close_bound).await;
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::shim::net::{Connected, TokioTcp};
    use crate::shim::rt::RuntimeChoice;
    use crate::shim::sync::Arc;

    fn in_memory() -> Connected {
        let (ours, theirs) = tokio::io::duplex(1024);
        std::mem::forget(theirs); // keep the peer open for the whole test
        let (read, write) = tokio::io::split(ours);
        Connected {
            read: Box::new(read),
            write: Box::new(write),
            peer: "memory".into(),
            local: "memory".into(),
        }
    }

    fn manager(planted: Planted) -> ConnectionManager {
        let mut config = ManagerConfig::new(RuntimeChoice::current());
        config.planted = planted;
        ConnectionManager::new(NodeName::from("local@test"), Arc::new(TokioTcp), config).unwrap()
    }

    fn flip_only(connection: &DistConnection) {
        connection.flip_down_flag_only(DownReason::WriteTimeout);
    }

    /// The window between `mark_down`'s flag flip and the manager's removal
    /// has no `.await` in it, so only a thread can land there; this test
    /// stops time inside it by doing the two halves by hand.
    #[tokio::test]
    async fn a_down_but_not_yet_removed_entry_counts_as_absent_and_is_displaced() {
        let manager = manager(Planted::none());
        let downs = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&downs);
        manager.register_connection_down(move |event| sink.lock().unwrap().push(event.clone()));
        let node = NodeName::from("peer@test");
        let old = manager.register(node.clone(), in_memory());

        // First half of mark_down: the flag flips ...
        flip_only(&old);
        // ... and before the removal, the entry must already count as gone.
        assert!(
            manager.get_connection(&node).is_none(),
            "a down entry was handed out"
        );
        assert!(manager.connected_nodes().is_empty());
        let new = manager.register(node.clone(), in_memory());
        assert_eq!(new.generation(), 2, "the down entry blocked the redial");

        // Second half: the manager removes only its own entry and fires once.
        manager
            .shared
            .connection_down(&old, DownReason::WriteTimeout);
        assert!(
            Arc::ptr_eq(&manager.get_connection(&node).unwrap(), &new),
            "evicted the successor"
        );
        let downs = downs.lock().unwrap().clone();
        assert_eq!(downs.len(), 1, "{downs:?}");
        assert_eq!(
            (downs[0].generation, downs[0].reason),
            (1, DownReason::WriteTimeout)
        );
    }

    #[cfg(feature = "planted-bugs")]
    #[tokio::test]
    async fn down_entry_treated_as_connected_hands_out_the_dead_generation_and_blocks_the_redial() {
        let manager = manager(Planted::bug(PlantedBug::DownEntryTreatedAsConnected));
        let node = NodeName::from("peer@test");
        let old = manager.register(node.clone(), in_memory());
        flip_only(&old);
        let handed_out = manager
            .get_connection(&node)
            .expect("the planted bug did not show");
        assert!(handed_out.is_down());
        let redialed = manager.register(node.clone(), in_memory());
        assert!(
            Arc::ptr_eq(&redialed, &old),
            "the planted bug did not show: the redial got through"
        );
    }
}
