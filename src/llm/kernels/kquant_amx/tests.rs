//! The tile kernels against the 512-bit ones, over batch sizes and padded panels.

use super::super::kquant::tests::{encode, lcg};
use super::super::kquant::{self, KQuant};
use super::super::Weight;
use super::*;
use candle_core::quantized::k_quants::{BlockQ4K, BlockQ6K};

fn check(kind: KQuant) {
    // 37 rows: a padded last panel.
    let (rows, cols) = (37, 512);
    let w = lcg(7, rows * cols);
    let file = match kind {
        KQuant::Q4K => encode::<BlockQ4K>(&w),
        KQuant::Q6K => encode::<BlockQ6K>(&w),
    };
    let tiles = Weight::Tiles {
        kind,
        rows,
        cols,
        bytes: repack(kind, &file, rows, cols),
    };
    let plain = Weight::K {
        kind,
        rows,
        cols,
        bytes: kquant::repack(kind, &file),
    };
    // Decoding: the same values as the file's blocks.
    let (mut a, mut b) = (vec![0f32; cols], vec![0f32; cols]);
    for r in [0, 15, 16, 36] {
        tiles.row_f32(r, &mut a);
        plain.row_f32(r, &mut b);
        assert_eq!(a, b, "{kind:?} row {r}");
    }
    let t = 40;
    let x = lcg(11, t * cols);
    let mut want = vec![0f32; t * rows];
    plain.matmul(&x, &mut want);
    let mut all = vec![0f32; t * rows];
    tiles.matmul(&x, &mut all);
    for (i, (g, w)) in all.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-3 * w.abs().max(1.0),
            "{kind:?} {i}: {g} vs {w}"
        );
    }
    // Every batch size gives each row the same bits (fewer than 4 rows: vector dots).
    for n in [1, 3, 4, 16, 17, 33] {
        let mut part = vec![0f32; n * rows];
        tiles.matmul(&x[..n * cols], &mut part);
        assert_eq!(
            part.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            all[..n * rows]
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            "{kind:?}, {n} rows"
        );
    }
}

#[test]
fn q4k_tiles_agree_with_the_other_kernels_and_do_not_depend_on_the_batch() {
    if panels() {
        check(KQuant::Q4K);
    } else {
        eprintln!("no AVX-512 VNNI here: skipped");
    }
}

#[test]
fn q6k_tiles_agree_with_the_other_kernels_and_do_not_depend_on_the_batch() {
    if panels() {
        check(KQuant::Q6K);
    } else {
        eprintln!("no AVX-512 VNNI here: skipped");
    }
}
