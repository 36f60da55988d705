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

Long series: every window is modeled once, all of them in batches of bounded size (a segment searched again
reuses its windows' errors). When a kernel's candidates would need segment fits of more than `EXACT_POINTS` points
in all (every split of 500 points: noisy series of thousands of points, whose windows are heterogeneous here and
there), running sums of each hypothesis's weighted moments rank the splits in O(n), and only the `SCREENED` best
(with the other candidates of their clean runs) are fitted and decided as above. Detection then costs O(n) per
segment searched, in time and memory; on fewer points nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from scalecheck.core.fit import fit_batch
from scalecheck.core.options import SegmentOptions as SegmentOptions  # re-exported: detection's options
from scalecheck.core.search import TREND_SHARE, Choice, FitOptions, PointStats, decide, design, falling_values, \
    off_blocks, refined_specs, score, select_one_parameter, single_parameter_specs, with_falling
from scalecheck.core.trend import trend_p_values
from scalecheck.data.spec import ModelSpec

# A clean run keeps its answer unless a neighbouring candidate is better by more than this many noise variances:
# the 90% quantile of chi^2(1), the cost of one more residual (a right shared point costs that more than a gap).
SHARED_MARGIN = 2.706
# Windows are modeled in chunks whose design matrices (hypotheses x windows x kernels x points x coefficients) hold
# about this many elements (8 MB of float64); the other work arrays of a chunk are of the same order.
_CHUNK_ELEMENTS = 1_000_000
# Every candidate split is fitted while a kernel's candidates need segments of at most this many points in all
# (every split of a series of 500 points); beyond, only the SCREENED best by running sums are (`_screened`).
EXACT_POINTS = 250_000
SCREENED = 8

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
    Cost: the n - window + 1 window searches once, in batches (a window's model depends on its own points only,
    so a segment searched again reuses them); per segment searched, the fits of its candidate splits (of at most
    `EXACT_POINTS` points, else of the `SCREENED` best, `change_points`) and one model of the segment
    (`confirmed`). Time O(K n) per level of recursion, memory O(K n).
    """
    K = stats.y.shape[0]
    found: list[list[Boundary]] = [[] for _ in range(K)]
    if x.size < seg.min_points:
        return [() for _ in range(K)]
    every_nrss, every_variance = _windows(x, stats, options, seg)  # (K, n - window + 1)
    work = [(0, x.size - 1, np.arange(K))]  # (first, last) point range and the kernels to search in it
    while work:
        first, last, kernels = work.pop()
        if last - first + 1 < seg.min_points or kernels.size == 0:
            continue
        span = slice(first, last + 1)
        part = stats.subset(kernels, span)
        inside = slice(first, last - seg.window + 2)  # the windows within the range
        nrss, variance = every_nrss[kernels, inside], every_variance[kernels, inside]
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
    """nRSS (K, W) of each window, and the relative residual variance (K, W) of its main-search model.

    Each (window, kernel) pair is a row modeled with its own design matrix, as `search.select_one_parameter` would
    model the window's points alone (the same hypotheses, weights, noise and choice, falling terms included), in
    chunks of rows whose design matrices hold about `_CHUNK_ELEMENTS` elements: time and memory grow linearly with
    the number of points, and with the number of kernels.
    """
    K, size = stats.y.shape[0], seg.window
    n_windows = max(0, x.size - size + 1)
    nrss = np.zeros((n_windows, K))  # window-major, as the rows
    variance = np.zeros_like(nrss)
    views = [sliding_window_view(a, size, axis=1) for a in (stats.y, stats.reps, stats.center)]  # (K, W, size)
    repetitions = None if stats.values is None else sliding_window_view(stats.values, size, axis=1)  # (K, W, r, size)
    for space in _window_spaces(x, options, size):
        terms = max(spec.n_terms for spec in space.specs + space.wider)
        step = max(1, _CHUNK_ELEMENTS // (size * max(len(space.specs), len(space.wider)) * (1 + terms)))
        for start in range(space.first * K, space.stop * K, step):
            rows = np.arange(start, min(start + step, space.stop * K))
            windows, kernels = np.divmod(rows, K)
            y, reps, center = (v[kernels, windows] for v in views)  # (R, size)
            values = None if repetitions is None else np.swapaxes(repetitions[kernels, windows], 1, 2)  # (R, size, r)
            trending = None if stats.trending is None else stats.trending[kernels]
            # the weights are a placeholder: subset() derives each window's weights among its own points
            part = PointStats(y, y, stats.sigma2[kernels], stats.dof[kernels], reps, center, values, trending).subset()
            first = windows[0]
            rss, wrss, n_terms = _choose_windows(x[first : windows[-1] + size], windows - first, part, space)
            mean = np.mean(part.y, axis=1)
            nrss.reshape(-1)[rows] = np.where(mean > 0, np.sqrt(rss) / np.where(mean > 0, mean, 1.0), 0.0)
            variance.reshape(-1)[rows] = wrss / np.maximum(1, size - (n_terms + 1))
    return nrss.T, variance.T


@dataclass(frozen=True, eq=False)
class _WindowSpace:
    """The hypotheses of windows first..stop-1, as `search.select_one_parameter` builds them for each."""

    first: int
    stop: int
    options: FitOptions  # those of the search (with falling terms when negative_exponents is "always")
    specs: list[ModelSpec]
    wider: list[ModelSpec]  # with falling terms, searched by falling windows when negative_exponents is "auto"


def _window_spaces(x: np.ndarray, options: FitOptions, size: int) -> list[_WindowSpace]:
    """Runs of consecutive windows (of `size` sorted values of `x`) that share their hypotheses.

    A window's hypotheses depend on its values only through whether they reach 1 and 0 (log terms need x >= 1,
    falling log terms x > 1, falling powers x > 0); the values are sorted, so the smallest, the window's first,
    decides.
    """
    space = refined_specs if options.refine else single_parameter_specs
    starts = x[: max(0, x.size - size + 1)]
    keys = np.stack([starts >= 1, starts <= 1, starts <= 0], axis=1)
    edges = [0] + (np.flatnonzero(np.any(keys[1:] != keys[:-1], axis=1)) + 1).tolist() + [starts.size]
    out = []
    for first, stop in zip(edges[:-1], edges[1:]):
        if first == stop:
            continue
        window = x[first : first + size]
        if size < options.min_distinct_values:
            out.append(_WindowSpace(first, stop, options, [ModelSpec()], []))
            continue
        own = with_falling(options) if options.negative_exponents == "always" else options
        wider = space(window, with_falling(options)) if options.negative_exponents == "auto" else []
        out.append(_WindowSpace(first, stop, own, space(window, own), wider))
    return out


def _choose_windows(x: np.ndarray, windows: np.ndarray, stats: PointStats,
                    space: _WindowSpace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The main search on windows of sorted values `x`, row i of `stats` measured at window windows[i] (the
    points windows[i] .. windows[i] + size - 1 of `x`): the ordinary least-squares RSS (R,) of each row's chosen
    model, its weighted squared error (R,) and its number of terms (R,).

    The steps of `search.choose_one_parameter`: the search; for rows kept constant whose repetitions trend with
    the values, the search again with the constant ruled out; for falling rows, the search on the wider hypotheses.
    """
    size = stats.y.shape[1]
    order = x[:size]  # every window is ordered like its first: the rank tests need nothing more of the values
    designs = _designs(space.specs, x, size)
    best, fallback, fitted = _choose(designs, space.specs, windows, stats, space.options)
    sizes = np.array([spec.n_terms for spec in space.specs])
    trending = np.zeros(best.size, dtype=bool)
    constant = np.flatnonzero((sizes[best] == 0) & ~fallback)
    if constant.size and stats.values is not None and len(space.specs) > 1:  # else too few values for a model
        trending[constant] = trend_p_values(order, stats.values[constant]) < space.options.alpha * TREND_SHARE
    stats = replace(stats, trending=trending)
    redo = np.flatnonzero(trending)
    if redo.size:
        best[redo], fallback[redo], fitted[redo] = _choose(designs, space.specs, windows[redo], stats.subset(redo),
                                                           space.options)
    n_terms = sizes[best]
    rss = _ols_rss(stats.y, designs, space.specs, best, windows)
    if space.wider:
        kept = (n_terms == 0) & ~fallback & (stats.dof > 0)
        falls = np.flatnonzero(falling_values(order, stats.y) & ~kept)
        if falls.size:
            part = stats.subset(falls)
            wide = _designs(space.wider, x, size)
            best, _, fitted[falls] = _choose(wide, space.wider, windows[falls], part, with_falling(space.options))
            n_terms[falls] = np.array([spec.n_terms for spec in space.wider])[best]
            rss[falls] = _ols_rss(part.y, wide, space.wider, best, windows[falls])
    wrss = np.sum(stats.weights * (stats.y - fitted) ** 2, axis=1)
    return rss, wrss, n_terms


