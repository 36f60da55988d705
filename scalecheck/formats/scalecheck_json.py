"""scalecheck's own JSON format, version 1, and the measurement records it shares with the JSON Lines readers."""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from scalecheck.data.measurement import Run, RunBuilder, number
from scalecheck.errors import InputError, Location
from scalecheck.formats.limits import LimitedRunBuilder, check_parameter_count
from scalecheck.formats.source import line_of, lines_of_errors, load_json, read_text, shown, type_name

VERSION = 1
SCALECHECK_KEYS = ("kernel", "metric", "unit", "point", "values", "value", "rounds")
EXTRAP_KEYS = ("callpath", "metric", "params", "value")
EXTRAP_DEFAULT_CALLPATH = "<root>"  # what Extra-P's JSON Lines reader names a record without "callpath"


class Record(NamedTuple):
    """One measurement object as decoded, not yet checked: (kernel, metric, unit, point, values, rounds)."""

    kernel: object
    metric: object
    unit: object
    point: object
    values: object
    rounds: object = None  # the round each value came from, parallel to values (optional)


def read_scalecheck_json(path: Path) -> Run:
    """`read_scalecheck_json_text` of the file `path`, read once."""
    path = Path(path)
    return read_scalecheck_json_text(read_text(path), path)


def read_scalecheck_json_text(text: str, source: Path) -> Run:
    """Read a scalecheck JSON file: {"scalecheck": 1, "parameters": [...], "meta": {...}, "measurements": [...]}."""
    doc = load_json(source, text)
    if not isinstance(doc, dict):
        raise InputError(
            f'the top level must be an object with keys "scalecheck", "parameters" and "measurements", '
            f"got {type_name(doc)}",
            where=Location(source, line_of(text, ())),
            fix='write the file as {"scalecheck": 1, "parameters": [...], "measurements": [...]}',
        )
    if "scalecheck" not in doc:
        raise InputError("missing key 'scalecheck' (the format version)", where=Location(source),
                         fix='start the file with {"scalecheck": 1, ...}, or, for an Extra-P JSON file, '
                             "read it with --format extrap-json")
    with lines_of_errors(text, ("scalecheck",)):
        check_version(doc["scalecheck"], Location(source))
    for key in ("parameters", "measurements"):
        if key not in doc:
            raise InputError(f"missing key '{key}'", where=Location(source),
                             fix=f'add "{key}" at the top level (see the scalecheck JSON format)')
    with lines_of_errors(text, ("parameters",)):
        builder = LimitedRunBuilder(parameters_from(doc["parameters"], Location(source, record="parameters")), source)
    if "meta" in doc:
        with lines_of_errors(text, ("meta",)):
            builder.meta.update(meta_from(doc["meta"], Location(source, record="meta")))
    measurements = doc["measurements"]
    if not isinstance(measurements, list):
        raise InputError(f'"measurements" must be a list, got {type_name(measurements)}',
                         where=Location(source, line_of(text, ("measurements",)), "measurements"),
                         fix='write "measurements": [{"kernel": ..., "point": {...}, "values": [...]}, ...]')
    for index, obj in enumerate(measurements):
        where = Location(source, record=f"measurements[{index}]")
        # finding the line costs a scan of the text, so only a failing record pays for it
        with lines_of_errors(text, ("measurements", index)):
            add_record(builder, record_from_object(obj, where), where, declared=True)
    return builder.build()


def check_version(version: object, where: Location) -> None:
    """Accept format version 1 only; a newer file needs a newer scalecheck."""
    if type(version) is int and version == VERSION:  # type(): True == 1 must not pass
        return
    newer = type(version) is int and version > VERSION
    raise InputError(
        f"unsupported scalecheck format version {shown(version)}; this scalecheck reads version {VERSION}",
        where=where,
        fix="upgrade scalecheck (pip install --upgrade scalecheck)" if newer
        else f'set "scalecheck": {VERSION}, the format version',
    )


def parameters_from(raw: object, where: Location) -> tuple[str, ...]:
    """The declared parameter names: a non-empty list of distinct, non-empty strings."""
    fix = 'declare the parameters as a list of names, e.g. "parameters": ["p", "n"]'
    if not isinstance(raw, list) or not raw:
        got = "an empty list" if raw == [] else type_name(raw)
        raise InputError(f'"parameters" must be a non-empty list of names, got {got}', where=where, fix=fix)
    seen: set[str] = set()
    duplicates: set[str] = set()  # a set, not list.count: a file may declare a million names
    for name in raw:
        if not isinstance(name, str) or not name.strip():
            raise InputError(f"a parameter name must be a non-empty string, got {shown(name)}",
                             where=where, fix=fix)
        if name in seen:
            duplicates.add(name)
        seen.add(name)
    if duplicates:
        raise InputError(f"parameter '{min(duplicates)}' is declared twice", where=where, fix=fix)
    check_parameter_count(len(raw), where)
    return tuple(raw)


def meta_from(raw: object, where: Location) -> dict[str, str]:
    """Free-form metadata as strings; non-string values keep their JSON spelling."""
    if not isinstance(raw, dict):
        raise InputError(f'"meta" must be an object, got {type_name(raw)}', where=where,
                         fix='write metadata as an object, e.g. "meta": {"commit": "a1b2c3d"}')
    try:
        return {key: value if isinstance(value, str) else json.dumps(value) for key, value in raw.items()}
    except RecursionError:  # the decoder had just enough stack for it, the encoder not
        raise InputError('"meta" is nested too deeply', where=where,
                         fix='keep metadata to names and values, e.g. "meta": {"machine": {"cores": 4}}') from None


