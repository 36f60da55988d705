"""Render a `ModelTable` as a text table for the terminal and as scalecheck's model JSON."""

from __future__ import annotations

import json
import math

from scalecheck.data.outcome import ChangePoint, FittedModel, KernelModel, ModelTable, Segment
from scalecheck.text import visible

_HEAD = ("kernel", "metric", "model", "SMAPE %", "adj R^2", "growth")


def render_table(table: ModelTable) -> str:
    """Ranked models, one row each; kernels without a model last, with the reason below the table.

    A segmented kernel's row shows its last segment (the behaviour at scale, which the prediction uses), marked
    with that segment's range; all its segments and change points follow the table.
    """
    target = table.target
    head = _HEAD + ((f"at {','.join(f'{k}={v:g}' for k, v in target.items())}",) if target else ())
    rows = []
    notes = list(table.notes)
    segmented = []
    for km in table.ranked():
        if km.model is None:
            rows.append((km.kernel, km.metric, f"({km.status})", "", "", "") + (("",) if target else ()))
            notes.append(f"{km.kernel} [{km.metric}]: {km.note}")
            continue
        s = km.model.scores
        formula = km.model.formula()
        if km.segmented:
            formula += f"  [{segment_range(km.segments[-1], last=True)}]"
            segmented += [f"{km.kernel} [{km.metric}]: {len(km.segments)} segments, change point "
                          f"{' and '.join(c.text() for c in km.change_points)}"]
            segmented += [f"    {segment_range(seg, last=i == len(km.segments) - 1):<22} {seg.model.formula()}"
                          + (f"  ({seg.status}: {seg.note})" if seg.note else "")
                          for i, seg in enumerate(km.segments)]
        row = (km.kernel, km.metric, formula, f"{s.smape:.2f}", _fmt(s.ar2, ".4f"), km.model.growth_text())
        if target:
            prediction = table.prediction(km)
            row += ("-" if prediction is None else f"{prediction:.4g}",)
        rows.append(row)
        if km.note:
            notes.append(f"{km.kernel} [{km.metric}]: {km.note}")
    widths = [max(len(str(r[c])) for r in (head, *rows)) for c in range(len(head))]
    right = {3, 4, 6}
    lines = ["  ".join(str(cell).rjust(w) if c in right else str(cell).ljust(w)
                       for c, (cell, w) in enumerate(zip(r, widths))).rstrip() for r in (head, *rows)]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if segmented:
        lines += ["", "segmented:"] + [f"  {line}" for line in segmented]
    if notes:
        lines += ["", "notes:"] + [f"  {note}" for note in notes]
    return "\n".join(visible(line) for line in lines) + "\n"


def segment_range(segment: Segment, last: bool) -> str:
    """`p <= 5` for the first segment, `p >= 6` for the last (it extends to scale), `6 <= p <= 12` between."""
    name = segment.model.parameters[0]
    if segment.change_point is None:
        return f"{name} <= {segment.end:g}"
    if last:
        return f"{name} >= {segment.start:g}"
    return f"{segment.start:g} <= {name} <= {segment.end:g}"


def render_json(table: ModelTable) -> str:
    """`{"scalecheck": 1, "parameters": [...], "target": {...}, "models": [...]}` with every kernel, ranked.

    Each model has `segmented`, `change_point` (the change that begins the last segment, or null) and `segments`
    (empty unless segmented; each with its range, status, change point and model). The model fields of a
    segmented kernel are its last segment's.
    """
    return json.dumps({
        "scalecheck": 1,
        "parameters": list(table.parameters),
        "target": dict(table.target) if table.target else None,
        "notes": list(table.notes),
        "models": [_model(table, km) for km in table.ranked()],
    }, indent=2, allow_nan=False) + "\n"


def _model(table: ModelTable, km: KernelModel) -> dict[str, object]:
    out: dict[str, object] = {"kernel": km.kernel, "metric": km.metric, "unit": km.unit, "status": km.status,
                              "points": km.n_points, "noise": _finite(km.noise), "note": km.note or None}
    if km.model is None:
        out |= {"formula": None, "constant": None, "terms": [], "smape": None, "cv_smape": None, "rss": None,
                "ar2": None, "growth": None}
    else:
        out |= _fit(km.model)
    last = km.segments[-1] if km.segmented else None
    out |= {"segmented": km.segmented,
            "change_point": _change_point(last.change_point) if last is not None else None,
            "segments": [_segment(seg, i == len(km.segments) - 1) for i, seg in enumerate(km.segments)]
            if km.segmented else []}
    if table.target:
        prediction = table.prediction(km)
        out["prediction"] = None if prediction is None else _finite(prediction)
    return out


def _fit(model: FittedModel) -> dict[str, object]:
    s = model.scores
    return model.to_dict() | {"smape": _finite(s.smape), "cv_smape": _finite(s.cv_smape), "rss": _finite(s.rss),
                              "ar2": _finite(s.ar2), "growth": model.growth_text()}


def _segment(segment: Segment, last: bool) -> dict[str, object]:
    return {"start": segment.start, "end": segment.end, "range": segment_range(segment, last),
            "points": segment.n_points, "status": segment.status, "note": segment.note or None,
            "change_point": _change_point(segment.change_point)} | _fit(segment.model)


def _change_point(change: ChangePoint | None) -> dict[str, object] | None:
    if change is None:
        return None
    return {"parameter": change.parameter, "low": change.low, "high": change.high, "shared": change.shared,
            "text": change.text()}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _fmt(value: float, spec: str) -> str:
    return format(value, spec) if math.isfinite(value) else "-"
