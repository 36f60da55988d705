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

import numpy as np

from scalecheck.data.views import KernelPlot, PlotSide
from scalecheck.text import visible

COLORS = {"baseline": "#7a7a7a", "candidate": "#c0392b", "model": "#1f5fa8"}


def kernel_svg(plot: KernelPlot, *, salt: str) -> str:
    """An inline `<svg>` of the sides' measurements (median and range of repetitions), models, confidence bands,
    change points and the target scale. `salt` must differ between the plots of one page (it seeds the ids)."""
    import matplotlib

    from matplotlib import ticker
    from matplotlib.figure import Figure

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt, "font.size": 9,
                                "axes.spines.top": False, "axes.spines.right": False}):
        fig = Figure(figsize=(7.2, 3.4))
        fig.subplots_adjust(left=0.1, right=0.97, top=0.95, bottom=0.14)
        ax = fig.add_subplot()
        positive = True
        for side in plot.sides:
            positive &= _draw_side(ax, side, plot.line)
        if plot.target is not None:
            ax.axvline(plot.target, color="#333333", linewidth=0.8, linestyle=":")
            ax.annotate("target", (plot.target, 1.0), xycoords=("data", "axes fraction"),
                        ha="right", va="top", fontsize=8, color="#333333", rotation=90)
        if plot.log_base is not None:
            ax.set_xscale("log", base=plot.log_base)
        if positive:
            ax.set_yscale("log")
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


def _draw_side(ax, side: PlotSide, line: np.ndarray) -> bool:  # type: ignore[no-untyped-def]
    """Draw one side; True when everything drawn is positive (a log y axis fits)."""
    color = COLORS.get(side.role, "#1f5fa8")
    who = "" if side.role == "model" else f"{side.role} "
    ax.errorbar(side.x, side.median, yerr=[side.median - side.low, side.high - side.median], fmt="o",
                markersize=3.5, color=color, elinewidth=1, capsize=2, label=f"{who}measured (median, range)")
    positive = bool(np.all(side.low > 0))
    for x, y in side.segments:
        ax.plot(x, y, color=color, linewidth=1.4)
    for where in side.change_points:
        ax.axvline(where, color=color, linewidth=0.9, linestyle="--")
    if side.band_low is not None and side.band_high is not None:
        keep = line >= side.start
        ax.fill_between(line[keep], side.band_low[keep], side.band_high[keep], color=color, alpha=0.15,
                        linewidth=0, label=f"{who}confidence band")
        positive &= bool(np.all(side.band_low[keep] > 0))
    if side.model is not None:
        inside, beyond = (line >= side.start) & (line <= side.measured_top), line >= side.measured_top
        style = "-" if side.role != "baseline" else "--"
        ax.plot(line[inside], side.model[inside], color=color, linewidth=1.6, linestyle=style,
                label=f"{who}model".strip())
        ax.plot(line[beyond], side.model[beyond], color=color, linewidth=1.2, linestyle=":")
        positive &= bool(np.all(side.model[line >= side.start] > 0))
    return positive


def _tick(value: float, _position: object) -> str:
    if value == round(value) and 1 <= abs(value) < 1e6:
        return f"{value:,.0f}"
    return f"{value:.3g}"
