"""TaLPas measurement files: one JSON-like object per line whose members are separated by semicolons."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from scalecheck.data.measurement import Run
from scalecheck.errors import InputError, Location
from scalecheck.formats.jsonl import run_from_records
from scalecheck.formats.scalecheck_json import Record, check_keys, require
from scalecheck.formats.source import load_json, read_text, split_lines, type_name

TALPAS_KEYS = ("parameters", "metric", "callpath", "value")


def read_talpas(path: Path) -> Run:
    """`read_talpas_text` of the file `path`, read once."""
    path = Path(path)
    return read_talpas_text(read_text(path), path)


def read_talpas_text(text: str, source: Path) -> Run:
    """Read a TaLPas file such as {"parameters":{"x":20};"metric":"time";"callpath":"compute";"value":82.0}."""
    return run_from_records(source, _records(source, text), declared=None, meta={}, can_declare=False)


def talpas_to_json(line: str) -> str:
    """`line` with the semicolons that separate members turned into commas; semicolons inside strings stay.

    Extra-P replaces every semicolon, which corrupts a call-path name that contains one. Members of nested
    objects are separated by commas in the TaLPas files we know, but a semicolon there is a separator too.
    """
    out = []
    in_string = escaped = False
    for char in line:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == ";":
            char = ","
        out.append(char)
    return "".join(out)


def _records(source: Path, text: str) -> Iterator[tuple[Location, Record]]:
    """The record of every non-blank line, with its location."""
    for number, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        where = Location(source, number)
        # the conversion keeps every character's column, so JSON error positions still match the user's line
        obj = load_json(source, talpas_to_json(line), line_offset=number - 1)
        if not isinstance(obj, dict):
            raise InputError(f"a TaLPas line must be an object, got {type_name(obj)}", where=where,
                             fix='write one object per line, e.g. {"parameters":{"x":20};"metric":"time";'
                                 '"callpath":"compute";"value":82.0}')
        check_keys(obj, TALPAS_KEYS, where, "a TaLPas line")
        yield where, Record(require(obj, "callpath", where), obj.get("metric", ""), "",
                            require(obj, "parameters", where), require(obj, "value", where))
