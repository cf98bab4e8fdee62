//! The accept loop and its admission: what keeps a listener serving however
//! its network misbehaves.
//!
//! Model: the loop ends only when the manager is gone. An accept error is
//! classified ([`accept_failure`]): one that belongs to a single inbound
//! connection (reset before accept, its peer address unreadable, a pending
//! network error) skips it; any other (descriptors, buffers or memory
//! exhausted, or unknown) waits and retries, 1 ms doubling to 1 s and back to
//! 1 ms after the next stream, logged once when the burst starts and once
//! when it ends, with its count. A port scanner that resets every connection
//! or a flood that exhausts the descriptors costs the node those connections,
//! never its listener (`tests/hostile_peers.rs`).
//!
//! Admission: each accepted stream takes two places before its hello is read
//! — one among the streams still in their handshake (`max_handshakes`) and
//! one among the inbound streams open at all (`max_connections`: in their
//! handshake, registered, or standing by). The first is released when the
//! handshake ends, the second when the stream's read half is dropped (its
//! read loop ended, or it was refused). A stream that finds no place is
//! closed at once, and the refusals of a burst are logged once with their
//! cap, so a flood is refused before the process runs out of descriptors
//! (`caps_refuse_the_newest_stream_and_say_which_cap`). Streams this node
//! dialed take no place: they are bounded by the nodes it chooses to dial.
//!
//! Fairness: places are counted per source too ([`Source`]: an IPv4
//! address, an IPv6 /64), each bounded (`max_*_per_source`), and when every
//! handshake place is held, a stream from a source holding fewer evicts the
//! oldest handshake of the source holding the most (its task ends at once,
//! its place is the newcomer's): one address's silent streams cannot keep
//! other addresses out
//! (`honest_dials_complete_while_one_address_floods_half_open_handshakes`,
//! tests/hostile_sources.rs).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::{ConnectionManager, InboundStats, ManagerShared};
use crate::planted::PlantedBug;
use crate::shim::net::{accept_failure, AcceptFailure, BoxRead, Connected, Listener};
use crate::shim::probe::{mark, Mark};
use crate::shim::rt::JoinHandle;
use std::collections::{BTreeMap, VecDeque};

use crate::shim::sync::{Arc, Counter, Mutex, Notify};
use crate::shim::time::{sleep, Duration};

/// Default bound on inbound streams whose hello has not been read yet.
pub const DEFAULT_MAX_HANDSHAKES: u64 = 256;
/// Default bound on inbound streams open at once.
pub const DEFAULT_MAX_CONNECTIONS: u64 = 1024;
/// Default bound on one source's streams in their handshake: half the
/// places, so one address never holds them all even before eviction, and a
/// herd of a hundred nodes on one host (or behind one NAT) redialing at
/// once still fits
/// (`slots_of_names_announced_once_are_removed_and_generations_keep_growing`).
pub const DEFAULT_MAX_HANDSHAKES_PER_SOURCE: u64 = DEFAULT_MAX_HANDSHAKES / 2;
/// Default bound on one source's streams open at once: half of them.
pub const DEFAULT_MAX_CONNECTIONS_PER_SOURCE: u64 = DEFAULT_MAX_CONNECTIONS / 2;

/// Descriptors a node keeps for what is not an inbound stream it admitted
/// when it fits its inbound caps within its transport's descriptor limit:
/// half for its own (its listener, its dials, its runtime's, the process's
/// files), half for the refused streams it holds to tell them why
/// ([`lingering_room`]).
pub const RESERVED_DESCRIPTORS: u64 = 64;
/// The fewest inbound streams a node starts with: below this, the
/// descriptor limit leaves it no room to serve, and it refuses to start.
pub const MIN_CONNECTIONS: u64 = 8;

/// Inbound caps lowered to fit a descriptor limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fitted {
    /// `max_handshakes`, lowered in proportion.
    pub max_handshakes: u64,
    /// `max_connections`: the limit less [`RESERVED_DESCRIPTORS`].
    pub max_connections: u64,
}

