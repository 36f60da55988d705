"""Model synthetic single-parameter kernels in this process, nothing read from a file: the child process whose peak
memory `speed.py` measures per kernel, at kernel counts beyond what one measurement file may hold.

    python benchmarks/speed_fit.py KERNELS POINTS [--seed 7]

Kernels as `synthetic.single_parameter_values` draws them (42 growth classes, one in ten constant, 5 repetitions,
5% lognormal noise) at p = 4, 8, 16, ... (POINTS values), built as `Series` in chunks of 10,000 (so that the
input is held once, as a reader would hold it), then modeled with `scalecheck.core.modeler.fit_kernels` and its
default options. Prints one line: the kernels modeled, and the CPU seconds of building the series and of the fit.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import synthetic  # noqa: E402

from scalecheck.core.modeler import fit_kernels  # noqa: E402
from scalecheck.data.measurement import Series  # noqa: E402

CHUNK = 10_000


def build_series(kernels: int, points: int, rng: np.random.Generator) -> list[Series]:
    """`kernels` series of one parameter p = 4, 8, ... (`points` values), 5 repetitions each."""
    p = 4.0 * 2.0 ** np.arange(points)  # (points,)
    grid = p[:, None]  # (points, 1)
    series = []
    for start in range(0, kernels, CHUNK):
        values = synthetic.single_parameter_values(rng, min(CHUNK, kernels - start), p.tolist())  # (chunk, points, 5)
        series += [Series(f"k{start + k}", "time", ("p",), grid, row, unit="s") for k, row in enumerate(values)]
    return series


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kernels", type=int, help="how many kernels")
    parser.add_argument("points", type=int, help="distinct values of the parameter per kernel")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    args = parser.parse_args(argv)
    start = time.process_time()
    series = build_series(args.kernels, args.points, np.random.default_rng(args.seed))
    built = time.process_time()
    models = fit_kernels(series)
    print(f"{len(models)} kernels; series built in {built - start:.3f} s, modeled in "
          f"{time.process_time() - built:.3f} s (CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
