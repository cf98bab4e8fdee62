//! Time, always through `tokio::time`: turmoil virtualises it per simulated
//! host and a paused runtime jumps it, so nothing here may read a wall clock.

pub use std::time::Duration;
pub(crate) use tokio::time::timeout;
