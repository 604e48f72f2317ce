//! `humanoid world generate`: synthetic towns of any size for scale tests; `humanoid world
//! import`: a world of the original Humanoid Agents converted to ours.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use chrono::NaiveDate;
use clap::{Args, Subcommand};
use humanoid::world::import::{self, ImportFiles, ImportOptions};
use humanoid::world::World;

/// `humanoid world ...`.
#[derive(Subcommand, Debug)]
pub enum WorldCommand {
    /// Write a valid synthetic town (homes, workplaces, shared places, relationships).
    Generate(GenerateArgs),
    /// Convert a world of the original Humanoid Agents (map YAML, agent JSON files, daily
    /// events YAML) into our world file, with a warning for each change made to fit.
    Import(ImportArgs),
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

/// Arguments of `world import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The original's map YAML (`World:` places, `Agents:` starting places).
    pub map: PathBuf,
    /// The original's agent JSON files (`specific_agents/*.json`), in the order to list them.
    #[arg(required = true)]
    pub agents: Vec<PathBuf>,
    /// The original's daily events YAML (`Tuesday Jan 03 2023: what happens`).
    #[arg(long)]
    pub events: Option<PathBuf>,
    /// The original's default_agent_config.json: the needs' start values and decay (default:
    /// ours, the paper's rates).
    #[arg(long)]
    pub agent_config: Option<PathBuf>,
    /// The world's name (default: from the map's file name).
    #[arg(long)]
    pub name: Option<String>,
    /// The first simulated day, YYYY-MM-DD (default: the original's, 2023-01-03).
    #[arg(long)]
    pub start_date: Option<NaiveDate>,
    /// Days to simulate, 1–365 (default: 1, or up to the last event).
    #[arg(long)]
    pub days: Option<u32>,
    /// The world file to write.
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Runs a `world` subcommand.
pub fn run(c: WorldCommand) -> Result<()> {
    match c {
        WorldCommand::Generate(a) => generate(a),
        WorldCommand::Import(a) => import_world(a),
    }
}

fn import_world(a: ImportArgs) -> Result<()> {
    if a.out.exists() && !a.force {
        bail!(
            "{} already exists: choose another -o, or pass --force to overwrite it",
            a.out.display()
        );
    }
    let files = ImportFiles {
        map: a.map,
        agents: a.agents,
        events: a.events,
        agent_config: a.agent_config,
    };
    let opts = ImportOptions {
        name: a.name,
        start_date: a.start_date,
        days: a.days,
    };
    let imported = match import::import_files(&files, &opts) {
        Ok(i) => i,
        Err(e) => bail!("{e}\nnothing was written to {}", a.out.display()),
    };
    for w in &imported.warnings {
        eprintln!("warning: {w}");
    }
    std::fs::write(&a.out, &imported.toml)
        .with_context(|| format!("writing {}", a.out.display()))?;
    let w = &imported.world;
    println!(
        "wrote {}: {} ({} agents, {} places, {} day{} from {}; {} warning{})",
        a.out.display(),
        w.name,
        w.agents.len(),
        w.locations.leaves().len(),
        w.days,
        if w.days == 1 { "" } else { "s" },
        w.start_date,
        imported.warnings.len(),
        if imported.warnings.len() == 1 {
            ""
        } else {
            "s"
        }
    );
    Ok(())
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
