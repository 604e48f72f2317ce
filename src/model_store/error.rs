//! The error type of the model store: every message names the file, manifest or field at fault
//! and says what to do about it.

use std::path::PathBuf;

/// Result alias of the model store.
pub type Result<T> = std::result::Result<T, ModelStoreError>;

/// Everything that can go wrong while reading manifests and finding model files.
#[derive(Debug, thiserror::Error)]
pub enum ModelStoreError {
    /// A file or folder could not be read (or a process could not be started).
    #[error("cannot read {}: {source}{hint}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
        /// What to do (may be empty; starts with "; " otherwise).
        hint: String,
    },

    /// A manifest is not valid TOML or does not match the manifest schema.
    #[error(
        "manifest {}{}: {message}; fix the manifest (fields: name, role, architecture, default, \
         main, license, [[files]] name/sha256/size/pip/hf)",
        path.display(),
        line.map(|l| format!(", line {l}")).unwrap_or_default()
    )]
    ManifestParse {
        /// The manifest file.
        path: PathBuf,
        /// 1-based line of the error, when known.
        line: Option<usize>,
        /// The parser's message (names the field).
        message: String,
    },

    /// A manifest parsed but one of its fields has a bad value.
    #[error("manifest {}: field `{field}`: {message}", path.display())]
    ManifestInvalid {
        /// The manifest file.
        path: PathBuf,
        /// The field, e.g. `files[1].sha256`.
        field: String,
        /// What is wrong and what is expected.
        message: String,
    },

    /// An environment variable holds a value that cannot be used.
    #[error("environment variable {var}: {reason}")]
    BadEnv {
        /// The variable.
        var: &'static str,
        /// What is wrong with its value.
        reason: String,
    },

    /// No manifest has the requested name.
    #[error(
        "no model manifest named '{name}' in {} (known: {}); pass a manifest name, a local \
         .gguf path (e.g. ./{name}.gguf), or hf:OWNER/NAME/FILE, or set HUMANOID_MODELS to \
         the folder that holds NAME.toml",
        dir.display(),
        if known.is_empty() { "none".to_string() } else { known.join(", ") }
    )]
    UnknownManifest {
        /// The requested name.
        name: String,
        /// The models folder searched.
        dir: PathBuf,
        /// Names of the manifests found there.
        known: Vec<String>,
    },

    /// No manifest is marked `default = true` for a role.
    #[error(
        "no manifest in {} is marked `default = true` with role = \"{role}\"; mark one, or pass \
         --model",
        dir.display()
    )]
    NoDefault {
        /// The models folder.
        dir: PathBuf,
        /// The role (chat or embedding).
        role: String,
    },

    /// Files of a manifest model are absent (after a fetch attempt, or with fetching off).
    #[error("model '{model}': {problems} in {}.\n{fetch}\n{manual}", dir.display())]
    ModelFilesMissing {
        /// The manifest name.
        model: String,
        /// The model's folder, `models/<name>/`.
        dir: PathBuf,
        /// Which files are missing or incomplete.
        problems: String,
        /// What happened with the fetch step and how to run it.
        fetch: String,
        /// How to supply each file by hand.
        manual: String,
    },

    /// A file has a different size from the one its manifest states.
    #[error(
        "{} is {actual} bytes but manifest {} says {expected}; delete the file and fetch it \
         again (python3 models/fetch.py {model}), or fix `size` in the manifest",
        path.display(),
        manifest.display()
    )]
    SizeMismatch {
        /// The model file.
        path: PathBuf,
        /// The manifest.
        manifest: PathBuf,
        /// The manifest name.
        model: String,
        /// Size from the manifest.
        expected: u64,
        /// Size on disk.
        actual: u64,
    },

    /// A file's sha256 differs from the expected digest.
    #[error(
        "sha256 mismatch for {}: expected {expected}, got {actual}; the file is corrupt or a \
         different file: delete it and fetch it again (python3 models/fetch.py NAME) or supply \
         the right file",
        path.display()
    )]
    Sha256Mismatch {
        /// The file.
        path: PathBuf,
        /// Expected digest (lowercase hex).
        expected: String,
        /// Actual digest (lowercase hex).
        actual: String,
    },

    /// A `--model` path that does not exist.
    #[error(
        "model file {} does not exist; pass an existing .gguf path, a manifest name, or \
         hf:OWNER/NAME/FILE",
        path.display()
    )]
    LocalPathMissing {
        /// The path as given.
        path: PathBuf,
    },

    /// A `--model` string that cannot be parsed.
    #[error(
        "bad --model '{spec}': {reason}; expected a manifest name (e.g. smollm2-135m), a local \
         .gguf path, or hf:OWNER/NAME[@REVISION]/FILE"
    )]
    BadSpec {
        /// The string as given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A Hugging Face file is not in the local hf-hub cache (humanoid never downloads it).
    #[error(
        "hf:{repo}/{file} (revision {revision}) is not in the Hugging Face cache at {}: \
         {detail}. humanoid never downloads from Hugging Face (HF_HUB_OFFLINE=1 or not): \
         download it with `huggingface-cli download {repo} {file}{rev_flag}` on a connected \
         machine and copy the cache (set HF_HUB_CACHE to where it lies), or pass a local path",
        cache.display(),
        rev_flag = if revision == "main" { String::new() } else { format!(" --revision {revision}") }
    )]
    HfNotCached {
        /// `owner/name`.
        repo: String,
        /// File inside the repo.
        file: String,
        /// Revision looked up ("main" by default).
        revision: String,
        /// The cache folder searched.
        cache: PathBuf,
        /// Which part of the layout is missing.
        detail: String,
    },

    /// No Hugging Face cache folder can be determined.
    #[error(
        "cannot locate the Hugging Face cache: none of HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME, \
         HOME is set; set HF_HUB_CACHE to the cache folder, or pass a local path"
    )]
    NoHfCache,
}

impl ModelStoreError {
    /// An [`ModelStoreError::Io`] error with a hint (`""` for none).
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error, hint: &str) -> Self {
        let hint = if hint.is_empty() {
            String::new()
        } else {
            format!("; {hint}")
        };
        ModelStoreError::Io {
            path: path.into(),
            source,
            hint,
        }
    }
}
