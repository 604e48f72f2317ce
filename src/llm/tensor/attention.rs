//! Attention of a ragged batch over the device KV pool, a padded group of sequences at a time.
//!
//! Sequences that bring few new rows this step (decoding, `choose` options) form one group:
//! their queries are padded to the longest, their cached keys gathered from the pool and
//! padded to the longest cache, and one batched matmul–softmax–matmul serves them all, the
//! padding masked out. A sequence prefilling many rows attends alone, so that one long prompt
//! does not pad every decoding sequence to its length. The index tensors and masks are built
//! once per step and shared by every layer.

use candle_core::{DType, Device, Tensor};

use super::super::config::Config;
use super::super::error::Result;
use super::super::model::SeqInput;

/// Sequences with at most this many new rows share the batched group.
const SHORT_ROWS: usize = 8;

/// One padded group of sequences.
struct Group {
    /// Sequences in the group.
    size: usize,
    tmax: usize,
    lmax: usize,
    /// `[size·lmax]` pool slots of each sequence's positions (padding: slot of position 0).
    key_idx: Tensor,
    /// `[size·tmax]` batch rows of each sequence's new tokens (padding: its first row).
    q_idx: Tensor,
    /// The group's real rows within its padded `[size·tmax]` output, in batch order.
    back_idx: Tensor,
    /// `[size, 1, 1, tmax, lmax]` additive masks: causal, and causal within the window.
    mask_global: Tensor,
    mask_local: Option<Tensor>,
}

/// What every layer's attention needs for one step.
pub(super) struct StepPlan {
    groups: Vec<Group>,
    /// Batch row of each row of the groups' concatenated output, when not the identity.
    reorder: Option<Tensor>,
}

