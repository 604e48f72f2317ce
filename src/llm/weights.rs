//! The one reader of a model's weights from a GGUF file, shared by both forward paths
//! (our kernels in [`super::model`], the tensor path in [`super::tensor`]): the tensor
//! names of each layer, their shapes, and the checks that every value is finite.

use candle_core::quantized::GgmlDType;

use super::config::Config;
use super::dequant;
use super::error::{LlmError, Result};
use super::gguf::GgufFile;

/// One transformer layer's weights, its matrices `M` row-major `[out, in]`: f32 values
/// (`Vec<f32>`, for our kernels) or the stored blocks ([`RawMatrix`], for quantized matmuls on a
/// device). Norms and biases are always f32.
pub(super) struct Layer<M> {
    pub attn_norm: Vec<f32>,
    /// `[q_dim, hidden]`, `[kv_dim, hidden]`, `[kv_dim, hidden]`.
    pub q: M,
    pub k: M,
    pub v: M,
    /// The Q, K and V biases stacked, `[q_dim + 2·kv_dim]` (qwen2).
    pub qkv_bias: Option<Vec<f32>>,
    /// Per-head Q and K RMSNorm weights, `[head_dim]` (qwen3, gemma3).
    pub q_norm: Option<Vec<f32>>,
    pub k_norm: Option<Vec<f32>>,
    /// `[hidden, q_dim]`.
    pub wo: M,
    /// Norms after attention and after the FFN, `[hidden]` (gemma2, gemma3).
    pub post_attn_norm: Option<Vec<f32>>,
    pub post_ffn_norm: Option<Vec<f32>>,
    pub ffn_norm: Vec<f32>,
    /// `[ffn, hidden]` each.
    pub gate: M,
    pub up: M,
    /// `[hidden, ffn]`.
    pub down: M,
}

/// One layer in F32.
pub(super) type LayerF32 = Layer<Vec<f32>>;

/// A matrix as a layer holds it.
pub(super) trait Matrix: Sized {
    /// Reads tensor `name` as `[rows, cols]`, checking its size and that every value is finite.
    fn load(g: &mut GgufFile, name: &str, rows: usize, cols: usize) -> Result<Self>;
    /// Splits off the rows from `at` on (`self` keeps the first `at`) of a matrix of `cols`
    /// columns.
    fn split_rows(&mut self, at: usize, cols: usize) -> Self;
}

impl Matrix for Vec<f32> {
    fn load(g: &mut GgufFile, name: &str, rows: usize, cols: usize) -> Result<Self> {
        Ok(map_tensor(g, name, rows, cols, |x| Ok(x.to_vec()))?.concat())
    }
    fn split_rows(&mut self, at: usize, cols: usize) -> Self {
        self.split_off(at * cols)
    }
}

/// A `[rows, cols]` matrix in its stored GGML format: whole rows of raw blocks.
pub(super) struct RawMatrix {
    pub dtype: GgmlDType,
    pub rows: usize,
    pub cols: usize,
    pub bytes: Vec<u8>,
}

impl RawMatrix {
    /// Bytes of one row.
    pub fn row_bytes(&self) -> usize {
        self.cols / self.dtype.block_size() * self.dtype.type_size()
    }

    /// The rows reordered within each head of `head_dim` rows, even rows first and odd rows
    /// second (interleaved RoPE pairs → halves; see the tensor path).
    pub fn halves_order(&self, head_dim: usize) -> RawMatrix {
        let rb = self.row_bytes();
        let half = head_dim / 2;
        let mut bytes = vec![0u8; self.bytes.len()];
        for (src, dst) in self
            .bytes
            .chunks_exact(head_dim * rb)
            .zip(bytes.chunks_exact_mut(head_dim * rb))
        {
            for i in 0..half {
                for (from, to) in [(2 * i, i), (2 * i + 1, i + half)] {
                    dst[to * rb..(to + 1) * rb].copy_from_slice(&src[from * rb..(from + 1) * rb]);
                }
            }
        }
        RawMatrix { bytes, ..*self }
    }
}

