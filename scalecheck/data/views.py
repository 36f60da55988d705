"""View records of the reports, the records the use cases hand to the renderers.

`CheckContext` (what a check compared and how), `HistoryEntry` (one measured commit's models), and the plots of
the HTML reports with everything numeric already computed: `KernelPlot` (the grid, labels and axis scale of one
kernel's plot) made of `PlotSide`s (measured medians and ranges, the model and its confidence band along the grid,
earlier segments and change points), collected in `Plots`. The bands come from `scalecheck.core.compare`, which
the use cases (`scalecheck.api`) call; the renderers only draw. `report_order` is the one order of a check's
kernels that the report lists and the use case plots.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from scalecheck.data.measurement import Series, distinct
from scalecheck.data.outcome import KernelModel, ModelTable

if TYPE_CHECKING:  # annotations only: a modeling run does not load the verdict's records
    from scalecheck.data.verdict import Finding, KernelComparison, Verdict

Key = tuple[str, str]  # (kernel, metric)
GRID_POINTS = 80


@dataclass(frozen=True)
class CheckContext:
    """What a check compared and with which settings, for the reader of a report."""

    baseline: str  # e.g. "commit 1a2b3c4 (merge-base of HEAD and origin/main)" or "file base.json"
    candidate: str
    target_note: str = ""  # how the target scale was chosen
    settings: Mapping[str, object] = field(default_factory=dict)
    candidate_commit: str = ""  # the commit measured (GITHUB_SHA, or HEAD when the baseline came from git)
    baseline_machine: str = ""  # one line naming the machine that measured each side ("" when not known)
    candidate_machine: str = ""
    held_reason: str = ""  # why findings that would fail were held back ("" when the sides are comparable)
    same_job: str = ""  # how a same-job run measured both sides ("" for stored measurements)
    notices: tuple[str, ...] = ()  # what the reader must know about the verdict: no baseline yet, findings held back

    @property
    def candidate_text(self) -> str:
        """The candidate's label, with its commit when known."""
        return self.candidate + (f" (commit {self.candidate_commit[:7]})" if self.candidate_commit else "")

    def measured(self) -> list[tuple[str, str]]:
        """How and where the two sides were measured, as (label, text) pairs for every report."""
        if self.same_job:
            return [("measured", self.same_job)]
        base, cand = self.baseline_machine, self.candidate_machine
        if not (base or cand):
            return []
        if base == cand:
            return [("machine", f"{base} (both sides)")]
        return [("machines", f"baseline {base or 'unknown'}; candidate {cand or 'unknown'}")]


@dataclass(frozen=True)
class HistoryEntry:
    """One measured commit and its models."""

    sha: str
    description: str  # "1a2b3c4 subject (date)"
    table: ModelTable


# --- plots --------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class PlotSide:
    """One commit's data and model of a kernel, as drawn: 'baseline', 'candidate', or 'model' (a single run).

    Arrays of length n describe the measured points on the plotted line, arrays of length g the grid.
    """

    role: str
    x: np.ndarray  # (n,) measured values of the plotted parameter
    median: np.ndarray  # (n,) median of the repetitions at each
    low: np.ndarray  # (n,) smallest repetition
    high: np.ndarray  # (n,) largest repetition
    start: float  # where the model line begins: the last segment's start, else the smallest measured value
    measured_top: float  # the largest measured value (the model line is dotted beyond it)
    model: np.ndarray | None = None  # (g,) the model along the grid (None: no model)
    band_low: np.ndarray | None = None  # (g,) the confidence band (None: not computed)
    band_high: np.ndarray | None = None
    band_note: str = ""  # said beside the band: how often the resamples select another model
    segments: tuple[tuple[np.ndarray, np.ndarray], ...] = ()  # (x, y) along the grid of each earlier segment
    change_points: tuple[float, ...] = ()  # where the vertical change-point lines go


@dataclass(frozen=True, eq=False)
class KernelPlot:
    """One kernel's plot: its sides along a grid of the parameter with the most distinct values."""

    x_label: str  # the parameter, and the values the others are held at
    y_label: str  # the metric and its unit
    line: np.ndarray  # (g,) the grid: smallest measured value to the target, evenly on a log scale
    target: float | None  # where the target line goes (None: no target)
    log_base: int | None  # of the x axis: 2 for powers of two, else 10; None for a linear axis
    sides: tuple[PlotSide, ...]


@dataclass(frozen=True)
class Plots:
    """The plots of an HTML report: at most `limit` kernels were to be plotted; `kernels` are those that are."""

    limit: int = 0
    kernels: Mapping[Key, KernelPlot] = field(default_factory=dict)


