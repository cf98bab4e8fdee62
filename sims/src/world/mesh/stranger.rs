//! The stranger: a host without the cluster cookie that listens where a
//! misdial lands (`misdial` with `by = "stranger"`: a node told a wrong
//! address for another node's name).
//!
//! Model. It answers every hello under the name the misdialing node dialed
//! (the driver writes it in `Shared::misdials` before it orders the dial),
//! with a challenge whose proof is made with a cookie it does not hold: a
//! proof the dialer must check before it proves itself. Then it reads what
//! the dialer writes for two ticks, or until the dialer closes the stream,
//! and logs the bytes (`MeshStranger`). A dialer that writes its proof, or
//! anything, to a host that has not proved the cookie breaks M8
//! (`m8_detects_a_proof_written_to_a_stranger`): that proof answers a nonce
//! the stranger chose, so it could replay it as the dialer to the node it
//! pretends to be.

use std::sync::Arc;

use lanesim_target::handshake::{Nonces, SeededNonces, Transcript};

use super::{node_index, node_name, Shared, PORT, STRANGER};
use crate::event::Event;
use crate::explore::spawn_world;
use crate::world::handshake::{self, WRONG_COOKIE};

/// Listens for misdials for the whole run, answering each on its own task.
pub(super) async fn main(shared: Arc<Shared>) -> turmoil::Result {
    let listener = turmoil::net::TcpListener::bind(("0.0.0.0", PORT)).await?;
    let nonces = Arc::new(handshake::nonces(shared.seed, STRANGER));
    loop {
        let (stream, socket) = listener.accept().await?;
        let (shared, nonces) = (Arc::clone(&shared), Arc::clone(&nonces));
        spawn_world(async move {
            answer(&shared, stream, socket, &nonces).await;
        });
    }
}

/// Answers one stream as the node its dialer was told to dial here, and
/// logs what the dialer wrote after the challenge.
async fn answer(
    shared: &Shared,
    mut stream: turmoil::net::TcpStream,
    socket: std::net::SocketAddr,
    nonces: &SeededNonces,
) {
    let Ok((dialer, dialer_nonce)) = handshake::read_hello(&mut stream).await else {
        return;
    };
    let Some(node) = std::str::from_utf8(&dialer).ok().and_then(node_index) else {
        return;
    };
    let Some(named) = shared
        .misdials
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&node)
        .copied()
    else {
        return;
    };
    let name = node_name(named);
    let transcript = Transcript {
        dialer: &dialer,
        acceptor: name.as_bytes(),
        dialer_nonce,
        acceptor_nonce: nonces.next(),
    };
    if handshake::write_challenge(&mut stream, &transcript, WRONG_COOKIE)
        .await
        .is_err()
    {
        return;
    }
    shared
        .challenged
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(node, named);
    let until = tokio::time::Instant::now() + shared.params.heartbeat * 2;
    let wrote = super::listen::listen(&mut stream, until, None).await.read;
    shared.record(
        STRANGER,
        Event::MeshStranger {
            node,
            named,
            socket,
            wrote,
        },
    );
}
