"""The bootstrap behind a comparison: resample repetitions per point and re-run model selection on each resample.

Model selection flips between neighbouring terms on noisy data (p against p^(5/4), p against p log p), and an
extrapolation to a large target amplifies every flip. Comparing two fitted models as if they were exact would
turn that noise into false alarms, so each side's data are resampled (repetitions drawn with replacement within
each point) and the noise-aware selection of `search.decide` is run again on every resample.

Re-running the full search (hundreds of two-term hypotheses) on hundreds of resamples of a thousand kernels would
take minutes; the selection is re-run over the hypotheses that can plausibly win instead: the constant, the model
each side chose, and their neighbours (each exponent one and two steps up or down the ordered building blocks, or
a term dropped), plus the expected growth when one is configured. A hypothesis far from both choices on the
measured data does not win on a resample of the same data.

A comparison re-selects thousands of kernels, each on a few hundred resamples of a few points: called per kernel,
numpy's fixed cost per call, not the arithmetic, would dominate. `reselect_many` re-selects many kernels measured on
the same points at once (their resamples side by side, each kernel's hypotheses in its own design matrices), and
`Designs` evaluates each hypothesis once per point set. Every value is computed by the same operations as for a
kernel alone, so a kernel's selection does not depend on which kernels share its batch.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from scalecheck.core.search import (MAX_MAGNITUDE, FitOptions, PointStats, criterion, decide, off_blocks, point_stats,
                                    score)
from scalecheck.data.exponents import falling
from scalecheck.data.measurement import distinct
from scalecheck.data.spec import Exponents, Factor, ModelSpec, Term

STEPS = 2  # neighbours this many steps up and down the ordered building blocks
# Design-matrix elements (hypotheses x resamples x points x coefficients) that `reselect_many` fits in one batch:
# 8 MB of float64 per work array. Measured on 1,000 kernels at 8 points: 10-15% faster than 4,000,000 (the chunk
# of `fit.fit_batch`, whose work arrays then outgrow the caches), as fast as 250,000.
CHUNK_ELEMENTS = 1_000_000


class Designs:
    """Each hypothesis's design matrix on each point set, evaluated once (the kernels of a comparison share their
    points, and their hypotheses overlap). Holds the values only: a `Designs` belongs to one comparison."""

    def __init__(self) -> None:
        self._bases: dict[tuple[bytes, tuple[int, ...], ModelSpec], np.ndarray] = {}
        self._defined: dict[tuple[bytes, tuple[int, ...], ModelSpec, bool], bool] = {}

    def basis(self, spec: ModelSpec, points: np.ndarray) -> np.ndarray:
        """`spec.basis(points)` (n, 1 + terms), read-only."""
        key = (points.tobytes(), points.shape, spec)
        found = self._bases.get(key)
        if found is None:
            found = spec.basis(points)
            found.setflags(write=False)
            self._bases[key] = found
        return found

    def defined(self, spec: ModelSpec, points: np.ndarray, *, overflow: bool = False) -> bool:
        """Whether `spec` is defined at every point of `points` (n, m): its design matrix is finite there, or with
        `overflow` is not NaN (a value beyond the range of floats counts then). Decided once per spec and points."""
        key = (points.tobytes(), points.shape, spec, overflow)
        found = self._defined.get(key)
        if found is None:
            basis = self.basis(spec, points)
            found = self._defined[key] = bool(not np.any(np.isnan(basis)) if overflow else np.all(np.isfinite(basis)))
        return found


@dataclass(frozen=True, eq=False)
class Resampled:
    """Model selection re-run on B resamples of one kernel's data, among the hypotheses `specs`."""

    specs: tuple[ModelSpec, ...]
    chosen: np.ndarray  # (B,) index into specs of the hypothesis each resample selects
    criterion: np.ndarray  # (H, B) selection criterion of every hypothesis (inf where not eligible)
    wrss: np.ndarray  # (H, B) weighted residual sum of squares of every hypothesis (inf where not eligible)
    noise: np.ndarray  # (B,) noise variance the weighted sums are measured against
    dof: np.ndarray  # (B,) its degrees of freedom (0: estimated from the residuals, no repetitions)
    predictions: np.ndarray  # (H, B) every hypothesis's fit evaluated at the target scale

    @property
    def prediction(self) -> np.ndarray:
        """(B,) value of the selected model at the target scale."""
        return np.asarray(self.predictions[self.chosen, np.arange(self.chosen.size)])

    def take(self, columns: slice) -> Resampled:
        """The same selection restricted to some resamples."""
        return Resampled(self.specs, self.chosen[columns], self.criterion[:, columns], self.wrss[:, columns],
                         self.noise[columns], self.dof[columns], self.predictions[:, columns])

    def growth(self, parameters: Sequence[str]) -> list[dict[str, Exponents]]:
        """Lead-order growth of the selected hypothesis, per resample."""
        orders = [{name: spec.lead_order(k) for k, name in enumerate(parameters)} for spec in self.specs]
        return [orders[h] for h in self.chosen]


