"""Model every (kernel, metric): group series that share a point set, fit each group in one batch.

Single-parameter series go through `search.select_one_parameter`, after `segment` has looked for change points (a
segmented kernel gets one model per segment); several parameters go through the hierarchical search in `multi`.
Series with too few distinct parameter values, whose parameters only grow together, or whose values are beyond
the magnitudes a fit handles (`search.out_of_range`: a square or an inverse square would overflow), get a
`KernelModel` that says why instead of a model, so that one bad kernel never stops the others; so does a fit whose
model is not finite everywhere (status "out of range": a model of infinities is no model). A model that
contradicts its measured values (`adequacy.contradiction`: a significant rise it misses, or a misfit beyond the
noise) keeps its place, with the contradiction appended to its note.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from scalecheck.core.adequacy import contradictions, model_contradiction
from scalecheck.core.fit import adjusted_r2, smape
from scalecheck.core.multi import fit_multi_parameter, inseparable_parameters, most_parameters, \
    search_plan
from scalecheck.core.search import (MAX_MAGNITUDE, MIN_MAGNITUDE, OUT_OF_RANGE, FitOptions, PointStats, Selection,
                                    choose_one_parameter, out_of_range, point_stats)
from scalecheck.core.segment import Boundary, SegmentOptions, segment_kernels
from scalecheck.data.measurement import Series, distinct
from scalecheck.data.outcome import ChangePoint, FittedModel, KernelModel, Scores, Segment
from scalecheck.data.spec import ModelSpec, Term

# Repetitions modeled in one batch of kernels (`kernels_per_batch`), and the fewest kernels of a batch.
BATCH_VALUES = 2**16
MIN_BATCH = 64


def fit_kernels(series: Sequence[Series], options: FitOptions = FitOptions(),
                segmentation: SegmentOptions | None = SegmentOptions()) -> list[KernelModel]:
    """One `KernelModel` per series, in the order given; `segmentation=None` turns change-point detection off.

    Cost: one batched fit per distinct point set (single parameter), plus the window and segment searches of
    `segment_kernels`, plus the hierarchical stages for several parameters; no Python loop over (kernel,
    hypothesis) pairs. Memory: the series and their models, plus the work of one batch of kernels
    (`kernels_per_batch`), whatever the number of kernels.
    """
    results: list[KernelModel | None] = [None] * len(series)
    groups: dict[tuple[bytes, tuple[int, ...], tuple[str, ...]], list[int]] = {}
    for index, s in enumerate(series):
        groups.setdefault((s.points.tobytes(), s.points.shape, s.parameters), []).append(index)
    for members in groups.values():
        first = series[members[0]]
        problem = _unmodelable(first.points, first.parameters, options)
        for start in range(0, len(members), kernels_per_batch(first.values.size)):
            batch = members[start : start + kernels_per_batch(first.values.size)]
            values = _stack_values([series[i] for i in batch])
            beyond = _beyond(values)
            for i in np.array(batch)[beyond].tolist():
                s = series[i]
                results[i] = KernelModel(s.kernel, s.metric, s.unit, OUT_OF_RANGE, None, int(s.points.shape[0]),
                                         float("nan"), out_of_range(s.values))
            kept = [i for i, out in zip(batch, beyond.tolist()) if not out]
            if not kept:
                continue
            if problem is not None:
                for i in kept:
                    s = series[i]
                    results[i] = KernelModel(s.kernel, s.metric, s.unit, problem[0], None, int(s.points.shape[0]),
                                             float("nan"), problem[1])
                continue
            width = max(series[i].values.shape[1] for i in kept)
            for i, km in zip(kept, _fit_group([series[i] for i in kept], values[~beyond][:, :, :width], options,
                                              segmentation)):
                results[i] = km
    return [km for km in results if km is not None]


def kernels_per_batch(values_per_kernel: int) -> int:
    """Kernels modeled together: their repetitions stay near `BATCH_VALUES` values, so the statistics of a batch
    and the searches over it (the hypotheses of `search.choose`, the windows of segmentation) work in bounded
    memory."""
    return max(MIN_BATCH, BATCH_VALUES // max(1, values_per_kernel))


def _beyond(values: np.ndarray) -> np.ndarray:
    """(K,) True where kernel k's repetitions `values` (K, n, r) are `search.out_of_range`."""
    size = np.abs(values)
    present = ~np.isnan(values)
    largest = np.max(np.where(present, size, 0.0), axis=(1, 2), initial=0.0)
    smallest = np.min(np.where(present & (size > 0), size, np.inf), axis=(1, 2), initial=np.inf)
    return np.asarray((largest > MAX_MAGNITUDE) | (smallest < MIN_MAGNITUDE))


