#!/usr/bin/env bash
# llama.cpp's server as llama-cpp-python packages it (`llama_cpp.server`), started with
# llama-server's own arguments, so the remote-backend test against a server that is not ours
# can use either:
#
#   python3 -m venv /tmp/lcpenv
#   /tmp/lcpenv/bin/pip install 'llama-cpp-python[server]==0.3.36'   # compiles llama.cpp, ~40 min on 2 cores
#   LCP_PYTHON=/tmp/lcpenv/bin/python HUMANOID_LLAMA_SERVER=$PWD/benches/remote/llama-cpp-python-server.sh \
#     cargo test --release --test tests llama_server -- --nocapture
#
# Understands -m/--model, --host, --port, -c/--ctx-size; other llama-server flags are ignored.
# The model is served under the name $LCP_ALIAS (default smollm2-135m), with every position's
# logits kept so `/v1/completions` answers `echo` with `logprobs`, and with
# `--interrupt_requests False`: by default the server cuts a running request short when the
# next one arrives, which corrupts the answers of concurrent clients.
set -euo pipefail
PY="${LCP_PYTHON:-python3}"
MODEL="" HOST=127.0.0.1 PORT=8000 CTX=4096
while [ $# -gt 0 ]; do
  case "$1" in
    -m|--model) MODEL="$2"; shift 2 ;;
    --host) HOST="$2"; shift 2 ;;
    --port) PORT="$2"; shift 2 ;;
    -c|--ctx-size) CTX="$2"; shift 2 ;;
    -np|--parallel) shift 2 ;;
    *) shift ;;
  esac
done
[ -n "$MODEL" ] || { echo "llama-cpp-python-server.sh: -m MODEL is needed" >&2; exit 2; }
exec "$PY" -m llama_cpp.server --model "$MODEL" --model_alias "${LCP_ALIAS:-smollm2-135m}" \
  --host "$HOST" --port "$PORT" --n_ctx "$CTX" --n_threads "${LCP_THREADS:-2}" --logits_all True \
  --interrupt_requests False