def record_from_object(obj: object, where: Location) -> Record:
    """A measurement object in scalecheck's keys (kernel, point, values) or Extra-P's (callpath, params, value)."""
    if not isinstance(obj, dict):
        raise InputError(f"a measurement must be an object, got {type_name(obj)}", where=where,
                         fix='write it as {"kernel": ..., "point": {...}, "values": [...]}')
    extrap = "params" in obj or "callpath" in obj
    if extrap and ("point" in obj or "kernel" in obj):
        raise InputError(
            "the measurement mixes scalecheck's keys (kernel, point) with Extra-P's (callpath, params)",
            where=where,
            fix="use either kernel, metric, unit, point, values or Extra-P's callpath, metric, params, value",
        )
    if extrap:
        check_keys(obj, EXTRAP_KEYS, where, "an Extra-P JSON Lines record")
        return Record(obj.get("callpath", EXTRAP_DEFAULT_CALLPATH), obj.get("metric", ""), "",
                      require(obj, "params", where), require(obj, "value", where))
    check_keys(obj, SCALECHECK_KEYS, where, "a measurement")
    kernel, point = require(obj, "kernel", where), require(obj, "point", where)
    if "values" in obj and "value" in obj:
        raise InputError("the measurement has both 'values' and 'value'", where=where,
                         fix="put all repetitions in one list under 'values'")
    values = obj["value"] if "value" in obj else require(obj, "values", where)
    return Record(kernel, obj.get("metric", ""), obj.get("unit", ""), point, values, obj.get("rounds"))


def require(obj: Mapping[str, object], key: str, where: Location, what: str = "measurement") -> object:
    """`obj[key]`, or an `InputError` naming the missing key; `what` names the object in the fix."""
    if key not in obj:
        raise InputError(f"missing key '{key}'", where=where, fix=f"add '{key}' to this {what}")
    return obj[key]


def check_keys(obj: Mapping[str, object], allowed: Sequence[str], where: Location, what: str) -> None:
    """Reject keys outside `allowed`, because a misspelt 'metric' or 'unit' would otherwise pass silently."""
    if len(obj) <= len(allowed) and all(key in allowed for key in obj):
        return
    for key in obj:
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"did you mean '{close[0]}'? " if close else "remove it; "
            raise InputError(f"unknown key '{key}'", where=where,
                             fix=f"{hint}{what} has the keys {', '.join(allowed)}")


def add_record(builder: RunBuilder, record: Record, where: Location, *, declared: bool,
               can_declare: bool = True) -> None:
    """Check `record` and add it to `builder`.

    `declared` says whether the file declared its parameters (else the first record set them); `can_declare`
    whether its format could have (a JSON Lines header line), so that the fix can suggest it.
    """
    kernel = _text(record.kernel, "kernel", where)
    metric = _text(record.metric, "metric", where)
    unit = _text(record.unit, "unit", where)
    point = point_from_mapping(record.point, builder.parameters, where, declared=declared, can_declare=can_declare)
    values = record.values if isinstance(record.values, list) else [record.values]
    rounds = record.rounds
    if rounds is not None and not isinstance(rounds, list) and not isinstance(record.values, list):
        rounds = [rounds]  # "value": 1.2, "rounds": 3
    if rounds is not None and not isinstance(rounds, list):
        raise InputError(f"'rounds' must be a list of whole numbers, got {type_name(rounds)}", where=where,
                         fix='give one round per value, e.g. "values": [1.2, 1.3], "rounds": [1, 2]')
    builder.add(kernel, metric, point, values, where, unit, rounds)


def point_from_mapping(raw: object, parameters: Sequence[str], where: Location, *,
                       declared: bool, can_declare: bool = True) -> tuple[float, ...]:
    """The coordinates of a point written as {"p": 8, "n": 100}, in the order of `parameters`."""
    if not isinstance(raw, dict) or not raw or len(raw) != len(parameters) or any(n not in raw for n in parameters):
        raise _point_error(raw, parameters, where, declared, can_declare)
    coords = [raw[name] for name in parameters]
    if all(type(value) in (int, float) and math.isfinite(value) for value in coords):
        return tuple(float(value) for value in coords)  # the common case, checked cheaply
    fix = f'write each parameter value as a number, e.g. {{"{parameters[0]}": 8}}'
    return tuple(number(value, f"parameter '{name}'", where, fix) for value, name in zip(coords, parameters))


def _point_error(raw: object, parameters: Sequence[str], where: Location, declared: bool,
                 can_declare: bool) -> InputError:
    """The error saying how point `raw` fails to map each of `parameters` to a value."""
    if not isinstance(raw, dict) or not raw:
        shown = "an empty object" if raw == {} else type_name(raw)
        return InputError(f"the point must be an object mapping parameters to values, got {shown}", where=where,
                          fix=f'write the point as {{"{parameters[0] if parameters else "p"}": 8, ...}}')
    names = ", ".join(parameters)
    source = "the file declares" if declared else "the first record has"
    same = "give every record the parameters of the first one" + (
        ', or declare them in a first line {"scalecheck": 1, "parameters": [...]}' if can_declare else "")
    extra = [name for name in raw if name not in parameters]
    if extra:
        return InputError(f"the point has parameter '{extra[0]}', but {source} parameters ({names})", where=where,
                          fix=f"add '{extra[0]}' to \"parameters\", or remove it from the point" if declared else same)
    missing = [name for name in parameters if name not in raw]
    return InputError(f"the point lacks parameter '{missing[0]}': {source} parameters ({names})", where=where,
                      fix=f"give the point a value for '{missing[0]}'" if declared else same)


def _text(raw: object, key: str, where: Location) -> str:
    """A name field (kernel, metric, unit), which must be a string."""
    if not isinstance(raw, str):
        raise InputError(f"'{key}' must be a string, got {type_name(raw)}", where=where,
                         fix=f'write the {key} as a string, e.g. "{key}": "..."')
    return raw