def neighbourhood(spec: ModelSpec, blocks: Sequence[Exponents], steps: int = STEPS) -> list[ModelSpec]:
    """`spec`, the specs with one exponent pair moved up to `steps` places along `blocks` (sorted by asymptotic
    order), and the specs with one term dropped. Terms never repeat within a spec."""
    blocks = tuple(blocks)
    if any(factor.order < (0, 0) for term in spec.terms for factor in term.factors):
        blocks = tuple(dict.fromkeys(blocks + falling(blocks)))  # a falling term moves among falling ones too
    return list(_neighbourhood(spec, blocks, steps))


@functools.lru_cache(maxsize=4096)
def _neighbourhood(spec: ModelSpec, blocks: tuple[Exponents, ...], steps: int) -> tuple[ModelSpec, ...]:
    ordered = sorted(set(blocks))
    out = [spec]
    for t, term in enumerate(spec.terms):
        rest = spec.terms[:t] + spec.terms[t + 1:]
        out.append(ModelSpec(rest))
        for f, factor in enumerate(term.factors):
            at = bisect.bisect_left(ordered, factor.order)
            exact = at < len(ordered) and ordered[at] == factor.order
            for delta in [d for s in range(1, steps + 1) for d in (-s, s)]:
                index = at + delta if (exact or delta < 0) else at + delta - 1
                if not 0 <= index < len(ordered):
                    continue
                i, j = ordered[index]
                moved = Term(term.factors[:f] + (Factor(factor.param, Fraction(i), j),) + term.factors[f + 1:])
                if moved not in rest:
                    out.append(ModelSpec(rest[:t] + (moved,) + rest[t:]))
    return tuple(out)


def expectation_spec(growth: Mapping[str, Exponents], parameters: Sequence[str]) -> ModelSpec:
    """c0 + c1 * (the expected growth as one term): the best model that grows exactly as allowed."""
    factors = tuple(Factor(k, Fraction(growth[name][0]), growth[name][1]) for k, name in enumerate(parameters)
                    if name in growth and (growth[name][0] or growth[name][1]))
    return ModelSpec((Term(factors),)) if factors else ModelSpec()


def capped(spec: ModelSpec, bound: Mapping[str, Exponents], parameters: Sequence[str]) -> ModelSpec:
    """`spec` with every factor that grows faster than `bound` lowered to it (dropped where the bound is
    constant): the same shape of model, growing no faster than allowed. The null hypothesis of a growth test."""
    terms: list[Term] = []
    for term in spec.terms:
        factors = []
        for factor in term.factors:
            limit = bound.get(parameters[factor.param], (Fraction(0), 0))
            if factor.order > limit:
                if not (limit[0] or limit[1]):
                    continue
                factor = Factor(factor.param, Fraction(limit[0]), limit[1])
            factors.append(factor)
        if factors and Term(tuple(factors)) not in terms:
            terms.append(Term(tuple(factors)))
    return ModelSpec(tuple(terms))


def hypotheses(specs: Sequence[ModelSpec], points: np.ndarray | Sequence[np.ndarray], target: np.ndarray,
               designs: Designs | None = None) -> list[ModelSpec]:
    """The distinct specs, constant first, keeping only those defined at every point and at the target.

    `points` is one point set (n, m) or several (each side's); `designs`, when given, keeps the design matrices
    for the fits to come. A term that is finite at every point but beyond the range of floats at the target (p^3 at
    p = 1e200) is kept: the class still describes the data, only its prediction there is infinite, which the
    comparison reports as such, rather than choosing among the classes that happen to stay finite."""
    point_sets = [points] if isinstance(points, np.ndarray) else list(points)
    known = designs if designs is not None else Designs()
    out = [ModelSpec()]
    at_target = target[None]
    for spec in dict.fromkeys(specs):
        if spec == out[0]:
            continue
        if all(known.defined(spec, at) for at in point_sets) and known.defined(spec, at_target, overflow=True):
            out.append(spec)
    return out


