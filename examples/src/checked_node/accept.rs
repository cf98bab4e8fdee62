//! The accept loop: accepts for as long as the node lives, runs each
//! stream's handshake in a task of its own (bounded by twice the connect
//! timeout), and registers the proven ones. An error that belongs to one
//! connection is skipped; any other (out of descriptors, unknown) is waited
//! out with a back-off from 1 ms doubling to 1 s.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use lanesim_target::net::{Connected, Listener};
use lanesim_target::node::Origin;

use super::admit::admit;
use super::handshake;
use super::shared::Shared;

const FIRST_BACKOFF: Duration = Duration::from_millis(1);
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Starts accepting on `listener`.
pub(super) fn serve(shared: &Arc<Shared>, mut listener: Box<dyn Listener>) {
    let node = Arc::clone(shared);
    shared.spawn(async move {
        let mut backoff = FIRST_BACKOFF;
        loop {
            match listener.accept().await {
                Ok(stream) => {
                    backoff = FIRST_BACKOFF;
                    node.spawn(accept_one(Arc::clone(&node), stream));
                }
                Err(error) if connection_error(&error) => {}
                Err(_) => {
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    });
}

/// Whether `error` is the failed connection's own, not the listener's.
fn connection_error(error: &io::Error) -> bool {
    use io::ErrorKind::{
        BrokenPipe, ConnectionAborted, ConnectionRefused, ConnectionReset, HostUnreachable,
        Interrupted, NetworkDown, NetworkUnreachable, NotConnected, PermissionDenied, TimedOut,
        WouldBlock,
    };
    matches!(
        error.kind(),
        ConnectionAborted
            | ConnectionReset
            | ConnectionRefused
            | NotConnected
            | BrokenPipe
            | Interrupted
            | WouldBlock
            | TimedOut
            | HostUnreachable
            | NetworkUnreachable
            | NetworkDown
            | PermissionDenied
    )
}

/// Runs the handshake on one inbound stream and registers it if its peer
/// proved the cookie.
async fn accept_one(shared: Arc<Shared>, mut stream: Connected) {
    let limit = shared.connect_timeout * 2;
    let proven = tokio::time::timeout(limit, handshake::accept(&shared, &mut stream)).await;
    if let Ok(Some(node)) = proven {
        admit(&shared, &node, Origin::Accepted, stream);
    }
}
