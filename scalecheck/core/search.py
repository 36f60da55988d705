"""Model selection: hypothesis spaces, the noise each kernel's repetitions reveal, and the noise-aware choice.

The rule, per kernel (Calotoiu et al. select by leave-one-out SMAPE alone, which keeps adding spurious terms on
noisy data; scalecheck measures every decision in units of the kernel's own noise):

1. Noise: the pooled relative variance of single repetitions around their point's mean (pure error), with
   `dof` degrees of freedom; floored at `noise_floor`. Without repetitions, the residual variance of the best
   one-term model stands in for it. Outlying repetitions (`outliers`: more than `OUTLIER_CUTOFF` robust standard
   deviations from their point's median, the spread taken from differences of two repetitions, which outliers
   cannot inflate) are left out of the pure error, of its degrees of freedom, of each point's `center` and
   weight, and of the "mean" aggregate: a stalled repetition on a loaded runner would otherwise inflate the noise
   until a constant survives data rising 260x, or pull one point's mean up into a trend. Clean noise loses almost
   nothing (1 repetition in 5,000 with 5 per point), so the estimate keeps the classical one's efficiency and its
   F distribution. The median, min and tmax aggregates keep every repetition (they treat tails their own way).
2. Constant test: when the repetitions give pure error, the constant model is kept unless a lack-of-fit F test
   rejects it at level `alpha`.
3. Otherwise the hypothesis with the lowest leave-one-out weighted error (in units of the noise) plus a penalty
   of `lambda` for the first term wins, `lambda` being the `1 - alpha` quantile of F(1, dof) (chi^2(1) without
   repetitions): a term must pay for itself by more than the noise could explain. A further term is picked among
   all building blocks, so it pays the `1 - alpha / len(building_blocks)` quantile (Bonferroni): at 5% noise on 8
   points this keeps the lead order of one-term functions right 86-96% of the time instead of 74-85%. With
   `refine`, an exponent off the building blocks is picked among the 382 of `REFINED_GRID`, and pays for that too.
Hypotheses with a negative term coefficient (unless decreasing models are allowed: then only a negative lead
coefficient is excluded), or with a term that never contributes `smallest_term` of the value at any
measured point, are not eligible. Terms of opposite sign would cancel: n^2 data fitted as n^(7/4) - n^(3/2) *
log2(n)^2 read as a lower class, flat data fitted as n^(5/2) - n^(9/4) as a higher one.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from scalecheck.core.fit import BatchFit, fit_batch, point_major
from scalecheck.core.options import FitOptions as FitOptions  # re-exported: the search's options
from scalecheck.core.tmax import DEFAULT_QUANTILE, tmax
from scalecheck.core.trend import trend_p_values
from scalecheck.data.exponents import falling
from scalecheck.data.measurement import AGGREGATES, distinct
from scalecheck.data.spec import Exponents, ModelSpec, Term, single_term
from scalecheck.names import AGGREGATE_NAMES as AGGREGATE_NAMES  # re-exported: what `aggregate` may name

# The per-point statistics of the repetitions: the data layer's reducers, and "tmax" (min(S) plus the quantile
# DEFAULT_QUANTILE of the noise model fitted to the point's repetitions, `core.tmax`).
# Variance of the aggregate relative to the variance of the mean of r repetitions (normal noise). For tmax:
# min(S) + (-log(1 - q)) * mean error under exponential noise, so about log(1 / (1 - q))^2 times the mean's.
AGGREGATE_VARIANCE = {"mean": 1.0, "median": math.pi / 2, "min": 1.0,
                      "tmax": math.log(1 / (1 - DEFAULT_QUANTILE)) ** 2}
# A repetition this many robust standard deviations from its point's median is an outlier (`outliers`). Far enough
# out that clean Gaussian noise almost never reaches it (so the pure error keeps its efficiency and its F
# distribution), close enough to catch a repetition 2x the others under 10% noise.
OUTLIER_CUTOFF = 4.5
# Without repetitions, the noise is the residual of the largest models that leave this many degrees of freedom
# (`residual_basis`); with fewer points, of the one-term models.
RESIDUAL_DOF = 20
# Bytes of the work arrays of one batch of kernels in `choose` (`kernels_per_batch`): the batch, not the number of
# kernels, bounds the memory of the search.
WORK_BYTES = 32 * 2**20
_SHAMOS = 1.0 / (math.sqrt(2.0) * 0.6744897501960817)  # sigma from the median |difference| of two N(0, sigma^2)
_MAX_LAG = 8  # pairs of repetitions at lags 1..8: every pair up to 9 repetitions, O(8 r) pairs beyond
# Croux and Rousseeuw (1992) small-sample factors of the MAD for 0..9 values (n / (n - 0.8) beyond).
_MAD_SMALL = np.array([np.nan, np.nan, 1.196, 1.495, 1.363, 1.206, 1.200, 1.140, 1.129, 1.107])
# The magnitudes a fit handles (`out_of_range`); a kernel beyond them gets status OUT_OF_RANGE and no model.
OUT_OF_RANGE = "out of range"  # the status of a kernel whose values a model cannot be fitted to
MAX_MAGNITUDE = 1e100  # the largest magnitude of a value a model is fitted to: its square is far from overflowing
MIN_MAGNITUDE = 1e-100  # the smallest magnitude of a value other than 0: the inverse of its square is far from it too
# The rank trend test runs at this share of `alpha`: the F test already spends alpha on constant data, and at a
# tenth of it flat values gain a term no more often than before (seeded: 10, 14 and 18 of 1,000 at 5% and 30%
# lognormal noise and under bursts, with and without the test; at the full alpha 18, 22 and 26).
TREND_SHARE = 0.1


def out_of_range(values: np.ndarray) -> str:
    """Why repetitions `values` (any shape, NaN-padded) are beyond the magnitudes a model can be fitted to, or "".

    A fit weighs each value by its inverse square and sums squared residuals, also over a few points at a time
    (the windows of segmentation), so every value must be 0 or of a magnitude within [`MIN_MAGNITUDE`,
    `MAX_MAGNITUDE`]: then squares, their sums and their reciprocals stay far inside the range of floats. Measured
    values rarely exceed 1e30 in any unit, so only data gone wrong, or a unit far too small or too large, is out.
    """
    present = np.abs(values[~np.isnan(values)])
    largest = float(np.max(present)) if present.size else 0.0
    if largest > MAX_MAGNITUDE:
        return (f"the values reach {largest:.3g} in magnitude, beyond the {MAX_MAGNITUDE:g} a model can be fitted to "
                "(its sums of squares would overflow): record them in a larger unit, or check what produced them")
    nonzero = present[present > 0]
    smallest = float(np.min(nonzero)) if nonzero.size else 0.0
    if 0 < smallest < MIN_MAGNITUDE:
        return (f"a value of magnitude {smallest:.3g} is below the {MIN_MAGNITUDE:g} a model can weigh (its weight, "
                "the inverse square, would overflow): record the values in a smaller unit, or check what produced "
                "them")
    return ""


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
    reps: np.ndarray  # (K, n) number of repetitions kept (not outliers)
    center: np.ndarray  # (K, n) mean of the repetitions kept
    values: np.ndarray | None = None  # (K, n, r) the repetitions, NaN-padded (for the rank trend test)
    trending: np.ndarray | None = None  # (K,) True where the values trend significantly: the constant is not kept

    def subset(self, kernels: slice | np.ndarray = slice(None), points: slice | np.ndarray = slice(None)) -> PointStats:
        """Some kernels at some points, weighed among themselves; the pooled noise is kept (it describes the series).

        Re-deriving the weights matters when values span many orders of magnitude: the floor that keeps a value
        near zero from dominating is relative to the largest value of the points kept, not of the whole series.
        """
        reps, center = self.reps[kernels][:, points], self.center[kernels][:, points]
        values = None if self.values is None else self.values[kernels][:, points]
        trending = None if self.trending is None else self.trending[kernels]
        return PointStats(self.y[kernels][:, points], _weights(reps, center), self.sigma2[kernels],
                          self.dof[kernels], reps, center, values, trending)

    def rows(self, kernels: slice | np.ndarray) -> PointStats:
        """Some kernels, every statistic as it is (views): what a batch of the search works on."""
        return PointStats(self.y[kernels], self.weights[kernels], self.sigma2[kernels], self.dof[kernels],
                          self.reps[kernels], self.center[kernels],
                          None if self.values is None else self.values[kernels],
                          None if self.trending is None else self.trending[kernels])


def point_stats(values: np.ndarray, aggregate: str = "mean") -> PointStats:
    """Aggregate repetitions and estimate their relative noise, with outlying repetitions set aside.

    Parameters
    ----------
    values : ndarray, shape (K, n, r)
        Repetitions per kernel and point, NaN-padded; every (kernel, point) has at least one value.
    aggregate : str
        "mean" (of the repetitions that are not outliers), "median", "min" or "tmax" (min(S) plus the fitted 0.95
        quantile of each point's noise model, see `core.tmax`; costs about 10 us per (kernel, point) with 30
        repetitions). The median, min and tmax use every repetition: they define their own treatment of tails.

    Notes
    -----
    The pure error (`sigma2`, `dof`) and `center` come from the repetitions that `outliers` keeps, so one stalled
    repetition can neither hide a trend (an inflated noise estimate) nor fake one (a mean pulled up at one point).
    Cost O(K n r min(r, 8)). The values are numpy's reductions (np.nanmean, np.nansum, np.median, np.nanmedian,
    np.nanmin) bit for bit, but computed column by column (`_sort_last`, `_row_sum`, `_row_count`): numpy calls
    its loop once per row of the last axis, which costs more than the work on a few repetitions.
    """
    present = ~np.isnan(values)
    complete = bool(present.all())
    count = _row_count(present)  # (K, n) repetitions of each point
    ordered = None
    if values.shape[2] >= 3 or aggregate in ("median", "min"):
        ordered = _sort_last(values, complete)
    y = tmax(values) if aggregate == "tmax" else _sorted_aggregate(ordered, count, aggregate)
    if ordered is not None and values.shape[2] >= 3:
        median = _sorted_median(ordered, None if complete else count)
        del ordered  # its memory serves the arrays to come
        outlier = _outliers(values, count, OUTLIER_CUTOFF, median)
    else:
        outlier = np.zeros(values.shape, dtype=bool)
    reps = count - _row_count(outlier)  # outliers are present values
    dropped = outlier if complete else outlier | ~present  # where the repetitions kept are NaN
    filled = np.where(dropped, 0.0, values)  # the repetitions kept, 0 for the others
    if reps.all():  # np.nanmean(kept, axis=2), bit for bit: the same sum divided by the same count
        total = _row_sum(filled)
        center = np.divide(total, reps, out=total, casting="unsafe")
    else:  # a point without values: np.nanmean's NaN and its warning
        center = np.asarray(np.nanmean(np.where(outlier, np.nan, values), axis=2))
    if y is None and aggregate == "mean" and AGGREGATES[aggregate] is np.nanmean and reps.all():
        y = center.copy()
    elif y is None:
        y = AGGREGATES[aggregate](np.where(outlier, np.nan, values) if aggregate == "mean" else values, axis=2)
    used = reps if aggregate == "mean" else count  # repetitions behind each aggregate
    scale = relative_scale(center)
    # np.nansum(((kept - center) / scale) ** 2, axis=(1, 2)): the same operations, in place, NaN as 0
    squares = np.subtract(filled, center[..., None], out=filled)
    squares /= scale[..., None]
    np.square(squares, out=squares)
    np.copyto(squares, 0.0, where=dropped)
    np.copyto(squares, 0.0, where=np.isnan(squares))
    squares = np.sum(squares, axis=(1, 2))
    dof = np.sum(np.maximum(reps - 1, 0), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sigma2 = np.where(dof > 0, squares / np.maximum(dof, 1), np.nan) * AGGREGATE_VARIANCE[aggregate]
    return PointStats(y, np.asarray(used / scale ** 2), sigma2, dof, reps, center, values)  # _weights(used, center)


def _sorted_aggregate(ordered: np.ndarray | None, count: np.ndarray, aggregate: str) -> np.ndarray | None:
    """The "median" or "min" aggregate, np.nanmedian or np.nanmin over axis 2 bit for bit, from `_sort_last`'s
    `ordered` and `count`; None where numpy's own call is needed: another aggregate, a point without values
    (numpy warns), 600 repetitions or more (np.nanmedian changes method), a minimum of 0 (np.nanmin may return
    -0.0, which sorts as 0.0)."""
    if ordered is None or not count.all() or AGGREGATES.get(aggregate) not in (np.nanmedian, np.nanmin):
        return None
    r = ordered.shape[2]
    if AGGREGATES[aggregate] is np.nanmin:
        least = ordered[..., 0].copy()
        return least if least.all() else None
    if r >= 600:
        return None
    if np.all(count == r):
        low, high = ordered[..., (r - 1) // 2], ordered[..., r // 2]
    else:
        low = np.take_along_axis(ordered, ((count - 1) // 2)[..., None], axis=2)[..., 0]
        high = np.take_along_axis(ordered, (count // 2)[..., None], axis=2)[..., 0]
    # np.nanmedian of fewer than 600 values is np.ma.median: the sum of the middle two values (the middle one twice
    # for an odd count), from 0.0, halved
    return np.asarray((0.0 + low + high) / 2.0)


def outliers(values: np.ndarray, cutoff: float = OUTLIER_CUTOFF) -> np.ndarray:
    """(K, n, r) mask of outlying repetitions: farther from their point's median than `cutoff` robust standard
    deviations of one repetition, relative to the point's median.

    Parameters
    ----------
    values : ndarray, shape (K, n, r)
        Repetitions per kernel and point, NaN-padded.
    cutoff : float
        Distance from the point's median in robust standard deviations: the larger of the kernel's (`spread`,
        pooled over its points) and, at points with 5 repetitions or more, the point's own (its median absolute
        deviation, which withstands two spoiled repetitions of five), so that a point noisier than the others
        (often the smallest size) keeps its tails.

    Notes
    -----
    Only points with three or more repetitions have outliers, and only in the half of their repetitions farthest
    from the median: two values cannot say which one is wrong, and a majority is never an outlier. Measured on 5
    points (20,000 seeded kernels): clean Gaussian noise loses 1 repetition in 5,000 with 5 repetitions per point,
    which lowers the pure error by 0.2% (1 in 400 and 2% with 3 repetitions); of repetitions multiplied by 2-10
    (5% of them), 98% are caught under 5% noise and 86% under 20% lognormal noise (91% and 83% with 3
    repetitions, where two spoiled values of three are a majority); a point 3x noisier than the others loses 1.3%
    of its repetitions. Cost O(K n r min(r, 8) log r).
    """
    if values.shape[2] < 3:
        return np.zeros(values.shape, dtype=bool)
    return _outliers(values, _row_count(~np.isnan(values)), cutoff)


def _outliers(values: np.ndarray, count: np.ndarray, cutoff: float, median: np.ndarray | None = None) -> np.ndarray:
    """`outliers` of (K, n, r) `values` with r >= 3, given `count` (K, n), the values present at each point, and
    optionally `median`, their `nan_median`."""
    median = nan_median(values) if median is None else median  # (K, n)
    scale = np.abs(median)
    if not np.all(scale > 0):  # relative to each point, whatever the others' size
        scale = np.where(scale > 0, scale, relative_scale(median))
    relative = values / scale[..., None]
    pooled = _pooled_spread(relative)  # (K,)
    distance = np.subtract(relative, (median / scale)[..., None], out=relative)
    distance = np.abs(distance, out=distance)  # NaN where missing
    typical = nan_median(distance)  # (K, n) median absolute deviation of each point
    own = np.where(count >= 5, 1.4826 * _mad_factor(count) * typical, 0.0)
    limit = cutoff * np.fmax(pooled[:, None], own)
    flagged = distance > limit[..., None]
    flagged &= distance > typical[..., None]  # in the far half
    if not np.all(count >= 3):
        flagged &= count[..., None] >= 3
    return np.asarray(flagged)


def _pooled_spread(relative: np.ndarray) -> np.ndarray:
    """spread(pair_differences(relative).reshape(K, -1)) of (K, n, r) `relative`, sorting the differences in
    place: the few kernels whose mean difference stands in get theirs again, in their order."""
    differences = pair_differences(relative).reshape(relative.shape[0], -1)
    present = ~np.isnan(differences)
    differences.sort(axis=-1)
    median = _sorted_median(differences, None if present.all() else _row_count(present))
    tied = ~(median > 0)
    if relative.dtype != np.float64:  # the mean, a float64, sets the type of the result
        mean = _mean_difference(pair_differences(relative).reshape(relative.shape[0], -1))
    elif not tied.any():
        return np.asarray(median * _SHAMOS)
    else:
        mean = np.full(median.shape, np.nan)
        mean[tied] = _mean_difference(pair_differences(relative[tied]).reshape(int(tied.sum()), -1))
    return np.asarray(np.where(median > 0, median * _SHAMOS, mean * math.sqrt(math.pi) / 2))


def _mad_factor(count: np.ndarray) -> np.ndarray:
    """Croux and Rousseeuw's small-sample factor of the median absolute deviation of `count` values."""
    return np.where(count < len(_MAD_SMALL), np.take(_MAD_SMALL, np.minimum(count, len(_MAD_SMALL) - 1)),
                    count / np.maximum(count - 0.8, 1.0))


