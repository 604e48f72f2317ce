//! `--model` strings: a manifest name, a local path, or `hf:OWNER/NAME[@REVISION]/FILE`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use super::error::{ModelStoreError, Result};

/// What `--model` names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ModelSpec {
    /// A manifest `models/NAME.toml`.
    Manifest(String),
    /// A local file (or folder).
    Path(PathBuf),
    /// A file of a Hugging Face repo, looked up in the local hf-hub cache.
    Hf {
        /// `owner/name`.
        repo: String,
        /// File inside the repo (may contain '/').
        file: String,
        /// Branch, tag or commit (default: main).
        revision: Option<String>,
    },
}

impl ModelSpec {
    /// Parses a `--model` string.
    ///
    /// `hf:OWNER/NAME[@REVISION]/FILE` is a Hugging Face file (the revision may not contain
    /// '/'); a string naming an existing file, ending in `.gguf` or containing a path
    /// separator is a path; anything else is a manifest name.
    pub fn parse(s: &str) -> Result<ModelSpec> {
        let bad = |reason: &str| ModelStoreError::BadSpec {
            spec: s.to_string(),
            reason: reason.to_string(),
        };
        if s.trim().is_empty() {
            return Err(bad("it is empty"));
        }
        if let Some(rest) = s.strip_prefix("hf:") {
            return parse_hf(rest).map_err(|r| bad(&r));
        }
        let looks_like_path = s.to_ascii_lowercase().ends_with(".gguf")
            || s.contains('/')
            || s.contains(std::path::MAIN_SEPARATOR)
            || Path::new(s).is_file();
        if looks_like_path {
            Ok(ModelSpec::Path(PathBuf::from(s)))
        } else {
            Ok(ModelSpec::Manifest(s.to_string()))
        }
    }
}

fn parse_hf(rest: &str) -> std::result::Result<ModelSpec, String> {
    let (owner, after_owner) = rest
        .split_once('/')
        .ok_or("hf: needs OWNER/NAME/FILE, found no '/'")?;
    let (name_rev, file) = after_owner
        .split_once('/')
        .ok_or("hf: needs OWNER/NAME/FILE, found no FILE after the repo")?;
    let (name, revision) = match name_rev.split_once('@') {
        Some((n, r)) => (n, Some(r)),
        None => (name_rev, None),
    };
    let valid_part =
        |p: &str| !p.is_empty() && !p.contains(['@', ' ', '\\']) && p != "." && p != "..";
    if !valid_part(owner) {
        return Err(format!("bad repo owner '{owner}'"));
    }
    if !valid_part(name) {
        return Err(format!("bad repo name '{name}'"));
    }
    if let Some(r) = revision {
        if !valid_part(r) {
            return Err(format!("bad revision '{r}' after '@'"));
        }
    }
    if file
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == ".." || c.contains('\\'))
    {
        return Err(format!(
            "bad file '{file}' (no empty, '.' or '..' components, no '\\\\')"
        ));
    }
    Ok(ModelSpec::Hf {
        repo: format!("{owner}/{name}"),
        file: file.to_string(),
        revision: revision.map(str::to_string),
    })
}

impl FromStr for ModelSpec {
    type Err = ModelStoreError;
    fn from_str(s: &str) -> Result<ModelSpec> {
        ModelSpec::parse(s)
    }
}

impl fmt::Display for ModelSpec {
    /// Writes the spec back in `--model` syntax.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelSpec::Manifest(n) => f.write_str(n),
            ModelSpec::Path(p) => write!(f, "{}", p.display()),
            ModelSpec::Hf {
                repo,
                file,
                revision,
            } => {
                let (owner, name) = repo.split_once('/').unwrap_or((repo.as_str(), ""));
                match revision {
                    Some(r) => write!(f, "hf:{owner}/{name}@{r}/{file}"),
                    None => write!(f, "hf:{repo}/{file}"),
                }
            }
        }
    }
}
