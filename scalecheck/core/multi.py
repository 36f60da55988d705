"""Multi-parameter models: Extra-P's hierarchical search, selected with cross-validation.

Stage 1, per parameter: every single-parameter hypothesis is scored on every *line* of the design (points where
only that parameter varies), and the leave-one-out errors are summed over lines, so all the data speak, not one
line as in Extra-P. A parameter whose lines are all consistent with a constant drops out; otherwise its best
`candidates_per_parameter` terms go on.
Stage 2: the candidate terms are combined as sums and products (every family of compound terms that involves each
remaining parameter) and the noise-aware rule of `search.select` picks among them on all points. Extra-P selects
stage 2 in-sample and overfits; here every extra term pays the per-term penalty. Both stages score through
`search.score`, so the sign rule of `search._eligible` holds for compound terms too: without decreasing models,
a + b + a*b has three positive coefficients, and no term of a sum cancels another into a different class.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from scalecheck.core.search import (Choice, FitOptions, PointStats, Scored, constant_test, decide, design,
                                    falling_values, noise_and_penalty, score, single_parameter_specs,
                                    terms_allowed, with_falling)
from scalecheck.data.spec import ModelSpec, Term

# Stage-2 hypotheses tried at most. Up to three parameters the full search fits (1,359 with three candidates per
# parameter); from four on it grows combinatorially (137,388 at four, 46 million at five), so the search narrows as
# Extra-P's does: one candidate per parameter first, then fewer compound terms. Seven or more parameters that vary
# together do not fit even then, and are not modeled.
SEARCH_BUDGET = 2_500
CHUNK_VALUES = 2**21  # design-matrix values scored at once (16 MB, and a few times that for the fits)


def most_parameters() -> int:
    """The most parameters the narrowest search (one candidate each, two compound terms) models together: 6."""
    return max(m for m in range(2, 17) if hypotheses(m, 1, 2) <= SEARCH_BUDGET)


def search_plan(m: int, options: FitOptions) -> tuple[int, int] | None:
    """(candidates per parameter, most compound terms) of the stage-2 search over `m` parameters, narrowed until it
    tries at most `SEARCH_BUDGET` hypotheses; None when even one candidate and two terms try more."""
    candidates = options.candidates_per_parameter
    terms = max(3, m)  # every shape of two parameters (a + b + a*b), the additive model of m parameters
    while hypotheses(m, candidates, terms) > SEARCH_BUDGET:
        if candidates > 1:
            candidates = 1
        elif terms > 2:
            terms -= 1
        else:
            return None
    return candidates, terms


def hypotheses(m: int, candidates: int, terms: int) -> int:
    """How many stage-2 hypotheses the search over `m` parameters tries, counted without enumerating them: for each
    subset of r parameters, candidates^r choices of terms times the families of at most `terms` products that
    involve all r (by inclusion-exclusion over the parameters left out)."""
    def covering(r: int, t: int) -> int:
        return sum((-1) ** j * math.comb(r, j) * math.comb(2 ** (r - j) - 1, t) for j in range(r + 1))
    return sum(math.comb(m, r) * candidates ** r * sum(covering(r, t) for t in range(1, terms + 1))
               for r in range(1, m + 1))


def lines(points: np.ndarray, param: int, min_values: int) -> list[np.ndarray]:
    """Index arrays of the lines of `param`: points equal in every other parameter, with >= min_values values."""
    others = np.delete(points, param, axis=1)
    _, label = np.unique(others, axis=0, return_inverse=True)
    out = []
    for group in range(label.max() + 1):
        index = np.flatnonzero(label.ravel() == group)
        if np.unique(points[index, param]).size >= min_values:
            out.append(index)
    return out


def inseparable_parameters(points: np.ndarray) -> tuple[int, ...]:
    """Parameters that never change alone (no two points differ in that parameter only): a diagonal design."""
    if points.shape[1] < 2:
        return ()
    return tuple(k for k in range(points.shape[1]) if not lines(points, k, 2))


def fit_multi_parameter(points: np.ndarray, stats: PointStats, options: FitOptions) -> list[Choice]:
    """One Choice per kernel of `stats` on a multi-parameter point set (shape (n, m), m >= 2).

    Stage 2 is batched across kernels: each hypothesis is a *slot* (which parameters, which sum/product shape,
    which of each kernel's candidates), so kernels with different candidates still share one fit per slot, and a
    ModelSpec is built only for each kernel's winner.
    """
    n, m = points.shape
    K = stats.y.shape[0]
    plan = search_plan(m, options)
    if plan is None:
        raise ValueError(f"{m} parameters are more than the multi-parameter search models (see search_plan)")
    candidates, most_terms = plan
    stage_one = [_candidates(points, k, stats, options) for k in range(m)]
    # At most max(3, m) compound terms (fewer when the search narrows): every sum-and-product shape of two
    # parameters (up to a + b + a*b), the additive model of m parameters; more only overfits 25-odd points.
    max_terms = min(terms_allowed(n, options.max_terms * m), most_terms)
    rows: list[tuple[tuple[int, ...], tuple[tuple[int, ...], ...], tuple[int, ...]]] = []
    for r in range(1, m + 1):
        for used in itertools.combinations(range(m), r):
            for family in _shapes(used, max_terms):
                for digits in itertools.product(range(candidates), repeat=r):
                    rows.append((used, family, digits))
    by_size: dict[int, list[int]] = {}
    for h, (_, family, _) in enumerate(rows):
        by_size.setdefault(len(family), []).append(h)
    loo = np.full((1 + len(rows), K), np.inf)
    wrss = np.full((1 + len(rows), K), np.inf)
    constant = score(np.ones((1, n, 1)), np.zeros((1, 1), dtype=bool), stats, options)
    loo[0], wrss[0] = constant.loo[0], constant.wrss[0]
    # Scored in chunks of about CHUNK_VALUES design values, keeping only the scores: the fits are made again for
    # the hypotheses that win, so memory does not grow with the number of hypotheses.
    for size, members in by_size.items():
        step = max(1, CHUNK_VALUES // (K * n * (1 + size)))
        for start in range(0, len(members), step):
            chunk = members[start:start + step]
            scored = _score_rows(chunk, rows, stage_one, stats, options)
            loo[[1 + h for h in chunk]], wrss[[1 + h for h in chunk]] = scored.loo, scored.wrss
    sizes = np.array([0] + [len(family) for _, family, _ in rows])
    best, fallback = decide(loo, wrss, sizes, stats, options)
    fits = {0: ([0], constant.batch)}
    for size in {int(sizes[h]) for h in best if h}:
        winners = sorted({int(h) for h in best if h and sizes[h] == size})
        fits[size] = (winners, _score_rows([h - 1 for h in winners], rows, stage_one, stats, options).batch)
    choices = []
    for kernel, h in enumerate(best):
        members, batch = fits[int(sizes[h])]
        local = members.index(h)
        spec = ModelSpec()
        if h:
            used, family, digits = rows[h - 1]
            picked = {k: stage_one[k][1][stage_one[k][0][kernel, d]] for k, d in zip(used, digits)}
            spec = ModelSpec(tuple(Term(tuple(f for k in subset for f in picked[k].factors)) for subset in family))
        choices.append(Choice(spec, batch.coef[local, kernel], batch.fitted[local, kernel], batch.loo[local, kernel],
                              bool(fallback[kernel])))
    return choices


def _score_rows(members: list[int], rows: list[tuple[tuple[int, ...], tuple[tuple[int, ...], ...], tuple[int, ...]]],
                stage_one: list[tuple[np.ndarray, list[Term], np.ndarray]], stats: PointStats,
                options: FitOptions) -> Scored:
    """Fit and score the stage-2 hypotheses `rows[h]` for h in `members`, all of one size, for every kernel."""
    K, n = stats.y.shape
    size = len(rows[members[0]][1])
    X = np.empty((len(members), K, n, 1 + size))
    X[..., 0] = 1.0
    lead = np.zeros((len(members), 1 + size), dtype=bool)
    exists = np.ones((len(members), K), dtype=bool)
    for row, h in enumerate(members):
        used, family, digits = rows[h]
        index = {k: stage_one[k][0][:, d] for k, d in zip(used, digits)}  # (K,) candidate per parameter
        for k in used:
            exists[row] &= index[k] >= 0
        for c, subset in enumerate(family, start=1):
            with np.errstate(over="ignore", invalid="ignore"):  # beyond the floats: not a valid fit (fit_batch)
                X[row, :, :, c] = np.prod([stage_one[k][2][np.maximum(index[k], 0)] for k in subset], axis=0)
            lead[row, c] = not any(set(subset) < set(other) for other in family)
    return score(X, lead, stats, options, exists)


def _candidates(points: np.ndarray, param: int, stats: PointStats,
                options: FitOptions) -> tuple[np.ndarray, list[Term], np.ndarray]:
    """Stage 1 for `param`: per kernel, the indices of its best single terms (best first; -1 for none, and all -1
    where `param` looks constant), the term list they index, and the terms' values at `points`.

    Returns
    -------
    index : ndarray of int, shape (K, candidates_per_parameter)
    terms : list of Term, length H
    values : ndarray, shape (H, n)
    """
    K = stats.y.shape[0]
    space = options if options.negative_exponents == "never" else with_falling(options)
    specs = [s for s in single_parameter_specs(points[:, param], space, param) if s.n_terms == 1]
    falling = np.array([s.terms[0].order_in(param) < (0, 0) for s in specs])
    falls = np.zeros(K)  # lines along which the kernel's values fall (`falling_values`), less the others
    X, lead = design(specs, points)  # (H, n, 2)
    ones = np.ones((1, points.shape[0], 1))
    no_lead = np.zeros((1, 1), dtype=bool)
    total = np.zeros((len(specs), K))
    total_constant = np.zeros(K)
    wrss_constant = np.zeros(K)
    constant_dof = 0
    for index in lines(points, param, options.min_distinct_values):
        sub = stats.subset(points=index)
        falls += np.where(falling_values(points[index, param], stats.y[:, index]), 1, -1)
        terms = score(X[:, index], lead, sub, options)
        constant = score(ones[:, index], no_lead, sub, options)
        sigma2, _ = noise_and_penalty(sub, terms.wrss, index.size, options)
        # On a line where a term is not eligible (wrong sign, too small) or predicts worse than the constant (an
        # outlier), it explains nothing: score it as the constant, so that no single line dominates the sum.
        total += np.minimum(terms.loo, constant.loo) / sigma2[None]
        total_constant += constant.loo[0] / sigma2
        wrss_constant += constant.wrss[0] / sigma2
        constant_dof += index.size - 1
    keeps = constant_test(wrss_constant, np.ones(K), stats.dof, constant_dof + 1, options.alpha) if constant_dof \
        else np.zeros(K, dtype=bool)
    if options.negative_exponents == "auto":  # falling terms only where most lines fall (`select_one_parameter`)
        total = np.where(falling[:, None] & (falls <= 0)[None], np.inf, total)
    order = np.argsort(total, axis=0)[: options.candidates_per_parameter].T  # (K, T)
    better = np.take_along_axis(total.T, order, axis=1) < total_constant[:, None]
    index = np.where(better & ~(keeps & (stats.dof > 0))[:, None], order, -1)
    if index.shape[1] < options.candidates_per_parameter:  # fewer building blocks than candidates asked for
        pad = np.full((K, options.candidates_per_parameter - index.shape[1]), -1)
        index = np.concatenate([index, pad], axis=1)
    return index, [s.terms[0] for s in specs], X[:, :, 1]


def _shapes(used: tuple[int, ...], max_terms: int) -> list[tuple[tuple[int, ...], ...]]:
    """Sum/product shapes over the parameters `used`: families of compound terms (products over a subset of
    `used`) that together involve every parameter of `used`, with at most `max_terms` terms."""
    subsets = [s for q in range(1, len(used) + 1) for s in itertools.combinations(used, q)]
    return [family for size in range(1, max_terms + 1) for family in itertools.combinations(subsets, size)
            if set().union(*family) == set(used)]
