"""Accuracy of the noise model and t_max (`scalecheck.core.tmax`) on planted samples.

    python benchmarks/tmax_accuracy.py [--samples 200] [--size 200] [--seed 4] [--quantile 0.95]

The test: 200 seeded samples of N = 200 timings t = t_min + errors with Poisson errors, and 200 with
exponential errors; counted are the share of samples whose noise model is the planted family (a sample whose
families are both rejected, and that falls back to the empirical quantile, counts as wrong) and the share whose
t_max is within 5% of the true quantile of t.

The planted timings are those of an MPI call read by a timer of 0.1 us resolution:
- t_min uniform in [10, 50] us, on the timer's grid;
- Poisson errors: K interruptions of 0.5 us each, K ~ Poisson(lambda), lambda uniform in [1, 4]; the true
  quantile is t_min + 0.5 us * the Poisson quantile of lambda (a reading on the grid);
- exponential errors: mean uniform in [0.5, 5] us, read by the timer (rounded down to 0.1 us); the true quantile
  is t_min + mean * -log(1 - q) (the continuous time).
Each sample is fitted twice: with the timer resolution given, and without it (the width then comes from the
data, see `core.tmax`). A sweep over the noise level then shows where the method is strong and where it is not:
Poisson means up to 12 (the minimum of 200 values drifts above t_min, and the shifted errors are no longer
Poisson) and exponential errors up to the size of t_min (t_max's own sampling error, about 7% of the error
quantile at N = 200, then exceeds 5% of t).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scalecheck.core.tmax import NoiseOptions, fit_noise_batch  # noqa: E402

TICK = 0.1  # timer resolution, us
QUANTUM = 0.5  # one interruption, us
FAMILY = {"poisson": 0, "exponential": 1}


def planted(family: str, t_min: np.ndarray, level: np.ndarray, size: int, q: float,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(samples (M, size), true quantile of t (M,)); `level` is the Poisson mean or the exponential mean (us)."""
    if family == "poisson":
        values = t_min[:, None] + QUANTUM * rng.poisson(level[:, None], (t_min.size, size))
        return np.round(values / TICK) * TICK, t_min + QUANTUM * stats.poisson.ppf(q, level)
    values = t_min[:, None] + rng.exponential(level[:, None], (t_min.size, size))
    return np.floor(values / TICK + 1e-9) * TICK, t_min + level * -math.log1p(-q)


def score(samples: np.ndarray, true: np.ndarray, family: str, options: NoiseOptions) -> dict[str, float]:
    start = time.perf_counter()
    batch = fit_noise_batch(samples, options)
    seconds = time.perf_counter() - start
    error = np.abs(batch.t_max - true) / true
    return {"right": float(np.mean(batch.chosen == FAMILY[family])), "within": float(np.mean(error <= 0.05)),
            "median": float(np.median(error)), "fallback": float(np.mean(batch.chosen == 2)),
            "us": 1e6 * seconds / samples.shape[0]}


def row(label: str, s: dict[str, float]) -> str:
    return (f"{label:<50} {s['right']:>7.1%} {s['within']:>10.1%} {s['median']:>10.2%} {s['fallback']:>9.1%} "
            f"{s['us']:>8.0f}")


HEAD = f"{'':<50} {'family':>7} {'t_max ±5%':>10} {'med. err':>10} {'fallback':>9} {'us/smp':>8}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--quantile", type=float, default=0.95)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    q, M, N = args.quantile, args.samples, args.size
    given = NoiseOptions(quantile=q, resolution=TICK)
    unknown = NoiseOptions(quantile=q)
    print(f"{M} samples of N = {N} per family, q_max = {q}, seed {args.seed}\n")
    print(HEAD)
    both: dict[str, list[dict[str, float]]] = {"given": [], "unknown": []}
    for family, low, high in (("poisson", 1.0, 4.0), ("exponential", 0.5, 5.0)):
        t_min = np.round(rng.uniform(10, 50, M) / TICK) * TICK
        samples, true = planted(family, t_min, rng.uniform(low, high, M), N, q, rng)
        for name, options in (("given", given), ("unknown", unknown)):
            s = score(samples, true, family, options)
            both[name].append(s)
            print(row(f"{family}, resolution {name}", s))
        print(row(f"{family}, resolution given, refined (min chi^2)", score(
            samples, true, family, NoiseOptions(quantile=q, resolution=TICK, refine=True))))
    for name, scores in both.items():
        print(row(f"both families, resolution {name}", {k: float(np.mean([s[k] for s in scores]))
                                                        for k in scores[0]}))
    print("\nsweep (resolution given; t_min uniform in [10, 50] us):")
    print(HEAD)
    for lam in (0.5, 1.0, 2.0, 4.0, 8.0, 12.0):
        t_min = np.round(rng.uniform(10, 50, M) / TICK) * TICK
        samples, true = planted("poisson", t_min, np.full(M, lam), N, q, rng)
        print(row(f"poisson, mean {lam:g} interruptions", score(samples, true, "poisson", given)))
    for share in (0.02, 0.1, 0.3, 1.0):
        t_min = np.round(rng.uniform(10, 50, M) / TICK) * TICK
        samples, true = planted("exponential", t_min, share * t_min, N, q, rng)
        print(row(f"exponential, mean {share:.0%} of t_min", score(samples, true, "exponential", given)))


if __name__ == "__main__":
    main()