/// The caps `(max_handshakes, max_connections)` fitted within `limit`
/// descriptors: `Ok(None)` when they fit (or there is no limit); lowered
/// when they do not, `max_connections` to what the limit leaves after
/// [`RESERVED_DESCRIPTORS`] and `max_handshakes` in the same proportion
/// (at least one); an error when that leaves fewer than
/// [`MIN_CONNECTIONS`]. The caps bind only if the descriptors run out
/// after them: at `nofile` 256 the default caps (256 and 1,024) never
/// bound, and a flood took every descriptor instead, honest dials timing
/// out until some were free.
///
/// # Errors
/// The limit leaves no room to serve.
pub fn fit_caps(
    limit: Option<u64>,
    max_handshakes: u64,
    max_connections: u64,
) -> Result<Option<Fitted>, String> {
    let Some(limit) = limit else {
        return Ok(None);
    };
    let room = limit.saturating_sub(RESERVED_DESCRIPTORS);
    if max_connections <= room {
        return Ok(None);
    }
    if room < MIN_CONNECTIONS {
        return Err(format!(
            "the descriptor limit (RLIMIT_NOFILE {limit}) leaves {room} descriptors for inbound streams after {RESERVED_DESCRIPTORS} reserved, fewer than {MIN_CONNECTIONS}: raise it (ulimit -n) to at least {}",
            RESERVED_DESCRIPTORS + max_connections.min(1024)
        ));
    }
    let scaled = u128::from(max_handshakes) * u128::from(room) / u128::from(max_connections.max(1));
    Ok(Some(Fitted {
        max_handshakes: u64::try_from(scaled).unwrap_or(room).clamp(1, room),
        max_connections: room,
    }))
}

/// How many refused streams a node holds at once to tell them why: what
/// the descriptor limit leaves above the connections cap, less half the
/// reserve (the node's own: listener, dials, runtime), at most
/// [`LINGERING`]; [`LINGERING`] with no limit. Refused streams are open
/// streams too: before they had no room of their own, and a node at its
/// caps with refusals held ran out of descriptors for its own dials (the
/// mesh world's descriptor table, `mesh_flood_tight_descriptors`).
#[must_use]
pub fn lingering_room(limit: Option<u64>, max_connections: u64) -> u64 {
    limit.map_or(LINGERING, |limit| {
        limit
            .saturating_sub(max_connections)
            .saturating_sub(RESERVED_DESCRIPTORS / 2)
            .min(LINGERING)
    })
}

/// The first wait after an accept error that is not the connection's own.
const FIRST_BACKOFF: Duration = Duration::from_millis(1);
/// The longest wait between retries.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// What the accept path has done, counted since the manager started.
#[derive(Default)]
pub(super) struct Admission {
    /// The places held, per source (under one lock: admission, eviction
    /// and release are one step each).
    sources: Arc<Mutex<Sources>>,
    accepted: Counter,
    refused: Counter,
    skipped: Counter,
    backed_off: Counter,
    /// The inbound handshakes that failed since the last one succeeded.
    failures: crate::shim::sync::Mutex<FailureBurst>,
    /// Refused streams being told why now ([`tell_refused`]).
    lingering: Arc<Counter>,
}

impl Admission {
    pub(super) fn stats(&self) -> InboundStats {
        let sources = self.sources.lock();
        InboundStats {
            handshaking: sources.handshaking,
            open: sources.open,
            accepted: self.accepted.get(),
            refused: self.refused.get(),
            skipped: self.skipped.get(),
            backed_off: self.backed_off.get(),
            evicted: sources.evicted,
            sources: sources.by.len() as u64,
        }
    }
}

/// How many distinct reasons one burst of failed handshakes logs, each
/// once; the rest of the burst is only counted.
const LOGGED_REASONS: usize = 16;

/// A burst of failed inbound handshakes: from the first failure after a
/// success (or the start) to the next success. Each distinct reason is
/// logged once at WARN, up to [`LOGGED_REASONS`]; every failure after is
/// counted (and logged at DEBUG), and the burst's end is logged with its
/// count. 5,000 streams that time out in their hello log one line, not
/// 5,000 (`a_burst_of_failed_handshakes_logs_each_reason_once`).
#[derive(Default)]
pub(super) struct FailureBurst {
    count: u64,
    reasons: Vec<String>,
}

