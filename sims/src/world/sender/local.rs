//! The local host: starts the node target on the world's network, dials
//! every peer, runs the workload (data, links, their EXIT controls, a
//! shutdown), and ends the run once the node has accounted for every frame
//! and the log has gone quiet.

use crate::explore::spawn_world;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_target::net::Transport;
use lanesim_target::node::{Conn, Node, NodeReports, NodeSetup, Runtime};
use tokio::sync::{mpsc, Notify};

use super::dialer::Dialer;
use super::observer::{record_noconnection, Observer, WorldHost};
use super::{peer_index, Clock, Live, LocalNet, Shared, LOCAL, STALE_LINK};
use crate::coverage::WorldMark;
use crate::event::{ControlOutcome, DataOutcome, Event, Lane};
use crate::fault::timeline;
use crate::rng::SimRng;
use crate::scenario::{FaultKind, SenderParams};
use crate::targets::Subject;
use crate::world::handshake::{self, COOKIE};
use crate::world::links::Keeper;
use crate::world::net::{RealTcp, Tapped, TurmoilTcp, WriteTap};
use crate::world::peer::{peer_name, PeerWorld, MAX_INBOUND};
use crate::world::tag::{frame_len, Tag};
use crate::world::EndStep;

/// The local node's budget for partly read frames: 256 MiB, lanesim's
/// default.
const FRAME_BUDGET: u64 = 256 * 1024 * 1024;

/// How long the end of a run waits for a node without counters to settle
/// what it accepted (scenario time): a sender's own write deadline may be
/// longer than the scenario's (beamr's is a fixed 5 s).
const PATIENCE: Duration = Duration::from_secs(10);

/// The local host's task: its steps, in order.
pub(crate) async fn local_main(
    shared: Arc<Shared>,
    p: SenderParams,
    seed: u64,
    subject: Subject,
    disconnects: mpsc::UnboundedReceiver<u64>,
    net: LocalNet,
) -> turmoil::Result {
    let start = tokio::time::Instant::now();
    let mut rng = SimRng::new(seed).fork("sender");
    let local = Local::start(&shared, p, &subject, net, seed)?;
    // Running before the first dial: a disconnect applies at its instant
    // (to no generation, if there is none yet), never later.
    local.obey_disconnects(disconnects);
    // Held to the end of the run; the driver's handle on it is weak.
    let live = Arc::new(Live {
        node: Arc::clone(&local.node),
        nodes: local.nodes.clone(),
    });
    *shared
        .live
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::downgrade(&live);
    let held = local.dial_every_peer().await;
    local.keep_connected();
    local.schedule_shutdown(start);
    local.workload(&mut rng, held).await;
    local.drain().await;
    local.settle(start).await;
    local.close(&live);
    drop(live);
    Ok(())
}

/// The local node and what the world keeps beside it.
struct Local {
    shared: Arc<Shared>,
    p: SenderParams,
    node: Arc<dyn Node>,
    dialer: Arc<Dialer>,
    links: Keeper,
    /// Per peer, what its keeper waits on for a down.
    downs: Vec<Arc<Notify>>,
    /// Every peer's node name, by index.
    nodes: Vec<String>,
}