def resample(values: np.ndarray, count: int, rng: np.random.Generator, *, with_data: bool = False) -> np.ndarray:
    """`count` resamples of repetitions drawn with replacement within each point.

    Parameters
    ----------
    values : ndarray, shape (n, r)
        Repetitions per point, NaN-padded at the end (as `Series.values`).
    with_data : put `values` themselves first, as resample 0 (what `side.draw` hands to the selection)

    Returns
    -------
    ndarray, shape (count, n, r), or (1 + count, n, r) `with_data`
        NaN where the point has fewer than r repetitions, as in `values`.

    Cost: one uniform draw per element, then a few passes over them; the repetition each element takes is
    floor(u * reps), which truncation gives for u >= 0.
    """
    n, r = values.shape
    missing = np.isnan(values)
    reps = r - np.count_nonzero(missing, axis=1) if missing.any() else None  # (n,); None: r at every point
    picked = rng.random((count, n, r))
    if reps is not None:
        picked *= reps[:, None]
    else:  # every point has r repetitions: the same products, by a scalar
        picked *= r
    index = picked.astype(np.intp)
    index += np.arange(0, n * r, r)[:, None]  # into values.ravel(): row i starts at i * r
    first = int(with_data)
    out = np.empty((first + count, n, r))
    if with_data:
        out[0] = values
    np.take(values.reshape(-1), index, out=out[first:], mode="clip")  # in range: "clip" only skips a copy
    if reps is not None:
        out[first:, np.arange(r)[None, :] >= reps[:, None]] = np.nan  # slots beyond a point's repetitions
    return out


