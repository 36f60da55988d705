"""Render an `OverheadTable` (the overhead analysis) as terminal text and as JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from scalecheck.data.noise import NoiseModel
from scalecheck.data.overhead import OverheadRow, OverheadTable, Profile
from scalecheck.text import visible

MAX_SCALE_COLUMNS = 8  # the overhead per process count gets a column each when the events have at most this many
_UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))


@dataclass(frozen=True)
class OverheadContext:
    """What was analysed, for the reader of a report."""

    calibration: str  # e.g. the calibration file's path
    events: str


def render_overhead_text(table: OverheadTable, context: OverheadContext) -> str:
    """The summary line, the ranking per (location, operation) with the overhead per process count, the totals per
    operation, the clamped events, then every calibration point's noise model and t_max."""
    total = table.total
    unit, factor = _unit([r.time for r in table.rows] + [r.overhead for r in table.rows])
    lines = [f"overhead above t_max: {_amount(total.overhead)} of {_amount(total.time)} ({total.share:.0%}) in "
             f"{total.events:,} event(s) at {len(table.locations)} location(s) (q_max = {table.quantile:g}, "
             f"{table.interpolation} interpolation)", "",
             f"calibration: {context.calibration} ({len(table.profiles)} operation(s), "
             f"{sum(len(p.models) for p in table.profiles)} point(s))",
             f"events:      {context.events}", ""]
    scales = sorted({p for r in table.rows for p, _ in r.by_processes})
    per_scale = len(scales) <= MAX_SCALE_COLUMNS
    flagged = table.total.clamped > 0
    head = ("location", "operation", "events", f"time {unit}", f"overhead {unit}", "share")
    head += ("clamped",) if flagged else ()
    head += tuple(f"p={p:g}" for p in scales) if per_scale else ()
    rows = [head] + [_cells(r, factor, scales if per_scale else None, flagged) for r in table.rows]
    lines += _table(rows, right=range(2, len(head)))
    if not per_scale:
        lines.append(f"({len(scales)} process counts: the overhead per count is in the JSON output)")
    lines += ["", "by operation:"]
    lines += _table([("operation", "events", f"time {unit}", f"overhead {unit}", "share")]
                    + [_cells(r, factor, None)[1:] for r in table.operations], right=range(1, 5))
    clamped = [r for r in table.operations if r.clamped]
    if clamped:
        lines += ["", "clamped: events outside their operation's calibration grid, evaluated at its edge "
                      "(uncertain overhead):"]
        grids = {p.operation: p for p in table.profiles}
        for r in clamped:
            grid = grids[r.operation]
            lines.append(f"  {r.operation}: {r.clamped:,} of {r.events:,} event(s); the grid spans p "
                         f"{_span(grid.processes)} and bytes {_span(grid.sizes)}")
    lines += ["", "calibration points: the noise model (the accepted one with the lowest chi^2, 'empirical' when "
                  "both are rejected) and t_max"]
    lines += _calibration_table(table.profiles)
    return "\n".join(visible(line) for line in lines) + "\n"


def _cells(row: OverheadRow, factor: float, scales: Sequence[float] | None, flagged: bool = False
           ) -> tuple[str, ...]:
    cells = (row.location, row.operation, f"{row.events:,}", _fixed(row.time / factor),
             _fixed(row.overhead / factor), f"{row.share:.0%}")
    cells += (f"{row.clamped:,}" if row.clamped else "",) if flagged else ()
    if scales is not None:
        by = dict(row.by_processes)
        cells += tuple(_fixed(by[p] / factor) if p in by else "" for p in scales)
    return cells