/// A layer's norms and biases (what the tensor path uploads as f32 whatever its matrices).
pub(super) struct SmallParts {
    pub attn_norm: Vec<f32>,
    pub qkv_bias: Option<Vec<f32>>,
    pub q_norm: Option<Vec<f32>>,
    pub k_norm: Option<Vec<f32>>,
    pub post_attn_norm: Option<Vec<f32>>,
    pub ffn_norm: Vec<f32>,
    pub post_ffn_norm: Option<Vec<f32>>,
}

impl<M> Layer<M> {
    /// The norms and biases, taken out.
    pub fn small_parts(&self) -> SmallParts {
        SmallParts {
            attn_norm: self.attn_norm.clone(),
            qkv_bias: self.qkv_bias.clone(),
            q_norm: self.q_norm.clone(),
            k_norm: self.k_norm.clone(),
            post_attn_norm: self.post_attn_norm.clone(),
            ffn_norm: self.ffn_norm.clone(),
            post_ffn_norm: self.post_ffn_norm.clone(),
        }
    }
}

impl Matrix for RawMatrix {
    fn load(g: &mut GgufFile, name: &str, rows: usize, cols: usize) -> Result<Self> {
        // One read: the size and finiteness checks of every other load, then the blocks.
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
        dequant::map_row_chunks(&qt, rows, cols, |_| Ok(())).map_err(bad)?;
        let bytes = qt.data().map_err(|e| bad(e.to_string()))?.into_owned();
        Ok(RawMatrix {
            dtype: qt.dtype(),
            rows,
            cols,
            bytes,
        })
    }
    fn split_rows(&mut self, at: usize, _cols: usize) -> Self {
        let rest = self.bytes.split_off(at * self.row_bytes());
        let tail = RawMatrix {
            dtype: self.dtype,
            rows: self.rows - at,
            cols: self.cols,
            bytes: rest,
        };
        self.rows = at;
        tail
    }
}

/// Reads layer `l` of `g` in F32, checking every tensor's size against `cfg`.
pub(super) fn read_layer(g: &mut GgufFile, cfg: &Config, l: usize) -> Result<LayerF32> {
    read_layer_as(g, cfg, l)
}

/// Reads layer `l` of `g`, its matrices as `M`, checking every tensor's size against `cfg`.
/// Fused projections (phi3's `attn_qkv` and gate-up `ffn_up`) are split into their parts.
pub(super) fn read_layer_as<M: Matrix>(
    g: &mut GgufFile,
    cfg: &Config,
    l: usize,
) -> Result<Layer<M>> {
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
        let mut q = M::load(g, &p("attn_qkv"), q_dim + 2 * kv_dim, h)?;
        let mut k = q.split_rows(q_dim, h);
        let v = k.split_rows(kv_dim, h);
        let mut gate = M::load(g, &p("ffn_up"), 2 * cfg.ffn, h)?;
        let up = gate.split_rows(cfg.ffn, h);
        (q, k, v, gate, up)
    } else {
        (
            M::load(g, &p("attn_q"), q_dim, h)?,
            M::load(g, &p("attn_k"), kv_dim, h)?,
            M::load(g, &p("attn_v"), kv_dim, h)?,
            M::load(g, &p("ffn_gate"), cfg.ffn, h)?,
            M::load(g, &p("ffn_up"), cfg.ffn, h)?,
        )
    };
    Ok(Layer {
        q,
        k,
        v,
        gate,
        up,
        qkv_bias: load_qkv_bias(g, cfg, l)?,
        attn_norm: load_f32(g, &p("attn_norm"), h)?,
        q_norm: opt(g, cfg.qk_norm, "attn_q_norm", cfg.head_dim)?,
        k_norm: opt(g, cfg.qk_norm, "attn_k_norm", cfg.head_dim)?,
        wo: M::load(g, &p("attn_output"), h, q_dim)?,
        post_attn_norm: opt(g, cfg.post_norms, "post_attention_norm", h)?,
        ffn_norm: load_f32(g, &p("ffn_norm"), h)?,
        down: M::load(g, &p("ffn_down"), h, cfg.ffn)?,
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
