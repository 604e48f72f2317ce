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

use candle_core::{DType, Device, Tensor};

use super::config::Config;
use super::error::Result;
use super::gguf::GgufFile;
use super::kv::{KvSegment, SeqCache, SharedPrefix, SlotPool};
use super::model::{LogitsFor, Rope, SeqInput};
use super::weights::{load_f32, read_layer, rope_factors};
use attention::StepPlan;

/// Slots the device KV pool starts with; it doubles when full.
const INITIAL_SLOTS: usize = 4096;

struct Layer {
    attn_norm: Tensor,
    /// Q, K and V projections stacked: `[q_dim + 2·kv_dim, hidden]`.
    wqkv: Tensor,
    /// Biases of the stacked Q, K and V projections, `[q_dim + 2·kv_dim]` (qwen2).
    qkv_bias: Option<Tensor>,
    q_norm: Option<Tensor>,
    k_norm: Option<Tensor>,
    wo: Tensor,
    post_attn_norm: Option<Tensor>,
    ffn_norm: Tensor,
    /// Gate and up projections stacked: `[2·ffn, hidden]`.
    w_gate_up: Tensor,
    w_down: Tensor,
    post_ffn_norm: Option<Tensor>,
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
    embed: Tensor,
    layers: Vec<Layer>,
    out_norm: Tensor,
    lm_head: Option<Tensor>,
    /// Cosines and sines `[max_pos, head_dim/2]` of global and (gemma3) local layers.
    rope_global: (Tensor, Tensor),
    rope_local: Option<(Tensor, Tensor)>,
    max_pos: usize,
    slots: Arc<SlotPool>,
    pool: Mutex<KvPool>,
}

