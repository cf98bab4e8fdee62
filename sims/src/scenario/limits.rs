//! Upper bounds on what a file may ask for, chosen so one run fits in a
//! small machine's memory and finishes in seconds to minutes: each is the
//! most a run is sized by (items, frames, queue slots, segments, bytes),
//! and every event costs a log record. Validation (`scenario::validate`)
//! holds every file to them; the `MAX_*` and `SLOW_FRACTION` bounds are
//! also re-exported as `scenario::MAX_PEERS` and so on.

use std::time::Duration;

/// Largest scenario file, in bytes.
pub const FILE_BYTES: u64 = 1024 * 1024;
/// Longest scenario name, in characters.
pub const NAME_CHARS: usize = 128;
/// Most entries in `reaches`.
pub const REACHES: usize = 256;
/// Shortest mesh heartbeat tick (see `validate::mesh`).
pub const MIN_HEARTBEAT: Duration = Duration::from_millis(250);
/// Shortest mesh frame deadline (see `validate::mesh`).
pub const MIN_FRAME_TIMEOUT: Duration = Duration::from_millis(250);

/// Smallest `real_time_scale`: below it a scaled deadline drowns in
/// real scheduling noise (a millisecond of jitter reads as 0.1 s).
pub const MIN_REAL_TIME_SCALE: f64 = 0.01;
/// Virtual-time budget of one run.
pub const BUDGET: Duration = Duration::from_secs(3_600);
/// Lanes: keys.
pub const KEYS: u64 = 100_000;
/// Lanes: producer tasks.
pub const PRODUCERS: u64 = 1_000;
/// Lanes: items in all (producers x items per producer).
pub const ITEMS: u64 = 2_000_000;
/// Lanes: a lane's capacity, and a burst.
pub const CAPACITY: u64 = 1_000_000;
/// Sender: data frames, and links.
pub const FRAMES: u64 = 1_000_000;
/// Sender: a frame's payload, well under the 64 MiB frame cap.
pub const FRAME_BYTES: u64 = 16 * 1024 * 1024;
/// Sender: the frames one run may allocate in all (data frames x frame
/// bytes).
pub const RUN_FRAME_BYTES: u64 = 1 << 30;
/// A sweep: the frames its runs in flight may allocate together
/// (`--jobs` x the largest run's).
pub const SWEEP_FRAME_BYTES: u64 = 4 << 30;
/// Sender: a lane's depth.
pub const QUEUE: u64 = 1_000_000;
/// Sender: the simulated socket's segment size and segment credit.
pub const SEGMENTS: u64 = 65_536;
/// Sender: the simulation's tick, at least (every host is polled once
/// per tick: a microsecond tick over an hour would never end).
pub const MIN_TICK: Duration = Duration::from_micros(100);
/// Faults, scripted or chaos.
pub const FAULTS: u64 = 64;
/// Entries in a `chaos_kinds` list (a kind may repeat, to weigh it).
pub const CHAOS_KINDS: usize = 64;
/// Any time in a file other than the budget.
pub const SPAN: Duration = Duration::from_secs(3_600);

/// Most peers a sender world can address.
pub const MAX_PEERS: u64 = 64;

/// Most nodes a mesh world runs.
pub const MAX_MESH_NODES: u64 = 64;
/// Most links a mesh node makes.
pub const MAX_MESH_LINKS: u64 = 10_000;
/// Longest mesh workload window, and longest fault.
pub const MAX_MESH_SPAN: Duration = Duration::from_secs(600);
/// The most addresses a `flood` fault may come from (`hosts`).
pub const MAX_FLOOD_HOSTS: u64 = 16;
/// The mesh nodes' largest inbound frame body, and so the longest frame a
/// `trickle` fault may trickle (`frame`).
pub const MESH_MAX_FRAME: u64 = 64 * 1024;

/// A slow peer's read interval is at most this fraction of the write
/// deadline (the chaos sampler draws up to 1/50).
pub const SLOW_FRACTION: u32 = 20;

/// Longest a preempted point may sleep: a preempted thread, not a stall.
pub const MAX_PREEMPT: Duration = Duration::from_secs(1);
