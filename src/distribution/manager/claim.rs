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
//!    the node before, it knows the host its dial reached. A stream from
//!    that host, meeting an *accepted* incumbent from another host, is the
//!    owner's, and the incumbent a squatter: it goes down `NameReclaimed`
//!    and the stream takes the slot (`a_keepalive_squatter_gives_the_name_back_to_its_owner`).
//!    A squatter that keeps its heartbeat alive no longer holds a name
//!    against the node at the name's address.
//! 2. **The incumbent's word.** Otherwise the incumbent's node is asked,
//!    over the live connection, whether it dialed the stream whose hello
//!    carried this nonce. It keeps its recent dials' nonces
//!    ([`RECENT_DIALS`]), so the real node knows. Denied: the stream is
//!    refused at once, without standing by (an impostor neither displaces
//!    the live generation nor waits for its next blip:
//!    `an_insider_claiming_a_live_name_is_denied_and_the_generation_stays`).
//!    Confirmed (the simultaneous connect, or a redial): the table's rules
//!    as before.
//! 3. **No answer** within the bound (the connect timeout, at most a
//!    quarter tick), or the incumbent goes down meanwhile: the table's
//!    rules as before, since a dead or stale incumbent cannot answer and
//!    its real owner must get back in (the stale-hello stand-by).
//!
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

use super::{ConnectionManager, ManagerShared, Origin};
use crate::distribution::connection::DistConnection;
use crate::distribution::node::NodeName;
use crate::planted::PlantedBug;
use crate::shim::probe::{mark, Mark};
use crate::shim::sync::{Arc, Counter, Mutex, Notify};
use crate::shim::time::{timeout, Duration};

/// Dials whose hello nonces a node remembers, most recent last: enough to
/// answer for every dial a peer can still be checking (one per peer in
/// flight, and the one just registered), across a few hundred peers.
pub const RECENT_DIALS: usize = 1024;

/// Names whose dialed host a node remembers.
pub const DIALED_HOSTS: usize = 4096;

/// Queries a node awaits at once, at most: one per inbound handshake.
const MAX_ASKED: usize = 4096;

/// What the check decided for a stream claiming a node's name.
pub(super) enum Claim {
    /// No live incumbent, or one that confirmed the claim, did not answer,
    /// or need not be asked: the table's rules decide.
    TableDecides,
    /// The incumbent is a squatter (rule 1): it goes down, the stream
    /// takes the slot.
    Reclaimed(Arc<DistConnection>),
    /// The incumbent's node denied dialing the stream.
    Denied,
}

/// A query this node awaits.
struct Asked {
    /// The connection asked: only its answer counts.
    node: NodeName,
    generation: u64,
    answer: Mutex<Option<bool>>,
    answered: Notify,
}

/// The manager's claim state: its own recent dials, the hosts it dialed,
/// and the queries it awaits.
#[derive(Default)]
pub(super) struct Claims {
    dials: Mutex<VecDeque<(NodeName, Nonce)>>,
    hosts: Mutex<BTreeMap<NodeName, IpAddr>>,
    asked: Mutex<BTreeMap<Nonce, Arc<Asked>>>,
}

/// The host of a socket address as a transport prints it; `None` for a
/// name that is not `ip:port`.
fn host_of(addr: &str) -> Option<IpAddr> {
    addr.parse::<SocketAddr>().ok().map(|addr| addr.ip())
}

impl Claims {
    /// This node is dialing `node` with a hello carrying `nonce`.
    pub(super) fn dialing(&self, node: &NodeName, nonce: Nonce) {
        let mut dials = self.dials.lock();
        if dials.len() == RECENT_DIALS {
            dials.pop_front();
        }
        dials.push_back((node.clone(), nonce));
    }

    /// This node's dial of `node` reached `peer`: the host it dials for
    /// the name.
    pub(super) fn dialed(&self, node: &NodeName, peer: &str) {
        let Some(host) = host_of(peer) else {
            return;
        };
        let mut hosts = self.hosts.lock();
        if hosts.len() >= DIALED_HOSTS && !hosts.contains_key(node) {
            hosts.pop_first();
        }
        hosts.insert(node.clone(), host);
    }

    /// Whether this node dialed `node` with a hello carrying `nonce`.
    fn mine(&self, node: &NodeName, nonce: &Nonce) -> bool {
        self.dials
            .lock()
            .iter()
            .any(|(dialed, sent)| dialed == node && sent == nonce)
    }

    /// Rule 1: a stream from `newcomer` is the owner's and `incumbent` a
    /// squatter.
    fn squatter(&self, node: &NodeName, newcomer: &str, incumbent: &str) -> bool {
        let Some(owner) = self.hosts.lock().get(node).copied() else {
            return false;
        };
        host_of(newcomer) == Some(owner) && host_of(incumbent) != Some(owner)
    }

