"""Does a fitted model contradict the data it was fitted to? A model-free check, so that no verdict rests on it
silently.

Model selection can go wrong in ways its own scores do not show: noise estimated too high keeps a constant for
data that rise 260x, a search space without the right term settles for a flat line. `contradiction` compares the
model with the measured values directly and names the disagreement in one line (empty when there is none):

1. Trend: along some parameter, the repetitions rise with it (Kendall's S between the parameter and every
   repetition, one-sided p < `TREND_LEVEL`; rank-based, so outliers do not make a trend), the per-point aggregates
   rise at least `MIN_RISE` times from the smallest to the largest value of the parameter, and the model rises less
   than the square root of that (half of it on a log scale): "the measured values rise 260x from n=2000 to
   n=64000 but the model is constant (SMAPE 107%)".
2. Poor fit: the model misses the per-point aggregates by at least `POOR_FIT` percent on average and by more than
   `NOISE_MULTIPLE` times what the repetitions' noise explains. Each miss is relative to the point's value, floored
   at 1e-3 of the largest as in the fit's weights (`search.relative_scale`): a model of values spanning six
   decades may miss the smallest by more than their size without mattering to its growth, and the fit knowingly
   lets it.

Falling data are judged by the fit only: a constant model of a falling series is pessimistic, not optimistic
(and `modeler` already says why it is constant). Measured on seeded synthetic kernels (1,000 each; one term of
the 42 building blocks, one in ten constant, 5 repetitions): no note at 5% uniform or lognormal noise on 5 or 8
points; at 20% lognormal noise 4-6 notes per 1,000, all but one on kernels whose true rise (1.4-1.7x) the model
missed. A constant model of sorted() timings with a few stalled repetitions is named every time (154 of 154).
"""

from __future__ import annotations

import math

import numpy as np

from scalecheck.core.fit import smape
from scalecheck.core.search import (AGGREGATE_VARIANCE, nan_median, pair_differences, point_stats, relative_scale,
                                    spread)
from scalecheck.data.measurement import Series, distinct
from scalecheck.data.outcome import KernelModel

TREND_LEVEL = 1e-3  # one-sided level of the trend test
MIN_RISE = 1.5  # a rise of the measured values smaller than this is no contradiction
POOR_FIT = 25.0  # percent: a smaller mean relative miss is no contradiction, whatever the noise
NOISE_MULTIPLE = 3.0  # a misfit within this many times the noise's expected SMAPE is noise


def contradiction(points: np.ndarray, values: np.ndarray, fitted: np.ndarray, aggregate: str = "mean",
                  parameters: tuple[str, ...] = ()) -> str:
    """One line saying how the model contradicts the data, or "" when it is consistent with them.

    Parameters
    ----------
    points : ndarray, shape (n,) or (n, m)
        Parameter values of the measured points.
    values : ndarray, shape (n, r)
        Repetitions per point, NaN-padded.
    fitted : ndarray, shape (n,)
        The model's values at `points`.
    aggregate : str
        The per-point statistic the model was fitted to (`FitOptions.aggregate`).
    parameters : tuple of str
        Parameter names for the text (default x1, x2, ...; "x" for one parameter).

    Notes
    -----
    Pure and deterministic; `contradictions` does the same for K kernels on one point set at once.
    """
    values, fitted = np.asarray(values, dtype=float), np.asarray(fitted, dtype=float)
    return contradictions(points, values[None], fitted[None], aggregate, parameters)[0]


def contradictions(points: np.ndarray, values: np.ndarray, fitted: np.ndarray, aggregate: str = "mean",
                   parameters: tuple[str, ...] = ()) -> list[str]:
    """`contradiction` for K kernels measured on the same points: values of shape (K, n, r), fitted (K, n).

    Cost O(K n r min(r, 8)), plus O(n^2 r^2) for each kernel whose aggregates rise more than its model does (the
    trend test runs only there).
    """
    points = np.asarray(points, dtype=float)
    points = points[:, None] if points.ndim == 1 else points
    values, fitted = np.asarray(values, dtype=float), np.asarray(fitted, dtype=float)
    n, m = points.shape
    K = values.shape[0]
    if values.shape[:2] != (K, n) or fitted.shape != (K, n):
        raise ValueError(f"values must have shape (K, {n}, r) and fitted (K, {n}), got {values.shape}, {fitted.shape}")
    names = parameters or (("x",) if m == 1 else tuple(f"x{k + 1}" for k in range(m)))
    notes = [""] * K
    if n < 3:
        return notes
    y = point_stats(values, aggregate).y  # (K, n): the aggregates the models were fitted to
    error = smape(y, fitted)  # (K,)
    for k in range(m):
        x = points[:, k]
        rise, model_rise = _rise(x, y), _model_rise(x, fitted)
        with np.errstate(invalid="ignore", over="ignore"):
            # the model covers less than half the data's rise on a log scale
            suspect = (rise >= MIN_RISE) & ~(model_rise**2 >= rise)
        for kernel in np.flatnonzero(suspect):
            if notes[kernel] or _trend_p(x, values[kernel]) >= TREND_LEVEL:
                continue
            if np.ptp(fitted[kernel]) <= 1e-9 * np.max(np.abs(fitted[kernel]), initial=0.0):
                says = "is constant"
            elif model_rise[kernel] <= 1.0:
                says = "does not rise"
            else:
                says = f"rises only {model_rise[kernel]:.3g}x"
            notes[kernel] = (f"the measured values rise {rise[kernel]:.3g}x from {names[k]}={np.min(x):g} to "
                             f"{names[k]}={np.max(x):g} but the model {says} (SMAPE {error[kernel]:.0f}%)")
    miss = 100.0 * np.mean(np.minimum(np.abs(y - fitted) / relative_scale(y), 2.0), axis=1)  # (K,)
    poor = (miss >= POOR_FIT) & (miss > NOISE_MULTIPLE * _noise_error(values, aggregate))
    for kernel in np.flatnonzero(poor):
        if not notes[kernel]:
            notes[kernel] = (f"the model misses the measured values by {miss[kernel]:.0f}% on average, more than "
                             "their noise explains")
    return notes


