//! Where a generation's socket comes from: dialing a peer (connect and
//! handshake under the connect timeout, then registering it as dialed),
//! and accepting (the accept loop, and each accepted socket's handshake,
//! registered under the name it proved). Both end in
//! [`Shared::install`], which applies the cross-dial tie-break.

use std::sync::Arc;
use std::time::Duration;

use lanesim_target::net::{Connected, Listener};
use lanesim_target::node::{Conn, DialFailure, Origin};
use tokio::time;

use super::shared::{valid_name, Shared};
use super::sync::raised;
use crate::handshake;

/// How long the accept loop backs off after a failed accept.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

impl Shared {
    pub(super) async fn dial(
        self: &Arc<Self>,
        node: &str,
        addr: &str,
    ) -> Result<Conn, DialFailure> {
        if !valid_name(node) {
            return Err(DialFailure::BadName);
        }
        if let Some(live) = self.live(node) {
            return Ok(live as Conn);
        }
        let nonce = self.nonces.next();
        let connect = async {
            let mut connected = self
                .transport
                .connect(addr)
                .await
                .map_err(|_| DialFailure::Io)?;
            let leftover =
                handshake::dial(&mut connected, &self.name, node, &self.cookie, nonce).await?;
            Ok::<_, DialFailure>((connected, leftover))
        };
        let (connected, leftover) = time::timeout(self.connect_timeout, connect)
            .await
            .map_err(|_| DialFailure::Timeout)??;
        match self.install(node, Origin::Dialed, connected, leftover) {
            Ok(link) | Err(link) => Ok(link as Conn),
        }
    }

    // --- accepting ----------------------------------------------------------

    pub(super) async fn accept_loop(self: Arc<Self>, mut listener: Box<dyn Listener>) {
        let mut stop = self.stop_signal.subscribe();
        loop {
            let accepted = tokio::select! {
                biased;
                () = raised(&mut stop) => return,
                accepted = listener.accept() => accepted,
            };
            match accepted {
                Ok(connected) => {
                    let shared = Arc::clone(&self);
                    self.handle
                        .spawn(async move { shared.handshake(connected).await });
                }
                Err(_) => {
                    tokio::select! {
                        biased;
                        () = raised(&mut stop) => return,
                        () = time::sleep(ACCEPT_BACKOFF) => {}
                    }
                }
            }
        }
    }

    /// Runs an accepted socket's handshake and registers it under the
    /// name it proved. A socket that does not finish it in time, or whose
    /// proof is wrong, is closed.
    async fn handshake(self: Arc<Self>, mut connected: Connected) {
        let mut stop = self.stop_signal.subscribe();
        let nonce = self.nonces.next();
        let hello = tokio::select! {
            biased;
            () = raised(&mut stop) => return,
            hello = time::timeout(
                self.connect_timeout,
                handshake::accept(&mut connected, &self.name, &self.cookie, nonce),
            ) => hello,
        };
        let Ok(Some((name, leftover))) = hello else {
            return;
        };
        if !valid_name(&name) {
            return;
        }
        // The loser of a tie-break is simply closed (dropped) here.
        let _ = self.install(&name, Origin::Accepted, connected, leftover);
    }
}
