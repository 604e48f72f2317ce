//! AVX-512 versions of the f32 vector ops of attention and the feed-forward (x86_64 only;
//! callers check the CPU and the slice sizes).
//!
//! - [`strided_dots`] and [`strided_weighted_sum`] give the AVX2 kernels' bits: a 16-lane
//!   accumulator holds the AVX2 kernel's two 8-lane accumulators side by side, and each lane
//!   sees the same fused multiply-adds in the same order.
//! - [`softmax`] and [`silu_mul`] use [`exp`], a polynomial (Cephes' `expf`, within 2 ulp of
//!   the exact value), in place of libm's: elementwise, so a row's result does not depend on
//!   its neighbours or the batch.

use super::avx2::hsum;
use std::arch::x86_64::*;

/// `out[i] = q · rows[i·stride ..]` for `q.len()` a multiple of 16, four rows at a time.
///
/// # Safety
/// The CPU must support AVX-512F; `rows` must hold `(out.len() - 1)·stride + q.len()` values.
#[target_feature(enable = "avx512f,avx2,fma")]
pub unsafe fn strided_dots(q: &[f32], rows: &[f32], stride: usize, out: &mut [f32]) {
    let d = q.len();
    debug_assert!(d.is_multiple_of(16));
    let qp = q.as_ptr();
    let rp = rows.as_ptr();
    let mut i = 0;
    while i + 4 <= out.len() {
        let r = [0, 1, 2, 3].map(|j| rp.add((i + j) * stride));
        let mut a = [_mm512_setzero_ps(); 4];
        let mut k = 0;
        while k < d {
            let qv = _mm512_loadu_ps(qp.add(k));
            a[0] = _mm512_fmadd_ps(qv, _mm512_loadu_ps(r[0].add(k)), a[0]);
            a[1] = _mm512_fmadd_ps(qv, _mm512_loadu_ps(r[1].add(k)), a[1]);
            a[2] = _mm512_fmadd_ps(qv, _mm512_loadu_ps(r[2].add(k)), a[2]);
            a[3] = _mm512_fmadd_ps(qv, _mm512_loadu_ps(r[3].add(k)), a[3]);
            k += 16;
        }
        out[i] = fold(a[0]);
        out[i + 1] = fold(a[1]);
        out[i + 2] = fold(a[2]);
        out[i + 3] = fold(a[3]);
        i += 4;
    }
    while i < out.len() {
        let r = rp.add(i * stride);
        let mut a = _mm512_setzero_ps();
        let mut k = 0;
        while k < d {
            a = _mm512_fmadd_ps(_mm512_loadu_ps(qp.add(k)), _mm512_loadu_ps(r.add(k)), a);
            k += 16;
        }
        out[i] = fold(a);
        i += 1;
    }
}

#[inline(always)]
unsafe fn high256(a: __m512) -> __m256 {
    _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1))
}

/// The AVX2 kernels' reduction of their two accumulators (the low and high halves of `a`).
#[inline(always)]
unsafe fn fold(a: __m512) -> f32 {
    hsum(_mm256_add_ps(_mm512_castps512_ps256(a), high256(a)))
}

/// `acc += Σ_i p[i] · rows[i·stride ..]` for `acc.len()` a multiple of 128: 128 columns at
/// a time with the accumulators in registers.
///
/// # Safety
/// The CPU must support AVX-512F; `rows` must hold `(p.len() - 1)·stride + acc.len()` values.
#[target_feature(enable = "avx512f")]
pub unsafe fn strided_weighted_sum(p: &[f32], rows: &[f32], stride: usize, acc: &mut [f32]) {
    let d = acc.len();
    debug_assert!(d.is_multiple_of(128));
    let mut c = 0;
    while c < d {
        let ap = acc.as_mut_ptr().add(c);
        let mut a = [_mm512_setzero_ps(); 8];
        for (j, v) in a.iter_mut().enumerate() {
            *v = _mm512_loadu_ps(ap.add(16 * j));
        }
        for (i, &w) in p.iter().enumerate() {
            let wv = _mm512_set1_ps(w);
            let r = rows.as_ptr().add(i * stride + c);
            a[0] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(r), a[0]);
            a[1] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(r.add(16)), a[1]);
            a[2] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(r.add(32)), a[2]);
            a[3] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(r.add(48)), a[3]);
            a[4] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(r.add(64)), a[4]);
            a[5] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(r.add(80)), a[5]);
            a[6] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(r.add(96)), a[6]);
            a[7] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(r.add(112)), a[7]);
        }
        for (j, v) in a.iter().enumerate() {
            _mm512_storeu_ps(ap.add(16 * j), *v);
        }
        c += 128;
    }
}

