//! Names belong to their owners: the claim check an inbound stream passes
//! before it may displace (or stand by for) a live generation of the node
//! it names.
//!
//! Model: a stream's hello names its dialer, and any holder of the cookie
//! can name any node. So an accepted stream that meets a live incumbent,
//! and would win the tie-break against it or stand by for it, is checked
//! first (the frames are `lanesim_target::claim`'s):
//!
//! 1. **The address this node dials for the name.** If this node has dialed
//!    the node before, it knows the host its last dial reached. A stream
//!    from that host, meeting an *accepted* incumbent from another host, is
//!    the owner's, and the incumbent a squatter: it goes down
//!    `NameReclaimed` and the stream takes the slot
//!    (`a_keepalive_squatter_gives_the_name_back_to_its_owner`). A squatter
//!    that keeps its heartbeat alive no longer holds a name against the
//!    node at the name's address.
//! 2. **The incumbent's word.** Otherwise the incumbent's node is asked,
//!    over the live connection, whether it dialed the stream whose hello
//!    carried this nonce. It keeps the nonces of its last
//!    [`DIALS_PER_NODE`] dials of each node, so the real node knows.
//!    Denied: the stream is refused at once, without standing by (an
//!    impostor neither displaces the live generation nor waits for its
//!    next blip: `an_insider_claiming_a_live_name_is_denied_and_the_generation_stays`).
//!    One query at a time per incumbent connection: a claim that arrives
//!    while another is being asked about waits for that ask to end and is
//!    then checked in its turn, never waved through
//!    (`concurrent_insider_claims_never_displace_a_live_generation`).
//!    Confirmed (the simultaneous connect, or a redial): the table's rules.
//! 3. **The incumbent goes down** before it answers: the table's rules,
//!    against the slot as it is then. If another live generation took the
//!    slot meanwhile, the stream is checked again against that one
//!    (`register_checked`, three rounds at most), so a claim never lands on
//!    a generation it was not checked against.
//! 4. **No answer** within the bound (the connect timeout, at most a
//!    quarter tick) while the incumbent stays live: the stream does not
//!    displace it; it stands by, and takes the slot only if the slot is
//!    empty when the incumbent goes down (a dead or stale incumbent cannot
//!    answer, and its real owner must get back in).
//!
//! While it is checked, the stream is written a keepalive: its dialer
//! registered its end on writing the proof, and its silence clock runs.
//! A stream that would be refused whatever the incumbent says (dialed the
//! losing way against this node's own dial) is not checked: so two nodes
//! dialing each other never wait on each other's answer.
//!
//! What it does not cover, and docs/protocol.md says so: a cookie holder
//! claiming a name whose live incumbent cannot answer in time (wedged), and
//! a squatter on a name this node has never dialed, or on the same host as
//! the name's address.

use std::collections::{BTreeMap, VecDeque};
use std::net::{IpAddr, SocketAddr};

use lanesim_target::claim::{self, ClaimFrame};
use lanesim_target::handshake::Nonce;
use lanesim_target::node::DownReason;

use super::{ConnectionManager, ManagerShared, Origin};
use crate::distribution::connection::DistConnection;
use crate::distribution::node::NodeName;
use crate::planted::PlantedBug;
use crate::shim::probe::{mark, Mark};
use crate::shim::sync::{Arc, Counter, Mutex, Notify};
use crate::shim::time::{timeout, Duration};

/// Hello nonces a node remembers per node it dialed, most recent last:
/// its dial in flight and the few before it, which a peer may still be
/// asking about.
pub const DIALS_PER_NODE: usize = 8;

/// Nodes whose recent dials (nonces, and the host a dial reached) a node
/// remembers; past it, the least recently dialed is forgotten.
pub const DIALED_NODES: usize = 4096;

/// What the check decided for a stream claiming a node's name.
pub(super) enum Claim {
    /// The table's rules decide, against the slot as the check saw it:
    /// the generation of the live incumbent checked (`None`: there was
    /// none). Registration re-checks if another live generation holds the
    /// slot by then.
    TableDecides(Option<u64>),
    /// The incumbent is a squatter (rule 1): it goes down, the stream
    /// takes the slot.
    Reclaimed(Arc<DistConnection>),
    /// The incumbent's node denied dialing the stream: refused.
    Denied,
    /// The incumbent is being asked about another claim: wait for that ask
    /// to end ([`Pending::ended`]), then check again.
    Busy(Pending),
    /// The incumbent stayed live and silent past the bound: the stream may
    /// not displace it, only stand by for it and take the slot if it is
    /// empty when the incumbent goes down. `simultaneous`: the incumbent
    /// was dialed from this end (the stream would have won the tie-break).
    StandBy {
        incumbent: Arc<DistConnection>,
        simultaneous: bool,
    },
}

/// A query this node awaits, on one incumbent connection.
struct Asked {
    nonce: Nonce,
    answer: Mutex<Option<bool>>,
    answered: Notify,
    /// Told when the ask ends, however it ends (claims waiting their turn).
    finished: Notify,
}

