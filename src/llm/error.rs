//! The engine's error type.

use std::path::{Path, PathBuf};

/// Everything that can go wrong loading or running a model.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a valid GGUF file: {reason}")]
    BadGguf { path: PathBuf, reason: String },
    #[error("{path}: GGUF metadata key `{key}` is missing or has the wrong type")]
    MissingKey { path: PathBuf, key: String },
    #[error("{path}: tensor `{name}` is missing or malformed: {reason}")]
    BadTensor {
        path: PathBuf,
        name: String,
        reason: String,
    },
    #[error("unsupported architecture `{0}` (supported: llama, mistral, qwen2, qwen3, phi3, gemma2, gemma3)")]
    UnsupportedArchitecture(String),
    /// A feature of the file's architecture that we do not implement (never approximated).
    #[error("{}: {what} is not implemented (the model would run wrongly without it)", path.display())]
    Unsupported {
        path: std::path::PathBuf,
        what: String,
    },
    #[error("unsupported tensor type {dtype} for `{name}` (supported: F32, F16, Q4_0, Q4_1, Q4_K, Q5_K, Q6_K, Q8_0)")]
    UnsupportedDtype { name: String, dtype: String },
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    #[error("chat template: {0}")]
    Template(String),
    #[error("prompt of {tokens} tokens does not fit the context budget of {budget} tokens")]
    OverBudget { tokens: usize, budget: usize },
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    #[error("{0}")]
    Device(String),
    /// The load would not fit the free memory (checked before anything is allocated).
    #[error("{0}")]
    TooLarge(super::footprint::TooLarge),
    /// The engine behind a server stopped (it panicked or could not start): every later
    /// request fails the same way.
    #[error("the engine stopped: {0}")]
    EngineStopped(String),
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
    /// An error loading a model file that does not name the file by itself (an unsupported
    /// architecture, bad tokenizer metadata, ...), with the file.
    #[error("{}: {inner}", path.display())]
    InFile { path: PathBuf, inner: Box<LlmError> },
}

impl LlmError {
    /// This error, naming the model file `path` if it does not already.
    pub fn in_file(self, path: &Path) -> Self {
        match self {
            LlmError::Io { .. }
            | LlmError::BadGguf { .. }
            | LlmError::MissingKey { .. }
            | LlmError::BadTensor { .. }
            | LlmError::InFile { .. } => self,
            other => LlmError::InFile {
                path: path.to_path_buf(),
                inner: Box::new(other),
            },
        }
    }
}

/// The OpenAI-style error `type` of the 503 a server answers once its engine has stopped
/// (serve-llm writes it; the remote client stops the run on it rather than retrying).
pub const ENGINE_STOPPED: &str = "engine_stopped";

/// Shorthand for results of the engine.
pub type Result<T> = std::result::Result<T, LlmError>;
