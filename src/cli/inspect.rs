//! `humanoid inspect-model`: what a GGUF file holds.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use clap::Args;
use humanoid::llm::config::Config;
use humanoid::llm::footprint::{self, LoadShape};
use humanoid::llm::gguf::GgufFile;
use humanoid::llm::model::WeightFormat;
use humanoid::llm::DeviceChoice;
use humanoid::llm::{ChatTemplate, Tokenizer};

#[derive(Args, Debug)]
pub struct InspectArgs {
    /// A manifest name, a .gguf path, or hf:OWNER/REPO/FILE (default: the default chat model).
    pub model: Option<String>,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
    /// The device whose memory to figure: cpu, tensor-cpu, cuda[:N] or metal[:N].
    #[arg(long, default_value = "cpu")]
    pub device: DeviceChoice,
    /// How weights would be held: quantized, q8 or f32 (as `--weights` of the other commands).
    #[arg(long, default_value = "quantized", value_parser = super::parse_weights)]
    pub weights: WeightFormat,
    /// Longest prompt + reply, in tokens.
    #[arg(long, default_value_t = 4096)]
    pub context: usize,
    /// The prefix cache budget, MiB.
    #[arg(long, default_value_t = humanoid::llm::DEFAULT_PREFIX_CACHE_MIB)]
    pub prefix_cache_mib: usize,
    /// Most tokens in one forward step.
    #[arg(long, default_value_t = 1024)]
    pub max_batched_tokens: usize,
}

pub fn run(a: InspectArgs) -> Result<()> {
    let resolved = super::resolve_model(a.model.as_deref())?;
    let g = GgufFile::open(&resolved.path)?;
    let cfg = Config::from_gguf(&g)?;
    let tok = Tokenizer::from_gguf(&g).context("building the tokenizer")?;
    let template = ChatTemplate::from_gguf(&g, &tok)?;
    let mut quant: BTreeMap<String, usize> = BTreeMap::new();
    for info in g.content().tensor_infos.values() {
        *quant.entry(format!("{:?}", info.ggml_dtype)).or_default() += 1;
    }
    let shape = LoadShape {
        device: a.device,
        format: a.weights,
        context: a.context,
        prefix_cache_bytes: a.prefix_cache_mib << 20,
        max_batched_tokens: a.max_batched_tokens,
    };
    let need = footprint::estimate(&g, &cfg, &shape);
    let available = footprint::available_bytes(a.device);
    let fits = footprint::check(need.clone(), a.device).is_ok();
    let name = |id: Option<u32>| id.and_then(|i| tok.token_str(i).map(|s| format!("{s} ({i})")));
    let stops: Vec<String> = tok
        .stop_ids()
        .iter()
        .filter_map(|&i| name(Some(i)))
        .collect();
    let info = serde_json::json!({
        "file": resolved.path,
        "size_bytes": g.file_len(),
        "sha256": resolved.sha256,
        "name": g.get_str("general.name").ok(),
        "architecture": cfg.arch_name,
        "quantization": quant,
        "parameters": cfg.parameter_count(),
        // What a load on --device with these settings takes, and what is free there.
        "memory": {
            "device": need.device,
            "weights": a.weights.as_str(),
            "context": a.context,
            "weights_bytes": need.weights_bytes,
            "host_weights_bytes": need.host_weights_bytes,
            "kv_bytes_per_token": need.kv_bytes_per_token,
            "kv_bytes": need.kv_bytes,
            "scratch_bytes": need.scratch_bytes,
            "total_bytes": need.total_bytes(),
            "available_bytes": available,
            "fits": fits,
        },
        "layers": cfg.n_layers,
        "hidden": cfg.hidden,
        "heads": cfg.n_heads,
        "kv_heads": cfg.n_kv_heads,
        "head_dim": cfg.head_dim,
        "ffn": cfg.ffn,
        "context_length": cfg.context_length,
        "vocab": cfg.vocab,
        "sliding_window": cfg.sliding_window.map(|(w, _)| w),
        "bos": name(tok.bos_id()),
        "eos": name(tok.eos_id()),
        "add_bos": tok.add_bos(),
        "stop_tokens": stops,
        "chat_template": g.get_str("tokenizer.chat_template").ok(),
        "chat_template_loaded": template.is_some(),
    });
    if a.json {
        println!("{}", serde_json::to_string_pretty(&info)?);
        return Ok(());
    }
    if let serde_json::Value::Object(map) = info {
        for (k, v) in map {
            match v {
                serde_json::Value::String(s) if k == "chat_template" => {
                    println!("{k}:\n{s}")
                }
                _ if k == "memory" => println!("memory: {}", memory_line(&need, available)),
                v => println!("{k}: {v}"),
            }
        }
    }
    Ok(())
}

/// The memory figures in words: "on cpu: weights 1,016 MiB, keys and values ...".
fn memory_line(n: &footprint::Footprint, available: Option<u64>) -> String {
    let mib = |b: u64| format!("{:.0} MiB", b as f64 / 1048576.0);
    let host = if n.host_weights_bytes > 0 {
        format!(" (+ {} on the host)", mib(n.host_weights_bytes))
    } else {
        String::new()
    };
    let free = match available {
        Some(a) if a >= n.total_bytes() => format!("; {} free: fits", mib(a)),
        Some(a) => format!("; only {} free: does not fit", mib(a)),
        None => "; free memory unknown".into(),
    };
    format!(
        "on {}: weights {}{host}, keys and values {} ({:.0} KiB a token), working buffers {}; \
         {} in all{free}",
        n.device,
        mib(n.weights_bytes),
        mib(n.kv_bytes),
        n.kv_bytes_per_token as f64 / 1024.0,
        mib(n.scratch_bytes),
        mib(n.total_bytes()),
    )
}
