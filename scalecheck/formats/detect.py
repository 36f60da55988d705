"""Which reader a measurement file needs: by its extension, and for other names by its first line."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path

from scalecheck.errors import InputError, Location
from scalecheck.formats.extrap_text import KEYWORDS
from scalecheck.formats.source import decode_json, read_text
from scalecheck.formats.talpas import talpas_to_json
from scalecheck.names import FORMAT_NAMES

_BY_SUFFIX = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}
_NATIVE_START = re.compile(r'\s*\{\s*"scalecheck"\s*:')  # how scalecheck itself writes the version key: first


def detect_format(path: Path) -> str:
    """The name of the format of the file `path` (a key of `FORMATS`), or an `InputError` when it cannot be told.

    Only files whose extension does not tell their format are read.
    """
    path = Path(path)
    return _BY_SUFFIX.get(path.suffix.lower()) or detect_format_text(read_text(path), path)


def detect_format_text(text: str, source: Path) -> str:
    """The name of the format of `text`, the content of the file `source`, by `source`'s extension, else by content."""
    suffix = source.suffix.lower()  # Extra-P's samples include legacy_input_1.JSON
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    if suffix == ".json":
        return _json_kind(text)
    line = next((line for line in _lines(text) if not line.startswith("#")), "")
    if line and line.split(None, 1)[0] in KEYWORDS:
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
        return "jsonl"
    if talpas_to_json(line) != line:  # semicolons between members, outside strings
        return "talpas"
    return _json_kind(text)


def _json_kind(text: str) -> str:
    """scalecheck's JSON when the top level has the key "scalecheck", else Extra-P's; JSON Lines by their lines."""
    first, second = _first_lines(text, 2)
    if second and _object(first) is not None:
        return "jsonl"  # JSON Lines in a .json file, which Extra-P reads too
    if _NATIVE_START.match(text):
        return "scalecheck-json"
    if '"scalecheck"' not in text:
        return "extrap-json"  # cheap tests first: only unusual files pay for a second parse
    try:
        doc = decode_json(text)
    except (ValueError, RecursionError):
        return "scalecheck-json"  # its reader reports the syntax error with the line
    return "scalecheck-json" if isinstance(doc, dict) and "scalecheck" in doc else "extrap-json"


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
