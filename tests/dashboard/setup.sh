#!/usr/bin/env bash
# Installs the ORIGINAL Humanoid Agents dashboard (run_dashboard.py of the `humanoidagents`
# package on PyPI) into a Python virtual environment, for tests/ha_dashboard.rs and for
# looking at our runs by hand:
#
#   bash tests/dashboard/setup.sh [VENV]        (default VENV: target/ha-dashboard-venv)
#   cd VENV/lib/python3.*/site-packages/humanoidagents
#   VENV/bin/python run_dashboard.py --folder RUN/states
#
# Idempotent: a venv already set up with these requirements is only checked. The package is
# installed without its declared dependencies (openai, scikit-learn, dash-daq, ... which the
# simulation needs and the dashboard does not); the dashboard's own imports are installed
# with upper bounds that are known to work (numpy 2 removed np.NaN, which it uses).
# PYTHON overrides the interpreter (default python3).
set -euo pipefail

VENV="${1:-target/ha-dashboard-venv}"
PYTHON="${PYTHON:-python3}"
PACKAGE="humanoidagents==0.1.2"
DEPS=(
  "numpy<2"
  "pandas<3"
  "dash<5"
  "dash-bootstrap-components<3"
  "plotly<8"
  "PyYAML<7"
)
IMPORTS="import numpy, pandas, dash, dash_bootstrap_components, plotly, yaml, humanoidagents"
STAMP="$VENV/.ha-dashboard-requirements"
WANTED="$PACKAGE ${DEPS[*]}"

say() { echo "ha-dashboard setup: $*"; }
fail() { echo "ha-dashboard setup: ERROR: $*" >&2; exit 1; }

command -v "$PYTHON" >/dev/null 2>&1 || fail "$PYTHON not found (install Python 3, e.g. apt-get install python3 python3-venv)"
say "using $("$PYTHON" --version 2>&1) ($(command -v "$PYTHON")), venv $VENV"

# Already set up with exactly these requirements and importable: nothing to do.
if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANTED" ] \
  && "$VENV/bin/python" -c "$IMPORTS" >/dev/null 2>&1; then
  say "already set up ($(cat "$STAMP"))"
  exit 0
fi

if [ -e "$VENV" ] && [ ! -f "$VENV/pyvenv.cfg" ] && [ -n "$(ls -A "$VENV" 2>/dev/null)" ]; then
  fail "$VENV exists and is not a Python venv; remove it or pass another path"
fi

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -c "import venv, ensurepip" >/dev/null 2>&1 \
    || fail "$PYTHON has no venv/ensurepip module (on Debian/Ubuntu: apt-get install python3-venv)"
  say "creating the venv"
  mkdir -p "$(dirname "$VENV")"
  "$PYTHON" -m venv "$VENV" || fail "'$PYTHON -m venv $VENV' failed (on Debian/Ubuntu: apt-get install python3-venv)"
fi
rm -f "$STAMP"

PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)
say "installing the dashboard's dependencies: ${DEPS[*]}"
"${PIP[@]}" install --progress-bar off "${DEPS[@]}" || fail "pip could not install ${DEPS[*]} (see pip's output above; is PyPI reachable?)"
say "installing $PACKAGE without its dependencies"
"${PIP[@]}" install --progress-bar off --no-deps "$PACKAGE" || fail "pip could not install $PACKAGE (see pip's output above; is PyPI reachable?)"

"$VENV/bin/python" -c "$IMPORTS" || fail "the installed packages do not import"
DASHBOARD="$("$VENV/bin/python" -c 'import os, humanoidagents; print(os.path.join(os.path.dirname(humanoidagents.__file__), "run_dashboard.py"))')"
[ -f "$DASHBOARD" ] || fail "$DASHBOARD is missing from the installed package"
echo "$WANTED" >"$STAMP"
say "installed: $("$VENV/bin/python" -m pip --disable-pip-version-check list --format freeze 2>/dev/null \
  | grep -iE '^(humanoidagents|numpy|pandas|dash|dash-bootstrap-components|dash_bootstrap_components|plotly|PyYAML)==' | tr '\n' ' ')"
say "dashboard: $DASHBOARD"
