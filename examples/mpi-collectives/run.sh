#!/usr/bin/env bash
# Model the MPI collective timings and rank them by their predicted time at 65,536 ranks.
# Usage: run.sh [OUTDIR] (default: this folder). Writes OUTDIR/models.json and OUTDIR/models.html and prints
# the table. Needs `scalecheck` on PATH (pip install scalecheck).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here}"
if ! command -v scalecheck > /dev/null; then
  echo "run.sh: scalecheck is not on PATH; install it (pip install scalecheck) or activate its environment" >&2
  exit 2
fi
mkdir -p "$out"
scalecheck model "$here/mpi_data_mean.txt" --target p=65536 \
    --json "$out/models.json" --html "$out/models.html"