impl FailureBurst {
    /// Counts a failure; whether its reason is logged (new to the burst,
    /// and the burst has logged fewer than [`LOGGED_REASONS`]).
    pub(super) fn failed(&mut self, reason: &str) -> bool {
        self.count += 1;
        if self.reasons.len() >= LOGGED_REASONS || self.reasons.iter().any(|r| r == reason) {
            return false;
        }
        self.reasons.push(reason.to_owned());
        true
    }

    /// Ends the burst at a success: how many failed in it, if any.
    pub(super) fn succeeded(&mut self) -> Option<u64> {
        self.reasons.clear();
        (self.count > 0).then(|| std::mem::take(&mut self.count))
    }
}

/// Where an inbound stream comes from, as admission counts it: an IPv4
/// address, or an IPv6 /64 (one host's usual share of addresses, which it
/// could otherwise spread a flood over); a peer address that does not parse
/// is one source of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// An IPv4 address (or an IPv4-mapped IPv6 one).
    V4(std::net::Ipv4Addr),
    /// The first 64 bits of an IPv6 address.
    V6(u64),
    /// A peer address that is not an IP socket address.
    Unknown,
}

impl Source {
    /// The source of a stream whose peer address is `peer`.
    #[must_use]
    pub fn of(peer: &str) -> Self {
        use std::net::{IpAddr, SocketAddr};
        let ip = peer
            .parse::<SocketAddr>()
            .map(|addr| addr.ip())
            .or_else(|_| peer.parse::<IpAddr>());
        match ip {
            Ok(IpAddr::V4(v4)) => Self::V4(v4),
            Ok(IpAddr::V6(v6)) => v6.to_ipv4_mapped().map_or_else(
                || Self::V6(u64::try_from(u128::from(v6) >> 64).unwrap_or(u64::MAX)),
                Self::V4,
            ),
            Err(_) => Self::Unknown,
        }
    }
}

/// One source's places.
#[derive(Default)]
struct SourcePlaces {
    /// Its streams in their handshake, oldest first, each with what tells
    /// it it was evicted.
    handshaking: VecDeque<(u64, Arc<Notify>)>,
    /// Its streams open.
    open: u64,
}

/// Every source's places, and the totals the caps bound.
#[derive(Default)]
struct Sources {
    by: BTreeMap<Source, SourcePlaces>,
    handshaking: u64,
    open: u64,
    evicted: u64,
    next: u64,
}

impl Sources {
    /// Forgets `source` once it holds nothing: the map holds only the
    /// sources with a stream open, so its size is bounded by the caps.
    fn tidy(&mut self, source: Source) {
        if self
            .by
            .get(&source)
            .is_some_and(|places| places.open == 0 && places.handshaking.is_empty())
        {
            self.by.remove(&source);
        }
    }

    /// Evicts the oldest handshake of the source holding the most, if it
    /// holds more than `newcomer` would after its admission: a flood gives
    /// way to a source that is not flooding. Whether one was evicted.
    fn evict_for(&mut self, newcomer: Source) -> bool {
        let own = self
            .by
            .get(&newcomer)
            .map_or(0, |places| places.handshaking.len());
        let heaviest = self
            .by
            .iter()
            .filter(|(source, _)| **source != newcomer)
            .max_by_key(|(_, places)| places.handshaking.len())
            .map(|(source, places)| (*source, places.handshaking.len()));
        let Some((heaviest, _)) = heaviest.filter(|&(_, held)| held > own + 1) else {
            return false;
        };
        let Some((_, evict)) = self
            .by
            .get_mut(&heaviest)
            .and_then(|places| places.handshaking.pop_front())
        else {
            return false;
        };
        // Its task ends at once (`serve`); its place is free now.
        mark(Mark::AdmissionEvicted);
        evict.notify_one();
        self.handshaking -= 1;
        self.evicted += 1;
        true
    }
}

