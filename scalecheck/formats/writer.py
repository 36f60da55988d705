"""Write a `Run` as scalecheck's own JSON format (version 1), the text `read_scalecheck_json` reads back unchanged."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

import numpy as np

from scalecheck.data.measurement import Run, Series
from scalecheck.formats.scalecheck_json import VERSION

_EXACT_INT = 2.0**53  # beyond this a float's integer spelling is no shorter and no longer obviously exact


def dumps_run(run: Run, meta: Mapping[str, str] | None = None) -> str:
    """The native JSON text of `run`, its meta updated with `meta`.

    One measurement per (series, point), in series order and sorted points, one per line so that a diff of two
    files shows the points that changed. Values are written with `repr`, so they read back bit for bit. A meta value
    that is the JSON text of an object (a machine fingerprint) is written as that object, which the reader turns
    back into the same text when it was spelled as `json.dumps` spells it.
    """
    if not run.series:
        raise ValueError("a run without series cannot be written: the reader rejects a file without measurements")
    merged_meta = {key: _meta_value(value) for key, value in {**run.meta, **(meta or {})}.items()}
    lines = [
        f'{{"scalecheck": {VERSION},',  # first, as detect_format expects of scalecheck's own files
        f' "parameters": {_dumps(list(run.parameters))},',
        f' "meta": {_dumps(merged_meta)},',
        ' "measurements": [',
    ]
    records = [_dumps(record) for series in run.series for record in _records(series, run.parameters)]
    lines.append(",\n".join(f"  {record}" for record in records))
    lines.append("]}")
    return "\n".join(lines) + "\n"


def _records(series: Series, parameters: tuple[str, ...]) -> list[dict[str, object]]:
    """The measurement objects of `series`, one per point, sorted by point."""
    if sorted(series.parameters) != sorted(parameters):
        raise ValueError(f"series '{series.kernel}' has parameters {series.parameters}, the run {parameters}")
    column = {name: index for index, name in enumerate(series.parameters)}
    rows = sorted(range(series.points.shape[0]), key=lambda row: tuple(series.points[row]))
    records: list[dict[str, object]] = []
    for row in rows:
        values = series.values[row]
        if np.isnan(values).all():
            continue  # a point without values says nothing, and the reader rejects an empty list
        record: dict[str, object] = {"kernel": series.kernel, "metric": series.metric}
        if series.unit:
            record["unit"] = series.unit
        record["point"] = {name: _coordinate(float(series.points[row, column[name]])) for name in parameters}
        kept = ~np.isnan(values)
        record["values"] = [float(value) for value in values[kept]]  # drop the NaN padding
        rounds = None if series.rounds is None else series.rounds[row][kept]
        if rounds is not None and not np.isnan(rounds).all():
            record["rounds"] = [None if np.isnan(r) else int(r) for r in rounds]
        records.append(record)
    return records


def _meta_value(text: str) -> object:
    """`text`, or the object it spells when it is the JSON text of an object (finite numbers only)."""
    if not isinstance(text, str) or not text.startswith("{"):
        return text
    try:
        value = json.loads(text, parse_constant=_not_finite, parse_float=_finite)
    except (ValueError, RecursionError):  # also a NaN or infinity (1e999 too): _dumps could not write it
        return text
    return value if isinstance(value, dict) else text


def _finite(text: str) -> float:
    value = float(text)
    return value if math.isfinite(value) else _not_finite(text)


def _not_finite(text: str) -> float:
    raise ValueError(f"{text} is not a finite number")


def _coordinate(value: float) -> int | float:
    """A point coordinate as people write it: 8, not 8.0."""
    return int(value) if value.is_integer() and abs(value) < _EXACT_INT else value


def _dumps(value: object) -> str:
    # allow_nan=False: a NaN or infinity here is a caller bug, and the reader would reject the file
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a name holding a lone surrogate (JSON's "\ud800"): UTF-8 has no bytes for it
        return json.dumps(value, allow_nan=False)
    return text