def _calibration_table(profiles: Sequence[Profile]) -> list[str]:
    models = [(profile.operation, p, b, profile.models[i * profile.sizes.size + j])
              for profile in profiles for i, p in enumerate(profile.processes) for j, b in enumerate(profile.sizes)]
    unit, factor = _unit([m.t_max for *_, m in models])
    head = ("operation", "p", "bytes", "n", "model", "chi^2", "dof", "p-value", f"width {unit}", f"t_max {unit}")
    rows = [head] + [(op, f"{p:g}", f"{b:g}", str(m.n), m.chosen, *_test(m), f"{m.width / factor:.3g}",
                      f"{m.t_max / factor:.4g}") for op, p, b, m in models]
    return _table(rows, right=(1, 2, 3, 5, 6, 7, 8, 9))


def _test(model: NoiseModel) -> tuple[str, str, str]:
    """chi^2, dof and p-value of the chosen model (of the best rejected one for the empirical fallback)."""
    fit = model.best
    if not fit.tested:
        return "", "", "(untested)"
    return f"{fit.chi2:.3g}", str(fit.dof), f"{fit.p_value:.2g}"


def _table(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]

    def line(row: Sequence[str]) -> str:
        return "  ".join(cell.rjust(w) if c in right else cell.ljust(w)
                         for c, (cell, w) in enumerate(zip(row, widths))).rstrip()

    return [line(rows[0]), "  ".join("-" * w for w in widths)] + [line(r) for r in rows[1:]]


def _unit(values: Sequence[float]) -> tuple[str, float]:
    """The largest unit in which the largest value is at least 1 (seconds for none)."""
    largest = max((abs(v) for v in values if math.isfinite(v)), default=0.0)
    return next(((name, f) for name, f in _UNITS if largest >= f), _UNITS[-1]) if largest > 0 else _UNITS[0]


def _amount(seconds: float) -> str:
    name, factor = _unit([seconds])
    return f"{seconds / factor:.3g} {name}"


def _fixed(value: float) -> str:
    return f"{value:.4f}" if abs(value) < 1000 else f"{value:.1f}"


def _span(values: Sequence[float]) -> str:
    return f"{values[0]:g}..{values[-1]:g}" if len(values) > 1 else f"{values[0]:g} only"


def render_overhead_json(table: OverheadTable, context: OverheadContext) -> str:
    """`{"scalecheck": 1, "kind": "overhead", "total", "rows", "locations", "operations", "profiles", ...}`; times in
    seconds."""
    doc = {
        "scalecheck": 1,
        "kind": "overhead",
        "calibration": context.calibration,
        "events": context.events,
        "quantile": table.quantile,
        "interpolation": table.interpolation,
        "total": _row(table.total),
        "rows": [_row(r) for r in table.rows],
        "locations": [_row(r) for r in table.locations],
        "operations": [_row(r) for r in table.operations],
        "profiles": [_profile(p) for p in table.profiles],
    }
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"  # ASCII escapes: a name may hold a lone surrogate


def _row(r: OverheadRow) -> dict[str, object]:
    return {"location": r.location, "operation": r.operation, "events": r.events, "time": r.time,
            "overhead": r.overhead, "share": r.share, "clamped": r.clamped,
            "by_processes": [{"p": p, "overhead": o} for p, o in r.by_processes]}


def _profile(profile: Profile) -> dict[str, object]:
    points = []
    for i, p in enumerate(profile.processes):
        for j, b in enumerate(profile.sizes):
            m = profile.models[i * profile.sizes.size + j]
            points.append({"p": float(p), "bytes": float(b), "n": m.n, "minimum": m.minimum, "width": m.width,
                           "width_source": m.width_source, "step": m.step, "model": m.chosen, "t_max": m.t_max,
                           "p_value": _num(m.p_value),
                           "fits": [{"family": f.family, "parameter": _num(f.parameter),
                                     "log_likelihood": _num(f.log_likelihood), "chi2": _num(f.chi2), "dof": f.dof,
                                     "p_value": _num(f.p_value)} for f in m.fits]})
    return {"operation": profile.operation, "processes": profile.processes.tolist(),
            "bytes": profile.sizes.tolist(), "points": points}


def _num(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None
