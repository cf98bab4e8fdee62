//! Where the handshake's nonces come from: the OS in production
//! ([`OsNonces`]), the run's seed in a simulated world
//! ([`SeededNonces`], which the world hands a node), so a run replays from
//! its seed and a production node's nonces are unguessable.

pub use lanesim_target::handshake::{Nonce, Nonces, SeededNonces};

/// Nonces from the operating system's entropy source (`getrandom`).
#[derive(Clone, Copy, Debug, Default)]
pub struct OsNonces;

impl Nonces for OsNonces {
    fn next(&self) -> Nonce {
        let mut nonce = Nonce::default();
        // getrandom fails only where the OS has no entropy source at all
        // (it waits for the pool at boot): no nonce can be made there.
        getrandom::fill(&mut nonce).expect("the operating system provides entropy");
        nonce
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_nonces_differ() {
        let a = OsNonces.next();
        assert_ne!(a, OsNonces.next());
        assert_ne!(a, Nonce::default());
    }
}
