//! The forward pass of [`super::model::Model`] written with candle tensor ops, so that it runs
//! on any candle device: CUDA or Metal for speed, the CPU for tests.
//!
//! Weights are dequantized to F32 at load. Keys and values of every sequence live in one
//! device pool per layer (`[slots, kv_dim]`); a sequence's cache is the list of its slots
//! ([`super::kv::SeqCache::slots`]), so shared prefixes share slots and nothing is copied
//! when a prefix is reused. Each step runs every row of every sequence through the matmuls
//! together; attention gathers each sequence's keys and values from the pool and runs for
//! a padded group of sequences at once (see `attention`).
//!
//! Llama-family GGUF files rotate adjacent pairs (interleaved RoPE); the rows of their Q and K
//! projections are permuted at load so that one rotate-halves kernel serves every model
//! (the attention scores do not change: Q and K are permuted alike).

mod attention;

use std::sync::{Arc, Mutex};

use candle_core::quantized::ggml_file::qtensor_from_ggml;
use candle_core::quantized::{QMatMul, QTensor};
use candle_core::{DType, Device, Module, Tensor};

use super::config::Config;
use super::dequant;
use super::error::Result;
use super::gguf::GgufFile;
use super::kv::{KvSegment, SeqCache, SharedPrefix, SlotPool};
use super::model::{LogitsFor, Rope, SeqInput, WeightFormat};
use super::weights::{load_f32, read_layer, read_layer_as, rope_factors, Matrix, RawMatrix};
use attention::StepPlan;

/// Slots the device KV pool starts with; it doubles when full.
const INITIAL_SLOTS: usize = super::footprint::INITIAL_KV_SLOTS;

/// The KV pool's element type with quantized weights: half the memory of F32 (attention
/// itself runs in F32). With F32 weights (the exact reference) the pool is F32 too.
pub const KV_DTYPE: DType = DType::F16;

/// The KV pool's element type for weights held as `format`.
pub fn kv_dtype(format: WeightFormat) -> DType {
    match format {
        WeightFormat::F32 => DType::F32,
        _ => KV_DTYPE,
    }
}

struct Layer {
    attn_norm: Tensor,
    /// The Q, K and V projections, `[q_dim | kv_dim | kv_dim, hidden]`.
    wq: QMatMul,
    wk: QMatMul,
    wv: QMatMul,
    /// Biases of the Q, K and V projections (qwen2).
    qkv_bias: Option<[Tensor; 3]>,
    q_norm: Option<Tensor>,
    k_norm: Option<Tensor>,
    wo: QMatMul,
    post_attn_norm: Option<Tensor>,
    ffn_norm: Tensor,
    w_gate: QMatMul,
    w_up: QMatMul,
    w_down: QMatMul,
    post_ffn_norm: Option<Tensor>,
}

/// The token embeddings: an F32 table on the device, or (quantized weights) the file's blocks
/// in host memory, the rows a step needs decoded and sent over.
enum Embeddings {
    Device(Tensor),
    Host(QTensor),
}

/// Keys and values of every layer, `[capacity, kv_dim]` each, indexed by pool slot.
struct KvPool {
    capacity: usize,
    k: Vec<Tensor>,
    v: Vec<Tensor>,
}

/// A model loaded onto a candle device.
pub struct TensorModel {
    cfg: Config,
    device: Device,
    embed: Embeddings,
    layers: Vec<Layer>,
    out_norm: Tensor,
    /// The output projection (the embeddings themselves when tied).
    lm_head: QMatMul,
    /// The head is the embedding table (shared storage in F32 mode).
    tied_head: bool,
    /// Cosines and sines `[max_pos, head_dim/2]` of global and (gemma3) local layers.
    rope_global: (Tensor, Tensor),
    rope_local: Option<(Tensor, Tensor)>,
    max_pos: usize,
    slots: Arc<SlotPool>,
    pool: Mutex<KvPool>,
    kv_dtype: DType,
}

