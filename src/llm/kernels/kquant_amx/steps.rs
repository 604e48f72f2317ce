//! The steps from a panel block's exact integer sub-block dots to a row's f32 result, shared
//! by every path (tiles, vector dots, any batch), so that a row's result is the same bits
//! whatever its batch.
//!
//! Per block and activation row, the sub-block dots `c_g` (16 weight rows in i32 lanes) are
//! summed with their integer scales, exactly: `s = Σ c_g·sc_g`, Q6_K's values' offset of 32
//! taken off each sub-block first (`c_g − 32·b_g`, `b_g` the activations' sum). Q4_K's
//! minimums are summed apart (`vpdpwssd` over pairs of sub-blocks), `o = Σ m_g·b_g`. Then two
//! f32 steps: `acc += s·(d·xd) − o·(d_min·xd)` (Q6_K, one: `acc += s·(d·xd)`).

use std::arch::x86_64::*;

use super::super::kquant::{BlockQ8K, KQuant};
use super::layout::{Q4_D, Q4_DMIN, Q4_M, Q4_SC, Q6_D, Q6_SC};

/// Per activation row and block: its scale and its sums of each sub-block, as the kind's
/// steps take them.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct RowBlock {
    pub d: f32,
    /// Q4_K: the sums of sub-blocks `2p` and `2p+1`, two 16-bit sums to an i32 in `pairs[p]`.
    pub pairs: [i32; 4],
    /// Q6_K: each sub-block's sum times 32 (its values' offset).
    pub offsets: [i32; 16],
}

/// [`RowBlock`]s of quantized activation rows for `kind`'s sub-blocks.
pub fn row_sums(kind: KQuant, x: &[BlockQ8K]) -> Vec<RowBlock> {
    // The activation blocks keep sums of 16 values; Q4_K's sub-blocks are 32.
    let per = super::subs(kind).1 / 16;
    x.iter()
        .map(|b| {
            let sum = |g: usize| -> i32 {
                b.bsums[per * g..per * (g + 1)]
                    .iter()
                    .map(|&v| v as i32)
                    .sum()
            };
            let mut rb = RowBlock {
                d: b.d,
                ..RowBlock::default()
            };
            match kind {
                KQuant::Q4K => {
                    for (p, v) in rb.pairs.iter_mut().enumerate() {
                        // |sum| ≤ 32·128: a 16-bit lane holds it.
                        *v = (sum(2 * p) as u16 as u32 | (sum(2 * p + 1) as u16 as u32) << 16)
                            as i32;
                    }
                }
                KQuant::Q6K => {
                    for (g, v) in rb.offsets.iter_mut().enumerate() {
                        *v = 32 * sum(g);
                    }
                }
            }
            rb
        })
        .collect()
}

/// A panel block's scales for its 16 rows, read where the steps use them (inlined, the
/// reads move out of the loops over rows).
pub(super) struct BlockScales {
    kind: KQuant,
    blk: *const u8,
}

impl BlockScales {
    /// The scales of panel block `blk`.
    #[inline(always)]
    pub unsafe fn new(kind: KQuant, blk: *const u8) -> Self {
        BlockScales { kind, blk }
    }

    #[inline(always)]
    unsafe fn bytes(&self, at: usize) -> __m128i {
        _mm_loadu_si128(self.blk.add(at) as *const __m128i)
    }

    /// Sub-block `g`'s scales as i32.
    #[inline(always)]
    pub unsafe fn sc(&self, g: usize) -> __m512i {
        match self.kind {
            KQuant::Q4K => _mm512_cvtepu8_epi32(self.bytes(Q4_SC + 16 * g)),
            KQuant::Q6K => _mm512_cvtepi8_epi32(self.bytes(Q6_SC + 16 * g)),
        }
    }

    /// Q4_K's minimums of sub-blocks `2p` and `2p + 1` as two i16 in each i32 lane.
    #[inline(always)]
    unsafe fn minimums(&self, p: usize) -> __m512i {
        _mm512_cvtepu8_epi16(_mm256_loadu_si256(self.blk.add(Q4_M + 32 * p).cast()))
    }

    /// Adds one row's block to its f32 result `acc`: `s` its [`Self::scaled`] dots, `rb`
    /// its [`RowBlock`].
    #[inline(always)]
    pub unsafe fn finish(&self, acc: &mut __m512, s: __m512i, rb: &RowBlock) {
        let xd = _mm512_set1_ps(rb.d);
        match self.kind {
            KQuant::Q4K => {
                let mut o = _mm512_setzero_si512();
                for (p, &b) in rb.pairs.iter().enumerate() {
                    o = _mm512_dpwssd_epi32(o, self.minimums(p), _mm512_set1_epi32(b));
                }
                let (d, dmin) = (half16(self.blk.add(Q4_D)), half16(self.blk.add(Q4_DMIN)));
                let a = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(d, xd), *acc);
                *acc = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(o), _mm512_mul_ps(dmin, xd), a);
            }
            KQuant::Q6K => {
                let d = half16(self.blk.add(Q6_D));
                *acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(d, xd), *acc);
            }
        }
    }

    /// Sub-block `g`'s dots `c` with an activation row (`rb` its [`RowBlock`]) as its scales
    /// multiply them: Q6_K's values' offset of 32 taken off.
    #[inline(always)]
    pub unsafe fn offset(&self, c: __m512i, g: usize, rb: &RowBlock) -> __m512i {
        match self.kind {
            KQuant::Q4K => c,
            KQuant::Q6K => _mm512_sub_epi32(c, _mm512_set1_epi32(rb.offsets[g])),
        }
    }

    /// `s + c·sc_g`: sub-block `g`'s dots `c` added to a row's integer sum.
    #[inline(always)]
    pub unsafe fn scaled(&self, s: __m512i, c: __m512i, g: usize) -> __m512i {
        scaled_by(s, c, self.sc(g))
    }
}

/// `s + c·sc`: a sub-block's dots `c` added to a row's integer sum with the sub-block's
/// scales `sc` ([`BlockScales::sc`]).
#[inline(always)]
pub(super) unsafe fn scaled_by(s: __m512i, c: __m512i, sc: __m512i) -> __m512i {
    _mm512_add_epi32(s, _mm512_mullo_epi32(c, sc))
}

/// 16 f16 at `p` as f32.
#[inline(always)]
unsafe fn half16(p: *const u8) -> __m512 {
    _mm512_cvtph_ps(_mm256_loadu_si256(p as *const __m256i))
}
