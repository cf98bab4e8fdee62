//! The keepalive timer of one generation: a keepalive as soon as the
//! generation is registered and then every quarter heartbeat tick, written
//! through the same write path as every frame, until the generation goes
//! down or a keepalive cannot be written.

use std::sync::Arc;
use std::time::Duration;

use lanesim_target::wire::KEEPALIVE;

use super::connection::Link;

/// Writes `link`'s keepalives, a quarter `tick` apart.
pub(super) async fn run(link: Arc<Link>, tick: Duration) {
    let every = tick / 4;
    loop {
        if link.write_frame(&KEEPALIVE, || {}).await.is_err() {
            return;
        }
        tokio::select! {
            biased;
            () = link.wait_down() => return,
            () = tokio::time::sleep(every) => {}
        }
    }
}