impl TensorModel {
    /// Loads a GGUF model onto `device`; `max_positions` bounds the RoPE tables. With
    /// [`WeightFormat::Quantized`] (the default) or [`WeightFormat::Q8`] the projection weights stay in the file's
    /// quantization on the device and run through candle's quantized matmul; with
    /// [`WeightFormat::F32`] they are dequantized (the exact reference).
    pub fn load(
        g: &mut GgufFile,
        device: &Device,
        format: WeightFormat,
        max_positions: usize,
    ) -> Result<Self> {
        let cfg = Config::from_gguf(g)?;
        let max_pos = max_positions.min(cfg.context_length).max(1);
        let (h, hd) = (cfg.hidden, cfg.head_dim);
        let quantized = format != WeightFormat::F32;
        let vec = |data: Vec<f32>| -> Result<Tensor> {
            let n = data.len();
            Ok(Tensor::from_vec(data, n, device)?)
        };
        // Interleaved RoPE becomes rotate-halves by permuting Q/K rows (and norms) per head.
        let permute = !cfg.rope_neox;
        let mut layers = Vec::with_capacity(cfg.n_layers);
        for l in 0..cfg.n_layers {
            let (mats, w) = if quantized {
                let w = read_layer_as::<RawMatrix>(g, &cfg, l)?;
                let m = |r: &RawMatrix| quantized_matmul(r, device);
                let (q, k) = if permute {
                    (m(&w.q.halves_order(hd))?, m(&w.k.halves_order(hd))?)
                } else {
                    (m(&w.q)?, m(&w.k)?)
                };
                let mats = [
                    q,
                    k,
                    m(&w.v)?,
                    m(&w.wo)?,
                    m(&w.gate)?,
                    m(&w.up)?,
                    m(&w.down)?,
                ];
                (mats, w.small_parts())
            } else {
                let w = read_layer(g, &cfg, l)?;
                let m =
                    |data: &[f32], rows: usize, cols: usize| dense_matmul(data, rows, cols, device);
                let (q_dim, kv_dim, f) = (cfg.q_dim(), cfg.kv_dim(), cfg.ffn);
                let (q, k) = if permute {
                    (
                        m(&halves_order(&w.q, hd, h), q_dim, h)?,
                        m(&halves_order(&w.k, hd, h), kv_dim, h)?,
                    )
                } else {
                    (m(&w.q, q_dim, h)?, m(&w.k, kv_dim, h)?)
                };
                let mats = [
                    q,
                    k,
                    m(&w.v, kv_dim, h)?,
                    m(&w.wo, h, q_dim)?,
                    m(&w.gate, f, h)?,
                    m(&w.up, f, h)?,
                    m(&w.down, h, f)?,
                ];
                (mats, w.small_parts())
            };
            let [wq, wk, wv, wo, w_gate, w_up, w_down] = mats;
            let qkv_bias = match w.qkv_bias {
                Some(b) => {
                    let (qb, rest) = b.split_at(cfg.q_dim());
                    let (kb, vb) = rest.split_at(cfg.kv_dim());
                    let (qb, kb) = if permute {
                        (halves_order(qb, hd, 1), halves_order(kb, hd, 1))
                    } else {
                        (qb.to_vec(), kb.to_vec())
                    };
                    Some([vec(qb)?, vec(kb)?, vec(vb.to_vec())?])
                }
                None => None,
            };
            let norm = |w: Option<Vec<f32>>, perm: bool| -> Result<_> {
                let Some(mut w) = w else { return Ok(None) };
                if perm && permute {
                    w = halves_order(&w, hd, 1);
                }
                Ok(Some(vec(w)?))
            };
            layers.push(Layer {
                attn_norm: vec(w.attn_norm)?,
                wq,
                wk,
                wv,
                qkv_bias,
                q_norm: norm(w.q_norm, true)?,
                k_norm: norm(w.k_norm, true)?,
                wo,
                post_attn_norm: norm(w.post_attn_norm, false)?,
                ffn_norm: vec(w.ffn_norm)?,
                w_gate,
                w_up,
                w_down,
                post_ffn_norm: norm(w.post_ffn_norm, false)?,
            });
        }
        let out_norm = vec(load_f32(g, "output_norm.weight", h)?)?;
        let head_name = if g.has_tensor("output.weight") {
            "output.weight"
        } else {
            "token_embd.weight"
        };
        let (embed, lm_head) = if quantized {
            let raw = RawMatrix::load(g, "token_embd.weight", cfg.vocab, h)?;
            let host = qtensor_from_ggml(raw.dtype, &raw.bytes, vec![cfg.vocab, h], &Device::Cpu)?;
            let head = if head_name == "token_embd.weight" {
                quantized_matmul(&raw, device)?
            } else {
                quantized_matmul(&RawMatrix::load(g, head_name, cfg.vocab, h)?, device)?
            };
            (Embeddings::Host(host), head)
        } else {
            let table = load_f32(g, "token_embd.weight", cfg.vocab * h)?;
            let embed = Tensor::from_vec(table, (cfg.vocab, h), device)?;
            let head = if head_name == "token_embd.weight" {
                QMatMul::Tensor(embed.clone())
            } else {
                dense_matmul(
                    &load_f32(g, head_name, cfg.vocab * h)?,
                    cfg.vocab,
                    h,
                    device,
                )?
            };
            (Embeddings::Device(embed), head)
        };
        let factors = rope_factors(g, &cfg)?;
        let tables = |base: f32| -> Result<(Tensor, Tensor)> {
            let r = Rope::new(hd, base, max_pos, cfg.rope_freq_scale, factors.as_deref());
            Ok((
                Tensor::from_vec(r.cos, (max_pos, hd / 2), device)?,
                Tensor::from_vec(r.sin, (max_pos, hd / 2), device)?,
            ))
        };
        let rope_global = tables(cfg.rope_base)?;
        let rope_local = match cfg.sliding_window {
            Some(_) => Some(tables(cfg.rope_base_local)?),
            None => None,
        };
        let kv_dim = cfg.kv_dim();
        let kv = kv_dtype(format);
        let pool = KvPool::new(INITIAL_SLOTS, cfg.n_layers, kv_dim, kv, device)?;
        Ok(Self {
            slots: Arc::new(SlotPool::new(
                cfg.n_layers * 2 * kv_dim * kv.size_in_bytes(),
            )),
            kv_dtype: kv,
            cfg,
            device: device.clone(),
            embed,
            layers,
            out_norm,
            lm_head,
            tied_head: head_name == "token_embd.weight",
            rope_global,
            rope_local,
            max_pos,
            pool: Mutex::new(pool),
        })
    }

