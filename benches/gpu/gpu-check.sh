#!/bin/bash
# The GPU checks of a cuda build, as one script (under 10 minutes on an H100-class GPU):
# logits and engine agreement with the CPU kernels, `bench llm` on cuda and cpu side by side
# for the 135M and (when models/ holds it) the 1.5B, a one-day Lin family run, and
# `bench sim --agents 2,8,25` on the 1.5B. Logs and JSON go to $OUT (default ./gpu-out).
#
# On a machine with the repository, the models (`humanoid models fetch --all`) and a cuda
# build (`bash benches/gpu/build-cuda.sh`): `bash benches/gpu/gpu-check.sh`.
# On the project's borrowed GPU machines (no network, 64 MiB carried a call) the small models
# and the binaries (humanoid, tests) arrive xz-compressed in parts in $S instead.
set -u
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
# The first checks on the 135M model (the default chat model is the 1.5B).
export HUMANOID_CHAT_MODEL=smollm2-135m
S=/tmp/stash
if [ -x target-cuda/release/humanoid ] && [ -f models/smollm2-135m/SmolLM2-135M-Instruct.Q4_1.gguf ]; then
  cp target-cuda/release/humanoid /tmp/humanoid
  T=$(ls -t target-cuda/release/deps/tests-* 2>/dev/null | grep -v '\.d$' | head -1)
  [ -n "$T" ] && cp "$T" /tmp/tests
  STASH=0
else
  STASH=1
fi
[ "$STASH" = 1 ] && cp -f .devD/* $S/ 2>/dev/null
log() { echo "== $(date +%T) $*"; }
t() { local s=$1; shift; log "$*"; timeout "$s" "$@"; echo "== rc=$?"; }
if [ "$STASH" = 1 ]; then
  mkdir -p models/smollm2-135m models/minilm-l6-v2
  cat $S/smol.a $S/smol.b > models/smollm2-135m/SmolLM2-135M-Instruct.Q4_1.gguf
  cat $S/mini.a $S/mini.b > models/minilm-l6-v2/model.safetensors
  cp $S/config.json $S/tokenizer.json models/minilm-l6-v2/
  sha256sum models/smollm2-135m/* models/minilm-l6-v2/*
  for b in humanoid tests; do xz -dc $S/$b.xz > /tmp/$b && chmod +x /tmp/$b; done
fi
Q=models/qwen2.5-coder-1.5b/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
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
if [ -f "$Q" ]; then
  /tmp/humanoid inspect-model qwen2.5-coder-1.5b --device cuda | grep memory
  t 120 /tmp/humanoid bench llm --model qwen2.5-coder-1.5b --device cuda --json > $OUT/bench_cuda_1.5b.json 2> $OUT/bench_cuda_1.5b.err; cat $OUT/bench_cuda_1.5b.json
  t 150 /tmp/humanoid bench sim --model qwen2.5-coder-1.5b --device cuda --agents 2,8,25 --steps 2 > $OUT/sim_cuda_1.5b.log 2>&1; tail -8 $OUT/sim_cuda_1.5b.log
else
  log "no $Q: the 1.5B checks are skipped"
fi
log done
