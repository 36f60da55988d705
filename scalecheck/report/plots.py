"""Plots of a kernel's measurements and models, as inline SVG for the HTML report, written directly.

The use case computes everything numeric a plot shows (`scalecheck.data.views.KernelPlot`: the grid, medians and
ranges, models and confidence bands); this module only draws: it chooses the axes (log or linear, limits, round
ticks), maps the values to pixels and writes the few SVG elements a plot needs (points with range bars, model
lines, shaded bands, change-point and target lines, axes, labels, a legend). The same input gives the same bytes.

Why not matplotlib. Measured on a seeded 300-kernel check (benchmarks/report_scale.py's data, 20 plots, 2 shared
cores): matplotlib 3.11 (object-oriented `Figure`, SVG backend) took 133 ms a plot, plus 0.7 s to import, so the
plots were 96% of the HTML report's rendering (2.8 s); 76% of a plot's time is `savefig` (drawing and writing the
SVG), so reusing one figure across plots would save a sixth at most. This writer takes 0.6 ms a plot (the
rendering 0.06 s); its SVG is a quarter the size (10 kB against 40 kB a plot of two sides), and a fresh install without
matplotlib's stack (matplotlib, fontTools, pillow, kiwisolver, contourpy, pyparsing, cycler, python-dateutil) is
249 MB instead of 350 MB (Python 3.11, pip, numpy 2.4, scipy 1.17). scalecheck therefore does not depend on
matplotlib at all.

Names from measurement files (kernels) never enter a plot: the page shows them, autoescaped, around it. Every text
a plot holds (axis labels from parameter, metric and unit names; legend entries; tick labels; the title) is made
visible (`scalecheck.text.visible`) and XML-escaped (`_text`, `_fit`); no value goes into the SVG unescaped.
Text widths are estimated (no font metrics): labels too long for their axis are cut with an ellipsis and shown
whole in a tooltip.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scalecheck.data.views import KernelPlot, PlotSide
from scalecheck.text import visible

COLORS = {"baseline": "#7a7a7a", "candidate": "#c0392b", "model": "#1f5fa8"}
# On a linear axis, values beyond this magnitude are left out of a plot: the margins and tick steps around them would
# overflow. A log axis takes any positive float.
LINEAR_LIMIT = 1e300
WIDTH, AREA_HEIGHT = 720, 250  # px: the whole plot, and the height of its data area
FONT, SMALL = 12, 11  # px: axis labels; tick labels and legend
MAX_TICKS = 8
_LOG_RANGE = (math.log10(5e-324), math.log10(1.7976931348623157e308))  # of the smallest and largest positive floats
_EM = 0.56  # a sans-serif character's mean advance in em: an estimate that lays out texts without measuring them
_STEPS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000)  # between the exponents of a log axis' ticks
Line = tuple[np.ndarray, np.ndarray]  # (x, y) data values, each (k,)
Entry = tuple[str, str, str, str]  # a legend entry: swatch ("points", "band" or "line"), colour, dashes, text


def kernel_svg(plot: KernelPlot, *, salt: str) -> str:
    """An inline `<svg>` of the sides' measurements (median and range of repetitions), models, confidence bands,
    change points and the target scale. `salt` names the plot (its id is `<salt>-plot`): it must differ between
    the plots of one page.

    What cannot be drawn is left out: values that are not finite, on a log axis values that are not positive, and on
    a linear axis values beyond `LINEAR_LIMIT`; with nothing left to draw, both axes are linear."""
    x_log, y_log = plot.log_base is not None, all(_positive(side, plot.line) for side in plot.sides)
    drawn = [_drawn(side, plot.line, x_log, y_log) for side in plot.sides]
    if not any(d.count for d in drawn):  # a log axis needs a range
        x_log = y_log = False
        drawn = [_drawn(side, plot.line, x_log, y_log) for side in plot.sides]
    target = plot.target if plot.target is not None and _drawable(np.array([plot.target]), log=x_log)[0] else None
    xs = np.concatenate([np.zeros(0) if target is None else np.array([target])] + [d.xs() for d in drawn])
    ys = np.concatenate([np.zeros(0)] + [d.ys() for d in drawn])
    x_scale, y_scale = _scale(xs, x_log, plot.log_base or 10), _scale(ys, y_log, 10)
    left = math.ceil(FONT + 12 + max((_width(label, SMALL) for _, label in y_scale.ticks), default=0) + 8)
    right = WIDTH - 24  # room for half of the last x tick label
    rows = _legend_rows([d.legend() for d in drawn], left, right)
    top = 16 + 18 * len(rows)
    frame = Frame(left, top, right - left, AREA_HEIGHT, x_scale, y_scale)
    height = top + AREA_HEIGHT + 46
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" id="{_text(salt)}-plot" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" role="img" font-family="system-ui, sans-serif" font-size="{SMALL}">',
           f"<title>{_text(f'{plot.y_label} against {plot.x_label}')}</title>", _grid(frame)]
    out += [_band(frame, d) for d in drawn if d.band is not None and d.band[0].size]
    for d in drawn:
        out += _side(frame, d)
    if target is not None:
        col = frame.cols(np.array([target]))[0]
        out += [f'<path class="target" d="M{col:.1f},{top}V{frame.bottom}" stroke="#333333" stroke-width="0.8" '
                f'stroke-dasharray="1.5 2" fill="none"/>',
                f'<text class="target" transform="translate({col - 4:.1f},{top + 3}) rotate(-90)" text-anchor="end" '
                f'fill="#333333" stroke="#ffffff" stroke-width="3" paint-order="stroke">target</text>']
    out += _axes(frame, plot.x_label, plot.y_label) + _legend(rows) + ["</svg>"]
    return "\n".join(out)


# --- what is drawn --------------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Drawn:
    """The parts of one side that can be drawn (`_drawable`), as data values."""

    role: str
    points: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # x, median, low, high: (n,) each
    segments: tuple[Line, ...]  # the earlier segments' models
    change_points: np.ndarray  # (c,) where each is
    band: tuple[np.ndarray, np.ndarray, np.ndarray] | None  # x, low, high along the grid: (k,) each
    band_note: str
    model: Line | None  # the model up to the largest measured value (None: the side has no model)
    beyond: Line | None  # the model beyond it (dotted)

    @property
    def color(self) -> str:
        return COLORS.get(self.role, COLORS["model"])

    @property
    def count(self) -> int:
        """How many measured, band and model points are drawn."""
        parts = [part[0].size for part in (self.band, self.model, self.beyond) if part is not None]
        return self.points[0].size + sum(parts)

    def xs(self) -> np.ndarray:
        """Every x value drawn."""
        parts = [self.points[0], self.change_points] + [x for x, _ in self.segments]
        return np.concatenate(parts + [part[0] for part in (self.band, self.model, self.beyond) if part is not None])

    def ys(self) -> np.ndarray:
        """Every y value drawn."""
        parts = list(self.points[1:]) + [y for _, y in self.segments] + list(self.band[1:] if self.band else ())
        return np.concatenate(parts + [line[1] for line in (self.model, self.beyond) if line is not None])

    def legend(self) -> list[Entry]:
        """The legend entry of each kind of part drawn."""
        who = "" if self.role == "model" else f"{self.role} "
        entries = []
        if self.points[0].size:
            entries.append(("points", self.color, "", f"{who}measured (median, range)"))
        if self.band is not None and self.band[0].size:
            entries.append(("band", self.color, "", f"{who}confidence band"
                            + (f" ({self.band_note})" if self.band_note else "")))
        if any(line is not None and line[0].size for line in (self.model, self.beyond)):
            entries.append(("line", self.color, _dashes(self.role), f"{who}model".strip()))
        return entries


def _drawn(side: PlotSide, line: np.ndarray, x_log: bool, y_log: bool) -> Drawn:
    """What can be drawn of `side` (along the grid `line`) on axes of these scales."""
    shown = _drawable(side.x, log=x_log) & _drawable(side.median, side.low, side.high, log=y_log)
    median = side.median[shown]
    points = (side.x[shown], median, np.minimum(side.low[shown], median), np.maximum(side.high[shown], median))
    segments = tuple((x[keep], y[keep]) for x, y in side.segments
                     for keep in [_drawable(x, log=x_log) & _drawable(y, log=y_log)])
    change_points = np.array(side.change_points, dtype=float)
    on_line = _drawable(line, log=x_log)
    band = model = beyond = None
    if side.band_low is not None and side.band_high is not None:
        keep = (line >= side.start) & on_line & _drawable(side.band_low, side.band_high, log=y_log)
        band = (line[keep], side.band_low[keep], side.band_high[keep])
    if side.model is not None:
        drawable = on_line & _drawable(side.model, log=y_log)
        inside = (line >= side.start) & (line <= side.measured_top) & drawable
        outside = (line >= side.measured_top) & drawable
        model, beyond = (line[inside], side.model[inside]), (line[outside], side.model[outside])
    return Drawn(side.role, points, segments, change_points[_drawable(change_points, log=x_log)], band,
                 side.band_note, model, beyond)


def _positive(side: PlotSide, line: np.ndarray) -> bool:
    """Everything of `side` that can be drawn is positive: a log y axis fits it."""
    shown = line >= side.start
    along = (side.band_low, side.band_high, side.model)
    parts = [side.low, side.median, side.high] + [values[shown] for values in along if values is not None]
    return all(bool(np.all(values[np.isfinite(values)] > 0)) for values in parts)


def _drawable(*arrays: np.ndarray, log: bool) -> np.ndarray:
    """Where every one of `arrays` (same shape) can be drawn on an axis of this scale: finite, and positive on a
    log axis, at most `LINEAR_LIMIT` in magnitude on a linear one."""
    keep = np.ones(np.shape(arrays[0]), dtype=bool)
    for array in arrays:
        values = np.asarray(array, dtype=float)
        keep &= np.isfinite(values) & ((values > 0) if log else (np.abs(values) <= LINEAR_LIMIT))
    return keep


# --- axes -----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Scale:
    """One axis: its limits in axis units (log10 of the values on a log axis, else the values) and its ticks."""

    log: bool
    low: float
    high: float
    ticks: tuple[tuple[float, str], ...]  # (position in axis units, label)

    def units(self, values: np.ndarray) -> np.ndarray:
        """`values` (drawable on this axis) in axis units."""
        return np.log10(values) if self.log else np.asarray(values, dtype=float)


@dataclass(frozen=True)
class Frame:
    """The data area of a plot, in px from the top left of the plot, and its axes."""

    left: float
    top: float
    width: float
    height: float
    x: Scale
    y: Scale

    @property
    def bottom(self) -> float:
        return self.top + self.height

    def col(self, units: np.ndarray) -> np.ndarray:
        """The px columns of positions on the x axis (axis units)."""
        return self.left + (units - self.x.low) / (self.x.high - self.x.low) * self.width

    def row(self, units: np.ndarray) -> np.ndarray:
        """The px rows of positions on the y axis (axis units)."""
        return self.top + (1 - (units - self.y.low) / (self.y.high - self.y.low)) * self.height

    def cols(self, x: np.ndarray) -> np.ndarray:
        return self.col(self.x.units(x))

    def rows(self, y: np.ndarray) -> np.ndarray:
        return self.row(self.y.units(y))


def _scale(values: np.ndarray, log: bool, base: int) -> Scale:
    """The axis of `values` (drawable on it): their range with margins of 5% (of the decades, on a log axis), cut at
    the ends of the floats; from 0 to 1, linear, when there are none. `base`: of a log axis' ticks (2 or 10)."""
    if not values.size:
        low, high, log = 0.0, 1.0, False
    elif log:
        units = np.log10(values)
        first, last = float(np.min(units)), float(np.max(units))
        margin = 0.05 * (last - first) or 0.5
        low, high = max(first - margin, min(first, _LOG_RANGE[0])), min(last + margin, max(last, _LOG_RANGE[1]))
    else:
        first, last = float(np.min(values)), float(np.max(values))
        margin = 0.05 * (last - first) or abs(first) * 0.1 or 1.0
        low, high = first - margin, last + margin
    ticks = _log_ticks(low, high, base) if log else _linear_ticks(low, high)
    positions = np.log10(ticks) if log else np.array(ticks, dtype=float)
    return Scale(log, low, high, tuple(zip(positions.tolist(), _labels(ticks, base if log else 10))))


