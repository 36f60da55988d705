"""asv's results files (.asv/results/MACHINE/COMMIT-ENV.json, written by `asv run`), versions 1 and 2.

A benchmark is a kernel (its name, e.g. ``benchmarks.TimeSuite.time_sort``); each combination of its parameter
values is a point of it:

- a parameter whose values are all numbers (asv writes each value's repr: "1000", "0.5", "np.int64(8)") is part of
  the point; the values of the others ("'bubble'", "None", "True") go into the kernel name, quotes removed, in
  brackets and joined by ", " (``benchmarks.Sort.time_sort[bubble]``);
- the parameter names are in asv's benchmarks.json (the results folder, one level above the machine's folder), not
  in the results file; it is read from there when the file is read from disk. Without it, they are named param1,
  param2, ... by position (asv's own names for unnamed parameters) and `Series.note` says so;
- the metric follows the benchmark type: time (seconds), memory and peakmemory (bytes), track (the unit in
  benchmarks.json), from benchmarks.json or the name's prefix (time_, timeraw_, mem_, peakmem_, track_);
- the samples (`asv run --record-samples`, seconds per call) are the repetitions. Without them, the summary must
  still carry its noise rather than pose as one noise-free value: the result (the median of the samples) and the
  quartiles asv keeps become k = min(samples, 25) values at the plotting positions (i - 0.5) / k of a two-piece
  normal distribution through the median with the quartiles in their places (`normal_spread`, clipped at 0 for
  times and sizes); version 1 files also kept min and max, so there the quantile function is interpolated linearly
  through min, quartiles and max as for pytest-benchmark (`quantile_spread`). The median is then asv's own, the
  spread matches the quartiles, the tails are a model's; `Series.note` says how the values were made. A result
  without quartiles (track and memory benchmarks) is one value;
- a null or NaN result (a benchmark that failed, timed out or was skipped) is left out.

Version 1 files (written by older asv) are read as asv's `Results.update_to_2` upgrades them: a bare value or an
object with "result", "stats", "samples" and "params" per benchmark.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist

from scalecheck.data.measurement import Run, is_time_metric, number
from scalecheck.errors import InputError, Location
from scalecheck.formats.limits import LimitedRunBuilder, check_parameter_count
from scalecheck.formats.pytest_benchmark import (
    MAX_SPREAD,
    MISSING_PARAMETER,
    fingerprint_of,
    normal_spread,
    number_from_repr,
    quantile_spread,
    value_label,
)
from scalecheck.formats.source import lines_of_errors, load_json, read_text, shown, type_name

VERSIONS = (1, 2)
DEFAULT_SAMPLES = 10  # asv's usual number of samples, for a summary that does not say how many it stands for
BENCHMARKS_JSON = "benchmarks.json"
WRITE_FIX = "read the results file that asv run writes (.asv/results/MACHINE/COMMIT-ENV.json)"
# benchmark type -> (metric, unit); the prefixes asv gives each type's names
TYPES = {"time": ("time", "s"), "memory": ("memory", "bytes"), "peakmemory": ("peakmemory", "bytes"),
         "track": ("track", "")}
PREFIXES = (("timeraw_", "time"), ("time_", "time"), ("peakmem_", "peakmemory"), ("mem_", "memory"),
            ("track_", "track"))
MEDIAN_ONLY = "the median only"
MACHINE_KEYS = frozenset({"arch", "cpu", "machine", "num_cpu", "os", "ram", "version"})  # asv's machine.json
_QUARTILE_Z = NormalDist().inv_cdf(0.75)  # a normal distribution's quartiles lie this many deviations out


def is_asv(doc: object) -> bool:
    """Whether `doc`, a decoded JSON document, is an asv results file: an object with asv's "commit_hash", "params",
    "results" and an integer "version", plus "result_columns" from version 2 on (the reader then says what is wrong
    inside); or one of the two other files asv keeps beside them, which the reader refuses by name."""
    if not isinstance(doc, dict):
        return False
    version = doc.get("version")
    return type(version) is int and (
        all(key in doc for key in ("commit_hash", "params", "results")) and (version < 2 or "result_columns" in doc)
        or bool(_companion(doc)))


def _companion(doc: Mapping[str, object]) -> str:
    """"machine.json" or "benchmarks.json" when `doc` is that file of asv's results folder, else ""."""
    if "results" in doc or type(doc.get("version")) is not int:
        return ""
    if isinstance(doc.get("machine"), str) and set(doc) <= MACHINE_KEYS:
        return "machine.json"
    entries = [entry for key, entry in doc.items() if key != "version"]
    if entries and all(isinstance(entry, dict) and "param_names" in entry for entry in entries):
        return BENCHMARKS_JSON
    return ""


