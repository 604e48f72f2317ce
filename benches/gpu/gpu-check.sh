#!/bin/bash
# The GPU checks of a cuda build, as one script: logits and engine agreement with the CPU
# kernels, `bench llm` on cuda and cpu side by side, a one-day Lin family run, `bench sim`.
# Expects the models in models/ and the binaries (humanoid, tests) xz-compressed in $S
# (/tmp/stash: the device tool carries 64 MiB a call, so files arrive in parts); logs go to $OUT.
set -u
S=/tmp/stash
cp -f .devD/* $S/ 2>/dev/null
log() { echo "== $(date +%T) $*"; }
t() { local s=$1; shift; log "$*"; timeout "$s" "$@"; echo "== rc=$?"; }
mkdir -p models/smollm2-135m models/minilm-l6-v2
cat $S/smol.a $S/smol.b > models/smollm2-135m/SmolLM2-135M-Instruct.Q4_1.gguf
cat $S/mini.a $S/mini.b > models/minilm-l6-v2/model.safetensors
cp $S/config.json $S/tokenizer.json models/minilm-l6-v2/
sha256sum models/smollm2-135m/* models/minilm-l6-v2/*
for b in humanoid tests; do xz -dc $S/$b.xz > /tmp/$b && chmod +x /tmp/$b; done
LIBDIRS=$(find /usr /opt /lib -xdev \( -name 'libcublasLt.so.13' -o -name 'libcurand.so.10' -o -name 'libnvrtc.so.13' -o -name 'libcudart.so.13' -o -name 'libcublas.so.13' -o -name 'libcuda.so.1' \) 2>/dev/null | xargs -r -n1 dirname | sort -u | tr '\n' ':')
export LD_LIBRARY_PATH=${LIBDIRS}${LD_LIBRARY_PATH:-}
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
ldd /tmp/humanoid | grep -E "not found|cuda|cublas|curand|nvrtc|stdc"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc
t 90 /tmp/humanoid bench llm --device cuda --json > $OUT/bench_cuda.json 2> $OUT/bench_cuda.err; tail -5 $OUT/bench_cuda.err; cat $OUT/bench_cuda.json
export HUMANOID_TEST_DEVICE=cuda; t 140 /tmp/tests tensor_backend::tensor_forward_matches_cpu_kernels_smollm2 tensor_backend::engine_on --test-threads 1 --nocapture > $OUT/tests_cuda.log 2>&1; grep -E "largest|cpu |test result|panicked|FAILED|kv pool" $OUT/tests_cuda.log | cut -c1-300
t 140 /tmp/humanoid run worlds/lin-family.toml --days 1 --device cuda --out /tmp/run_cuda > $OUT/run_cuda.log 2>&1; tail -c 1500 $OUT/run_cuda.log
cp /tmp/run_cuda/summary.json $OUT/run_cuda_summary.json 2>/dev/null
t 80 /tmp/humanoid bench llm --device cpu --repeat 1 --json > $OUT/bench_cpu.json 2> $OUT/bench_cpu.err; cat $OUT/bench_cpu.json
t 80 /tmp/humanoid bench sim --device cuda --agents 2,8,16 --steps 4 > $OUT/sim_cuda.log 2>&1; tail -8 $OUT/sim_cuda.log
log done