# `pair_differences`: a lag with at most this many pairs is subtracted pair by pair, each over all points at once
_COLUMN_PAIRS = 16


def pair_differences(values: np.ndarray) -> np.ndarray:
    """(..., M) absolute differences of two repetitions of the same point (last axis, NaN-padded): at lags 1 to 8
    in their order, so every pair up to 9 repetitions and O(8 r) pairs beyond."""
    r = values.shape[-1]
    lags = range(1, min(r, _MAX_LAG + 1))
    if not lags:
        return np.full(values.shape[:-1] + (0,), np.nan)
    if values.dtype != np.float64:
        return np.concatenate([np.abs(values[..., lag:] - values[..., :-lag]) for lag in lags], axis=-1)
    out = np.empty(values.shape[:-1] + (sum(r - lag for lag in lags),))
    start = 0
    for lag in lags:
        if r - lag <= _COLUMN_PAIRS:  # a few pairs: one subtraction per pair over all points, not one per point
            for first in range(r - lag):
                np.subtract(values[..., first + lag], values[..., first], out=out[..., start + first])
        else:
            np.subtract(values[..., lag:], values[..., :-lag], out=out[..., start:start + r - lag])
        start += r - lag
    return np.abs(out, out=out)


def nan_median(values: np.ndarray) -> np.ndarray:
    """Median over the last axis, NaN ignored (NaN where all are): by sorting, as np.nanmedian goes through masked
    arrays and costs ten times as much on short axes. Without NaN it is np.median's value bit for bit (the mean
    of the middle two values); with NaN, or if one such mean overflows, every median is the two middle values
    halved before they are added, so that values near the largest float (1e308) do not overflow."""
    if values.shape[-1] == 0:
        return np.full(values.shape[:-1], np.nan)
    present = ~np.isnan(values)
    if present.all():
        return _sorted_median(_sort_last(values, True), None)
    return _sorted_median(_sort_last(values, False), _row_count(present))


