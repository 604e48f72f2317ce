#!/usr/bin/env bash
# A Python virtual environment with the `gguf` package (the GGUF writer of llama.cpp's
# project, on PyPI) and numpy, for tests/synthetic/make_gguf.py:
#
#   bash tests/synthetic/setup.sh [VENV]        (default VENV: target/synthetic-venv)
#   VENV/bin/python tests/synthetic/make_gguf.py --tokenizer MODEL.gguf --out DIR
#
# Idempotent: a venv already set up with these requirements is only checked. The gguf
# version is pinned: the files' bytes (checked by sha256 in the tests) depend on it.
# PYTHON overrides the interpreter (default python3).
set -euo pipefail

VENV="${1:-target/synthetic-venv}"
PYTHON="${PYTHON:-python3}"
DEPS=("gguf==0.19.0" "numpy>=1.26,<3")
IMPORTS="import numpy, gguf"
STAMP="$VENV/.synthetic-requirements"
WANTED="${DEPS[*]}"

say() { echo "synthetic setup: $*"; }
fail() { echo "synthetic setup: ERROR: $*" >&2; exit 1; }

command -v "$PYTHON" >/dev/null 2>&1 || fail "$PYTHON not found (install Python 3, e.g. apt-get install python3 python3-venv)"
if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANTED" ] \
  && "$VENV/bin/python" -c "$IMPORTS" >/dev/null 2>&1; then
  say "already set up ($WANTED)"
  exit 0
fi
if [ -e "$VENV" ] && [ ! -f "$VENV/pyvenv.cfg" ] && [ -n "$(ls -A "$VENV" 2>/dev/null)" ]; then
  fail "$VENV exists and is not a Python venv; remove it or pass another path"
fi
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -c "import venv, ensurepip" >/dev/null 2>&1 \
    || fail "$PYTHON has no venv/ensurepip module (on Debian/Ubuntu: apt-get install python3-venv)"
  say "creating the venv $VENV"
  mkdir -p "$(dirname "$VENV")"
  "$PYTHON" -m venv "$VENV" || fail "'$PYTHON -m venv $VENV' failed (on Debian/Ubuntu: apt-get install python3-venv)"
fi
rm -f "$STAMP"
say "installing ${DEPS[*]}"
"$VENV/bin/python" -m pip --disable-pip-version-check install --progress-bar off "${DEPS[@]}" \
  || fail "pip could not install ${DEPS[*]} (see pip's output above; is PyPI reachable?)"
"$VENV/bin/python" -c "$IMPORTS" || fail "the installed packages do not import"
echo "$WANTED" >"$STAMP"
say "installed: $("$VENV/bin/python" -m pip --disable-pip-version-check list --format freeze 2>/dev/null | grep -iE '^(gguf|numpy)==' | tr '\n' ' ')"
