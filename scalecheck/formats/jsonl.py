"""JSON Lines: one measurement object per line, in scalecheck's keys or Extra-P's, with an optional header line."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from scalecheck.data.measurement import Run, RunBuilder
from scalecheck.errors import InputError, Location
from scalecheck.formats.limits import LimitedRunBuilder, check_parameter_count
from scalecheck.formats.scalecheck_json import (
    Record,
    add_record,
    check_keys,
    check_version,
    meta_from,
    parameters_from,
    record_from_object,
)
from scalecheck.formats.source import load_json, read_text, split_lines, type_name

HEADER_KEYS = ("scalecheck", "parameters", "meta")


def read_jsonl(path: Path) -> Run:
    """`read_jsonl_text` of the file `path`, read once."""
    path = Path(path)
    return read_jsonl_text(read_text(path), path)


def read_jsonl_text(text: str, source: Path) -> Run:
    """Read JSON Lines; lines for the same kernel, metric and point add repetitions."""
    objects = list(_objects(source, text))
    declared: tuple[str, ...] | None = None
    meta: dict[str, str] = {}
    if objects and isinstance(objects[0][1], dict) and "scalecheck" in objects[0][1]:
        line, header = objects.pop(0)
        assert isinstance(header, dict)  # checked above; mypy does not narrow through the tuple
        declared, meta = _header(header, Location(source, line))
    return run_from_records(source, _records(source, objects), declared, meta)


def run_from_records(source: Path, records: Iterable[tuple[Location, Record]],
                     declared: Sequence[str] | None, meta: Mapping[str, str], *, can_declare: bool = True) -> Run:
    """Build a `Run` from line records; without `declared` parameters the first record's point sets them."""
    builder: RunBuilder | None = None
    for where, record in records:
        if builder is None:
            # a point's key order is the only order a header-less file gives, so it becomes the parameter order
            parameters = declared if declared is not None else (
                tuple(record.point) if isinstance(record.point, dict) else ())
            check_parameter_count(len(parameters), where)
            builder = LimitedRunBuilder(parameters, source)
            builder.meta.update(meta)
        add_record(builder, record, where, declared=declared is not None, can_declare=can_declare)
    if builder is None:
        raise InputError("the file holds no measurements", where=Location(source),
                         fix="check that the benchmark wrote its results to this file")
    return builder.build()


def _objects(source: Path, text: str) -> Iterator[tuple[int, object]]:
    """(1-based line, decoded JSON value) for every non-blank line."""
    for number, line in enumerate(split_lines(text), start=1):
        if line.strip():
            yield number, load_json(source, line, line_offset=number - 1)


def _header(header: Mapping[str, object], where: Location) -> tuple[tuple[str, ...], dict[str, str]]:
    """The declared parameters and metadata of a first line {"scalecheck": 1, "parameters": [...], "meta": {...}}."""
    check_keys(header, HEADER_KEYS, where, "the header line")
    check_version(header["scalecheck"], where)
    if "parameters" not in header:
        raise InputError("missing key 'parameters' in the header line", where=where,
                         fix='declare the parameters: {"scalecheck": 1, "parameters": ["p"]}')
    parameters = parameters_from(header["parameters"], where)
    return parameters, meta_from(header["meta"], where) if "meta" in header else {}


def _records(source: Path, objects: Iterable[tuple[int, object]]) -> Iterator[tuple[Location, Record]]:
    """The measurement records of the remaining lines, each with its location."""
    for line, obj in objects:
        where = Location(source, line)
        if isinstance(obj, dict) and "scalecheck" in obj:
            raise InputError("a header line must be the first line of the file", where=where,
                             fix='move {"scalecheck": 1, "parameters": [...]} to the first line, or delete it')
        if not isinstance(obj, dict):
            raise InputError(f"a JSON Lines record must be an object, got {type_name(obj)}", where=where,
                             fix='write one object per line, e.g. {"kernel": "solve", "point": {"p": 8}, '
                                 '"value": 1.9}')
        yield where, record_from_object(obj, where)
