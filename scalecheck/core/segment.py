"""Segmented behaviour: find where a kernel's trend changes, before it is modeled (Ilyas et al., "Segmented
performance data", seed `segmented-performance-data.txt`).

Detection, as published:

1. Slide a window of `window` (5) consecutive points over the distinct parameter values (aggregated repetitions)
   and model each window with the main search. Window error: nRSS = sqrt(RSS) / mean(y).
2. Segmented if the largest nRSS exceeds `theta` (0.5), or if a relative nRSS e[k+1] / (e[k] + eta) exceeds
   `ratio` (4) where e[k+1] lies in the band [`low`, `theta`] (0.1..0.5). Without the band (as Extra-P does)
   tiny errors of perfect fits give huge ratios, and unsegmented series are flagged.

Change point: windows with nRSS above `low` are tagged heterogeneous (1). A clean run of 3 ones puts the change at
the shared point (the 3rd point of the run's second window); a clean run of 4 ones between that window's 3rd and
4th points. Noise and the borders of the data break that pattern (a run cut by the first or last window, a gap in a
run, a one-point segment at the top of a geometric grid whose window error is hidden by larger values), so the
pattern gives candidates rather than the answer:

- a clean run proposes its change point and the two neighbouring ones (a window lost to noise turns 4 ones into 3);
- each untouched end of another run proposes the shared point and the gap it implies;
- no untouched end: every split leaving at least two points on each side.

Every candidate splits the points into two segments, each fitted with the main search (one term); the candidate
with the least summed (relative, weighted) error wins. The clean run's own answer is kept unless another candidate
beats it by more than the 90% quantile of the noise cost of one more residual (a shared point costs that much
more than a gap beside it even when it is right), so the published rule decides whenever the data do not
contradict it. With several clean runs (several change points), each run decides its own answer and the best of
those splits first; the recursion finds the others.

Better than the paper, measured by `benchmarks/segmentation.py`:

- Window RSS is the ordinary least-squares RSS of the window's chosen model, as in the paper, and each window is
  weighed on its own (`PointStats.subset`), so values far below the series' largest still count.
- A detection is kept only if two segments fit significantly better than one model (`confirmed`): noise alone
  sometimes makes one window error four times its neighbour's, or lifts a window above theta on small counts.

More change points: each segment of at least `min_points` points is searched again (recursion).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from scalecheck.core.fit import fit_batch
from scalecheck.core.options import SegmentOptions as SegmentOptions  # re-exported: detection's options
from scalecheck.core.search import Choice, FitOptions, PointStats, select_one_parameter
from scalecheck.data.spec import ModelSpec

# A clean run keeps its answer unless a neighbouring candidate is better by more than this many noise variances:
# the 90% quantile of chi^2(1), the cost of one more residual (a right shared point costs that more than a gap).
SHARED_MARGIN = 2.706

Boundary = tuple[int, int]  # (last point of one segment, first point of the next), sorted indices; equal = shared


def segment_kernels(x: np.ndarray, stats: PointStats, options: FitOptions,
                    seg: SegmentOptions = SegmentOptions()) -> list[tuple[Boundary, ...]]:
    """Change points of K kernels measured at the same sorted, distinct values `x` of one parameter.

    Parameters
    ----------
    x : ndarray, shape (n,)
        Parameter values, strictly increasing.
    stats : PointStats
        Aggregates and weights of K kernels at `x`.

    Returns
    -------
    list of tuple of Boundary, length K
        Per kernel, the boundaries between consecutive segments in increasing order; empty when not segmented.

    Notes
    -----
    Cost: per level of recursion, n - window + 1 window searches and up to 2n segment searches, each batched over
    all kernels that reach it.
    """
    K = stats.y.shape[0]
    found: list[list[Boundary]] = [[] for _ in range(K)]
    work = [(0, x.size - 1, np.arange(K))]  # (first, last) point range and the kernels to search in it
    while work:
        first, last, kernels = work.pop()
        if last - first + 1 < seg.min_points or kernels.size == 0:
            continue
        span = slice(first, last + 1)
        part = stats.subset(kernels, span)
        nrss, variance = _windows(x[span], part, options, seg)
        hit = np.flatnonzero(is_segmented(nrss, seg))
        if hit.size == 0:
            continue
        flagged = part.subset(hit, slice(None))
        boundaries, split_error, split_coefs = change_points(x[span], flagged, nrss[hit] > seg.low, options, seg)
        if seg.confirm:
            keep = confirmed(x[span], flagged, boundaries, split_error, split_coefs, options,
                             np.median(variance[hit], axis=1))
            hit, boundaries = hit[keep], [b for b, k in zip(boundaries, keep) if k]
        by_boundary: dict[Boundary, list[int]] = {}
        for kernel, (end, start) in zip(kernels[hit], boundaries):
            found[kernel].append((first + end, first + start))
            by_boundary.setdefault((first + end, first + start), []).append(int(kernel))
        for (end, start), members in by_boundary.items():
            work += [(first, end, np.array(members)), (start, last, np.array(members))]
    return [tuple(sorted(b)) for b in found]


def window_errors(x: np.ndarray, stats: PointStats, options: FitOptions,
                  seg: SegmentOptions = SegmentOptions()) -> np.ndarray:
    """nRSS = sqrt(RSS) / mean(y) of each window's model: shape (K, n - window + 1).

    The main search chooses each window's model; RSS is that model's ordinary least-squares residual sum of squares,
    as in the paper, whose thresholds were calibrated on it. (The main search weighs relative errors; its own
    coefficients leave the largest value of a steep window a larger absolute residual, and on a geometric grid that
    one value's noise alone would push nRSS into the band.)
    """
    return _windows(x, stats, options, seg)[0]


def _windows(x: np.ndarray, stats: PointStats, options: FitOptions,
             seg: SegmentOptions) -> tuple[np.ndarray, np.ndarray]:
    """nRSS (K, W) of each window, and the relative residual variance (K, W) of its main-search model."""
    n_windows = x.size - seg.window + 1
    nrss = np.zeros((stats.y.shape[0], n_windows))
    variance = np.zeros_like(nrss)
    for w in range(n_windows):
        span = slice(w, w + seg.window)
        part = stats.subset(slice(None), span)
        choices = fit_range(x[span], part, options)
        rss = _refit_rss(x[span], part.y, [c.spec for c in choices], np.ones_like(part.y))
        mean = np.mean(part.y, axis=1)
        nrss[:, w] = np.where(mean > 0, np.sqrt(rss) / np.where(mean > 0, mean, 1.0), 0.0)
        wrss = np.sum(part.weights * (part.y - np.stack([c.fitted for c in choices])) ** 2, axis=1)
        variance[:, w] = wrss / np.maximum(1, seg.window - np.array([c.spec.n_terms + 1 for c in choices]))
    return nrss, variance


def _refit_rss(x: np.ndarray, y: np.ndarray, specs: list[ModelSpec], weights: np.ndarray) -> np.ndarray:
    """(K,) weighted residual sum of squares of the least-squares fit of specs[k] to y[k] (K, n) with weights[k]
    (K, n), batched by size."""
    rss = np.zeros(y.shape[0])
    by_size: dict[int, list[int]] = {}
    for k, spec in enumerate(specs):
        by_size.setdefault(spec.n_terms, []).append(k)
    bases = {spec: spec.basis(x[:, None]) for spec in set(specs)}
    for members in by_size.values():
        X = np.stack([bases[specs[k]] for k in members])[None]  # (1, K', n, k)
        fitted = fit_batch(X, y[members], weights[members]).fitted[0]
        rss[members] = np.sum(weights[members] * (y[members] - fitted) ** 2, axis=1)
    return rss


def is_segmented(nrss: np.ndarray, seg: SegmentOptions = SegmentOptions()) -> np.ndarray:
    """The paper's decision per kernel from window errors `nrss` (K, W): max > theta, or a ratio > `ratio` in band."""
    relative = nrss[:, 1:] / (nrss[:, :-1] + seg.eta)
    in_band = (nrss[:, 1:] >= seg.low) & (nrss[:, 1:] <= seg.theta)
    return np.asarray((nrss.max(axis=1) > seg.theta) | np.any(in_band & (relative > seg.ratio), axis=1))


def candidates(pattern: np.ndarray, n: int, window: int = 5) -> tuple[list[Boundary], list[Boundary]]:
    """Candidate boundaries from one kernel's window tags (W,), and the published rule's answers (one per clean run).

    Window w covers points w .. w + window - 1. A change at a shared point s makes windows s - window + 2 .. s - 1
    heterogeneous (window - 2 ones); a change between points g and g + 1 makes windows g - window + 2 .. g
    heterogeneous (window - 1 ones). A clean run proposes its answer and the two answers one window more or less
    would give; when some run is clean, only clean runs propose.
    """
    W = pattern.size
    lead = window - 2  # a run starting at window a implies shared point a + lead or the gap (a + lead, a + lead + 1)
    clean: list[Boundary] = []
    preferred: list[Boundary] = []
    loose: list[Boundary] = []
    for a, b in _runs(pattern):
        s = a + lead
        if a > 0 and b < W - 1 and b - a + 1 == window - 2:
            preferred.append((s, s))
            clean += [(s - 1, s), (s, s), (s, s + 1)]
        elif a > 0 and b < W - 1 and b - a + 1 == window - 1:
            preferred.append((s, s + 1))
            clean += [(s, s), (s, s + 1), (s + 1, s + 1)]
        else:
            if a > 0:
                loose += [(s, s), (s, s + 1)]
            if b < W - 1:
                loose += [(b + 1, b + 1), (b, b + 1)]
    found = clean or loose or [(g, g + 1) for g in range(1, n - 2)]
    valid = sorted({c for c in found if 0 <= c[0] and c[1] <= n - 1 and (c[0] > 0 or c[1] > 0)
                    and (c[0] < n - 1 or c[1] < n - 1)})
    return valid, preferred


def change_points(x: np.ndarray, stats: PointStats, pattern: np.ndarray, options: FitOptions,
                  seg: SegmentOptions = SegmentOptions()) -> tuple[list[Boundary], np.ndarray, np.ndarray]:
    """One boundary per kernel of segmented kernels at `x`, given their window tags `pattern` (K, W).

    Returns the boundaries (K,), and the summed weighted squared error (K,) and number of coefficients (K,) of the
    two segment models each boundary makes.

    Candidates come from `candidates`; each is scored by the summed weighted squared error of the two segments it
    makes, each fitted by the main search with one term (the segments of a candidate split are short, and one term
    is what the windows use too). Each prefix 0..e and suffix s..n-1 is fitted once, for every kernel that has a
    candidate using it.
    """
    n, K = x.size, stats.y.shape[0]
    found = [candidates(pattern[k], n, seg.window) for k in range(K)]
    one_term = replace(options, max_terms=1)
    # [side, measure, kernel, index]: side 0 the segment 0..index, side 1 the segment index..n-1; measure 0 the
    # error, 1 the number of coefficients (filled where a candidate of the kernel needs it)
    table = np.full((2, 2, K, n), np.inf)
    for side in (0, 1):
        needs: dict[int, list[int]] = {}
        for k, (cands, _) in enumerate(found):
            for index in {c[side] for c in cands}:
                needs.setdefault(index, []).append(k)
        for index, members in needs.items():
            span = slice(0, index + 1) if side == 0 else slice(index, n)
            table[side, :, members, index] = np.stack(_error(x[span], stats.subset(np.array(members), span),
                                                             one_term), axis=1)
    out = []
    for k, (cands, preferred) in enumerate(found):
        ends, starts = np.array(cands).T
        errors = dict(zip(cands, table[0, 0, k, ends] + table[1, 0, k, starts]))
        best = min(cands, key=errors.__getitem__)
        if preferred:
            sigma2 = _noise(stats, k, errors[best], n, options)
            decided = []
            for answer in preferred:  # each clean run keeps its answer unless a neighbour is clearly better
                rivals = [c for c in cands if abs(c[0] - answer[0]) <= 1 and abs(c[1] - answer[1]) <= 1]
                rival = min(rivals, key=errors.__getitem__)
                decided.append(answer if errors[answer] <= errors[rival] + SHARED_MARGIN * sigma2 else rival)
            best = min(decided, key=errors.__getitem__)
        out.append(best)
    rows = np.arange(K)
    ends, starts = np.array([b[0] for b in out]), np.array([b[1] for b in out])
    return (out, table[0, 0, rows, ends] + table[1, 0, rows, starts],
            (table[0, 1, rows, ends] + table[1, 1, rows, starts]).astype(int))


def confirmed(x: np.ndarray, stats: PointStats, boundaries: list[Boundary], split_error: np.ndarray,
              split_coefs: np.ndarray, options: FitOptions, window_noise: np.ndarray | None = None) -> np.ndarray:
    """(K,) True where two segments fit significantly better than the main search's single model, at level alpha.

    The single model is chosen without the Bonferroni penalty on further terms: two segments are a flexible
    alternative, so the one model may use a second term whenever it pays for itself at level alpha.

    The published rules react to noise now and then: one window error four times its neighbour's, or noise of more
    than half the mean on small counts. This test asks whether the improvement from one model to two segments
    (with the change point as one more parameter) exceeds what the noise explains: a chi^2 test against the pure
    error of the repetitions, or without repetitions an F test against the residual error of the segments, or the
    median residual variance of the windows (K,) `window_noise` where smaller: with a second change point the
    segments still hold two behaviours, while most windows hold one. Both
    models are fitted and scored with the same weights, each segment's points weighed among themselves
    (`PointStats.subset`), so values far below the largest still count.
    """
    from scalecheck.core import special

    n = x.size
    single = fit_range(x, stats, replace(options, bonferroni=False))
    weights = np.empty_like(stats.y)  # each segment's points weighed among themselves
    for k, (end, start) in enumerate(boundaries):
        kernel = np.array([k])
        weights[k, start:] = stats.subset(kernel, slice(start, n)).weights[0]
        weights[k, : end + 1] = stats.subset(kernel, slice(0, end + 1)).weights[0]
    single_error = _refit_rss(x, stats.y, [c.spec for c in single], weights)
    single_coefs = np.array([c.spec.n_terms + 1 for c in single])
    extra = np.maximum(1, split_coefs + 1 - single_coefs).astype(float)
    gain = np.maximum(single_error - split_error, 0.0)
    floor = options.noise_floor**2
    residual_dof = n - split_coefs - 1
    repeated = (stats.dof > 0) & np.isfinite(stats.sigma2)
    with np.errstate(divide="ignore", invalid="ignore"):
        pure = gain / np.maximum(np.where(repeated, stats.sigma2, floor), floor)
        noise = split_error / np.maximum(residual_dof, 1)
        if window_noise is not None:
            noise = np.minimum(noise, window_noise)
        residual = (gain / extra) / np.maximum(noise, floor)
    p_value = np.where(repeated, special.chdtrc(extra, pure),
                       np.where(residual_dof > 0, special.fdtrc(extra, np.maximum(residual_dof, 1), residual), 0.0))
    return np.asarray(p_value < options.alpha)


def _error(x: np.ndarray, stats: PointStats, options: FitOptions) -> tuple[np.ndarray, np.ndarray]:
    """(K,) weighted squared error and (K,) number of coefficients of the main search's model on one segment."""
    K = stats.y.shape[0]
    if x.size == 1:
        return np.zeros(K), np.ones(K)
    choices = fit_range(x, stats, options)
    fitted = np.stack([c.fitted for c in choices])
    return (np.sum(stats.weights * (stats.y - fitted) ** 2, axis=1),
            np.array([c.spec.n_terms + 1 for c in choices], dtype=float))


def fit_range(x: np.ndarray, stats: PointStats, options: FitOptions) -> list[Choice]:
    """The main search on one parameter's values `x` (fewer than 3 points: the constant model)."""
    return select_one_parameter(x, stats, options)


def _noise(stats: PointStats, k: int, best_error: float, n: int, options: FitOptions) -> float:
    """Relative noise variance of kernel k: from its repetitions, else from the best two-segment fit."""
    if stats.dof[k] > 0 and np.isfinite(stats.sigma2[k]):
        sigma2 = float(stats.sigma2[k])
    else:
        sigma2 = best_error / max(1, n - 4)
    return max(sigma2, options.noise_floor**2)


def _runs(pattern: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) window index of each run of ones."""
    edges = np.diff(np.concatenate(([0], pattern.astype(np.int8), [0])))
    return list(zip(np.flatnonzero(edges == 1).tolist(), (np.flatnonzero(edges == -1) - 1).tolist()))
