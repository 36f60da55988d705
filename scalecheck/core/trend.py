"""Whether a kernel's values trend with a parameter: Spearman's rank correlation between every repetition and the
position of its point, tested two-sided.

The lack-of-fit F test of the constant model measures the trend in units of the repetitions' spread. On a loaded
runner a few repetitions stall 3-30x; with 3 repetitions per point they cannot be told from the others, inflate the
spread, and the F test keeps a constant for values whose medians rise 48x (165 of 400 such kernels in a seeded
simulation with a quarter of the repetitions stalled 3-30x; 71 of 400 with 5 repetitions, see
`tests/core/test_trend.py`). Ranks do not see how far a stalled repetition lies, only on which side: at a tenth of
the search's level (`search.TREND_SHARE`) the test leaves 105 of them constant with 3 repetitions and 8 with 5,
while flat values with the same bursts show a trend at about the nominal rate.

    >>> import numpy as np
    >>> values = np.array([[[1.0, 1.1, 9.0], [2.1, 1.9, 2.0], [4.2, 30.0, 3.9], [8.0, 8.3, 7.7], [16.0, 15.0, 90.0]]])
    >>> bool(trend_p_values(np.array([1.0, 2, 4, 8, 16]), values)[0] < 0.05)
    True
"""

from __future__ import annotations

import numpy as np

MIN_VALUES = 10  # fewest values tested: below, the t approximation of Spearman's statistic is not conservative


def trend_p_values(x: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(K,) two-sided p-values of Spearman's rank correlation between values and parameter values.

    Parameters
    ----------
    x : ndarray, shape (n,)
        Distinct parameter values, in any order.
    values : ndarray, shape (K, n, r)
        Repetitions per kernel and point, NaN-padded.

    Returns
    -------
    ndarray, shape (K,)
        The p-value of the t approximation (scipy.stats.spearmanr's), with tied values at their mean rank; 1 where
        a kernel has fewer than `MIN_VALUES` values or its values are all equal.

    Notes
    -----
    Cost O(K n r log(n r)).
    """
    from scalecheck.core import special

    K, n, r = values.shape
    order = np.argsort(x, kind="stable")
    flat = values[:, order, :].reshape(K, n * r)
    valid = ~np.isnan(flat)
    count = valid.sum(axis=1)
    value_rank = _mid_ranks(np.where(valid, flat, np.inf))  # missing values rank last, and are masked out below
    per_point = valid.reshape(K, n, r).sum(axis=2)  # the point's position: the mean rank of its values among all
    position = np.cumsum(per_point, axis=1) - (per_point - 1) / 2.0
    point_rank = np.repeat(position, r, axis=1)
    rho = _masked_correlation(point_rank, value_rank, valid, count)
    df = np.maximum(count - 2, 1).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = rho * np.sqrt(df / np.maximum(1.0 - rho**2, 0.0))
    p = 2.0 * special.stdtr(df, -np.abs(np.nan_to_num(t, nan=0.0, posinf=np.inf)))
    return np.where((count >= MIN_VALUES) & np.isfinite(rho), np.minimum(p, 1.0), 1.0)


def _mid_ranks(a: np.ndarray) -> np.ndarray:
    """Ranks (1-based) along the last axis of a (K, m) array, tied values sharing their mean rank."""
    K, m = a.shape
    order = np.argsort(a, axis=1, kind="stable")
    ordered = np.take_along_axis(a, order, axis=1)
    index = np.broadcast_to(np.arange(m), (K, m))
    starts = np.ones((K, m), dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    ends = np.ones((K, m), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    first = np.maximum.accumulate(np.where(starts, index, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, index, m - 1)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty((K, m))
    np.put_along_axis(ranks, order, (first + last) / 2.0 + 1.0, axis=1)
    return ranks


def _masked_correlation(a: np.ndarray, b: np.ndarray, valid: np.ndarray, count: np.ndarray) -> np.ndarray:
    """(K,) Pearson correlation of a and b over the valid entries of each row (NaN where either is constant)."""
    size = np.maximum(count, 1)[:, None]
    da = np.where(valid, a - np.where(valid, a, 0.0).sum(axis=1, keepdims=True) / size, 0.0)
    db = np.where(valid, b - np.where(valid, b, 0.0).sum(axis=1, keepdims=True) / size, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray((da * db).sum(axis=1) / np.sqrt((da**2).sum(axis=1) * (db**2).sum(axis=1)))
