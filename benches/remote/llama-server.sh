#!/usr/bin/env bash
# Builds llama.cpp's llama-server (CPU) into target/llama-server/, for the remote-backend test
# against a server that is not ours:
#
#   bash benches/remote/llama-server.sh
#   HUMANOID_LLAMA_SERVER=$PWD/target/llama-server/llama-server \
#     cargo test --release --test tests llama_server -- --nocapture
#
# No prebuilt llama-server exists on the Python package index or in Debian bookworm, so the
# sources come from llama-cpp-python's source distribution (it vendors llama.cpp), fetched
# with the ordinary pip client. Needs cmake and a C++ compiler; takes a while on few cores
# (JOBS=N to set the parallel jobs). Idempotent: an existing binary is kept.
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
OUT="$PWD/target/llama-server"
BIN="$OUT/llama-server"
if [ -x "$BIN" ]; then
  echo "export HUMANOID_LLAMA_SERVER=$BIN"
  exit 0
fi
command -v cmake >/dev/null || { echo "cmake is needed (apt-get install cmake)" >&2; exit 1; }
mkdir -p "$OUT/src"
if [ ! -d "$OUT/src/llama_cpp_python-$VERSION" ]; then
  python3 -m pip download --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d "$OUT/src"
  tar -xzf "$OUT"/src/llama_cpp_python-"$VERSION".tar.gz -C "$OUT/src"
fi
SRC="$OUT/src/llama_cpp_python-$VERSION/vendor/llama.cpp"
[ -f "$SRC/CMakeLists.txt" ] || { echo "no llama.cpp sources in $SRC" >&2; exit 1; }
cmake -S "$SRC" -B "$OUT/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON \
  -DLLAMA_BUILD_SERVER=ON -DBUILD_SHARED_LIBS=OFF
cmake --build "$OUT/build" --target llama-server -j "${JOBS:-$(nproc)}"
cp "$OUT/build/bin/llama-server" "$BIN"
echo "export HUMANOID_LLAMA_SERVER=$BIN"
