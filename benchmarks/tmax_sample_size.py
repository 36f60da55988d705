"""How many timings a t_max needs: the paper's Figure 3 (Kluge, Knuepfer and Nagel, section 9).

    python benchmarks/tmax_sample_size.py [--seed 3] [--quantile 0.95] [--all]

The paper timed MPI_Allreduce of one integer on 8 processes 3,000 times, fitted its noise model to the first k
timings for k = 50, 60, ..., 3,000, and found t_max stable from about k = 200 (while chi^2 kept growing with k).
This script does the same on two planted 3,000-value samples read by a timer of 0.1 us resolution:

- Poisson: t = 12 us + 0.5 us * K, K ~ Poisson(2.5) (interruptions of 0.5 us);
- exponential: t = 12 us + E, E exponential with mean 1.5 us;
- Poisson with mean 2, where the 0.95 quantile switches between 4 and 5 interruptions (P(K <= 4) = 0.947).

It prints t_max, the model chosen and its chi^2 test for every k of a coarse table (all 296 with --all), and the
smallest k from which t_max stays within 2% (and within one class) of the t_max of all 3,000 values. On a grid
t_max moves in whole classes: at a mean of 2 the estimate flips between two classes (3.4% apart) until the mean
is known to about 1%, which takes thousands of values; no sample size cures a quantile that sits on a boundary.
All 3 x 296 fits run in one batch each.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scalecheck.core.tmax import NoiseOptions, fit_noise_batch  # noqa: E402

TICK = 0.1
SIZE = 3000
SHOWN = list(range(50, 200, 10)) + list(range(200, 1000, 100)) + list(range(1000, 3001, 500))
NAMES = ("poisson", "exponential", "empirical")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--quantile", type=float, default=0.95)
    parser.add_argument("--all", action="store_true", help="print every k = 50, 60, ..., 3000")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    q = args.quantile
    samples = {
        "poisson, mean 2.5": (np.round((12.0 + 0.5 * rng.poisson(2.5, SIZE)) / TICK) * TICK,
                              12.0 + 0.5 * stats.poisson.ppf(q, 2.5)),
        "exponential": (np.floor((12.0 + rng.exponential(1.5, SIZE)) / TICK + 1e-9) * TICK,
                        12.0 + 1.5 * -math.log1p(-q)),
        "poisson, mean 2 (a quantile boundary)": (np.round((12.0 + 0.5 * rng.poisson(2.0, SIZE)) / TICK) * TICK,
                                                  12.0 + 0.5 * stats.poisson.ppf(q, 2.0)),
    }
    ks = np.arange(50, SIZE + 1, 10)
    for name, (sample, true) in samples.items():
        rows = np.where(np.arange(SIZE)[None, :] < ks[:, None], sample[None, :], np.nan)
        batch = fit_noise_batch(rows, NoiseOptions(quantile=q, resolution=TICK))
        final = batch.t_max[-1]
        print(f"{name}: t_min + errors, true {q:g} quantile {true:.2f} us; t_max of all {SIZE}: {final:.2f} us "
              f"(class width {batch.width[-1]:.2g} us)")
        print(f"  t_max stays within 2% of it from k = {_stable(ks, batch.t_max, 0.02 * final)}, within one class "
              f"from k = {_stable(ks, batch.t_max, batch.width[-1] + 1e-9)}")
        print(f"{'k':>5}  {'t_max us':>8}  {'model':<11}  {'chi^2':>7}  {'dof':>3}  {'p-value':>7}")
        for index, k in enumerate(ks):
            if not args.all and int(k) not in SHOWN:
                continue
            chosen = int(batch.chosen[index])
            family = chosen if chosen < 2 else int(np.nanargmin(batch.chi2[:, index]))
            chi2, dof, p = batch.chi2[family, index], batch.dof[family, index], batch.p_value[family, index]
            print(f"{k:>5}  {batch.t_max[index]:>8.2f}  {NAMES[chosen]:<11}  {chi2:>7.2f}  {dof:>3}  {p:>7.3f}")
        print()


def _stable(ks: np.ndarray, t_max: np.ndarray, band: float) -> int:
    """The smallest k from which every t_max lies within `band` of the last one."""
    outside = np.flatnonzero(np.abs(t_max - t_max[-1]) > band)
    return int(ks[outside[-1] + 1]) if outside.size else int(ks[0])


if __name__ == "__main__":
    main()