/// An ask under way on an incumbent connection, which another claim waits
/// out before it is checked in turn.
pub(super) struct Pending {
    asked: Arc<Asked>,
    bound: Duration,
}

impl Pending {
    /// Resolves when the ask ends, or after the ask's bound (it ended just
    /// before this waiter looked).
    pub(super) async fn ended(self) {
        let _ = timeout(self.bound, self.asked.finished.notified()).await;
    }
}

/// A node this node dialed: its recent hello nonces, the host its last
/// dial reached, and when it was last dialed (for forgetting).
#[derive(Default)]
struct Dialed {
    nonces: VecDeque<Nonce>,
    host: Option<IpAddr>,
    last: u64,
}

/// The nodes this node dialed, least recently dialed forgotten first.
#[derive(Default)]
struct DialBook {
    by: BTreeMap<NodeName, Dialed>,
    clock: u64,
}

impl DialBook {
    fn entry(&mut self, node: &NodeName) -> &mut Dialed {
        self.clock += 1;
        if !self.by.contains_key(node) && self.by.len() >= DIALED_NODES {
            let oldest = self
                .by
                .iter()
                .min_by_key(|(_, dialed)| dialed.last)
                .map(|(name, _)| name.clone());
            if let Some(oldest) = oldest {
                self.by.remove(&oldest);
            }
        }
        let clock = self.clock;
        let dialed = self.by.entry(node.clone()).or_default();
        dialed.last = clock;
        dialed
    }
}

/// The manager's claim state: the nodes it dialed, and the queries it
/// awaits (at most one per incumbent connection).
#[derive(Default)]
pub(super) struct Claims {
    dials: Mutex<DialBook>,
    asked: Mutex<BTreeMap<(NodeName, u64), Arc<Asked>>>,
}

/// The host of a socket address as a transport prints it; `None` for a
/// name that is not `ip:port`.
fn host_of(addr: &str) -> Option<IpAddr> {
    addr.parse::<SocketAddr>().ok().map(|addr| addr.ip())
}

impl Claims {
    /// This node is dialing `node` with a hello carrying `nonce`.
    pub(super) fn dialing(&self, node: &NodeName, nonce: Nonce) {
        let mut book = self.dials.lock();
        let nonces = &mut book.entry(node).nonces;
        if nonces.len() == DIALS_PER_NODE {
            nonces.pop_front();
        }
        nonces.push_back(nonce);
    }

    /// This node's dial of `node` reached `peer`: the host it dials for
    /// the name, from now on (a later dial elsewhere replaces it).
    pub(super) fn dialed(&self, node: &NodeName, peer: &str) {
        if let Some(host) = host_of(peer) {
            self.dials.lock().entry(node).host = Some(host);
        }
    }

    /// Whether this node dialed `node` with a hello carrying `nonce`.
    fn mine(&self, node: &NodeName, nonce: &Nonce) -> bool {
        self.dials
            .lock()
            .by
            .get(node)
            .is_some_and(|dialed| dialed.nonces.contains(nonce))
    }

    /// Rule 1: a stream from `newcomer` is the owner's and `incumbent` a
    /// squatter.
    fn squatter(&self, node: &NodeName, newcomer: &str, incumbent: &str) -> bool {
        let Some(owner) = self.dials.lock().by.get(node).and_then(|d| d.host) else {
            return false;
        };
        host_of(newcomer) == Some(owner) && host_of(incumbent) != Some(owner)
    }

    /// An answer arrived on `connection`: it counts only for the query
    /// asked on that connection, about that nonce.
    fn answered(&self, connection: &DistConnection, nonce: &Nonce, mine: bool) {
        let key = (connection.node().clone(), connection.generation());
        let asked = self.asked.lock().get(&key).cloned();
        if let Some(asked) = asked.filter(|asked| &asked.nonce == nonce) {
            *asked.answer.lock() = Some(mine);
            asked.answered.notify_one();
        }
    }
}

/// Takes the awaited query out of the table however the wait ends, and
/// tells the claims waiting their turn.
struct Awaiting<'a> {
    claims: &'a Claims,
    key: (NodeName, u64),
    asked: Arc<Asked>,
}

impl Drop for Awaiting<'_> {
    fn drop(&mut self) {
        self.claims.asked.lock().remove(&self.key);
        self.asked.finished.notify_waiters();
    }
}

/// A node-protocol frame read on `connection`: a query is answered (on a
/// task, one at a time per connection: `answering` counts it; the asker
/// asks one at a time per connection too), an answer handed to the query
/// awaiting it; anything else is dropped.
pub(super) fn on_node_frame(
    shared: &ManagerShared,
    connection: &Arc<DistConnection>,
    payload: &[u8],
    answering: &Arc<Counter>,
) {
    match claim::parse(payload) {
        Some(ClaimFrame::Query(nonce)) => {
            // A peer asking faster than this end writes is not answered
            // twice at once: its later queries go unanswered.
            if !answering.add_within(1, 1) {
                return;
            }
            let mine = shared.claims.mine(connection.node(), &nonce);
            let connection = Arc::clone(connection);
            let answering = Arc::clone(answering);
            shared.runtime.spawn(async move {
                let _ = connection.write_raw(&claim::answer(&nonce, mine)).await;
                answering.sub(1);
            });
        }
        Some(ClaimFrame::Answer(nonce, mine)) => shared.claims.answered(connection, &nonce, mine),
        None => {
            tracing::debug!(node = %connection.node(), "an unknown node-protocol frame dropped")
        }
    }
}

