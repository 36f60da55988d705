"""One side of a comparison: the data its growth is read from, and model selection re-run on resamples of it.

`compare` reads both commits of a kernel this way, `bound` one kernel against a stated growth. A segmented kernel
is read on its last segment, the behaviour at scale. When the side's repetitions carry their rounds (two rounds or
more), its resamples draw whole rounds (`bootstrap.resample_rounds`); without repetitions the resamples are
parametric (`bootstrap.jitter`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scalecheck.core.bootstrap import (Designs, Resampled, Reselection, capped, jitter, resample, resample_rounds,
                                       reselect_many, residual_spread)
from scalecheck.core.modeler import fit_kernels
from scalecheck.core.search import FitOptions, PointStats, design, noise_and_penalty, outliers, point_stats, score
from scalecheck.data.growth import exceeds
from scalecheck.data.measurement import Series
from scalecheck.data.outcome import FittedModel, KernelModel
from scalecheck.data.spec import Exponents, ModelSpec


@dataclass(frozen=True, kw_only=True, eq=False)
class Side:
    """One side's data over the range its growth is read from (the last segment of a segmented kernel)."""

    series: Series  # all of the side's measurements
    model: KernelModel
    fitted: FittedModel  # the model its growth is read from: the last segment's, or the whole series'
    points: np.ndarray  # (n, m)
    values: np.ndarray  # (n, r)
    stats: PointStats  # of this one kernel on `points`
    rounds: np.ndarray | None = None  # (n, r) the round of each value, when every value has one


@dataclass(frozen=True, kw_only=True, eq=False)
class SideFit:
    """A side and its model selection among one list of hypotheses, on its data and on resamples of it."""

    side: Side
    observed: Resampled  # the selection on the data itself (one column)
    resampled: Resampled  # the selection re-run on every resample (B columns)


def prepare_side(series: Series, model: KernelModel, options: FitOptions) -> Side:
    """The data a side's growth is read from: all points, or the last segment's of a segmented kernel.

    A last segment with too few points for a reliable model (status "insufficient") says little about the growth
    at scale, so such a kernel is compared over all its points, with one model. Cost: one `fit_kernels` call for
    such a kernel, none otherwise.
    """
    return prepare_sides([(series, model)], options)[0]


def prepare_sides(items: Sequence[tuple[Series, KernelModel]], options: FitOptions) -> list[Side]:
    """`prepare_side` of many series, each equal to its own: the noise statistics of series whose values have one
    shape (and NaN padding or none) are computed in one batch."""
    parts = [_range(series, model, options) for series, model in items]
    groups: dict[tuple[tuple[int, ...], bool], list[int]] = {}
    for index, (_, _, values, _) in enumerate(parts):
        groups.setdefault((values.shape, bool(np.isnan(values).any())), []).append(index)
    stats: dict[int, PointStats] = {}
    for members in groups.values():
        batch = point_stats(np.stack([parts[index][2] for index in members]))
        for row, index in enumerate(members):
            kernel = slice(row, row + 1)
            stats[index] = PointStats(batch.y[kernel], batch.weights[kernel], batch.sigma2[kernel],
                                      batch.dof[kernel], batch.reps[kernel], batch.center[kernel])
    return [Side(series=series, model=model, fitted=fitted, points=series.points[keep], values=values,
                 stats=stats[index], rounds=rounds)
            for index, ((series, model), (fitted, keep, values, rounds)) in enumerate(zip(items, parts))]


def _range(series: Series, model: KernelModel, options: FitOptions
           ) -> tuple[FittedModel, np.ndarray | slice, np.ndarray, np.ndarray | None]:
    """The model a side's growth is read from, the points it covers (mask, or a slice of all), their values (n, r)
    and the rounds of the values when every value has one (`prepare_side`)."""
    keep: np.ndarray | slice = slice(None)  # all points, without a copy
    fitted = model.model
    if model.segmented and model.segments[-1].status == "ok":
        last = model.segments[-1]
        keep = (series.points[:, 0] >= last.start) & (series.points[:, 0] <= last.end)
    elif model.segmented:
        fitted = fit_kernels([series], options, None)[0].model
    if fitted is None:
        raise ValueError(f"kernel {series.kernel!r} has no model to compare")
    values = series.values[keep]
    width = max(1, int(np.max(np.count_nonzero(~np.isnan(values), axis=1))))
    values = values[:, :width]
    rounds = None if series.rounds is None else series.rounds[keep][:, :width]
    if rounds is not None and (np.any(np.isnan(rounds) & ~np.isnan(values)) or series.round_count < 2):
        rounds = None  # resampling rounds needs every value's round, and two rounds at least
    return fitted, keep, values, rounds


def fit_side(side: Side, specs: Sequence[ModelSpec], target: np.ndarray, options: FitOptions, resamples: int,
             rng: np.random.Generator) -> SideFit:
    """Selection among `specs` on the side's data and re-run on `resamples` resamples of it, in one batch.

    Parameters
    ----------
    specs : hypotheses from `bootstrap.hypotheses` (constant first), defined at every point and at `target`
    target : ndarray, shape (m,), the point the selections predict
    rng : the generator the resamples are drawn from (whole rounds, repetitions within each point, or
        parametric without repetitions)

    Cost: one `bootstrap.reselect` over the hypotheses on 1 + `resamples` columns.
    """
    return fit_sides([side], [specs], [draw(side, resamples, rng)], target, options)[0]


