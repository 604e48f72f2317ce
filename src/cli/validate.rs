//! `humanoid validate WORLD...`: checks world files before any model is loaded, printing one
//! `ok:` line per valid file and every problem of the others.

use anyhow::Result;
use clap::Args;
use humanoid::world::World;
use std::path::PathBuf;

/// Arguments of `validate`.
#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// World TOML files to check.
    #[arg(required = true)]
    pub worlds: Vec<PathBuf>,
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// Runs `validate`: fails (after checking every file) if any file is invalid.
pub fn run(args: ValidateArgs) -> Result<()> {
    let mut failed = 0;
    for path in &args.worlds {
        match World::load(path) {
            Ok(w) => println!(
                "ok: {} ({}, {}, {})",
                path.display(),
                count(w.agents.len(), "agent"),
                count(w.locations.leaves().len(), "location"),
                count(w.days as usize, "day")
            ),
            Err(e) => {
                eprintln!("{e}");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        anyhow::bail!(
            "{failed} of {} world files are invalid (see above)",
            args.worlds.len()
        );
    }
    Ok(())
}
