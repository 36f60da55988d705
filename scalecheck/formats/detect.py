"""Which reader a measurement file needs: an archive by its first bytes, a JSON file by its top-level keys, others by
their extension or their first line."""

from __future__ import annotations

import importlib
import itertools
import re
from collections.abc import Iterator
from pathlib import Path

from scalecheck.errors import InputError, Location
from scalecheck.formats.limits import MAX_ARCHIVE_BYTES
from scalecheck.formats.source import decode_json, read_bytes, read_text
from scalecheck.names import FORMAT_NAMES

_BY_SUFFIX = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}
_NATIVE_START = re.compile(r'\s*\{\s*"scalecheck"\s*:')  # how scalecheck itself writes the version key: first
ARCHIVE_NAMES = ("cube", "extrap-experiment")  # the formats that are binary files, read from their bytes
_ZIP = b"PK\x03\x04"  # an Extra-P experiment is a zip archive
_TAR = re.compile(b"(?s:.{257})ustar")  # a Score-P .cubex profile is a tar archive
# the keywords that start the lines of Extra-P's text format (its reader's too)
EXTRAP_KEYWORDS = ("PARAMETER", "POINTS", "METRIC", "REGION", "DATA")
# JSON written by other benchmark tools: a key only their files have at the top level, then the reader's own test
_FOREIGN_JSON = (
    ('"machine_info"', "pytest-benchmark"),
    ('"context"', "google-benchmark"),
    ('"results"', "hyperfine"),
    ('"result_columns"', "asv"),
    ('"results"', "asv"),
    ('"param_names"', "asv"),  # asv's benchmarks.json, which its reader names and refuses
    ('"num_cpu"', "asv"),  # asv's machine.json, likewise
)
# each tool's test of a JSON document, in its reader's module (imported only for a file that may be that tool's)
_TESTS = {"pytest-benchmark": ("pytest_benchmark", "is_pytest_benchmark"),
          "google-benchmark": ("google_benchmark", "is_google_benchmark"), "hyperfine": ("hyperfine", "is_hyperfine"),
          "asv": ("asv", "is_asv")}


def _recognises(name: str, doc: object) -> bool:
    """Whether the reader of the format `name` recognises the JSON document `doc` as its tool's."""
    module, test = _TESTS[name]
    return bool(getattr(importlib.import_module(f"scalecheck.formats.{module}"), test)(doc))


def detect_format(path: Path) -> str:
    """The name of the format of the file `path` (one of `FORMAT_NAMES`), or an `InputError` when it cannot be told.

    Only files whose extension does not tell their format are read.
    """
    path = Path(path)
    if path.suffix.lower() in _BY_SUFFIX:
        return _BY_SUFFIX[path.suffix.lower()]
    if path.is_dir():
        return "cube"  # the folder-per-run layout of Score-P profiles; its reader tells when it is not one
    raw = read_bytes(path, MAX_ARCHIVE_BYTES)
    return detect_archive(raw, path) or detect_format_text(read_text(path), path)


def detect_archive(raw: bytes, source: Path) -> str | None:
    """"cube" for a tar archive (a Score-P profile), "extrap-experiment" for a zip archive, None for other bytes.

    Other tar and zip archives go to these readers too, which say what the archive lacks."""
    if raw.startswith(_ZIP) or source.suffix.lower() == ".extra-p":
        return "extrap-experiment"
    if _TAR.match(raw) or source.suffix.lower() == ".cubex":
        return "cube"
    return None


def detect_format_text(text: str, source: Path) -> str:
    """The name of the format of `text`, the content of the file `source`, by `source`'s extension, else by content."""
    suffix = source.suffix.lower()  # Extra-P's samples include legacy_input_1.JSON
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    if suffix == ".json":
        return _json_kind(text)
    line = next((line for line in _lines(text) if not line.startswith("#")), "")
    if line and line.split(None, 1)[0] in EXTRAP_KEYWORDS:
        return "extrap-text"
    if line.startswith("{"):
        return _brace_kind(line, text)
    raise InputError("cannot tell the format of this file", where=Location(source),
                     fix=f"name it with --format (one of: {', '.join(FORMAT_NAMES)})")


def _brace_kind(line: str, text: str) -> str:
    """The format of a file whose first line starts with '{'."""
    obj = _object(line)
    if obj is not None:
        if "measurements" in obj:  # a whole JSON document written on one line
            return "scalecheck-json" if "scalecheck" in obj else "extrap-json"
        # a JSON document of another benchmark tool written on one line, as asv writes its results
        return next((name for _, name in _FOREIGN_JSON if _recognises(name, obj)), "jsonl")
    from scalecheck.formats.talpas import talpas_to_json

    if talpas_to_json(line) != line:  # semicolons between members, outside strings
        return "talpas"
    return _json_kind(text)


def _json_kind(text: str) -> str:
    """scalecheck's JSON when the top level has the key "scalecheck", another benchmark tool's when its reader
    recognises the document, else Extra-P's; JSON Lines by their lines."""
    first, second = _first_lines(text, 2)
    if second and _object(first) is not None:
        return "jsonl"  # JSON Lines in a .json file, which Extra-P reads too
    if _NATIVE_START.match(text):
        return "scalecheck-json"
    foreign = [name for key, name in _FOREIGN_JSON if key in text]
    if '"scalecheck"' not in text and not foreign:
        return "extrap-json"  # cheap tests first: only unusual files pay for a second parse
    try:
        doc = decode_json(text)
    except (ValueError, RecursionError):
        # its reader reports the syntax error with the line
        return "scalecheck-json" if '"scalecheck"' in text or not foreign else foreign[0]
    if isinstance(doc, dict) and "scalecheck" in doc:
        return "scalecheck-json"
    return next((name for name in foreign if _recognises(name, doc)), "extrap-json")


def _lines(text: str) -> Iterator[str]:
    """The non-blank lines of `text`, stripped, read lazily: detection looks at the first ones only."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line = text[start:end].strip()
        if line:
            yield line
        start = end + 1


def _first_lines(text: str, count: int) -> list[str]:
    """The first `count` non-blank lines, padded with empty strings."""
    lines = list(itertools.islice(_lines(text), count))
    return lines + [""] * (count - len(lines))


def _object(line: str) -> dict[str, object] | None:
    """`line` decoded as a JSON object, or None."""
    try:
        obj = decode_json(line)
    except (ValueError, RecursionError):  # the reader reports either with its line
        return None
    return obj if isinstance(obj, dict) else None