/// The cap an inbound stream met (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InboundCap {
    /// `ManagerConfig::max_handshakes` streams were in their handshake,
    /// and no source held more than its fair share to give way.
    Handshakes,
    /// `ManagerConfig::max_connections` inbound streams were open.
    Connections,
    /// Its source had `ManagerConfig::max_handshakes_per_source` streams in
    /// their handshake.
    SourceHandshakes,
    /// Its source had `ManagerConfig::max_connections_per_source` streams
    /// open.
    SourceConnections,
}

impl InboundCap {
    /// Every cap.
    pub const ALL: [Self; 4] = [
        Self::Handshakes,
        Self::Connections,
        Self::SourceHandshakes,
        Self::SourceConnections,
    ];

    /// The cap whose knob is `knob`, as a refusal frame names it.
    #[must_use]
    pub fn of_knob(knob: &[u8]) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|cap| cap.knob().as_bytes() == knob)
    }

    /// The configuration knob that sets it.
    #[must_use]
    pub fn knob(self) -> &'static str {
        match self {
            Self::Handshakes => "max_handshakes",
            Self::Connections => "max_connections",
            Self::SourceHandshakes => "max_handshakes_per_source",
            Self::SourceConnections => "max_connections_per_source",
        }
    }
}

/// A stream's place among the handshakes: given back when it drops,
/// unless an eviction took it already.
pub(super) struct HandshakePlace {
    sources: Arc<Mutex<Sources>>,
    source: Source,
    id: u64,
    /// Told when the place is evicted: the handshake ends at once.
    pub(super) evicted: Arc<Notify>,
}

impl Drop for HandshakePlace {
    fn drop(&mut self) {
        let mut sources = self.sources.lock();
        let held = sources.by.get_mut(&self.source).and_then(|places| {
            let at = places
                .handshaking
                .iter()
                .position(|(id, _)| *id == self.id)?;
            places.handshaking.remove(at)
        });
        if held.is_some() {
            sources.handshaking -= 1;
        }
        sources.tidy(self.source);
    }
}

/// A stream's place among the open ones: travels with its read half.
pub(super) struct OpenPlace {
    sources: Arc<Mutex<Sources>>,
    source: Source,
}

impl Drop for OpenPlace {
    fn drop(&mut self) {
        let mut sources = self.sources.lock();
        if let Some(places) = sources.by.get_mut(&self.source) {
            places.open -= 1;
        }
        sources.open -= 1;
        sources.tidy(self.source);
    }
}

/// The places a newly accepted stream takes.
pub(super) struct Places {
    /// Released when the handshake ends.
    pub(super) handshake: HandshakePlace,
    /// Travels with the stream's read half.
    pub(super) open: OpenPlace,
}

impl ManagerShared {
    /// The limit `cap` sets.
    pub(super) fn cap(&self, cap: InboundCap) -> u64 {
        match cap {
            InboundCap::Handshakes => self.max_handshakes,
            InboundCap::Connections => self.max_connections,
            InboundCap::SourceHandshakes => self.max_handshakes_per_source,
            InboundCap::SourceConnections => self.max_connections_per_source,
        }
    }

