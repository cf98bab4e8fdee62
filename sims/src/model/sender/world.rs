//! One execution of the sender workloads: lanesim's connection layer (its
//! `ConnectionManager`, its read loops and table) with the target's sender
//! over it, each peer connected through an in-memory socket
//! ([`super::socket`]), and the workload's actors on tasks of their own.
//! Every task, lock, channel and timer of the layer, and of a sender that
//! takes them from `lanesim_target::shim`, is the model checker's.
//!
//! The log is the sender world's: the same events, told by the same
//! observer (`world::sender::observer`), so the sender world's checkers
//! read it. As there, an enqueue and its record are one step of the log
//! (under [`LogOrder`]), as are a connection and its `ConnectionUp`, a
//! disconnect and the down it causes, and a write's end and its record. A
//! shutdown is logged before it is asked for, outside the order, so
//! enqueues race it.
//!
//! The last actor to finish ends the run: it logs `WorkloadDone`, lets the
//! drain account for what it holds (its counters balance, or a bounded
//! number of steps pass), logs each peer's table slot and the counters,
//! and freezes the log; what tearing down does after (the sender and
//! every connection closed, so every task ends) is not part of the run.
//! Time does not move (every record is at zero).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_target::layer::{LayerConn, Sender, SenderSetup};
use lanesim_target::net::{BoxFuture, Connected, Listener, Transport};
use lanesim_target::node::{Down, NodeReports, NodeSetup, Runtime};
use lanesim_target::shim::task;

use super::socket;
use super::workload::{Act, SenderShape as Shape};
use crate::event::{ControlOutcome, DataOutcome, Event, EventLog, Lane, PeerAct, Record};
use crate::model::order::LogOrder;
use crate::model::Left;
use crate::targets::lanesim::node::{LanesimNode, Started0};
use crate::targets::Subject;
use crate::world::handshake::{self, COOKIE};
use crate::world::peer::peer_name;
use crate::world::sender::observer::{Observer, ReportHost};
use crate::world::tag::Tag;

const HOST: &str = "local";

/// The sender's write deadline: any value does (the timer fires where the
/// checker chooses).
pub(in crate::model) const MODEL_WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// How many steps the end of a run lets the drain take to account for
/// what it holds before the run's last records.
const SETTLE_STEPS: usize = 200;

/// A frame's payload bytes.
const PAYLOAD: usize = 8;

/// What one execution shares and leaves for the judge.
pub(in crate::model) struct Execution {
    log: EventLog,
    order: LogOrder,
    crashed: Mutex<Option<String>>,
    /// The run's last record is made: later reports are teardown.
    frozen: AtomicBool,
    /// The generations whose down is logged, by node name.
    downs_logged: Mutex<BTreeSet<(String, u64)>>,
    /// The drain's reports of a frame's fate logged so far.
    disposals: AtomicUsize,
}

impl Execution {
    /// Logs `event` as one step of the log.
    pub(super) fn record(&self, event: Event) {
        self.order.ordered(|| self.record_now(event));
    }

    /// Logs `event` at once, without waiting for the order: what a socket
    /// tells from inside a write (the first byte of a frame, what its peer
    /// read). Waiting there would let the checker run another task between
    /// the write's last look at its generation's down signal and its
    /// first byte, and log a down between them that came after the look.
    pub(super) fn record_now(&self, event: Event) {
        if !self.frozen.load(Ordering::Acquire) {
            self.log.push(Duration::ZERO, HOST, event);
        }
    }

    fn crash(&self, why: String) {
        self.crashed.lock().unwrap().get_or_insert(why);
    }
}

impl Left for Execution {
    fn take_log(&self) -> Vec<Record> {
        self.log.take()
    }

    fn take_crash(&self) -> Option<String> {
        self.crashed.lock().unwrap().take()
    }
}

/// The observer's host here: it logs, and keeps which generations' downs
/// are logged.
struct Host(Arc<Execution>);

impl ReportHost for Host {
    fn record(&self, event: Event) {
        self.0.record(event);
    }

    fn ordered(&self, step: &mut dyn FnMut()) {
        self.0.order.ordered(step);
    }

    fn disposed(&self, event: Event) {
        self.0.record(event);
        self.0.disposals.fetch_add(1, Ordering::AcqRel);
    }

    fn after_down(&self, down: &Down<'_>) {
        self.0
            .downs_logged
            .lock()
            .unwrap()
            .insert((down.node.to_owned(), down.generation));
    }
}

/// The layer never dials or listens: the world hands it its sockets.
struct NoDial;

impl Transport for NoDial {
    fn connect<'a>(&'a self, _: &'a str) -> BoxFuture<'a, std::io::Result<Connected>> {
        Box::pin(async { Err(std::io::ErrorKind::Unsupported.into()) })
    }

    fn bind<'a>(&'a self, _: &'a str) -> BoxFuture<'a, std::io::Result<Box<dyn Listener>>> {
        Box::pin(async { Err(std::io::ErrorKind::Unsupported.into()) })
    }
}

