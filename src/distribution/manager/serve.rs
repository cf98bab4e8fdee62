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

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::{ConnectionManager, InboundStats, ManagerShared};
use crate::planted::PlantedBug;
use crate::shim::net::{accept_failure, AcceptFailure, BoxRead, Connected, Listener};
use crate::shim::rt::JoinHandle;
use crate::shim::sync::{Arc, Counter};
use crate::shim::time::{sleep, Duration};

/// Default bound on inbound streams whose hello has not been read yet.
pub const DEFAULT_MAX_HANDSHAKES: u64 = 256;
/// Default bound on inbound streams open at once.
pub const DEFAULT_MAX_CONNECTIONS: u64 = 1024;

/// Descriptors a node keeps for what is not an inbound stream (its
/// listener, its dials, its runtime's, the process's files) when it fits
/// its inbound caps within its transport's descriptor limit.
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

/// The first wait after an accept error that is not the connection's own.
const FIRST_BACKOFF: Duration = Duration::from_millis(1);
/// The longest wait between retries.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// What the accept path has done, counted since the manager started.
#[derive(Default)]
pub(super) struct Admission {
    /// Inbound streams in their handshake now.
    pub(super) handshaking: Arc<Counter>,
    /// Inbound streams open now.
    pub(super) open: Arc<Counter>,
    accepted: Counter,
    refused: Counter,
    skipped: Counter,
    backed_off: Counter,
    /// The inbound handshakes that failed since the last one succeeded.
    failures: crate::shim::sync::Mutex<FailureBurst>,
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

impl Admission {
    pub(super) fn stats(&self) -> InboundStats {
        InboundStats {
            handshaking: self.handshaking.get(),
            open: self.open.get(),
            accepted: self.accepted.get(),
            refused: self.refused.get(),
            skipped: self.skipped.get(),
            backed_off: self.backed_off.get(),
        }
    }
}

/// The cap an inbound stream met (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InboundCap {
    /// `ManagerConfig::max_handshakes` streams were in their handshake.
    Handshakes,
    /// `ManagerConfig::max_connections` inbound streams were open.
    Connections,
}

impl InboundCap {
    /// The configuration knob that sets it.
    #[must_use]
    pub fn knob(self) -> &'static str {
        match self {
            Self::Handshakes => "max_handshakes",
            Self::Connections => "max_connections",
        }
    }
}

/// A place held by a stream: given back on drop.
pub(super) struct Place(Arc<Counter>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.sub(1);
    }
}

/// The places a newly accepted stream takes.
pub(super) struct Places {
    /// Released when the handshake ends.
    pub(super) handshake: Place,
    /// Travels with the stream's read half.
    pub(super) open: Place,
}

impl ManagerShared {
    /// Takes a place of each kind for a new inbound stream, or says which
    /// cap it met (taking nothing).
    pub(super) fn admit(&self) -> Result<Places, InboundCap> {
        let admission = &self.admission;
        if !admission.handshaking.add_within(1, self.max_handshakes) {
            admission.refused.add(1);
            return Err(InboundCap::Handshakes);
        }
        let handshake = Place(Arc::clone(&admission.handshaking));
        if !admission.open.add_within(1, self.max_connections) {
            admission.refused.add(1);
            return Err(InboundCap::Connections);
        }
        admission.accepted.add(1);
        Ok(Places {
            handshake,
            open: Place(Arc::clone(&admission.open)),
        })
    }
}

/// A read half that holds its stream's place among the open ones.
struct Held {
    inner: BoxRead,
    _place: Place,
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
pub(super) fn hold(mut stream: Connected, places: Places) -> (Connected, Place) {
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
                let places = match shared.admit() {
                    Ok(places) => places,
                    Err(cap) => {
                        if refusing.starts() {
                            let limit = match cap {
                                InboundCap::Handshakes => shared.max_handshakes,
                                InboundCap::Connections => shared.max_connections,
                            };
                            tracing::warn!(
                                peer = %stream.peer,
                                cap = cap.knob(),
                                limit,
                                "inbound connection refused: the cap is reached"
                            );
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
                    let _handshake = handshake;
                    let outcome = manager.handshake(stream).await;
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
