#!/bin/bash
# Builds `humanoid` with `--features cuda`, even on a machine without a CUDA toolkit: if nvcc
# is absent, NVIDIA's CUDA 13.0 compiler, headers and libraries are fetched from the Python
# package index into $CUDA_WHEELS (default ~/.cache/humanoid-cuda) and a link stub stands in
# for the driver library (the real libcuda.so.1 is found at run time on the GPU machine).
#
#   bash benches/gpu/build-cuda.sh [COMPUTE_CAP]      # default 90 (H100/H200)
#
# The binary lands in target-cuda/release/humanoid; run it with `--device cuda`.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CUDA_COMPUTE_CAP=${1:-${CUDA_COMPUTE_CAP:-90}}
if ! command -v nvcc >/dev/null; then
  W=${CUDA_WHEELS:-$HOME/.cache/humanoid-cuda}
  T=$W/x/nvidia/cu13
  if [ ! -x "$T/bin/nvcc" ]; then
    mkdir -p "$W/x"
    python3 -m pip download --no-deps -q -d "$W" nvidia-cuda-nvcc==13.0.88 \
      nvidia-cuda-runtime==13.0.88 nvidia-cublas==13.0.2.14 nvidia-curand==10.4.0.35 \
      nvidia-cuda-nvrtc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88 \
      nvidia-cuda-cccl==13.0.85
    for w in "$W"/*.whl; do python3 -m zipfile -e "$w" "$W/x"; done
    chmod +x "$T"/bin/* "$T"/nvvm/bin/*
    (cd "$T/lib" && for f in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnvrtc.so.13 libcurand.so.10; do ln -sf "$f" "${f%%.so*}.so"; done)
    ln -sfn lib "$T/lib64"
    # Link-time stand-in for the driver library: every cu* entry point cudarc declares.
    grep -oh "pub unsafe fn cu[A-Za-z0-9_]*" "$HOME"/.cargo/registry/src/*/cudarc-*/src/driver/sys/mod.rs \
      | awk '{print $4}' | sort -u | sed 's/.*/void &(void){}/' > "$W/cudastub.c"
    gcc -shared -fPIC -o "$T/lib/libcuda.so" -Wl,-soname,libcuda.so.1 "$W/cudastub.c"
  fi
  export CUDA_HOME=$T CUDA_PATH=$T PATH=$T/bin:$PATH LIBRARY_PATH=$T/lib:${LIBRARY_PATH:-}
  export NVCC_APPEND_FLAGS="-I$T/include/cccl" CUDARC_CUDA_VERSION=13000
fi
cargo fetch
cargo build --release --features cuda --target-dir target-cuda
echo "built target-cuda/release/humanoid (compute capability $CUDA_COMPUTE_CAP)"
