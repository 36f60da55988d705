"""L3: the only code that opens measurement files. `read_measurements` picks the reader; `FORMATS` names them all.

Every reader takes the text of a file and its source, the name that locations and errors give it: its path, or
``1a2b3c4:bench/r.json`` for a file read from git. `read_measurements` and `read_many` read files from disk once
and hand their text on. Every reader builds its `Run` through `RunBuilder` (as `LimitedRunBuilder`, which keeps the
limits of `scalecheck.formats.limits`), so that all formats reject the same bad value with the same message, and
raises `InputError` naming the source, the 1-based line or the record, and the fix.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from pathlib import Path

from scalecheck.data.measurement import Run, merge_runs
from scalecheck.errors import InputError
from scalecheck.formats.csv_table import read_csv_table_text
from scalecheck.formats.detect import detect_format, detect_format_text
from scalecheck.formats.extrap_json import read_extrap_json_text
from scalecheck.formats.extrap_text import read_extrap_text_text
from scalecheck.formats.jsonl import read_jsonl_text
from scalecheck.formats.scalecheck_json import read_scalecheck_json_text
from scalecheck.formats.limits import MAX_FILE_BYTES, MAX_PARAMETERS, check_merged_cells
from scalecheck.formats.source import check_not_empty, check_size, decode_text, read_text
from scalecheck.formats.talpas import read_talpas_text
from scalecheck.names import FORMAT_NAMES

# (text, source) -> Run, one reader per name of FORMAT_NAMES, in its order
FORMATS: dict[str, Callable[[str, Path], Run]] = {
    "scalecheck-json": read_scalecheck_json_text,
    "jsonl": read_jsonl_text,  # scalecheck's and Extra-P's JSON Lines, told apart per line by their keys
    "csv": read_csv_table_text,
    "extrap-text": read_extrap_text_text,
    "extrap-json": read_extrap_json_text,  # current and legacy layouts, told apart by their keys
    "talpas": read_talpas_text,
}

__all__ = ["FORMATS", "FORMAT_NAMES", "MAX_FILE_BYTES", "MAX_PARAMETERS", "decode_text", "detect_format",
           "detect_format_text", "read_many", "read_measurements", "read_measurements_text"]


def read_measurements(path: Path, fmt: str | None = None) -> Run:
    """Read one measurement file in format `fmt`, or in the format `detect_format` finds."""
    _check_format(fmt)
    path = Path(path)
    return read_measurements_text(read_text(path), path, fmt)


def read_measurements_text(text: str, source: str | Path, fmt: str | None = None) -> Run:
    """Read `text`, the content of the measurement file `source`, in format `fmt` or in the one its name and text
    show (`detect_format_text`)."""
    _check_format(fmt)
    source = Path(source)
    check_not_empty(text, source)
    check_size(text, source)
    return FORMATS[fmt or detect_format_text(text, source)](text, source)


def read_many(paths: Sequence[Path], fmt: str | None = None) -> Run:
    """Read several measurement files and merge them: the same (kernel, metric) gains the points of each file."""
    if not paths:
        raise InputError("no measurement files given", fix="name at least one measurement file")
    runs = [read_measurements(Path(path), fmt) for path in paths]
    check_merged_cells(runs, [Path(path) for path in paths])
    return merge_runs(runs)


def _check_format(fmt: str | None) -> None:
    """An `InputError` when `fmt` is neither None (detect) nor a format's name."""
    if fmt is not None and fmt not in FORMATS:
        close = difflib.get_close_matches(fmt, FORMATS, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise InputError(f"unknown format '{fmt}'", fix=f"{hint}scalecheck reads the formats {', '.join(FORMATS)}")
