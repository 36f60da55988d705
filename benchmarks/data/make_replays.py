"""Make the measurement files that `benchmarks/check_quality.py` replays (scalecheck's native JSON format).

    python benchmarks/data/make_replays.py [--seed 5] [--pairs 10] [--no-sorted]

Two cases, each a baseline file and a candidate file in this folder:

- cancelling_terms.{baseline,candidate}.json: flat kernels (10 units, 5 repetitions of 5% Gaussian noise at
  p = 2..256, 5% of the repetitions multiplied by a factor 2-10) that the model search described as growing at
  least as p^2 through two terms of opposite signs (e.g. 10.2 + 7.9e-06 * p^(5/2) - 2.1e-06 * p^2 * log2(p)^2),
  although the median of every point stays within 15% of 10 (the kernel is flat, as a reader of the numbers
  sees it); the candidate is the same flat kernel measured afresh with the two top sizes twice as slow. Found by
  drawing flat kernels from the seed until `--pairs` such baselines turn up. The files in this folder were made
  with the search of commit aefa03a (before outlying repetitions were set aside): run this script with that
  commit's scalecheck on the path to remake them.
- sorted_under_load.{baseline,candidate}.json: real timings of `sorted()` on lists of random floats, n =
  2^11..2^16, 5 rounds of 3 repetitions, measured with two busy loops (`while True: pass`, one per core) running;
  baseline and candidate rounds alternate, and both run the same code (an unchanged kernel). The busy loops are
  started before and killed (by process id) right after the measurement.

The files are made once and kept; the replay does not depend on the search finding the same models again.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from scalecheck.core.modeler import fit_kernels  # noqa: E402
from scalecheck.data.measurement import Run, Series  # noqa: E402
from scalecheck.formats.writer import dumps_run  # noqa: E402

HERE = Path(__file__).resolve().parent
P_FLAT = 2.0 ** np.arange(1, 9)
SORTED_SIZES = 2 ** np.arange(11, 17)


def flat(rng: np.random.Generator, step: bool) -> np.ndarray:
    """(8, 5) repetitions of a flat kernel at 10 with 5% noise and 5% outliers; the top two sizes x2 if `step`."""
    values = 10.0 * (1 + 0.05 * rng.standard_normal((P_FLAT.size, 5)))
    values *= np.where(rng.random(values.shape) < 0.05, rng.uniform(2, 10, values.shape), 1.0)
    if step:
        values[-2:] *= 2.0
    return values


def make_cancelling(rng: np.random.Generator, pairs: int) -> tuple[Run, Run, list[str]]:
    """`pairs` flat baselines modeled through cancelling terms, each with a stepped candidate."""
    base: list[Series] = []
    formulas: list[str] = []
    while len(base) < pairs:
        batch = [Series(f"cancel/{len(base)}/{k}", "time", ("p",), P_FLAT[:, None], flat(rng, False), "s")
                 for k in range(500)]
        for series, model in zip(batch, fit_kernels(batch)):
            fitted = model.model
            flat_medians = np.all(np.abs(np.median(series.values, axis=1) / 10.0 - 1) < 0.15)
            if (fitted is None or fitted.spec.n_terms != 2 or fitted.coefficients.min() >= 0
                    or fitted.growth()["p"][0] < 2 or not flat_medians or len(base) >= pairs):
                continue
            name = f"cancel/{len(base)}"
            base.append(Series(name, "time", ("p",), series.points, series.values, "s"))
            formulas.append(f"{name}: {fitted.formula()}")
    cand = [Series(s.kernel, "time", ("p",), s.points, flat(rng, True), "s") for s in base]
    meta = {"made_by": "benchmarks/data/make_replays.py", "case": "cancelling terms"}
    return Run(("p",), tuple(base), meta), Run(("p",), tuple(cand), meta), formulas


def measure_sorted(rng: np.random.Generator, pairs: int, rounds: int = 5, reps: int = 3) -> tuple[Run, Run]:
    """Real `sorted()` timings, baseline and candidate rounds alternating, under whatever load is running."""
    data = [rng.random(int(n)).tolist() for n in SORTED_SIZES]
    shape = (SORTED_SIZES.size, rounds * reps)
    values = np.zeros((2, pairs) + shape)
    round_of = np.zeros(shape)
    for r in range(rounds):
        round_of[:, r * reps:(r + 1) * reps] = r + 1
        for pair in range(pairs):
            for side in (0, 1):
                for i, items in enumerate(data):
                    for k in range(reps):
                        start = time.perf_counter()
                        sorted(items)
                        values[side, pair, i, r * reps + k] = time.perf_counter() - start
    points = SORTED_SIZES.astype(float)[:, None]
    meta = {"made_by": "benchmarks/data/make_replays.py", "case": "sorted() under two busy loops"}
    runs = [Run(("n",), tuple(Series(f"sorted/{pair}", "time", ("n",), points, values[side, pair], "s",
                                     rounds=round_of) for pair in range(pairs)), meta) for side in (0, 1)]
    return runs[0], runs[1]


def busy_loops(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
            for _ in range(count)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=5, help="random seed (default 5)")
    parser.add_argument("--pairs", type=int, default=10, help="kernels per case (default 10)")
    parser.add_argument("--no-sorted", action="store_true", help="keep the sorted() files; remake only the others")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    base, cand, formulas = make_cancelling(rng, args.pairs)
    (HERE / "cancelling_terms.baseline.json").write_text(dumps_run(base))
    (HERE / "cancelling_terms.candidate.json").write_text(dumps_run(cand))
    print("cancelling-term baselines:\n  " + "\n  ".join(formulas))
    if args.no_sorted:
        return 0
    procs = busy_loops(2)
    try:
        time.sleep(1.0)  # let the loops reach the cores
        base, cand = measure_sorted(rng, args.pairs)
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait(timeout=10)
    (HERE / "sorted_under_load.baseline.json").write_text(dumps_run(base))
    (HERE / "sorted_under_load.candidate.json").write_text(dumps_run(cand))
    medians = np.array([np.median(s.values, axis=1) for s in base.series])
    rise = medians[:, -1] / medians[:, 0]
    spread = max(float(np.max(np.max(s.values, axis=1) / np.median(s.values, axis=1))) for s in base.series)
    print(f"sorted(): median rise from n=2^11 to 2^16 {np.median(rise):.0f}x (range {rise.min():.0f}-"
          f"{rise.max():.0f}x); largest repetition up to {spread:.1f}x its point's median")
    return 0


if __name__ == "__main__":
    sys.exit(main())
