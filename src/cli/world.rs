//! `humanoid world generate`: synthetic towns of any size for scale tests.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use humanoid::world::World;

/// `humanoid world ...`.
#[derive(Subcommand, Debug)]
pub enum WorldCommand {
    /// Write a valid synthetic town (homes, workplaces, shared places, relationships).
    Generate(GenerateArgs),
}

/// Arguments of `world generate`.
#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// Number of agents (1–1000).
    #[arg(long)]
    pub agents: usize,
    /// Seed of the town's names, places and relationships.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The world file to write (refused if it exists).
    #[arg(long, short = 'o')]
    pub out: PathBuf,
}

/// Runs a `world` subcommand.
pub fn run(c: WorldCommand) -> Result<()> {
    match c {
        WorldCommand::Generate(a) => generate(a),
    }
}

fn generate(a: GenerateArgs) -> Result<()> {
    if !(1..=1000).contains(&a.agents) {
        bail!("--agents {}: must be between 1 and 1000", a.agents);
    }
    if a.out.exists() {
        bail!("{} already exists: choose another -o", a.out.display());
    }
    let world = World::generated(a.agents, a.seed);
    let text = world.to_toml();
    // What we write must load: check before writing.
    World::parse(&text, &a.out).context("the generated world does not validate (a bug)")?;
    std::fs::write(&a.out, text).with_context(|| format!("writing {}", a.out.display()))?;
    println!(
        "wrote {}: {} ({} agents, {} places)",
        a.out.display(),
        world.name,
        world.agents.len(),
        world.locations.leaves().len()
    );
    Ok(())
}
