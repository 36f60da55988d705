#!/usr/bin/env bash
# Compile kernel.c, time it with `scalecheck measure` at several array sizes n, and model each kernel.
# Usage: run.sh [OUTDIR] (default: this folder). Writes OUTDIR/kernel, measurements.json, models.json and
# models.html, and prints the models. SIZES overrides the sizes (comma-separated), REPEAT the repetitions.
# Needs a C compiler (cc or gcc) and `scalecheck` on PATH (pip install scalecheck).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here}"
sizes="${SIZES:-1000,2000,4000,8000,16000,32000}"
repeat="${REPEAT:-5}"
if ! compiler="$(command -v cc || command -v gcc)"; then
  echo "run.sh: no C compiler found (cc or gcc); install one, e.g. apt-get install gcc" >&2
  exit 2
fi
if ! command -v scalecheck > /dev/null; then
  echo "run.sh: scalecheck is not on PATH; install it (pip install scalecheck) or activate its environment" >&2
  exit 2
fi
mkdir -p "$out"
cd "$out"
"$compiler" -O2 -o kernel "$here/kernel.c"
rm -f measurements.json  # measure adds to an existing file; start afresh
scalecheck measure --param "n=$sizes" --repeat "$repeat" --kernel wall --out measurements.json \
    -- ./kernel '{n}'
scalecheck model measurements.json --target n=1000000 --aggregate min \
    --json models.json --html models.html
