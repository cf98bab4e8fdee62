//! One production node in the mesh: its start with the world's transport
//! and reports, a keeper per peer that keeps it connected, the workload's
//! links and data frames, and the observer that turns its reports into
//! events.

use crate::explore::spawn_world;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use lanesim_target::net::Transport;
use lanesim_target::node::{
    Conn, DialFailure, Down, DownReason, Generation, Link, Node, NodeEvents, NodeReports,
    NodeSetup, Runtime, Up,
};
use tokio::sync::mpsc;

use super::{
    control, data_frame, dialer_of, link_id, link_side, node_index, node_name, parse_control,
    NodeHandle, Order, Shared, CONTROL_CAPACITY, DATA_CAPACITY, FRAME_BUDGET, MAX_FRAME, MSS, PORT,
};
use crate::coverage::WorldMark;
use crate::event::{Event, Intruder, LinkMsg, LinkSide, MisdialOutcome};
use crate::rng::SimRng;
use crate::world::descriptors::{Descriptors, Watch};
use crate::world::handshake::{self, COOKIE};
use crate::world::held::Crossing;
use crate::world::links::Keeper;
use crate::world::net::{AcceptGate, ReadGate, TurmoilTcp};

/// Turns one incarnation's reports into events: its generations coming
/// and going (a down wakes the keeper and breaks the links over it, the
/// maker's then the learner's), and the frames it read (a LINK is learned
/// over the generation it arrived on, an EXIT unlearns it).
struct MeshObserver {
    shared: Arc<Shared>,
    index: u64,
    incarnation: u64,
    node: Arc<OnceLock<std::sync::Weak<dyn Node>>>,
    /// One per other node: a keeper waits on it for a down.
    downs: Arc<Vec<tokio::sync::Notify>>,
    /// The links it made.
    made: Keeper,
    /// The links its peers made, learned from their LINKs.
    learned: Keeper,
    /// The node's read gate: what it holds of unfinished frames.
    reads: Arc<ReadGate>,
    /// A stretch with no data that holds a stretch with no frame at all
    /// longer than the frame deadline (`quiet_past_frame_deadline`): half a
    /// tick holds two of lanesim's keepalives (one every quarter tick), a
    /// quarter tick less 100 ms of jitter apart; None when the deadline is
    /// not shorter than that.
    quiet: Option<Duration>,
    /// Per other node: the generation a frame last came on, and when.
    last_frame: std::sync::Mutex<Vec<Option<(u64, tokio::time::Instant)>>>,
}

impl MeshObserver {
    /// A frame came from `peer` on `generation`: marks a generation still
    /// up after a quiet stretch past the frame deadline.
    fn heard(&self, peer: u64, generation: u64) {
        let Some(quiet) = self.quiet else { return };
        let now = tokio::time::Instant::now();
        let mut last = self
            .last_frame
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(slot) = last.get_mut(peer as usize) {
            if matches!(*slot, Some((g, at)) if g == generation && now - at > quiet) {
                self.shared.probe.world(WorldMark::QuietPastFrameDeadline);
            }
            *slot = Some((generation, now));
        }
    }

    fn current(&self) -> bool {
        self.shared.current(self.index, self.incarnation)
    }

    fn record(&self, event: Event) {
        self.shared.record(&node_name(self.index), event);
    }
}

impl NodeEvents for MeshObserver {
    fn up(&self, up: Up<'_>) {
        let (Some(peer), Some(socket)) =
            (node_index(up.node), dialer_of(up.local_addr, up.peer_addr))
        else {
            return;
        };
        if self.current() {
            self.record(Event::MeshUp {
                node: self.index,
                peer,
                generation: up.generation,
                origin: up.origin.into(),
                socket,
            });
        }
    }

    fn down(&self, down: Down<'_>) {
        // Any stream, a spender's too: refused with room is M9's.
        if down.reason == DownReason::OverBudget && self.current() {
            self.record(Event::MeshBudgetDown {
                node: self.index,
                held: self.reads.held.total(),
            });
        }
        let Some(peer) = node_index(down.node) else {
            if self.current() {
                self.record(Event::MeshIntruderDown {
                    node: self.index,
                    intruder: Intruder::named(down.node),
                    reason: down.reason,
                });
            }
            return;
        };
        if self.current() {
            self.shared.probe.world(WorldMark::GenerationDown);
            if down.reason == DownReason::HeartbeatTimeout {
                self.shared.probe.world(WorldMark::HeartbeatDown);
            }
            self.record(Event::MeshDown {
                node: self.index,
                peer,
                generation: down.generation,
                reason: down.reason,
            });
        }
        if let Some(wake) = self.downs.get(peer as usize) {
            wake.notify_one();
        }
        self.made.down(down.node, down.generation);
        self.learned.down(down.node, down.generation);
    }