def _fit_group(group: list[Series], values: np.ndarray, options: FitOptions,
               segmentation: SegmentOptions | None) -> list[KernelModel]:
    """Models of kernels measured at the same points, with repetitions `values` (K, n, r), all in range."""
    first = group[0]
    stats = point_stats(values, options.aggregate)
    if first.points.shape[1] == 1:
        chosen = choose_one_parameter(first.points[:, 0], stats, options)
    else:
        chosen = fit_multi_parameter(first.points, stats, options)
    fitted = _fitted_models(group, chosen, stats)
    finite = _finite_fits(chosen, fitted)
    noise = np.sqrt(stats.sigma2).tolist()
    models = [KernelModel(s.kernel, s.metric, s.unit, "ok", model, model.scores.n_points, noise[k],
                          _FALLBACK if fallback else "")
              for k, (s, model, fallback) in enumerate(zip(group, fitted, chosen.fallback.tolist()))]
    if first.points.shape[1] == 1 and segmentation is not None:
        models = _segmented(group, stats, models, options, segmentation)
    out = []
    for k, km in enumerate(_checked(group, models, chosen, values, options.aggregate)):
        ok = _finite(km) if km.segments else bool(finite[k])
        out.append(km if ok else KernelModel(
            km.kernel, km.metric, km.unit, OUT_OF_RANGE, None, km.n_points, float("nan"),
            "the fitted model is not a finite number at every measured point (the arithmetic of the fit "
            "overflowed): check the measured values and parameter values for extreme magnitudes"))
    return out


def _finite_fits(chosen: Selection, fitted: list[FittedModel]) -> np.ndarray:
    """(K,) True where the model of kernel k (unsegmented) has finite coefficients and scores, as `_finite`."""
    scores = np.array([(m.scores.smape, m.scores.cv_smape) for m in fitted]).reshape(len(fitted), 2)
    return np.asarray(np.all(np.isfinite(chosen.coef), axis=1) & np.all(np.isfinite(scores), axis=1))


def _finite(km: KernelModel) -> bool:
    """Every model of `km` (each segment's) has finite coefficients, in-sample values and scores."""
    models = [seg.model for seg in km.segments] or ([km.model] if km.model is not None else [])
    return all(np.all(np.isfinite(m.coefficients)) and math.isfinite(m.scores.smape)
               and math.isfinite(m.scores.cv_smape) for m in models)


def _segmented(group: list[Series], stats: PointStats, models: list[KernelModel], options: FitOptions,
               segmentation: SegmentOptions) -> list[KernelModel]:
    """`models` with every segmented kernel replaced by its segments (single-parameter group)."""
    x = group[0].points[:, 0]
    order = np.argsort(x, kind="stable")
    x = x[order]
    if x.size < segmentation.min_points or np.any(np.diff(x) <= 0):
        return models
    ordered = stats.subset(points=order)
    by_boundaries: dict[tuple[Boundary, ...], list[int]] = {}
    for k, boundaries in enumerate(segment_kernels(x, ordered, options, segmentation)):
        if boundaries:
            by_boundaries.setdefault(boundaries, []).append(k)
    name = group[0].parameters[0]
    out = list(models)
    for boundaries, members in by_boundaries.items():
        pieces: list[list[Segment]] = [[] for _ in members]
        firsts = (0,) + tuple(b[1] for b in boundaries)
        lasts = tuple(b[0] for b in boundaries) + (x.size - 1,)
        for index, (first, last) in enumerate(zip(firsts, lasts)):
            span = slice(first, last + 1)
            part = ordered.subset(np.array(members), span)
            chosen = choose_one_parameter(x[span], part, options)
            change = None if index == 0 else ChangePoint(name, float(x[boundaries[index - 1][0]]), float(x[first]))
            status, note = "ok", ""
            if last - first + 1 < segmentation.min_segment_points:
                is_last = index == len(boundaries)
                low = x[boundaries[index - 1][0]] if index > 0 else x[first]  # from the change before it
                high = x[last] if is_last else x[boundaries[index][1]]  # to the change after it
                status, note = "insufficient", _too_few(name, low, high, last - first + 1,
                                                        segmentation.min_segment_points, is_last)
            fitted = _fitted_models([group[k] for k in members], chosen, part)
            for j, (model, chose_constant) in enumerate(zip(fitted, chosen.fallback.tolist())):
                fallback = chose_constant and last - first + 1 >= options.min_distinct_values  # else: too few
                text = "; ".join(filter(None, (note, _FALLBACK if fallback else "")))
                pieces[j].append(Segment(float(x[first]), float(x[last]), model, last - first + 1, status, change,
                                         text))
        for k, segments in zip(members, pieces):
            km = models[k]
            out[k] = KernelModel(km.kernel, km.metric, km.unit, "ok", segments[-1].model, km.n_points, km.noise,
                                 segments=tuple(segments))
    return out


