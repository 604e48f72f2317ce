//! Model store: manifests in `models/` (`NAME.toml`, files in `models/NAME/`), `--model`
//! specs, and resolving them to files on disk (fetching default models with
//! `models/fetch.py`, reading Hugging Face files from the local hf-hub cache, never the
//! network).

mod error;
mod hf;
mod manifest;
mod resolve;
mod spec;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub use error::{ModelStoreError, Result};
pub use hf::{hf_cache_dir, resolve_hf_in, HfCacheEnv};
pub use manifest::{list_manifests, HfSource, Manifest, ModelFile, PipSource, Role};
pub use resolve::{find_manifest, resolve, sha256_file, verify_sha256, ResolvedModel};
pub use spec::ModelSpec;

/// Name of the default chat model, used when the manifests cannot be read.
pub const FALLBACK_CHAT_MODEL: &str = "qwen2.5-coder-1.5b";
/// Environment variable naming the chat model used when `--model` is not given (a manifest
/// name, a `.gguf` path or `hf:...`), in place of the manifest marked default.
pub const CHAT_MODEL_ENV: &str = "HUMANOID_CHAT_MODEL";
/// Name of the default embedding model, used when the manifests cannot be read.
pub const FALLBACK_EMBED_MODEL: &str = "minilm-l6-v2";

/// The models folder: `$HUMANOID_MODELS` if set, else `./models` if it holds manifests, else
/// the crate's own `models/`.
pub fn models_dir() -> PathBuf {
    let cwd = std::env::current_dir().ok();
    models_dir_from(std::env::var_os("HUMANOID_MODELS"), cwd.as_deref())
}

/// [`models_dir`] with the environment value and current folder given as arguments.
pub fn models_dir_from(humanoid_models: Option<OsString>, cwd: Option<&Path>) -> PathBuf {
    if let Some(dir) = humanoid_models.filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(local) = cwd.map(|c| c.join("models")) {
        if has_manifests(&local) {
            return local;
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models")
}

fn has_manifests(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "toml"))
    })
}

/// The manifest in `models_dir` marked `default = true` with the given role.
pub fn default_model_in(models_dir: &Path, role: Role) -> Result<ModelSpec> {
    list_manifests(models_dir)?
        .into_iter()
        .find(|m| m.default && m.role == role)
        .map(|m| ModelSpec::Manifest(m.name))
        .ok_or_else(|| ModelStoreError::NoDefault {
            dir: models_dir.to_path_buf(),
            role: role.to_string(),
        })
}

/// The default chat model: `$HUMANOID_CHAT_MODEL` if set, else the chat manifest marked
/// default (qwen2.5-coder-1.5b).
pub fn default_chat_model() -> Result<ModelSpec> {
    default_chat_model_from(std::env::var_os(CHAT_MODEL_ENV), &models_dir())
}

/// [`default_chat_model`] with the environment value and models folder given as arguments.
pub fn default_chat_model_from(env: Option<OsString>, models_dir: &Path) -> Result<ModelSpec> {
    if let Some(v) = env.filter(|v| !v.is_empty()) {
        let s = v.to_string_lossy();
        return ModelSpec::parse(&s).map_err(|e| ModelStoreError::BadEnv {
            var: CHAT_MODEL_ENV,
            reason: e.to_string(),
        });
    }
    Ok(default_model_in(models_dir, Role::Chat)
        .unwrap_or_else(|_| ModelSpec::Manifest(FALLBACK_CHAT_MODEL.to_string())))
}

/// The default embedding model (the embedding manifest marked default: minilm-l6-v2).
pub fn default_embed_model() -> ModelSpec {
    default_model_in(&models_dir(), Role::Embedding)
        .unwrap_or_else(|_| ModelSpec::Manifest(FALLBACK_EMBED_MODEL.to_string()))
}
