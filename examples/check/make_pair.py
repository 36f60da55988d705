"""Write the example pair for `scalecheck check`: baseline.json and candidate.json (seeded, synthetic).

Four kernels of a solver timed at p = 2 .. 256 ranks, 5 repetitions each, 5% noise. In the candidate, one change
made `main->solve->exchange` grow as p^(3/2) instead of p, and `main->io` became 5% slower everywhere (noise-level,
not a scalability problem). Both files name the same machine in meta.machine, as two runs on one machine would,
so the check compares like with like. Run from the repository root: `python examples/check/make_pair.py`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

P = [2, 4, 8, 16, 32, 64, 128, 256]
KERNELS = {
    "main->solve->exchange": lambda p: 0.8 + 0.05 * p,
    "main->solve->compute": lambda p: 40.0 / p + 2.0,
    "main->solve->allreduce": lambda p: 0.2 + 0.15 * np.log2(p),
    "main->io": lambda p: 3.0 + 0.01 * p * np.log2(p),
}
CHANGED = {
    "main->solve->exchange": lambda p: 0.8 + 0.05 * p**1.5 / 2**0.5,
    "main->io": lambda p: 1.05 * (3.0 + 0.01 * p * np.log2(p)),
}


def measurements(functions: dict, rng: np.random.Generator, commit: str) -> dict:
    rows = [{"kernel": name, "metric": "time", "unit": "s", "point": {"p": p},
             "values": [round(float(v), 5) for v in f(p) * (1 + 0.05 * rng.standard_normal(5))]}
            for name, f in functions.items() for p in P]
    return {"scalecheck": 1, "parameters": ["p"], "meta": {"commit": commit, "machine": "example-runner"}, "measurements": rows}


def main() -> None:
    here = Path(__file__).parent
    rng = np.random.default_rng(2026)
    (here / "baseline.json").write_text(json.dumps(measurements(KERNELS, rng, "base"), indent=1) + "\n")
    (here / "candidate.json").write_text(json.dumps(measurements({**KERNELS, **CHANGED}, rng, "cand"), indent=1)
                                         + "\n")


if __name__ == "__main__":
    main()