impl Local {
    /// Starts the node target on the world's network (turmoil's, or real
    /// loopback TCP), its every write tapped, its reports told to the log.
    fn start(
        shared: &Arc<Shared>,
        p: SenderParams,
        subject: &Subject,
        net: LocalNet,
        seed: u64,
    ) -> Result<Self, String> {
        let tap_log = Arc::clone(shared);
        let tap: WriteTap = Arc::new(move |socket, tapped| {
            let frame = match tapped {
                Tapped::FrameStart(frame) => frame,
                Tapped::WindowFull => {
                    tap_log.mark(WorldMark::WriteBlockedOnWindow);
                    return;
                }
            };
            // A keepalive (with a heartbeat) is no frame of the run's: not
            // logged, or the run would never fall quiet.
            if frame.starts_with(&lanesim_target::wire::KEEPALIVE) {
                return;
            }
            let event = match Tag::of_frame(frame) {
                Some(tag) if tag.lane == Lane::Control => {
                    tap_log.settled(Some(tag.seq), (0, 0));
                    Event::FrameWriteBegun {
                        socket,
                        lane: tag.lane,
                        seq: tag.seq,
                        bytes: frame_len(frame).map_or(0, |len| len as u64),
                    }
                }
                Some(tag) => Event::FrameWriteBegun {
                    socket,
                    lane: tag.lane,
                    seq: tag.seq,
                    bytes: frame_len(frame).map_or(0, |len| len as u64),
                },
                None => Event::HandshakeWriteBegun { socket },
            };
            tap_log.record(LOCAL, event);
        });
        let world = lanesim_target::shim::task::Handle::current();
        let (transport, runtime): (Arc<dyn Transport>, _) = match net {
            LocalNet::Sim => (
                Arc::new(TurmoilTcp {
                    mss: p.mss as usize,
                    tap: Some(tap),
                    gate: None,
                    accepts: None,
                    descriptors: None,
                }),
                Runtime::World(world),
            ),
            // The sender owns its runtime, as production runs it.
            LocalNet::Real { ports, buffer } => (
                Arc::new(RealTcp {
                    mss: p.mss as usize,
                    tap: Some(tap),
                    ports,
                    buffer,
                }),
                Runtime::Own {
                    thread_name: "lanesim-real-sender".into(),
                    world,
                },
            ),
        };
        let target = subject
            .node()
            .expect("checked before the run: the target has a node");
        let link_log = Arc::clone(shared);
        let links = Keeper::new(target.capabilities().links, move |node, link| {
            record_noconnection(&link_log, node, link);
        });
        let downs: Vec<Arc<Notify>> = (0..p.peers).map(|_| Arc::new(Notify::new())).collect();
        let observer = Observer(WorldHost {
            shared: Arc::clone(shared),
            downs: downs.clone(),
            links: links.clone(),
        });
        let node: Arc<dyn Node> = Arc::from(
            target
                .start(NodeSetup {
                    name: LOCAL.into(),
                    transport,
                    runtime,
                    connect_timeout: p.connect_timeout,
                    write_timeout: p.write_timeout,
                    // The peers write keepalives only when the scenario
                    // asks for a heartbeat: without one they never write,
                    // and a heartbeat would read their silence as death.
                    heartbeat: p.heartbeat,
                    // Small, so a peer can write a frame of exactly the
                    // maximum (and one byte over) cheaply: the
                    // hostile-frame faults. Nothing else is ever read from
                    // a peer.
                    max_frame: MAX_INBOUND,
                    // Ample: the peers write one small frame at a time,
                    // and never a slow one.
                    frame_budget: FRAME_BUDGET,
                    frame_timeout: None,
                    data_capacity: p.data_capacity as usize,
                    control_capacity: p.control_capacity as usize,
                    reports: NodeReports::new(Arc::new(observer)),
                    cookie: COOKIE.to_vec(),
                    nonces: Arc::new(handshake::nonces(seed, LOCAL)),
                    inbound_caps: None,
                })
                .map_err(|error| format!("the node target could not start: {error}"))?,
        );
        let dialer = Arc::new(Dialer {
            shared: Arc::clone(shared),
            node: Arc::clone(&node),
            seen: Mutex::new(BTreeSet::new()),
            on_demand: Mutex::new(BTreeSet::new()),
        });
        let nodes = (0..p.peers).map(peer_name).collect();
        Ok(Self {
            shared: Arc::clone(shared),
            p,
            node,
            dialer,
            links,
            downs,
            nodes,
        })
    }

    /// Disconnects each peer the driver names, at that instant.
    fn obey_disconnects(&self, mut disconnects: mpsc::UnboundedReceiver<u64>) {
        let (node, log) = (Arc::clone(&self.node), Arc::clone(&self.shared));
        spawn_world(async move {
            while let Some(peer) = disconnects.recv().await {
                let name = peer_name(peer);
                let generation = node
                    .connection(&name)
                    .map(|connection| connection.generation());
                log.record(LOCAL, Event::Disconnected { peer, generation });
                node.disconnect(&name);
            }
        });
    }

    /// Dials every peer once, in order: the connections the workload holds
    /// first.
    async fn dial_every_peer(&self) -> Vec<Option<Conn>> {
        let mut held = Vec::new();
        for peer in 0..self.p.peers {
            self.shared.at(EndStep::SenderDialing { peer });
            held.push(self.dialer.dial(peer, false).await);
        }
        held
    }

    /// With redial on, a keeper per peer.
    fn keep_connected(&self) {
        if let Some(after) = self.p.redial_after {
            for (peer, downs) in self.downs.iter().enumerate() {
                spawn_world(Arc::clone(&self.dialer).keep(peer as u64, after, Arc::clone(downs)));
            }
        }
    }

    /// Shuts the sender down at `shutdown_at`, if the scenario says so.
    fn schedule_shutdown(&self, start: tokio::time::Instant) {
        if let Some(at) = self.p.shutdown_at {
            let (shared, sender) = (Arc::clone(&self.shared), Arc::clone(&self.node));
            spawn_world(async move {
                tokio::time::sleep_until(start + at).await;
                shared.record(LOCAL, Event::ShutdownRequested);
                if shared.any_controls_pending() {
                    shared.mark(WorldMark::ShutdownWithControlsQueued);
                }
                shared.shut_down.store(true, Ordering::Release);
                sender.shutdown();
            });
        }
    }

