//! `humanoid validate WORLD`: checks a world file before any model is loaded.

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `validate`.
#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// World TOML files to check.
    #[arg(required = true)]
    pub worlds: Vec<PathBuf>,
}

/// Runs `validate`.
pub fn run(_args: ValidateArgs) -> Result<()> {
    anyhow::bail!("not written yet")
}
