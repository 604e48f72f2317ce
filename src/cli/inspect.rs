//! `humanoid inspect-model`: what a GGUF file holds.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use clap::Args;
use humanoid::llm::config::Config;
use humanoid::llm::gguf::GgufFile;
use humanoid::llm::{ChatTemplate, Tokenizer};

#[derive(Args, Debug)]
pub struct InspectArgs {
    /// A manifest name, a .gguf path, or hf:OWNER/REPO/FILE (default: the default chat model).
    pub model: Option<String>,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
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
    // What the tensor (GPU) path holds with quantized weights: every tensor as stored on the
    // device except the embedding table, which stays on the host (and, tied, is also the
    // device's output head); norms are read as f32.
    let stored = |info: &candle_core::quantized::gguf_file::TensorInfo| -> u64 {
        let n = info.shape.elem_count() as u64;
        let dt = info.ggml_dtype;
        n / dt.block_size() as u64 * dt.type_size() as u64
    };
    let infos = &g.content().tensor_infos;
    let embed = infos.get("token_embd.weight").map_or(0, stored);
    let tied = !infos.contains_key("output.weight");
    let device_weights: u64 = infos
        .iter()
        .filter(|(n, _)| n.as_str() != "token_embd.weight" && n.as_str() != "rope_freqs.weight")
        .map(|(_, i)| {
            if i.shape.dims().len() == 1 {
                i.shape.elem_count() as u64 * 4
            } else {
                stored(i)
            }
        })
        .sum::<u64>()
        + if tied { embed } else { 0 };
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
        // The CPU kernels hold every matrix as Q8_0 blocks (32 int8 + an f32 scale: 1.125
        // bytes a weight); keys and values are f32.
        "memory": {
            "weights_cpu_bytes": cfg.parameter_count() as u64 * 36 / 32,
            "kv_bytes_per_token": (cfg.n_layers * 2 * cfg.kv_dim() * 4) as u64,
            "kv_bytes_4096_tokens": (cfg.n_layers * 2 * cfg.kv_dim() * 4 * 4096) as u64,
            // The tensor path (--device cuda / metal / tensor-cpu), weights kept quantized.
            "weights_tensor_device_bytes": device_weights,
            "weights_tensor_host_bytes": embed,
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
                v => println!("{k}: {v}"),
            }
        }
    }
    Ok(())
}
