//! Model hyper-parameters read from GGUF metadata, for the llama family, qwen2 and gemma3.

use super::error::{LlmError, Result};
use super::gguf::GgufFile;

/// Supported architectures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// Llama, Mistral, SmolLM2 and friends (`general.architecture = llama | mistral`).
    Llama,
    /// Qwen2 / Qwen2.5: the llama block with biases on the Q, K and V projections and NEOX
    /// (rotate-halves) RoPE.
    Qwen2,
    /// Gemma 3: QK norms, post-norms, GELU, sliding-window layers, scaled embeddings.
    Gemma3,
}

/// Everything the forward pass needs to know about the network's shape.
#[derive(Clone, Debug)]
pub struct Config {
    pub arch: Arch,
    pub arch_name: String,
    pub hidden: usize,
    pub n_layers: usize,
    pub n_heads: usize,
    pub n_kv_heads: usize,
    pub head_dim: usize,
    pub ffn: usize,
    pub vocab: usize,
    pub context_length: usize,
    pub eps: f32,
    /// RoPE base of global-attention layers.
    pub rope_base: f32,
    /// RoPE base of sliding-window layers (gemma3).
    pub rope_base_local: f32,
    /// Rotate halves (NEOX) rather than adjacent pairs.
    pub rope_neox: bool,
    /// Sliding window size and the period of global layers (every `n`th layer is global).
    pub sliding_window: Option<(usize, usize)>,
    /// Multiply embeddings by sqrt(hidden).
    pub scale_embeddings: bool,
    /// Attention score scale.
    pub attn_scale: f32,
    /// The Q, K and V projections carry biases (`blk.N.attn_{q,k,v}.bias`), added after the
    /// projection and before RoPE (qwen2).
    pub qkv_bias: bool,
}

impl Config {
    /// Reads the hyper-parameters of a GGUF model, with an error naming any missing key.
    pub fn from_gguf(g: &GgufFile) -> Result<Self> {
        let arch_name = g.get_str("general.architecture")?.to_string();
        let arch = match arch_name.as_str() {
            "llama" | "mistral" => Arch::Llama,
            "qwen2" => Arch::Qwen2,
            "gemma3" => Arch::Gemma3,
            other => return Err(LlmError::UnsupportedArchitecture(other.to_string())),
        };
        let key = |k: &str| format!("{arch_name}.{k}");
        let hidden = g.get_usize(&key("embedding_length"))?;
        let n_layers = g.get_usize(&key("block_count"))?;
        let n_heads = g.get_usize(&key("attention.head_count"))?;
        let n_kv_heads = g
            .opt(&key("attention.head_count_kv"), GgufFile::get_usize)?
            .unwrap_or(n_heads);
        let head_dim = match g.opt(&key("attention.key_length"), GgufFile::get_usize)? {
            Some(d) => d,
            None => hidden / n_heads.max(1),
        };
        let ffn = g.get_usize(&key("feed_forward_length"))?;
        let context_length = g.get_usize(&key("context_length"))?;
        let eps = g.get_f32(&key("attention.layer_norm_rms_epsilon"))?;
        let vocab = g.get_str_array("tokenizer.ggml.tokens")?.len();
        let bad = |reason: String| LlmError::BadGguf {
            path: g.path().to_path_buf(),
            reason,
        };
        // Every layer has its own tensors: a block count the file cannot hold is corrupt (and
        // must not size an allocation).
        let n_tensors = g.content().tensor_infos.len();
        if n_layers == 0 || n_layers > n_tensors {
            return Err(bad(format!(
                "`{}` = {n_layers}, but the file holds {n_tensors} tensors (at least one per block)",
                key("block_count")
            )));
        }
        if n_heads == 0 || n_kv_heads == 0 || n_heads % n_kv_heads != 0 || head_dim % 2 != 0 {
            return Err(bad(format!(
                "inconsistent attention shape: {n_heads} heads, {n_kv_heads} kv heads, head size {head_dim}"
            )));
        }
        if hidden % 32 != 0
            || ffn % 32 != 0
            || (n_heads * head_dim) % 32 != 0
            || (n_kv_heads * head_dim) % 32 != 0
        {
            return Err(bad(format!(
                "dimensions must be multiples of 32 (hidden {hidden}, ffn {ffn}, heads×head size {})",
                n_heads * head_dim
            )));
        }
        let cfg = match arch {
            Arch::Llama | Arch::Qwen2 => Config {
                arch,
                rope_base: g.opt(&key("rope.freq_base"), GgufFile::get_f32)?.unwrap_or(
                    if arch == Arch::Qwen2 {
                        1_000_000.0
                    } else {
                        10_000.0
                    },
                ),
                rope_base_local: 0.0,
                rope_neox: arch == Arch::Qwen2,
                sliding_window: None,
                scale_embeddings: false,
                attn_scale: 1.0 / (head_dim as f32).sqrt(),
                qkv_bias: arch == Arch::Qwen2,
                arch_name,
                hidden,
                n_layers,
                n_heads,
                n_kv_heads,
                head_dim,
                ffn,
                vocab,
                context_length,
                eps,
            },
            Arch::Gemma3 => {
                let window = g.get_usize(&key("attention.sliding_window"))?;
                let period = g
                    .opt(&key("attention.sliding_window_type"), GgufFile::get_usize)?
                    .unwrap_or(6);
                Config {
                    arch,
                    rope_base: g
                        .opt(&key("rope.freq_base"), GgufFile::get_f32)?
                        .unwrap_or(1_000_000.0),
                    rope_base_local: g
                        .opt(&key("rope.local_freq_base"), GgufFile::get_f32)?
                        .unwrap_or(10_000.0),
                    rope_neox: true,
                    sliding_window: Some((window, period.max(1))),
                    scale_embeddings: true,
                    attn_scale: 1.0 / (head_dim as f32).sqrt(),
                    qkv_bias: false,
                    arch_name,
                    hidden,
                    n_layers,
                    n_heads,
                    n_kv_heads,
                    head_dim,
                    ffn,
                    vocab,
                    context_length,
                    eps,
                }
            }
        };
        Ok(cfg)
    }

    /// Width of one position's keys (or values) across kv heads.
    pub fn kv_dim(&self) -> usize {
        self.n_kv_heads * self.head_dim
    }

    /// Width of the queries across heads.
    pub fn q_dim(&self) -> usize {
        self.n_heads * self.head_dim
    }

    /// The sliding window of layer `l`, if it is a local layer.
    pub fn window_of(&self, l: usize) -> Option<usize> {
        self.sliding_window
            .and_then(|(w, period)| (!(l + 1).is_multiple_of(period)).then_some(w))
    }

    /// Number of weights in the network (embeddings counted once).
    pub fn parameter_count(&self) -> usize {
        let attn = self.hidden * (self.q_dim() + 2 * self.kv_dim()) + self.q_dim() * self.hidden;
        let mlp = 3 * self.hidden * self.ffn;
        self.n_layers * (attn + mlp) + self.vocab * self.hidden
    }
}