def _sorted_median(ordered: np.ndarray, count: np.ndarray | None) -> np.ndarray:
    """`nan_median` of rows sorted over the last axis (`_sort_last`), of which the first `count` (...,) values are
    not NaN (None: there is no NaN)."""
    r = ordered.shape[-1]
    if r == 0:
        return np.full(ordered.shape[:-1], np.nan)
    if count is None:
        # np.median: np.mean of the middle value or two, a sum from 0 (so -0.0 turns to 0.0), then divided; the 0
        # has the result's type, as a Python 0.0 would turn a float32 value into a float64 under numpy 1's promotion
        zero = np.zeros((), np.result_type(ordered.dtype, 0.0))
        with np.errstate(over="ignore", invalid="ignore"):
            if r % 2:
                median = zero + ordered[..., r // 2]
            else:
                median = (zero + ordered[..., r // 2 - 1] + ordered[..., r // 2]) / zero.dtype.type(2)
        if np.all(np.isfinite(median)):
            return np.asarray(median)
        count = np.full(ordered.shape[:-1], r)
    low = np.take_along_axis(ordered, np.maximum((count - 1) // 2, 0)[..., None], axis=-1)[..., 0]
    high = np.take_along_axis(ordered, np.minimum(count // 2, r - 1)[..., None], axis=-1)[..., 0]
    return np.asarray(np.where(count > 0, low / 2 + high / 2, np.nan))


def spread(differences: np.ndarray) -> np.ndarray:
    """Robust standard deviation of one repetition from absolute differences of two repetitions (last axis,
    NaN-padded), e.g. shape (K, M) -> (K,).

    Notes
    -----
    The median absolute difference times 1 / (sqrt(2) Phi^-1(3/4)) = 1.0483 (Shamos's estimator): the difference
    of two repetitions is N(0, 2 sigma^2) under Gaussian noise whatever the number of repetitions, so the factor
    holds for 2 repetitions as for 200 (a median of few differences runs a few percent high: +6% from 15),
    and up to half the differences may be spoiled. Quantized values (a coarse
    timer) can tie in more than half the pairs; then the mean absolute difference times sqrt(pi) / 2 stands in.
    NaN without differences.
    """
    median = nan_median(differences)
    tied = ~(median > 0)  # where the mean absolute difference stands in
    if differences.dtype != np.float64 or differences.ndim < 2 or not differences.flags.c_contiguous:
        # every row's mean: it sets the type of the result, and a row sums alike on its own only in such an array
        mean = _mean_difference(differences)
    elif not tied.any():
        return np.asarray(median * _SHAMOS)
    else:
        mean = np.full(median.shape, np.nan)
        mean[tied] = _mean_difference(differences[tied])
    return np.asarray(np.where(median > 0, median * _SHAMOS, mean * math.sqrt(math.pi) / 2))


def _mean_difference(differences: np.ndarray) -> np.ndarray:
    """Mean over the last axis, NaN ignored (NaN where all are)."""
    count = np.sum(~np.isnan(differences), axis=-1)
    with np.errstate(invalid="ignore"):
        return np.asarray(np.where(count > 0, np.nansum(differences, axis=-1) / np.maximum(count, 1), np.nan))


# `_sort_last`: rows of 2 to this many values are sorted by a sorting network, on whole columns at once, if there
# are at least _NETWORK_ROWS times as many rows as values in a row (below, numpy's sort costs less than the calls)
_NETWORK_MAX = 6
_NETWORK_ROWS = 200


def _sort_last(values: np.ndarray, complete: bool | None = None) -> np.ndarray:
    """The values sorted over the last axis, as a view that is not always contiguous: where a row holds k values
    that are not NaN, its first k places hold np.sort's values, bit for bit, the others NaN or +inf. `complete`,
    if known, says whether there is no NaN.

    numpy sorts row by row, and on rows of a few values its call costs more than the sort: many rows of 2 to
    `_NETWORK_MAX` floats go through odd-even transposition sort instead, each compare-exchange a minimum and a
    maximum of two whole columns (4x faster on 5 values, 10x on 3), NaN as +inf. The network orders by value,
    and values other than -0.0 (which sorts as 0.0) have one bit pattern each, so it places np.sort's values;
    with -0.0, on longer rows and on few rows, np.sort runs.
    """
    r = values.shape[-1]
    if not 2 <= r <= _NETWORK_MAX or values.dtype != np.float64 or values.size < _NETWORK_ROWS * r * r:
        return np.sort(values, axis=-1)
    least = np.min(values)  # NaN if any value is
    if not least > 0 and np.signbit(values[values == 0]).any():
        return np.sort(values, axis=-1)
    complete = not np.isnan(least) if complete is None else complete
    source = values if complete else np.fmin(values, np.inf)  # NaN as +inf
    columns = np.empty((r,) + values.shape[:-1])  # one contiguous row per place
    rows = [columns[i, ...] for i in range(r)]
    for i in range(0, r - 1, 2):  # the first step reads the values where they are
        np.minimum(source[..., i], source[..., i + 1], out=rows[i])
        np.maximum(source[..., i], source[..., i + 1], out=rows[i + 1])
    if r % 2:
        np.copyto(rows[r - 1], source[..., r - 1])
    low = np.empty(values.shape[:-1])
    for step in range(1, r):
        for i in range(step % 2, r - 1, 2):
            np.minimum(rows[i], rows[i + 1], out=low)
            np.maximum(rows[i], rows[i + 1], out=rows[i + 1])
            np.copyto(rows[i], low)
    return np.moveaxis(columns, 0, -1)


# numpy adds up to this many values of a row in 8 interleaved partial sums (its pairwise summation's block)
_PAIRWISE_BLOCK = 128
# `_row_count` and `_row_sum` go column by column on rows of up to _COLUMN_COUNT values if there are at least
# _COLUMN_ROWS times as many rows as values in a row; otherwise numpy's call per row costs less than a call per column
_COLUMN_COUNT = 16
_COLUMN_ROWS = 50


def _row_count(mask: np.ndarray) -> np.ndarray:
    """np.sum(mask, axis=-1) of a boolean array, added up column by column (integers: exact in any order)."""
    r = mask.shape[-1]
    if r > _COLUMN_COUNT or mask.size < _COLUMN_ROWS * r * r:
        return np.asarray(np.sum(mask, axis=-1))
    if mask.all():
        return np.full(mask.shape[:-1], r, dtype=np.int_)
    count = mask[..., 0].astype(np.int_)
    for column in range(1, r):
        count += mask[..., column]
    return count


def _row_sum(values: np.ndarray) -> np.ndarray:
    """np.sum(values, axis=-1), bit for bit, added up column by column for all rows at once.

    numpy sums each row of a C-contiguous array in one call of its loop, from 0.0, pairwise: value by value below
    8 values, in 8 interleaved partial sums up to `_PAIRWISE_BLOCK` values; on many rows of a few values the calls
    cost more than the additions. The same additions in the same order run here down the columns. Other layouts,
    types and lengths, and few rows, go to np.sum itself.
    """
    r = values.shape[-1]
    if (not values.flags.c_contiguous or values.dtype != np.float64 or not 0 < r <= _PAIRWISE_BLOCK
            or values.size < _COLUMN_ROWS * r * r):
        return np.asarray(np.sum(values, axis=-1))
    return _column_sum([values[..., j] for j in range(r)])


def _column_sum(columns: list[np.ndarray]) -> np.ndarray:
    """What np.sum(values, axis=-1) gives for the C-contiguous array `values` whose last axis holds `columns` (1 to
    `_PAIRWISE_BLOCK` float64 arrays of one shape), in its order of additions (`_row_sum`)."""
    r = len(columns)
    if r < 8:
        total = columns[0] + 0.0
        for column in columns[1:]:
            total += column
        return np.asarray(total)
    partial = [column.copy() for column in columns[:8]]
    end = r - r % 8
    for start in range(8, end, 8):
        for j in range(8):
            partial[j] += columns[start + j]
    total = ((partial[0] + partial[1]) + (partial[2] + partial[3])) + ((partial[4] + partial[5])
                                                                       + (partial[6] + partial[7]))
    for column in columns[end:]:
        total += column
    total += 0.0
    return np.asarray(total)


def relative_scale(center: np.ndarray) -> np.ndarray:
    """(K, n) the scale of each point's relative error: its value, floored at 1e-3 of the kernel's largest."""
    magnitude = np.abs(center)
    if magnitude.ndim == 2 and magnitude.shape[1]:  # the largest by columns: np.max calls a loop per row
        largest = magnitude[:, 0].copy()
        for column in range(1, magnitude.shape[1]):
            np.maximum(largest, magnitude[:, column], out=largest)  # exact, NaN spreads as in np.max
        largest = largest[:, None]
    else:
        largest = np.max(magnitude, axis=1, keepdims=True)
    scale = np.maximum(magnitude, 1e-3 * largest)
    return np.where(scale > 0, scale, 1.0)


def _weights(reps: np.ndarray, center: np.ndarray) -> np.ndarray:
    return np.asarray(reps / relative_scale(center) ** 2)


def single_parameter_specs(x: np.ndarray, options: FitOptions, param: int = 0) -> list[ModelSpec]:
    """The hypothesis space on values `x` of one parameter: constant, one term, and (points allowing) two terms."""
    blocks = [b for b in options.building_blocks if b[1] == 0 or np.all(x >= 1)]  # log2 needs x >= 1
    if np.any(x <= 1):
        blocks = [b for b in blocks if b[1] >= 0]  # log2(x)^-j needs log2(x) > 0
    if np.any(x <= 0):
        blocks = [b for b in blocks if b[0] >= 0]
    terms = [single_term(param, b) for b in blocks]
    specs = [ModelSpec()] + [ModelSpec((t,)) for t in terms]
    n_terms = terms_allowed(distinct(x).size, options.max_terms)
    for size in range(2, n_terms + 1):
        specs += [ModelSpec(combo) for combo in itertools.combinations(terms, size)]
    return specs if n_terms >= 1 else specs[:1]


# `refined_specs`: the exponents (a, b) of x^a * log2(x)^b on the refined grid, a step of 1/24
_STEP = tuple(Fraction(k, 24) for k in range(1, 4 * 24 + 1))
REFINED_GRID: tuple[Exponents, ...] = tuple([(a, Fraction(b)) for b in (0, 1, 2) for a in _STEP]
                                            + [(Fraction(0), b) for b in _STEP if b not in (1, 2)])


def refined_specs(x: np.ndarray, options: FitOptions) -> list[ModelSpec]:
    """Search-space refinement (Reisert et al., Extra-P slides 19-22): the simplified PMNF c0 + c1 x^a log2(x)^b
    along four slices, b = 0, 1, 2 with a in (0, 4] and a = 0 with b in (0, 4], on a grid of step 1/24.

    The paper searches each slice for a unimodal error minimum; a dense grid, fitted in one batch, finds the same
    minimum without assuming unimodality. The building blocks of `options` join the grid (among them log2(x) and
    log2(x)^2, which the slices b = 0, 1, 2 start past, and 4/5, which is not a multiple of 1/24), so refinement
    never loses a model the default search finds.
    """
    blocks = REFINED_GRID + options.building_blocks  # the searched ones too: log2(x) and x^(4/5) are not on the grid
    return single_parameter_specs(x, replace(options, building_blocks=tuple(dict.fromkeys(blocks)), max_terms=1))


def off_blocks(specs: Sequence[ModelSpec], options: FitOptions) -> np.ndarray:
    """(H,) True for the hypotheses with a term off the building blocks of `options` (and their falling terms): the
    refined exponents of `refined_specs`, which `criterion` prices; all False when the search is not refined."""
    if not (options.refine and options.bonferroni):
        return np.zeros(len(specs), dtype=bool)
    blocks = set(options.building_blocks) | set(falling(options.building_blocks))
    return np.array([any((f.exponent, f.log_exponent) not in blocks for t in spec.terms for f in t.factors)
                     for spec in specs], dtype=bool)


def falling_values(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(K,) True where the values `y` (K, n) fall with `x` (n,): lower at the largest `x` than at the smallest, and
    falling in more steps from one value of `x` to the next than they rise."""
    ordered = y[:, np.argsort(x, kind="stable")]
    steps = np.sum(np.sign(np.diff(ordered, axis=1)), axis=1)
    return np.asarray((ordered[:, 0] > ordered[:, -1]) & (steps < 0))


def with_falling(options: FitOptions) -> FitOptions:
    """`options` whose building blocks also hold the falling terms x^-i * log2(x)^-j of its growing ones."""
    blocks = tuple(dict.fromkeys(options.building_blocks + falling(options.building_blocks)))
    return replace(options, building_blocks=blocks)


def select_one_parameter(x: np.ndarray, stats: PointStats, options: FitOptions) -> list[Choice]:
    """`choose_one_parameter`, one `Choice` per kernel."""
    return choose_one_parameter(x, stats, options).choices()


def choose_one_parameter(x: np.ndarray, stats: PointStats, options: FitOptions) -> Selection:
    """The main search on one parameter's values `x` (fewer than `min_distinct_values` points: the constant model),
    with falling terms as `options.negative_exponents` says.

    With "auto", a kernel searches the falling terms too when its values fall with `x` (`falling_values`) and the
    constant test has not kept it: time that shrinks as processes are added (a fixed problem on more ranks) is then
    modeled as c0 + c1 * p^(-1/2), or c0 + c1 * p^-1 + c2 * log2(p) when overhead grows, not as a constant. Growing
    kernels never search them: their space, and their cost, stay as they are; so does a kernel whose first point
    alone is high (a cold start), which segmentation shows as a segment of its own.
    """
    space = refined_specs if options.refine else single_parameter_specs
    if x.size < options.min_distinct_values:
        return choose(x[:, None], [ModelSpec()], stats, options)
    if options.negative_exponents == "always":
        options = with_falling(options)
    chosen = choose(x[:, None], space(x, options), stats, options)
    trending = _trending(x, stats, chosen, options)
    stats = replace(stats, trending=trending)
    redo = np.flatnonzero(trending)
    if redo.size:
        chosen = chosen.replaced(redo, choose(x[:, None], space(x, options), stats.subset(redo), options))
    if options.negative_exponents != "auto":
        return chosen
    kept = (chosen.n_terms == 0) & ~chosen.fallback & (stats.dof > 0)
    falls = np.flatnonzero(falling_values(x, stats.y) & ~kept)
    if falls.size:
        wider = with_falling(options)
        chosen = chosen.replaced(falls, choose(x[:, None], space(x, wider), stats.subset(falls), wider))
    return chosen


def _trending(x: np.ndarray, stats: PointStats, chosen: Selection, options: FitOptions) -> np.ndarray:
    """(K,) True for the kernels modeled as constant whose repetitions trend with `x` (Spearman,
    `core.trend`) at level `alpha * TREND_SHARE`: bursts of load can inflate the spread the F test measures until a
    constant survives values rising 40x; their ranks still show the rise."""
    trending = np.zeros(len(chosen), dtype=bool)
    constant = np.flatnonzero((chosen.n_terms == 0) & ~chosen.fallback)
    if constant.size and stats.values is not None:
        trending[constant] = trend_p_values(x, stats.values[constant]) < options.alpha * TREND_SHARE
    return trending


@dataclass(frozen=True, eq=False)
class Choice:
    """The hypothesis chosen for one kernel, with its fit."""

    spec: ModelSpec
    coef: np.ndarray  # (1 + n_terms,)
    fitted: np.ndarray  # (n,)
    loo: np.ndarray  # (n,)
    fallback: bool = False  # no eligible non-constant model though the data are not constant (e.g. decreasing)


@dataclass(frozen=True, eq=False)
class Selection:
    """The hypotheses chosen for K kernels, with their fits, as arrays: a search keeps only each kernel's winner."""

    specs: tuple[ModelSpec, ...]  # the hypotheses that `index` points into
    index: np.ndarray  # (K,) int: the chosen hypothesis of each kernel
    coef: np.ndarray  # (K, w): coefficients, constant first; zero past the chosen hypothesis's 1 + n_terms
    fitted: np.ndarray  # (K, n) in-sample model values
    loo: np.ndarray  # (K, n) leave-one-out predictions
    fallback: np.ndarray  # (K,) bool, as `Choice.fallback`

    def __len__(self) -> int:
        return int(self.index.size)

    @property
    def n_terms(self) -> np.ndarray:
        """(K,) number of terms of each kernel's hypothesis."""
        return np.asarray(np.array([spec.n_terms for spec in self.specs], dtype=int)[self.index])

    def chosen(self) -> list[ModelSpec]:
        """Each kernel's hypothesis."""
        return [self.specs[h] for h in self.index.tolist()]

    def choice(self, kernel: int) -> Choice:
        spec = self.specs[int(self.index[kernel])]
        return Choice(spec, self.coef[kernel, : 1 + spec.n_terms], self.fitted[kernel], self.loo[kernel],
                      bool(self.fallback[kernel]))

    def choices(self) -> list[Choice]:
        return [self.choice(k) for k in range(len(self))]

    def replaced(self, kernels: np.ndarray, other: Selection) -> Selection:
        """This selection with the kernels `kernels` (K',) chosen as in `other` (a selection of those K' kernels)."""
        width = max(self.coef.shape[1], other.coef.shape[1])
        coef = np.zeros((len(self), width))
        coef[:, : self.coef.shape[1]] = self.coef
        coef[kernels] = 0.0
        coef[kernels, : other.coef.shape[1]] = other.coef
        index, fitted, loo, fallback = self.index.copy(), self.fitted.copy(), self.loo.copy(), self.fallback.copy()
        index[kernels] = len(self.specs) + other.index
        fitted[kernels], loo[kernels], fallback[kernels] = other.fitted, other.loo, other.fallback
        return Selection(self.specs + other.specs, index, coef, fitted, loo, fallback)


@dataclass(frozen=True, eq=False)
class Scored:
    """Scores of H hypotheses (of one size) for K kernels, with their fits."""

    loo: np.ndarray  # (H, K) leave-one-out weighted squared error; inf where the hypothesis is not eligible
    wrss: np.ndarray  # (H, K) in-sample weighted residual sum of squares; inf where not eligible
    batch: BatchFit


def score(X: np.ndarray, lead: np.ndarray, stats: PointStats, options: FitOptions,
          exists: np.ndarray | None = None) -> Scored:
    """Fit and score hypotheses of one size.

    Parameters
    ----------
    X : ndarray, shape (H, n, k) or (H, K, n, k)
        Design matrices (column 0 the constant).
    lead : ndarray of bool, shape (H, k)
        The lead columns of each hypothesis (see `ModelSpec.lead_columns`).
    exists : ndarray of bool, shape (H, K), optional
        False where a hypothesis does not apply to a kernel (multi-parameter slots).
    """
    batch = fit_batch(X, stats.y, stats.weights)
    eligible = batch.valid & _eligible(X, lead, batch, options, smallest_term(stats, options))
    if exists is not None:
        eligible &= exists
    w, y = stats.weights, stats.y
    if point_major(batch.fitted):  # a shared design on a few points (`fit.POINT_BY_POINT`): (H, K) per point
        points = range(y.shape[1])
        resid = _column_sum([w[:, i] * (y[:, i] - batch.fitted[:, :, i]) ** 2 for i in points])
        press = _column_sum([w[:, i] * (y[:, i] - batch.loo[:, :, i]) ** 2 for i in points])
    else:
        resid = _row_sum(w[None] * (y[None] - batch.fitted) ** 2)
        press = _row_sum(w[None] * (y[None] - batch.loo) ** 2)
    return Scored(np.where(eligible, press, np.inf), np.where(eligible, resid, np.inf), batch)


def decide(loo: np.ndarray, wrss: np.ndarray, sizes: np.ndarray, stats: PointStats, options: FitOptions,
           scored: tuple[np.ndarray, np.ndarray] | None = None,
           refined: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The noise-aware choice (module docstring) among H hypotheses for each of K kernels.

    Parameters
    ----------
    loo, wrss : ndarray, shape (H, K)
        Scores from `score`; row 0 must be the constant model.
    sizes : ndarray, shape (H,)
        Number of terms of each hypothesis.

    Returns
    -------
    best : ndarray of int, shape (K,)
        Row of the chosen hypothesis per kernel.
    fallback : ndarray of bool, shape (K,)
        Kernels modeled as constant although the constant test rejected it (no eligible model with terms).

    `scored`, when given, is `criterion(loo, wrss, sizes, stats, options, refined)` computed already; `refined`
    marks the refined hypotheses (`off_blocks`).
    """
    n = stats.y.shape[1]
    total, sigma2 = criterion(loo, wrss, sizes, stats, options, refined) if scored is None else scored
    total = total.copy()
    trending = np.zeros(stats.dof.shape, dtype=bool) if stats.trending is None else stats.trending
    keeps_constant = constant_test(wrss[0], sigma2, stats.dof, n, options.alpha) & ~trending
    has_term_model = np.isfinite(total[1:]).any(axis=0)
    rejected = ((stats.dof > 0) | trending) & ~keeps_constant & has_term_model
    total[0] = np.where(rejected, np.inf, total[0])
    total[0] = np.where(keeps_constant, -np.inf, total[0])
    best = np.argmin(total, axis=0)
    fallback = (best == 0) & ~keeps_constant & ~has_term_model & (wrss[0] > options.noise_floor**2 * n)
    return best, fallback


def residual_basis(wrss: np.ndarray, sizes: np.ndarray, n: int) -> np.ndarray:
    """(H, K) the in-sample errors that stand in for the pure error without repetitions, scaled to n - 2 degrees of
    freedom (inf for the hypotheses not used): those of the largest models that leave at least `RESIDUAL_DOF`
    degrees of freedom, else those of the one-term models.

    The best one-term model's residual counts every further real term as noise: on 125 noise-free points of
    200 + 10 x^(1/3) + 20 y^(1/4) log2(y) + 30 z^(1/3) log2(z), it makes the x term, 2% of the value, look like noise,
    and the model drops it. With many points the largest model's residual estimates the noise without that bias
    (as the full model does in Mallows's C_p), and picking the smallest of many such residuals costs little when
    each has that many degrees of freedom. With few points, where that pick would find noise in almost any term,
    the one-term models stay the basis.
    """
    size = residual_size(sizes, n)
    scale = max(1, n - 2) / max(1, n - 1 - size)
    return np.where(sizes[:, None] == size, wrss * scale, np.inf)


def residual_size(sizes: np.ndarray, n: int) -> int:
    """The number of terms of the hypotheses whose in-sample errors stand in for the pure error (`residual_basis`)."""
    rich = [size for size in distinct(sizes).tolist() if size >= 1 and n - 1 - size >= RESIDUAL_DOF]
    return int(max(rich, default=1))


def criterion(loo: np.ndarray, wrss: np.ndarray, sizes: np.ndarray, stats: PointStats,
              options: FitOptions, refined: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The selection criterion (H, K): leave-one-out error in units of the noise plus `lambda` for the first term
    and the `1 - alpha / len(building_blocks)` quantile for each further one; and the noise variance (K,) it is
    measured in. Inputs as for `decide`.

    `refined` ((H,) or (H, K), from `off_blocks`) marks the hypotheses whose exponent was picked among the refined
    grid: they pay the `1 - alpha / len(REFINED_GRID)` quantile besides. Picked by their errors alone, one of some
    400 exponents fits the noise better than the true term does: on 1% noise log2(x)^(47/24) beat log2(x)^2 and
    x^(3/8) beat x^(1/4) * log2(x); on one noisy value per point, log2(p)^(1/24) with a constant of -3161 beat a
    barrier's log2(p). Priced like a further term, an exponent off the building blocks wins only where it explains
    the data better than the blocks' best by more than the noise can.
    """
    n = stats.y.shape[1]
    sigma2, penalty = noise_and_penalty(stats, residual_basis(wrss, sizes, n), n, options)
    # Each further term is picked among all building blocks: Bonferroni over them keeps noise from buying one.
    level = options.alpha / max(1, len(options.building_blocks)) if options.bonferroni else options.alpha
    further = _noise_quantile(stats.dof, level)
    total = (loo / sigma2[None] + penalty[None] * np.minimum(sizes, 1)[:, None]
             + further[None] * np.maximum(sizes - 1, 0)[:, None])
    if refined is not None and np.any(refined):
        price = _noise_quantile(stats.dof, options.alpha / len(REFINED_GRID))
        total += np.where(refined if refined.ndim == 2 else refined[:, None], price[None], 0.0)
    return total, sigma2


def design(specs: list[ModelSpec], points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Design matrices (H, n, k) and lead masks (H, k) of specs that all have k - 1 terms; each distinct term is
    evaluated once (`ModelSpec.basis`'s values: the hypotheses of a search share a few dozen terms)."""
    k = 1 + (specs[0].n_terms if specs else 0)
    X = np.empty((len(specs), points.shape[0], k))
    X[:, :, 0] = 1.0
    values: dict[Term, np.ndarray] = {}
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # as ModelSpec.basis: inf or NaN, quietly
        for h, spec in enumerate(specs):
            for c, term in enumerate(spec.terms, start=1):
                found = values.get(term)
                X[h, :, c] = found if found is not None else values.setdefault(term, term.evaluate(points))
    lead = np.zeros((len(specs), X.shape[2]), dtype=bool)
    for h, spec in enumerate(specs):
        lead[h, list(spec.lead_columns)] = True
    return X, lead


def select(points: np.ndarray, specs: list[ModelSpec], stats: PointStats, options: FitOptions) -> list[Choice]:
    """`choose`, one `Choice` per kernel."""
    return choose(points, specs, stats, options).choices()


def kernels_per_batch(n: int, sizes: Sequence[int], counts: Sequence[int]) -> int:
    """How many kernels `choose` fits and scores at once: its work arrays, about `(2 k + 8) n` values per hypothesis
    of k coefficients and kernel (fits, leave-one-out predictions, weighted residuals, the eligibility test's term
    shares), stay within `WORK_BYTES` whatever the number of kernels. `counts[i]` hypotheses have `sizes[i]` terms,
    on `n` points."""
    per_kernel = 8 * n * sum(count * (2 * (1 + size) + 8) for size, count in zip(sizes, counts))
    return max(1, WORK_BYTES // max(1, per_kernel))


def choose(points: np.ndarray, specs: list[ModelSpec], stats: PointStats, options: FitOptions) -> Selection:
    """Fit every spec to every kernel and choose one per kernel by the noise-aware rule (module docstring).

    Parameters
    ----------
    points : ndarray, shape (n, m)
    specs : hypotheses; specs[0] must be the constant model ModelSpec()
    stats : PointStats of K kernels on `points`

    Notes
    -----
    Kernels are searched in batches of `kernels_per_batch`, and of each batch only the winners' fits are kept:
    memory is O(K n) plus a fixed `WORK_BYTES`, never O(K H n) for H hypotheses. Each kernel's choice depends on
    its own data only, so the batches change no result. When even one kernel's work exceeds `WORK_BYTES` (tens of
    thousands of points), its hypotheses are scored in groups that fit it, and the winners fitted again
    (`_choose_in_groups`). Cost O(K H n k^2).
    """
    if specs[0] != ModelSpec():
        raise ValueError("specs[0] must be the constant model")
    by_size: dict[int, list[int]] = {}
    for h, spec in enumerate(specs):
        by_size.setdefault(spec.n_terms, []).append(h)
    if kernels_per_batch(points.shape[0], list(by_size), [len(m) for m in by_size.values()]) == 1:
        per_kernel = 8 * points.shape[0] * sum(len(m) * (2 * (1 + s) + 8) for s, m in by_size.items())
        if per_kernel > WORK_BYTES:
            return _choose_in_groups(points, specs, by_size, stats, options)
    designs = {size: (members, *design([specs[h] for h in members], points)) for size, members in by_size.items()}
    sizes = np.array([spec.n_terms for spec in specs])
    local = np.empty(len(specs), dtype=int)  # position of each hypothesis among those of its size
    for members in by_size.values():
        local[members] = np.arange(len(members))
    K, n = stats.y.shape
    refined = off_blocks(specs, options) if points.shape[1] == 1 else None
    chosen = Selection(tuple(specs), np.zeros(K, dtype=int), np.zeros((K, 1 + int(sizes.max()))),
                       np.empty((K, n)), np.empty((K, n)), np.zeros(K, dtype=bool))
    step = kernels_per_batch(n, list(by_size), [len(m) for m in by_size.values()])
    for start in range(0, K, step):
        rows = slice(start, min(K, start + step))
        part = stats.rows(rows)
        loo = np.full((len(specs), part.y.shape[0]), np.inf)
        wrss = np.full_like(loo, np.inf)
        batches = {}
        for size, (members, X, lead) in designs.items():
            scored = score(X, lead, part, options)
            loo[members], wrss[members] = scored.loo, scored.wrss
            batches[size] = scored.batch
        best, fallback = decide(loo, wrss, sizes, part, options, refined=refined)
        chosen.index[rows], chosen.fallback[rows] = best, fallback
        for size, batch in batches.items():
            kernels = np.flatnonzero(sizes[best] == size)
            h = local[best[kernels]]
            chosen.coef[start + kernels, : 1 + size] = batch.coef[h, kernels]
            chosen.fitted[start + kernels] = batch.fitted[h, kernels]
            chosen.loo[start + kernels] = batch.loo[h, kernels]
    return chosen


def _choose_in_groups(points: np.ndarray, specs: list[ModelSpec], by_size: dict[int, list[int]], stats: PointStats,
                      options: FitOptions) -> Selection:
    """`choose` one kernel at a time, its hypotheses scored in groups whose work arrays (designs included) stay
    within `WORK_BYTES`; only the scores (H,) are kept, then each kernel's winner is fitted again."""
    n = points.shape[0]
    sizes = np.array([spec.n_terms for spec in specs])
    K = stats.y.shape[0]
    refined = off_blocks(specs, options) if points.shape[1] == 1 else None
    chosen = Selection(tuple(specs), np.zeros(K, dtype=int), np.zeros((K, 1 + int(sizes.max()))),
                       np.empty((K, n)), np.empty((K, n)), np.zeros(K, dtype=bool))
    for kernel in range(K):
        part = stats.rows(slice(kernel, kernel + 1))
        loo = np.full((len(specs), 1), np.inf)
        wrss = np.full_like(loo, np.inf)
        for size, members in by_size.items():
            group = max(1, WORK_BYTES // (8 * n * (3 * (1 + size) + 8)))  # the design, the fit and the scores
            for start in range(0, len(members), group):
                rows = members[start : start + group]
                scored = score(*design([specs[h] for h in rows], points), part, options)
                loo[rows], wrss[rows] = scored.loo, scored.wrss
        best, fallback = decide(loo, wrss, sizes, part, options, refined=refined)
        h = int(best[0])
        winner = score(*design([specs[h]], points), part, options).batch
        chosen.index[kernel], chosen.fallback[kernel] = h, bool(fallback[0])
        chosen.coef[kernel, : 1 + specs[h].n_terms] = winner.coef[0, 0]
        chosen.fitted[kernel], chosen.loo[kernel] = winner.fitted[0, 0], winner.loo[0, 0]
    return chosen


def smallest_term(stats: PointStats, options: FitOptions) -> np.ndarray:
    """(K,) the share of the model value a term must reach at some measured point: three standard errors of a
    point's aggregate (the kernel's pure error over its mean repetitions; the noise floor without repetitions),
    between the noise floor and `min_term_contribution`.

    A fixed share would drop small real terms of precise data (5e5 + 1000 * log2(p) on noise-free values, 1% of
    the value at most) and keep terms that noisy data cannot support; tied to the noise, a term must stand out of
    what the repetitions show. With 2% noise and 5 repetitions the bound is `min_term_contribution` (1%), as it was.
    """
    floor = options.noise_floor**2
    sigma2 = np.where((stats.dof > 0) & np.isfinite(stats.sigma2), stats.sigma2, floor)
    reps = np.maximum(np.mean(stats.reps, axis=1), 1.0)
    return np.asarray(np.clip(3 * np.sqrt(np.maximum(sigma2, floor) / reps), options.noise_floor,
                              options.min_term_contribution))


# `_eligible` takes the points one by one (a loop over them) up to this many, along the last axis beyond
_POINT_BY_POINT = 16


def _eligible(X: np.ndarray, lead: np.ndarray, batch: BatchFit, options: FitOptions,
              smallest: np.ndarray) -> np.ndarray:
    """(H, K) mask: term coefficients positive (unless decreasing models are allowed, then only the other terms
    than the lead ones) and every term reaching the share `smallest` (K,) of the value at some point.

    A negative term under a positive one of higher order makes a difference of two growing functions, which over a
    few measured points can imitate any growth: n^2 data fitted as n^(7/4) - n^(3/2) * log2(n)^2 (a lower class), or
    flat data as n^(5/2) - n^(9/4) (a higher one). Without decreasing models no term may fall, so every term adds
    cost, the model cannot grow slower than its lead term, and its class is the one the data show.
    """
    coef, fitted = batch.coef, batch.fitted
    H, K, k = coef.shape
    ok = np.ones((H, K), dtype=bool)
    if k == 1:
        return ok
    if not options.allow_decreasing:
        ok &= ~np.any(coef[..., 1:] <= 0, axis=2)
    if X.ndim == 3:
        X = X[:, None]
    if fitted.shape[2] > _POINT_BY_POINT or not np.all(smallest > 0):  # (a share that is not finite counts as 0)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            share = np.abs(X[..., 1:] * coef[:, :, None, 1:]) / np.abs(fitted)[..., None]  # (H, K, n, k-1)
        share = np.where(np.isfinite(share), share, 0.0)
        return np.asarray(ok & np.all(share.max(axis=2) >= smallest[None, :, None], axis=2))
    # The share of term c at point i, |X_ic coef_c| / |fitted_i|, point by point over (H, K) at once: on a few points
    # a maximum along the short last axis costs more than the arithmetic. A share that is not finite (a zero or a
    # term beyond the floats) does not reach `smallest`.
    absolute = np.abs(fitted)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a term beyond floats: not valid anyway
        for c in range(1, k):
            reached = np.zeros((H, K), dtype=bool)
            for i in range(fitted.shape[2]):
                share = np.abs(X[:, :, i, c] * coef[:, :, c]) / absolute[:, :, i]
                reached |= (share >= smallest) & (share != np.inf)
            ok &= reached
    return ok


def noise_and_penalty(stats: PointStats, wrss_one_term: np.ndarray, n: int,
                      options: FitOptions) -> tuple[np.ndarray, np.ndarray]:
    """Effective noise variance (K,) and per-term penalty (K,) in units of that variance.

    Without repetitions, the residual variance of the best one-term model (rows of `wrss_one_term`, inf elsewhere)
    stands in for the pure error.
    """
    floor = options.noise_floor**2
    residual = np.min(wrss_one_term, axis=0, initial=np.inf) / max(1, n - 2)
    residual = np.where(np.isfinite(residual), residual, floor)
    sigma2 = np.where(stats.dof > 0, stats.sigma2, residual)
    sigma2 = np.maximum(np.nan_to_num(sigma2, nan=floor), floor)
    # F(1, dof) quantile from the inverse regularized incomplete beta; chi^2(1) quantile without repetitions.
    penalty = _noise_quantile(stats.dof, options.alpha)
    return sigma2, penalty


def _noise_quantile(dof: np.ndarray, level: float) -> np.ndarray:
    """(K,) the `1 - level` quantile a gain in units of the noise must pass: F(1, dof) where the repetitions give
    `dof` degrees of freedom, chi^2(1) where they give none."""
    from scalecheck.core import special

    return np.asarray(np.where(dof > 0, _f_quantile(dof, 1 - level), special.chdtri(1.0, level)))


def _f_quantile(dof: np.ndarray, level: float) -> np.ndarray:
    """The `level` quantile of F(1, dof) for each kernel's degrees of freedom (at least 1), computed once per
    distinct value: the kernels of a search or a bootstrap share a few, and each quantile inverts a beta function."""
    from scalecheck.core import special

    distinct, where = np.unique(np.maximum(dof, 1).astype(float), return_inverse=True)
    return np.asarray(special.fdtri(1.0, distinct, level))[where.reshape(np.shape(dof))]


def constant_test(wrss_constant: np.ndarray, sigma2: np.ndarray, dof: np.ndarray, n: int,
                   alpha: float) -> np.ndarray:
    """(K,) True where the constant model survives a lack-of-fit F test against the pure error."""
    from scalecheck.core import special

    if n < 2:
        return np.ones_like(dof, dtype=bool)
    statistic = wrss_constant / (n - 1) / sigma2
    p_value = special.fdtrc(float(n - 1), np.maximum(dof, 1).astype(float), statistic)
    return np.asarray((dof > 0) & (p_value >= alpha))