    /// An answer arrived on `connection`.
    fn answered(&self, connection: &DistConnection, nonce: &Nonce, mine: bool) {
        let asked = self.asked.lock().get(nonce).cloned();
        if let Some(asked) = asked.filter(|asked| {
            &asked.node == connection.node() && asked.generation == connection.generation()
        }) {
            *asked.answer.lock() = Some(mine);
            asked.answered.notify_one();
        }
    }
}

/// Takes the awaited query out of the table however the wait ends.
struct Awaiting<'a> {
    claims: &'a Claims,
    nonce: Nonce,
}

impl Drop for Awaiting<'_> {
    fn drop(&mut self) {
        self.claims.asked.lock().remove(&self.nonce);
    }
}

/// A node-protocol frame read on `connection`: a query is answered (on a
/// task, one at a time per connection: `answering` counts it), an answer
/// handed to the query awaiting it; anything else is dropped.
pub(super) fn on_node_frame(
    shared: &ManagerShared,
    connection: &Arc<DistConnection>,
    payload: &[u8],
    answering: &Arc<Counter>,
) {
    match claim::parse(payload) {
        Some(ClaimFrame::Query(nonce)) => {
            let mine = shared.claims.mine(connection.node(), &nonce);
            // A peer asking faster than this end writes is not answered
            // twice at once: its later queries go unanswered.
            if !answering.add_within(1, 1) {
                return;
            }
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

impl ConnectionManager {
    /// The claim check of the module doc, for an accepted stream from
    /// `peer` that proved `node` with a hello carrying `nonce`.
    pub(super) async fn check_claim(&self, node: &NodeName, nonce: Nonce, peer: &str) -> Claim {
        if self.shared.planted.has(PlantedBug::ClaimsTakenAtTheirWord) {
            return Claim::TableDecides;
        }
        let incumbent = {
            let table = self.shared.table.lock();
            match table.slots.get(node).and_then(|slot| slot.current.as_ref()) {
                Some((current, origin)) if !current.is_down() => (Arc::clone(current), *origin),
                _ => return Claim::TableDecides,
            }
        };
        let (incumbent, origin) = incumbent;
        // Refused whatever the answer: the stream was dialed the losing
        // way against this node's own dial.
        let winner = if self.local < *node {
            Origin::Dialed
        } else {
            Origin::Accepted
        };
        if origin == Origin::Dialed && winner == Origin::Dialed {
            return Claim::TableDecides;
        }
        let claims = &self.shared.claims;
        if origin == Origin::Accepted && claims.squatter(node, peer, incumbent.peer()) {
            mark(Mark::ClaimReclaimed);
            return Claim::Reclaimed(incumbent);
        }
        match self.ask(&incumbent, nonce).await {
            Some(false) => {
                mark(Mark::ClaimDenied);
                Claim::Denied
            }
            Some(true) => {
                mark(Mark::ClaimConfirmed);
                Claim::TableDecides
            }
            None => {
                mark(Mark::ClaimUnanswered);
                Claim::TableDecides
            }
        }
    }

    /// Asks `incumbent`'s node whether it dialed the stream whose hello
    /// carried `nonce`: its answer, or `None` when it went down or did not
    /// answer within the bound.
    async fn ask(&self, incumbent: &Arc<DistConnection>, nonce: Nonce) -> Option<bool> {
        let claims = &self.shared.claims;
        let asked = Arc::new(Asked {
            node: incumbent.node().clone(),
            generation: incumbent.generation(),
            answer: Mutex::new(None),
            answered: Notify::new(),
        });
        {
            let mut awaited = claims.asked.lock();
            if awaited.len() >= MAX_ASKED || awaited.contains_key(&nonce) {
                return None;
            }
            awaited.insert(nonce, Arc::clone(&asked));
        }
        let _awaiting = Awaiting { claims, nonce };
        // Written on a task of its own: a write cut by the bound would cut
        // the incumbent's stream mid-frame and take it down.
        let query = claim::query(&nonce);
        let writer = Arc::clone(incumbent);
        self.shared.runtime.spawn(async move {
            let _ = writer.write_raw(&query).await;
        });
        let mut bound = self.shared.connect_timeout;
        if let Some(tick) = self.shared.tick {
            bound = bound.min(tick / 4);
        }
        let answered = async {
            tokio::select! {
                biased;
                () = asked.answered.notified() => *asked.answer.lock(),
                () = incumbent.down_notified() => None,
            }
        };
        timeout(bound.max(Duration::from_millis(1)), answered)
            .await
            .ok()
            .flatten()
    }
}
