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
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from scalecheck.core.search import (FitOptions, PointStats, Scored, Selection, constant_test, criterion, decide, design,
                                    falling_values, noise_and_penalty, residual_size, score, single_parameter_specs,
                                    smallest_term, terms_allowed, with_falling)
from scalecheck.data.measurement import distinct
from scalecheck.data.spec import ModelSpec, Term

# Stage-2 hypotheses tried at most. Up to three parameters the full search fits (1,359 with three candidates per
# parameter); from four on it grows combinatorially (137,388 at four, 46 million at five), so the search narrows as
# Extra-P's does: one candidate per parameter first, then fewer compound terms. Seven or more parameters that vary
# together do not fit even then, and are not modeled.
SEARCH_BUDGET = 2_500
CHUNK_VALUES = 2**21  # design-matrix values scored at once (16 MB, and a few times that for the fits)
# Stage 1 scores the lines of a parameter a few at a time: about LINE_PAIRS (hypothesis, line, kernel) triples, so that
# the arrays of one point stay in a core's cache (`fit._by_points`), and at most LINE_VALUES values with the points.
LINE_PAIRS = 2**15
LINE_VALUES = 2**21


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
        if distinct(points[index, param]).size >= min_values:
            out.append(index)
    return out


def inseparable_parameters(points: np.ndarray) -> tuple[int, ...]:
    """Parameters that never change alone (no two points differ in that parameter only): a diagonal design."""
    if points.shape[1] < 2:
        return ()
    return tuple(k for k in range(points.shape[1]) if not lines(points, k, 2))


Row = tuple[tuple[int, ...], tuple[tuple[int, ...], ...], tuple[int, ...]]  # (used, family, digits): one slot