    /// The workload: data frames, links, and each link's EXIT control
    /// pinned to the generation the link was made over, in a seeded order
    /// with seeded gaps. `held` is the connection last held per peer (a
    /// stale link may be made over it).
    async fn workload(&self, rng: &mut SimRng, mut held: Vec<Option<Conn>>) {
        let (shared, node, p, nodes) = (&self.shared, &self.node, &self.p, &self.nodes);
        let mut data_seq: BTreeMap<u64, u64> = BTreeMap::new();
        let mut control_seq = 0u64;
        let mut next_link = 1u64;
        let mut remaining_data = p.data_frames;
        let mut remaining_links = p.links;
        let mut open_links: Vec<(u64, Conn)> = Vec::new();
        shared.at(EndStep::SenderWorkload);
        while remaining_data + remaining_links + open_links.len() as u64 > 0 {
            let pick = rng.range(
                0,
                remaining_data + remaining_links + open_links.len() as u64 - 1,
            );
            let payload = rng.range(p.frame_bytes.0, p.frame_bytes.1) as usize;
            let closed_before = shared.shut_down.load(Ordering::Acquire);
            if pick < remaining_data {
                remaining_data -= 1;
                let peer = rng.range(0, p.peers - 1);
                let seq = data_seq.entry(peer).or_default();
                *seq += 1;
                let frame = Tag {
                    lane: Lane::Data,
                    generation: 0,
                    seq: *seq,
                    link: None,
                }
                .shared_frame(payload);
                let seq = *seq;
                shared.ordered(|| {
                    let outcome: DataOutcome = node.enqueue(&nodes[peer as usize], frame).into();
                    if outcome == DataOutcome::Queued {
                        shared.beside.accepted(peer, Lane::Data, seq);
                    }
                    shared.record(LOCAL, Event::DataEnqueued { peer, seq, outcome });
                });
            } else if pick < remaining_data + remaining_links {
                remaining_links -= 1;
                let peer = rng.range(0, p.peers - 1);
                let stale = rng.chance(STALE_LINK);
                let current = node.connection(&nodes[peer as usize]);
                if current.is_none() && p.redial_after.is_some() {
                    self.dialer.dial_on_demand(peer);
                }
                let over = if stale {
                    held[peer as usize].clone()
                } else {
                    current.clone()
                };
                if current.is_some() {
                    held[peer as usize].clone_from(&current);
                }
                if let Some(connection) = over {
                    let link = next_link;
                    next_link += 1;
                    if connection.is_down() {
                        shared.mark(WorldMark::LinkOverDownGeneration);
                    }
                    shared.record(
                        LOCAL,
                        Event::Linked {
                            peer,
                            generation: connection.generation(),
                            link,
                        },
                    );
                    if self
                        .links
                        .link(&*self.node, &connection, link, link)
                        .is_some()
                    {
                        open_links.push((link, connection));
                    }
                }
            } else {
                let index = rng.range(0, open_links.len() as u64 - 1) as usize;
                let (link, connection) = open_links.swap_remove(index);
                control_seq += 1;
                let (peer, generation) = (peer_index(connection.node()), connection.generation());
                let tag = Tag {
                    lane: Lane::Control,
                    generation,
                    seq: control_seq,
                    link: Some(link),
                };
                let frame = tag.shared_frame(payload);
                shared.ordered(|| {
                    let outcome: ControlOutcome = node.enqueue_control(&connection, frame).into();
                    if outcome == ControlOutcome::Queued {
                        shared.beside.accepted(peer, Lane::Control, control_seq);
                        shared.control_pending(peer, generation, 1);
                        if !connection.is_down() {
                            shared
                                .unsettled
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .insert(control_seq, (peer, generation));
                        }
                    }
                    shared.record(
                        LOCAL,
                        Event::ControlEnqueued {
                            peer,
                            generation,
                            seq: control_seq,
                            link: Some(link),
                            outcome,
                            down_at_return: connection.is_down(),
                        },
                    );
                });
            }
            if closed_before {
                shared.mark(WorldMark::EnqueueAfterShutdown);
            }
            let gap = Duration::from_micros(
                rng.range(p.gap.0.as_micros() as u64, p.gap.1.as_micros() as u64),
            );
            if !gap.is_zero() {
                tokio::time::sleep(gap).await;
            }
        }
        shared.record(LOCAL, Event::WorkloadDone);
        shared.workload_done.store(true, Ordering::Release);
    }

