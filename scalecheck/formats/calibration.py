"""Calibration samples and event traces for the overhead analysis, in JSON Lines or CSV.

Calibration (repeated timings of each operation at p processes and b bytes; at least 10 per sample, about 200
recommended):

    {"operation": "MPI_Send", "p": 8, "bytes": 1024, "times": [2.1e-05, 2.3e-05, ...], "resolution": 1e-07}
    {"operation": "MPI_Send", "p": 8, "bytes": 1024, "time": 2.2e-05}          (one timing per line also works)

    operation,p,bytes,time[,unit][,resolution]       (CSV: one row per timing)

Events (one per line or row):

    {"location": "msg_stuff.cpp:311", "operation": "MPI_Send", "p": 8, "bytes": 1024, "time": 3.1e-05}

    location,operation,p,bytes,time[,unit]

`unit` is s (default), ms, us or ns; times are converted to seconds. `resolution` is the timer resolution in the
same unit (optional; see `scalecheck.core.tmax` for the default). Lines or rows for the same (operation, p,
bytes) add timings to one sample. Every operation's samples must form a complete grid (every p with every b).
Files ending in .csv are CSV, .jsonl, .ndjson and .json are JSON Lines; others are told apart by their first
character.
"""

from __future__ import annotations

import csv
import difflib
import io
import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from scalecheck.core.tmax import MIN_VALUES
from scalecheck.data.measurement import number
from scalecheck.data.overhead import Calibration, CalibrationSample, EventTrace
from scalecheck.errors import InputError, Location
from scalecheck.formats.source import load_json, read_text, split_lines, type_name

UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
CALIBRATION_KEYS = ("operation", "p", "bytes", "times", "time", "unit", "resolution")
EVENT_KEYS = ("location", "operation", "p", "bytes", "time", "unit")
CALIBRATION_EXAMPLE = '{"operation": "MPI_Send", "p": 8, "bytes": 1024, "times": [2.1e-05, 2.3e-05, 2.2e-05]}'
EVENT_EXAMPLE = '{"location": "solver.c:311", "operation": "MPI_Send", "p": 8, "bytes": 1024, "time": 3.1e-05}'
CALIBRATION_COLUMNS = "operation,p,bytes,time (unit and resolution optional)"
CALIBRATION_SIZE_FIX = "keep a few hundred timings per operation and scale: about 200 give a stable t_max"
EVENTS_SIZE_FIX = "record the events of fewer time steps or ranks: a representative sample shows the overhead"
EVENT_COLUMNS = "location,operation,p,bytes,time (unit optional)"


def read_calibration(path: Path, resolution: float | None = None) -> Calibration:
    """`read_calibration_text` of the file `path`, read once."""
    path = Path(path)
    return read_calibration_text(read_text(path, split_fix=CALIBRATION_SIZE_FIX), path, resolution)


def read_calibration_text(text: str, source: Path, resolution: float | None = None) -> Calibration:
    """Read `text`, a calibration file named `source`; `resolution` (seconds) stands in for samples that do not state
    their own."""
    samples: dict[tuple[str, int, int], _Sample] = {}
    records = (_csv_records(source, text, "calibration") if _is_csv(source, text)
               else _json_records(source, text, "calibration"))
    for where, record in records:
        operation = _name(record, "operation", where)
        key = (operation, _whole(record, "p", where, 1), _whole(record, "bytes", where, 0))
        scale = _unit(record, where)
        times = _times(record, where, scale)
        stated = _resolution(record, where, scale)
        sample = samples.setdefault(key, _Sample(where))
        if stated is not None:
            if sample.resolution is not None and not math.isclose(sample.resolution, stated, rel_tol=1e-9):
                raise InputError(f"resolution {stated:g} s differs from the {sample.resolution:g} s given before for "
                                 f"{_label(key)}", where=where, fix="give one timer resolution per sample")
            sample.resolution = stated
        sample.times.extend(times)
    if not samples:
        raise InputError("the file holds no calibration samples", where=Location(source),
                         fix=f"write one sample per line, e.g. {CALIBRATION_EXAMPLE}")
    out = tuple(_checked(key, sample, resolution) for key, sample in samples.items())
    _check_grids(source, out)
    return Calibration(out, source)


def read_events(path: Path) -> EventTrace:
    """`read_events_text` of the file `path`, read once."""
    path = Path(path)
    return read_events_text(read_text(path, split_fix=EVENTS_SIZE_FIX), path)