def _checked(group: list[Series], models: list[KernelModel], chosen: Selection, values: np.ndarray,
             aggregate: str) -> list[KernelModel]:
    """`models` with a note appended where a model contradicts its measured values (`adequacy.contradictions`), in
    one batch for the unsegmented kernels of a group (a segmented kernel is checked on its last segment).
    `chosen` holds the unsegmented models' coefficients, `values` (K, n, r) the group's repetitions."""
    points = group[0].points
    whole = [k for k, km in enumerate(models) if km.model is not None and not km.segments]
    notes = [""] * len(models)
    if whole:
        fitted = np.empty((len(whole), points.shape[0]))
        by_spec: dict[ModelSpec, list[int]] = {}
        by_index: dict[int, list[int]] = {}
        for row, h in enumerate(chosen.index[whole].tolist()):
            by_index.setdefault(h, []).append(row)
        for h in sorted(by_index, key=lambda h: by_index[h][0]):  # equal specs together, in order of first use
            by_spec.setdefault(chosen.specs[h], []).extend(by_index[h])
        by_spec = {spec: sorted(rows) for spec, rows in by_spec.items()}
        kernels = np.array(whole)
        columns: dict[Term, np.ndarray] = {}  # each distinct term evaluated once, as `ModelSpec.basis` does
        ones = np.ones(points.shape[0])
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for spec, rows in by_spec.items():  # one basis per spec, not one per kernel
                basis = np.stack([ones] + [columns[term] if term in columns else
                                           columns.setdefault(term, term.evaluate(points)) for term in spec.terms],
                                 axis=1)
                fitted[rows] = chosen.coef[kernels[rows], : 1 + spec.n_terms] @ basis.T
        width = max(group[k].values.shape[1] for k in whole)
        found = contradictions(points, values[whole][:, :, :width], fitted, aggregate, group[0].parameters)
        for k, note in zip(whole, found):
            notes[k] = note
    for k, km in enumerate(models):
        if km.segments:
            notes[k] = model_contradiction(group[k], km, aggregate)
    return [replace(km, note="; ".join(filter(None, (km.note, note)))) if note else km
            for km, note in zip(models, notes)]


def _unmodelable(points: np.ndarray, parameters: tuple[str, ...], options: FitOptions) -> tuple[str, str] | None:
    """(status, note) explaining why kernels measured at `points` cannot be modeled, or None if they can."""
    for k, name in enumerate(parameters):
        count = distinct(points[:, k]).size
        if count < options.min_distinct_values:
            return ("insufficient", f"{count} distinct value(s) of {name}, a model needs at least "
                    f"{options.min_distinct_values}: measure more values of {name}")
        if np.any(points[:, k] < 0):
            return ("insufficient", f"parameter {name} has negative values; performance models need parameter "
                    "values >= 0")
    if len(parameters) > 1 and search_plan(len(parameters), options) is None:
        return ("insufficient", f"{len(parameters)} parameters vary ({', '.join(parameters)}); scalecheck models "
                f"at most {most_parameters()} together: model a subset, holding the others at one value (a file per value)")
    together = inseparable_parameters(points)
    if together:
        names = " and ".join(parameters[k] for k in together)
        return ("inseparable", f"{names} only grow together (every point changes them at once), so their effects "
                "cannot be separated: vary one while the others stay fixed, or model them as one parameter")
    return None


def _stack_values(group: list[Series]) -> np.ndarray:
    """(K, n, r) repetitions of the group's series, NaN-padded to the widest."""
    width = max(s.values.shape[1] for s in group)
    out = np.full((len(group), group[0].points.shape[0], width), np.nan)
    for k, s in enumerate(group):
        out[k, :, : s.values.shape[1]] = s.values
    return out


def _too_few(name: str, low: float, high: float, n_points: int, needed: int, last: bool) -> str:
    """Where to measure so that a segment spanning `low`..`high` (change intervals included) gets a model."""
    above = f" or above {name}={high:g}" if last else ""
    return (f"{n_points} point(s) in this segment, a reliable model needs {needed}: measure more points "
            f"between {name}={low:g} and {name}={high:g}{above}")


def _fitted_models(group: list[Series], chosen: Selection, stats: PointStats) -> list[FittedModel]:
    """FittedModels of a group's chosen hypotheses, with the fit scores computed for all kernels at once."""
    y = stats.y
    n_terms = chosen.n_terms
    in_sample, cross = smape(y, chosen.fitted), smape(y, chosen.loo)
    rss = np.sum((y - chosen.fitted) ** 2, axis=1)
    ar2 = adjusted_r2(y, chosen.fitted, n_terms + 1)
    n = int(y.shape[1])
    return [FittedModel(spec, s.parameters, coef[: 1 + size], Scores(a, b, c, d, n))
            for s, spec, coef, size, a, b, c, d in zip(group, chosen.chosen(), chosen.coef, n_terms.tolist(),
                                                       in_sample.tolist(), cross.tolist(), rss.tolist(),
                                                       ar2.tolist())]


_FALLBACK = ("the values are not constant, but no model with growing terms is eligible: they may fall as the "
             "parameters grow (allow decreasing models) or vary irregularly; modeled as constant")
