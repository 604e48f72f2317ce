//! Model hyper-parameters read from GGUF metadata: the llama family (llama, mistral), qwen2,
//! qwen3, phi3, gemma2 and gemma3. Anything of a file we do not implement (another
//! architecture, a RoPE scaling type) is an error naming it, never approximated.

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
    /// Qwen3: the llama block with per-head RMSNorm of Q and K before RoPE, NEOX RoPE, no
    /// biases.
    Qwen3,
    /// Phi-3 / Phi-3.5 / Phi-4-mini: fused QKV (`attn_qkv`) and gate-up (`ffn_up` of 2·ffn
    /// rows) projections, NEOX RoPE.
    Phi3,
    /// Gemma 2: post-norms, GELU, scaled embeddings, sliding-window attention on every other
    /// layer, soft-capped attention scores and logits.
    Gemma2,
    /// Gemma 3: QK norms, post-norms, GELU, sliding-window layers, scaled embeddings.
    Gemma3,
}

impl Arch {
    /// Gemma's block: GELU, norms after attention and the FFN, scaled embeddings.
    pub fn is_gemma(self) -> bool {
        matches!(self, Arch::Gemma2 | Arch::Gemma3)
    }
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
    /// Per-head RMSNorm of Q and K before RoPE (`attn_{q,k}_norm`: qwen3, gemma3).
    pub qk_norm: bool,
    /// RMSNorm after attention and after the FFN (`post_attention_norm`, `post_ffw_norm`).
    pub post_norms: bool,
    /// GELU (tanh approximation) rather than SiLU in the gated FFN.
    pub gelu: bool,
    /// Q, K and V in one tensor `attn_qkv`, gate and up in one `ffn_up` (phi3).
    pub fused: bool,
    /// Attention scores become `cap·tanh(score/cap)` before the softmax (gemma2).
    pub attn_softcap: Option<f32>,
    /// Logits become `cap·tanh(logit/cap)` (gemma2).
    pub final_softcap: Option<f32>,
    /// RoPE positions are multiplied by this (`1 / rope.scaling.factor` of linear scaling).
    pub rope_freq_scale: f32,
}

impl Config {
    /// Reads the hyper-parameters of a GGUF model, with an error naming any missing key.
    pub fn from_gguf(g: &GgufFile) -> Result<Self> {
        let arch_name = g.get_str("general.architecture")?.to_string();
        let arch = match arch_name.as_str() {
            "llama" | "mistral" => Arch::Llama,
            "qwen2" => Arch::Qwen2,
            "qwen3" => Arch::Qwen3,
            "phi3" => Arch::Phi3,
            "gemma2" => Arch::Gemma2,
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
        let rope_freq_scale = rope_scaling(g, &arch_name)?;
        let f32_key = |k: &str| g.opt(&key(k), GgufFile::get_f32);
        let rope_base = f32_key("rope.freq_base")?.unwrap_or(match arch {
            Arch::Qwen2 | Arch::Qwen3 | Arch::Gemma3 => 1_000_000.0,
            _ => 10_000.0,
        });
        let window = |default_period: usize| -> Result<Option<(usize, usize)>> {
            let w = g.get_usize(&key("attention.sliding_window"))?;
            let period = g
                .opt(&key("attention.sliding_window_type"), GgufFile::get_usize)?
                .unwrap_or(default_period);
            Ok(Some((w, period.max(1))))
        };
        let (sliding_window, rope_base_local) = match arch {
            // Gemma 2: every other layer (the even ones) is local, with the global base.
            Arch::Gemma2 => (window(2)?, rope_base),
            Arch::Gemma3 => (
                window(6)?,
                f32_key("rope.local_freq_base")?
                    .or(f32_key("rope.freq_base_swa")?)
                    .unwrap_or(10_000.0),
            ),
            _ => (None, 0.0),
        };
        // Gemma 2 27B scales queries by 1/sqrt(hidden/heads) (its query_pre_attn_scalar),
        // the others by 1/sqrt(head_dim); llama.cpp tells the 27B by its 46 layers.
        let attn_scale = if arch == Arch::Gemma2 && n_layers == 46 {
            1.0 / ((hidden / n_heads) as f32).sqrt()
        } else {
            1.0 / (head_dim as f32).sqrt()
        };
        let softcap = |k: &str, default: f32| -> Result<Option<f32>> {
            Ok((arch == Arch::Gemma2).then_some(f32_key(k)?.unwrap_or(default)))
        };
        let cfg = Config {
            arch,
            rope_base,
            rope_base_local,
            rope_neox: arch != Arch::Llama,
            sliding_window,
            scale_embeddings: arch.is_gemma(),
            attn_scale,
            qkv_bias: arch == Arch::Qwen2,
            qk_norm: matches!(arch, Arch::Qwen3 | Arch::Gemma3),
            post_norms: arch.is_gemma(),
            gelu: arch.is_gemma(),
            fused: arch == Arch::Phi3,
            attn_softcap: softcap("attn_logit_softcapping", 50.0)?,
            final_softcap: softcap("final_logit_softcapping", 30.0)?,
            rope_freq_scale,
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
        };
        Ok(cfg)
    }

    /// Whether the file's RoPE has per-dimension frequency factors (`rope_freqs.weight`, Llama
    /// 3.1+), which both forward paths read at load.
    pub fn has_rope_factors(g: &GgufFile) -> bool {
        g.has_tensor("rope_freqs.weight")
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

/// The RoPE position scale of `ARCH.rope.scaling.*`: 1 without scaling, `1/factor` for linear
/// scaling. YaRN, LongRoPE and an attention factor are refused (not implemented).
fn rope_scaling(g: &GgufFile, arch: &str) -> Result<f32> {
    let key = |k: &str| format!("{arch}.{k}");
    let unsupported = |what: String| LlmError::Unsupported {
        path: g.path().to_path_buf(),
        what,
    };
    let kind = g.opt(&key("rope.scaling.type"), |g, k| {
        g.get_str(k).map(str::to_string)
    })?;
    let factor = g
        .opt(&key("rope.scaling.factor"), GgufFile::get_f32)?
        .or(g.opt(&key("rope.scale_linear"), GgufFile::get_f32)?);
    match kind.as_deref() {
        None | Some("none") | Some("linear") => {}
        Some(other) => {
            return Err(unsupported(format!(
                "RoPE scaling `{other}` (`{}`; implemented: none, linear, and Llama 3's \
                 `rope_freqs` factors)",
                key("rope.scaling.type")
            )))
        }
    }
    if let Some(a) = g.opt(&key("rope.scaling.attn_factor"), GgufFile::get_f32)? {
        if a != 1.0 {
            return Err(unsupported(format!(
                "a RoPE attention factor (`{}` = {a})",
                key("rope.scaling.attn_factor")
            )));
        }
    }
    if g.has_tensor("rope_factors_long.weight") || g.has_tensor("rope_factors_short.weight") {
        return Err(unsupported(
            "LongRoPE (`rope_factors_long` / `rope_factors_short`, Phi-3 128k)".into(),
        ));
    }
    match (kind.as_deref(), factor) {
        (Some("none"), _) | (_, None) => Ok(1.0),
        (_, Some(f)) if f > 0.0 && f.is_finite() => Ok(if f == 1.0 { 1.0 } else { 1.0 / f }),
        (_, Some(f)) => Err(LlmError::BadGguf {
            path: g.path().to_path_buf(),
            reason: format!(
                "`{}` = {f} is not a positive factor",
                key("rope.scaling.factor")
            ),
        }),
    }
}