def read_events_text(text: str, source: Path) -> EventTrace:
    """Read `text`, an event trace named `source`."""
    locations: dict[str, int] = {}
    operations: dict[str, int] = {}
    columns: list[list[float]] = [[], [], [], [], [], []]  # location, operation, p, bytes, time, line
    records = _csv_records(source, text, "events") if _is_csv(source, text) else _json_records(source, text, "events")
    for where, record in records:
        location = _name(record, "location", where)
        operation = _name(record, "operation", where)
        p, size = _whole(record, "p", where, 1), _whole(record, "bytes", where, 0)
        scale = _unit(record, where)
        (time,) = _times(record, where, scale, single=True)
        for column, value in zip(columns, (locations.setdefault(location, len(locations)),
                                           operations.setdefault(operation, len(operations)), p, size, time,
                                           where.line or 0)):
            column.append(value)
    if not columns[0]:
        raise InputError("the file holds no events", where=Location(source),
                         fix=f"write one event per line, e.g. {EVENT_EXAMPLE}")
    return EventTrace(tuple(locations), tuple(operations), np.array(columns[0]), np.array(columns[1]),
                      np.array(columns[2]), np.array(columns[3]), np.array(columns[4]), np.array(columns[5]), source)


@dataclass
class _Sample:
    where: Location  # of its first record
    times: list[float] = field(default_factory=list)
    resolution: float | None = None


def _label(key: tuple[str, int, int]) -> str:
    return f"{key[0]} p={key[1]} bytes={key[2]}"


def _is_csv(path: Path, text: str) -> bool:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return True
    if suffix in (".jsonl", ".ndjson", ".json"):
        return False
    return not text.lstrip().startswith("{")


def _json_records(path: Path, text: str, kind: str) -> Iterator[tuple[Location, Mapping[str, object]]]:
    keys, example = (CALIBRATION_KEYS, CALIBRATION_EXAMPLE) if kind == "calibration" else (EVENT_KEYS, EVENT_EXAMPLE)
    for number_, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        where = Location(path, number_)
        obj = load_json(path, line, line_offset=number_ - 1)
        if not isinstance(obj, dict):
            raise InputError(f"a line must hold one JSON object, got {type_name(obj)}", where=where,
                             fix=f"write one {'sample' if kind == 'calibration' else 'event'} per line, e.g. {example}")
        for key in obj:
            if key not in keys:
                raise InputError(f"unknown key '{key}'", where=where, fix=_known(key, keys))
        yield where, obj


def _csv_records(path: Path, text: str, kind: str) -> Iterator[tuple[Location, Mapping[str, object]]]:
    keys, columns = (CALIBRATION_KEYS, CALIBRATION_COLUMNS) if kind == "calibration" else (EVENT_KEYS, EVENT_COLUMNS)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    try:
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            where = Location(path, reader.line_num)
            if header is None:
                header = [cell.strip() for cell in row]
                _check_header(header, keys, columns, where)
                continue
            if len(row) != len(header):
                raise InputError(f"the row has {len(row)} fields but the header has {len(header)} columns",
                                 where=where, fix=f"give every row the columns {','.join(header)}")
            yield where, {name: cell.strip() for name, cell in zip(header, row)}
    except csv.Error as err:
        raise InputError(f"not valid CSV: {err}", where=Location(path, reader.line_num),
                         fix="check the quotes on this line: a field that starts with \" must end with \"") from None


def _check_header(header: Sequence[str], keys: Sequence[str], columns: str, where: Location) -> None:
    if len(header) == 1 and any(sep in header[0] for sep in ";\t"):
        raise InputError("the header row has no commas", where=where, fix=f"write comma-separated columns {columns}")
    for name in header:
        if name not in keys or name == "times":
            raise InputError(f"unknown column '{name}'", where=where,
                             fix=_known(name, [k for k in keys if k != "times"]) + f"; the columns are {columns}")
        if header.count(name) > 1:
            raise InputError(f"column '{name}' appears twice", where=where, fix="give every column its own name")
    missing = [k for k in keys if k not in ("times", "unit", "resolution") and k not in header]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", where=where, fix=f"the columns are {columns}")


def _known(key: str, keys: Sequence[str]) -> str:
    close = difflib.get_close_matches(key, keys, n=1)
    return f"did you mean '{close[0]}'?" if close else f"the keys are {', '.join(keys)}"


def _name(record: Mapping[str, object], key: str, where: Location) -> str:
    if key not in record:
        raise InputError(f"missing key '{key}'", where=where, fix=f"give every record its {key}")
    value = record[key]
    if not isinstance(value, str) or not value.strip():
        shown = "an empty string" if isinstance(value, str) else type_name(value)
        raise InputError(f"'{key}' must be a non-empty string, got {shown}", where=where,
                         fix=f"name the {key}, e.g. {'MPI_Send' if key == 'operation' else 'solver.c:311'}")
    return value.strip()


