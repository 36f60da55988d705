"""Render a `ModelTable` as a text table for the terminal and as scalecheck's model JSON."""

from __future__ import annotations

import json
import math

from scalecheck.data.outcome import KernelModel, ModelTable

_HEAD = ("kernel", "metric", "model", "SMAPE %", "adj R^2", "growth")


def render_table(table: ModelTable) -> str:
    """Ranked models, one row each; kernels without a model last, with the reason below the table."""
    target = table.target
    head = _HEAD + ((f"at {','.join(f'{k}={v:g}' for k, v in target.items())}",) if target else ())
    rows = []
    notes = []
    for km in table.ranked():
        if km.model is None:
            rows.append((km.kernel, km.metric, f"({km.status})", "", "", "") + (("",) if target else ()))
            notes.append(f"{km.kernel} [{km.metric}]: {km.note}")
            continue
        s = km.model.scores
        row = (km.kernel, km.metric, km.model.formula(), f"{s.smape:.2f}", _fmt(s.ar2, ".4f"), km.model.growth_text())
        if target:
            row += (f"{table.prediction(km):.4g}",)
        rows.append(row)
        if km.note:
            notes.append(f"{km.kernel} [{km.metric}]: {km.note}")
    widths = [max(len(str(r[c])) for r in (head, *rows)) for c in range(len(head))]
    right = {3, 4, 6}
    lines = ["  ".join(str(cell).rjust(w) if c in right else str(cell).ljust(w)
                       for c, (cell, w) in enumerate(zip(r, widths))).rstrip() for r in (head, *rows)]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if notes:
        lines += ["", "notes:"] + [f"  {note}" for note in notes]
    return "\n".join(lines) + "\n"


def render_json(table: ModelTable) -> str:
    """`{"scalecheck": 1, "parameters": [...], "target": {...}, "models": [...]}` with every kernel, ranked."""
    return json.dumps({
        "scalecheck": 1,
        "parameters": list(table.parameters),
        "target": dict(table.target) if table.target else None,
        "models": [_model(table, km) for km in table.ranked()],
    }, indent=2, allow_nan=False) + "\n"


def _model(table: ModelTable, km: KernelModel) -> dict[str, object]:
    out: dict[str, object] = {"kernel": km.kernel, "metric": km.metric, "unit": km.unit, "status": km.status,
                              "points": km.n_points, "noise": _finite(km.noise), "note": km.note or None}
    if km.model is None:
        out |= {"formula": None, "constant": None, "terms": [], "smape": None, "cv_smape": None, "rss": None,
                "ar2": None, "growth": None}
    else:
        s = km.model.scores
        out |= km.model.to_dict()
        out |= {"smape": _finite(s.smape), "cv_smape": _finite(s.cv_smape), "rss": _finite(s.rss),
                "ar2": _finite(s.ar2), "growth": km.model.growth_text()}
    if table.target:
        prediction = table.prediction(km)
        out["prediction"] = None if prediction is None else _finite(prediction)
    return out


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _fmt(value: float, spec: str) -> str:
    return format(value, spec) if math.isfinite(value) else "-"
