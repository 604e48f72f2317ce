//! Hugging Face files through the local hf-hub cache, without any network access.
//!
//! Layout (as hf-hub and `huggingface-cli` write it): `CACHE/models--OWNER--NAME/refs/REV`
//! holds a commit hash; the file is `CACHE/models--OWNER--NAME/snapshots/HASH/FILE` (usually a
//! symlink into `blobs/`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use hf_hub::{Repo, RepoType};

use super::error::{ModelStoreError, Result};

/// The environment variables that locate the hf-hub cache (empty values count as unset).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HfCacheEnv {
    /// `$HF_HUB_CACHE`: the cache folder itself.
    pub hf_hub_cache: Option<OsString>,
    /// `$HF_HOME`: the cache is `$HF_HOME/hub`.
    pub hf_home: Option<OsString>,
    /// `$XDG_CACHE_HOME`: the cache is `$XDG_CACHE_HOME/huggingface/hub` (as huggingface_hub).
    pub xdg_cache_home: Option<OsString>,
    /// `$HOME` (or `%USERPROFILE%`): the cache is `~/.cache/huggingface/hub`.
    pub home: Option<OsString>,
}

impl HfCacheEnv {
    /// Reads the variables from this process's environment.
    pub fn from_process() -> HfCacheEnv {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        HfCacheEnv {
            hf_hub_cache: var("HF_HUB_CACHE"),
            hf_home: var("HF_HOME"),
            xdg_cache_home: var("XDG_CACHE_HOME"),
            home: var("HOME").or_else(|| var("USERPROFILE")),
        }
    }

    /// The cache folder: `HF_HUB_CACHE`, else `HF_HOME/hub`, else
    /// `XDG_CACHE_HOME/huggingface/hub`, else `HOME/.cache/huggingface/hub`.
    pub fn cache_dir(&self) -> Option<PathBuf> {
        let set = |v: &Option<OsString>| v.clone().filter(|v| !v.is_empty()).map(PathBuf::from);
        if let Some(p) = set(&self.hf_hub_cache) {
            return Some(p);
        }
        if let Some(p) = set(&self.hf_home) {
            return Some(p.join("hub"));
        }
        if let Some(p) = set(&self.xdg_cache_home) {
            return Some(p.join("huggingface").join("hub"));
        }
        set(&self.home).map(|p| p.join(".cache").join("huggingface").join("hub"))
    }
}

/// The hf-hub cache folder of this process's environment (see [`HfCacheEnv::cache_dir`]).
pub fn hf_cache_dir() -> Result<PathBuf> {
    HfCacheEnv::from_process()
        .cache_dir()
        .ok_or(ModelStoreError::NoHfCache)
}

/// Finds `file` of model repo `repo` (`owner/name`) at `revision` (default main) in the cache
/// folder `cache_dir`. Never touches the network: a missing piece is
/// [`ModelStoreError::HfNotCached`] naming what is missing.
pub fn resolve_hf_in(
    cache_dir: &Path,
    repo: &str,
    file: &str,
    revision: Option<&str>,
) -> Result<PathBuf> {
    let rev = revision.unwrap_or("main");
    let not_cached = |detail: String| ModelStoreError::HfNotCached {
        repo: repo.to_string(),
        file: file.to_string(),
        revision: rev.to_string(),
        cache: cache_dir.to_path_buf(),
        detail,
    };
    for (what, value) in [("repo", repo), ("revision", rev), ("file", file)] {
        if value.is_empty() || value.split(['/', '\\']).any(|c| c == "..") {
            return Err(ModelStoreError::BadSpec {
                spec: format!("hf:{repo}@{rev}/{file}"),
                reason: format!("bad {what} '{value}' (empty or with a '..' component)"),
            });
        }
    }
    let hf_repo = Repo::with_revision(repo.to_string(), RepoType::Model, rev.to_string());
    let repo_dir = cache_dir.join(hf_repo.folder_name());
    if !repo_dir.is_dir() {
        return Err(not_cached(format!("no folder {}", repo_dir.display())));
    }
    let ref_path = push_components(repo_dir.join("refs"), rev);
    let snapshots = repo_dir.join("snapshots");
    let commit = match std::fs::read_to_string(&ref_path) {
        Ok(text) => text.trim().to_string(),
        // A commit hash given as the revision needs no ref file.
        Err(_) if is_commit_hash(rev) && snapshots.join(rev).is_dir() => rev.to_string(),
        Err(e) => {
            return Err(not_cached(format!(
                "cannot read the ref {} ({e})",
                ref_path.display()
            )))
        }
    };
    if commit.is_empty() || commit.contains(['/', '\\']) || commit == "." || commit == ".." {
        return Err(not_cached(format!(
            "the ref {} holds '{commit}', not a commit hash",
            ref_path.display()
        )));
    }
    let path = push_components(snapshots.join(&commit), file);
    if path.is_file() {
        return Ok(path);
    }
    let detail = if std::fs::symlink_metadata(&path).is_ok() {
        format!(
            "{} is a broken link (its blob is missing) or not a file",
            path.display()
        )
    } else {
        format!("no file {}", path.display())
    };
    Err(not_cached(detail))
}

/// Appends a '/'-separated relative path component by component.
fn push_components(mut base: PathBuf, rel: &str) -> PathBuf {
    for c in rel.split('/').filter(|c| !c.is_empty()) {
        base.push(c);
    }
    base
}

fn is_commit_hash(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}