def read_asv(path: Path) -> Run:
    """`read_asv_text` of the file `path`, read once."""
    path = Path(path)
    return read_asv_text(read_text(path), path)


def read_asv_text(text: str, source: Path) -> Run:
    """Read `text`, the content of the asv results file `source`; asv's benchmarks.json is looked for at
    ``source/../../benchmarks.json`` when `source` is a file on disk."""
    doc = load_json(source, text)
    top = Location(source, record="top level")
    if not isinstance(doc, dict):
        raise InputError(f"the top level must be an object (an asv results file), got {type_name(doc)}",
                         where=Location(source, 1), fix=WRITE_FIX)
    companion = _companion(doc)
    if companion:
        what = "the machine's description" if companion == "machine.json" else "the benchmarks' descriptions"
        raise InputError(f"this is asv's {companion} ({what}), not a results file", where=Location(source),
                         fix="name asv's results files, .asv/results/MACHINE/COMMIT-ENV.json (scalecheck reads "
                             f"{BENCHMARKS_JSON} from there itself)")
    version = doc.get("version")
    if type(version) is not int or version not in VERSIONS:
        raise InputError(f"unsupported asv results version {shown(version)}; scalecheck reads versions 1 and 2",
                         where=top, fix="upgrade scalecheck, or let asv upgrade the file (asv update)"
                         if type(version) is int and version > 2 else WRITE_FIX)
    for key in ("commit_hash", "results") + (("result_columns",) if version == 2 else ()):
        if key not in doc:
            raise InputError(f"missing key '{key}': not an asv results file", where=top, fix=WRITE_FIX)
    if not isinstance(doc["results"], dict):
        raise InputError(f'"results" must be an object, got {type_name(doc["results"])}', where=top, fix=WRITE_FIX)
    benchmarks = _benchmarks(doc, source, text)
    return _build(source, text, benchmarks, _descriptions(source), _meta(doc))


@dataclass(frozen=True)
class _Benchmark:
    """One benchmark's results, in version 2's terms: one entry per combination of parameter values."""

    name: str
    result: list[object]  # the result per combination (the median of the samples for time benchmarks)
    params: list[list[str]]  # per parameter, the reprs of its values; the combinations are their product
    samples: list[object] | None  # per combination, a list of samples or null
    stats: list[dict[str, object]]  # per combination: q_25, q_75, repeat (and min, max in version 1)


def _benchmarks(doc: Mapping[str, object], source: Path, text: str) -> list[_Benchmark]:
    """The benchmarks of a version 1 or 2 results file, checked for shape."""
    results = doc["results"]
    assert isinstance(results, dict)
    if doc["version"] == 1:
        out = []
        for name, row in results.items():
            with lines_of_errors(text, ("results", name)):
                out.append(_from_v1(name, row, source))
        return out
    columns = doc["result_columns"]
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns) or "result" not in columns:
        raise InputError(f'"result_columns" must be a list of column names with "result", got {shown(columns)}',
                         where=Location(source, record="result_columns"), fix=WRITE_FIX)
    out = []
    for name, row in results.items():
        with lines_of_errors(text, ("results", name)):
            benchmark = _from_v2(name, row, columns, source)
        if benchmark is not None:
            out.append(benchmark)
    return out


def _from_v2(name: str, row: object, columns: list[str], source: Path) -> _Benchmark | None:
    """A version 2 benchmark: a list with one entry per column of "result_columns"; None when it has no result."""
    where = _where(source, name)
    if not isinstance(row, list):
        raise InputError(f"a benchmark's results must be a list (one entry per column of result_columns), got "
                         f"{type_name(row)}", where=where, fix=WRITE_FIX)
    cells = dict(itertools.zip_longest(columns, row[: len(columns)]))
    result = cells.get("result")
    if result is None:
        return None  # failed before any result: asv writes null
    stats = [{key[len("stats_"):]: _at(cells.get(key), j, where, key)
              for key in ("stats_q_25", "stats_q_75", "stats_repeat")}
             for j in range(len(result) if isinstance(result, list) else 1)]
    return _checked(name, result, cells.get("params"), cells.get("samples"), stats, where)