def fit_multi_parameter(points: np.ndarray, stats: PointStats, options: FitOptions,
                        exhaustive: bool = False) -> Selection:
    """The chosen model of each kernel of `stats` on a multi-parameter point set (shape (n, m), m >= 2).

    Stage 2 is batched across kernels: each hypothesis is a *slot* (which parameters, which sum/product shape,
    which of each kernel's candidates), so kernels with different candidates still share one fit per slot, and a
    ModelSpec is built only for each kernel's winner.

    Notes
    -----
    A slot's leave-one-out error is at least its in-sample error, and that error is bounded from below for every
    slot at once from one QR factorization per kernel of all the compound terms its slots combine (`_lower_bounds`:
    O(C^2 k) per slot for C compound terms instead of O(n k^2)). Each kernel then fits exactly only its slots in
    order of that bound, until the next bound exceeds the best criterion found (and, without repetitions, the
    least residual of the slots that measure the noise, or as soon as one of them is at the noise floor): the
    choice is the one the full search makes, which `exhaustive=True` runs (for tests). A slot whose fit leaves a
    term too small to be eligible is never fitted (`_lower_bounds`). On Extra-P's four-parameter data (625 exact
    points, 1,940 slots) a kernel fits about 19 of its slots.
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
    rows: list[Row] = []
    for r in range(1, m + 1):
        for used in itertools.combinations(range(m), r):
            for family in _shapes(used, max_terms):
                for digits in itertools.product(range(candidates), repeat=r):
                    rows.append((used, family, digits))
    sizes = np.array([0] + [len(family) for _, family, _ in rows])
    loo = np.full((1 + len(rows), K), np.inf)
    wrss = np.full((1 + len(rows), K), np.inf)
    constant = score(np.ones((1, n, 1)), np.zeros((1, 1), dtype=bool), stats, options)
    loo[0], wrss[0] = constant.loo[0], constant.wrss[0]
    slots = _Slots(rows, stage_one, K, n)
    if exhaustive:
        for size in range(1, int(sizes.max(initial=0)) + 1):
            members = np.flatnonzero(sizes == size)
            step = max(1, CHUNK_VALUES // (K * n * (1 + size)))
            for start in range(0, members.size, step):
                chunk = members[start : start + step]
                scored = slots.score_rows(chunk, stats, options)
                loo[chunk], wrss[chunk] = scored.loo, scored.wrss
    else:
        _search(slots, sizes, stats, options, loo, wrss)
    best, fallback = decide(loo, wrss, sizes, stats, options)
    width = 1 + max(int(sizes[h]) for h in best)
    chosen = Selection((), np.arange(K), np.zeros((K, width)), np.empty((K, n)), np.empty((K, n)), fallback)
    # The winners are fitted again, all of one size against every kernel at once.
    for size in sorted(set(sizes[best].tolist())):
        winners = distinct(best[sizes[best] == size])
        batch = constant.batch if size == 0 else slots.score_rows(winners, stats, options).batch
        kernels = np.flatnonzero(sizes[best] == size)
        local = np.searchsorted(winners, best[kernels])
        chosen.coef[kernels, : 1 + size] = batch.coef[local, kernels]
        chosen.fitted[kernels], chosen.loo[kernels] = batch.fitted[local, kernels], batch.loo[local, kernels]
    specs = []
    for kernel, h in enumerate(best.tolist()):
        spec = ModelSpec()
        if h:
            used, family, digits = rows[h - 1]
            picked = {k: stage_one[k][1][stage_one[k][0][kernel, d]] for k, d in zip(used, digits)}
            spec = ModelSpec(tuple(Term(tuple(f for k in subset for f in picked[k].factors)) for subset in family))
        specs.append(spec)
    return replace(chosen, specs=tuple(specs))


class _Slots:
    """The stage-2 slots of K kernels: each slot's compound terms as columns of one table per kernel."""

    def __init__(self, rows: list[Row], stage_one: list[tuple[np.ndarray, list[Term], np.ndarray]], K: int,
                 n: int) -> None:
        self.rows = rows
        column: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}  # (parameters, their digits) -> column
        self.columns: list[np.ndarray] = [np.zeros(0, dtype=int)]  # per slot (row 0 the constant): its columns
        self.leads: list[tuple[bool, ...]] = [(False,)]
        self.exists = np.zeros((1 + len(rows), K), dtype=bool)
        self.exists[0] = True
        for h, (used, family, digits) in enumerate(rows, start=1):
            digit = dict(zip(used, digits))
            cols = [0]
            for subset in family:
                cols.append(column.setdefault((subset, tuple(digit[k] for k in subset)), 1 + len(column)))
            self.columns.append(np.array(cols))
            self.leads.append((False,) + tuple(not any(set(subset) < set(other) for other in family)
                                               for subset in family))
            ok = np.ones(K, dtype=bool)
            for k, d in zip(used, digits):
                ok &= stage_one[k][0][:, d] >= 0
            self.exists[h] = ok
        self.values = np.empty((K, n, 1 + len(column)))  # (K, n, 1 + C): every compound term of every kernel
        self.values[..., 0] = 1.0
        for (subset, digits_of), c in column.items():
            index = {k: stage_one[k][0][:, d] for k, d in zip(subset, digits_of)}  # (K,) candidate per parameter
            with np.errstate(over="ignore", invalid="ignore"):  # beyond the floats: not a valid fit (fit_batch)
                self.values[:, :, c] = np.prod([stage_one[k][2][np.maximum(index[k], 0)] for k in subset], axis=0)

    def score_rows(self, members: np.ndarray, stats: PointStats, options: FitOptions) -> Scored:
        """Fit and score the slots `members` (row numbers, 1-based, all of one size) against every kernel."""
        cols = np.stack([self.columns[h] for h in members.tolist()])  # (H', 1 + size)
        X = np.ascontiguousarray(np.moveaxis(self.values[:, :, cols], 2, 0))  # (H', K, n, 1 + size), contiguous
        lead = np.array([self.leads[h] for h in members.tolist()])
        return score(X, lead, stats, options, self.exists[members])

    def fit(self, pairs: np.ndarray, stats: PointStats, options: FitOptions, loo: np.ndarray,
            wrss: np.ndarray) -> None:
        """Fit and score slot h for kernel k wherever `pairs` (1 + H, K) is True: each pair as a kernel of its own,
        pairs with the same lead columns in one batch; the scores go to `loo` and `wrss` (1 + H, K)."""
        hh, kk = np.nonzero(pairs)
        n = self.values.shape[1]
        groups: dict[tuple[bool, ...], list[int]] = {}
        for p, h in enumerate(hh.tolist()):
            groups.setdefault(self.leads[h], []).append(p)
        for lead, members in groups.items():
            step = max(1, CHUNK_VALUES // (n * len(lead)))
            for start in range(0, len(members), step):
                part = np.array(members[start : start + step])
                h, k = hh[part], kk[part]
                cols = np.stack([self.columns[i] for i in h.tolist()])  # (P, 1 + size)
                X = np.take_along_axis(self.values[k], cols[:, None, :], axis=2)  # (P, n, 1 + size)
                scored = score(X[None], np.array([lead]), stats.rows(k), options, self.exists[h, k][None])
                loo[h, k], wrss[h, k] = scored.loo[0], scored.wrss[0]


def _lower_bounds(slots: _Slots, stats: PointStats, options: FitOptions) -> np.ndarray:
    """(1 + H, K) a lower bound of the weighted in-sample error of every slot for every kernel (inf where the slot
    does not apply or cannot be eligible, -inf where the bound is not reliable: a near-singular or non-finite
    design).

    Each kernel's whitened compound terms (unit columns, as `fit_batch` scales them) are factorized once, Z = Q R;
    a slot's least-squares error is then the part of y outside Z plus a k-column problem in the C + 1 rows of R.
    The error is computed from the residual, not as a difference of sums of squares, and lowered by a margin
    (1e-6 of it plus 1e-12 of the weighted sum of squares of y) far beyond the rounding of either computation.

    A slot whose least-squares fit gives a term less than a quarter of `smallest_term` at every point is not
    eligible (`search._eligible`), whatever its error: its bound is inf. On exact data every slot that adds terms to
    the true one fits exactly, and only this keeps the search from fitting them all. The share of a term at a point
    is |Z_ic beta_c| / |fitted_i|; where the error is at most a quarter of the smallest |yw_i|^2, |fitted_i| >=
    |yw_i| / 2, so 2 |beta_c| max_i |Z_ic| / |yw_i| bounds it from above, with a margin of 4 over the rounding of
    a well-conditioned slot (determinant above 1e-6).
    """
    sw = np.sqrt(stats.weights)  # (K, n)
    with np.errstate(over="ignore", invalid="ignore"):
        Z = slots.values * sw[..., None]
        norms = np.sqrt(np.einsum("knc,knc->kc", Z, Z))
    usable = np.isfinite(norms) & (norms > 0)  # (K, 1 + C)
    Z = np.where(usable[:, None, :], Z / np.where(usable, norms, 1.0)[:, None, :], 0.0)
    yw = stats.y * sw
    Q, R = _orthonormalize(Z)  # (K, n, 1 + C), (K, 1 + C, 1 + C)
    c = np.einsum("knq,kn->kq", Q, yw)
    outside = np.sum((yw - np.einsum("knq,kq->kn", Q, c)) ** 2, axis=1)
    scale = np.sum(yw**2, axis=1)
    smallest = smallest_term(stats, options)  # (K,)
    with np.errstate(divide="ignore", invalid="ignore"):
        reach = np.max(np.abs(Z) / np.abs(yw)[..., None], axis=1)  # (K, 1 + C): a unit column over the values
    lowest = np.min(yw**2, axis=1)  # (K,)
    bounds = np.full(slots.exists.shape, np.inf)
    by_size: dict[int, list[int]] = {}
    for h in range(1, len(slots.columns)):
        by_size.setdefault(slots.columns[h].size, []).append(h)
    for k_cols, members in by_size.items():
        step = max(1, CHUNK_VALUES // (stats.y.shape[0] * R.shape[1] * k_cols))
        for start in range(0, len(members), step):
            rows = np.array(members[start : start + step])
            cols = np.stack([slots.columns[h] for h in rows.tolist()])  # (H', k)
            Rs = np.moveaxis(R[:, :, cols], 1, 2)  # (K, H', q, k)
            G = np.einsum("khqi,khqj->khij", Rs, Rs)
            det = np.linalg.det(G)
            stable = np.isfinite(det) & (det > 1e-9)
            G = np.where(stable[..., None, None], G, np.eye(k_cols))
            beta = np.linalg.solve(G, np.einsum("khqi,kq->khi", Rs, c)[..., None])[..., 0]
            residual = c[:, None, :] - np.einsum("khqi,khi->khq", Rs, beta)
            error = outside[:, None] + np.sum(residual**2, axis=2)  # (K, H')
            low = error - (1e-6 * error + 1e-12 * scale[:, None])
            reliable = stable & np.all(usable[:, cols], axis=2) & np.isfinite(low)
            with np.errstate(invalid="ignore", over="ignore"):  # a value 0 (reach inf) times 0: NaN, never pruned
                share = 2 * np.abs(beta[..., 1:]) * reach[:, cols[:, 1:]]  # (K, H', k - 1): at least each term's share
            small = np.any(share < smallest[:, None, None] / 4, axis=2) & (4 * error <= lowest[:, None]) & (det > 1e-6)
            bounds[rows] = np.where(reliable & small, np.inf, np.where(reliable, low, -np.inf)).T
    return np.where(slots.exists, bounds, np.inf)


def _orthonormalize(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Z = Q R for a stack of tall matrices Z (K, n, c): Gram-Schmidt with every column orthogonalized twice, which
    keeps Q orthonormal to rounding; elementwise over kernels (a stack of small LAPACK factorizations spawns
    threads per matrix, and on a busy machine that costs more than the arithmetic). A column that depends on the
    ones before it gets a zero column of Q."""
    K, n, c = Z.shape
    Q = np.zeros((K, n, c))
    R = np.zeros((K, c, c))
    for j in range(c):
        v = Z[:, :, j].copy()
        for _ in range(2):
            along = np.einsum("kni,kn->ki", Q[:, :, :j], v)
            v -= np.einsum("kni,ki->kn", Q[:, :, :j], along)
            R[:, :j, j] += along
        norm = np.sqrt(np.einsum("kn,kn->k", v, v))
        R[:, j, j] = norm
        Q[:, :, j] = np.where((norm > 1e-12)[:, None], v / np.where(norm > 1e-12, norm, 1.0)[:, None], 0.0)
    return Q, R


def _search(slots: _Slots, sizes: np.ndarray, stats: PointStats, options: FitOptions, loo: np.ndarray,
            wrss: np.ndarray) -> None:
    """Fill `loo` and `wrss` (1 + H, K; row 0 the constant, scored) wherever `decide` needs an exact score to make
    the choice the full search makes (`fit_multi_parameter`); inf elsewhere."""
    if sizes.size == 1:  # no slot but the constant (no parameter to search)
        return
    n = stats.y.shape[1]
    bounds = _lower_bounds(slots, stats, options)
    done = np.zeros_like(bounds, dtype=bool)
    done[0] = True
    # Without repetitions the noise is the least residual of the slots of one size (`residual_basis`): find it.
    # Once it is at the floor of the noise, a smaller residual no longer changes the noise: the search stops there.
    size = residual_size(sizes, n)
    basis = sizes == size
    guess = np.where(basis[:, None] & (stats.dof == 0)[None], bounds, np.inf)

    def least() -> np.ndarray:
        found = np.min(np.where(basis[:, None], wrss, np.inf), axis=0)
        return np.where(found * (max(1, n - 2) / max(1, n - 1 - size)) / max(1, n - 2) <= options.noise_floor**2,
                        -np.inf, found)

    _fit_in_order(slots, guess, least, done, stats, options, loo, wrss)
    # The criterion's penalties per slot, and the noise, which the slots fitted so far determine.
    penalties, sigma2 = criterion(np.zeros_like(loo), wrss, sizes, stats, options)
    keeps = constant_test(wrss[0], sigma2, stats.dof, n, options.alpha)
    guess = np.where(keeps[None], np.inf, bounds / sigma2[None] + penalties)
    guess[0] = np.inf

    def best() -> np.ndarray:
        return np.asarray(np.min(criterion(loo, wrss, sizes, stats, options)[0][1:], axis=0))

    _fit_in_order(slots, guess, best, done, stats, options, loo, wrss)


def _fit_in_order(slots: _Slots, bounds: np.ndarray, best: Callable[[], np.ndarray], done: np.ndarray,
                  stats: PointStats, options: FitOptions, loo: np.ndarray, wrss: np.ndarray) -> None:
    """Fit each kernel's slots in increasing order of `bounds` (1 + H, K; inf: never) until the next bound exceeds
    `best()` (K,), the least exact value among the slots fitted so far; in rounds of growing size."""
    K = bounds.shape[1]
    order = np.argsort(bounds, axis=0, kind="stable")  # (1 + H, K)
    ranked = np.take_along_axis(bounds, order, axis=0)
    position = np.zeros(K, dtype=int)
    step = 8
    while True:
        limit = best()
        count = np.sum((ranked <= limit[None]) & (ranked < np.inf), axis=0)  # bound not above the best so far
        need = position < count
        if not need.any():
            return
        pairs = np.zeros_like(done)
        for k in np.flatnonzero(need).tolist():
            take = order[position[k] : min(count[k], position[k] + step), k]
            pairs[take, k] = True
            position[k] = min(count[k], position[k] + step)
        pairs &= ~done
        done |= pairs
        slots.fit(pairs, stats, options, loo, wrss)
        step *= 2


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
    found = lines(points, param, options.min_distinct_values)
    # Per line: each term's score, the constant's scores, and whether the values fall (summed below in line order)
    per_line = np.empty((len(found), len(specs), K))
    line_constant = np.empty((2, len(found), K))
    by_values: dict[bytes, list[int]] = {}  # lines along the same values of `param` share their design
    for number, index in enumerate(found):
        by_values.setdefault(points[index, param].tobytes(), []).append(number)
    chunks: list[tuple[list[int], np.ndarray, np.ndarray]] = []  # lines, their values of `param`, their points
    for numbers in by_values.values():
        index = found[numbers[0]]
        step = max(1, min(LINE_PAIRS // (K * len(specs)), LINE_VALUES // (K * index.size * len(specs))))
        for start in range(0, len(numbers), step):
            chunk = numbers[start : start + step]
            where = np.stack([found[number] for number in chunk])  # (L', n_line): every line, kernel by kernel
            chunks.append((chunk, index, where))
            falls += np.sum(np.where(falling_values(points[index, param], _lined(stats.y, where)), 1, -1).reshape(
                len(chunk), K), axis=0)
    # With "auto", a kernel's falling terms count only where its lines fall: elsewhere they are scored only where
    # they could set the noise (`_line_scores`)
    late = falling if options.negative_exponents == "auto" else np.zeros(len(specs), dtype=bool)
    for chunk, index, where in chunks:
        sub = _line_stats(stats, where)
        terms = _line_scores(X[:, index], lead, late, np.tile(falls > 0, len(chunk)), sub, options)
        constant = score(ones[:, index], no_lead, sub, options)
        sigma2, _ = noise_and_penalty(sub, terms.wrss, index.size, options)
        # On a line where a term is not eligible (wrong sign, too small) or predicts worse than the constant
        # (an outlier), it explains nothing: score it as the constant, so that no single line dominates the sum.
        per_line[chunk] = np.moveaxis((np.minimum(terms.loo, constant.loo) / sigma2[None]).reshape(
            len(specs), len(chunk), K), 1, 0)
        line_constant[0, chunk] = (constant.loo[0] / sigma2).reshape(len(chunk), K)
        line_constant[1, chunk] = (constant.wrss[0] / sigma2).reshape(len(chunk), K)
    total = np.zeros((len(specs), K))
    total_constant = np.zeros(K)
    wrss_constant = np.zeros(K)
    for number in range(len(found)):  # in line order, as the sums always were
        total += per_line[number]
        total_constant += line_constant[0, number]
        wrss_constant += line_constant[1, number]
    constant_dof = sum(index.size - 1 for index in found)
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


def _line_scores(X: np.ndarray, lead: np.ndarray, late: np.ndarray, wanted: np.ndarray, stats: PointStats,
                 options: FitOptions) -> Scored:
    """`score(X, lead, stats, options)` (loo and wrss) of single terms on lines, except that the `late` terms (H,)
    are scored only for the line-kernels where they matter: those `wanted` (a mask, one per line-kernel), and those
    whose noise, without repetitions, the smallest residual of a single term could set (`noise_and_penalty`: the
    other terms' least residual is not yet at the noise floor). Elsewhere their scores are inf: such a kernel never
    picks them, and its noise is the same to the bit.
    """
    if not late.any():
        return score(X, lead, stats, options)
    early = ~late
    first = score(X[early], lead[early], stats, options)
    with np.errstate(invalid="ignore"):
        residual = np.min(first.wrss, axis=0, initial=np.inf) / max(1, X.shape[1] - 2)
        rows = np.flatnonzero(wanted | ((stats.dof <= 0) & ~(residual <= options.noise_floor**2)))
    loo = np.full((X.shape[0], wanted.size), np.inf)
    wrss = np.full((X.shape[0], wanted.size), np.inf)
    loo[early], wrss[early] = first.loo, first.wrss
    if rows.size:
        second = score(X[late], lead[late], stats.rows(rows), options)
        terms = np.flatnonzero(late)[:, None]
        loo[terms, rows], wrss[terms, rows] = second.loo, second.wrss
    return Scored(loo, wrss, first.batch)


def _lined(a: np.ndarray, where: np.ndarray) -> np.ndarray:
    """The values `a` (K, n) of K kernels on L lines `where` (L, n_line) as (L * K, n_line), line-major."""
    return np.moveaxis(a[:, where], 1, 0).reshape(where.shape[0] * a.shape[0], where.shape[1])


def _line_stats(stats: PointStats, where: np.ndarray) -> PointStats:
    """The statistics of K kernels on L lines `where` (L, n_line) as L * K kernels (line-major), each line's points
    weighed among themselves, as `PointStats.subset` weighs them."""
    L = where.shape[0]
    y = _lined(stats.y, where)
    return PointStats(y, y, np.tile(stats.sigma2, L), np.tile(stats.dof, L), _lined(stats.reps, where),
                      _lined(stats.center, where)).subset()


def _shapes(used: tuple[int, ...], max_terms: int) -> list[tuple[tuple[int, ...], ...]]:
    """Sum/product shapes over the parameters `used`: families of compound terms (products over a subset of
    `used`) that together involve every parameter of `used`, with at most `max_terms` terms."""
    subsets = [s for q in range(1, len(used) + 1) for s in itertools.combinations(used, q)]
    return [family for size in range(1, max_terms + 1) for family in itertools.combinations(subsets, size)
            if set().union(*family) == set(used)]