/// The layer, the sender and what the actors share.
struct Run {
    execution: Arc<Execution>,
    shape: &'static Shape,
    layer: Started0,
    sender: Box<dyn Sender>,
    /// Per peer, the generation the world connected last.
    held: Mutex<Vec<Option<LayerConn>>>,
    /// Sockets made so far (a socket's name is its number, from 1).
    sockets: AtomicU16,
    /// Per peer, data frames offered so far.
    data_seq: Mutex<Vec<u64>>,
    /// Controls offered so far.
    control_seq: AtomicU16,
    /// Actors still running.
    actors_left: AtomicUsize,
    /// The sender reports its drain (`SenderCapabilities::drain`).
    reports_drain: bool,
}

impl Run {
    /// Connects `peer` through a new socket (its first wedged if the
    /// workload says so): the connection and its `ConnectionUp` are one
    /// step of the log.
    fn connect(&self, peer: u64) {
        let socket = self.sockets.fetch_add(1, Ordering::Relaxed) + 1;
        let wedged =
            self.shape.wedged.contains(&peer) && self.held.lock().unwrap()[peer as usize].is_none();
        let stream = socket::connect(&self.execution, peer, socket, wedged, self.shape.slow);
        let name = peer_name(peer);
        let execution = &self.execution;
        let connection = execution.order.ordered(|| {
            let connection = self.layer.adopt(&name, stream);
            execution.record(Event::ConnectionUp {
                peer,
                generation: connection.generation(),
                socket,
            });
            if wedged {
                execution.record(Event::PeerActed {
                    peer,
                    socket,
                    act: PeerAct::Wedged,
                });
            }
            connection
        });
        self.held.lock().unwrap()[peer as usize] = Some(connection);
    }

    fn step(&self, act: Act) {
        let execution = &self.execution;
        match act {
            // Numbered inside the step: the log's order is the enqueue
            // order DC-5 holds the drain to.
            Act::Data(peer) => execution.order.ordered(|| {
                let seq = {
                    let mut seqs = self.data_seq.lock().unwrap();
                    seqs[peer as usize] += 1;
                    seqs[peer as usize]
                };
                let frame = Tag {
                    lane: Lane::Data,
                    generation: 0,
                    seq,
                    link: None,
                }
                .shared_frame(PAYLOAD);
                let outcome: DataOutcome = self.sender.enqueue(&peer_name(peer), frame).into();
                execution.record(Event::DataEnqueued { peer, seq, outcome });
            }),
            Act::Control(peer) => {
                let Some(pinned) = self.held.lock().unwrap()[peer as usize].clone() else {
                    return;
                };
                execution.order.ordered(|| {
                    let seq = u64::from(self.control_seq.fetch_add(1, Ordering::Relaxed)) + 1;
                    let generation = pinned.generation();
                    let frame = Tag {
                        lane: Lane::Control,
                        generation,
                        seq,
                        link: None,
                    }
                    .shared_frame(PAYLOAD);
                    let outcome: ControlOutcome =
                        self.sender.enqueue_control(&pinned, frame).into();
                    execution.record(Event::ControlEnqueued {
                        peer,
                        generation,
                        seq,
                        link: None,
                        outcome,
                        down_at_return: pinned.is_down(),
                    });
                });
            }
            // Logged before it is asked for, and not one step with it: an
            // enqueue must be free to interleave with the shutdown (an
            // enqueue's look at "closed" and its push against the drain's
            // last look), and everything the shutdown causes comes after
            // its record.
            Act::Shutdown => {
                execution.record(Event::ShutdownRequested);
                self.sender.shutdown();
            }
            // The down it causes is logged inside the step: no other task
            // sees the generation down before the log does.
            Act::Disconnect(peer) => execution.order.ordered(|| {
                let name = peer_name(peer);
                let generation = self
                    .layer
                    .connection(&name)
                    .map(|connection| connection.generation());
                execution.record(Event::Disconnected { peer, generation });
                self.layer.disconnect(&name);
            }),
            // Only once the held generation's down is logged: a down the
            // drain made (a write's deadline) is seen by the layer before
            // its report is logged, and a generation logged up before its
            // predecessor's down reads as a live one displaced.
            Act::Reconnect(peer) => {
                let name = peer_name(peer);
                let reconnect = execution.order.ordered(|| {
                    let held = self.held.lock().unwrap()[peer as usize].clone();
                    held.is_none_or(|held| {
                        self.execution
                            .downs_logged
                            .lock()
                            .unwrap()
                            .contains(&(name.clone(), held.generation()))
                    })
                });
                if reconnect {
                    self.connect(peer);
                }
            }
            Act::Keepalive(_) | Act::Yield => {}
        }
    }

    /// A keepalive to `peer`'s held generation; its outcome is the
    /// layer's (a write to a generation down is refused).
    async fn keepalive(&self, peer: u64) {
        let held = self.held.lock().unwrap()[peer as usize].clone();
        if let Some(connection) = held {
            let _ = connection.write_raw(&lanesim_target::wire::KEEPALIVE).await;
        }
    }

