"""L3: the only code that opens measurement files. `read_measurements` picks the reader; `FORMATS` names the readers
of text, `ARCHIVE_FORMATS` those of binary files (a Score-P profile, an Extra-P experiment).

A reader of text takes the text of a file and its source, the name that locations and errors give it: its path, or
``1a2b3c4:bench/r.json`` for a file read from git. `read_measurements` and `read_many` read files from disk once
and hand their text on. Every reader builds its `Run` through `RunBuilder` (as `LimitedRunBuilder`, which keeps the
limits of `scalecheck.formats.limits`), so that all formats reject the same bad value with the same message, and
raises `InputError` naming the source, the 1-based line or the record, and the fix.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from scalecheck.data.measurement import Run, merge_runs
from scalecheck.errors import InputError, Location
from scalecheck.formats.detect import ARCHIVE_NAMES, detect_archive, detect_format, detect_format_text
from scalecheck.formats.limits import MAX_ARCHIVE_BYTES, MAX_FILE_BYTES, MAX_PARAMETERS, check_merged_cells, too_large
from scalecheck.formats.source import check_not_empty, check_size, decode_text, read_bytes
from scalecheck.names import FORMAT_NAMES

Data = TypeVar("Data", str, bytes)


def _reader(module: str, function: str, data: type[Data]) -> Callable[[Data, Path], Run]:
    """The reader `function` of `scalecheck.formats.<module>`, imported when it is first called: a command reads one
    or two formats, and importing all twelve readers would cost more than reading a small file."""
    def read(content: Data, source: Path) -> Run:
        found: Callable[[Data, Path], Run] = getattr(importlib.import_module(f"scalecheck.formats.{module}"), function)
        return found(content, source)

    read.__name__ = read.__qualname__ = function
    return read


# (text, source) -> Run, one reader per name of FORMAT_NAMES, in its order
FORMATS: dict[str, Callable[[str, Path], Run]] = {
    "scalecheck-json": _reader("scalecheck_json", "read_scalecheck_json_text", str),
    "jsonl": _reader("jsonl", "read_jsonl_text", str),  # scalecheck's and Extra-P's JSON Lines, told apart per line
    "csv": _reader("csv_table", "read_csv_table_text", str),
    "extrap-text": _reader("extrap_text", "read_extrap_text_text", str),
    "extrap-json": _reader("extrap_json", "read_extrap_json_text", str),  # current and legacy layouts, by their keys
    "talpas": _reader("talpas", "read_talpas_text", str),
    "pytest-benchmark": _reader("pytest_benchmark", "read_pytest_benchmark_text", str),
    "google-benchmark": _reader("google_benchmark", "read_google_benchmark_text", str),
    "hyperfine": _reader("hyperfine", "read_hyperfine_text", str),
    "asv": _reader("asv", "read_asv_text", str),
}
# (bytes, source) -> Run, for the names of FORMAT_NAMES that are binary files
ARCHIVE_FORMATS: dict[str, Callable[[bytes, Path], Run]] = {
    "cube": _reader("cube", "read_cube_bytes", bytes),
    "extrap-experiment": _reader("extrap_experiment", "read_extrap_experiment_bytes", bytes),
}
assert tuple(FORMATS) + tuple(ARCHIVE_FORMATS) == FORMAT_NAMES and tuple(ARCHIVE_FORMATS) == ARCHIVE_NAMES

__all__ = ["ARCHIVE_FORMATS", "FORMATS", "FORMAT_NAMES", "MAX_FILE_BYTES", "MAX_PARAMETERS", "decode_text",
           "detect_format", "detect_format_text", "read_many", "read_measurements", "read_measurements_bytes",
           "read_measurements_text"]


def read_measurements(path: Path, fmt: str | None = None, scaling: str = "weak") -> Run:
    """Read one measurement file (or a folder of Score-P profiles, one run per sub-folder) in format `fmt`, or in
    the format its name and content show; `scaling` (one of `SCALINGS`) says how a Score-P profile's values over its
    processes and threads make one value."""
    _check_format(fmt)
    path = Path(path)
    if path.is_dir() and fmt in (None, "cube"):
        from scalecheck.formats.cube import is_cube_directory, read_cube_directory

        if fmt == "cube" or is_cube_directory(path):
            return read_cube_directory(path, scaling)
    return read_measurements_bytes(read_bytes(path, MAX_ARCHIVE_BYTES), path, fmt, scaling)


def read_measurements_bytes(raw: bytes, source: str | Path, fmt: str | None = None, scaling: str = "weak") -> Run:
    """Read `raw`, the bytes of the measurement file `source` (a path, or a name such as ``1a2b3c4:bench/r.json``),
    in format `fmt` or in the one its name and content show (`scaling` as for `read_measurements`)."""
    _check_format(fmt)
    source = Path(source)
    kind = fmt or detect_archive(raw, source)
    if kind in ARCHIVE_FORMATS:
        if len(raw) > MAX_ARCHIVE_BYTES:
            raise too_large(source, MAX_ARCHIVE_BYTES)
        if kind == "cube":  # an Extra-P experiment records its own scaling
            from scalecheck.formats.cube import read_cube_bytes

            return read_cube_bytes(raw, source, scaling)
        return ARCHIVE_FORMATS[kind](raw, source)
    return read_measurements_text(decode_text(raw, source), source, fmt)


def read_measurements_text(text: str, source: str | Path, fmt: str | None = None) -> Run:
    """Read `text`, the content of the measurement file `source`, in format `fmt` or in the one its name and text
    show (`detect_format_text`)."""
    _check_format(fmt)
    if fmt in ARCHIVE_FORMATS:
        raise InputError(f"a {fmt} file is binary, not text", where=Location(Path(source)),
                         fix="read it from its bytes (read_measurements or read_measurements_bytes)")
    source = Path(source)
    check_not_empty(text, source)
    check_size(text, source)
    return FORMATS[fmt or detect_format_text(text, source)](text, source)


def read_many(paths: Sequence[Path], fmt: str | None = None, scaling: str = "weak") -> Run:
    """Read several measurement files and merge them: the same (kernel, metric) gains the points of each file."""
    if not paths:
        raise InputError("no measurement files given", fix="name at least one measurement file")
    runs = [read_measurements(Path(path), fmt, scaling) for path in paths]
    check_merged_cells(runs, [Path(path) for path in paths])
    return merge_runs(runs)


def _check_format(fmt: str | None) -> None:
    """An `InputError` when `fmt` is neither None (detect) nor a format's name."""
    if fmt is not None and fmt not in FORMAT_NAMES:
        close = difflib.get_close_matches(fmt, FORMAT_NAMES, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise InputError(f"unknown format '{fmt}'", fix=f"{hint}scalecheck reads the formats {', '.join(FORMAT_NAMES)}")
