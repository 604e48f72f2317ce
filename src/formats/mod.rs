//! The simulation's text formats, below every other layer: the clock and plan lines
//! ([`clock`]), the emoji set ([`emoji`]), the needs' names and thresholds ([`needs`]) and
//! writing systems ([`script`]). The world, the agents, the checker and the engine's
//! constraint machines all read and write them through here.

pub mod clock;
pub mod emoji;
pub mod needs;
pub mod script;
