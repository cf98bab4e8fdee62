//! The sender workloads' shape: a few actors, each a list of steps run on a
//! task of its own, against a sender over lanesim's connection layer with
//! one or two peers. The races they set up are the ones the simulated
//! worlds reach only between awaits: an enqueue against a shutdown, a
//! control against its generation's down, a redial against the drain's
//! routing, a write deadline against an overflow.

/// One step of an actor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// Offer the peer's next data frame (`enqueue`).
    Data(u64),
    /// Offer a control pinned to the peer's generation the world holds
    /// (the one it connected last, which may be down by now).
    Control(u64),
    /// Ask the sender to shut down.
    Shutdown,
    /// Take the peer's live generation down (`ManualDisconnect`).
    Disconnect(u64),
    /// Connect the peer again, if it has no live generation: a new
    /// generation, on a new socket.
    Reconnect(u64),
    /// Write a keepalive to the peer's generation the world holds,
    /// through the layer (`LayerConnection::write_raw`), as the layer's
    /// heartbeat does: a second writer contending for the generation's
    /// writer lock with the drain.
    Keepalive(u64),
    /// Let the other tasks run (`task::yield_now`).
    Yield,
}

/// A sender workload.
#[derive(Debug)]
pub struct SenderShape {
    /// Peers, `peer0` ... (each connected once before the actors start).
    pub peers: u64,
    /// The sender's data lane depth.
    pub data_capacity: usize,
    /// The sender's control lane depth.
    pub control_capacity: usize,
    /// Peers whose first socket never takes a byte (a wedged reader): a
    /// write to it waits until its deadline fires, where the checker
    /// chooses.
    pub wedged: &'static [u64],
    /// Every socket takes a frame in two steps (the first write of it
    /// waits a turn, as a socket short of window does): a writer holds the
    /// generation's writer lock across a step of the others.
    pub slow: bool,
    /// Each actor's steps.
    pub actors: &'static [&'static [Act]],
}
