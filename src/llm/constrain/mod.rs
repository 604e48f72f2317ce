//! Constrained decoding: token masks from character-level machines.
