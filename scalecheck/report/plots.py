"""Plots of a kernel's measurements and models, as inline SVG for the HTML report.

The use case computes everything numeric a plot shows (`scalecheck.data.views.KernelPlot`: the grid, medians and
ranges, models and confidence bands); this module only draws. matplotlib is imported only when a plot is drawn
(so `scalecheck check` without `--html` never loads it), and only through its object-oriented API (`Figure`),
which keeps no global state between plots. The SVG keeps its text as text (smaller, searchable), carries no date,
and gets ids salted per plot, so that many plots can live in one HTML page and the same input gives the same bytes.

Names from measurement files (kernels) never enter a plot: the page shows them, autoescaped, around it. The axis
labels (parameter, metric and unit names) are made visible (`scalecheck.text.visible`) and drawn as plain text (no
mathtext); matplotlib escapes the SVG it writes.
"""

from __future__ import annotations

import io
import math

import numpy as np

from scalecheck.data.views import KernelPlot, PlotSide
from scalecheck.text import visible

COLORS = {"baseline": "#7a7a7a", "candidate": "#c0392b", "model": "#1f5fa8"}
# On a linear axis, values beyond this magnitude are left out of a plot: matplotlib's margins and ticks around them
# would overflow (a log axis takes any positive float; its arithmetic is kept quiet instead).
LINEAR_LIMIT = 1e300


def kernel_svg(plot: KernelPlot, *, salt: str) -> str:
    """An inline `<svg>` of the sides' measurements (median and range of repetitions), models, confidence bands,
    change points and the target scale. `salt` must differ between the plots of one page (it seeds the ids).

    What cannot be drawn is left out: values that are not finite, and on a linear axis values beyond
    `LINEAR_LIMIT`; an axis with nothing left to draw stays linear."""
    import matplotlib

    from matplotlib import ticker
    from matplotlib.figure import Figure

    positive = all(_positive(side, plot.line) for side in plot.sides)  # a log y axis fits
    limits = (math.inf if plot.log_base is not None else LINEAR_LIMIT, math.inf if positive else LINEAR_LIMIT)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt, "font.size": 9,
                                "axes.spines.top": False, "axes.spines.right": False}), np.errstate(all="ignore"):
        fig = Figure(figsize=(7.2, 3.4))
        fig.subplots_adjust(left=0.1, right=0.97, top=0.95, bottom=0.14)
        ax = fig.add_subplot()
        if plot.log_base is not None:  # before drawing: a linear axis over 300 decades has a singular transform
            ax.set_xscale("log", base=plot.log_base)
        if positive:
            ax.set_yscale("log")
        if sum(_draw_side(ax, side, plot.line, limits) for side in plot.sides):
            if plot.log_base is not None:
                _keep_in_range(ax.set_xlim, ax.dataLim.intervalx)
            if positive:
                _keep_in_range(ax.set_ylim, ax.dataLim.intervaly)
        else:  # nothing to draw: a log axis would have no limits
            ax.set_xscale("linear")
            ax.set_yscale("linear")
        if plot.target is not None and _drawable(np.array([plot.target]), limit=limits[0])[0]:
            ax.axvline(plot.target, color="#333333", linewidth=0.8, linestyle=":")
            ax.annotate("target", (plot.target, 1.0), xycoords=("data", "axes fraction"),
                        ha="right", va="top", fontsize=8, color="#333333", rotation=90)
        for which in (ax.xaxis, ax.yaxis):  # plain numbers: mathtext labels (2^4) cost most of a plot's time
            which.set_major_formatter(ticker.FuncFormatter(_tick))
            which.set_minor_formatter(ticker.NullFormatter())
        ax.set_xlabel(visible(plot.x_label), parse_math=False)
        ax.set_ylabel(visible(plot.y_label), parse_math=False)
        ax.grid(True, which="major", linewidth=0.4, color="#dddddd")
        ax.legend(loc="upper left", fontsize=8, frameon=False)
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _positive(side: PlotSide, line: np.ndarray) -> bool:
    """Everything of `side` that can be drawn is positive: a log y axis fits it."""
    shown = line >= side.start
    parts = [side.low, side.median, side.high] + [values[shown] for values in (side.band_low, side.band_high, side.model)
                                                  if values is not None]
    return all(bool(np.all(values[np.isfinite(values)] > 0)) for values in parts)


