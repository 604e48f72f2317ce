//! The steps from a panel block's exact integer sub-block dots to a row's f32 result, shared
//! by every path (tiles, vector dots, any batch), so that a row's result is the same bits
//! whatever its batch.
//!
//! Per block and activation row, the sub-block dots `c_g` (16 weight rows in i32 lanes) are
//! summed with their integer scales, exactly: `s = Σ c_g·sc_g`; so are the offsets
//! against the activations' sums `b_g` (`vpdpwssd` over pairs of sub-blocks): Q4_K's
//! minimums `o = Σ m_g·b_g`, Q6_K's 32 offset `o = 32·Σ sc_g·b_g`. Then two f32 steps:
//! `acc += s·(d·xd) − o·(d_min·xd)` (Q6_K: `acc += (s − o)·(d·xd)`).

use std::arch::x86_64::*;

use super::super::kquant::{BlockQ8K, KQuant};
use super::layout::{Q4_D, Q4_DMIN, Q4_M, Q4_SC, Q6_D, Q6_SC};

/// Per activation row and block: its scale and its sums of each sub-block, two 16-bit sums to
/// an i32 (sub-blocks `2p` and `2p+1` in pair `p`; Q4_K uses the first 4).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct RowBlock {
    pub d: f32,
    pub pairs: [i32; 8],
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
            let mut pairs = [0i32; 8];
            for (p, v) in pairs.iter_mut().enumerate().take(8 / per) {
                // |sum| ≤ 32·128: a 16-bit lane holds it.
                *v = (sum(2 * p) as u16 as u32 | (sum(2 * p + 1) as u16 as u32) << 16) as i32;
            }
            RowBlock { d: b.d, pairs }
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
    unsafe fn sc(&self, g: usize) -> __m512i {
        match self.kind {
            KQuant::Q4K => _mm512_cvtepu8_epi32(self.bytes(Q4_SC + 16 * g)),
            KQuant::Q6K => _mm512_cvtepi8_epi32(self.bytes(Q6_SC + 16 * g)),
        }
    }

    /// Pair `p` of sub-blocks' offset factors (Q4_K's minimums, Q6_K's scales) as two i16
    /// in each i32 lane.
    #[inline(always)]
    unsafe fn pair(&self, p: usize) -> __m512i {
        match self.kind {
            KQuant::Q4K => _mm512_cvtepu8_epi16(interleave(
                self.bytes(Q4_M + 32 * p),
                self.bytes(Q4_M + 32 * p + 16),
            )),
            KQuant::Q6K => _mm512_cvtepi8_epi16(interleave(
                self.bytes(Q6_SC + 32 * p),
                self.bytes(Q6_SC + 32 * p + 16),
            )),
        }
    }

    /// Adds one row's block to its f32 result `acc`: `s` its [`Self::scaled`] dots, `rb`
    /// its [`RowBlock`].
    #[inline(always)]
    pub unsafe fn finish(&self, acc: &mut __m512, s: __m512i, rb: &RowBlock) {
        let xd = _mm512_set1_ps(rb.d);
        let np = if self.kind == KQuant::Q4K { 4 } else { 8 };
        let mut o = _mm512_setzero_si512();
        for p in 0..np {
            o = _mm512_dpwssd_epi32(o, self.pair(p), _mm512_set1_epi32(rb.pairs[p]));
        }
        match self.kind {
            KQuant::Q4K => {
                let (d, dmin) = (half16(self.blk.add(Q4_D)), half16(self.blk.add(Q4_DMIN)));
                let a = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(d, xd), *acc);
                *acc = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(o), _mm512_mul_ps(dmin, xd), a);
            }
            KQuant::Q6K => {
                let d = half16(self.blk.add(Q6_D));
                let t = _mm512_sub_epi32(s, _mm512_slli_epi32::<5>(o));
                *acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(t), _mm512_mul_ps(d, xd), *acc);
            }
        }
    }

    /// `s + c·sc_g`: sub-block `g`'s dots `c` added to a row's integer sum.
    #[inline(always)]
    pub unsafe fn scaled(&self, s: __m512i, c: __m512i, g: usize) -> __m512i {
        _mm512_add_epi32(s, _mm512_mullo_epi32(c, self.sc(g)))
    }
}

/// The 16 bytes of `a` and of `b` interleaved: `a0 b0 a1 b1 …`.
#[inline(always)]
unsafe fn interleave(a: __m128i, b: __m128i) -> __m256i {
    _mm256_set_m128i(_mm_unpackhi_epi8(a, b), _mm_unpacklo_epi8(a, b))
}

/// 16 f16 at `p` as f32.
#[inline(always)]
unsafe fn half16(p: *const u8) -> __m512 {
    _mm512_cvtph_ps(_mm256_loadu_si256(p as *const __m256i))
}