def _linear_ticks(low: float, high: float) -> list[float]:
    """Round values from `low` to `high` for a linear axis' ticks: the multiples of 1, 2, 2.5 or 5 times a power of
    ten, from 4 to `MAX_TICKS` of them."""
    raw = (high - low) / (MAX_TICKS - 2)
    power = 10.0 ** math.floor(math.log10(raw)) if raw > 0 else 0.0
    if not power > 0:  # a range near the smallest float
        return [low, high]
    step = next((m * power for m in (1.0, 2.0, 2.5, 5.0) if m * power >= raw), 10.0 * power)
    return [k * step for k in range(math.ceil(low / step), math.floor(high / step) + 1)]


def _log_ticks(low: float, high: float, base: int) -> list[float]:
    """Values from 10**low to 10**high for a log axis' ticks: the powers of `base` (every 2nd, 5th, ... of them when
    there are many); on a narrow range, 1, 2 and 5 or 1 to 9 times the powers of ten, or round values."""
    per = math.log10(base)
    first, last = math.ceil(low / per), math.floor(high / per)
    step = next((s for s in _STEPS if last // s - -(-first // s) < MAX_TICKS), _STEPS[-1])
    powers = [float(base) ** k for k in range(-(-first // step) * step, last + 1, step)]
    if len(powers) >= 3:
        return powers
    lowest, highest = 10.0 ** low, 10.0 ** high
    candidates = [powers] + [[v for k in range(math.floor(low), math.ceil(high) + 1) for m in mantissas
                              for v in [m * 10.0 ** k] if lowest <= v <= highest]
                             for mantissas in ((1, 2, 5), range(1, 10))]
    candidates.append([v for v in _linear_ticks(lowest, highest) if v > 0])
    return next((c for c in candidates if len(c) >= 3), max(candidates, key=len))


def _labels(values: Sequence[float], base: int) -> list[str]:
    """Tick labels: whole numbers below a million in full, with thousands separators; on a log axis of base 2,
    other powers of 2 as `2^k`; others with the fewest significant digits (3 at least) that tell the ticks apart."""
    labels: list[str] = []
    for digits in range(3, 18):
        labels = [_power_of_two(v, digits) if base == 2 else _number(v, digits) for v in values]
        if len(set(labels)) == len(labels):
            break
    return labels


def _power_of_two(value: float, digits: int) -> str:
    mantissa, exponent = math.frexp(value)  # value = mantissa * 2**exponent, 0.5 <= mantissa < 1
    if mantissa != 0.5 or 2.0**-4 <= value < 1e6:
        return _number(value, digits)
    return f"2^{exponent - 1}"


def _number(value: float, digits: int) -> str:
    value += 0.0  # no "-0"
    if value.is_integer() and abs(value) < 1e6:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


# --- SVG elements ---------------------------------------------------------------------------------------------------

def _grid(frame: Frame) -> str:
    """The light lines across the data area at the ticks."""
    d = "".join(f"M{c:.1f},{frame.top}V{frame.bottom}" for c in frame.col(np.array([p for p, _ in frame.x.ticks])))
    d += "".join(f"M{frame.left},{r:.1f}H{frame.left + frame.width}"
                 for r in frame.row(np.array([p for p, _ in frame.y.ticks])))
    return f'<path class="grid" d="{d}" stroke="#e4e4e4" stroke-width="0.8" fill="none"/>'


def _band(frame: Frame, d: Drawn) -> str:
    """The shaded confidence band of a side that has one: along the grid at its high, back at its low."""
    assert d.band is not None
    x, low, high = d.band
    cols = frame.cols(x)
    outline = _path(np.concatenate([cols, cols[::-1]]), np.concatenate([frame.rows(high), frame.rows(low)[::-1]]))
    return f'<path class="band" data-role="{_text(d.role)}" d="{outline}Z" fill="{d.color}" fill-opacity="0.15"/>'


def _side(frame: Frame, d: Drawn) -> list[str]:
    """The lines, change points and measured points (with their ranges as bars) of one side."""
    out = [f'<g class="side" data-role="{_text(d.role)}" stroke="{d.color}" fill="none">']
    out += [f'<path class="segment" d="{_path(frame.cols(x), frame.rows(y))}" stroke-width="1.4"/>'
            for x, y in d.segments if x.size]
    out += [f'<path class="change-point" d="M{c:.1f},{frame.top}V{frame.bottom}" stroke-width="0.9" '
            f'stroke-dasharray="5 3"/>' for c in frame.cols(d.change_points).tolist()]
    dashes = f' stroke-dasharray="{_dashes(d.role)}"' if _dashes(d.role) else ""
    if d.model is not None and d.model[0].size:
        out.append(f'<path class="model" d="{_path(frame.cols(d.model[0]), frame.rows(d.model[1]))}" '
                   f'stroke-width="1.6"{dashes}/>')
    if d.beyond is not None and d.beyond[0].size:
        out.append(f'<path class="beyond" d="{_path(frame.cols(d.beyond[0]), frame.rows(d.beyond[1]))}" '
                   f'stroke-width="1.2" stroke-dasharray="1.5 2.5"/>')
    x, median, low, high = d.points
    if x.size:
        cols, lows, highs = frame.cols(x).tolist(), frame.rows(low).tolist(), frame.rows(high).tolist()
        bars = "".join(f"M{c:.1f},{lo:.1f}V{hi:.1f}M{c - 2.5:.1f},{lo:.1f}h5M{c - 2.5:.1f},{hi:.1f}h5"
                       for c, lo, hi in zip(cols, lows, highs))
        out.append(f'<path class="bars" d="{bars}" stroke-width="1"/>')
        circles = "".join(f'<circle cx="{c:.1f}" cy="{r:.1f}" r="3.2"/>'
                          for c, r in zip(cols, frame.rows(median).tolist()))
        out.append(f'<g class="points" fill="{d.color}" stroke="none">{circles}</g>')
    return out + ["</g>"]


def _axes(frame: Frame, x_label: str, y_label: str) -> list[str]:
    """The axis lines, ticks, tick labels and axis labels."""
    left, bottom = frame.left, frame.bottom
    x_ticks = list(zip(frame.col(np.array([p for p, _ in frame.x.ticks])).tolist(), [t for _, t in frame.x.ticks]))
    y_ticks = list(zip(frame.row(np.array([p for p, _ in frame.y.ticks])).tolist(), [t for _, t in frame.y.ticks]))
    marks = "".join(f"M{c:.1f},{bottom}v4" for c, _ in x_ticks) + "".join(f"M{left},{r:.1f}h-4" for r, _ in y_ticks)
    return [f'<path class="axis" d="M{left},{frame.top}V{bottom}H{left + frame.width}{marks}" stroke="#333333" '
            f'fill="none"/>',
            '<g class="x-ticks" text-anchor="middle" fill="#333333">'
            + "".join(f'<text x="{c:.1f}" y="{bottom + 17}">{_text(t)}</text>' for c, t in x_ticks) + "</g>",
            '<g class="y-ticks" text-anchor="end" fill="#333333">'
            + "".join(f'<text x="{left - 7}" y="{r:.1f}" dy="0.35em">{_text(t)}</text>' for r, t in y_ticks)
            + "</g>",
            f'<text class="x-label" x="{left + frame.width / 2:.1f}" y="{bottom + 38}" text-anchor="middle" '
            f'font-size="{FONT}" fill="#1f2328">{_fit(x_label, FONT, frame.width)}</text>',
            f'<text class="y-label" transform="translate({FONT + 2},{frame.top + frame.height / 2:.1f}) rotate(-90)" '
            f'text-anchor="middle" font-size="{FONT}" fill="#1f2328">{_fit(y_label, FONT, frame.height)}</text>']


def _legend_rows(groups: list[list[Entry]], left: float, right: float) -> list[list[tuple[float, Entry]]]:
    """The legend laid out in rows from `left` to `right` px, each group (a side's entries) from a new row: (where
    each entry starts, entry)."""
    rows: list[list[tuple[float, Entry]]] = []
    for group in groups:
        x = right
        for entry in group:
            width = 28 + _width(visible(entry[3]), SMALL)
            if x + width > right:
                rows.append([])
                x = left
            rows[-1].append((x, entry))
            x += width + 18
    return rows


def _legend(rows: list[list[tuple[float, Entry]]]) -> list[str]:
    """The legend above the data area: a swatch and a text per entry."""
    out = ['<g class="legend" fill="#1f2328">']
    for i, row in enumerate(rows):
        y = 16 + 18 * i
        for x, (swatch, color, dashes, text) in row:
            if swatch == "points":
                out.append(f'<path d="M{x + 11:.1f},{y - 5}V{y + 5}" stroke="{color}"/>'
                           f'<circle cx="{x + 11:.1f}" cy="{y}" r="3.2" fill="{color}"/>')
            elif swatch == "band":
                out.append(f'<rect x="{x:.1f}" y="{y - 5}" width="22" height="10" fill="{color}" '
                           f'fill-opacity="0.15"/>')
            else:
                dash = f' stroke-dasharray="{dashes}"' if dashes else ""
                out.append(f'<path d="M{x:.1f},{y}h22" stroke="{color}" stroke-width="1.6"{dash}/>')
            out.append(f'<text x="{x + 28:.1f}" y="{y}" dy="0.35em">{_fit(text, SMALL, WIDTH - 8 - x - 28)}</text>')
    return out + ["</g>"]


# --- text -----------------------------------------------------------------------------------------------------------

def _text(text: str) -> str:
    """`text` as SVG character data or attribute value: made visible (`scalecheck.text.visible`), XML-escaped."""
    return html.escape(visible(text), quote=True)


def _width(text: str, size: float) -> float:
    """The estimated width of `text` in px at font size `size` px."""
    return len(text) * size * _EM


def _fit(text: str, size: float, room: float) -> str:
    """A `<text>`'s content: `text` made visible and XML-escaped, cut with an ellipsis to fit `room` px (then in
    full in a tooltip)."""
    shown = visible(text)
    if _width(shown, size) <= room:
        return html.escape(shown, quote=True)
    cut = shown[:max(int(room / (size * _EM)) - 1, 1)] + "\u2026"
    return f"<title>{html.escape(shown, quote=True)}</title>{html.escape(cut, quote=True)}"


def _path(cols: np.ndarray, rows: np.ndarray) -> str:
    """The path data of a line through the points (cols, rows) in px."""
    return "M" + "L".join(f"{c:.1f},{r:.1f}" for c, r in zip(cols.tolist(), rows.tolist()))


def _dashes(role: str) -> str:
    """The dashes of a side's model line: the baseline's is dashed."""
    return "6 3" if role == "baseline" else ""