def resample_rounds(values: np.ndarray, rounds: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """`count` resamples that draw whole rounds with replacement, then repetitions within each drawn round.

    A round (one run of the measurement over all its points) is the unit that load, drift and a slow process start
    hit: its repetitions rise or fall together. Resampling repetitions within a point treats them as independent
    and makes a bound too narrow; drawing rounds carries the disagreement between rounds into the bound.

    Parameters
    ----------
    values : ndarray, shape (n, r)
        Repetitions per point, NaN-padded (as `Series.values`).
    rounds : ndarray, shape (n, r)
        The round of each repetition; every value has one.

    Returns
    -------
    ndarray, shape (count, n, w)
        NaN-padded at the end. A point that none of the drawn rounds measured gets a plain resample of its own
        repetitions, so that every point keeps at least one value.
    """
    n, r = values.shape
    present = ~np.isnan(values)
    ids = distinct(rounds[present])
    which = np.searchsorted(ids, np.where(present, rounds, ids[0])).astype(int)  # (n, r) index of the round
    counts = np.zeros((n, ids.size), dtype=int)
    rows = np.broadcast_to(np.arange(n)[:, None], (n, r))
    np.add.at(counts, (rows[present], which[present]), 1)
    width = int(counts.max())
    packed = np.full((n, ids.size, width), np.nan)  # the values of round k at point i, side by side
    order = np.lexsort((which.ravel(), rows.ravel()))
    flat_rows, flat_rounds = rows.ravel()[order], which.ravel()[order]
    keep = present.ravel()[order]
    flat_rows, flat_rounds, flat_values = flat_rows[keep], flat_rounds[keep], values.ravel()[order][keep]
    starts = np.cumsum(np.concatenate([[0], counts.ravel()]))[:-1].reshape(n, ids.size)
    slot = np.arange(flat_values.size) - starts[flat_rows, flat_rounds]
    packed[flat_rows, flat_rounds, slot] = flat_values
    drawn = rng.integers(0, ids.size, size=(count, ids.size))  # (count, R): the rounds each resample takes
    have = counts[:, drawn].transpose(1, 2, 0)  # (count, R, n)
    pick = np.floor(rng.random((count, ids.size, n, width)) * have[..., None]).astype(int)
    out = packed[np.arange(n)[None, None, :, None], drawn[:, :, None, None], pick]
    out = np.where(np.arange(width)[None, None, None, :] < have[..., None], out, np.nan)
    out = np.sort(out.transpose(0, 2, 1, 3).reshape(count, n, ids.size * width), axis=2)  # NaN last
    empty = np.isnan(out[:, :, 0])  # (count, n): no drawn round measured this point
    if empty.any():
        plain = resample(values, count, rng)
        out[empty, :r] = plain[empty]
        out[empty, r:] = np.nan
    width_used = int(np.max(np.sum(~np.isnan(out), axis=2)))
    return out[:, :, :width_used]


def jitter(fitted: np.ndarray, relative_sd: float, count: int, rng: np.random.Generator) -> np.ndarray:
    """`count` parametric resamples (count, n, 1) of data without repetitions: the model plus its residual noise,
    kept within the magnitudes a fit handles (a model far off its data, with a relative spread of 1e80, would
    otherwise draw values whose squares overflow)."""
    with np.errstate(over="ignore", invalid="ignore"):
        drawn = fitted[None, :] * (1.0 + relative_sd * rng.standard_normal((count, fitted.size)))
    return np.clip(np.nan_to_num(drawn), -MAX_MAGNITUDE, MAX_MAGNITUDE)[..., None]


def reselect(points: np.ndarray, samples: np.ndarray, specs: Sequence[ModelSpec], target: np.ndarray,
             options: FitOptions) -> Resampled:
    """Run the noise-aware selection among `specs` on every resample.

    Parameters
    ----------
    points : ndarray, shape (n, m)
    samples : ndarray, shape (B, n, r)
        Resampled repetitions (from `resample` or `jitter`).
    specs : hypotheses from `hypotheses` (constant first)
    target : ndarray, shape (m,)

    Cost: one batched fit per number of terms, O(H B n k^2) for H hypotheses.
    """
    return reselect_many([Reselection(points, samples, tuple(specs))], target, options)[0]


@dataclass(frozen=True, eq=False)
class Reselection:
    """One kernel's part of `reselect_many`: its resamples and the hypotheses to choose among."""

    points: np.ndarray  # (n, m)
    samples: np.ndarray  # (B, n, r) resampled repetitions (from `resample`, `resample_rounds` or `jitter`)
    specs: tuple[ModelSpec, ...]  # from `hypotheses` (constant first)


def reselect_many(jobs: Sequence[Reselection], target: np.ndarray, options: FitOptions,
                  designs: Designs | None = None) -> list[Resampled]:
    """`reselect` of many kernels at once, one result per job, each equal to that kernel's `reselect` alone.

    Kernels on the same points, with resamples of the same shape (and NaN padding or none) and hypotheses of the
    same numbers of terms in the same order, are re-selected together: their resamples side by side as the columns
    of one batch, every column fitted with its own kernel's design matrices (one `search.score` call per number of
    terms and lead columns), then one `search.criterion` and `search.decide` call. Batches hold at most
    `CHUNK_ELEMENTS` design-matrix elements.

    Cost: O(H B n k^2) per kernel, as `reselect`, in a few dozen numpy calls per batch instead of per kernel.
    """
    known = designs if designs is not None else Designs()
    groups: dict[tuple[bytes, tuple[int, ...], tuple[int, ...], bool, tuple[int, ...]], list[int]] = {}
    for index, job in enumerate(jobs):
        key = (job.points.tobytes(), job.points.shape, job.samples.shape[1:], bool(np.isnan(job.samples).any()),
               tuple(spec.n_terms for spec in job.specs))
        groups.setdefault(key, []).append(index)
    found: dict[int, Resampled] = {}
    for members in groups.values():
        batch: list[int] = []
        elements = 0
        for index in members:
            job = jobs[index]
            size = job.samples.shape[0] * len(job.specs) * job.samples.shape[1] * (1 + job.specs[-1].n_terms)
            if batch and elements + size > CHUNK_ELEMENTS:
                found.update(zip(batch, _reselect_batch([jobs[i] for i in batch], target, options, known)))
                batch, elements = [], 0
            batch.append(index)
            elements += size
        found.update(zip(batch, _reselect_batch([jobs[i] for i in batch], target, options, known)))
    return [found[index] for index in range(len(jobs))]


def _reselect_batch(jobs: Sequence[Reselection], target: np.ndarray, options: FitOptions, designs: Designs
                    ) -> list[Resampled]:
    """`reselect_many` of jobs that share their points, the shape of their resamples and the numbers of terms of
    their hypotheses, row by row."""
    points = jobs[0].points
    samples = np.concatenate([job.samples for job in jobs]) if len(jobs) > 1 else jobs[0].samples
    counts = [job.samples.shape[0] for job in jobs]
    owner = np.repeat(np.arange(len(jobs)), counts)  # (K,) the job of each column
    stats = point_stats(samples, options.aggregate)
    sizes = np.array([spec.n_terms for spec in jobs[0].specs])
    H, K = sizes.size, owner.size
    loo, wrss = np.full((H, K), np.inf), np.full((H, K), np.inf)
    at_target = np.full((H, K), np.nan)
    # rows with one number of terms and the same lead columns share a design-matrix shape and lead mask
    slots: dict[tuple[int, tuple[int, ...]], list[list[int]]] = {}
    for j, job in enumerate(jobs):
        for h, spec in enumerate(job.specs):
            slots.setdefault((spec.n_terms, spec.lead_columns), [[] for _ in jobs])[j].append(h)
    columns = np.arange(K)
    for (size, lead_columns), rows in slots.items():
        width = max(len(r) for r in rows)
        table: dict[ModelSpec, int] = {}
        index = np.zeros((width, len(jobs)), dtype=int)  # into `table`, per slot and job
        row = np.zeros((width, len(jobs)), dtype=int)  # the job's own row of each slot
        present = np.zeros((width, len(jobs)), dtype=bool)
        for j, mine in enumerate(rows):
            for slot, h in enumerate(mine):
                index[slot, j] = table.setdefault(jobs[j].specs[h], len(table))
                row[slot, j], present[slot, j] = h, True
        X = np.stack([designs.basis(spec, points) for spec in table])[index[:, owner]]  # (width, K, n, k)
        lead = np.zeros((width, size + 1), dtype=bool)
        lead[:, list(lead_columns)] = True
        exists = present[:, owner]
        scored = score(X, lead, stats, options, None if exists.all() else exists)
        basis = np.stack([designs.basis(spec, target[None])[0] for spec in table])[index[:, owner]]  # (width, K, k)
        with np.errstate(over="ignore", invalid="ignore"):  # a term beyond the range of floats at the target: inf
            predicted = np.einsum("hbk,hbk->hb", basis, scored.batch.coef)
        rows_at, cols_at = row[:, owner][exists], np.broadcast_to(columns, exists.shape)[exists]
        loo[rows_at, cols_at] = scored.loo[exists]
        wrss[rows_at, cols_at] = scored.wrss[exists]
        at_target[rows_at, cols_at] = predicted[exists]
    refined = None  # (H, K): each column its job's refined hypotheses
    if points.shape[1] == 1 and options.refine:
        refined = np.stack([off_blocks(job.specs, options) for job in jobs], axis=1)[:, owner]
    total, sigma2 = criterion(loo, wrss, sizes, stats, options, refined)
    best, _ = decide(loo, wrss, sizes, stats, options, (total, sigma2))
    ends = np.cumsum(counts)
    return [Resampled(job.specs, best[a:b], total[:, a:b], wrss[:, a:b], sigma2[a:b], stats.dof[a:b],
                      at_target[:, a:b])
            for job, a, b in zip(jobs, ends - counts, ends)]


def common_choice(a: Resampled, b: Resampled) -> np.ndarray:
    """(B,) the hypothesis that best describes resample i of both sides at once (least summed criterion).

    Both sides must have been re-selected among the same specs. Used to compare two commits under one model
    class, so that a flip between neighbouring classes does not masquerade as a change of scale.
    """
    return np.asarray(np.argmin(a.criterion + b.criterion, axis=0))


def residual_spread(stats: PointStats, fitted: np.ndarray) -> float:
    """Relative standard deviation of one kernel's values around its model (for data without repetitions)."""
    y = stats.y[0]
    scale = np.where(np.abs(y) > 0, np.abs(y), 1.0)
    return float(np.sqrt(np.mean(((y - fitted) / scale) ** 2)))
