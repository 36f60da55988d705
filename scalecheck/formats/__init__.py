"""L3: the only code that opens measurement files. `read_measurements` picks the reader; `FORMATS` names them all.

Every reader builds its `Run` through `RunBuilder`, so that all formats reject the same bad value with the same
message, and raises `InputError` naming the file, the 1-based line or the record, and the fix.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from pathlib import Path

from scalecheck.data.measurement import Run, merge_runs
from scalecheck.errors import InputError
from scalecheck.formats.csv_table import read_csv_table
from scalecheck.formats.detect import FORMAT_NAMES, detect_format
from scalecheck.formats.extrap_json import read_extrap_json
from scalecheck.formats.extrap_text import read_extrap_text
from scalecheck.formats.jsonl import read_jsonl
from scalecheck.formats.scalecheck_json import read_scalecheck_json
from scalecheck.formats.talpas import read_talpas

FORMATS: dict[str, Callable[[Path], Run]] = {
    "scalecheck-json": read_scalecheck_json,
    "jsonl": read_jsonl,  # scalecheck's and Extra-P's JSON Lines, told apart per line by their keys
    "csv": read_csv_table,
    "extrap-text": read_extrap_text,
    "extrap-json": read_extrap_json,  # current and legacy layouts, told apart by their keys
    "talpas": read_talpas,
}

__all__ = ["FORMATS", "FORMAT_NAMES", "detect_format", "read_many", "read_measurements"]


def read_measurements(path: Path, fmt: str | None = None) -> Run:
    """Read one measurement file in format `fmt`, or in the format `detect_format` finds."""
    path = Path(path)
    if fmt is None:
        fmt = detect_format(path)
    elif fmt not in FORMATS:
        close = difflib.get_close_matches(fmt, FORMATS, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise InputError(f"unknown format '{fmt}'", fix=f"{hint}scalecheck reads the formats {', '.join(FORMATS)}")
    return FORMATS[fmt](path)


def read_many(paths: Sequence[Path], fmt: str | None = None) -> Run:
    """Read several measurement files and merge them: the same (kernel, metric) gains the points of each file."""
    if not paths:
        raise InputError("no measurement files given", fix="name at least one measurement file")
    return merge_runs([read_measurements(Path(path), fmt) for path in paths])