    /// Takes a place of each kind for a new inbound stream from `peer`, or
    /// says which cap it met (taking nothing). Per source first (its
    /// handshakes, its open streams), then in all; when every handshake
    /// place is held, the source holding the most gives its oldest up to a
    /// source holding fewer (see the module doc).
    pub(super) fn admit(&self, peer: &str) -> Result<Places, InboundCap> {
        let admission = &self.admission;
        let source = Source::of(peer);
        let mut sources = admission.sources.lock();
        let refused = |cap| {
            admission.refused.add(1);
            mark(match cap {
                InboundCap::SourceHandshakes | InboundCap::SourceConnections => {
                    Mark::AdmissionRefusedForSource
                }
                InboundCap::Handshakes | InboundCap::Connections => Mark::AdmissionRefusedFull,
            });
            Err(cap)
        };
        let (own_handshakes, own_open) = sources.by.get(&source).map_or((0, 0), |places| {
            (places.handshaking.len() as u64, places.open)
        });
        // Planted #25: every source is one, as before fair admission.
        let blind = self.planted.has(PlantedBug::AdmissionIgnoresSources);
        // A per-source cap as high as its total is the total's to report.
        if !blind
            && self.max_connections_per_source < self.max_connections
            && own_open >= self.max_connections_per_source
        {
            return refused(InboundCap::SourceConnections);
        }
        if !blind
            && self.max_handshakes_per_source < self.max_handshakes
            && own_handshakes >= self.max_handshakes_per_source
        {
            return refused(InboundCap::SourceHandshakes);
        }
        if sources.open >= self.max_connections {
            return refused(InboundCap::Connections);
        }
        if sources.handshaking >= self.max_handshakes && (blind || !sources.evict_for(source)) {
            return refused(InboundCap::Handshakes);
        }
        sources.next += 1;
        let id = sources.next;
        let evicted = Arc::new(Notify::new());
        let places = sources.by.entry(source).or_default();
        places.handshaking.push_back((id, Arc::clone(&evicted)));
        places.open += 1;
        sources.handshaking += 1;
        sources.open += 1;
        admission.accepted.add(1);
        Ok(Places {
            handshake: HandshakePlace {
                sources: Arc::clone(&admission.sources),
                source,
                id,
                evicted,
            },
            open: OpenPlace {
                sources: Arc::clone(&admission.sources),
                source,
            },
        })
    }
}

/// A read half that holds its stream's place among the open ones.
struct Held {
    inner: BoxRead,
    _place: OpenPlace,
}

impl tokio::io::AsyncRead for Held {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

/// Hands the stream's read half its place; the handshake place is returned
/// for the caller to hold until the hello is read.
pub(super) fn hold(mut stream: Connected, places: Places) -> (Connected, HandshakePlace) {
    stream.read = Box::new(Held {
        inner: stream.read,
        _place: places.open,
    });
    (stream, places.handshake)
}

/// The log of one burst: its first event is logged when it starts, the rest
/// only counted, and its end is logged with the count.
#[derive(Default)]
struct Burst(u64);

impl Burst {
    /// Counts one more; whether it is the first of its burst.
    fn starts(&mut self) -> bool {
        self.0 += 1;
        self.0 == 1
    }

    /// Ends the burst; how many it had, if any.
    fn ends(&mut self) -> Option<u64> {
        (self.0 > 0).then(|| std::mem::take(&mut self.0))
    }
}

/// How long a refused stream is kept to be told why.
const REFUSAL_LINGER: Duration = Duration::from_millis(100);
/// Refused streams kept to be told why at once, at most (fewer within a
/// descriptor limit: [`lingering_room`]): past it (a flood) a refused
/// stream is closed at once, untold, so refusals never hold more than this
/// many descriptors beyond the caps.
pub const LINGERING: u64 = 64;

/// A refused stream's place among the [`LINGERING`]: given back on drop
/// (also if its task is cancelled).
struct Lingering(Arc<Counter>);

impl Drop for Lingering {
    fn drop(&mut self) {
        self.0.sub(1);
    }
}

/// Tells a refused stream which cap turned it away (a refusal frame), ends
/// its write half, and reads what it sent (its hello) before the stream is
/// dropped: a socket closed with unread bytes is reset, and a reset can
/// discard the refusal before the dialer reads it. Bounded by
/// [`REFUSAL_LINGER`] and 1 KiB read, on a task of its own: the accept loop
/// never waits for a refused peer.
async fn tell_refused(mut stream: Connected, cap: InboundCap) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let refusal = lanesim_target::handshake::refused(cap.knob());
    let _ = crate::shim::time::timeout(REFUSAL_LINGER, async {
        stream.write.write_all(&refusal).await?;
        stream.write.shutdown().await?;
        let mut unread = [0u8; 1024];
        let mut total = 0;
        while total < unread.len() {
            match stream.read.read(&mut unread[total..]).await? {
                0 => break,
                n => total += n,
            }
        }
        Ok::<(), io::Error>(())
    })
    .await;
}

