//! A remote OpenAI-compatible server (vLLM, SGLang, llama.cpp's server, our own `serve-llm`)
//! as the model backend: the same [`Request`](crate::llm::Request)s as the in-process
//! engine, sent as concurrent HTTP requests.
//!
//! [`http`] holds timeouts, retries and the fatal/per-request line, [`local`] the model's
//! tokenizer and chat template, [`choose`] how `choose` is scored ([`forced`] on servers
//! without `echo`), [`detect`] which way a server offers, [`constrain`] how generations are
//! constrained there, [`client`] the backend.

pub mod choose;
pub mod client;
pub mod constrain;
pub mod detect;
pub mod forced;
pub mod http;
mod jobs;
pub mod local;

use std::path::PathBuf;

use crate::formats::needs::YesThresholds;
use serde::{Deserialize, Serialize};

pub use choose::ChooseMethod;
pub use client::RemoteClient;
pub use constrain::ConstraintMethod;

/// How to reach the server; recorded in a run's `config.json` so `resume` reconnects.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RemoteConfig {
    /// Base URL (`http://host:port` or `http://host:port/v1`).
    pub url: String,
    /// The model name the server serves.
    pub model: String,
    /// Environment variable holding the API key (the key itself is never recorded).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Most requests in flight at once.
    pub max_inflight: usize,
    /// Seconds one request may take before it is retried.
    pub timeout_secs: f64,
    /// Retries of a failed request (transport errors, timeouts, 408/429/5xx, garbage).
    pub retries: u32,
    /// The tokenizer (`.gguf` or `tokenizer.json`) of the served model.
    pub tokenizer: String,
    /// Longest prompt + reply, in tokens.
    pub context: usize,
}

impl RemoteConfig {
    /// Defaults for everything but the URL, model and tokenizer.
    pub fn new(url: &str, model: &str, tokenizer: &str) -> Self {
        Self {
            url: url.to_string(),
            model: model.to_string(),
            api_key_env: None,
            max_inflight: 16,
            timeout_secs: 120.0,
            retries: 4,
            tokenizer: tokenizer.to_string(),
            context: 4096,
        }
    }
}

/// Everything that can go wrong connecting to a server.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("cannot use the model server at {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("tokenizer {path}: {reason}")]
    Tokenizer { path: String, reason: String },
    #[error("--api-key-env {0}: the variable is not set")]
    MissingKey(String),
    #[error("{0}")]
    Invalid(String),
}

/// The local model `model` names (a manifest name or a path), fetched if absent: its file
/// gives a served model's tokenizer, its manifest the need thresholds tuned for it.
pub fn local_model(model: &str) -> Option<crate::model_store::ResolvedModel> {
    let spec = crate::model_store::ModelSpec::parse(model).ok()?;
    crate::model_store::resolve(&spec, &crate::model_store::models_dir(), true).ok()
}

/// Where a tokenizer for `model` is, if it names a local model (a manifest name or a path).
pub fn default_tokenizer(model: &str) -> Option<PathBuf> {
    local_model(model).map(|m| m.path)
}

/// The need thresholds (`yes_threshold`) of the local model a served `model` stands for:
/// those of its manifest when the client's tokenizer is that model's own file (the same
/// weights, presumably, so the same calibration); else none (0.5 each). Never fetches: a
/// model absent here cannot be the tokenizer's file.
pub fn local_thresholds(model: &str, tokenizer: &str) -> Option<YesThresholds> {
    let spec = crate::model_store::ModelSpec::parse(model).ok()?;
    let local =
        crate::model_store::resolve(&spec, &crate::model_store::models_dir(), false).ok()?;
    let same = std::path::Path::new(tokenizer) == local.path;
    same.then_some(local.manifest?.yes_threshold)
}