def _from_v1(name: str, row: object, source: Path) -> _Benchmark:
    """A version 1 benchmark: a bare value, or {"result": ..., "stats": ..., "samples": ..., "params": ...}."""
    where = _where(source, name)
    if not isinstance(row, dict):
        row = {"result": row}
    result = row.get("result")
    result = result if isinstance(result, list) else [result]
    stats = row.get("stats")
    stats = stats if isinstance(stats, list) else [stats] * len(result)
    if len(stats) != len(result):
        raise InputError(f"{len(result)} result(s) but {len(stats)} stats", where=where, fix=WRITE_FIX)
    kept = [{key: s.get(key) for key in ("q_25", "q_75", "repeat", "min", "max")} if isinstance(s, dict) else {}
            for s in stats]
    return _checked(name, result, row.get("params", []), row.get("samples"), kept, where)


def _checked(name: str, result: object, params: object, samples: object, stats: list[dict[str, object]],
             where: Location) -> _Benchmark:
    """A benchmark whose results, parameters and samples have the shapes asv writes."""
    result = result if isinstance(result, list) else [result]
    params = [] if params is None else params
    if not isinstance(params, list) or not all(isinstance(p, list) and all(isinstance(v, str) for v in p)
                                               for p in params):
        raise InputError(f"'params' must be a list of lists of parameter values (their reprs), got {shown(params)}",
                         where=where, fix=WRITE_FIX)
    combinations = math.prod(len(p) for p in params)
    if len(result) != combinations:
        raise InputError(f"{len(result)} result(s) for {combinations} combination(s) of the parameter values",
                         where=where, fix=WRITE_FIX)
    if samples is not None and (not isinstance(samples, list) or len(samples) != combinations):
        raise InputError(f"'samples' must be a list with one entry per combination of the parameter values, got "
                         f"{shown(samples)}", where=where, fix=WRITE_FIX)
    return _Benchmark(name, result, params, samples, stats)


def _at(column: object, index: int, where: Location, key: str) -> object:
    """Entry `index` of a per-combination column (None when the column is null or short)."""
    if column is None:
        return None
    if not isinstance(column, list):
        raise InputError(f"'{key}' must be a list (one entry per combination) or null, got {type_name(column)}",
                         where=where, fix=WRITE_FIX)
    return column[index] if index < len(column) else None


def _descriptions_path(source: Path) -> Path:
    """Where asv keeps the benchmarks.json of the results file `source`: results/MACHINE/FILE.json ->
    results/benchmarks.json (absolute)."""
    return source.absolute().parent.parent / BENCHMARKS_JSON


def _shown_path(path: Path, source: Path) -> Path:
    """`path` as a message shows it: relative to the working folder when `source` was given relative to it."""
    if source.is_absolute():
        return path
    try:
        return Path(os.path.relpath(path))
    except ValueError:  # on another drive (Windows)
        return path


def _descriptions(source: Path) -> dict[str, object] | None:
    """asv's benchmarks.json for the results file `source` (results/MACHINE/FILE.json -> results/benchmarks.json),
    or None when there is none (a file read from git, or copied out of its folder). A file of that name that is not
    asv's (no integer "version", entries that are not objects) is not used."""
    path = _descriptions_path(source)
    try:
        found = path.is_file()
    except OSError:  # a name too long for the file system, say
        found = False
    if not found:
        return None
    doc = load_json(path, read_text(path))
    if not isinstance(doc, dict) or type(doc.get("version")) is not int or not all(
            isinstance(entry, dict) for key, entry in doc.items() if key != "version"):
        return None
    return doc


def _build(source: Path, text: str, benchmarks: list[_Benchmark], described: Mapping[str, object] | None,
           meta: dict[str, str]) -> Run:
    """The run: each combination of a benchmark's parameter values with a result is one point."""
    shown_at = _shown_path(_descriptions_path(source), source)
    plans = [_plan(b, described, shown_at) for b in benchmarks]
    parameters: dict[str, None] = {}
    for plan in plans:
        parameters.update((plan.names[k], None) for k in plan.numeric)
    names = tuple(parameters)
    check_parameter_count(len(names), Location(source))
    builder = LimitedRunBuilder(names, source)
    builder.meta.update(meta)
    notes: dict[tuple[str, str], _Notes] = {}
    added = 0
    for benchmark, plan in zip(benchmarks, plans):
        with lines_of_errors(text, ("results", benchmark.name)):
            added += _add_benchmark(builder, benchmark, plan, source, notes)
    builder.notes.update({key: note for key, kept in notes.items() if (note := kept.text())})
    if not added:
        raise InputError("no benchmark has a result: each failed, timed out or was skipped", where=Location(source),
                         fix="run the benchmarks again (asv run) and check asv's output for their errors")
    return builder.build()


