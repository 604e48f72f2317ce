//! AVX-512 (BW + VNNI) versions of the K-quant dots in [`super::kquant`] (x86_64 only;
//! callers check the CPU and the slice sizes).
//!
//! Each step multiplies 64 values, two sub-blocks of 32 (or four of 16), in one `maddubs`
//! and one `vpdpwssd` per activation row, where the AVX2 kernel needs two of each. At the end
//! of a block the 16 integer lanes are folded into 8 (lane `k` plus lane `k + 8`): integer
//! sums are exact, so those 8 lanes hold exactly the AVX2 kernel's sums, and the rest (the
//! f32 lanes, the final sum) is the AVX2 kernel's code. A row's result is therefore the same
//! bits on both paths and in every tile size.

use super::avx2::hsum;
use super::kquant::{f32_at, BlockQ8K};
use super::kquant_avx2::{q4k_block_sum, q6k_block_sum};
use std::arch::x86_64::*;

#[inline(always)]
unsafe fn load256(p: *const u8) -> __m256i {
    _mm256_loadu_si256(p as *const __m256i)
}

#[inline(always)]
unsafe fn load512(p: *const u8) -> __m512i {
    _mm512_loadu_si512(p as *const __m512i)
}

/// The Q6_K scale index of each 16-bit lane for the block's four 64-value steps:
/// 4p + lane / 8 (one scale per 16 values: 8 lanes of 16 bits, as `maddubs` pairs them).
const SCALE_LANES: [[i16; 32]; 4] = {
    let mut t = [[0i16; 32]; 4];
    let mut p = 0;
    while p < 4 {
        let mut l = 0;
        while l < 32 {
            t[p][l] = (4 * p + l / 8) as i16;
            l += 1;
        }
        p += 1;
    }
    t
};

/// `[lo | hi]` as one 512-bit vector.
#[inline(always)]
unsafe fn join(lo: __m256i, hi: __m256i) -> __m512i {
    _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1)
}

/// The 16 lanes folded into the AVX2 kernel's 8 (lane k + lane k + 8).
#[inline(always)]
unsafe fn fold(v: __m512i) -> __m256i {
    _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1))
}

/// Q4_K row × `R` activation rows (`x` row r's blocks at `r * nb`; `w` repacked).
#[inline(always)]
unsafe fn q4k<const R: usize>(w: &[u8], x: &[BlockQ8K], nb: usize) -> [f32; R] {
    let m4 = _mm512_set1_epi8(0x0F);
    let mut acc = [_mm256_setzero_ps(); R];
    for i in 0..nb {
        let b = w.as_ptr().add(160 * i);
        let (d, dmin) = (f32_at(w, 160 * i), f32_at(w, 160 * i + 4));
        let sc = b.add(8) as *const i16;
        let m8 = _mm_loadl_epi64(b.add(24) as *const __m128i);
        let mv = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8));
        let mut isum = [_mm512_setzero_si512(); R];
        for j in 0..4 {
            // Sub-block 2j in the low nibbles, 2j + 1 in the high ones.
            let v = load256(b.add(32 + 32 * j));
            let q = _mm512_and_si512(join(v, _mm256_srli_epi16(v, 4)), m4);
            let s = join(
                _mm256_set1_epi16(*sc.add(2 * j)),
                _mm256_set1_epi16(*sc.add(2 * j + 1)),
            );
            for (r, is) in isum.iter_mut().enumerate() {
                let xq = x.get_unchecked(r * nb + i).qs.as_ptr() as *const u8;
                let p = _mm512_maddubs_epi16(q, load512(xq.add(64 * j)));
                *is = _mm512_dpwssd_epi32(*is, p, s);
            }
        }
        for r in 0..R {
            let xb = x.get_unchecked(r * nb + i);
            acc[r] = q4k_block_sum(acc[r], fold(isum[r]), xb, d, dmin, mv);
        }
    }
    acc.map(|a| hsum(a))
}