/// `e^x` per lane: Cephes' `expf` (range reduction by ln 2 in two parts, a degree-5
/// polynomial, then `2^n` by `vscalefps`), within 2 ulp; 0 below −104, +∞ above 88.7.
#[inline]
#[target_feature(enable = "avx512f")]
pub unsafe fn exp(x: __m512) -> __m512 {
    let x = _mm512_min_ps(x, _mm512_set1_ps(89.0));
    let x = _mm512_max_ps(x, _mm512_set1_ps(-110.0));
    let n = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
        _mm512_mul_ps(x, _mm512_set1_ps(std::f32::consts::LOG2_E)),
    );
    let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693_359_4), x);
    let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.121_944_4e-4), r);
    let mut y = _mm512_set1_ps(1.987_569_1e-4);
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.398_2e-3));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.333_452e-3));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.166_579_6e-2));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(0.166_666_65));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(0.5));
    let r2 = _mm512_mul_ps(r, r);
    y = _mm512_fmadd_ps(y, r2, r);
    y = _mm512_add_ps(y, _mm512_set1_ps(1.0));
    _mm512_scalef_ps(y, n)
}

/// Softmax in place: the maximum, then `e^(x - max)` and its sum in 16 lanes (folded in a
/// fixed order), then the division.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f,avx2,fma")]
pub unsafe fn softmax(x: &mut [f32]) {
    let n = x.len();
    let p = x.as_mut_ptr();
    let tail = (n % 16) as u32;
    let tail_mask: __mmask16 = ((1u32 << tail) - 1) as __mmask16;
    let full = n - n % 16;
    let mut m = _mm512_set1_ps(f32::NEG_INFINITY);
    let mut i = 0;
    while i < full {
        m = _mm512_max_ps(m, _mm512_loadu_ps(p.add(i)));
        i += 16;
    }
    if tail > 0 {
        m = _mm512_mask_max_ps(m, tail_mask, m, _mm512_maskz_loadu_ps(tail_mask, p.add(i)));
    }
    let mv = _mm512_set1_ps(_mm512_reduce_max_ps(m));
    let mut s = _mm512_setzero_ps();
    let mut i = 0;
    while i < full {
        let e = exp(_mm512_sub_ps(_mm512_loadu_ps(p.add(i)), mv));
        _mm512_storeu_ps(p.add(i), e);
        s = _mm512_add_ps(s, e);
        i += 16;
    }
    if tail > 0 {
        let v = _mm512_maskz_loadu_ps(tail_mask, p.add(i));
        let e = exp(_mm512_sub_ps(v, mv));
        _mm512_mask_storeu_ps(p.add(i), tail_mask, e);
        s = _mm512_mask_add_ps(s, tail_mask, s, e);
    }
    let sum = fold(s);
    let sv = _mm512_set1_ps(sum);
    let mut i = 0;
    while i < full {
        _mm512_storeu_ps(p.add(i), _mm512_div_ps(_mm512_loadu_ps(p.add(i)), sv));
        i += 16;
    }
    if tail > 0 {
        let v = _mm512_maskz_loadu_ps(tail_mask, p.add(i));
        _mm512_mask_storeu_ps(p.add(i), tail_mask, _mm512_div_ps(v, sv));
    }
}

/// SiLU(gate) · up, in place into `gate` (`gate.len() <= up.len()`): `g / (1 + e^-g) · u`.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
pub unsafe fn silu_mul(gate: &mut [f32], up: &[f32]) {
    let n = gate.len();
    debug_assert!(up.len() >= n);
    let g = gate.as_mut_ptr();
    let u = up.as_ptr();
    let mut i = 0;
    while i < n {
        let mask: __mmask16 = if i + 16 <= n {
            0xFFFF
        } else {
            ((1u32 << (n - i)) - 1) as __mmask16
        };
        let gv = _mm512_maskz_loadu_ps(mask, g.add(i));
        let uv = _mm512_maskz_loadu_ps(mask, u.add(i));
        let e = exp(_mm512_sub_ps(_mm512_setzero_ps(), gv));
        let r = _mm512_mul_ps(_mm512_div_ps(gv, _mm512_add_ps(_mm512_set1_ps(1.0), e)), uv);
        _mm512_mask_storeu_ps(g.add(i), mask, r);
        i += 16;
    }
}
