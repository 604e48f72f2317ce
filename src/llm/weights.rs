//! The one reader of a model's weights from a GGUF file, shared by both forward paths
//! (our kernels in [`super::model`], the tensor path in [`super::tensor`]): the tensor
//! names of each layer, their shapes, and the checks that every value is finite.

use super::config::Config;
use super::dequant;
use super::error::{LlmError, Result};
use super::gguf::GgufFile;

/// One transformer layer's weights in F32, in the file's layout (matrices row-major
/// `[out, in]`).
pub(super) struct LayerF32 {
    pub attn_norm: Vec<f32>,
    /// `[q_dim, hidden]`, `[kv_dim, hidden]`, `[kv_dim, hidden]`.
    pub q: Vec<f32>,
    pub k: Vec<f32>,
    pub v: Vec<f32>,
    /// The Q, K and V biases stacked, `[q_dim + 2·kv_dim]` (qwen2).
    pub qkv_bias: Option<Vec<f32>>,
    /// Per-head Q and K RMSNorm weights, `[head_dim]` (qwen3, gemma3).
    pub q_norm: Option<Vec<f32>>,
    pub k_norm: Option<Vec<f32>>,
    /// `[hidden, q_dim]`.
    pub wo: Vec<f32>,
    /// Norms after attention and after the FFN, `[hidden]` (gemma2, gemma3).
    pub post_attn_norm: Option<Vec<f32>>,
    pub post_ffn_norm: Option<Vec<f32>>,
    pub ffn_norm: Vec<f32>,
    /// `[ffn, hidden]` each.
    pub gate: Vec<f32>,
    pub up: Vec<f32>,
    /// `[hidden, ffn]`.
    pub down: Vec<f32>,
}

/// Reads layer `l` of `g`, checking every tensor's size against `cfg`. Fused projections
/// (phi3's `attn_qkv` and gate-up `ffn_up`) are split into their parts.
pub(super) fn read_layer(g: &mut GgufFile, cfg: &Config, l: usize) -> Result<LayerF32> {
    let h = cfg.hidden;
    let (q_dim, kv_dim) = (cfg.q_dim(), cfg.kv_dim());
    let p = |n: &str| format!("blk.{l}.{n}.weight");
    let opt = |g: &mut GgufFile, on: bool, n: &str, len: usize| -> Result<Option<Vec<f32>>> {
        if on {
            load_f32(g, &p(n), len).map(Some)
        } else {
            Ok(None)
        }
    };
    let (q, k, v, gate, up) = if cfg.fused {
        let mut qkv = load_f32(g, &p("attn_qkv"), (q_dim + 2 * kv_dim) * h)?;
        let v = qkv.split_off((q_dim + kv_dim) * h);
        let k = qkv.split_off(q_dim * h);
        let mut gate = load_f32(g, &p("ffn_up"), 2 * cfg.ffn * h)?;
        let up = gate.split_off(cfg.ffn * h);
        (qkv, k, v, gate, up)
    } else {
        (
            load_f32(g, &p("attn_q"), q_dim * h)?,
            load_f32(g, &p("attn_k"), kv_dim * h)?,
            load_f32(g, &p("attn_v"), kv_dim * h)?,
            load_f32(g, &p("ffn_gate"), cfg.ffn * h)?,
            load_f32(g, &p("ffn_up"), cfg.ffn * h)?,
        )
    };
    Ok(LayerF32 {
        q,
        k,
        v,
        gate,
        up,
        qkv_bias: load_qkv_bias(g, cfg, l)?,
        attn_norm: load_f32(g, &p("attn_norm"), h)?,
        q_norm: opt(g, cfg.qk_norm, "attn_q_norm", cfg.head_dim)?,
        k_norm: opt(g, cfg.qk_norm, "attn_k_norm", cfg.head_dim)?,
        wo: load_f32(g, &p("attn_output"), h * q_dim)?,
        post_attn_norm: opt(g, cfg.post_norms, "post_attention_norm", h)?,
        ffn_norm: load_f32(g, &p("ffn_norm"), h)?,
        down: load_f32(g, &p("ffn_down"), h * cfg.ffn)?,
        post_ffn_norm: opt(g, cfg.post_norms, "post_ffw_norm", h)?,
    })
}

/// Llama 3's per-dimension RoPE frequency factors (`rope_freqs.weight`, `[head_dim/2]`): each
/// dimension's frequency is divided by its factor. `None` when the file has none.
pub(super) fn rope_factors(g: &mut GgufFile, cfg: &Config) -> Result<Option<Vec<f32>>> {
    if !Config::has_rope_factors(g) {
        return Ok(None);
    }
    let f = load_f32(g, "rope_freqs.weight", cfg.head_dim / 2)?;
    if let Some(bad) = f.iter().find(|v| **v <= 0.0) {
        return Err(LlmError::BadTensor {
            path: g.path().to_path_buf(),
            name: "rope_freqs.weight".into(),
            reason: format!("holds {bad}: RoPE factors must be positive"),
        });
    }
    Ok(Some(f))
}

/// Reads a tensor as `[rows, cols]` and maps chunks of its rows (as f32) through `f`,
/// checking the element count and that every value is finite.
pub(super) fn map_tensor<R: Send>(
    g: &mut GgufFile,
    name: &str,
    rows: usize,
    cols: usize,
    f: impl Fn(&[f32]) -> std::result::Result<R, String> + Sync,
) -> Result<Vec<R>> {
    let qt = g.tensor(name)?;
    let bad = |reason: String| LlmError::BadTensor {
        path: g.path().to_path_buf(),
        name: name.to_string(),
        reason,
    };
    let n = qt.shape().elem_count();
    if n != rows * cols {
        return Err(bad(format!("has {n} elements, expected {}", rows * cols)));
    }
    dequant::map_row_chunks(&qt, rows, cols, f).map_err(bad)
}

/// The Q, K and V biases of layer `l` stacked as `[q_dim + 2·kv_dim]`, for architectures that
/// have them (`None` otherwise).
pub(super) fn load_qkv_bias(g: &mut GgufFile, cfg: &Config, l: usize) -> Result<Option<Vec<f32>>> {
    if !cfg.qkv_bias {
        return Ok(None);
    }
    let b = |g: &mut GgufFile, n: &str, len: usize| load_f32(g, &format!("blk.{l}.{n}.bias"), len);
    let q = b(g, "attn_q", cfg.q_dim())?;
    let k = b(g, "attn_k", cfg.kv_dim())?;
    let v = b(g, "attn_v", cfg.kv_dim())?;
    Ok(Some([q, k, v].concat()))
}

/// Reads a tensor of `expect` elements as f32.
pub(super) fn load_f32(g: &mut GgufFile, name: &str, expect: usize) -> Result<Vec<f32>> {
    let chunks = map_tensor(g, name, 1, expect, |x| Ok(x.to_vec()))?;
    Ok(chunks.concat())
}
