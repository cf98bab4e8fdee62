//! The accept path: an inbound stream's hello, read within a deadline and
//! checked, then registered.

use super::{ConnectionManager, DialError, Origin};
use crate::distribution::connection::DistConnection;
use crate::distribution::frame::{read_frame, Frame};
use crate::distribution::node::{NameError, NodeName};
use crate::shim::net::{Connected, Listener};
use crate::shim::probe::{mark, Mark};
use crate::shim::sync::Arc;
use crate::shim::time::timeout;

/// The first frame on a dialed stream: this control, and the dialer's name as
/// payload. Lets `accept` learn who is calling.
pub const HELLO: &[u8] = b"lanesim/hello";

impl ConnectionManager {
    /// Accepts one inbound stream, reads its hello (bounded by twice the
    /// connect timeout) and registers it under the name it announced.
    ///
    /// Twice: the dialer counts a dial as made once it connected and wrote
    /// its hello within the connect timeout, and the acceptor's wait starts
    /// when the connection arrives. The hello can reach it up to a round
    /// trip (the connect's reply and the dialer's write, within the
    /// timeout) plus one one-way delay (itself within the round trip) after
    /// that. Waiting only the connect timeout refused hellos the dialer had
    /// already registered: with both ends dialing at once, the dialer's
    /// stream then won the tie-break over the acceptor's, the acceptor
    /// dropped it, and both ends were left without a connection until a
    /// redial (the mesh hunt found it: `hunt --world mesh --seed 41`,
    /// `scenarios/regressions/mesh_hello_slower_than_the_connect_timeout.toml`).
    ///
    /// The stream takes its places under the caps as in
    /// [`serve`](Self::serve).
    ///
    /// # Errors
    /// When accepting fails, a cap is reached, or the hello is late or
    /// malformed.
    pub async fn accept(
        &self,
        listener: &mut dyn Listener,
    ) -> Result<Arc<DistConnection>, DialError> {
        let stream = listener.accept().await.map_err(DialError::Io)?;
        let places = self.shared.admit().map_err(DialError::Refused)?;
        let (stream, _handshake) = super::serve::hold(stream, places);
        self.handshake(stream).await
    }

    /// Reads an inbound stream's hello and registers it.
    pub(super) async fn handshake(
        &self,
        mut stream: Connected,
    ) -> Result<Arc<DistConnection>, DialError> {
        let max = self.shared.max_frame.min(1024);
        let hello = timeout(
            self.shared.connect_timeout.saturating_mul(2),
            read_frame(&mut stream.read, max),
        )
        .await
        .map_err(|_| DialError::Timeout)?
        .map_err(|error| DialError::BadHello(error.to_string()))?;
        let node = match hello {
            Frame::Data { control, payload } if control == HELLO => {
                let node = NodeName::parse_bytes(&payload).map_err(|error| {
                    mark(Mark::HelloRefused);
                    DialError::BadName(error)
                })?;
                if node == self.local {
                    mark(Mark::HelloRefused);
                    return Err(DialError::BadName(NameError::Ours));
                }
                node
            }
            Frame::Data { control, .. } => {
                mark(Mark::HelloRefused);
                return Err(DialError::BadHello(format!(
                    "expected a hello, got a frame with a {}-byte control",
                    control.len()
                )));
            }
            Frame::Keepalive => {
                mark(Mark::HelloRefused);
                return Err(DialError::BadHello(
                    "expected a hello, got a keepalive".into(),
                ));
            }
        };
        Ok(self
            .register_as(node, stream, Origin::Accepted)
            .into_connection())
    }
}
