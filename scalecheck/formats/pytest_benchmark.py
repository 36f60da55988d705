"""pytest-benchmark's JSON (pytest --benchmark-json FILE, or the files --benchmark-save NAME writes under
.benchmarks/MACHINE/NNNN_NAME.json).

One benchmark record is one point of one kernel, metric "time" in seconds:

- the kernel is the test's node id (`fullname`) without its bracketed parameter id, after the benchmark's `group`
  when it has one (``group/tests/test_sort.py::test_sort``), and with the test's non-numeric parameter values in
  brackets, ordered by parameter name and joined by "-" as pytest joins them (``tests/test_sort.py::test_sort[bubble]``,
  the name scalecheck's own pytest plugin gives such a test);
- the numeric parameters (`params`) are the point; a parameter is numeric when it is a number in every record of the
  test. Files without `params` (pytest-benchmark before 3.1) give the parts of the test id instead, named `param1`,
  `param2`, ... by position;
- the raw timings (`stats.data`, seconds per call, one per round) are the repetitions. Without them (a file saved
  without --benchmark-save-data), a summary must still carry its noise rather than pose as one noise-free value: it
  becomes k = min(rounds, 25) values at the plotting positions (i - 0.5) / k of the quantile function interpolated
  linearly through (0, min), (0.25, q1), (0.5, median), (0.75, q3), (1, max) (`quantile_spread`); without
  quartiles, mean + stddev * z_i at the normal scores z_i, clipped at min, max and 0 (`normal_spread`). The median
  of these values is then pytest-benchmark's median when k is odd (always from 25 rounds on; otherwise it lies
  between the two middle values), their extremes lie inside min and max (at the quantiles 0.5 / k and 1 - 0.5 / k:
  the "min" aggregate is not pytest-benchmark's min), their mean only approximates its mean, and `Series.note` says
  how the values were made. Save the raw data for exact repetitions.

Records without stats (a benchmark that failed or was skipped; pytest-benchmark itself leaves these out since 3.0)
are left out; a file with none left is an error.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist

import numpy as np

from scalecheck.data.measurement import Run, number
from scalecheck.errors import InputError, Location
from scalecheck.formats.limits import LimitedRunBuilder, check_parameter_count
from scalecheck.formats.source import line_of, lines_of_errors, load_json, read_text, shown, type_name

TOP_KEYS = ("machine_info", "commit_info", "benchmarks", "datetime", "version")  # what every file has at the top
MAX_SPREAD = 25  # values a summary without raw data becomes, at most
MISSING_PARAMETER = 1.0  # the value of a parameter a test lacks, when other tests of the file have it
UNIT = "s"
WRITE_FIX = "write the file with pytest --benchmark-json FILE (or --benchmark-save NAME)"
QUARTILE_KEYS = ("min", "q1", "median", "q3", "max")
# pytest-benchmark writes a parameter JSON cannot hold as UNSERIALIZABLE[repr], e.g. UNSERIALIZABLE[np.int64(1000)]
_UNSERIALIZABLE = re.compile(r"UNSERIALIZABLE\[(.*)\]", re.S)
# a number as Python's repr writes it, also numpy's (np.int64(1000) since numpy 2.0)
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER_REPR = re.compile(rf"(?:np|numpy)\.(?:u?int|float)\d*\(({_NUMBER})\)|({_NUMBER})")
_NAMED_OBJECT = re.compile(r"<(?:function|class|built-in function|built-in method|bound method) '?([^' >]+)'?.*>", re.S)
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # differs from run to run, so it stays out of names
# the "-" that pytest puts between parameter ids: not a sign (at the start, after another "-", in 1e-05)
_ID_SPLIT = re.compile(r"(?<=.)(?<!-)(?<![\d.][eE])-")
MAX_LABEL = 60  # characters of a parameter value kept in a kernel name


def is_pytest_benchmark(doc: object) -> bool:
    """Whether `doc`, a decoded JSON document, is a pytest-benchmark file: an object with all the keys every version
    since 3.0 writes at the top (the reader then says what is wrong inside)."""
    return isinstance(doc, dict) and all(key in doc for key in TOP_KEYS)


def read_pytest_benchmark(path: Path) -> Run:
    """`read_pytest_benchmark_text` of the file `path`, read once."""
    path = Path(path)
    return read_pytest_benchmark_text(read_text(path), path)


def read_pytest_benchmark_text(text: str, source: Path) -> Run:
    """Read `text`, the content of the pytest-benchmark file `source`."""
    doc = load_json(source, text)
    if not isinstance(doc, dict):
        raise InputError(f"the top level must be an object with the keys {', '.join(TOP_KEYS)}, got {type_name(doc)}",
                         where=Location(source, line_of(text, ())), fix=WRITE_FIX)
    for key in TOP_KEYS:
        if key not in doc:
            raise InputError(f"missing key '{key}': not a pytest-benchmark file", where=Location(source),
                             fix=WRITE_FIX)
    benchmarks = doc["benchmarks"]
    if not isinstance(benchmarks, list):
        raise InputError(f'"benchmarks" must be a list, got {type_name(benchmarks)}',
                         where=Location(source, line_of(text, ("benchmarks",)), "benchmarks"), fix=WRITE_FIX)
    records = [record for index, raw in enumerate(benchmarks)
               if (record := _record(text, source, index, raw)) is not None]
    if not records:
        problem = ("the file lists no benchmarks" if not benchmarks else
                   f"none of its {len(benchmarks)} benchmark(s) has measurements (no 'stats': each failed or was "
                   "skipped)")
        raise InputError(problem, where=Location(source),
                         fix="run the benchmarks again (pytest --benchmark-only --benchmark-json FILE) and check that "
                             "pytest ran them without error")
    return _build(text, source, records, _meta(doc))


@dataclass
class _Record:
    """One benchmark record, checked: its test, its parameters and its values."""

    index: int  # in "benchmarks", from 0
    where: Location
    test: str  # the kernel name without the non-numeric parameter values
    params: dict[str, object]  # name -> value as written (a number, a string, ...)
    numbers: dict[str, float]  # the parameters whose value is a number
    values: Sequence[object]  # seconds per call, one per round (or spread from the summary)
    positional: bool = False  # parameters named by position in the test id (no "params" in the file)
    summary: str = ""  # how the values were spread from a summary ("" for raw data)
    rounds: int = 0  # rounds the summary stands for
    numeric: set[str] = field(default_factory=set)  # the parameters that are the point (decided per test)


def _record(text: str, source: Path, index: int, raw: object) -> _Record | None:
    """The record `raw` (element `index` of "benchmarks"), or None when it has no stats (failed or skipped)."""
    keys: tuple[str | int, ...] = ("benchmarks", index)
    if not isinstance(raw, dict):
        raise InputError(f"a benchmark must be an object, got {type_name(raw)}",
                         where=Location(source, line_of(text, keys), f"benchmark {index + 1}"), fix=WRITE_FIX)
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise InputError(f"'name' must be a non-empty string, got {shown(name)}",
                         where=Location(source, line_of(text, (*keys, "name") if "name" in raw else keys),
                                        f"benchmark {index + 1}"), fix=WRITE_FIX)
    record = f"benchmark {index + 1} {_quoted(name)}"
    where = Location(source, record=record)

    def fail(problem: str, *inner: str | int, fix: str = WRITE_FIX) -> InputError:
        return InputError(problem, where=Location(source, line_of(text, (*keys, *inner)), record), fix=fix)

    stats = raw.get("stats")
    if stats is None:
        return None
    if not isinstance(stats, dict):
        raise fail(f"'stats' must be an object, got {type_name(stats)}", "stats")
    fullname = raw.get("fullname", name)
    if not isinstance(fullname, str) or not fullname:
        raise fail(f"'fullname' must be a non-empty string, got {shown(fullname)}", "fullname")
    group = raw.get("group")
    if group is not None and not isinstance(group, str):
        raise fail(f"'group' must be a string or null, got {type_name(group)}", "group")
    test = _test_name(fullname, name)
    if group:
        test = f"{group}/{test}"
    params, positional = _params(raw, name, fail)
    numbers = {key: value for key, value in ((k, _number(v)) for k, v in params.items()) if value is not None}
    data = stats.get("data")
    if data is not None and not isinstance(data, list):
        raise fail(f"'stats.data' must be a list of numbers (seconds per round), got {type_name(data)}",
                   "stats", "data")
    if data:
        _check_data(data, fail)
        return _Record(index, where, test, params, numbers, data, positional)
    with lines_of_errors(text, (*keys, "stats")):
        values, summary, rounds = _summary(stats, where)
    return _Record(index, where, test, params, numbers, values, positional, summary, rounds)


def _check_data(data: list[object], fail: Callable[..., InputError]) -> None:
    """An error naming the first entry of `stats.data` that is not a number (the builder checks the numbers)."""
    if all(type(value) in (int, float) for value in data):
        return
    index, value = next((k, v) for k, v in enumerate(data) if type(v) not in (int, float))
    raise fail(f"'stats.data' holds {shown(value)} at position {index + 1}, not a number of seconds", "stats", "data",
               fix="keep the file as pytest-benchmark wrote it: 'stats.data' lists the seconds of each round")


def _test_name(fullname: str, name: str) -> str:
    """The test's node id without its parameter id: tests/test_sort.py::test_sort for tests/test_sort.py::
    test_sort[bubble-1000]. The id is the part of `name` (the node's own name) from its first '['."""
    if "[" not in name:
        return fullname
    base = name[: name.index("[")]
    if fullname.endswith(name):
        return fullname[: len(fullname) - len(name)] + base
    start = fullname.rfind("::") + 2 if "::" in fullname else 0
    cut = fullname.find("[", start)
    return fullname[:cut] if cut > 0 else fullname


def _params(raw: Mapping[str, object], name: str, fail: Callable[..., InputError]) -> tuple[dict[str, object], bool]:
    """The record's parameters by name, and whether they were named by position (no "params" in the record)."""
    params = raw.get("params")
    if isinstance(params, dict):
        return dict(params), False
    if params is not None:
        raise fail(f"'params' must be an object or null, got {type_name(params)}", "params")
    ident = raw.get("param")
    if not isinstance(ident, str) or not ident:
        ident = name[name.index("[") + 1: -1] if "[" in name and name.endswith("]") else ""
    if not ident:
        return {}, False
    parts = _ID_SPLIT.split(ident)
    return {f"param{k}": _id_value(part) for k, part in enumerate(parts, start=1)}, True


def _id_value(part: str) -> object:
    """A part of a test id: the number it spells (an int when whole, as pytest wrote it), else the text."""
    value = number_from_repr(part)
    if value is None:
        return part
    return int(value) if value.is_integer() and re.fullmatch(r"[-+]?\d+", part.strip()) else value


def _summary(stats: Mapping[str, object], where: Location) -> tuple[list[float], str, int]:
    """Values that carry the noise of a summary without raw data: (values, how they were made, rounds)."""
    fix = ("give 'stats' its 'rounds' and either 'data' or the summary min, q1, median, q3, max (or mean and "
           "stddev): " + WRITE_FIX)
    if "rounds" not in stats:
        raise InputError("the stats have neither raw data ('data') nor 'rounds'", where=where, fix=fix)
    rounds = stats["rounds"]
    if (isinstance(rounds, bool) or not isinstance(rounds, (int, float)) or not math.isfinite(rounds)
            or rounds != int(rounds) or rounds < 1):
        raise InputError(f"'stats.rounds' must be a whole number from 1, got {shown(rounds)}", where=where, fix=fix)
    count = min(int(rounds), MAX_SPREAD)

    def value(key: str) -> float:
        return number(stats[key], f"'stats.{key}'", where, fix)

    if all(stats.get(key) is not None for key in QUARTILE_KEYS):
        knots = [value(key) for key in QUARTILE_KEYS]
        return quantile_spread((0.0, 0.25, 0.5, 0.75, 1.0), knots, count), "min, quartiles and max", int(rounds)
    if stats.get("mean") is not None and stats.get("stddev") is not None:
        low = value("min") if stats.get("min") is not None else 0.0
        high = value("max") if stats.get("max") is not None else math.inf
        values = normal_spread(value("mean"), value("stddev"), value("stddev"), count, max(low, 0.0), high)
        return values, "mean ± stddev (normal scores)", int(rounds)
    missing = [key for key in QUARTILE_KEYS if stats.get(key) is None]
    raise InputError(f"the stats have neither raw data ('data') nor a summary (missing {', '.join(missing)})",
                     where=where, fix=fix)


def quantile_spread(probabilities: Sequence[float], knots: Sequence[float], count: int) -> list[float]:
    """`count` values at the plotting positions (i - 0.5) / count, i = 1..count, of the quantile function
    interpolated linearly through the points (probabilities[k], knots[k]).

    The knots are made non-decreasing first: a summary rounded to a few digits (asv keeps five) can cross.
    """
    positions = (np.arange(count) + 0.5) / count
    monotone = np.maximum.accumulate(np.asarray(knots, dtype=float))
    return [float(v) for v in np.interp(positions, probabilities, monotone)]


def normal_spread(center: float, scale_low: float, scale_high: float, count: int, low: float = 0.0,
                  high: float = math.inf) -> list[float]:
    """`count` values center + z_i * scale at the normal scores z_i of the plotting positions (i - 0.5) / count,
    with `scale_low` below the center and `scale_high` above it, clipped to [low, high]."""
    scores = _NORMAL_SCORES[count] if count < len(_NORMAL_SCORES) else _normal_scores(count)
    return [min(max(center + z * (scale_low if z < 0 else scale_high), low), high) for z in scores]


def _normal_scores(count: int) -> tuple[float, ...]:
    """The normal scores of the plotting positions (i - 0.5) / count, i = 1..count."""
    normal = NormalDist()
    return tuple(normal.inv_cdf((i + 0.5) / count) for i in range(count))


_NORMAL_SCORES = tuple(_normal_scores(count) for count in range(MAX_SPREAD + 1))  # a reader spreads up to 25


def _build(text: str, source: Path, records: list[_Record], meta: dict[str, str]) -> Run:
    """The run of the checked records: per test, a parameter is the point when it is a number in every record."""
    by_test: dict[str, list[_Record]] = {}
    for record in records:
        by_test.setdefault(record.test, []).append(record)
    parameters: dict[str, None] = {}  # the numeric parameters in the order first met
    for group in by_test.values():
        numeric = {key for record in group for key in record.params}
        numeric = {key for key in numeric if all(key in r.numbers or key not in r.params for r in group)}
        for record in group:
            record.numeric = numeric & set(record.numbers)
    for record in records:
        parameters.update((key, None) for key in record.params if key in record.numeric)
    names = tuple(parameters)
    check_parameter_count(len(names), Location(source))
    builder = LimitedRunBuilder(names, source)
    builder.meta.update(meta)
    summaries: dict[str, list[_Record]] = {}  # kernel -> its records spread from a summary
    points: dict[str, int] = {}  # kernel -> its records
    positional: set[str] = set()
    for record in records:
        labels = [value_label(record.params[key]) for key in sorted(record.params) if key not in record.numeric]
        kernel = record.test + (f"[{'-'.join(labels)}]" if labels else "")
        point = [record.numbers[key] if key in record.numeric else MISSING_PARAMETER for key in names]
        keys = ("benchmarks", record.index) + (() if record.summary else ("stats", "data"))
        with lines_of_errors(text, keys):
            builder.add(kernel, "time", point, record.values, record.where, UNIT)
        points[kernel] = points.get(kernel, 0) + 1
        if record.summary:
            summaries.setdefault(kernel, []).append(record)
        if record.positional and record.numeric:
            positional.add(kernel)
    for kernel in sorted(set(summaries) | positional):
        notes = (_summary_note(summaries.get(kernel, []), points[kernel]),
                 _POSITIONAL_NOTE if kernel in positional else "")
        builder.notes[(kernel, "time")] = "; ".join(filter(None, notes))
    return builder.build()


_POSITIONAL_NOTE = ("the file names no parameters (pytest-benchmark before 3.1), so they are named param1, param2, "
                    "... by their place in the test id")


def _summary_note(records: list[_Record], total: int) -> str:
    """What `Series.note` says about values spread from summaries: "pytest-benchmark summary of 10,000 rounds,
    no raw data (--benchmark-save-data keeps them): 25 values spread over min, quartiles and max"."""
    if not records:
        return ""
    rounds = sorted({r.rounds for r in records})
    counts = sorted({min(r.rounds, MAX_SPREAD) for r in records})
    how = " or ".join(sorted({r.summary for r in records}))
    of = (f"summary of {rounds[0]:,} rounds" if len(rounds) == 1 else
          f"summaries of {rounds[0]:,} to {rounds[-1]:,} rounds")
    spread = f"{counts[0]} values" if len(counts) == 1 else f"{counts[0]} to {counts[-1]} values per point"
    part = f" ({len(records)} of {total} points)" if len(records) < total else ""
    return (f"pytest-benchmark {of}{part}, no raw data (--benchmark-save-data keeps them): {spread} spread over "
            f"{how}")


def _meta(doc: Mapping[str, object]) -> dict[str, str]:
    """`Run.meta`: the source, the commit and the machine's fingerprint in scalecheck's keys (`scalecheck.machine`)
    from pytest-benchmark's machine_info, so that a check knows whether two files come from one machine."""
    meta = {"source": "pytest-benchmark"}
    info = doc.get("machine_info")
    if isinstance(info, dict):
        cpu = info["cpu"] if isinstance(info.get("cpu"), dict) else {}
        facts = {
            "cpu": cpu.get("brand_raw") or cpu.get("brand") or info.get("processor"),
            "cores": cpu.get("count"),
            "os": f"{info['system']}-{info['machine']}" if info.get("system") and info.get("machine") else None,
            "host": info.get("node"),
            "python": (f"{info['python_implementation']} {info['python_version']}"
                       if info.get("python_implementation") and info.get("python_version") else None),
        }
        machine = fingerprint_of(facts)
        if machine:
            meta["machine"] = machine
    commit = doc.get("commit_info")
    if isinstance(commit, dict) and isinstance(commit.get("id"), str) and commit["id"] not in ("", "unversioned"):
        meta["commit"] = commit["id"]
    return meta


def fingerprint_of(facts: Mapping[str, object]) -> str:
    """A machine fingerprint (JSON text, keys sorted, string values, as `scalecheck.machine.fingerprint` writes it)
    of the facts that are strings or numbers and not blank; "" when none is."""
    kept = {}
    for key, value in facts.items():
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            continue
        text = " ".join("".join(c if c.isprintable() else " " for c in str(value)).split())[:200]
        if text:
            kept[key] = text
    return json.dumps(kept, sort_keys=True) if kept else ""


def _number(value: object) -> float | None:
    """`value` as a finite number when it is one (an int or float, or a number pytest-benchmark wrote as
    UNSERIALIZABLE[np.int64(1000)]), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        result = float(value)
        return result if math.isfinite(result) else None
    if isinstance(value, str):
        inner = _UNSERIALIZABLE.fullmatch(value)
        if inner:
            return number_from_repr(inner.group(1))
    return None  # a string parameter stays a string, even "1000": the test chose to pass text


def number_from_repr(text: str) -> float | None:
    """The finite number that `text`, a Python repr, spells (1000, 0.5, 1e-05, np.int64(1000)), else None."""
    match = _NUMBER_REPR.fullmatch(text.strip())
    if match is None:
        return None
    result = float(match.group(1) or match.group(2))
    return result if math.isfinite(result) else None


def value_label(value: object) -> str:
    """A parameter value as it shows in a kernel name: a string as it is, `bubble` for a function, JSON for the
    rest; cut to MAX_LABEL characters with a checksum of the whole, so that it stays short and distinct."""
    if isinstance(value, str):
        inner = _UNSERIALIZABLE.fullmatch(value)
        text = _ADDRESS.sub("", inner.group(1) if inner else value)
        named = _NAMED_OBJECT.fullmatch(text)
        text = named.group(1).rsplit(".", 1)[-1] if named else text
    elif value is None or isinstance(value, (bool, int, float)):
        text = str(value)  # as pytest shows it in a test id: None, True, 1000, 0.5
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (ValueError, RecursionError):
            text = type_name(value)
    if len(text) <= MAX_LABEL:
        return text
    return f"{text[:MAX_LABEL - 9]}~{zlib.crc32(text.encode('utf-8', 'surrogatepass')):08x}"


def _quoted(name: str) -> str:
    """`name` in quotes for a record, cut to 60 characters."""
    return f"'{name}'" if len(name) <= 60 else f"'{name[:57]}...'"


