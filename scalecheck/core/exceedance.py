"""The exceedance test: does the candidate exceed the baseline's t_max more often than chance allows?

At a point both commits measured, the baseline's repetitions give its noise model and t_max at quantile q
(`core.tmax`). If nothing changed and t_max were exact, the number of the candidate's n repetitions above it
would be Binomial(n, 1 - q) (or less: for timings on a coarse grid, fewer than 1 - q lie above the class edge).
But t_max is estimated from the baseline's few repetitions: with 30 of them, its exceedance probability varies
from about 0.03 to 0.10 around 0.05, and the plain binomial test then raises false alarms at 6-22% instead of
5% for most noise families (exponential, log-normal, Pareto, normal, Poisson with a large mean; see
`benchmarks/exceedance_quality.py`).

So the count is tested against the distribution it really has without a change: a binomial with a random rate,
i.e. a beta-binomial, whose mean and variance come from permutations. Under no change, baseline and candidate
repetitions are exchangeable; each permutation deals the pooled repetitions of every point anew into a "baseline"
and a "candidate" of the original sizes, recomputes the baseline's t_max and counts. Matching the beta-binomial
to the permutations' mean and variance gives an analytic tail, so p-values can be as small as the
Benjamini-Hochberg adjustment over thousands of kernels needs (a permutation p-value cannot go below
1 / (permutations + 1)). A kernel's points are pooled: the statistic is the total count over its points, and each
permutation permutes every point at once. Fifty permutations estimate the variance to about +-20%, so its upper
80% confidence bound is used: with the plain estimate, p-values below 0.01 come out up to 3 times too often. The
plain binomial p-value (rate 1 - q) is reported beside it.

Cost: one noise-model fit per point and permutation (about 15 us with 30 repetitions).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scalecheck.core.tmax import DEFAULT_QUANTILE, MIN_VALUES, NoiseOptions, fit_noise_batch
from scalecheck.data.measurement import distinct
from scalecheck.data.noise import EMPIRICAL, FAMILIES

_CHUNK_ROWS = 100_000  # permuted samples dealt and fitted per batch: bounds memory
_VARIANCE_LEVEL = 0.2  # the permuted counts' variance is taken at its upper 80% confidence bound


@dataclass(frozen=True)
class ExceedanceOptions:
    """Settings of the exceedance test."""

    quantile: float = DEFAULT_QUANTILE  # q of the baseline's t_max
    permutations: int = 50  # permutations that give the null distribution's mean and variance
    min_baseline: int = MIN_VALUES  # baseline repetitions a point needs for a noise model
    resolution: float | None = None  # timer resolution (None: unknown, see core.tmax)

    def __post_init__(self) -> None:
        if not 0.8 <= self.quantile < 1:
            raise ValueError(f"quantile must be in [0.8, 1), got {self.quantile}")
        if self.permutations < 10:
            raise ValueError(f"permutations must be at least 10, got {self.permutations}")
        if self.min_baseline < 2:
            raise ValueError(f"min_baseline must be at least 2, got {self.min_baseline}")


@dataclass(frozen=True)
class Exceedance:
    """The exceedance test of one kernel over the points it was tested at."""

    exceedances: int  # candidate repetitions above the baseline's t_max, summed over the points
    repetitions: int  # candidate repetitions tested
    points: int
    expected: float  # mean count without a change (permutations)
    spread: float  # standard deviation of the count without a change
    p_value: float  # one-sided: P(count >= exceedances) under the beta-binomial null
    binomial_p: float  # the same under Binomial(repetitions, 1 - quantile), as if t_max were exact
    overhead: float  # the candidate's summed time above t_max, in the values' unit
    quantile: float
    t_max: tuple[float, ...]  # the baseline's t_max per point
    models: tuple[str, ...]  # the baseline's noise model per point: a family or "empirical"

    @property
    def excess(self) -> bool:
        """More exceedances than expected without a change."""
        return self.exceedances > self.expected


Pair = tuple[np.ndarray, np.ndarray]  # (baseline repetitions (r_b,), candidate repetitions (r_c,)) at one point


def exceedance_test(baseline: np.ndarray | Sequence[np.ndarray], candidate: np.ndarray | Sequence[np.ndarray],
                    options: ExceedanceOptions = ExceedanceOptions(),
                    rng: np.random.Generator | None = None) -> Exceedance | None:
    """The exceedance test of one kernel (module docstring).

    Parameters
    ----------
    baseline, candidate : ndarray, shape (r,), or a sequence of them (one per point, in the same order)
        Repetitions at each point; NaN is ignored. Points whose baseline has fewer than `options.min_baseline`
        values, or whose candidate has none, are left out.
    rng : the permutations' generator (default: seeded with 0)

    Returns None when no point can be tested.
    """
    if isinstance(baseline, np.ndarray) and baseline.ndim == 1:
        pairs: list[Pair] = [(baseline, np.asarray(candidate, dtype=float))]
    else:
        pairs = [(np.asarray(b, dtype=float), np.asarray(c, dtype=float)) for b, c in zip(baseline, candidate)]
    return exceedance_tests([pairs], options, [rng if rng is not None else np.random.default_rng(0)])[0]


def exceedance_tests(kernels: Sequence[Sequence[Pair]], options: ExceedanceOptions,
                     rngs: Sequence[np.random.Generator]) -> list[Exceedance | None]:
    """`exceedance_test` of many kernels in one batch: the noise models of every point and permutation are
    fitted together. `rngs` holds one generator per kernel, so a kernel's result does not depend on the others.
    """
    owner, base, cand = [], [], []
    for index, pairs in enumerate(kernels):
        for b, c in pairs:
            b, c = b[~np.isnan(b)], c[~np.isnan(c)]
            if b.size >= options.min_baseline and c.size >= 1:
                owner.append(index)
                base.append(b)
                cand.append(c)
    out: list[Exceedance | None] = [None] * len(kernels)
    if not base:
        return out
    from scipy import stats  # here only: no point has the repetitions a noise model needs in most comparisons
    noise = NoiseOptions(quantile=options.quantile, resolution=options.resolution)
    fitted = fit_noise_batch(_padded(base), noise)
    counts = np.array([int(np.sum(c > t)) for c, t in zip(cand, fitted.t_max)])
    over = np.array([float(np.sum(np.maximum(c - t, 0.0))) for c, t in zip(cand, fitted.t_max)])
    owners = np.array(owner)
    # the variance of B permuted counts is itself uncertain (+-20% at B = 50); its upper 80% confidence bound keeps
    # the tail honest: with the plain estimate, p-values below 0.01 come out up to 3 times too often
    inflate = (options.permutations - 1) / float(stats.chi2.ppf(_VARIANCE_LEVEL, options.permutations - 1))
    permuted = _permuted_counts(base, cand, owners, rngs, options, noise)  # (points, B)
    for index in distinct(owners):
        mine = np.flatnonzero(owners == index)
        total = permuted[mine].sum(axis=0)
        n = int(sum(cand[j].size for j in mine))
        observed = int(counts[mine].sum())
        mean, var = float(total.mean()), float(total.var(ddof=1)) * inflate
        models = tuple(EMPIRICAL if fitted.chosen[j] == 2 else FAMILIES[int(fitted.chosen[j])] for j in mine)
        out[int(index)] = Exceedance(
            observed, n, int(mine.size), mean, math.sqrt(var), _beta_binomial_sf(observed, n, mean, var),
            float(stats.binom.sf(observed - 1, n, 1 - options.quantile)), float(over[mine].sum()),
            options.quantile, tuple(float(fitted.t_max[j]) for j in mine), models)
    return out


def _padded(samples: Sequence[np.ndarray]) -> np.ndarray:
    """(len(samples), longest) NaN-padded rows."""
    out = np.full((len(samples), max(s.size for s in samples)), np.nan)
    for row, s in enumerate(samples):
        out[row, : s.size] = s
    return out


def _permuted_counts(base: Sequence[np.ndarray], cand: Sequence[np.ndarray], owners: np.ndarray,
                     rngs: Sequence[np.random.Generator], options: ExceedanceOptions,
                     noise: NoiseOptions) -> np.ndarray:
    """(points, B) the candidate's count above the baseline's t_max after dealing each point's pooled repetitions
    anew. Each kernel's random keys come from its own generator, in its points' order; kernels are processed in
    groups that keep the (points, B, values) arrays near `_CHUNK_ROWS` permuted samples."""
    out = np.zeros((len(base), options.permutations), dtype=int)
    per_kernel = np.bincount(owners)
    group: list[int] = []
    rows = 0
    for index in distinct(owners):
        group.append(int(index))
        rows += int(per_kernel[index]) * options.permutations
        if rows >= _CHUNK_ROWS:
            _deal(base, cand, owners, group, rngs, options, noise, out)
            group, rows = [], 0
    if group:
        _deal(base, cand, owners, group, rngs, options, noise, out)
    return out


def _deal(base: Sequence[np.ndarray], cand: Sequence[np.ndarray], owners: np.ndarray, group: list[int],
          rngs: Sequence[np.random.Generator], options: ExceedanceOptions, noise: NoiseOptions,
          out: np.ndarray) -> None:
    """Fill the rows of `out` that belong to the kernels in `group`."""
    B = options.permutations
    points = [int(j) for j in np.flatnonzero(np.isin(owners, group))]
    sizes_b = np.array([base[j].size for j in points])
    sizes_c = np.array([cand[j].size for j in points])
    pooled = _padded([np.concatenate([base[j], cand[j]]) for j in points])  # (P, L)
    P, L = pooled.shape
    keys = np.full((P, B, L), np.inf)
    for index in group:
        mine = np.flatnonzero(owners[points] == index)  # positions within this group's points
        width = int((sizes_b[mine] + sizes_c[mine]).max())
        keys[mine, :, :width] = rngs[index].random((mine.size, B, width))
    keys = np.where(np.isnan(pooled)[:, None, :], np.inf, keys)  # padding sorts last
    dealt = np.take_along_axis(np.broadcast_to(pooled[:, None, :], (P, B, L)), np.argsort(keys, axis=2), axis=2)
    position = np.arange(L)[None, None, :]
    in_base = position < sizes_b[:, None, None]
    in_cand = ~in_base & (position < (sizes_b + sizes_c)[:, None, None])
    width_b = int(sizes_b.max())
    samples = np.where(in_base, dealt, np.nan)[:, :, :width_b].reshape(P * B, width_b)
    t_max = fit_noise_batch(samples, noise).t_max.reshape(P, B)
    out[points] = np.sum(in_cand & (dealt > t_max[:, :, None]), axis=2)


def _beta_binomial_sf(observed: int, n: int, mean: float, var: float) -> float:
    """P(X >= observed) for X ~ beta-binomial(n) with this mean and variance (binomial when not overdispersed)."""
    from scipy import stats

    if observed <= 0:
        return 1.0
    p = min(max(mean / n, 1e-12), 1 - 1e-12)
    binomial_var = n * p * (1 - p)
    if n < 2 or var <= binomial_var:
        return float(stats.binom.sf(observed - 1, n, p))
    rho = min((var / binomial_var - 1) / (n - 1), 0.999)  # correlation within the count: var = bv (1 + (n-1) rho)
    size = 1 / rho - 1
    return float(stats.betabinom.sf(observed - 1, n, p * size, (1 - p) * size))
