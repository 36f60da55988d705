"""Segmentation detection on synthetic data, as evaluated in the paper (Ilyas et al.), with Extra-P beside it.

    python benchmarks/segmentation.py [--sets 1000] [--extrap-sets 30] [--seed 11] [--extrap PATH | --no-extrap]

Data sets: single-term PMNF functions f(x) = c0 + c1 * x^i * log2(x)^j with c0, c1 log-uniform in [0.1, 100]:
"in" the search space ((i, j) one of Extra-P's 42 building blocks) or "out" of it (i uniform in [0, 3], j uniform
in [0, 2], real numbers). One function over all points: a detection is a false positive. Two independent functions
split between the points: a miss is a false negative. Noise: each value multiplied by 1 + U(-x, x).

Table 1: 10 points split 5 + 5, on a linear grid (1..10) and a geometric grid (2^1..2^10), noise 0..15%:
  FP     one-function sets flagged as segmented
  TP     two-function sets flagged as segmented
  exact  two-function sets flagged with the change point exactly between points 5 and 6
Table 2: the point-count sweep, 6..10 points with every split, at --sweep-noise (2%): TP and exact per split
(--sweep-sets data sets per cell, 300 by default to keep the run under 5 minutes; --sets 100000 --sweep-sets
100000 for the paper's size).

The same data sets go to Extra-P 4.2.5's segmented modeler when it is installed: the first --extrap-sets of each
cell of table 1 at the noise levels --extrap-noise (0, 2 and 5%, where the targets are), since Extra-P takes about
0.2 s of one core per data set (two worker processes run it, in one batch). With the defaults the whole run takes
about 4 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from extrap_reference import find_extrap  # noqa: E402

from scalecheck.core.search import FitOptions, point_stats  # noqa: E402
from scalecheck.core.segment import SegmentOptions, segment_kernels  # noqa: E402
from scalecheck.data.spec import DEFAULT_BUILDING_BLOCKS  # noqa: E402

NOISE_LEVELS = (0.0, 0.01, 0.02, 0.05, 0.10, 0.15)
GRIDS = {"linear": lambda n: np.arange(1.0, n + 1), "geometric": lambda n: 2.0 ** np.arange(1, n + 1)}


@dataclass(frozen=True)
class Cell:
    """Results for one cell: rates in [0, 1], NaN when the cell has no data sets of that kind."""

    fp: float
    tp: float
    exact: float


def random_functions(rng: np.random.Generator, count: int, space: str) -> np.ndarray:
    """(count, 4) rows c0, c1, i, j of c0 + c1 * x^i * log2(x)^j."""
    c = 10.0 ** rng.uniform(-1, 2, size=(count, 2))
    if space == "in":
        blocks = np.array([(float(i), float(j)) for i, j in DEFAULT_BUILDING_BLOCKS])
        ij = blocks[rng.integers(len(blocks), size=count)]
    else:
        ij = np.column_stack([rng.uniform(0, 3, count), rng.uniform(0, 2, count)])
    return np.column_stack([c, ij])


def evaluate(functions: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(count, n) values of each function row at x."""
    c0, c1, i, j = (functions[:, k, None] for k in range(4))
    return c0 + c1 * x[None] ** i * np.log2(x[None]) ** j


def data_sets(rng: np.random.Generator, x: np.ndarray, split: int | None, count: int, space: str,
              noise: float) -> np.ndarray:
    """(count, n) values: one function (split None) or two, the second from point `split` on."""
    y = evaluate(random_functions(rng, count, space), x)
    if split is not None:
        y[:, split:] = evaluate(random_functions(rng, count, space), x)[:, split:]
    return y * (1 + rng.uniform(-noise, noise, size=y.shape))


def scalecheck_boundaries(x: np.ndarray, y: np.ndarray, options: FitOptions,
                          seg: SegmentOptions) -> list[tuple[tuple[int, int], ...]]:
    """Boundaries found by scalecheck for each row of y (one value per point)."""
    return segment_kernels(x, point_stats(y[:, :, None]), options, seg)


def rates(found: list[tuple[tuple[int, int], ...]], split: int | None) -> tuple[float, float]:
    """(flagged share, exact share): exact means a single boundary between points split - 1 and split."""
    flagged = np.mean([bool(b) for b in found])
    exact = np.mean([b == ((split - 1, split),) for b in found]) if split is not None else float("nan")
    return float(flagged), float(exact)


Detect = Callable[[np.ndarray, np.ndarray], list[tuple[tuple[int, int], ...]]]