def plot_grid(series: Series, target: Mapping[str, float] | None) -> tuple[int, np.ndarray]:
    """The parameter a plot runs along (the one with the most distinct values) and the grid along it, (g, m).

    Other parameters are held at the values of the measured line with the most points; the grid runs from the
    smallest measured value to the target (or the largest measured value), evenly on a log scale.
    """
    points = series.points
    axis = int(np.argmax([distinct(points[:, k]).size for k in range(points.shape[1])]))
    fixed = _fixed(points, axis)
    low, high = float(np.min(points[:, axis])), float(np.max(points[:, axis]))
    if target is not None:
        high = max(high, float(target[series.parameters[axis]]))
    with np.errstate(over="ignore", invalid="ignore"):  # near the largest float, a step can round beyond it
        line = np.geomspace(low, high, GRID_POINTS) if low > 0 else np.linspace(low, high, GRID_POINTS)
    line = np.clip(np.nan_to_num(line, nan=high), low, high)
    grid = np.tile(fixed, (GRID_POINTS, 1))
    grid[:, axis] = line
    if target is not None and points.shape[1] == 1:
        grid[-1, axis] = float(target[series.parameters[axis]])
    return axis, grid


def _fixed(points: np.ndarray, axis: int) -> np.ndarray:
    """A point whose other coordinates are those of the line (along `axis`) with the most measured points."""
    others = [k for k in range(points.shape[1]) if k != axis]
    out: np.ndarray = points[0].astype(float).copy()
    if others:
        counts = Counter(tuple(row[others]) for row in points)
        best = max(counts, key=lambda key: (counts[key], key))
        out[others] = best
    return out


def plot_side(role: str, series: Series, km: KernelModel, axis: int, grid: np.ndarray, *,
              model: np.ndarray | None = None, band: tuple[np.ndarray, np.ndarray] | None = None,
              band_note: str = "") -> PlotSide:
    """What one side draws along `grid` (from `plot_grid`): `model` and `band` (low, high) are the model and its
    confidence band along the grid when computed (`scalecheck.core.compare.prediction_band`); without `model`, the
    kernel's model is evaluated along the grid."""
    others = [k for k in range(series.points.shape[1]) if k != axis]
    on_line = np.all(np.isclose(series.points[:, others], grid[0, others]), axis=1) if others else \
        np.ones(series.points.shape[0], dtype=bool)
    values = series.values[on_line]
    line = grid[:, axis]
    segments: tuple[tuple[np.ndarray, np.ndarray], ...] = ()
    change_points: tuple[float, ...] = ()
    if km.segmented:
        inside = [(line >= s.start) & (line <= s.end) for s in km.segments[:-1]]
        segments = tuple((line[keep], s.model.predict(grid[keep])) for s, keep in zip(km.segments[:-1], inside))
        change_points = tuple((cp.low + cp.high) / 2 for cp in km.change_points)
        start = km.segments[-1].start
    else:
        start = float(np.min(series.points[:, axis]))
    if model is None and km.model is not None:
        model = km.model.predict(grid)
    return PlotSide(role, series.points[on_line, axis], np.nanmedian(values, axis=1), np.nanmin(values, axis=1),
                    np.nanmax(values, axis=1), start, float(np.max(series.points[:, axis])),
                    model if km.model is not None else None, band[0] if band else None, band[1] if band else None,
                    band_note, segments, change_points)


def kernel_plot(series: Series, axis: int, grid: np.ndarray, target: Mapping[str, float] | None,
                sides: Sequence[PlotSide]) -> KernelPlot:
    """The plot of `sides` along `grid`; `series` (the last side's) names the axes."""
    name = series.parameters[axis]
    fixed = [f"{p} = {value:g}" for k, (p, value) in enumerate(zip(series.parameters, grid[0])) if k != axis]
    x_label = name + (f" ({', '.join(fixed)})" if fixed else "")
    y_label = series.metric + (f" [{series.unit}]" if series.unit else "")
    line = grid[:, axis]
    log_base = (2 if _powers_of_two(series.points[:, axis]) else 10) if np.all(line > 0) else None
    return KernelPlot(x_label, y_label, line, float(target[name]) if target is not None else None, log_base,
                      tuple(sides))


def _powers_of_two(values: np.ndarray) -> bool:
    logs = np.log2(values[values > 0])
    return bool(logs.size) and bool(np.allclose(logs, np.round(logs)))


# --- the order of a check's kernels -------------------------------------------------------------------------------

def findings_by_kernel(verdict: Verdict) -> dict[Key, list[Finding]]:
    """The findings of each (kernel, metric), worst first, in the verdict's order of their worst finding."""
    by_kernel: dict[Key, list[Finding]] = {}
    for f in verdict.findings:
        by_kernel.setdefault((f.kernel, f.metric), []).append(f)
    return by_kernel


def report_order(verdict: Verdict) -> list[KernelComparison]:
    """Every compared kernel, as a report lists (and plots) them: those with findings first, worst first, then by
    ratio at the target (largest first) and name."""
    order = {key: i for i, key in enumerate(findings_by_kernel(verdict))}
    return sorted(verdict.comparison.kernels, key=lambda k: (order.get((k.kernel, k.metric), len(order)),
                                                             -(k.ratio or 0.0), k.kernel, k.metric))