    fn frame(&self, from: Generation<'_>, control: &[u8], payload: &[u8]) {
        let Some(peer) = node_index(from.node) else {
            return;
        };
        if !self.current() {
            return;
        }
        let index = self.index;
        self.heard(peer, from.generation);
        let data = control
            .split_first()
            .filter(|(&kind, _)| kind == b'D')
            .and_then(|(_, seq)| <[u8; 8]>::try_from(seq).ok());
        if let Some(seq) = data {
            self.record(Event::MeshDataArrived {
                node: index,
                peer,
                generation: from.generation,
                seq: u64::from_be_bytes(seq),
            });
            return;
        }
        let Some((msg, link)) = parse_control(control) else {
            // No node writes it: a frame invented or garbled on the way
            // (M6 counts it).
            self.record(Event::MeshStrayFrame {
                node: index,
                peer,
                generation: from.generation,
                control_len: control.len() as u64,
                payload_len: payload.len() as u64,
            });
            return;
        };
        self.record(Event::MeshArrived {
            node: index,
            peer,
            generation: from.generation,
            link,
            msg,
        });
        let Some(node) = self.node.get().and_then(std::sync::Weak::upgrade) else {
            return;
        };
        let learned_link = Link {
            generation: from.generation,
            local: link,
            remote: peer,
        };
        match msg {
            LinkMsg::Link => match node.connection(from.node) {
                Some(connection) if connection.generation() == from.generation => {
                    self.learned.link(&*node, &connection, link, peer);
                }
                // The generation it arrived on is gone already (its
                // down was in the same instant): broken at once.
                _ => self.record(Event::MeshNoConnection {
                    node: index,
                    peer,
                    generation: from.generation,
                    link,
                    side: LinkSide::Learner,
                }),
            },
            LinkMsg::Exit => {
                self.learned.unlink(&*node, from.node, &learned_link);
            }
        }
    }

    fn noconnection(&self, node: &str, link: Link) {
        let side = link_side(self.index, &link);
        broke(&self.shared, self.index, self.incarnation, node, link, side);
    }
}

/// `noconnection` for `link` over `node`, delivered on `side` of incarnation
/// `incarnation` of node `index` (after the down's record: the log shows a
/// down before its noconnections).
fn broke(shared: &Shared, index: u64, incarnation: u64, node: &str, link: Link, side: LinkSide) {
    if !shared.current(index, incarnation) {
        return;
    }
    shared.record(
        &node_name(index),
        Event::MeshNoConnection {
            node: index,
            peer: node_index(node).unwrap_or(u64::MAX),
            generation: link.generation,
            link: link.local,
            side,
        },
    );
}

/// The share of links made over a kept handle.
const STALE_HANDLE_SHARE: f64 = 0.25;