def model_contradiction(series: Series, model: KernelModel, aggregate: str = "mean") -> str:
    """`contradiction` for a kernel's model on its series: the last segment's points for a segmented kernel (the
    model that predicts at scale); "" without a model."""
    if model.model is None:
        return ""
    keep = np.ones(series.points.shape[0], dtype=bool)
    if model.segments:
        last = model.segments[-1]
        keep = (series.points[:, 0] >= last.start) & (series.points[:, 0] <= last.end)
    points = series.points[keep]
    return contradiction(points, series.values[keep], model.model.predict(points), aggregate, series.parameters)


def _rise(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(K,) geometric mean of `y` (K, n) at the largest `x` over that at the smallest; NaN unless all positive."""
    low, high = y[:, x == np.min(x)], y[:, x == np.max(x)]
    ok = np.all(low > 0, axis=1) & np.all(high > 0, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.exp(np.mean(np.log(high), axis=1) - np.mean(np.log(low), axis=1))
    return np.asarray(np.where(ok, ratio, np.nan))


def _model_rise(x: np.ndarray, fitted: np.ndarray) -> np.ndarray:
    """(K,) the model's mean at the largest `x` over that at the smallest: inf when it rises from <= 0 to > 0, 0
    when it ends <= 0 (then it does not rise, whatever it starts from)."""
    low, high = np.mean(fitted[:, x == np.min(x)], axis=1), np.mean(fitted[:, x == np.max(x)], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(low > 0, high / np.where(low > 0, low, 1.0), np.inf)
    return np.asarray(np.where(high <= 0, 0.0, ratio))


def _trend_p(x: np.ndarray, values: np.ndarray) -> float:
    """One-sided p-value that the repetitions do not rise with `x` (Kendall's S, normal approximation with the
    continuity correction and the variance for ties in x; ties in the values make it conservative)."""
    groups = [np.sort(values[x == v][~np.isnan(values[x == v])]) for v in distinct(x)]
    groups = [g for g in groups if g.size]
    sizes = np.array([g.size for g in groups], dtype=float)
    total = float(sizes.sum())
    s = 0.0
    for a, lower in enumerate(groups):
        for upper in groups[a + 1:]:
            below = np.searchsorted(lower, upper, side="left").sum()  # pairs with lower < upper
            above = (lower.size - np.searchsorted(lower, upper, side="right")).sum()  # pairs with lower > upper
            s += float(below - above)
    variance = (total * (total - 1) * (2 * total + 5) - float(np.sum(sizes * (sizes - 1) * (2 * sizes + 5)))) / 18
    if variance <= 0:
        return 1.0
    z = (s - 1.0) / math.sqrt(variance)
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _noise_error(values: np.ndarray, aggregate: str) -> np.ndarray:
    """(K,) expected mean relative miss (percent) of a correct model against the per-point aggregates, from the
    repetitions' robust relative spread: sqrt(2 / pi) times the relative standard error of each aggregate,
    averaged over the points. 0 without repetitions."""
    with np.errstate(invalid="ignore", divide="ignore"):
        relative = values / np.abs(nan_median(values)[..., None])
    sigma = spread(pair_differences(relative).reshape(values.shape[0], -1))  # (K,)
    count = np.sum(~np.isnan(values), axis=2)  # (K, n)
    error = sigma[:, None] * np.sqrt(AGGREGATE_VARIANCE[aggregate] / np.maximum(count, 1))
    return np.asarray(np.nan_to_num(100.0 * math.sqrt(2.0 / math.pi) * np.mean(error, axis=1)))