impl StepPlan {
    /// Plans the step; call after the new positions were pushed to the caches.
    pub fn new(seqs: &[SeqInput<'_>], cfg: &Config, dev: &Device) -> Result<Self> {
        let mut starts = Vec::with_capacity(seqs.len());
        let mut total = 0;
        for s in seqs {
            starts.push(total);
            total += s.tokens.len();
        }
        let mut members: Vec<Vec<usize>> = Vec::new();
        let short: Vec<usize> = (0..seqs.len())
            .filter(|&i| !seqs[i].tokens.is_empty() && seqs[i].tokens.len() <= SHORT_ROWS)
            .collect();
        if !short.is_empty() {
            members.push(short);
        }
        members.extend(
            (0..seqs.len())
                .filter(|&i| seqs[i].tokens.len() > SHORT_ROWS)
                .map(|i| vec![i]),
        );
        let window = cfg.sliding_window.map(|(w, _)| w);
        let mut order: Vec<u32> = Vec::with_capacity(total);
        let mut groups = Vec::with_capacity(members.len());
        for m in &members {
            groups.push(Group::new(m, seqs, &starts, window, dev)?);
            for &i in m {
                order.extend((starts[i]..starts[i] + seqs[i].tokens.len()).map(|r| r as u32));
            }
        }
        let identity = order.iter().enumerate().all(|(i, &r)| i as u32 == r);
        let reorder = if identity {
            None
        } else {
            let mut inverse = vec![0u32; total];
            for (i, &r) in order.iter().enumerate() {
                inverse[r as usize] = i as u32;
            }
            Some(Tensor::from_vec(inverse, total, dev)?)
        };
        Ok(Self { groups, reorder })
    }

    /// Attention output `[rows, q_dim]` for queries `q` (`[rows, q_dim]`, rotated) over the
    /// pool's keys and values of one layer.
    pub fn attend(
        &self,
        q: &Tensor,
        k_pool: &Tensor,
        v_pool: &Tensor,
        local: bool,
        cfg: &Config,
    ) -> Result<Tensor> {
        let (kvh, hd) = (cfg.n_kv_heads, cfg.head_dim);
        let grp = cfg.n_heads / kvh;
        let mut outs = Vec::with_capacity(self.groups.len());
        for g in &self.groups {
            let (n, t, l) = (g.size, g.tmax, g.lmax);
            let gather = |pool: &Tensor| -> Result<Tensor> {
                Ok(pool
                    .index_select(&g.key_idx, 0)?
                    .reshape((n, l, kvh, hd))?
                    .transpose(1, 2)?
                    .contiguous()?
                    .to_dtype(DType::F32)?)
            };
            let (k, v) = (gather(k_pool)?, gather(v_pool)?);
            let qg = q
                .index_select(&g.q_idx, 0)?
                .reshape((n, t, kvh, grp, hd))?
                .permute((0, 2, 3, 1, 4))?
                .contiguous()?
                .reshape((n, kvh, grp * t, hd))?;
            let mask = match (local, &g.mask_local) {
                (true, Some(m)) => m,
                _ => &g.mask_global,
            };
            let mut scores = (qg.matmul(&k.t()?)? * cfg.attn_scale as f64)?;
            if let Some(cap) = cfg.attn_softcap {
                scores = ((scores / cap as f64)?.tanh()? * cap as f64)?;
            }
            let scores = scores.reshape((n, kvh, grp, t, l))?.broadcast_add(mask)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?.reshape((n, kvh, grp * t, l))?;
            let out = probs
                .matmul(&v)?
                .reshape((n, kvh, grp, t, hd))?
                .permute((0, 3, 1, 2, 4))?
                .contiguous()?
                .reshape((n * t, kvh * grp * hd))?
                .index_select(&g.back_idx, 0)?;
            outs.push(out);
        }
        let all = if outs.len() == 1 {
            outs.pop().expect("one group")
        } else {
            Tensor::cat(&outs, 0)?
        };
        Ok(match &self.reorder {
            Some(idx) => all.index_select(idx, 0)?,
            None => all,
        })
    }
}

impl Group {
    fn new(
        members: &[usize],
        seqs: &[SeqInput<'_>],
        starts: &[usize],
        window: Option<usize>,
        dev: &Device,
    ) -> Result<Self> {
        let size = members.len();
        let tmax = members
            .iter()
            .map(|&i| seqs[i].tokens.len())
            .max()
            .unwrap_or(1);
        let lmax = members
            .iter()
            .map(|&i| seqs[i].cache.len())
            .max()
            .unwrap_or(1);
        let mut key_idx = Vec::with_capacity(size * lmax);
        let mut q_idx = Vec::with_capacity(size * tmax);
        let mut back_idx = Vec::new();
        let mut global = vec![f32::NEG_INFINITY; size * tmax * lmax];
        let mut local = window.map(|_| vec![f32::NEG_INFINITY; size * tmax * lmax]);
        for (gi, &i) in members.iter().enumerate() {
            let s = &seqs[i];
            let (n, len) = (s.tokens.len(), s.cache.len());
            let slots = s.cache.slots();
            let pad = slots.first().copied().unwrap_or(0);
            key_idx.extend_from_slice(&slots);
            key_idx.extend(std::iter::repeat_n(pad, lmax - slots.len()));
            for t in 0..tmax {
                let row = (gi * tmax + t) * lmax;
                if t >= n {
                    // Padding rows attend to position 0 only (their output is dropped).
                    q_idx.push(starts[i] as u32);
                    global[row] = 0.0;
                    if let Some(m) = local.as_mut() {
                        m[row] = 0.0;
                    }
                    continue;
                }
                q_idx.push((starts[i] + t) as u32);
                back_idx.push((gi * tmax + t) as u32);
                let qpos = len - n + t;
                global[row..=row + qpos].fill(0.0);
                if let (Some(m), Some(w)) = (local.as_mut(), window) {
                    let lo = (qpos + 1).saturating_sub(w);
                    m[row + lo..=row + qpos].fill(0.0);
                }
            }
        }
        let mask = |m: Vec<f32>| Tensor::from_vec(m, (size, 1, 1, tmax, lmax), dev);
        let rows = back_idx.len();
        Ok(Self {
            size,
            tmax,
            lmax,
            key_idx: Tensor::from_vec(key_idx, size * lmax, dev)?,
            q_idx: Tensor::from_vec(q_idx, size * tmax, dev)?,
            back_idx: Tensor::from_vec(back_idx, rows, dev)?,
            mask_global: mask(global)?,
            mask_local: local.map(mask).transpose()?,
        })
    }
}
