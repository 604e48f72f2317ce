//! Worlds: schema, loading and validation, the location tree, the clock.