    /// The model's hyper-parameters.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The device the weights live on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Largest position the RoPE tables cover.
    pub fn max_positions(&self) -> usize {
        self.max_pos
    }

    /// Bytes of weights on the device, quantized ones at their stored size.
    pub fn weight_bytes(&self) -> usize {
        let layers: usize = self
            .layers
            .iter()
            .map(|l| {
                [&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down]
                    .into_iter()
                    .map(matmul_bytes)
                    .sum::<usize>()
            })
            .sum();
        let (embed, head) = match &self.embed {
            Embeddings::Host(_) => (0, matmul_bytes(&self.lm_head)),
            // A tied head is the table itself.
            Embeddings::Device(t) => (
                t.elem_count() * 4,
                if self.tied_head {
                    0
                } else {
                    matmul_bytes(&self.lm_head)
                },
            ),
        };
        layers + embed + head
    }

    /// Bytes of weights in host memory: the quantized embedding table the token rows are
    /// decoded from (0 when the table is on the device).
    pub fn host_weight_bytes(&self) -> usize {
        match &self.embed {
            Embeddings::Host(q) => q.storage_size_in_bytes(),
            Embeddings::Device(_) => 0,
        }
    }

    /// Slots of the device KV pool in use now, and its capacity.
    pub fn kv_slots(&self) -> (usize, usize) {
        let cap = self.pool.lock().map_or(0, |p| p.capacity);
        (self.slots.in_use(), cap)
    }

    /// A cache continuing after `prefix` whose new positions take slots of the device pool.
    pub fn cache_with_prefix(&self, prefix: SharedPrefix, capacity: usize) -> SeqCache {
        let own = KvSegment::in_pool(self.slots.clone(), self.cfg.kv_dim(), capacity);
        SeqCache::continuing(prefix, own)
    }