/// One incarnation of a production node.
pub(super) async fn main(shared: Arc<Shared>, index: u64, incarnation: u64) -> turmoil::Result {
    let p = shared.params.clone();
    shared.incarnation[index as usize].store(incarnation, Ordering::Release);
    shared.alive[index as usize].store(true, Ordering::Release);
    let host = node_name(index);
    shared.record(
        &host,
        Event::NodeStarted {
            node: index,
            incarnation,
        },
    );
    let start = tokio::time::Instant::now();
    let mut rng = SimRng::new(shared.seed).fork(&format!("{host}.{incarnation}"));

    let downs: Arc<Vec<tokio::sync::Notify>> =
        Arc::new((0..p.nodes).map(|_| tokio::sync::Notify::new()).collect());
    let target = shared
        .subject
        .node()
        .expect("checked before the run: the target has a node");
    let broken = |side: LinkSide| {
        let shared = Arc::clone(&shared);
        move |node: &str, link: Link| broke(&shared, index, incarnation, node, link, side)
    };
    // Both ends' links share a target's table: its `noconnection`s tell
    // the ends apart by the link's id (`link_side`).
    let keeps = target.capabilities().links;
    let made = Keeper::new(keeps, broken(LinkSide::Maker));
    let learned = Keeper::new(keeps, broken(LinkSide::Learner));
    // The frame report needs the node, which exists only after it starts.
    let cell: Arc<OnceLock<std::sync::Weak<dyn Node>>> = Arc::new(OnceLock::new());
    let gate = Arc::new(ReadGate::default());
    {
        // M9: what the node holds of unfinished frames, against its budget.
        let shared = Arc::clone(&shared);
        gate.held.watch(
            FRAME_BUDGET,
            Box::new(move |crossing| {
                let (over, bytes) = match crossing {
                    Crossing::Half => {
                        shared.probe.world(WorldMark::HeldPastHalfBudget);
                        return;
                    }
                    Crossing::Over(bytes) => (true, bytes),
                    Crossing::Under(bytes) => (false, bytes),
                };
                if shared.current(index, incarnation) {
                    shared.record(
                        &node_name(index),
                        Event::MeshHeld {
                            node: index,
                            over,
                            bytes,
                        },
                    );
                }
            }),
        );
    }
    let observer = MeshObserver {
        shared: Arc::clone(&shared),
        index,
        incarnation,
        node: Arc::clone(&cell),
        downs: Arc::clone(&downs),
        made: made.clone(),
        learned,
        reads: Arc::clone(&gate),
        quiet: (p.frame_timeout + Duration::from_millis(100) < p.heartbeat / 4)
            .then_some(p.heartbeat / 2),
        last_frame: std::sync::Mutex::new(vec![None; p.nodes as usize]),
    };
    let accepts = Arc::new(AcceptGate::default());
    // The descriptor table the node is told of: it logs each run of
    // refusals for want of one (M7) and marks a node near its limit.
    let descriptors = p.descriptors.map(|limit| {
        Descriptors::new(
            limit,
            Some(Box::new(DescriptorWatch {
                shared: Arc::clone(&shared),
                index,
                incarnation,
                limit,
            })),
        )
    });
    let transport = Arc::new(TurmoilTcp {
        mss: MSS,
        tap: None,
        gate: Some(Arc::clone(&gate)),
        accepts: Some(Arc::clone(&accepts)),
        descriptors,
    });
    let node: Arc<dyn Node> = Arc::from(
        target
            .start(NodeSetup {
                name: host.clone(),
                transport: transport.clone(),
                runtime: Runtime::World(lanesim_target::shim::task::Handle::current()),
                connect_timeout: p.connect_timeout,
                write_timeout: p.heartbeat * 2,
                heartbeat: Some(p.heartbeat),
                max_frame: MAX_FRAME,
                frame_budget: FRAME_BUDGET,
                // Past the heartbeat: a stream gone silent is the
                // heartbeat's (M5), a frame trickling in is this deadline's.
                frame_timeout: Some(p.frame_timeout),
                data_capacity: DATA_CAPACITY,
                control_capacity: CONTROL_CAPACITY,
                reports: NodeReports::new(Arc::new(observer)),
                cookie: COOKIE.to_vec(),
                nonces: Arc::new(handshake::nonces(
                    shared.seed,
                    &format!("{host}.{incarnation}"),
                )),
                inbound_caps: p.inbound_caps,
            })
            .map_err(|error| format!("the node target could not start: {error}"))?,
    );
    let _ = cell.set(Arc::downgrade(&node));

    let listener = transport.bind(&format!("0.0.0.0:{PORT}")).await?;
    node.serve(listener);
    let (orders_tx, mut orders) = mpsc::unbounded_channel();
    shared
        .nodes
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)[index as usize] = Some(NodeHandle {
        node: Arc::downgrade(&node),
        orders: orders_tx,
        reads: gate,
        accepts,
    });

    // A dial, and its failure logged (M1 tells a dial that timed out on a
    // link slower than the connect timeout from one the pair refused).
    let dial = {
        let (node, shared) = (Arc::clone(&node), Arc::clone(&shared));
        move |peer: u64| {
            let (node, shared) = (Arc::clone(&node), Arc::clone(&shared));
            async move {
                let name = node_name(peer);
                match node.dial(&name, &format!("{name}:{PORT}")).await {
                    Ok(conn) => Some(conn),
                    Err(error) => {
                        if shared.current(index, incarnation) {
                            shared.record(
                                &node_name(index),
                                Event::MeshDialFailed {
                                    node: index,
                                    peer,
                                    error: error.into(),
                                },
                            );
                        }
                        None
                    }
                }
            }
        }
    };

    // Keepers: every pair dialed on its schedule; after a down, redialed
    // `redial_after` later until a live generation exists. Both ends of a
    // pair whose connection broke wait the same time, so their redials
    // cross: what the tie-break must settle (a periodic poll would let
    // them drift apart and hide a missing tie-break).
    for peer in (0..p.nodes).filter(|&peer| peer != index) {
        let (shared, dial, live) = (Arc::clone(&shared), dial.clone(), Arc::clone(&node));
        let downs = Arc::clone(&downs);
        let first = p.first_dials[index as usize][peer as usize];
        let simultaneous = first == p.first_dials[peer as usize][index as usize];
        let redial = p.redial_after;
        spawn_world(async move {
            tokio::time::sleep_until(start + first).await;
            if simultaneous && index < peer && incarnation == 0 {
                shared.probe.world(WorldMark::SimultaneousFirstDial);
                shared.record(
                    &node_name(index),
                    Event::MeshDialedTogether { a: index, b: peer },
                );
            }
            let name = node_name(peer);
            let mut redialing = false;
            loop {
                if live.connection(&name).is_none() {
                    if shared.current(index, incarnation) {
                        let first = !redialing && simultaneous && incarnation == 0;
                        shared.dialing(index, peer, first);
                    }
                    let dialed = dial(peer).await.is_some();
                    if redialing {
                        shared.probe.world(if dialed {
                            WorldMark::RedialOk
                        } else {
                            WorldMark::RedialFailed
                        });
                    }
                    if !dialed {
                        tokio::time::sleep(redial).await;
                        redialing = true;
                        continue;
                    }
                }
                downs[peer as usize].notified().await;
                tokio::time::sleep(redial).await;
                redialing = true;
            }
        });
    }

    // The driver's orders.
    {
        let (dial, live, shared) = (dial.clone(), Arc::clone(&node), Arc::clone(&shared));
        spawn_world(async move {
            while let Some(order) = orders.recv().await {
                match order {
                    Order::Kill(peer) => {
                        live.disconnect(&node_name(peer));
                    }
                    Order::CrossDial(peer) => {
                        live.disconnect(&node_name(peer));
                        spawn_world(dial(peer));
                    }
                    Order::Misdial {
                        peer,
                        host,
                        answerer,
                    } => {
                        live.disconnect(&node_name(peer));
                        spawn_world(misdial(
                            Arc::clone(&shared),
                            Arc::clone(&live),
                            (index, incarnation),
                            peer,
                            host,
                            answerer,
                        ));
                    }
                }
            }
        });
    }

    // Data frames at their times over the window, numbered per node and
    // incarnation (the incarnation in the high bits), to random peers.
    {
        let mut times: Vec<(Duration, u64)> = (0..p.data)
            .map(|_| {
                let at = Duration::from_micros(rng.range(0, p.workload.as_micros() as u64));
                (at, (index + rng.range(1, p.nodes - 1)) % p.nodes)
            })
            .collect();
        times.sort();
        let (shared, sender) = (Arc::clone(&shared), Arc::clone(&node));
        let elapsed = turmoil::sim_elapsed().unwrap_or_default();
        spawn_world(async move {
            for (counter, (at, peer)) in times.into_iter().enumerate() {
                if at < elapsed {
                    continue;
                }
                tokio::time::sleep_until(start + (at - elapsed)).await;
                let seq = (incarnation << 32) | counter as u64;
                let outcome = sender.enqueue(&node_name(peer), data_frame(seq));
                shared.record(
                    &node_name(index),
                    Event::MeshDataSent {
                        node: index,
                        peer,
                        seq,
                        outcome: outcome.into(),
                    },
                );
            }
        });
    }

    // The workload: links made at their times (those of the window that
    // are still ahead, for a restarted incarnation), each ended `hold`
    // later by an EXIT pinned to its generation.
    let mut times: Vec<(Duration, u64)> = (0..p.links)
        .map(|_| {
            let at = Duration::from_micros(rng.range(0, p.workload.as_micros() as u64));
            let peer = (index + rng.range(1, p.nodes - 1)) % p.nodes;
            (at, peer)
        })
        .collect();
    times.sort();
    let elapsed = turmoil::sim_elapsed().unwrap_or_default();
    // A share of links go over the handle the previous link to the same
    // peer looked up, as a process that keeps its connection handle would:
    // if that generation went down meanwhile, the link is broken at once
    // (`link_made_over_down`). Its own stream: the other draws stay as
    // they were.
    let mut reuse = rng.fork("reuse");
    let mut handles: Vec<Option<Conn>> = vec![None; p.nodes as usize];
    for (counter, (at, peer)) in times.into_iter().enumerate() {
        if at < elapsed {
            continue;
        }
        tokio::time::sleep_until(start + (at - elapsed)).await;
        let current = match node.connection(&node_name(peer)) {
            Some(connection) => connection,
            None => match dial(peer).await {
                Some(connection) => connection,
                None => continue,
            },
        };
        let kept = handles[peer as usize].replace(Arc::clone(&current));
        let connection = match kept.filter(|_| reuse.chance(STALE_HANDLE_SHARE)) {
            Some(kept) => kept,
            None => current,
        };
        let link = link_id(index, incarnation, counter as u64);
        make_link(&shared, index, &made, &*node, &connection, peer, link);
        let hold = Duration::from_micros(
            rng.range(p.hold.0.as_micros() as u64, p.hold.1.as_micros() as u64),
        );
        let (shared, sender) = (Arc::clone(&shared), Arc::clone(&node));
        spawn_world(async move {
            tokio::time::sleep(hold).await;
            offer(
                &shared,
                index,
                &*sender,
                &connection,
                peer,
                link,
                LinkMsg::Exit,
            );
        });
    }
    std::future::pending::<()>().await;
    Ok(())
}

