"""Extra-P's JSON formats: the current one (measurements by call path and metric) and the legacy id-based one."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from scalecheck.data.measurement import Run, RunBuilder, number
from scalecheck.errors import InputError, Location
from scalecheck.formats.limits import LimitedRunBuilder
from scalecheck.formats.scalecheck_json import check_keys, parameters_from, require
from scalecheck.formats.source import line_of, lines_of_errors, load_json, read_text, shown, type_name

NEW_KEYS = ("parameters", "measurements")
ENTRY_KEYS = ("point", "values")
LEGACY_KEYS = ("parameters", "callpaths", "metrics", "coordinates", "measurements")
LEGACY_MEASUREMENT_KEYS = ("id", "callpath_id", "coordinate_id", "metric_id", "value")
T = TypeVar("T")


def read_extrap_json(path: Path) -> Run:
    """`read_extrap_json_text` of the file `path`, read once."""
    path = Path(path)
    return read_extrap_json_text(read_text(path), path)


def read_extrap_json_text(text: str, source: Path) -> Run:
    """Read Extra-P JSON; the legacy id-based layout is recognised by its "callpaths"/"coordinates" lists."""
    doc = load_json(source, text)
    if not isinstance(doc, dict):
        raise InputError(f'the top level must be an object with "parameters" and "measurements", got '
                         f"{type_name(doc)}", where=Location(source, line_of(text, ())),
                         fix="check that this is an Extra-P JSON file")
    if "scalecheck" in doc:
        raise InputError("this is a scalecheck JSON file, not an Extra-P one", where=Location(source),
                         fix="read it with --format scalecheck-json")
    # keys starting with "_" are comments (the "_note" of converted files)
    keys = {key: value for key, value in doc.items() if not key.startswith("_")}
    legacy = any(key in keys for key in ("callpaths", "coordinates", "metrics"))
    where = Location(source, record="top level")
    check_keys(keys, LEGACY_KEYS if legacy else NEW_KEYS, where, "an Extra-P JSON file")
    for key in LEGACY_KEYS if legacy else NEW_KEYS:
        require(keys, key, where, "file")
    return _read_legacy(source, text, keys) if legacy else _read_new(source, text, keys)


def _read_new(source: Path, text: str, doc: dict[str, object]) -> Run:
    """{"parameters": [names], "measurements": {callpath: {metric: [{"point": [...], "values": [...]}]}}}."""
    with lines_of_errors(text, ("parameters",)):
        builder = LimitedRunBuilder(parameters_from(doc["parameters"], Location(source, record="parameters")), source)
    by_callpath = doc["measurements"]
    if not isinstance(by_callpath, dict):
        raise InputError(f'"measurements" must be an object, got {type_name(by_callpath)}',
                         where=_at(source, text, "measurements"), fix='write {"callpath": {"metric": [...]}}')
    for callpath, by_metric in by_callpath.items():
        record = f"measurements[{json.dumps(callpath, ensure_ascii=False)}]"
        if not isinstance(by_metric, dict):
            raise InputError(f"expected an object of metrics, got {type_name(by_metric)}",
                             where=_at(source, text, "measurements", callpath, record=record),
                             fix='write {"metric": [{"point": [...], "values": [...]}]}')
        for metric, entries in by_metric.items():
            keys: tuple[str | int, ...] = ("measurements", callpath, metric)
            metric_record = f"{record}[{json.dumps(metric, ensure_ascii=False)}]"
            if not isinstance(entries, list):
                raise InputError(f"the measurements must be a list, got {type_name(entries)}",
                                 where=_at(source, text, *keys, record=metric_record),
                                 fix='write [{"point": [...], "values": [...]}, ...]')
            for index, entry in enumerate(entries):
                where = Location(source, record=f"{metric_record}[{index}]")
                # finding the line costs a scan of the text, so only a failing entry pays for it
                with lines_of_errors(text, (*keys, index)):
                    _add_entry(builder, callpath, metric, entry, where)
    return builder.build()


def _add_entry(builder: RunBuilder, callpath: str, metric: str, entry: object, where: Location) -> None:
    """Add one {"point": [...], "values": [...]} entry of the current format."""
    if not isinstance(entry, dict):
        raise InputError(f"a measurement must be an object, got {type_name(entry)}", where=where,
                         fix='write {"point": [...], "values": [...]}')
    check_keys(entry, ENTRY_KEYS, where, "a measurement")
    raw_point, values = require(entry, "point", where), require(entry, "values", where)
    # Extra-P accepts a bare number as the point of a one-parameter file
    coords = raw_point if isinstance(raw_point, list) else [raw_point]
    parameters = builder.parameters
    if len(coords) != len(parameters):
        raise InputError(f"the point has {len(coords)} value(s) but the file declares {len(parameters)} "
                         f"parameter(s) ({', '.join(parameters)})", where=where,
                         fix="give the point one value per parameter, in the order of \"parameters\"")
    fix = "write the point as a list of numbers, one per parameter"
    point = [number(value, f"parameter '{name}'", where, fix) for value, name in zip(coords, parameters)]
    builder.add(callpath, metric, point, values if isinstance(values, list) else [values], where)


def _read_legacy(source: Path, text: str, doc: dict[str, object]) -> Run:
    """The id-based layout: parameters, callpaths, metrics, coordinates and measurements refer to each other by id."""
    parameter_rows = _table(source, text, doc, "parameters", ("id", "name"), _name)
    parameter_ids = sorted(parameter_rows, key=_id_order)  # Extra-P orders parameters by id
    names = [parameter_rows[pid] for pid in parameter_ids]
    with lines_of_errors(text, ("parameters",)):
        builder = LimitedRunBuilder(parameters_from(names, Location(source, record="parameters")), source)
    callpaths = _table(source, text, doc, "callpaths", ("id", "name"), _name)
    metrics = _table(source, text, doc, "metrics", ("id", "name"), _name)
    points = _table(source, text, doc, "coordinates", ("id", "parameter_value_pairs"),
                    lambda row, where: _coordinate(row, where, parameter_ids, names))
    measurements = doc["measurements"]
    if not isinstance(measurements, list):
        raise InputError(f'"measurements" must be a list, got {type_name(measurements)}',
                         where=_at(source, text, "measurements", record="measurements"),
                         fix='write "measurements": [{"callpath_id": ..., "coordinate_id": ..., "metric_id": ..., '
                             '"value": ...}, ...]')
    for index, row in enumerate(measurements):
        where = Location(source, record=f"measurements[{index}]")
        with lines_of_errors(text, ("measurements", index)):
            if not isinstance(row, dict):
                raise InputError(f"a measurement must be an object, got {type_name(row)}", where=where,
                                 fix='write {"callpath_id": 1, "coordinate_id": 1, "metric_id": 1, "value": 3.5}')
            check_keys(row, LEGACY_MEASUREMENT_KEYS, where, "a measurement")
            callpath = _lookup(callpaths, row, "callpath_id", where, "callpaths")
            metric = _lookup(metrics, row, "metric_id", where, "metrics")
            point = _lookup(points, row, "coordinate_id", where, "coordinates")
            builder.add(callpath, metric, point, [require(row, "value", where)], where)
    return builder.build()


def _table(source: Path, text: str, doc: dict[str, object], section: str, keys: Sequence[str],
           convert: Callable[[dict[str, object], Location], T]) -> dict[object, T]:
    """The entries of a legacy section by id, each converted from an object with at least `keys`."""
    rows = doc[section]
    if not isinstance(rows, list):
        raise InputError(f'"{section}" must be a list, got {type_name(rows)}',
                         where=_at(source, text, section, record=section), fix=f'write "{section}": [{{"id": 1, ...}}]')
    table: dict[object, T] = {}
    for index, row in enumerate(rows):
        where = Location(source, record=f"{section}[{index}]")
        with lines_of_errors(text, (section, index)):
            if not isinstance(row, dict):
                raise InputError(f"an entry must be an object, got {type_name(row)}", where=where,
                                 fix=f"write {{{', '.join(json.dumps(k) + ': ...' for k in keys)}}}")
            for key in keys:
                require(row, key, where, "entry")
            ident = row["id"]
            if isinstance(ident, (dict, list, bool)) or ident is None:
                raise InputError(f"'id' must be a number, got {type_name(ident)}", where=where,
                                 fix="give every entry a distinct number as id")
            if ident in table:
                raise InputError(f'id {shown(ident)} appears twice in "{section}"', where=where,
                                 fix="give every entry a distinct id")
            table[ident] = convert(row, where)
    return table


def _name(row: dict[str, object], where: Location) -> str:
    """The "name" of a legacy parameter, call path or metric entry."""
    name = row["name"]
    if not isinstance(name, str) or not name:
        raise InputError(f"'name' must be a non-empty string, got {shown(name)}", where=where,
                         fix='give the entry a name, e.g. "name": "main"')
    return name


def _coordinate(row: dict[str, object], where: Location, parameter_ids: list[object],
                names: list[str]) -> tuple[float, ...]:
    """The point of a legacy coordinate, in parameter-id order."""
    pairs = row["parameter_value_pairs"]
    example = 'write [{"parameter_id": 1, "parameter_value": 4}, ...]'
    if not isinstance(pairs, list):
        raise InputError(f"'parameter_value_pairs' must be a list, got {type_name(pairs)}", where=where,
                         fix=example)
    values: dict[object, object] = {}
    for pair in pairs:
        if not isinstance(pair, dict) or "parameter_id" not in pair or "parameter_value" not in pair:
            raise InputError('each parameter-value pair must be {"parameter_id": ..., "parameter_value": ...}',
                             where=where, fix=example)
        pid = pair["parameter_id"]
        if isinstance(pid, (dict, list, bool)) or pid not in parameter_ids:
            raise InputError(f"unknown parameter_id {shown(pid)}", where=where,
                             fix=f'use the id of an entry in "parameters" ({_ids(parameter_ids)})')
        values[pid] = pair["parameter_value"]
    for pid, name in zip(parameter_ids, names):
        if pid not in values:
            raise InputError(f"the coordinate lacks parameter '{name}' (id {shown(pid)})", where=where,
                             fix="give the coordinate a value for every parameter")
    fix = "write each parameter_value as a number"
    return tuple(number(values[pid], f"parameter '{name}'", where, fix) for pid, name in zip(parameter_ids, names))


def _lookup(table: dict[object, T], row: dict[str, object], key: str, where: Location, section: str) -> T:
    """The entry that `row[key]` refers to, or an error naming the unknown id."""
    ident = require(row, key, where)
    if isinstance(ident, (dict, list, bool)) or ident not in table:
        raise InputError(f"unknown {key} {shown(ident)}", where=where,
                         fix=f"use the id of an entry in \"{section}\" ({_ids(list(table))})")
    return table[ident]


def _ids(ids: list[object]) -> str:
    """A short list of the known ids for a fix."""
    listed = ", ".join(shown(i) for i in ids[:10])
    return f"ids {listed}, ..." if len(ids) > 10 else f"ids {listed}"


def _id_order(ident: object) -> tuple[int, float, str]:
    """Sort key for ids that are numbers (usually) or strings."""
    return (0, float(ident), "") if isinstance(ident, (int, float)) else (1, 0.0, str(ident))


def _at(source: Path, text: str, *keys: str | int, record: str | None = None) -> Location:
    """The location of the JSON value at `keys`, with its line (only computed for errors and headers)."""
    return Location(source, line_of(text, keys), record)

