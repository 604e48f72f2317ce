//! `--backend openai`: the options of a run on a remote OpenAI-compatible server, and the
//! connection (recorded in the run's config.json, so `resume` reconnects).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use humanoid::llm::Inference;
use humanoid::model_store::sha256_file;
use humanoid::remote::{default_tokenizer, local_thresholds, RemoteClient, RemoteConfig};
use humanoid::sim::ModelInfo;
use humanoid::world::YesThresholds;

use super::ModelArgs;

/// Where the chat model of a run runs.
#[derive(Args, Debug, Clone)]
pub struct BackendArgs {
    /// `local` (the in-process engine) or `openai` (an OpenAI-compatible server at --url;
    /// --model is then the server's model name).
    #[arg(long, default_value = "local", value_parser = ["local", "openai"])]
    pub backend: String,
    /// The server's base URL (`http://host:port` or `http://host:port/v1`).
    #[arg(long)]
    pub url: Option<String>,
    /// Environment variable holding the server's API key (sent as a bearer token).
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// Most requests in flight at once (a step's batch is sent concurrently).
    #[arg(long, default_value_t = 16)]
    pub max_inflight: usize,
    /// Seconds one request may take before it is retried.
    #[arg(long, default_value_t = 120.0)]
    pub request_timeout: f64,
    /// Retries of a failed request, with exponential backoff, before the run stops.
    #[arg(long, default_value_t = 4)]
    pub retries: u32,
    /// The served model's tokenizer and chat template: a .gguf or tokenizer.json (default:
    /// the local model of that name, e.g. smollm2-135m).
    #[arg(long)]
    pub tokenizer: Option<PathBuf>,
}

impl BackendArgs {
    /// The remote configuration, if `--backend openai` (`model` is --model, `context` the
    /// prompt budget).
    pub fn remote(&self, model: Option<&str>, context: usize) -> Result<Option<RemoteConfig>> {
        if self.backend != "openai" {
            if self.url.is_some() {
                bail!("--url needs --backend openai");
            }
            return Ok(None);
        }
        let Some(url) = &self.url else {
            bail!("--backend openai needs --url (e.g. http://127.0.0.1:8000/v1)");
        };
        let Some(model) = model else {
            bail!("--backend openai needs --model NAME (the server's model name)");
        };
        let tokenizer = match &self.tokenizer {
            Some(t) => t.clone(),
            None => default_tokenizer(model).with_context(|| {
                format!(
                    "no local tokenizer for model {model:?}: pass --tokenizer PATH (a .gguf or tokenizer.json of the served model)"
                )
            })?,
        };
        let mut cfg = RemoteConfig::new(url, model, &tokenizer.display().to_string());
        cfg.api_key_env = self.api_key_env.clone();
        cfg.max_inflight = self.max_inflight;
        cfg.timeout_secs = self.request_timeout;
        cfg.retries = self.retries;
        cfg.context = context.max(2);
        Ok(Some(cfg))
    }
}

/// Connects to the server, saying on stderr how `choose` will be computed.
pub fn connect(cfg: RemoteConfig) -> Result<RemoteClient> {
    let client = RemoteClient::connect(cfg)?;
    eprintln!(
        "remote: {} model {}; choose uses {}; constraints: {}",
        client.url(),
        client.config().model,
        client.choose_method(),
        client.constraint_method()
    );
    Ok(client)
}

/// A run's chat model, opened: a server's client or the local engine.
pub struct Opened {
    pub inference: Box<dyn Inference>,
    /// As recorded in `config.json` (a server's URL stands for the path).
    pub info: ModelInfo,
    /// The model's name, for messages.
    pub name: String,
    /// `remote`, or the local device.
    pub device: String,
    /// The model's need thresholds from its manifest (none for a file without one, or a
    /// served model whose tokenizer is not a local model's own file).
    pub yes_threshold: YesThresholds,
}

/// Connects to the server of `remote`, or loads the local model of `model` (the device
/// checked first, so one this build or machine lacks fails before the model is loaded).
pub fn open(remote: Option<&RemoteConfig>, model: &ModelArgs) -> Result<Opened> {
    if let Some(cfg) = remote {
        let client = connect(cfg.clone())?;
        let info = ModelInfo {
            spec: cfg.model.clone(),
            path: client.url().to_string(),
            sha256: String::new(),
        };
        let yes_threshold = local_thresholds(&cfg.model, &cfg.tokenizer);
        if let Some(t) = &yes_threshold {
            if !t.is_empty() {
                eprintln!(
                    "remote: the need thresholds of the local model {} apply: {}",
                    cfg.model,
                    serde_json::to_string(t)?
                );
            }
        }
        return Ok(Opened {
            inference: Box::new(client),
            info,
            name: cfg.model.clone(),
            device: "remote".into(),
            yes_threshold: yes_threshold.unwrap_or_default(),
        });
    }
    model
        .device
        .candle_device()
        .with_context(|| format!("--device {}", model.device))?;
    let (resolved, engine) = model.load()?;
    let info = ModelInfo {
        spec: model.model.clone().unwrap_or_else(|| resolved.name.clone()),
        path: resolved.path.display().to_string(),
        sha256: sha256_file(&resolved.path)?,
    };
    Ok(Opened {
        inference: Box::new(engine),
        info,
        device: model.device.to_string(),
        yes_threshold: resolved
            .manifest
            .map(|m| m.yes_threshold)
            .unwrap_or_default(),
        name: resolved.name,
    })
}
