//! AVX2 versions of the K-quant dots in [`super::kquant`] (x86_64 only; callers check the
//! CPU and the slice sizes).
//!
//! Per block and activation row, the integer sums stay in 8 i32 lanes (`maddubs` pairs then
//! the sub-block scales through `madd`, or AVX-VNNI's `vpdpwssd`, which adds in one step) and
//! are folded into 8 f32 lanes with one multiply-add by the block's scales; the lanes are
//! summed once per row. The four-row kernels run exactly the one-row kernel's operations per
//! row, so a row's result does not depend on its batch.

use super::avx2::hsum;
use super::kquant::{f32_at, BlockQ8K};
use std::arch::x86_64::*;

#[inline(always)]
unsafe fn load(p: *const u8) -> __m256i {
    _mm256_loadu_si256(p as *const __m256i)
}

/// `acc + madd(p, s)` (pairs of i16 products summed into i32 lanes).
#[inline(always)]
unsafe fn dp16<const VNNI: bool>(acc: __m256i, p: __m256i, s: __m256i) -> __m256i {
    if VNNI {
        _mm256_dpwssd_avx_epi32(acc, p, s)
    } else {
        _mm256_add_epi32(acc, _mm256_madd_epi16(p, s))
    }
}

/// Sub-blocks 2j and 2j+1 of a repacked Q4_K block: 2 vectors of 32 unsigned values.
#[inline(always)]
unsafe fn q4k_values(b: *const u8, j: usize) -> [__m256i; 2] {
    let m4 = _mm256_set1_epi8(0x0F);
    let v = load(b.add(32 + 32 * j));
    [
        _mm256_and_si256(v, m4),
        _mm256_and_si256(_mm256_srli_epi16(v, 4), m4),
    ]
}

/// Half `h` of a Q6_K block: 4 vectors of 32 unsigned 6-bit values (values 128h + 32k..).
#[inline(always)]
unsafe fn q6k_values(b: *const u8, h: usize) -> [__m256i; 4] {
    let m4 = _mm256_set1_epi8(0x0F);
    let m2 = _mm256_set1_epi8(3);
    let l0 = load(b.add(64 * h));
    let l1 = load(b.add(64 * h + 32));
    let hh = load(b.add(128 + 32 * h));
    let hi = |v: __m256i| _mm256_slli_epi16(_mm256_and_si256(v, m2), 4);
    [
        _mm256_or_si256(_mm256_and_si256(l0, m4), hi(hh)),
        _mm256_or_si256(_mm256_and_si256(l1, m4), hi(_mm256_srli_epi16(hh, 2))),
        _mm256_or_si256(
            _mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
            hi(_mm256_srli_epi16(hh, 4)),
        ),
        _mm256_or_si256(
            _mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
            hi(_mm256_srli_epi16(hh, 6)),
        ),
    ]
}

/// One Q4_K block's contribution added to a row's f32 lanes: its integer sums (8 lanes)
/// scaled by `d`, less the sub-block minimums (`mv`, against the activations' sums of 16)
/// scaled by `dmin`. Shared by the AVX-512 kernel, so both give the same bits.
#[inline(always)]
pub(super) unsafe fn q4k_block_sum(
    acc: __m256,
    isum: __m256i,
    xb: &BlockQ8K,
    d: f32,
    dmin: f32,
    mv: __m256i,
) -> __m256 {
    let bs = _mm256_loadu_si256(xb.bsums.as_ptr() as *const __m256i);
    let msum = _mm256_madd_epi16(bs, mv);
    let a = _mm256_fmadd_ps(_mm256_set1_ps(d * xb.d), _mm256_cvtepi32_ps(isum), acc);
    _mm256_fnmadd_ps(_mm256_set1_ps(dmin * xb.d), _mm256_cvtepi32_ps(msum), a)
}

/// One Q6_K block's contribution added to a row's f32 lanes: its integer sums (8 lanes) less
/// the 32 offset of the 6-bit values (the sub-block scales `s16` against the activations'
/// sums of 16), scaled by `d`. Shared by the AVX-512 kernel.
#[inline(always)]
pub(super) unsafe fn q6k_block_sum(
    acc: __m256,
    isum: __m256i,
    xb: &BlockQ8K,
    d: f32,
    s16: __m256i,
) -> __m256 {
    let bs = _mm256_loadu_si256(xb.bsums.as_ptr() as *const __m256i);
    let bias = _mm256_slli_epi32(_mm256_madd_epi16(bs, s16), 5);
    let t = _mm256_cvtepi32_ps(_mm256_sub_epi32(isum, bias));
    _mm256_fmadd_ps(_mm256_set1_ps(d * xb.d), t, acc)
}