    /// Waits until the node's counters account for every frame it queued,
    /// or, for a node that keeps no counters, until every control it
    /// accepted is seen settled from outside: begun on a socket, or its
    /// pinned generation down (what a drain held up by a long deadline of
    /// its own needs: beamr's is a fixed 5 s), or the sender was shut down,
    /// or [`PATIENCE`] has passed (a control it still holds then is one it
    /// lost, for DC-1 to say once the log has gone quiet; waiting out the
    /// budget instead turned a silent overflow into a liveness verdict).
    async fn drain(&self) {
        let shared = &self.shared;
        let patience = tokio::time::Instant::now() + shared.clock.in_world(PATIENCE);
        for looks in 1.. {
            shared.at(EndStep::SenderDrain { looks });
            let Some(s) = self.node.stats() else {
                let settled = shared
                    .unsettled
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .is_empty();
                if settled
                    || shared.shut_down.load(Ordering::Acquire)
                    || tokio::time::Instant::now() >= patience
                {
                    break;
                }
                let _ =
                    tokio::time::timeout(Duration::from_secs(1), shared.drained.notified()).await;
                continue;
            };
            let controls_done = s.control_queued
                == s.control_written + s.control_skipped + s.control_failed + s.control_discarded;
            let data_done = s.data_queued
                == s.data_written + s.data_no_connection + s.data_failed + s.data_discarded;
            if controls_done && data_done {
                break;
            }
            // Counters move only when the drain disposes of a frame, which
            // notifies; the timeout is a backstop, not the pace. But the
            // drain calls a skipped control's or an unroutable frame's hook
            // before it counts it: on one thread (simulation) this look
            // comes after the count anyway; on another (real mode) it can
            // come between the two, and the run then waited out the whole
            // backstop, 1 s of wall time (10 s in the log at scale 0.1) in
            // one real run of `sender_wedged_peer` seed 12 in 10. So real
            // mode looks again soon.
            let backstop = match shared.clock {
                Clock::Sim => Duration::from_secs(1),
                Clock::Real(_) => Duration::from_millis(10),
            };
            let _ = tokio::time::timeout(backstop, shared.drained.notified()).await;
        }
    }

    /// Lets written frames reach peers that are still reading, and redials
    /// finish: waits for the fault timeline's last step, then for the log
    /// to stay quiet for longer than the slowest peer's read interval and a
    /// round trip on the slowest link.
    async fn settle(&self, start: tokio::time::Instant) {
        let (shared, p) = (&self.shared, &self.p);
        let longest = |kind| {
            p.faults
                .iter()
                .filter(|f| f.kind == kind)
                .map(|f| f.lasting)
                .max()
                .unwrap_or_default()
        };
        let uncounted = if self.node.stats().is_none() {
            p.write_timeout * 2
        } else {
            Duration::ZERO
        };
        let quiet = Duration::from_millis(200)
            + longest(FaultKind::Slow) * 2
            + longest(FaultKind::Latency) * 2
            + uncounted;
        // Every scheduled fault happens before the run may end: a run that
        // quit before its bounce or its repair never exercised them.
        let last_step = timeline(&p.faults).last().map(|step| step.0);
        if let Some(last_step) = last_step {
            shared.at(EndStep::SenderLastFault {
                at: shared.clock.in_log(last_step),
            });
            tokio::time::sleep_until(start + last_step).await;
        }
        // Quiet since the last record, not since the last look: sleeping a
        // whole `quiet` after every look waited up to twice as long (idle
        // simulation steps, a fifth of a short run) for the same silence.
        for looks in 1.. {
            shared.at(EndStep::SenderQuiet { quiet, looks });
            let (before, last) = (shared.log.len(), shared.log.last_at());
            tokio::time::sleep(shared.clock.until_quiet(last, quiet)).await;
            if shared.log.len() == before {
                break;
            }
        }
    }

    /// Logs each peer's table slot and the node's counters, the run's last
    /// records.
    fn close(&self, live: &Live) {
        let shared = &self.shared;
        shared.at(EndStep::SenderClosing);
        for (peer, node) in self.nodes.iter().enumerate() {
            shared.record(
                LOCAL,
                Event::TableAtEnd {
                    peer: peer as u64,
                    generation: live.node.slot(node).map(|(generation, _)| generation),
                },
            );
        }
        if let Some(stats) = self.node.stats() {
            shared.record(LOCAL, Event::SenderStats(stats.into()));
        }
        if matches!(shared.clock, Clock::Real(_)) {
            // Before the sender drops (its drain's drop marks connections
            // down on another thread): in simulation the run ends here too.
            shared.frozen.store(true, Ordering::Release);
        }
    }
}
