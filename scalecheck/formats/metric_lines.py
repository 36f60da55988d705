"""The metrics a command run by `scalecheck measure` reports itself: JSON lines in the file `$SCALECHECK_METRICS`.

One object per line, `{"kernel": "solve", "metric": "time", "unit": "s", "value": 0.12}`, or `"values": [...]` for
several values; `metric` defaults to `time`, `unit` is optional. Blank lines are skipped.
"""

from __future__ import annotations

import difflib
import json
import math
from pathlib import Path
from typing import NamedTuple

from scalecheck.data.measurement import is_time_metric
from scalecheck.errors import InputError
from scalecheck.formats.limits import MAX_FILE_BYTES, mib
from scalecheck.formats.source import decode_json, shown

METRIC_KEYS = ("kernel", "metric", "unit", "value", "values")
METRIC_EXAMPLE = '{"kernel": "solve", "metric": "time", "unit": "s", "value": 0.12}'
DEFAULT_METRIC = "time"


class MetricLine(NamedTuple):
    """One reported line, checked: its 1-based number and text, and what it reports."""

    number: int
    text: str
    kernel: str
    metric: str
    unit: str
    values: tuple[float, ...]


class MetricLineError(InputError):
    """A metrics line that cannot be used; `number` and `text` say which, for the caller that knows the run."""

    def __init__(self, problem: str, *, number: int, text: str,
                 fix: str = f"write one JSON object per line, e.g. {METRIC_EXAMPLE}") -> None:
        super().__init__(problem, fix=fix)
        self.number, self.text = number, text


def read_metric_lines(path: Path) -> list[MetricLine]:
    """The lines of the metrics file `path` (which may be empty); the first bad line, or the line that takes the file
    past `MAX_FILE_BYTES`, is a `MetricLineError`."""
    with path.open("rb") as handle:
        raw = handle.read(MAX_FILE_BYTES + 1)  # a runaway command may write without end
    text = raw.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if len(raw) > MAX_FILE_BYTES:
        number = len(lines)
        raise MetricLineError(f"the metrics file is larger than {mib(MAX_FILE_BYTES)}", number=number,
                              text=lines[-1][:200],
                              fix="report a few lines per run: one per kernel and metric, with all its values")
    return [parse_metric_line(number, line) for number, line in enumerate(lines, start=1) if line.strip()]


def parse_metric_line(number: int, text: str) -> MetricLine:
    """Line `number`, `{"kernel": ..., "metric": ..., "unit": ..., "value": ...}`, checked."""

    def bad(problem: str, **fix: str) -> MetricLineError:
        return MetricLineError(problem, number=number, text=text, **fix)

    try:
        obj = decode_json(text)  # a number too large for a float decodes as infinity, rejected below
    except json.JSONDecodeError as err:
        raise bad(f"not JSON: {err.msg} (column {err.colno})") from None
    except RecursionError:
        raise bad("not JSON: nested too deeply") from None
    if not isinstance(obj, dict):
        raise bad(f"expected a JSON object, got {type(obj).__name__}")
    for key in obj:
        if key not in METRIC_KEYS:
            close = difflib.get_close_matches(key, METRIC_KEYS, n=1)
            raise bad(f"unknown key '{key}'", fix=(f"did you mean '{close[0]}'? " if close else "")
                      + f"a metrics line has the keys {', '.join(METRIC_KEYS)}")
    kernel, metric, unit = obj.get("kernel"), obj.get("metric", DEFAULT_METRIC), obj.get("unit", "")
    if "kernel" not in obj:
        raise bad("missing key 'kernel'")
    if not isinstance(kernel, str) or not kernel:
        raise bad("'kernel' must be a non-empty string")
    if not isinstance(metric, str) or not metric:
        raise bad("'metric' must be a non-empty string")
    if not isinstance(unit, str):
        raise bad("'unit' must be a string")
    if ("value" in obj) == ("values" in obj):
        raise bad("both 'value' and 'values'" if "value" in obj else "missing key 'value' (or 'values')")
    raw = [obj["value"]] if "value" in obj else obj["values"]
    if not isinstance(raw, list) or not raw:
        raise bad("'values' must be a non-empty list of numbers")
    for value in raw:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise bad(f"{shown(value)} is not a finite number")
    values = tuple(float(value) for value in raw)
    if is_time_metric(metric, unit) and min(values) < 0:
        raise bad(f"metric '{metric}' is a time but has a negative value {min(values):g}")
    return MetricLine(number, text, kernel, metric, unit, values)