def _add_benchmark(builder: LimitedRunBuilder, benchmark: _Benchmark, plan: _Plan, source: Path,
                   notes: dict[tuple[str, str], _Notes]) -> int:
    """Add each combination of `benchmark`'s parameter values that has a result; how many were added."""
    # per parameter, what each of its values becomes: a coordinate (numeric parameters) or a label in the name
    numbers = [_coordinates(values) if k in plan.numeric else [] for k, values in enumerate(benchmark.params)]
    labels = [[] if k in plan.numeric else [value_label(_unquoted(v)) for v in values] for k, values in
              enumerate(benchmark.params)]
    places = {name: plan.names.index(name) if name in plan.names and plan.names.index(name) in plan.numeric else -1
              for name in builder.parameters}
    added = 0
    indices = itertools.product(*(range(len(values)) for values in benchmark.params))
    for j, (combination, chosen) in enumerate(zip(itertools.product(*benchmark.params), indices)):
        value = benchmark.result[j]
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue  # failed, timed out or skipped
        where = _where(source, benchmark.name, combination)
        shown = [labels[k][i] for k, i in enumerate(chosen) if k not in plan.numeric]
        kernel = benchmark.name + (f"[{', '.join(shown)}]" if shown else "")
        point = [MISSING_PARAMETER if k < 0 else numbers[k][chosen[k]] for k in places.values()]
        values, spread = _values(benchmark, j, value, plan.metric, where)
        builder.add(kernel, plan.metric, point, values, where, plan.unit)
        added += 1
        kept = notes.setdefault((kernel, plan.metric), _Notes())
        kept.points += 1
        if spread is not None:
            kept.spreads.append(spread)
        if plan.unnamed and plan.numeric:
            kept.unnamed = plan.unnamed
    return added


def _coordinates(reprs: Sequence[str]) -> list[float]:
    """The numbers that the values of a numeric parameter spell."""
    out = []
    for text in reprs:
        coordinate = number_from_repr(text)
        assert coordinate is not None  # _plan found every value of this parameter a number
        out.append(coordinate)
    return out


@dataclass(frozen=True)
class _Spread:
    """How one point's values were made from asv's summary: the samples it stands for (None: not recorded), how
    many values it became and from which statistics."""

    samples: int | None
    count: int
    how: str


@dataclass
class _Notes:
    """What `Series.note` says about one kernel: its points, those spread from summaries, why its parameters are
    named by position ("" when asv named them)."""

    points: int = 0
    spreads: list[_Spread] = field(default_factory=list)
    unnamed: str = ""

    def text(self) -> str:
        """"asv summaries of 8 to 10 samples, no samples recorded (asv run --record-samples keeps them): 8 to 10
        values per point spread over the median and quartiles (normal tails)", and the naming, joined by "; "."""
        parts = []
        spread = [s for s in self.spreads if s.how != MEDIAN_ONLY]
        if spread:
            samples = sorted({s.samples for s in spread if s.samples is not None})
            counts = sorted({s.count for s in spread})
            of = ("summaries" if len(samples) > 1 else "summary") + (
                f" of {_span(samples)} sample{'' if samples == [1] else 's'}" if samples else "")
            if any(s.samples is None for s in spread):
                of += f" ({'at some points ' if samples else ''}the number of samples not recorded: "
                of += f"{DEFAULT_SAMPLES} assumed)"
            at = f" ({len(spread)} of {self.points} points)" if len(spread) < self.points else ""
            per = "" if len(counts) == 1 else " per point"
            parts.append(f"asv {of}{at}, no samples recorded (asv run --record-samples keeps them): {_span(counts)} "
                         f"values{per} spread over {' or '.join(sorted({s.how for s in spread}))}")
        if any(s.how == MEDIAN_ONLY for s in self.spreads):
            parts.append("asv gave the median only (no samples, no quartiles)")
        if self.unnamed:
            parts.append(self.unnamed)
        return "; ".join(parts)


def _span(numbers: Sequence[int]) -> str:
    """"10" or "8 to 10" for sorted whole numbers."""
    return f"{numbers[0]:,}" if numbers[0] == numbers[-1] else f"{numbers[0]:,} to {numbers[-1]:,}"


@dataclass(frozen=True)
class _Plan:
    """How a benchmark's results map to kernels: its parameter names, which are numeric, its metric and unit."""

    names: tuple[str, ...]
    numeric: frozenset[int]  # indices of the parameters whose values are all numbers
    unnamed: str  # why the names were made up by position ("" when benchmarks.json gave them)
    metric: str
    unit: str