/// Q6_K row × `R` activation rows (`w` repacked).
#[inline(always)]
unsafe fn q6k<const R: usize>(w: &[u8], x: &[BlockQ8K], nb: usize) -> [f32; R] {
    let m4 = _mm512_set1_epi8(0x0F);
    let m2 = _mm512_set1_epi8(3);
    let idx: [__m512i; 4] =
        std::array::from_fn(|p| _mm512_loadu_si512(SCALE_LANES[p].as_ptr() as *const __m512i));
    let mut acc = [_mm256_setzero_ps(); R];
    for i in 0..nb {
        let b = w.as_ptr().add(228 * i);
        let d = f32_at(w, 228 * i + 224);
        let s16 = _mm256_loadu_si256(b.add(192) as *const __m256i);
        let s512 = _mm512_castsi256_si512(s16);
        let mut isum = [_mm512_setzero_si512(); R];
        for h in 0..2 {
            // Values 128h + 0..64 from the low nibbles, 128h + 64..128 from the high ones;
            // the two high bits of each come from `hh`.
            let l = load512(b.add(64 * h));
            let hh = load256(b.add(128 + 32 * h));
            let hb = join(hh, _mm256_srli_epi16(hh, 2));
            let hi = |v: __m512i| _mm512_slli_epi16(_mm512_and_si512(v, m2), 4);
            let q = [
                _mm512_or_si512(_mm512_and_si512(l, m4), hi(hb)),
                _mm512_or_si512(
                    _mm512_and_si512(_mm512_srli_epi16(l, 4), m4),
                    hi(_mm512_srli_epi16(hb, 4)),
                ),
            ];
            for (k, qk) in q.iter().enumerate() {
                let sv = _mm512_permutexvar_epi16(idx[2 * h + k], s512);
                for (r, is) in isum.iter_mut().enumerate() {
                    let xq = x.get_unchecked(r * nb + i).qs.as_ptr() as *const u8;
                    let p = _mm512_maddubs_epi16(*qk, load512(xq.add(128 * h + 64 * k)));
                    *is = _mm512_dpwssd_epi32(*is, p, sv);
                }
            }
        }
        for r in 0..R {
            let xb = x.get_unchecked(r * nb + i);
            acc[r] = q6k_block_sum(acc[r], fold(isum[r]), xb, d, s16);
        }
    }
    acc.map(|a| hsum(a))
}

/// One weight row × `R` activation rows (`R` of 1, 4 or 8) on AVX-512 BW and VNNI.
#[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512vnni")]
pub unsafe fn dot_rows<const R: usize>(q6: bool, w: &[u8], x: &[BlockQ8K], nb: usize) -> [f32; R] {
    if q6 {
        q6k::<R>(w, x, nb)
    } else {
        q4k::<R>(w, x, nb)
    }
}

/// [`super::kquant::quantize_row_q8k`] 16 values a step, with the same bits (rounding half
/// away from zero, as `f32::round`).
#[target_feature(enable = "avx512f")]
pub unsafe fn quantize_row_q8k(x: &[f32], out: &mut [BlockQ8K]) {
    let sign = _mm512_set1_ps(-0.0);
    for (blk, xs) in out.iter_mut().zip(x.chunks_exact(256)) {
        let mut m = _mm512_setzero_ps();
        for c in xs.chunks_exact(16) {
            m = _mm512_max_ps(m, _mm512_andnot_ps(sign, _mm512_loadu_ps(c.as_ptr())));
        }
        let amax = _mm512_reduce_max_ps(m);
        let d = amax / 127.0;
        let id = if d > 0.0 { 1.0 / d } else { 0.0 };
        blk.d = d;
        let idv = _mm512_set1_ps(id);
        for (g, c) in xs.chunks_exact(16).enumerate() {
            let y = _mm512_mul_ps(_mm512_loadu_ps(c.as_ptr()), idv);
            let t = _mm512_roundscale_ps::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(y);
            let half = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(
                _mm512_andnot_ps(sign, _mm512_sub_ps(y, t)),
                _mm512_set1_ps(0.5),
            );
            let step = _mm512_or_ps(_mm512_set1_ps(1.0), _mm512_and_ps(y, sign));
            let r = _mm512_mask_add_ps(t, half, t, step);
            let r = _mm512_min_ps(
                _mm512_max_ps(r, _mm512_set1_ps(-127.0)),
                _mm512_set1_ps(127.0),
            );
            let q = _mm512_cvtps_epi32(r);
            _mm_storeu_si128(
                blk.qs.as_mut_ptr().add(16 * g) as *mut __m128i,
                _mm512_cvtepi32_epi8(q),
            );
            blk.bsums[g] = _mm512_reduce_add_epi32(q) as i16;
        }
    }
}
