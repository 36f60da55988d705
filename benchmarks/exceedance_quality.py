"""False alarms and power of the exceedance test (`scalecheck.core.exceedance`) on seeded pairs.

    python benchmarks/exceedance_quality.py [--pairs 1000] [--repetitions 30] [--quantile 0.95] [--seed 5]

Each pair is one point: a baseline and a candidate of R repetitions each (30 by default), t = 10 + error. The
error families: exponential (mean 1), the same read by a coarse timer (mean 5, rounded down to whole units),
Poisson (means 1, 2 and 10: interruptions of one unit), gamma (shape 3), log-normal (sigma 1), Pareto (shape 3)
and normal (sd 1, symmetric: not the t_min + positive error the paper assumes). Unchanged pairs draw both sides
from the same distribution; "doubled" candidates have twice the mean error t - t_min (Poisson: twice the mean
number of interruptions); "delayed" candidates have 20% of their repetitions delayed by twice the baseline's
mean error.

Printed per family, at alpha = 0.05: the false-alarm rate and the power of scalecheck's test, and the same for
the plain one-sided binomial test (count of candidate repetitions above the baseline's t_max against
Binomial(R, 1 - q)), which ignores that t_max is estimated from R repetitions; and the power of an oracle that
knows the true distribution (binomial test at the true t_max and its true exceedance rate), the best a count of
exceedances can do.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scalecheck.core.exceedance import ExceedanceOptions, exceedance_tests  # noqa: E402

ALPHA = 0.05
Draw = Callable[[np.random.Generator, tuple[int, ...], float], np.ndarray]  # (rng, shape, error scale) -> t
# family -> (draw, true quantile function of t at error scale s)
FAMILIES: dict[str, tuple[Draw, Callable[[float, float], float]]] = {
    "exponential": (lambda g, n, s: 10 + g.exponential(s, n), lambda q, s: 10 + s * stats.expon.ppf(q)),
    "exponential, coarse timer": (lambda g, n, s: np.floor(10 + g.exponential(5 * s, n)),
                                  lambda q, s: np.floor(10 + 5 * s * stats.expon.ppf(q))),
    "poisson, mean 1": (lambda g, n, s: 10 + g.poisson(s, n).astype(float), lambda q, s: 10 + stats.poisson.ppf(q, s)),
    "poisson, mean 2": (lambda g, n, s: 10 + g.poisson(2 * s, n).astype(float),
                        lambda q, s: 10 + stats.poisson.ppf(q, 2 * s)),
    "poisson, mean 10": (lambda g, n, s: 10 + g.poisson(10 * s, n).astype(float),
                         lambda q, s: 10 + stats.poisson.ppf(q, 10 * s)),
    "gamma, shape 3": (lambda g, n, s: 10 + g.gamma(3, s, n), lambda q, s: 10 + stats.gamma.ppf(q, 3, scale=s)),
    "log-normal": (lambda g, n, s: 10 + s * g.lognormal(0, 1, n), lambda q, s: 10 + s * stats.lognorm.ppf(q, 1)),
    "pareto, shape 3": (lambda g, n, s: 10 + s * g.pareto(3, n), lambda q, s: 10 + s * stats.lomax.ppf(q, 3)),
    "normal (symmetric)": (lambda g, n, s: 10 + s * g.normal(0, 1, n), lambda q, s: 10 + s * stats.norm.ppf(q)),
}


def tests(base: np.ndarray, cand: np.ndarray, options: ExceedanceOptions, seed: int) -> tuple[np.ndarray, ...]:
    """(p-values, plain binomial p-values) of M single-point pairs."""
    results = exceedance_tests([[(b, c)] for b, c in zip(base, cand)], options,
                               [np.random.default_rng([seed, i]) for i in range(base.shape[0])])
    return (np.array([r.p_value for r in results if r is not None]),
            np.array([r.binomial_p for r in results if r is not None]))


def oracle_power(draw: Draw, quantile: Callable[[float, float], float], q: float, R: int, candidate: np.ndarray,
                 rng: np.random.Generator) -> float:
    """Power of the binomial test at the true t_max and the true rate of exceeding it."""
    t_max = quantile(q, 1.0)
    rate = float(np.mean(draw(rng, (200_000,), 1.0) > t_max))
    counts = np.sum(candidate > t_max, axis=1)
    return float(np.mean(stats.binom.sf(counts - 1, R, rate) <= ALPHA))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--repetitions", type=int, default=30)
    parser.add_argument("--quantile", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    M, R, q = args.pairs, args.repetitions, args.quantile
    options = ExceedanceOptions(quantile=q)
    rng = np.random.default_rng(args.seed)
    print(f"{M} pairs of {R} + {R} repetitions per family and case, q = {q}, alpha = {ALPHA}, "
          f"{options.permutations} permutations\n")
    head = (f"{'':<27} {'false alarms':>22}  {'doubled error: found':>31}  {'20% delayed: found':>22}")
    print(head)
    print(f"{'':<27} {'scalecheck':>11} {'binomial':>10}  {'scalecheck':>11} {'binomial':>9} {'oracle':>9}  "
          f"{'scalecheck':>11} {'binomial':>10}")
    start = time.perf_counter()
    for name, (draw, quantile) in FAMILIES.items():
        base = draw(rng, (M, R), 1.0)
        null_p, null_b = tests(base, draw(rng, (M, R), 1.0), options, args.seed)
        doubled = draw(rng, (M, R), 2.0)
        double_p, double_b = tests(base, doubled, options, args.seed)
        mean_error = float(np.mean(draw(rng, (200_000,), 1.0)) - 10)
        delayed = draw(rng, (M, R), 1.0) + 2 * mean_error * (rng.random((M, R)) < 0.2)
        delay_p, delay_b = tests(base, delayed, options, args.seed)
        oracle = oracle_power(draw, quantile, q, R, doubled, rng)
        print(f"{name:<27} {np.mean(null_p <= ALPHA):>11.1%} {np.mean(null_b <= ALPHA):>10.1%}  "
              f"{np.mean(double_p <= ALPHA):>11.1%} {np.mean(double_b <= ALPHA):>9.1%} {oracle:>9.1%}  "
              f"{np.mean(delay_p <= ALPHA):>11.1%} {np.mean(delay_b <= ALPHA):>10.1%}")
    seconds = time.perf_counter() - start
    print(f"\n{3 * M * len(FAMILIES)} tests in {seconds:.1f} s ({1e3 * seconds / (3 * M * len(FAMILIES)):.2f} ms per "
          "single-point test)")


if __name__ == "__main__":
    main()