/// How the ask ended.
enum Reply {
    Answer(bool),
    /// The incumbent went down first.
    Down,
    /// The bound passed with the incumbent live and silent.
    Silent,
    /// Another claim is being asked about on the same connection.
    Busy(Pending),
}

impl ConnectionManager {
    /// The claim check of the module doc, for an accepted stream from
    /// `peer` that proved `node` with a hello carrying `nonce`.
    pub(super) async fn check_claim(&self, node: &NodeName, nonce: Nonce, peer: &str) -> Claim {
        let incumbent = {
            let table = self.shared.table.lock();
            match table.slots.get(node).and_then(|slot| slot.current.as_ref()) {
                Some((current, origin)) if !current.is_down() => (Arc::clone(current), *origin),
                _ => return Claim::TableDecides(None),
            }
        };
        let (incumbent, origin) = incumbent;
        let checked = Claim::TableDecides(Some(incumbent.generation()));
        if self.shared.planted.has(PlantedBug::ClaimsTakenAtTheirWord) {
            return checked;
        }
        // Refused whatever the answer: the stream was dialed the losing
        // way against this node's own dial.
        let winner = if self.local < *node {
            Origin::Dialed
        } else {
            Origin::Accepted
        };
        if origin == Origin::Dialed && winner == Origin::Dialed {
            return checked;
        }
        let claims = &self.shared.claims;
        if origin == Origin::Accepted && claims.squatter(node, peer, incumbent.peer()) {
            mark(Mark::ClaimReclaimed);
            return Claim::Reclaimed(incumbent);
        }
        match self.ask(&incumbent, nonce).await {
            Reply::Answer(false) => {
                mark(Mark::ClaimDenied);
                Claim::Denied
            }
            Reply::Busy(pending) => Claim::Busy(pending),
            Reply::Answer(true) => {
                mark(Mark::ClaimConfirmed);
                checked
            }
            // A manual disconnect of the incumbent while it was asked is not
            // undone by the claim (as a stand-by does not undo one:
            // `table::stand_by`), so the claim is refused. Before, the
            // claim then took the emptied slot: `mesh_standby_disconnect`
            // failed M8 in 16 of 16 seeds
            // (`m8_detects_a_claim_undoing_a_manual_disconnect`).
            Reply::Down if incumbent.down_reason() == Some(DownReason::ManualDisconnect) => {
                mark(Mark::ClaimDroppedForDisconnect);
                Claim::Denied
            }
            Reply::Down => {
                mark(Mark::ClaimUnanswered);
                checked
            }
            Reply::Silent => {
                mark(Mark::ClaimUnanswered);
                Claim::StandBy {
                    incumbent,
                    simultaneous: origin == Origin::Dialed,
                }
            }
        }
    }

    /// Asks `incumbent`'s node whether it dialed the stream whose hello
    /// carried `nonce`. One query at a time per incumbent connection: a
    /// second claim meanwhile is `Busy` and waits its turn (never waved
    /// through).
    async fn ask(&self, incumbent: &Arc<DistConnection>, nonce: Nonce) -> Reply {
        let claims = &self.shared.claims;
        let key = (incumbent.node().clone(), incumbent.generation());
        let mut bound = self.shared.connect_timeout;
        if let Some(tick) = self.shared.tick {
            bound = bound.min(tick / 4);
        }
        let bound = bound.max(Duration::from_millis(1));
        let asked = Arc::new(Asked {
            nonce,
            answer: Mutex::new(None),
            answered: Notify::new(),
            finished: Notify::new(),
        });
        {
            let mut awaited = claims.asked.lock();
            if let Some(under_way) = awaited.get(&key) {
                return Reply::Busy(Pending {
                    asked: Arc::clone(under_way),
                    bound,
                });
            }
            awaited.insert(key.clone(), Arc::clone(&asked));
        }
        let _awaiting = Awaiting {
            claims,
            key,
            asked: Arc::clone(&asked),
        };
        // Written on a task of its own: a write cut by the bound would cut
        // the incumbent's stream mid-frame and take it down. It ends with
        // the write, or with the incumbent's down; one at a time per
        // incumbent, as the queries are.
        let query = claim::query(&nonce);
        let writer = Arc::clone(incumbent);
        self.shared.runtime.spawn(async move {
            let _ = writer.write_raw(&query).await;
        });
        let answered = async {
            tokio::select! {
                biased;
                () = asked.answered.notified() => asked.answer.lock().map_or(Reply::Down, Reply::Answer),
                () = incumbent.down_notified() => Reply::Down,
            }
        };
        timeout(bound, answered).await.unwrap_or(Reply::Silent)
    }
}