def _draw_side(ax, side: PlotSide, line: np.ndarray,  # type: ignore[no-untyped-def]
               limits: tuple[float, float]) -> int:
    """Draw one side, leaving out what cannot be drawn (`_drawable`, with the x and y axes' `limits`); the number
    of points drawn."""
    color = COLORS.get(side.role, "#1f5fa8")
    who = "" if side.role == "model" else f"{side.role} "
    x_limit, y_limit = limits
    shown = _drawable(side.x, limit=x_limit) & _drawable(side.median, side.low, side.high, limit=y_limit)
    median, low, high = side.median[shown], side.low[shown], side.high[shown]
    ax.errorbar(side.x[shown], median, yerr=[np.maximum(median - low, 0.0), np.maximum(high - median, 0.0)],
                fmt="o", markersize=3.5, color=color, elinewidth=1, capsize=2, label=f"{who}measured (median, range)")
    drawn = int(np.sum(shown))
    for x, y in side.segments:
        keep = _drawable(x, limit=x_limit) & _drawable(y, limit=y_limit)
        ax.plot(x[keep], y[keep], color=color, linewidth=1.4)
    for where in side.change_points:
        if _drawable(np.array([where]), limit=x_limit)[0]:
            ax.axvline(where, color=color, linewidth=0.9, linestyle="--")
    on_line = _drawable(line, limit=x_limit)
    if side.band_low is not None and side.band_high is not None:
        keep = (line >= side.start) & on_line & _drawable(side.band_low, side.band_high, limit=y_limit)
        ax.fill_between(line[keep], side.band_low[keep], side.band_high[keep], color=color, alpha=0.15,
                        linewidth=0, label=f"{who}confidence band" + (f" ({side.band_note})" if side.band_note else ""))
        drawn += int(np.sum(keep))
    if side.model is not None:
        model = on_line & _drawable(side.model, limit=y_limit)
        inside = (line >= side.start) & (line <= side.measured_top) & model
        beyond = (line >= side.measured_top) & model
        style = "-" if side.role != "baseline" else "--"
        ax.plot(line[inside], side.model[inside], color=color, linewidth=1.6, linestyle=style,
                label=f"{who}model".strip())
        ax.plot(line[beyond], side.model[beyond], color=color, linewidth=1.2, linestyle=":")
        drawn += int(np.sum(inside | beyond))
    return drawn


def _keep_in_range(set_limits, interval: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    """On a log axis whose data come near the ends of the floats, the limits with matplotlib's margins (5% of the
    decades shown) would overflow: set them here, with the margins cut at the ends. Other axes keep matplotlib's."""
    low, high = (float(v) for v in interval)
    if not (0 < low <= high < math.inf) or (1e-300 <= low and high <= 1e300):
        return
    first, last = math.log10(low), math.log10(high)
    margin = 0.05 * (last - first) or 0.5
    set_limits(10 ** max(first - margin, -307.0), 10 ** min(last + margin, 308.0))


def _drawable(*arrays: np.ndarray, limit: float) -> np.ndarray:
    """Where every one of `arrays` (same shape) is finite and at most `limit` in magnitude."""
    keep = np.ones(np.shape(arrays[0]), dtype=bool)
    for values in arrays:
        magnitude = np.abs(np.asarray(values, dtype=float))
        keep &= np.isfinite(magnitude) & (magnitude <= limit)
    return keep


def _tick(value: float, _position: object) -> str:
    if not math.isfinite(value):  # a tick matplotlib placed beyond the range of floats, near the largest values
        return ""
    if value == round(value) and 1 <= abs(value) < 1e6:
        return f"{value:,.0f}"
    return f"{value:.3g}"