def _plan(benchmark: _Benchmark, described: Mapping[str, object] | None, shown_at: Path) -> _Plan:
    """The names, numeric parameters, metric and unit of `benchmark`, from benchmarks.json (`shown_at`, as the
    notes name it) or from its name."""
    entry = described.get(benchmark.name) if described is not None else None
    entry = entry if isinstance(entry, dict) else {}
    count = len(benchmark.params)
    given = entry.get("param_names")
    if (isinstance(given, list) and len(given) == count and all(isinstance(n, str) and n.strip() for n in given)
            and len(set(given)) == count):
        names, unnamed = tuple(given), ""
    else:
        names = tuple(f"param{k}" for k in range(1, count + 1))
        why = (f"asv's {BENCHMARKS_JSON}, which names them, is not at {shown_at}" if described is None else
               f"{shown_at} does not describe this benchmark" if not entry else
               f"{shown_at} names other parameters for this benchmark (run asv again to update it)")
        unnamed = f"parameters named param1, param2, ... by position: {why}"
    numeric = frozenset(k for k, values in enumerate(benchmark.params)
                        if values and all(number_from_repr(v) is not None for v in values))
    kind = entry.get("type")
    if not isinstance(kind, str) or kind not in TYPES:
        short = benchmark.name.rsplit(".", 1)[-1]
        kind = next((k for prefix, k in PREFIXES if short.startswith(prefix)), "")
    metric, unit = TYPES.get(str(kind), ("value", ""))
    given_unit = entry.get("unit")
    if kind == "track" and isinstance(given_unit, str) and given_unit not in ("", "unit"):
        unit = given_unit
    return _Plan(names, numeric, unnamed, metric, unit)


def _values(benchmark: _Benchmark, j: int, result: object, metric: str,
            where: Location) -> tuple[list[object], _Spread | None]:
    """The repetitions of combination `j`: its samples when asv recorded them, else values spread from its result
    and quartiles; and how they were made (None for samples)."""
    samples = benchmark.samples[j] if benchmark.samples is not None else None
    if samples is not None and not isinstance(samples, list):
        raise InputError(f"the samples must be a list of numbers, got {type_name(samples)}", where=where,
                         fix=WRITE_FIX)
    if samples:
        return samples, None
    fix = WRITE_FIX
    median = number(result, "the result", where, fix)
    stats = benchmark.stats[j] if j < len(benchmark.stats) else {}
    q25, q75 = _finite(stats.get("q_25")), _finite(stats.get("q_75"))
    if q25 is None or q75 is None:
        return [median], (_Spread(None, 1, MEDIAN_ONLY) if metric == "time" else None)
    stated = _finite(stats.get("repeat"))
    count = int(stated) if stated is not None and stated >= 1 else DEFAULT_SAMPLES
    low = 0.0 if is_time_metric(metric) or metric in ("memory", "peakmemory") else -math.inf
    spread = min(count, MAX_SPREAD)
    lowest, highest = _finite(stats.get("min")), _finite(stats.get("max"))
    if lowest is not None and highest is not None:  # version 1 kept the extremes too
        values = quantile_spread((0.0, 0.25, 0.5, 0.75, 1.0), (lowest, q25, median, q75, highest), spread)
        how = "min, quartiles and max"
    else:
        values = normal_spread(median, max(median - q25, 0.0) / _QUARTILE_Z, max(q75 - median, 0.0) / _QUARTILE_Z,
                               spread, low)
        how = "the median and quartiles (normal tails)"
    return list(values), _Spread(count if stated is not None and stated >= 1 else None, spread, how)


def _meta(doc: Mapping[str, object]) -> dict[str, str]:
    """`Run.meta`: the source, the commit, asv's environment and the machine's fingerprint in scalecheck's keys
    (`scalecheck.machine`) from asv's machine description ("params")."""
    meta = {"source": "asv"}
    for key, name in (("commit_hash", "commit"), ("env_name", "env")):
        if isinstance(doc.get(key), str) and doc[key]:
            meta[name] = str(doc[key])
    params = doc.get("params")
    if isinstance(params, dict):
        system = params.get("os")
        arch = params.get("arch")
        facts = {"cpu": params.get("cpu"), "cores": params.get("num_cpu"), "host": params.get("machine"),
                 "os": f"{system.split()[0]}-{arch}" if isinstance(system, str) and system.split()
                 and isinstance(arch, str) and arch else None}
        machine = fingerprint_of(facts)
        if machine:
            meta["machine"] = machine
    return meta


def _finite(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _unquoted(text: str) -> str:
    """A string parameter's repr without its quotes ('bubble' -> bubble); other reprs as they are."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _where(source: Path, name: str, combination: Sequence[str] = ()) -> Location:
    """The location of a benchmark (and one combination of its parameter values)."""
    shown = name if len(name) <= 80 else name[:77] + "..."
    record = f"benchmark '{shown}'" + (f" ({', '.join(combination)})" if combination else "")
    return Location(source, record=record)



