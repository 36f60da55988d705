"""Model selection: hypothesis spaces, the noise each kernel's repetitions reveal, and the noise-aware choice.

The rule, per kernel (Calotoiu et al. select by leave-one-out SMAPE alone, which keeps adding spurious terms on
noisy data; scalecheck measures every decision in units of the kernel's own noise):

1. Noise: the pooled relative variance of single repetitions around their point's mean (pure error), with
   `dof` degrees of freedom; floored at `noise_floor`. Without repetitions, the residual variance of the best
   one-term model stands in for it.
2. Constant test: when the repetitions give pure error, the constant model is kept unless a lack-of-fit F test
   rejects it at level `alpha`.
3. Otherwise the hypothesis with the lowest leave-one-out weighted error (in units of the noise) plus a penalty
   of `lambda` per term wins, `lambda` being the `1 - alpha` quantile of F(1, dof) (chi^2(1) without repetitions):
   an extra term must pay for itself by more than the noise could explain.
Hypotheses whose lead coefficient is negative (unless decreasing terms are allowed), or with a term that never
contributes `min_term_contribution` of the value at any measured point, are not eligible.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from scalecheck.core.fit import fit_batch
from scalecheck.data.spec import DEFAULT_BUILDING_BLOCKS, Exponents, ModelSpec, single_term

AGGREGATES = ("mean", "median", "min")
# Variance of the aggregate relative to the variance of the mean of r repetitions (normal noise).
_AGGREGATE_VARIANCE = {"mean": 1.0, "median": math.pi / 2, "min": 1.0}


@dataclass(frozen=True)
class FitOptions:
    """Hyper-parameters of the search (kept apart from fitted state). Defaults follow Extra-P where it has one."""

    building_blocks: tuple[Exponents, ...] = DEFAULT_BUILDING_BLOCKS  # (i, j) of x^i * log2(x)^j
    max_terms: int = 2  # terms per parameter beyond the constant, when the points allow (see terms_allowed)
    allow_decreasing: bool = False  # accept a negative lead coefficient
    min_term_contribution: float = 0.01  # a term must reach this share of the model value at some point
    aggregate: str = "mean"  # per-point statistic of the repetitions
    alpha: float = 0.01  # level of the constant test and of the per-term penalty
    noise_floor: float = 1e-3  # smallest relative noise assumed (timers and machines are never exact)
    candidates_per_parameter: int = 3  # multi-parameter search: best single-parameter terms kept per parameter
    min_distinct_values: int = 3  # fewer distinct values of a parameter is "insufficient data"
    refine: bool = False  # search-space refinement (Reisert et al.) for single-parameter kernels

    def __post_init__(self) -> None:
        if self.aggregate not in AGGREGATES:
            raise ValueError(f"aggregate must be one of {AGGREGATES}, got {self.aggregate!r}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha}")
        if self.max_terms < 1:
            raise ValueError(f"max_terms must be at least 1, got {self.max_terms}")


def terms_allowed(n_points: int, max_terms: int) -> int:
    """Terms a fit on `n_points` distinct points may use: one from 3 points, each further term 4 more points."""
    return max(0, min(max_terms, (n_points + 1) // 4))


@dataclass(frozen=True, eq=False)
class PointStats:
    """Per-point aggregates of K kernels on one point set, with the noise their repetitions show."""

    y: np.ndarray  # (K, n) aggregate per point
    weights: np.ndarray  # (K, n) repetitions / scale^2: inverse relative variance of each aggregate
    sigma2: np.ndarray  # (K,) relative variance of one repetition (NaN without repetitions)
    dof: np.ndarray  # (K,) degrees of freedom of sigma2 (0 without repetitions)


def point_stats(values: np.ndarray, aggregate: str = "mean") -> PointStats:
    """Aggregate repetitions and estimate their relative noise.

    Parameters
    ----------
    values : ndarray, shape (K, n, r)
        Repetitions per kernel and point, NaN-padded; every (kernel, point) has at least one value.
    aggregate : str
        "mean", "median" or "min".
    """
    reducer = {"mean": np.nanmean, "median": np.nanmedian, "min": np.nanmin}[aggregate]
    y = reducer(values, axis=2)
    reps = np.sum(~np.isnan(values), axis=2)
    center = np.nanmean(values, axis=2)
    scale = np.maximum(np.abs(center), 1e-3 * np.max(np.abs(center), axis=1, keepdims=True))
    scale = np.where(scale > 0, scale, 1.0)
    squares = np.nansum(((values - center[..., None]) / scale[..., None]) ** 2, axis=(1, 2))
    dof = np.sum(reps - 1, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sigma2 = np.where(dof > 0, squares / np.maximum(dof, 1), np.nan) * _AGGREGATE_VARIANCE[aggregate]
    return PointStats(y, reps / scale**2, sigma2, dof)


def single_parameter_specs(x: np.ndarray, options: FitOptions, param: int = 0) -> list[ModelSpec]:
    """The hypothesis space on values `x` of one parameter: constant, one term, and (points allowing) two terms."""
    blocks = [b for b in options.building_blocks if b[1] == 0 or np.all(x >= 1)]  # log2 needs x >= 1
    if np.any(x <= 0):
        blocks = [b for b in blocks if b[0] >= 0]
    terms = [single_term(param, b) for b in blocks]
    specs = [ModelSpec()] + [ModelSpec((t,)) for t in terms]
    n_terms = terms_allowed(np.unique(x).size, options.max_terms)
    for size in range(2, n_terms + 1):
        specs += [ModelSpec(combo) for combo in itertools.combinations(terms, size)]
    return specs if n_terms >= 1 else specs[:1]


def refined_specs(x: np.ndarray, options: FitOptions) -> list[ModelSpec]:
    """Search-space refinement (Reisert et al., Extra-P slides 19-22): the simplified PMNF c0 + c1 x^a log2(x)^b
    along four slices, b = 0, 1, 2 with a in (0, 4] and a = 0 with b in (0, 4], on a grid of step 1/24.

    The paper searches each slice for a unimodal error minimum; a dense grid, fitted in one batch, finds the same
    minimum without assuming unimodality.
    """
    step = [Fraction(k, 24) for k in range(1, 4 * 24 + 1)]
    blocks: list[Exponents] = [(a, b) for b in (0, 1, 2) for a in step]
    blocks += [(Fraction(0), b) for b in step if b not in (1, 2)]
    return single_parameter_specs(x, replace(options, building_blocks=tuple(blocks), max_terms=1))


@dataclass(frozen=True, eq=False)
class Choice:
    """The hypothesis chosen for one kernel, with its fit."""

    spec: ModelSpec
    coef: np.ndarray  # (1 + n_terms,)
    fitted: np.ndarray  # (n,)
    loo: np.ndarray  # (n,)
    fallback: bool = False  # no eligible non-constant model though the data are not constant (e.g. decreasing)


@dataclass(frozen=True, eq=False)
class SpecScores:
    """Scores of H hypotheses for K kernels on one point set."""

    loo: np.ndarray  # (H, K) leave-one-out weighted squared error; inf where the hypothesis is not eligible
    wrss: np.ndarray  # (H, K) in-sample weighted residual sum of squares; inf where not eligible
    fits: dict  # n_terms -> (members, BatchFit): the fits, for picking a kernel's coefficients


def score_specs(points: np.ndarray, specs: list[ModelSpec], stats: PointStats, options: FitOptions) -> SpecScores:
    """Fit every spec to every kernel (one batch per number of terms) and score the eligible fits."""
    K = stats.y.shape[0]
    loo = np.full((len(specs), K), np.inf)
    wrss = np.full((len(specs), K), np.inf)
    by_size: dict[int, list[int]] = {}
    for h, spec in enumerate(specs):
        by_size.setdefault(spec.n_terms, []).append(h)
    fits = {}
    for size, members in by_size.items():
        X = np.stack([specs[h].basis(points) for h in members])  # (H, n, 1 + size)
        batch = fit_batch(X, stats.y, stats.weights)
        fits[size] = (members, batch)
        eligible = batch.valid & _eligible(X, batch, [specs[h] for h in members], options)
        resid_w = stats.weights[None] * (stats.y[None] - batch.fitted) ** 2
        press_w = stats.weights[None] * (stats.y[None] - batch.loo) ** 2
        wrss[members] = np.where(eligible, resid_w.sum(axis=2), np.inf)
        loo[members] = np.where(eligible, press_w.sum(axis=2), np.inf)
    return SpecScores(loo, wrss, fits)


def select(points: np.ndarray, specs: list[ModelSpec], stats: PointStats, options: FitOptions) -> list[Choice]:
    """Fit every spec to every kernel and choose one per kernel by the noise-aware rule (module docstring).

    Parameters
    ----------
    points : ndarray, shape (n, m)
    specs : hypotheses; the constant model ModelSpec() must be among them
    stats : PointStats of K kernels on `points`
    """
    n = stats.y.shape[1]
    scored = score_specs(points, specs, stats, options)
    sigma2, penalty = noise_and_penalty(stats, scored.wrss, specs, n, options)
    sizes = np.array([spec.n_terms for spec in specs])
    total = scored.loo / sigma2[None] + penalty[None] * sizes[:, None]
    constant = specs.index(ModelSpec())
    keeps_constant = constant_test(scored.wrss[constant], sigma2, stats.dof, n, options.alpha)
    has_term_model = np.isfinite(np.where(sizes[:, None] > 0, total, np.inf)).any(axis=0)
    rejected = (stats.dof > 0) & ~keeps_constant & has_term_model
    total[constant] = np.where(rejected, np.inf, total[constant])
    total[constant] = np.where(keeps_constant, -np.inf, total[constant])
    best = np.argmin(total, axis=0)
    choices = []
    for kernel, h in enumerate(best):
        members, batch = scored.fits[specs[h].n_terms]
        local = members.index(h)
        fallback = bool(h == constant and not keeps_constant[kernel] and not has_term_model[kernel]
                        and scored.wrss[constant, kernel] > options.noise_floor**2 * n)
        choices.append(Choice(specs[h], batch.coef[local, kernel], batch.fitted[local, kernel],
                              batch.loo[local, kernel], fallback))
    return choices


def _eligible(X: np.ndarray, batch: object, specs: list[ModelSpec], options: FitOptions) -> np.ndarray:
    """(H, K) mask: lead coefficients positive (unless allowed) and every term contributing enough."""
    coef, fitted = batch.coef, batch.fitted  # type: ignore[attr-defined]
    H, K, k = coef.shape
    ok = np.ones((H, K), dtype=bool)
    if k == 1:
        return ok
    if not options.allow_decreasing:
        n_params = max((f.param for s in specs for t in s.terms for f in t.factors), default=0) + 1
        lead = np.zeros((H, k), dtype=bool)
        for h, spec in enumerate(specs):
            for p in range(n_params):
                t = spec.lead_term(p)
                if t is not None:
                    lead[h, 1 + t] = True
        ok &= ~np.any(lead[:, None, :] & (coef <= 0), axis=2)
    parts = np.abs(X[:, None, :, 1:] * coef[:, :, None, 1:])  # (H, K, n, k-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = parts / np.abs(fitted)[..., None]
    ok &= np.all(np.nanmax(np.where(np.isfinite(share), share, 0.0), axis=2) >= options.min_term_contribution,
                 axis=2)
    return ok


def noise_and_penalty(stats: PointStats, wrss: np.ndarray, specs: list[ModelSpec], n: int,
                       options: FitOptions) -> tuple[np.ndarray, np.ndarray]:
    """Effective noise variance (K,) and per-term penalty (K,) in units of that variance."""
    from scipy import stats as st

    floor = options.noise_floor**2
    residual = np.full(stats.y.shape[0], np.inf)
    for h, spec in enumerate(specs):
        if spec.n_terms == 1 and n > 2:
            residual = np.minimum(residual, wrss[h] / (n - 2))
    residual = np.where(np.isfinite(residual), residual, floor)
    sigma2 = np.where(stats.dof > 0, stats.sigma2, residual)
    sigma2 = np.maximum(np.nan_to_num(sigma2, nan=floor), floor)
    penalty = np.where(stats.dof > 0, st.f.ppf(1 - options.alpha, 1, np.maximum(stats.dof, 1)),
                       st.chi2.ppf(1 - options.alpha, 1))
    return sigma2, penalty


def constant_test(wrss_constant: np.ndarray, sigma2: np.ndarray, dof: np.ndarray, n: int,
                   alpha: float) -> np.ndarray:
    """(K,) True where the constant model survives a lack-of-fit F test against the pure error."""
    from scipy import stats as st

    if n < 2:
        return np.ones_like(dof, dtype=bool)
    statistic = wrss_constant / (n - 1) / sigma2
    p_value = st.f.sf(statistic, n - 1, np.maximum(dof, 1))
    return (dof > 0) & (p_value >= alpha)