/// How far ahead of the block being multiplied its weights are asked for: the rows lie one
/// after another, so this runs on into the next rows.
const AHEAD_BYTES: usize = 4096;

/// Q4_K row × `R` activation rows (`x` row r's blocks at `r * nb`; `w` repacked).
#[inline(always)]
unsafe fn q4k<const R: usize, const VNNI: bool>(w: &[u8], x: &[BlockQ8K], nb: usize) -> [f32; R] {
    let mut acc = [_mm256_setzero_ps(); R];
    for i in 0..nb {
        let b = w.as_ptr().add(160 * i);
        super::prefetch(b.wrapping_add(AHEAD_BYTES), 160);
        let (d, dmin) = (f32_at(w, 160 * i), f32_at(w, 160 * i + 4));
        let sc = b.add(8) as *const i16;
        let m8 = _mm_loadl_epi64(b.add(24) as *const __m128i);
        let mv = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8));
        let mut isum = [_mm256_setzero_si256(); R];
        for j in 0..4 {
            let q = q4k_values(b, j);
            for (h, qh) in q.iter().enumerate() {
                let s = _mm256_set1_epi16(*sc.add(2 * j + h));
                for (r, is) in isum.iter_mut().enumerate() {
                    let xq = x.get_unchecked(r * nb + i).qs.as_ptr() as *const u8;
                    let p = _mm256_maddubs_epi16(*qh, load(xq.add(64 * j + 32 * h)));
                    *is = dp16::<VNNI>(*is, p, s);
                }
            }
        }
        for r in 0..R {
            acc[r] = q4k_block_sum(acc[r], isum[r], x.get_unchecked(r * nb + i), d, dmin, mv);
        }
    }
    acc.map(|a| hsum(a))
}

/// Q6_K row × `R` activation rows (`w` repacked).
#[inline(always)]
unsafe fn q6k<const R: usize, const VNNI: bool>(w: &[u8], x: &[BlockQ8K], nb: usize) -> [f32; R] {
    let mut acc = [_mm256_setzero_ps(); R];
    for i in 0..nb {
        let b = w.as_ptr().add(228 * i);
        super::prefetch(b.wrapping_add(AHEAD_BYTES), 228);
        let d = f32_at(w, 228 * i + 224);
        let s = b.add(192) as *const i16;
        let s16 = _mm256_loadu_si256(s as *const __m256i);
        let mut isum = [_mm256_setzero_si256(); R];
        for h in 0..2 {
            let q = q6k_values(b, h);
            for (k, qk) in q.iter().enumerate() {
                let g = 8 * h + 2 * k;
                let sv =
                    _mm256_setr_m128i(_mm_set1_epi16(*s.add(g)), _mm_set1_epi16(*s.add(g + 1)));
                for (r, is) in isum.iter_mut().enumerate() {
                    let xq = x.get_unchecked(r * nb + i).qs.as_ptr() as *const u8;
                    let p = _mm256_maddubs_epi16(*qk, load(xq.add(128 * h + 32 * k)));
                    *is = dp16::<VNNI>(*is, p, sv);
                }
            }
        }
        for r in 0..R {
            acc[r] = q6k_block_sum(acc[r], isum[r], x.get_unchecked(r * nb + i), d, s16);
        }
    }
    acc.map(|a| hsum(a))
}

/// One weight row × `R` activation rows through the CPU's best kernel (`R` of 1, 4 or 8).
#[target_feature(enable = "avx2,fma")]
pub unsafe fn dot_rows<const R: usize>(q6: bool, w: &[u8], x: &[BlockQ8K], nb: usize) -> [f32; R] {
    if q6 {
        q6k::<R, false>(w, x, nb)
    } else {
        q4k::<R, false>(w, x, nb)
    }
}

/// As [`dot_rows`] with AVX-VNNI.
#[target_feature(enable = "avx2,fma,avxvnni")]
pub unsafe fn dot_rows_vnni<const R: usize>(
    q6: bool,
    w: &[u8],
    x: &[BlockQ8K],
    nb: usize,
) -> [f32; R] {
    if q6 {
        q6k::<R, true>(w, x, nb)
    } else {
        q4k::<R, true>(w, x, nb)
    }
}
