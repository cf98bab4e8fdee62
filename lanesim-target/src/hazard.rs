//! A hazard a target knows it has and accepts.
//!
//! Model. Some promises a design gives up on purpose: a sender with one
//! drain for every peer lets a wedged peer's backlog delay a healthy
//! peer's frames, and its authors may document that as an accepted blast
//! radius. A target declares such a hazard in its capabilities, naming the
//! contract it breaks and why. The contract is still checked on every run;
//! a run that breaks only accepted contracts is not a pass and not a
//! failure: its verdict is *accepted hazard*, counted apart, and every
//! output prints the reason beside it (`lanesim-sims`'s
//! `an_accepted_hazard_is_reported_never_passed`).

/// A contract the target breaks knowingly, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hazard {
    /// The contract's id as the contracts table spells it (`"S9"`,
    /// `"L6"`). An id that names no contract is bad input: every scenario
    /// is refused with the reason.
    pub contract: &'static str,
    /// Why it is accepted, in a sentence; printed with every run that
    /// shows it.
    pub reason: &'static str,
}