impl ConnectionManager {
    /// Accepts inbound connections on `listener` for as long as the manager
    /// lives (see the module doc for errors and caps). Each stream's hello is
    /// read in its own task, so a caller that never sends one delays nobody
    /// else; a bad stream is dropped. The loop holds the manager weakly: it
    /// ends when the manager is gone.
    pub fn serve(&self, mut listener: Box<dyn Listener>) -> JoinHandle<()> {
        let shared = Arc::downgrade(&self.shared);
        let (transport, local) = (Arc::clone(&self.transport), self.local.clone());
        self.shared.runtime.spawn(async move {
            let mut backoff = FIRST_BACKOFF;
            let (mut failing, mut refusing) = (Burst::default(), Burst::default());
            loop {
                let accepted = listener.accept().await;
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                let stream = match accepted {
                    Ok(stream) => stream,
                    Err(error) if shared.planted.has(PlantedBug::AcceptLoopStopsOnError) => {
                        tracing::warn!(%error, "accept loop stopped");
                        return;
                    }
                    Err(error) => match accept_failure(&error) {
                        AcceptFailure::Connection => {
                            shared.admission.skipped.add(1);
                            tracing::debug!(%error, "inbound connection failed before its hello");
                            continue;
                        }
                        AcceptFailure::Resources => {
                            shared.admission.backed_off.add(1);
                            if failing.starts() {
                                tracing::warn!(%error, "accept failing; retrying with back-off");
                            }
                            // Not holding the manager while it waits.
                            drop(shared);
                            sleep(backoff).await;
                            backoff = (backoff * 2).min(MAX_BACKOFF);
                            continue;
                        }
                    },
                };
                backoff = FIRST_BACKOFF;
                if let Some(errors) = failing.ends() {
                    tracing::info!(errors, "accepting again");
                }
                let places = match shared.admit(&stream.peer) {
                    Ok(places) => places,
                    Err(cap) => {
                        if refusing.starts() {
                            let limit = shared.cap(cap);
                            tracing::warn!(
                                peer = %stream.peer,
                                cap = cap.knob(),
                                limit,
                                "inbound connection refused: the cap is reached"
                            );
                        }
                        if shared.admission.lingering.add_within(1, shared.max_lingering) {
                            let held = Lingering(Arc::clone(&shared.admission.lingering));
                            shared.runtime.spawn(async move {
                                let _held = held;
                                tell_refused(stream, cap).await;
                            });
                        }
                        continue;
                    }
                };
                if let Some(refused) = refusing.ends() {
                    tracing::info!(refused, "inbound connections admitted again");
                }
                let (stream, handshake) = hold(stream, places);
                let manager = ConnectionManager {
                    shared,
                    transport: Arc::clone(&transport),
                    local: local.clone(),
                };
                let runtime = Arc::clone(&manager.shared);
                runtime.runtime.spawn(async move {
                    let evicted = Arc::clone(&handshake.evicted);
                    let _handshake = handshake;
                    // An evicted handshake ends at once: its source held
                    // the most places when every one was taken.
                    let outcome = tokio::select! {
                        biased;
                        () = evicted.notified() => {
                            tracing::debug!("inbound handshake evicted: its source held the most places");
                            return;
                        }
                        outcome = manager.handshake(stream) => outcome,
                    };
                    let mut burst = manager.shared.admission.failures.lock();
                    match outcome {
                        // `error` quotes names with `{:?}`: a newline in
                        // a hostile name cannot forge a log line.
                        Err(error) => {
                            if burst.failed(&error.to_string()) {
                                tracing::warn!(%error, "inbound connection refused");
                            } else {
                                tracing::debug!(%error, "inbound connection refused");
                            }
                        }
                        Ok(_) => {
                            if let Some(failed) = burst.succeeded() {
                                tracing::info!(
                                    failed,
                                    "an inbound handshake succeeded after a burst of failed ones"
                                );
                            }
                        }
                    }
                });
            }
        })
    }
}
