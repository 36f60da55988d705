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
from scalecheck.core.search import Choice, FitOptions, point_stats, refined_specs, select, single_parameter_specs
from scalecheck.data.measurement import Series
from scalecheck.data.outcome import FittedModel, KernelModel, Scores


def fit_kernels(series: Sequence[Series], options: FitOptions = FitOptions()) -> list[KernelModel]:
    """One `KernelModel` per series, in the order given.

    Cost: one batched fit per distinct point set (single parameter), plus the hierarchical stages for several
    parameters; no Python loop over (kernel, hypothesis) pairs.
    """
    results: dict[int, KernelModel] = {}
    groups: dict[bytes, list[int]] = {}
    for index, s in enumerate(series):
        problem = _unmodelable(s, options)
        if problem is not None:
            results[index] = problem
        else:
            groups.setdefault(s.points.tobytes() + bytes(str(s.points.shape), "ascii"), []).append(index)
    for members in groups.values():
        group = [series[i] for i in members]
        points = group[0].points
        stats = point_stats(_stack_values(group), options.aggregate)
        if points.shape[1] == 1:
            space = refined_specs if options.refine else single_parameter_specs
            choices = select(points, space(points[:, 0], options), stats, options)
        else:
            choices = fit_multi_parameter(points, stats, options)
        for i, kernel_index, choice in zip(range(len(members)), members, choices):
            results[kernel_index] = _kernel_model(series[kernel_index], choice, stats.y[i], stats.sigma2[i])
    return [results[i] for i in range(len(series))]


def _unmodelable(s: Series, options: FitOptions) -> KernelModel | None:
    """A KernelModel explaining why `s` cannot be modeled, or None if it can."""
    n = s.points.shape[0]
    for k, name in enumerate(s.parameters):
        distinct = np.unique(s.points[:, k]).size
        if distinct < options.min_distinct_values:
            return _without_model(s, "insufficient", f"{distinct} distinct value(s) of {name}, a model needs at "
                                  f"least {options.min_distinct_values}: measure more values of {name}")
        if np.any(s.points[:, k] < 0):
            return _without_model(s, "insufficient", f"parameter {name} has negative values; performance models "
                                  "need parameter values >= 0")
    together = inseparable_parameters(s.points)
    if together:
        names = " and ".join(s.parameters[k] for k in together)
        return _without_model(s, "inseparable", f"{names} only grow together (every point changes them at once), so "
                              "their effects cannot be separated: vary one while the others stay fixed, or model "
                              "them as one parameter")
    del n
    return None


def _without_model(s: Series, status: str, note: str) -> KernelModel:
    return KernelModel(s.kernel, s.metric, s.unit, status, None, int(s.points.shape[0]), float("nan"), note)


def _stack_values(group: list[Series]) -> np.ndarray:
    """(K, n, r) repetitions of the group's series, NaN-padded to the widest."""
    width = max(s.values.shape[1] for s in group)
    out = np.full((len(group), group[0].points.shape[0], width), np.nan)
    for k, s in enumerate(group):
        out[k, :, : s.values.shape[1]] = s.values
    return out


def _kernel_model(s: Series, choice: Choice, y: np.ndarray, sigma2: float) -> KernelModel:
    n = y.size
    scores = Scores(
        smape=float(smape(y, choice.fitted)),
        cv_smape=float(smape(y, choice.loo)),
        rss=float(np.sum((y - choice.fitted) ** 2)),
        ar2=float(adjusted_r2(y, choice.fitted, choice.spec.n_terms + 1)),
        n_points=n,
    )
    model = FittedModel(choice.spec, s.parameters, choice.coef, scores)
    note = ""
    if choice.fallback:
        note = ("no increasing model fits (the values fall as the parameters grow); modeled as constant: allow "
                "decreasing models to fit the trend")
    noise = float(np.sqrt(sigma2)) if np.isfinite(sigma2) else float("nan")
    return KernelModel(s.kernel, s.metric, s.unit, "ok", model, n, noise, note)
