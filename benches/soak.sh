#!/bin/bash
# Soak: runs bundled worlds for N simulated days each on the default model, sampling the
# process's resident memory (VmRSS) every few seconds together with the simulated time
# reached, then reports peak memory and growth per simulated hour (least-squares slope of RSS
# over simulated hours, after the first simulated hour's warm-up).
#
#   bash benches/soak.sh [DAYS] [WORLD...]     # default: 2 days of all three bundled worlds
#
# Writes runs and samples under target/soak/ and prints one line per world.
set -euo pipefail
cd "$(dirname "$0")/.."
DAYS=${1:-2}
shift || true
WORLDS=("$@")
[ ${#WORLDS[@]} -gt 0 ] || WORLDS=(worlds/lin-family.toml worlds/friends.toml worlds/big-bang-theory.toml)
BIN=target/release/humanoid
[ -x "$BIN" ] || cargo build --release
OUT=target/soak
mkdir -p "$OUT"
# A copy, so a rebuild during the soak does not change the program under test.
cp "$BIN" "$OUT/humanoid"
BIN=$OUT/humanoid
for w in "${WORLDS[@]}"; do
  name=$(basename "$w" .toml)
  run="$OUT/$name-$(date +%s)"
  samples="$run.rss.csv"
  echo "seconds,state_files,rss_kib" > "$samples"
  # Per step: RSS, the allocator's live and free heap, the prefix cache, memory nodes.
  HUMANOID_MEM_LOG="$run.mem.csv" "$BIN" run "$w" --days "$DAYS" --out "$run" > "$run.log" 2>&1 &
  pid=$!
  t0=$(date +%s)
  while kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ {print $2}' /proc/$pid/status 2>/dev/null || true)
    files=$(ls "$run" 2>/dev/null | grep -c '^state_' || true)
    [ -n "$rss" ] && echo "$(( $(date +%s) - t0 )),$files,$rss" >> "$samples"
    sleep 5
  done
  wait "$pid" || { echo "$name: the run failed, see $run.log"; continue; }
  python3 - "$samples" "$name" "$(( $(date +%s) - t0 ))" <<'PY'
import csv, sys
path, name, wall = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [(int(r["seconds"]), int(r["state_files"]), int(r["rss_kib"])) for r in csv.DictReader(open(path))]
peak = max(r[2] for r in rows) / 1024
pts = [(f * 0.25, rss / 1024) for _, f, rss in rows if f >= 4]  # simulated hours (15-min steps)
n = len(pts)
if n >= 2:
    mx = sum(x for x, _ in pts) / n
    my = sum(y for _, y in pts) / n
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    slope = sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else 0.0
else:
    slope = float("nan")
hours = rows[-1][1] * 0.25
print(f"{name}: {rows[-1][1]} steps ({hours:.0f} simulated hours) in {wall} s; peak RSS {peak:.0f} MiB; "
      f"RSS after the first hour {pts[0][1] if pts else float('nan'):.0f} MiB, at the end {rows[-1][2]/1024:.0f} MiB; "
      f"growth {slope:.2f} MiB per simulated hour ({len(rows)} samples)")
PY
done
