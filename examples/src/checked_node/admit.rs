//! A stream proven by the handshake becomes a registered generation: the
//! tie-break in the table, the displaced generation taken down, the `up`
//! report, then its reader task and (with a heartbeat) its keepalive task.
//! A stream that loses the tie-break is dropped, which closes it.

use std::sync::Arc;

use lanesim_target::net::Connected;
use lanesim_target::node::{Connection, DownReason, Origin, Up};

use super::connection::Link;
use super::shared::Shared;
use super::table::Registered;
use super::{heartbeat, reader};

/// Registers `stream` to `node`; the live generation afterwards (the new
/// one, or the incumbent it lost to).
pub(super) fn admit(
    shared: &Arc<Shared>,
    node: &str,
    origin: Origin,
    stream: Connected,
) -> Arc<Link> {
    let Connected {
        read,
        write,
        peer,
        local,
    } = stream;
    let registered = shared
        .table
        .register(&shared.name, node, origin, |generation| {
            Link::new(shared, node, generation, origin, local, peer, write)
        });
    match registered {
        Registered::Lost(incumbent) => incumbent,
        Registered::Up { link, displaced } => {
            if let Some(displaced) = displaced {
                displaced.mark_down(DownReason::SimultaneousConnect);
            }
            shared.reports.up(Up {
                node,
                generation: link.generation(),
                origin,
                local_addr: link.local_addr(),
                peer_addr: link.peer_addr(),
            });
            shared.spawn(reader::run(Arc::clone(shared), Arc::clone(&link), read));
            if let Some(tick) = shared.heartbeat {
                shared.spawn(heartbeat::run(Arc::clone(&link), tick));
            }
            link
        }
    }
}
