//! Real mode's clock, the same for every world: wall time since the run
//! began, divided by the scenario's `real_time_scale`.
//!
//! Model. A world's log reads time from its clock, virtual in simulation
//! and this one in real mode (each world's `Clock::Real`). Real mode
//! (`crate::real`) drives the worlds and judges them through `run`, so it
//! sits above both; the clock the worlds read lives here, with them, and
//! `real` re-exports it (`real::RealClock`) beside its measure of its own
//! lateness.

use std::time::Duration;

/// Real mode's clock, the same for every world: wall time since `start`,
/// divided by the scenario's `real_time_scale`, so the log reads in the
/// scenario's own units.
#[derive(Clone, Copy, Debug)]
pub struct RealClock {
    /// When the run began.
    pub start: std::time::Instant, // wall-clock: ok (real mode)
    /// The scenario's `real_time_scale`.
    pub scale: f64,
}

impl RealClock {
    /// A clock starting now. wall-clock: ok (real mode)
    pub fn starting(scale: f64) -> Self {
        Self {
            start: std::time::Instant::now(), // wall-clock: ok (real mode)
            scale,
        }
    }

    /// Scenario time since the start.
    pub fn now(&self) -> Duration {
        self.start.elapsed().div_f64(self.scale) // wall-clock: ok (real mode)
    }

    /// `d` of scenario time as wall time.
    pub fn wall(&self, d: Duration) -> Duration {
        d.mul_f64(self.scale)
    }
}
