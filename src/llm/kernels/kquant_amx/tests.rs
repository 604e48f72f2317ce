//! The tile kernels against the 512-bit ones, over batch sizes and padded panels.

use super::super::kquant::tests::{check_panels, encode, lcg};
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
    // Fewer than `VECTOR_BELOW` rows take the vector dots where the tiles exist; a batch
    // past a whole tile takes both.
    check_panels(
        &format!("{kind:?}"),
        (&tiles, &plain),
        1e-3,
        &[1, 3, 4, 15, 16, 17, 20, 33],
    );
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
