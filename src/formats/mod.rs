//! The simulation's text formats, below every other layer: the clock and plan lines
//! ([`clock`]) and the emoji set ([`emoji`]). The world, the agents, the checker and the
//! engine's constraint machines all read and write them through here.

pub mod clock;
pub mod emoji;
