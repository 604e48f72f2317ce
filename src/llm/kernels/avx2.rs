//! AVX2 + FMA versions of the kernels (x86_64 only; callers check the CPU first).

use super::{BlockQ8, QK};
use std::arch::x86_64::*;

/// Sum of the 8 lanes (in a fixed order).
#[inline(always)]
pub(super) unsafe fn hsum(v: __m256) -> f32 {
    let lo = _mm256_castps256_ps128(v);
    let hi = _mm256_extractf128_ps(v, 1);
    let s = _mm_add_ps(lo, hi);
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    let s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    _mm_cvtss_f32(s)
}

/// Integer dot of one block pair as 8 i32 lanes converted to f32: `maddubs` + `madd`, or
/// with `VNNI` one AVX-VNNI `vpdpbusd` (the same integer sums: no 16-bit saturation is
/// possible with |q| <= 127, so the same f32 result).
#[inline(always)]
unsafe fn block_dot<const VNNI: bool>(aw: __m256i, w: __m256i, x: __m256i) -> __m256 {
    let sx = _mm256_sign_epi8(x, w);
    if VNNI {
        return _mm256_cvtepi32_ps(_mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), aw, sx));
    }
    let p16 = _mm256_maddubs_epi16(aw, sx);
    let p32 = _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
    _mm256_cvtepi32_ps(p32)
}

/// One weight row against one activation row (inlined into the feature-enabled callers).
#[inline(always)]
unsafe fn dot_x1<const VNNI: bool>(w: &[BlockQ8], x: &[BlockQ8]) -> f32 {
    let mut acc = _mm256_setzero_ps();
    for (bw, bx) in w.iter().zip(x) {
        let wv = _mm256_loadu_si256(bw.qs.as_ptr() as *const __m256i);
        let aw = _mm256_sign_epi8(wv, wv);
        let xv = _mm256_loadu_si256(bx.qs.as_ptr() as *const __m256i);
        let p = block_dot::<VNNI>(aw, wv, xv);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(bw.d * bx.d), p, acc);
    }
    hsum(acc)
}

/// One weight row against four activation rows of `nb` blocks each.
#[inline(always)]
unsafe fn dot_x4<const VNNI: bool>(w: &[BlockQ8], x: &[BlockQ8], nb: usize) -> [f32; 4] {
    let mut acc = [_mm256_setzero_ps(); 4];
    for (b, bw) in w.iter().enumerate() {
        let wv = _mm256_loadu_si256(bw.qs.as_ptr() as *const __m256i);
        let aw = _mm256_sign_epi8(wv, wv);
        for (r, a) in acc.iter_mut().enumerate() {
            let bx = x.get_unchecked(r * nb + b);
            let xv = _mm256_loadu_si256(bx.qs.as_ptr() as *const __m256i);
            let p = block_dot::<VNNI>(aw, wv, xv);
            *a = _mm256_fmadd_ps(_mm256_set1_ps(bw.d * bx.d), p, *a);
        }
    }
    [hsum(acc[0]), hsum(acc[1]), hsum(acc[2]), hsum(acc[3])]
}

#[target_feature(enable = "avx2,fma")]
pub unsafe fn dot_q8_x1(w: &[BlockQ8], x: &[BlockQ8]) -> f32 {
    dot_x1::<false>(w, x)
}

#[target_feature(enable = "avx2,fma")]
pub unsafe fn dot_q8_x4(w: &[BlockQ8], x: &[BlockQ8], nb: usize) -> [f32; 4] {
    dot_x4::<false>(w, x, nb)
}

#[target_feature(enable = "avx2,fma,avxvnni")]
pub unsafe fn dot_q8_x1_vnni(w: &[BlockQ8], x: &[BlockQ8]) -> f32 {
    dot_x1::<true>(w, x)
}

#[target_feature(enable = "avx2,fma,avxvnni")]
pub unsafe fn dot_q8_x4_vnni(w: &[BlockQ8], x: &[BlockQ8], nb: usize) -> [f32; 4] {
    dot_x4::<true>(w, x, nb)
}

#[target_feature(enable = "avx2,fma")]
pub unsafe fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let mut acc = _mm256_setzero_ps();
    let mut i = 0;
    while i + 8 <= n {
        let va = _mm256_loadu_ps(a.as_ptr().add(i));
        let vb = _mm256_loadu_ps(b.as_ptr().add(i));
        acc = _mm256_fmadd_ps(va, vb, acc);
        i += 8;
    }
    let mut s = hsum(acc);
    while i < n {
        s += a[i] * b[i];
        i += 1;
    }
    s
}