/// Records a link over `connection` and sends its LINK.
fn make_link(
    shared: &Shared,
    index: u64,
    made: &Keeper,
    sender: &dyn Node,
    connection: &Conn,
    peer: u64,
    link: u64,
) {
    shared.record(
        &node_name(index),
        Event::MeshLinked {
            node: index,
            peer,
            generation: connection.generation(),
            link,
        },
    );
    if made.link(sender, connection, link, peer).is_none() {
        shared.probe.world(WorldMark::LinkOverDownGeneration);
        return;
    }
    offer(shared, index, sender, connection, peer, link, LinkMsg::Link);
}

/// Offers a link's control, pinned to `connection`.
fn offer(
    shared: &Shared,
    index: u64,
    sender: &dyn Node,
    connection: &Conn,
    peer: u64,
    link: u64,
    msg: LinkMsg,
) {
    let outcome = sender.enqueue_control(connection, control(msg, link));
    shared.record(
        &node_name(index),
        Event::MeshControl {
            node: index,
            peer,
            generation: connection.generation(),
            link,
            msg,
            outcome: outcome.into(),
        },
    );
}

/// A misdial: `node` (an index and incarnation) dials `peer`'s name at
/// `host`, where `answerer` answers (`None`: the stranger), and logs how
/// the dial ended (M8: never with a connection to `host`). Not a keeper's
/// dial: it is not logged as one (`MeshDialFailed`, M1's).
async fn misdial(
    shared: Arc<Shared>,
    live: Arc<dyn Node>,
    (index, incarnation): (u64, u64),
    peer: u64,
    host: String,
    answerer: Option<u64>,
) {
    let at = turmoil::lookup(host.as_str());
    let outcome = match live.dial(&node_name(peer), &format!("{host}:{PORT}")).await {
        Ok(conn) => {
            let remote: Option<std::net::SocketAddr> = conn.peer_addr().parse().ok();
            if remote.is_some_and(|remote| remote.ip() == at) {
                MisdialOutcome::Registered
            } else {
                MisdialOutcome::Elsewhere
            }
        }
        Err(error) => {
            // Refused for what answered: the node's own name, or the
            // stranger's proof under the name dialed (a stranger that
            // answered under another name would test the name check only).
            let reached = match answerer {
                Some(_) => Some(WorldMark::MisdialRefusedByNode),
                None => (shared
                    .challenged
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .get(&index)
                    == Some(&peer))
                .then_some(WorldMark::MisdialRefusedByStranger),
            };
            if let (DialFailure::Unauthenticated, Some(mark)) = (error, reached) {
                shared.probe.world(mark);
            }
            MisdialOutcome::Refused
        }
    };
    if shared.current(index, incarnation) {
        shared.record(
            &node_name(index),
            Event::MeshMisdialed {
                node: index,
                named: peer,
                answerer,
                outcome,
            },
        );
    }
}

/// What a node's descriptor table tells the mesh world.
struct DescriptorWatch {
    shared: Arc<Shared>,
    index: u64,
    incarnation: u64,
    limit: u64,
}

impl Watch for DescriptorWatch {
    fn ran_out(&self, open: u64) {
        if self.shared.current(self.index, self.incarnation) {
            self.shared.record(
                &node_name(self.index),
                Event::MeshDescriptorsOut {
                    node: self.index,
                    open,
                    limit: self.limit,
                },
            );
        }
    }

    fn near_limit(&self, _open: u64) {
        self.shared.probe.world(WorldMark::DescriptorsNearLimit);
    }
}