Design = tuple[list[int], np.ndarray, np.ndarray]  # hypotheses of one size: their indices, design, lead masks


def _designs(specs: list[ModelSpec], x: np.ndarray, size: int) -> dict[int, Design]:
    """Per number of terms: the indices of those `specs`, their design matrices on every window of `size`
    consecutive values of `x` (H', W, size, k) (a view), and their lead masks (H', k)."""
    by_size: dict[int, list[int]] = {}
    for h, spec in enumerate(specs):
        by_size.setdefault(spec.n_terms, []).append(h)
    out = {}
    for terms, members in by_size.items():
        X, lead = design([specs[h] for h in members], x[:, None])  # (H', n, k)
        out[terms] = (members, np.swapaxes(sliding_window_view(X, size, axis=1), 2, 3), lead)
    return out


def _choose(designs: dict[int, Design], specs: list[ModelSpec], windows: np.ndarray, stats: PointStats,
            options: FitOptions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`search.choose` with a design matrix per row, row i of `stats` measured at window windows[i]: the chosen
    hypothesis (R,), the fallback flag (R,) and the fitted values (R, size) of each row."""
    R = stats.y.shape[0]
    loo = np.full((len(specs), R), np.inf)
    wrss = np.full((len(specs), R), np.inf)
    fits = {}
    for terms, (members, X, lead) in designs.items():
        scored = score(X[:, windows], lead, stats, options)  # (H', R, size, k) designs
        loo[members], wrss[members] = scored.loo, scored.wrss
        fits[terms] = (members, scored.batch.fitted)
    sizes = np.array([spec.n_terms for spec in specs])
    best, fallback = decide(loo, wrss, sizes, stats, options, refined=off_blocks(specs, options))
    fitted = np.empty_like(stats.y)
    for terms, (members, values) in fits.items():
        rows = np.flatnonzero(sizes[best] == terms)
        fitted[rows] = values[_positions(members, len(specs))[best[rows]], rows]
    return best, fallback, fitted


def _ols_rss(y: np.ndarray, designs: dict[int, Design], specs: list[ModelSpec], best: np.ndarray,
             windows: np.ndarray) -> np.ndarray:
    """(R,) ordinary least-squares residual sum of squares of the rows of `y` (R, size), each fitted with its
    hypothesis specs[best[i]] on its window windows[i]."""
    rss = np.zeros(y.shape[0])
    sizes = np.array([spec.n_terms for spec in specs])
    for terms, (members, X, _) in designs.items():
        rows = np.flatnonzero(sizes[best] == terms)
        if rows.size:
            chosen = X[_positions(members, len(specs))[best[rows]], windows[rows]]  # (R', size, k)
            fitted = fit_batch(chosen[None], y[rows], np.ones_like(y[rows])).fitted[0]
            rss[rows] = np.sum((y[rows] - fitted) ** 2, axis=1)
    return rss


def _positions(members: list[int], count: int) -> np.ndarray:
    """(count,) the position of each of `count` hypotheses among `members` (those of one size)."""
    local = np.zeros(count, dtype=int)
    local[members] = np.arange(len(members))
    return local


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

    While a kernel's candidates need segments of at most `EXACT_POINTS` points in all (every split of 500 points),
    each is fitted; beyond, as on long series with many heterogeneous windows, `_screened` keeps the `SCREENED`
    candidates whose two segments fit best by running sums (with every candidate of their clean runs), and only
    those are fitted, so that the cost stays O(n) per kernel.
    """
    n, K = x.size, stats.y.shape[0]
    found = [candidates(pattern[k], n, seg.window) for k in range(K)]
    found = [_screened(x, stats.subset(np.array([k])), options, *proposed)
             if _fit_points(proposed[0], n) > EXACT_POINTS else proposed for k, proposed in enumerate(found)]
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


def _fit_points(found: list[Boundary], n: int) -> int:
    """Points in all the segments that the candidate boundaries `found` of a series of `n` points make (each prefix
    0..end and suffix start..n-1 counted once): the work of fitting them all."""
    return sum(end + 1 for end in {c[0] for c in found}) + sum(n - start for start in {c[1] for c in found})


def _screened(x: np.ndarray, stats: PointStats, options: FitOptions, found: list[Boundary],
              preferred: list[Boundary]) -> tuple[list[Boundary], list[Boundary]]:
    """The `SCREENED` candidates of one kernel (`stats` of one kernel) whose two segments fit best by running sums
    (`split_errors`), with every candidate of the clean runs they belong to, and the published answers of those
    runs: the input of `change_points`, screened in O(H n)."""
    prefix, suffix = split_errors(x, stats, options)
    ends, starts = np.array(found).T
    proxy = prefix[0, ends] + suffix[0, starts]
    top = {found[i] for i in np.argsort(proxy, kind="stable")[:SCREENED]}
    kept = [a for a in preferred if _rivals(a) & top]  # the clean runs that proposed a screened candidate
    proposed = set(found)
    return sorted(top.union(*(_rivals(a) & proposed for a in kept))), kept


def _rivals(answer: Boundary) -> set[Boundary]:
    """The boundaries within one point of `answer` at both ends: the candidates its clean run proposes are among
    them, and `change_points` weighs the published answer against those."""
    return {(answer[0] + i, answer[1] + j) for i in (-1, 0, 1) for j in (-1, 0, 1)}


def split_errors(x: np.ndarray, stats: PointStats, options: FitOptions) -> tuple[np.ndarray, np.ndarray]:
    """Screening errors of every prefix 0..e and every suffix s..n-1 of K kernels: (K, n) each.

    The least weighted residual sum of squares (weights `stats.weights`) of the constant and of each one-term
    hypothesis c0 + c1 * f(x) with c1 > 0 (any c1 if decreasing models are allowed; falling terms f unless
    `negative_exponents` is "never"), from running sums of the weighted moments: O(H K n) time, O(K n) memory
    beside one term at a time. Close to the error of the one-term main search on that segment, which also weighs
    the leave-one-out error and the noise, and re-derives the weights on the segment's own points.
    """
    space = replace(options if options.negative_exponents == "never" else with_falling(options), max_terms=1)
    terms = single_parameter_specs(x, space)[1:]
    ahead = _running_errors(x, terms, stats.y, stats.weights, options.allow_decreasing)
    behind = _running_errors(x[::-1], terms, stats.y[:, ::-1], stats.weights[:, ::-1], options.allow_decreasing)
    return ahead, behind[:, ::-1]


def _running_errors(x: np.ndarray, terms: list[ModelSpec], y: np.ndarray, w: np.ndarray,
                    decreasing: bool) -> np.ndarray:
    """(K, n) least weighted RSS of y[:, :e + 1] (K, n) over the constant and the one-term `terms` at x (n,),
    for every e. Moments are taken about the first point (and terms scaled to [0, 1] there), which keeps the
    differences of running sums accurate."""
    Sw = np.cumsum(w, axis=1)
    dy = y - y[:, :1]
    Sy = np.cumsum(w * dy, axis=1)
    Cyy = np.cumsum(w * dy**2, axis=1) - Sy**2 / Sw
    best = Cyy.copy()
    for spec in terms:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            f = spec.basis(x[:, None])[:, 1]
            f = f - f[0]
            scale = np.max(np.abs(f))
        if not (np.isfinite(scale) and scale > 0):
            continue  # not defined at every point, or constant: no such model
        f = f / scale
        Sf = np.cumsum(w * f, axis=1)
        Sff = np.cumsum(w * f**2, axis=1)
        Cff = Sff - Sf**2 / Sw
        Cfy = np.cumsum(w * f * dy, axis=1) - Sf * Sy / Sw
        fits = (Cff > 1e-12 * Sff) & (decreasing | (Cfy > 0))  # not collinear with the constant; allowed slope
        with np.errstate(divide="ignore", invalid="ignore"):
            best = np.where(fits, np.minimum(best, Cyy - Cfy**2 / np.where(fits, Cff, 1.0)), best)
    return np.asarray(np.maximum(best, 0.0))


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