/// Dots of `q` with rows at a stride; the query stays in registers for `d == 64`.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn strided_dots(q: &[f32], rows: &[f32], stride: usize, out: &mut [f32]) {
    let d = q.len();
    for (i, o) in out.iter_mut().enumerate() {
        let r = rows.as_ptr().add(i * stride);
        let mut a0 = _mm256_setzero_ps();
        let mut a1 = _mm256_setzero_ps();
        let mut k = 0;
        while k + 16 <= d {
            a0 = _mm256_fmadd_ps(
                _mm256_loadu_ps(q.as_ptr().add(k)),
                _mm256_loadu_ps(r.add(k)),
                a0,
            );
            a1 = _mm256_fmadd_ps(
                _mm256_loadu_ps(q.as_ptr().add(k + 8)),
                _mm256_loadu_ps(r.add(k + 8)),
                a1,
            );
            k += 16;
        }
        if k < d {
            a0 = _mm256_fmadd_ps(
                _mm256_loadu_ps(q.as_ptr().add(k)),
                _mm256_loadu_ps(r.add(k)),
                a0,
            );
        }
        *o = hsum(_mm256_add_ps(a0, a1));
    }
}

/// Weighted sum of rows, 64 columns at a time with the accumulators in registers.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn strided_weighted_sum(p: &[f32], rows: &[f32], stride: usize, acc: &mut [f32]) {
    let d = acc.len();
    let mut c = 0;
    while c < d {
        let ap = acc.as_mut_ptr().add(c);
        let mut a = [_mm256_setzero_ps(); 8];
        for (j, v) in a.iter_mut().enumerate() {
            *v = _mm256_loadu_ps(ap.add(8 * j));
        }
        for (i, &w) in p.iter().enumerate() {
            let wv = _mm256_set1_ps(w);
            let r = rows.as_ptr().add(i * stride + c);
            for (j, v) in a.iter_mut().enumerate() {
                *v = _mm256_fmadd_ps(wv, _mm256_loadu_ps(r.add(8 * j)), *v);
            }
        }
        for (j, v) in a.iter().enumerate() {
            _mm256_storeu_ps(ap.add(8 * j), *v);
        }
        c += 64;
    }
}

/// Same results as the scalar version: round half away from zero, clamp to ±127.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn quantize_row(x: &[f32], out: &mut [BlockQ8]) {
    let sign_mask = _mm256_set1_ps(-0.0);
    for (blk, xs) in out.iter_mut().zip(x.chunks_exact(QK)) {
        let v: [__m256; 4] = [0, 8, 16, 24].map(|o| _mm256_loadu_ps(xs.as_ptr().add(o)));
        let mut m = _mm256_andnot_ps(sign_mask, v[0]);
        for vi in &v[1..] {
            m = _mm256_max_ps(m, _mm256_andnot_ps(sign_mask, *vi));
        }
        let m128 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        let m128 = _mm_max_ps(m128, _mm_movehl_ps(m128, m128));
        let m128 = _mm_max_ss(m128, _mm_shuffle_ps(m128, m128, 1));
        let amax = _mm_cvtss_f32(m128);
        let d = amax / 127.0;
        let id = if d > 0.0 { 1.0 / d } else { 0.0 };
        blk.d = d;
        let vid = _mm256_set1_ps(id);
        let half = _mm256_set1_ps(0.5);
        let lim = _mm256_set1_ps(127.0);
        let mut q = [_mm256_setzero_si256(); 4];
        for (qi, vi) in q.iter_mut().zip(v) {
            let s = _mm256_mul_ps(vi, vid);
            // round half away from zero: trunc(s + copysign(0.5, s))
            let h = _mm256_or_ps(half, _mm256_and_ps(sign_mask, s));
            let r = _mm256_round_ps(_mm256_add_ps(s, h), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            let r = _mm256_max_ps(
                _mm256_min_ps(r, lim),
                _mm256_sub_ps(_mm256_setzero_ps(), lim),
            );
            *qi = _mm256_cvtps_epi32(r);
        }
        // Pack 4×8 i32 into 32 i8 in order.
        let a = _mm256_packs_epi32(q[0], q[1]);
        let b = _mm256_packs_epi32(q[2], q[3]);
        let p = _mm256_packs_epi16(a, b);
        let p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256(blk.qs.as_mut_ptr() as *mut __m256i, p);
    }
}

#[target_feature(enable = "avx2,fma")]
pub unsafe fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    let n = x.len().min(y.len());
    let va = _mm256_set1_ps(a);
    let mut i = 0;
    while i + 8 <= n {
        let vx = _mm256_loadu_ps(x.as_ptr().add(i));
        let vy = _mm256_loadu_ps(y.as_ptr().add(i));
        _mm256_storeu_ps(y.as_mut_ptr().add(i), _mm256_fmadd_ps(va, vx, vy));
        i += 8;
    }
    while i < n {
        y[i] += a * x[i];
        i += 1;
    }
}

const _: () = assert!(QK == 32);