def _whole(record: Mapping[str, object], key: str, where: Location, minimum: int) -> int:
    what = "process count" if key == "p" else "message size in bytes"
    fix = f"give '{key}' as a whole number >= {minimum} (the {what})"
    if key not in record:
        raise InputError(f"missing key '{key}'", where=where, fix=fix)
    value = number(record[key], f"'{key}'", where, fix)
    if value != int(value) or value < minimum:
        raise InputError(f"'{key}' must be a whole number >= {minimum}, got {record[key]}", where=where, fix=fix)
    return int(value)


def _unit(record: Mapping[str, object], where: Location) -> float:
    unit = record.get("unit", "s") or "s"
    if not isinstance(unit, str) or unit.strip() not in UNITS:
        raise InputError(f"unknown unit {unit!r}", where=where, fix="write the unit as s, ms, us or ns")
    return UNITS[unit.strip()]


def _times(record: Mapping[str, object], where: Location, scale: float, single: bool = False) -> list[float]:
    fix = "correct the value or the timer that produced it"
    if single or "times" not in record:
        if "time" not in record:
            raise InputError("missing key 'time'" if single else "missing key 'times' (a list) or 'time'",
                             where=where, fix=f"give the measured duration(s), e.g. "
                                              f"{EVENT_EXAMPLE if single else CALIBRATION_EXAMPLE}")
        if "times" in record:
            raise InputError("give 'times' or 'time', not both", where=where, fix="keep one of them")
        raw: list[object] = [record["time"]]
    else:
        listed = record["times"]
        if not isinstance(listed, list) or not listed:
            shown = "an empty list" if listed == [] else type_name(listed)
            raise InputError(f"'times' must be a non-empty list of numbers, got {shown}", where=where,
                             fix=f"write the timings as a list, e.g. {CALIBRATION_EXAMPLE}")
        raw = listed
    out = []
    for value in raw:
        seconds = number(value, "a time", where, fix)
        if seconds < 0:
            raise InputError(f"a time cannot be negative, got {value}", where=where, fix=fix)
        out.append(seconds * scale)
    return out


def _resolution(record: Mapping[str, object], where: Location, scale: float) -> float | None:
    if "resolution" not in record or record["resolution"] in ("", None):
        return None
    fix = "give the timer resolution as a positive number in the record's unit, or leave it out"
    value = number(record["resolution"], "'resolution'", where, fix)
    if value <= 0:
        raise InputError(f"'resolution' must be positive, got {record['resolution']}", where=where, fix=fix)
    return value * scale


def _checked(key: tuple[str, int, int], sample: _Sample, default: float | None) -> CalibrationSample:
    where = Location(sample.where.path, sample.where.line, f"sample {_label(key)}")
    times = sample.times
    if len(times) < MIN_VALUES:
        raise InputError(f"{len(times)} timing(s); a noise model needs at least {MIN_VALUES}", where=where,
                         fix=f"time this operation at least {MIN_VALUES} times at this scale (about 200 give a "
                             "stable t_max)")
    if min(times) == max(times):
        raise InputError(f"all {len(times)} timings are equal ({times[0]:g} s): there is no noise to model",
                         where=where, fix="time with a finer timer, or check that every repetition was timed on its "
                                          "own")
    resolution = sample.resolution if sample.resolution is not None else default
    if resolution is not None and resolution > max(times):
        raise InputError(f"the timer resolution {resolution:g} s is larger than the largest timing {max(times):g} s",
                         where=where, fix="give the timer's resolution, the smallest step it measures, in the "
                                          "record's unit: a timer this coarse could not have measured these times")
    return CalibrationSample(key[0], key[1], key[2], np.array(times), resolution, where)


def _check_grids(path: Path, samples: Sequence[CalibrationSample]) -> None:
    """Every operation needs a sample at each combination of its process counts and sizes."""
    by_operation: dict[str, list[CalibrationSample]] = {}  # one pass: a trace may time thousands of operations
    for sample in samples:
        by_operation.setdefault(sample.operation, []).append(sample)
    for operation, mine in by_operation.items():
        have = {(s.processes, s.size) for s in mine}
        counts = sorted({s.processes for s in mine})
        sizes = sorted({s.size for s in mine})
        absent = len(counts) * len(sizes) - len(have)
        if absent:
            # the first few holes only: a sparse grid of many counts and sizes has millions
            missing = list(itertools.islice(((p, b) for p in counts for b in sizes if (p, b) not in have), 4))
            shown = ", ".join(f"(p={p}, bytes={b})" for p, b in missing)
            more = f" and {absent - 4} more" if absent > 4 else ""
            raise InputError(f"the grid is incomplete: no sample at {shown}{more}",
                             where=Location(path, record=f"operation '{operation}'"),
                             fix=f"time {operation} at every combination of p in {_list(counts)} and bytes in "
                                 f"{_list(sizes)} (bilinear interpolation needs a complete grid)")


def _list(values: Sequence[int]) -> str:
    shown = ", ".join(str(v) for v in values[:8])
    return shown + (", ..." if len(values) > 8 else "")