impl TensorModel {
    /// Loads a GGUF model onto `device`; `max_positions` bounds the RoPE tables.
    pub fn load(g: &mut GgufFile, device: &Device, max_positions: usize) -> Result<Self> {
        let cfg = Config::from_gguf(g)?;
        let max_pos = max_positions.min(cfg.context_length).max(1);
        let (h, hd) = (cfg.hidden, cfg.head_dim);
        let dev = device.clone();
        let vec = |data: Vec<f32>| Tensor::from_vec(data, h, &dev);
        let mat = |data: Vec<f32>, rows: usize| Tensor::from_vec(data, (rows, h), &dev);
        // Interleaved RoPE becomes rotate-halves by permuting Q/K rows (and norms) per head.
        let permute = !cfg.rope_neox;
        let mut layers = Vec::with_capacity(cfg.n_layers);
        for l in 0..cfg.n_layers {
            let w = read_layer(g, &cfg, l)?;
            let (mut q, mut k) = (w.q, w.k);
            if permute {
                q = halves_order(&q, hd, h);
                k = halves_order(&k, hd, h);
            }
            let qkv_bias = match w.qkv_bias {
                Some(b) => {
                    let (qb, rest) = b.split_at(cfg.q_dim());
                    let (kb, vb) = rest.split_at(cfg.kv_dim());
                    let (qb, kb) = if permute {
                        (halves_order(qb, hd, 1), halves_order(kb, hd, 1))
                    } else {
                        (qb.to_vec(), kb.to_vec())
                    };
                    let b = [qb, kb, vb.to_vec()].concat();
                    let n = b.len();
                    Some(Tensor::from_vec(b, n, device)?)
                }
                None => None,
            };
            let norm = |w: Option<Vec<f32>>, perm: bool| -> Result<_> {
                let Some(mut w) = w else { return Ok(None) };
                if perm && permute {
                    w = halves_order(&w, hd, 1);
                }
                let len = w.len();
                Ok(Some(Tensor::from_vec(w, len, device)?))
            };
            layers.push(Layer {
                attn_norm: vec(w.attn_norm)?,
                wqkv: mat([q, k, w.v].concat(), cfg.q_dim() + 2 * cfg.kv_dim())?,
                qkv_bias,
                q_norm: norm(w.q_norm, true)?,
                k_norm: norm(w.k_norm, true)?,
                wo: Tensor::from_vec(w.wo, (h, cfg.q_dim()), device)?,
                post_attn_norm: norm(w.post_attn_norm, false)?,
                ffn_norm: vec(w.ffn_norm)?,
                w_gate_up: mat([w.gate, w.up].concat(), 2 * cfg.ffn)?,
                w_down: Tensor::from_vec(w.down, (h, cfg.ffn), device)?,
                post_ffn_norm: norm(w.post_ffn_norm, false)?,
            });
        }
        let embed = mat(load_f32(g, "token_embd.weight", cfg.vocab * h)?, cfg.vocab)?;
        let out_norm = vec(load_f32(g, "output_norm.weight", h)?)?;
        let lm_head = if g.has_tensor("output.weight") {
            Some(mat(
                load_f32(g, "output.weight", cfg.vocab * h)?,
                cfg.vocab,
            )?)
        } else {
            None
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
        let pool = KvPool::new(INITIAL_SLOTS, cfg.n_layers, kv_dim, device)?;
        Ok(Self {
            slots: Arc::new(SlotPool::new(cfg.n_layers * 2 * kv_dim * 4)),
            cfg,
            device: device.clone(),
            embed,
            layers,
            out_norm,
            lm_head,
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

    /// Bytes of weights on the device.
    pub fn weight_bytes(&self) -> usize {
        let n = |t: &Tensor| t.elem_count() * 4;
        let layers: usize = self
            .layers
            .iter()
            .map(|l| n(&l.wqkv) + n(&l.wo) + n(&l.w_gate_up) + n(&l.w_down))
            .sum();
        layers + n(&self.embed) + self.lm_head.as_ref().map_or(0, n)
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
        let (h, hd, q_dim, kv_dim) = (cfg.hidden, cfg.head_dim, cfg.q_dim(), cfg.kv_dim());
        let eps = cfg.eps;
        let ids = Tensor::from_slice(tokens, total, dev)?;
        let mut x = self.embed.index_select(&ids, 0)?;
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
            let mut qkv = xn.matmul(&layer.wqkv.t()?)?;
            if let Some(b) = &layer.qkv_bias {
                qkv = qkv.broadcast_add(b)?;
            }
            let mut q = qkv.narrow(1, 0, q_dim)?.contiguous()?;
            let mut k = qkv.narrow(1, q_dim, kv_dim)?.contiguous()?;
            let v = qkv.narrow(1, q_dim + kv_dim, kv_dim)?.contiguous()?;
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
            pool.k[li].scatter_set(&slot_idx, &k, 0)?;
            pool.v[li].scatter_set(&slot_idx, &v, 0)?;
            let att = plan.attend(&q, &pool.k[li], &pool.v[li], local, cfg)?;
            let mut o = att.matmul(&layer.wo.t()?)?;
            if let Some(n) = &layer.post_attn_norm {
                o = candle_nn::ops::rms_norm(&o, n, eps)?;
            }
            x = (x + o)?;
            let xn = candle_nn::ops::rms_norm(&x, &layer.ffn_norm, eps)?;
            let gu = xn.matmul(&layer.w_gate_up.t()?)?;
            let gate = gu.narrow(1, 0, cfg.ffn)?;
            let up = gu.narrow(1, cfg.ffn, cfg.ffn)?;
            let act = if cfg.gelu { gate.gelu()? } else { gate.silu()? };
            let mut o = (act * up)?.matmul(&layer.w_down.t()?)?;
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
        let head = self.lm_head.as_ref().unwrap_or(&self.embed);
        let mut logits = hs.matmul(&head.t()?)?;
        if let Some(cap) = cfg.final_softcap {
            logits = ((logits / cap as f64)?.tanh()? * cap as f64)?;
        }
        Ok(logits.flatten_all()?.to_dtype(DType::F32)?.to_vec1()?)
    }
}

impl KvPool {
    fn new(capacity: usize, n_layers: usize, kv_dim: usize, dev: &Device) -> Result<Self> {
        let zeros = || Tensor::zeros((capacity, kv_dim), DType::F32, dev);
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
            let grown = Tensor::zeros((cap, kv_dim), DType::F32, dev)?;
            grown.slice_set(t, 0, 0)?;
            *t = grown;
        }
        self.capacity = cap;
        Ok(())
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