    /// The sender's counters balance (every frame it queued met a fate),
    /// and, for a sender that reports its drain, every fate they count is
    /// logged (a drain may count a fate before it reports it).
    fn settled(&self, reports_drain: bool) -> bool {
        self.sender.stats().is_some_and(|s| {
            let control =
                s.control_written + s.control_skipped + s.control_failed + s.control_discarded;
            let data = s.data_written + s.data_no_connection + s.data_failed + s.data_discarded;
            let logged = self.execution.disposals.load(Ordering::Acquire) as u64;
            s.control_queued == control
                && s.data_queued == data
                && (!reports_drain || logged >= control + data)
        })
    }

    /// The end of the run (module doc).
    async fn end(&self) {
        let execution = &self.execution;
        execution.record(Event::WorkloadDone);
        for _ in 0..SETTLE_STEPS {
            if self.settled(self.reports_drain) {
                break;
            }
            task::yield_now().await;
        }
        for peer in 0..self.shape.peers {
            execution.record(Event::TableAtEnd {
                peer,
                generation: self
                    .layer
                    .slot(&peer_name(peer))
                    .map(|(generation, _)| generation),
            });
        }
        if let Some(stats) = self.sender.stats() {
            execution.record(Event::SenderStats(stats.into()));
        }
        execution.frozen.store(true, Ordering::Release);
        self.sender.shutdown();
        for peer in 0..self.shape.peers {
            self.layer.disconnect(&peer_name(peer));
        }
    }
}

/// The target's sender over `layer`: lanesim's own for lanesim's subject,
/// else the target's `Targets::sender`.
fn start_sender(
    subject: &Subject,
    layer: &Started0,
    setup: SenderSetup,
) -> Result<Box<dyn Sender>, String> {
    if subject.is_builtin() {
        return layer
            .own_sender(setup, subject.planted())
            .map(|own| Box::new(own) as Box<dyn Sender>);
    }
    let target = subject
        .sender()
        .ok_or("the target has no sender over lanesim's connection layer (Targets::sender)")?;
    target.start(setup)
}

/// One execution's body: starts the layer and the sender, connects every
/// peer, and starts the actors. The execution is left in `slot` for the
/// judge.
pub(in crate::model) fn body(
    subject: &Subject,
    shape: &'static Shape,
    slot: &Mutex<Option<Arc<dyn Left>>>,
) {
    let execution = Arc::new(Execution {
        log: EventLog::default(),
        order: LogOrder::default(),
        crashed: Mutex::new(None),
        frozen: AtomicBool::new(false),
        downs_logged: Mutex::new(BTreeSet::new()),
        disposals: AtomicUsize::new(0),
    });
    *slot.lock().unwrap() = Some(Arc::clone(&execution) as Arc<dyn Left>);
    let reports = NodeReports::new(Arc::new(Observer(Host(Arc::clone(&execution)))));
    let runtime = Runtime::World(task::Handle::current());
    // The layer carries the subject's planted bug too (none for a user's
    // sender): #10 and #20 are the layer's.
    let layer = LanesimNode {
        planted: subject.planted(),
    };
    let started = layer
        .start_layer(NodeSetup {
            name: HOST.into(),
            transport: Arc::new(NoDial),
            runtime: runtime.clone(),
            connect_timeout: Duration::from_secs(1),
            write_timeout: MODEL_WRITE_TIMEOUT,
            heartbeat: None,
            max_frame: 1 << 20,
            frame_budget: 1 << 24,
            frame_timeout: None,
            data_capacity: shape.data_capacity,
            control_capacity: shape.control_capacity,
            reports: reports.clone(),
            cookie: COOKIE.to_vec(),
            nonces: Arc::new(handshake::nonces(0, HOST)),
            inbound_caps: None,
        })
        .and_then(|layer| {
            let setup = SenderSetup {
                layer: layer.layer(),
                runtime,
                write_timeout: MODEL_WRITE_TIMEOUT,
                data_capacity: shape.data_capacity,
                control_capacity: shape.control_capacity,
                reports,
            };
            let sender = start_sender(subject, &layer, setup)?;
            Ok((layer, sender))
        });
    let (layer, sender) = match started {
        Ok(started) => started,
        Err(error) => {
            execution.crash(format!("the sender could not start: {error}"));
            return;
        }
    };
    let run = Arc::new(Run {
        execution,
        shape,
        layer,
        sender,
        held: Mutex::new(vec![None; shape.peers as usize]),
        sockets: AtomicU16::new(0),
        data_seq: Mutex::new(vec![0; shape.peers as usize]),
        control_seq: AtomicU16::new(0),
        actors_left: AtomicUsize::new(shape.actors.len()),
        reports_drain: super::capabilities(subject).is_some_and(|caps| caps.drain),
    });
    for peer in 0..shape.peers {
        run.connect(peer);
    }
    for steps in shape.actors {
        let run = Arc::clone(&run);
        drop(task::spawn(async move {
            for &act in *steps {
                match act {
                    Act::Yield => task::yield_now().await,
                    Act::Keepalive(peer) => run.keepalive(peer).await,
                    _ => run.step(act),
                }
            }
            if run.actors_left.fetch_sub(1, Ordering::AcqRel) == 1 {
                run.end().await;
            }
        }));
    }
}