def extrap_cell(found: list, x: np.ndarray, split: int, sets: int) -> Cell:
    """Extra-P's rates from its results on `sets` one-function data sets followed by `sets` split ones."""
    one, two = found[:sets], found[sets:]
    return Cell(float(np.mean([r.segmented for r in one])), float(np.mean([r.segmented for r in two])),
                float(np.mean([r.change_point == (x[split - 1], x[split]) for r in two])))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", type=int, default=1000, help="data sets per cell and kind (default 1000)")
    parser.add_argument("--extrap-sets", type=int, default=30,
                        help="data sets per cell and kind given to Extra-P, from the same data (default 30; 0 = none)")
    parser.add_argument("--extrap-noise", default="0,0.02,0.05",
                        help="noise levels at which Extra-P runs (default 0,0.02,0.05)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--sweep-noise", type=float, default=0.02, help="noise of the point-count sweep")
    parser.add_argument("--sweep-sets", type=int, default=300,
                        help="data sets per cell of the sweep (default 300: it has 80 cells)")
    parser.add_argument("--extrap", help="path of the extrap executable (default: found as in extrap_reference)")
    parser.add_argument("--no-extrap", action="store_true", help="skip Extra-P even when installed")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    options, seg = FitOptions(), SegmentOptions()
    exe = None if args.no_extrap else find_extrap(args.extrap)
    extrap_sets = args.extrap_sets if exe is not None else 0
    extrap_noise = {float(v) for v in args.extrap_noise.split(",") if v.strip()}

    def detect(x: np.ndarray, y: np.ndarray) -> list[tuple[tuple[int, int], ...]]:
        return scalecheck_boundaries(x, y, options, seg)

    start = time.perf_counter()
    rows: list[tuple[str, str, float, Cell]] = []
    jobs: list[tuple[list[float], list[float]]] = []  # Extra-P's share of the same data, all in one batch
    for grid, make in GRIDS.items():
        x = make(10)
        for space in ("in", "out"):
            for noise in NOISE_LEVELS:
                one = data_sets(rng, x, None, args.sets, space, noise)
                two = data_sets(rng, x, 5, args.sets, space, noise)
                tp, exact = rates(detect(x, two), 5)
                rows.append((grid, space, noise, Cell(rates(detect(x, one), None)[0], tp, exact)))
                if extrap_sets and noise in extrap_noise:
                    jobs += [(x.tolist(), row.tolist()) for data in (one, two) for row in data[:extrap_sets]]
    theirs = []
    if jobs:
        from extrap_segmented import run_extrap_segmented  # noqa: PLC0415

        theirs = run_extrap_segmented(exe, jobs)
    print(f"# Table 1: 10 points split 5 + 5, {args.sets} data sets per cell and kind, seed {args.seed}"
          + (f"; Extra-P 4.2.5 on the first {extrap_sets} of each" if extrap_sets else "; Extra-P not run"))
    print(f"{'grid':<10} {'space':<5} {'noise':>5}   {'FP':>6} {'TP':>6} {'exact':>6}"
          + ("   | Extra-P:  FP     TP  exact" if extrap_sets else ""))
    for grid, space, noise, ours in rows:
        line = f"{grid:<10} {space:<5} {noise:>5.0%}   {_pct(ours.fp)} {_pct(ours.tp)} {_pct(ours.exact)}"
        if extrap_sets and noise in extrap_noise:
            cell = extrap_cell(theirs[: 2 * extrap_sets], GRIDS[grid](10), 5, extrap_sets)
            theirs = theirs[2 * extrap_sets:]
            line += f"   |       {_pct(cell.fp)} {_pct(cell.tp)} {_pct(cell.exact)}"
        elif extrap_sets:
            line += "   |            -      -      -"
        print(line)
    print(f"\n# Table 2: point-count sweep at {args.sweep_noise:.0%} noise, {args.sweep_sets} data sets per cell, "
          "functions in the search space; FP of one function on n points, and TP / exact change point per split "
          "(first + second function)")
    for grid, make in GRIDS.items():
        for n in range(6, 11):
            x = make(n)
            fp = rates(detect(x, data_sets(rng, x, None, args.sweep_sets, "in", args.sweep_noise)), None)[0]
            cells = []
            for split in range(1, n):
                tp, exact = rates(detect(x, data_sets(rng, x, split, args.sweep_sets, "in", args.sweep_noise)), split)
                cells.append(f"{split}+{n - split}: {_pct(tp).strip()}/{_pct(exact).strip()}")
            print(f"{grid:<10} n={n:<3} FP {_pct(fp).strip():>6}   " + "  ".join(cells), flush=True)
    print(f"\n{time.perf_counter() - start:.0f} s")
    return 0


def _pct(value: float) -> str:
    return "     -" if np.isnan(value) else f"{100 * value:5.1f}%"


if __name__ == "__main__":
    sys.exit(main())
