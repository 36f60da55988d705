"""Model every (kernel, metric): group series that share a point set, fit each group in one batch.

Single-parameter series go through `search.select` directly; several parameters through the hierarchical search
in `multi`. Series with too few distinct parameter values, or whose parameters only grow together, get a
`KernelModel` that says why instead of a model, so that one bad kernel never stops the others.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scalecheck.core.fit import adjusted_r2, smape
from scalecheck.core.multi import fit_multi_parameter, inseparable_parameters
from scalecheck.core.search import (Choice, FitOptions, PointStats, point_stats, refined_specs, select,
                                    single_parameter_specs)
from scalecheck.data.measurement import Series
from scalecheck.data.outcome import FittedModel, KernelModel, Scores


def fit_kernels(series: Sequence[Series], options: FitOptions = FitOptions()) -> list[KernelModel]:
    """One `KernelModel` per series, in the order given.

    Cost: one batched fit per distinct point set (single parameter), plus the hierarchical stages for several
    parameters; no Python loop over (kernel, hypothesis) pairs.
    """
    results: list[KernelModel | None] = [None] * len(series)
    groups: dict[tuple[bytes, tuple[int, ...], tuple[str, ...]], list[int]] = {}
    for index, s in enumerate(series):
        groups.setdefault((s.points.tobytes(), s.points.shape, s.parameters), []).append(index)
    for members in groups.values():
        first = series[members[0]]
        problem = _unmodelable(first.points, first.parameters, options)
        if problem is not None:
            for i in members:
                s = series[i]
                results[i] = KernelModel(s.kernel, s.metric, s.unit, problem[0], None, int(s.points.shape[0]),
                                         float("nan"), problem[1])
            continue
        group = [series[i] for i in members]
        stats = point_stats(_stack_values(group), options.aggregate)
        if first.points.shape[1] == 1:
            space = refined_specs if options.refine else single_parameter_specs
            choices = select(first.points, space(first.points[:, 0], options), stats, options)
        else:
            choices = fit_multi_parameter(first.points, stats, options)
        for i, km in zip(members, _kernel_models(group, choices, stats)):
            results[i] = km
    return [km for km in results if km is not None]


def _unmodelable(points: np.ndarray, parameters: tuple[str, ...], options: FitOptions) -> tuple[str, str] | None:
    """(status, note) explaining why kernels measured at `points` cannot be modeled, or None if they can."""
    for k, name in enumerate(parameters):
        distinct = np.unique(points[:, k]).size
        if distinct < options.min_distinct_values:
            return ("insufficient", f"{distinct} distinct value(s) of {name}, a model needs at least "
                    f"{options.min_distinct_values}: measure more values of {name}")
        if np.any(points[:, k] < 0):
            return ("insufficient", f"parameter {name} has negative values; performance models need parameter "
                    "values >= 0")
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


def _kernel_models(group: list[Series], choices: list[Choice], stats: PointStats) -> list[KernelModel]:
    """KernelModels of a group, with the fit scores computed for all kernels at once."""
    y = stats.y
    fitted = np.stack([c.fitted for c in choices])  # (K, n)
    loo = np.stack([c.loo for c in choices])
    n_coefficients = np.array([c.spec.n_terms + 1 for c in choices])
    in_sample, cross = smape(y, fitted), smape(y, loo)
    rss = np.sum((y - fitted) ** 2, axis=1)
    ar2 = adjusted_r2(y, fitted, n_coefficients)
    noise = np.sqrt(stats.sigma2)
    out = []
    for k, (s, choice) in enumerate(zip(group, choices)):
        scores = Scores(float(in_sample[k]), float(cross[k]), float(rss[k]), float(ar2[k]), int(y.shape[1]))
        note = _FALLBACK if choice.fallback else ""
        out.append(KernelModel(s.kernel, s.metric, s.unit, "ok", FittedModel(choice.spec, s.parameters, choice.coef,
                                                                             scores), int(y.shape[1]),
                               float(noise[k]), note))
    return out


_FALLBACK = ("the values are not constant, but no model with growing terms is eligible: they may fall as the "
             "parameters grow (allow decreasing models) or vary irregularly; modeled as constant")