def draw(side: Side, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(1 + resamples, n, w): the side's data, then `resamples` resamples of it drawn from `rng` (whole rounds,
    repetitions within each point, the outliers set aside first (`screened`), or parametric without
    repetitions), NaN-padded to one width."""
    if side.rounds is not None:
        samples = resample_rounds(side.values, side.rounds, resamples, rng)
    elif side.values.shape[1] > 1:
        out = resample(screened(side.values, side.stats.reps[0]), resamples, rng, with_data=True)
        out[0] = side.values  # the data as measured: the selection on them sets outliers aside itself
        return out
    else:
        fitted = side.fitted.predict(side.points)
        samples = jitter(fitted, residual_spread(side.stats, fitted), resamples, rng)
    n, r = side.values.shape
    width = max(r, samples.shape[2])  # whole rounds drawn twice make a wider resample
    out = np.full((1 + samples.shape[0], n, width), np.nan)
    out[0, :, :r] = side.values
    out[1:, :, :samples.shape[2]] = samples
    return out


def screened(values: np.ndarray, kept: np.ndarray | None = None) -> np.ndarray:
    """(n, r) `values` without the repetitions `search.outliers` sets aside, NaN-padded at the end of each point
    (`values` itself when there are none): what resamples within each point are drawn from. `kept` (n,), the
    repetitions `search.point_stats` kept at each point, when known: where it keeps them all, nothing is screened
    again.

    The selection on the data sets outliers aside (`search.point_stats`), and so must its resamples. Drawn from
    all the repetitions, 6% of the resamples of a point with one stalled repetition of five take it three times
    or more: a majority, which no screen sets aside (measured: 8.9% of the resamples that draw it keep it), where
    measuring gives three stalled of five at 5% stalled in 0.1% of points. The selection then swings on resamples
    that stand for no real measurement, and a bound widens until a 20% regression at the top sizes passes
    (benchmarks/check_quality.py, scenario E). Rounds are not screened: a slowed round is the noise their
    resamples must carry.
    """
    if kept is not None and np.array_equal(kept, np.count_nonzero(~np.isnan(values), axis=1)):
        return values
    mask = outliers(values[None])[0]
    if not mask.any():
        return values
    kept = np.where(mask, np.nan, values)
    order = np.argsort(np.isnan(kept), axis=1, kind="stable")  # the repetitions kept first, in their order
    return np.take_along_axis(kept, order, axis=1)


def fit_sides(sides: Sequence[Side], specs: Sequence[Sequence[ModelSpec]], samples: Sequence[np.ndarray],
              target: np.ndarray, options: FitOptions, designs: Designs | None = None) -> list[SideFit]:
    """`fit_side` of many sides at once: side i selects among `specs[i]` on `samples[i]` (from `draw`: its data,
    then its resamples), all in `bootstrap.reselect_many` batches; each result equals that side's alone."""
    jobs = [Reselection(side.points, drawn, tuple(hyps)) for side, hyps, drawn in zip(sides, specs, samples)]
    return [SideFit(side=side, observed=both.take(slice(0, 1)), resampled=both.take(slice(1, None)))
            for side, both in zip(sides, reselect_many(jobs, target, options, designs))]


def restricted_test(side: Side, specs: Sequence[ModelSpec], bound: Mapping[str, Exponents],
                    options: FitOptions) -> float:
    """p-value that no hypothesis growing at most as `bound` explains the side's data as well as its model.

    The hypotheses growing at most as `bound` are those of `specs` that do, and the chosen model capped at the
    bound (`bootstrap.capped`: same shape, slower lead). Test: the extra sum of squares of the best of them over
    the chosen model, in units of the noise, against F(1, dof) (chi^2(1) without repetitions).
    """
    from scalecheck.core import special

    names, chosen = side.fitted.parameters, side.fitted.spec
    allowed = [s for s in specs if not exceeds(_orders(s, names), bound)]
    allowed += [capped(chosen, bound, names)]
    wrss: dict[ModelSpec, float] = {}
    for size in sorted({s.n_terms for s in allowed + [chosen]}):
        group = list(dict.fromkeys(s for s in allowed + [chosen] if s.n_terms == size))
        scored = score(*design(group, side.points), side.stats, options)
        wrss.update({s: float(v) for s, v in zip(group, scored.wrss[:, 0])})
    best_allowed = min((wrss[s] for s in allowed), default=math.inf)  # the constant is always allowed
    if not math.isfinite(wrss[chosen]) or not math.isfinite(best_allowed):
        return 1.0
    n = side.points.shape[0]
    one_term = np.array([[v if s.n_terms == 1 else math.inf for s, v in wrss.items()]]).T
    sigma2, _ = noise_and_penalty(side.stats, one_term, n, options)
    statistic = max(0.0, best_allowed - wrss[chosen]) / float(sigma2[0])
    dof = int(side.stats.dof[0])
    return float(special.fdtrc(1.0, dof, statistic) if dof > 0 else special.chdtrc(1.0, statistic))


def _orders(spec: ModelSpec, names: Sequence[str]) -> dict[str, Exponents]:
    return {name: spec.lead_order(k) for k, name in enumerate(names)}