    /// Runs one step for a ragged batch of sequences, appending to their caches. Returns, per
    /// sequence, the requested logits rows concatenated (`rows × vocab`).
    pub fn forward(&self, seqs: &mut [SeqInput<'_>]) -> Result<Vec<Vec<f32>>> {
        let cfg = &self.cfg;
        let mut tokens = Vec::new();
        let mut positions = Vec::new();
        for s in seqs.iter() {
            let pos0 = s.cache.len();
            s.check(self.max_pos, cfg.vocab)?;
            tokens.extend_from_slice(s.tokens);
            positions.extend((pos0..pos0 + s.tokens.len()).map(|p| p as u32));
        }
        let total = tokens.len();
        if total == 0 {
            return Ok(seqs.iter().map(|_| Vec::new()).collect());
        }
        // New positions take pool slots before the step, so attention sees them.
        let mut new_slots = Vec::with_capacity(total);
        for s in seqs.iter_mut() {
            let slots = self.slots.alloc(s.tokens.len());
            s.cache.push_slots(&slots);
            new_slots.extend_from_slice(&slots);
        }
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        pool.reserve(self.slots.high_water(), &self.device)?;
        let plan = StepPlan::new(seqs, cfg, &self.device)?;
        let logits = self.run_layers(&pool, &plan, &tokens, &positions, &new_slots, seqs)?;
        drop(pool);
        // Split the logits rows back per sequence.
        let mut out = Vec::with_capacity(seqs.len());
        let mut off = 0;
        for s in seqs.iter() {
            let n = match s.logits {
                LogitsFor::None => 0,
                LogitsFor::Last => 1,
                LogitsFor::All => s.tokens.len(),
            };
            out.push(logits[off * cfg.vocab..(off + n) * cfg.vocab].to_vec());
            off += n;
        }
        Ok(out)
    }

    /// The transformer proper: embeddings, layers, head. Returns the wanted logits rows.
    fn run_layers(
        &self,
        pool: &KvPool,
        plan: &StepPlan,
        tokens: &[u32],
        positions: &[u32],
        new_slots: &[u32],
        seqs: &[SeqInput<'_>],
    ) -> Result<Vec<f32>> {
        let cfg = &self.cfg;
        let dev = &self.device;
        let total = tokens.len();
        let (h, hd, kv_dim) = (cfg.hidden, cfg.head_dim, cfg.kv_dim());
        let eps = cfg.eps;
        let mut x = match &self.embed {
            Embeddings::Device(table) => {
                table.index_select(&Tensor::from_slice(tokens, total, dev)?, 0)?
            }
            Embeddings::Host(q) => {
                let rows = dequant::rows_to_f32(q, h, tokens)
                    .map_err(|e| candle_core::Error::Msg(format!("token embeddings: {e}")))?;
                Tensor::from_vec(rows, (total, h), dev)?
            }
        };
        if cfg.scale_embeddings {
            x = x.affine((h as f64).sqrt(), 0.0)?;
        }
        let pos = Tensor::from_slice(positions, total, dev)?;
        let rope_rows = |(c, s): &(Tensor, Tensor)| -> Result<(Tensor, Tensor)> {
            Ok((c.index_select(&pos, 0)?, s.index_select(&pos, 0)?))
        };
        let rope_global = rope_rows(&self.rope_global)?;
        let rope_local = self.rope_local.as_ref().map(rope_rows).transpose()?;
        // Where each new row's keys and values go in the pool.
        let slot_idx = Tensor::from_slice(new_slots, (total, 1), dev)?
            .broadcast_as((total, kv_dim))?
            .contiguous()?;
        for (li, layer) in self.layers.iter().enumerate() {
            let xn = candle_nn::ops::rms_norm(&x, &layer.attn_norm, eps)?;
            let mut q = layer.wq.forward(&xn)?;
            let mut k = layer.wk.forward(&xn)?;
            let mut v = layer.wv.forward(&xn)?;
            if let Some([qb, kb, vb]) = &layer.qkv_bias {
                q = q.broadcast_add(qb)?;
                k = k.broadcast_add(kb)?;
                v = v.broadcast_add(vb)?;
            }
            let v = v.contiguous()?;
            if let (Some(qn), Some(kn)) = (&layer.q_norm, &layer.k_norm) {
                q = candle_nn::ops::rms_norm(&q.reshape((total * cfg.n_heads, hd))?, qn, eps)?;
                k = candle_nn::ops::rms_norm(&k.reshape((total * cfg.n_kv_heads, hd))?, kn, eps)?;
            }
            let local = cfg.window_of(li).is_some();
            let (cos, sin) = match (local, &rope_local) {
                (true, Some(r)) => r,
                _ => &rope_global,
            };
            let rotate = |t: &Tensor, heads: usize| -> Result<Tensor> {
                let t = t.reshape((1, total, heads, hd))?;
                Ok(candle_nn::rotary_emb::rope_thd(&t, cos, sin)?.reshape((total, heads * hd))?)
            };
            let q = rotate(&q, cfg.n_heads)?;
            let k = rotate(&k, cfg.n_kv_heads)?;
            pool.k[li].scatter_set(&slot_idx, &k.to_dtype(self.kv_dtype)?, 0)?;
            pool.v[li].scatter_set(&slot_idx, &v.to_dtype(self.kv_dtype)?, 0)?;
            let att = plan.attend(&q, &pool.k[li], &pool.v[li], local, cfg)?;
            let mut o = layer.wo.forward(&att)?;
            if let Some(n) = &layer.post_attn_norm {
                o = candle_nn::ops::rms_norm(&o, n, eps)?;
            }
            x = (x + o)?;
            let xn = candle_nn::ops::rms_norm(&x, &layer.ffn_norm, eps)?;
            let gate = layer.w_gate.forward(&xn)?;
            let up = layer.w_up.forward(&xn)?;
            let act = if cfg.gelu { gate.gelu()? } else { gate.silu()? };
            let mut o = layer.w_down.forward(&(act * up)?)?;
            if let Some(n) = &layer.post_ffn_norm {
                o = candle_nn::ops::rms_norm(&o, n, eps)?;
            }
            x = (x + o)?;
        }
        // Logits only for the rows asked for.
        let mut want: Vec<u32> = Vec::new();
        let mut start = 0u32;
        for s in seqs {
            let n = s.tokens.len() as u32;
            match s.logits {
                LogitsFor::None => {}
                LogitsFor::Last => want.push(start + n - 1),
                LogitsFor::All => want.extend(start..start + n),
            }
            start += n;
        }
        if want.is_empty() {
            return Ok(Vec::new());
        }
        let rows = Tensor::from_slice(&want, want.len(), dev)?;
        let hs = candle_nn::ops::rms_norm(&x.index_select(&rows, 0)?, &self.out_norm, eps)?;
        let mut logits = self.lm_head.forward(&hs)?;
        if let Some(cap) = cfg.final_softcap {
            logits = ((logits / cap as f64)?.tanh()? * cap as f64)?;
        }
        Ok(logits.flatten_all()?.to_dtype(DType::F32)?.to_vec1()?)
    }
}

impl KvPool {
    fn new(
        capacity: usize,
        n_layers: usize,
        kv_dim: usize,
        dtype: DType,
        dev: &Device,
    ) -> Result<Self> {
        let zeros = || Tensor::zeros((capacity, kv_dim), dtype, dev);
        Ok(Self {
            capacity,
            k: (0..n_layers)
                .map(|_| zeros())
                .collect::<candle_core::Result<_>>()?,
            v: (0..n_layers)
                .map(|_| zeros())
                .collect::<candle_core::Result<_>>()?,
        })
    }

    /// Grows every layer's pool (doubling) until it holds `needed` slots, keeping contents.
    fn reserve(&mut self, needed: usize, dev: &Device) -> Result<()> {
        if needed <= self.capacity {
            return Ok(());
        }
        let mut cap = self.capacity.max(1);
        while cap < needed {
            cap *= 2;
        }
        for t in self.k.iter_mut().chain(self.v.iter_mut()) {
            let kv_dim = t.dim(1)?;
            let grown = Tensor::zeros((cap, kv_dim), t.dtype(), dev)?;
            grown.slice_set(t, 0, 0)?;
            *t = grown;
        }
        self.capacity = cap;
        Ok(())
    }
}

/// A matmul by `[rows, cols]` f32 weights on `device`.
fn dense_matmul(data: &[f32], rows: usize, cols: usize, device: &Device) -> Result<QMatMul> {
    Ok(QMatMul::Tensor(Tensor::from_slice(
        data,
        (rows, cols),
        device,
    )?))
}

/// A matmul by stored (GGML) weights on `device`: candle's quantized matmul, or a dense one
/// for F32/F16/BF16 weights.
fn quantized_matmul(m: &RawMatrix, device: &Device) -> Result<QMatMul> {
    let q = qtensor_from_ggml(m.dtype, &m.bytes, vec![m.rows, m.cols], device)?;
    Ok(QMatMul::from_qtensor(q)?)
}

/// Bytes a matmul's weights take on the device.
fn matmul_bytes(m: &QMatMul) -> usize {
    match m {
        QMatMul::QTensor(q) => q.storage_size_in_bytes(),
        QMatMul::Tensor(t) | QMatMul::TensorF16(t) => t.elem_count() * t.dtype().size_in_bytes(),
    }
}

/// Reorders the rows of a `[heads·head_dim, cols]` matrix so that, within each head, the
/// even rows come first and the odd rows second (interleaved pairs → halves).
fn halves_order(w: &[f32], head_dim: usize, cols: usize) -> Vec<f32> {
    let half = head_dim / 2;
    let mut out = vec![0f32; w.len()];
    for (src_head, dst_head) in w
        .chunks_exact(head_dim * cols)
        .zip(out.chunks_exact_mut(head_dim * cols))
    {
        for i in 0..half {
            for (src, dst) in [(2 * i, i), (2 * i + 1, i + half)] {
                dst_head[dst * cols..(dst + 1) * cols]
                    .copy_from_slice(&src_head[src * cols..(src + 1) * cols]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_order_moves_even_rows_first_within_each_head() {
        // Two heads of dimension 4, one column: rows 0..8.
        let w: Vec<f32> = (0..8).map(|v| v as f32).collect();
        assert_eq!(halves_order(&w, 4, 1), vec![0., 2., 1., 3., 4., 6., 5., 7.]);
    }
}
