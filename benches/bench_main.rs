//! Criterion benches of the engine's hot paths (CPU kernels). Whole-engine numbers come from
//! `humanoid bench llm`.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use humanoid::llm::kernels::Weight;

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            ((i as u32).wrapping_mul(2654435761).wrapping_add(seed) % 2000) as f32 / 1000.0 - 1.0
        })
        .collect()
}

/// Q8_0 matmul of SmolLM2's MLP shape (1536 × 576) for 1, 4, 16 and 128 rows.
fn q8_matmul(c: &mut Criterion) {
    let (n, k) = (1536, 576);
    let w = Weight::q8_from_f32(&data(n * k, 1), n, k);
    let mut g = c.benchmark_group("q8_matmul_1536x576");
    for rows in [1usize, 4, 16, 128] {
        let x = data(rows * k, 2);
        let mut y = vec![0f32; rows * n];
        g.bench_with_input(BenchmarkId::from_parameter(rows), &rows, |b, _| {
            b.iter(|| w.matmul(black_box(&x), &mut y))
        });
    }
    g.finish();
}

/// The 1.5B default's gate projection (8960 × 1536) for 1 and 64 rows, as Q8_0 (requantized,
/// the former default), and in the file's own Q4_K and Q6_K blocks.
fn kquant_matmul(c: &mut Criterion) {
    use candle_core::quantized::k_quants::{BlockQ4K, BlockQ6K, GgmlType};
    use humanoid::llm::kernels::KQuant;
    fn raw<T: GgmlType>(x: &[f32]) -> Vec<u8> {
        let mut b = vec![T::zeros(); x.len() / 256];
        T::from_float(x, &mut b);
        let n = b.len() * std::mem::size_of::<T>();
        // SAFETY: GGML blocks are plain `repr(C)` data.
        unsafe { std::slice::from_raw_parts(b.as_ptr() as *const u8, n) }.to_vec()
    }
    let (n, k) = (8960, 1536);
    let w = data(n * k, 1);
    let mut weights = vec![
        ("q8_0", Weight::q8_from_f32(&w, n, k)),
        (
            "q4_k",
            Weight::K {
                kind: KQuant::Q4K,
                rows: n,
                cols: k,
                bytes: humanoid::llm::kernels::kquant::repack(KQuant::Q4K, &raw::<BlockQ4K>(&w)),
            },
        ),
        (
            "q6_k",
            Weight::K {
                kind: KQuant::Q6K,
                rows: n,
                cols: k,
                bytes: humanoid::llm::kernels::kquant::repack(KQuant::Q6K, &raw::<BlockQ6K>(&w)),
            },
        ),
    ];
    // The panels of 16 rows that AVX-512 VNNI machines multiply (`kquant_amx`).
    #[cfg(target_arch = "x86_64")]
    if humanoid::llm::kernels::has_kquant_panels() {
        use humanoid::llm::kernels::kquant_amx::repack;
        for (name, kind, raw) in [
            ("q4_k_panels", KQuant::Q4K, raw::<BlockQ4K>(&w)),
            ("q6_k_panels", KQuant::Q6K, raw::<BlockQ6K>(&w)),
        ] {
            let bytes = repack(kind, &raw, n, k);
            weights.push((
                name,
                Weight::Tiles {
                    kind,
                    rows: n,
                    cols: k,
                    bytes,
                },
            ));
        }
    }
    // The output matrix's size (about 152k rows), far larger than any cache: one activation
    // row streams it from memory, as each decode step at batch 1 does with every matrix.
    #[cfg(target_arch = "x86_64")]
    if humanoid::llm::kernels::has_kquant_panels() {
        let mut g = c.benchmark_group("matmul_152320x1536_from_memory");
        g.sample_size(10);
        let x = data(k, 2);
        let copies = 17;
        let mut y = vec![0f32; n * copies];
        for (name, wt) in &weights {
            let Weight::Tiles { kind, bytes, .. } = wt else {
                continue;
            };
            let big = Weight::Tiles {
                kind: *kind,
                rows: n * copies,
                cols: k,
                bytes: bytes.repeat(copies),
            };
            g.throughput(criterion::Throughput::Bytes((bytes.len() * copies) as u64));
            g.bench_function(*name, |b| b.iter(|| big.matmul(black_box(&x), &mut y)));
        }
        g.finish();
    }
    let mut g = c.benchmark_group("matmul_8960x1536");
    g.sample_size(10);
    for rows in [1usize, 16, 64] {
        let x = data(rows * k, 2);
        let mut y = vec![0f32; rows * n];
        for (name, wt) in &weights {
            g.bench_with_input(BenchmarkId::new(*name, rows), &rows, |b, _| {
                b.iter(|| wt.matmul(black_box(&x), &mut y))
            });
        }
    }
    g.finish();
}

/// Exact nearest-neighbour search over 10k unit vectors (384-dim), the memory hot path below
/// the HNSW threshold.
fn exact_search(c: &mut Criterion) {
    use humanoid::memory::index::{IndexConfig, VectorIndex};
    let dim = 384;
    let mut index = VectorIndex::new(dim, IndexConfig::default()).unwrap();
    for i in 0..10_000u64 {
        index.add(i, &data(dim, i as u32 + 7)).unwrap();
    }
    let q = data(dim, 99_999);
    c.bench_function("exact_search_10k_384", |b| {
        b.iter(|| index.search_exact(black_box(&q), 10).unwrap())
    });
}

criterion_group!(benches, q8_matmul, kquant_matmul, exact_search);
criterion_main!(benches);
