"""Plots of a kernel's measurements and models, as inline SVG for the HTML report.

matplotlib is imported only when a plot is drawn (so `scalecheck check` without `--html` never loads it), and only
through its object-oriented API (`Figure`), which keeps no global state between plots. The SVG keeps its text as
text (smaller, searchable), carries no date, and gets ids salted per plot, so that many plots can live in one
HTML page and the same input gives the same bytes.

Names from measurement files (kernels, units) never enter a plot: the page shows them, autoescaped, around it.
Parameter names are drawn as plain text (no mathtext), and matplotlib escapes the SVG it writes.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scalecheck.core.compare import Band
from scalecheck.data.measurement import Series
from scalecheck.data.outcome import KernelModel

GRID_POINTS = 80
COLORS = {"baseline": "#7a7a7a", "candidate": "#c0392b", "model": "#1f5fa8"}


@dataclass(frozen=True)
class PlotSide:
    """One commit's data and model of a kernel, as drawn: 'baseline', 'candidate', or 'model' (a single run)."""

    role: str
    series: Series
    model: KernelModel
    band: Band | None = None


def plot_axis(series: Series, target: Mapping[str, float] | None) -> tuple[int, np.ndarray]:
    """The parameter a plot runs along (the one with the most distinct values) and the grid along it.

    Other parameters are held at the values of the measured line with the most points; the grid runs from the
    smallest measured value to the target (or the largest measured value), evenly on a log scale.
    """
    points = series.points
    axis = int(np.argmax([np.unique(points[:, k]).size for k in range(points.shape[1])]))
    fixed = _fixed(points, axis)
    low, high = float(np.min(points[:, axis])), float(np.max(points[:, axis]))
    if target is not None:
        high = max(high, float(target[series.parameters[axis]]))
    line = np.geomspace(low, high, GRID_POINTS) if low > 0 else np.linspace(low, high, GRID_POINTS)
    grid = np.tile(fixed, (GRID_POINTS, 1))
    grid[:, axis] = line
    if target is not None and points.shape[1] == 1:
        grid[-1, axis] = float(target[series.parameters[axis]])
    return axis, grid


def _fixed(points: np.ndarray, axis: int) -> np.ndarray:
    """A point whose other coordinates are those of the line (along `axis`) with the most measured points."""
    others = [k for k in range(points.shape[1]) if k != axis]
    out = points[0].astype(float).copy()
    if others:
        counts = Counter(tuple(row[others]) for row in points)
        best = max(counts, key=lambda key: (counts[key], key))
        out[others] = best
    return out


def kernel_svg(sides: Sequence[PlotSide], target: Mapping[str, float] | None, *, salt: str) -> str:
    """An inline `<svg>` of the sides' measurements (median and range of repetitions), models, confidence bands,
    change points and the target scale. `salt` must differ between the plots of one page (it seeds the ids)."""
    import matplotlib

    from matplotlib import ticker
    from matplotlib.figure import Figure

    first = sides[-1].series
    axis, grid = plot_axis(first, target)
    name = first.parameters[axis]
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt, "font.size": 9,
                                "axes.spines.top": False, "axes.spines.right": False}):
        fig = Figure(figsize=(7.2, 3.4))
        fig.subplots_adjust(left=0.1, right=0.97, top=0.95, bottom=0.14)
        ax = fig.add_subplot()
        positive = True
        for side in sides:
            positive &= _draw_side(ax, side, axis, grid)
        if target is not None:
            ax.axvline(float(target[name]), color="#333333", linewidth=0.8, linestyle=":")
            ax.annotate("target", (float(target[name]), 1.0), xycoords=("data", "axes fraction"),
                        ha="right", va="top", fontsize=8, color="#333333", rotation=90)
        if np.all(grid[:, axis] > 0):
            ax.set_xscale("log", base=2 if _powers_of_two(first.points[:, axis]) else 10)
        if positive:
            ax.set_yscale("log")
        for which in (ax.xaxis, ax.yaxis):  # plain numbers: mathtext labels (2^4) cost most of a plot's time
            which.set_major_formatter(ticker.FuncFormatter(_tick))
            which.set_minor_formatter(ticker.NullFormatter())
        ax.set_xlabel(_axis_label(first.parameters, axis, grid[0]), parse_math=False)
        ax.set_ylabel(first.metric + (f" [{first.unit}]" if first.unit else ""), parse_math=False)
        ax.grid(True, which="major", linewidth=0.4, color="#dddddd")
        ax.legend(loc="upper left", fontsize=8, frameon=False)
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _draw_side(ax, side: PlotSide, axis: int, grid: np.ndarray) -> bool:  # type: ignore[no-untyped-def]
    """Draw one side; True when everything drawn is positive (a log y axis fits)."""
    color = COLORS.get(side.role, "#1f5fa8")
    who = "" if side.role == "model" else f"{side.role} "
    series, km = side.series, side.model
    others = [k for k in range(series.points.shape[1]) if k != axis]
    on_line = np.all(np.isclose(series.points[:, others], grid[0, others]), axis=1) if others else \
        np.ones(series.points.shape[0], dtype=bool)
    x = series.points[on_line, axis]
    values = series.values[on_line]
    median = np.nanmedian(values, axis=1)
    low, high = np.nanmin(values, axis=1), np.nanmax(values, axis=1)
    ax.errorbar(x, median, yerr=[median - low, high - median], fmt="o", markersize=3.5, color=color,
                elinewidth=1, capsize=2, label=f"{who}measured (median, range)")
    positive = bool(np.all(low > 0))
    line = grid[:, axis]
    measured_top = float(np.max(series.points[:, axis]))
    if km.segmented:
        for segment in km.segments[:-1]:
            inside = (line >= segment.start) & (line <= segment.end)
            ax.plot(line[inside], segment.model.predict(grid[inside]), color=color, linewidth=1.4)
        for cp in km.change_points:
            ax.axvline((cp.low + cp.high) / 2, color=color, linewidth=0.9, linestyle="--")
        last = km.segments[-1]
        start = last.start
    else:
        start = float(np.min(series.points[:, axis]))
    if side.band is not None:
        keep = line >= start
        ax.fill_between(line[keep], side.band.low[keep], side.band.high[keep], color=color, alpha=0.15,
                        linewidth=0, label=f"{who}confidence band")
        positive &= bool(np.all(side.band.low[keep] > 0))
    if km.model is not None:
        model_line = side.band.model if side.band is not None else km.model.predict(grid)
        inside, beyond = (line >= start) & (line <= measured_top), line >= measured_top
        style = "-" if side.role != "baseline" else "--"
        ax.plot(line[inside], model_line[inside], color=color, linewidth=1.6, linestyle=style,
                label=f"{who}model".strip())
        ax.plot(line[beyond], model_line[beyond], color=color, linewidth=1.2, linestyle=":")
        positive &= bool(np.all(model_line[line >= start] > 0))
    return positive


def _axis_label(parameters: Sequence[str], axis: int, point: np.ndarray) -> str:
    fixed = [f"{name} = {value:g}" for k, (name, value) in enumerate(zip(parameters, point)) if k != axis]
    return parameters[axis] + (f" ({', '.join(fixed)})" if fixed else "")


def _tick(value: float, _position: object) -> str:
    if value == round(value) and 1 <= abs(value) < 1e6:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _powers_of_two(values: np.ndarray) -> bool:
    logs = np.log2(values[values > 0])
    return bool(logs.size) and bool(np.allclose(logs, np.round(logs)))
