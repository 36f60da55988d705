"""Google Benchmark's JSON (--benchmark_format=json on standard output, or --benchmark_out=FILE
--benchmark_out_format=json).

A benchmark instance is named ``family/arguments.../settings``, e.g. ``BM_Sort/1024``, ``BM_Copy/n:64/m:8`` or
``BM_Mul/8/16/real_time/threads:4``. Its arguments are the parameters: a named one (``n:64``, from ``->ArgNames``)
keeps its name; an unnamed one is called ``n`` when it is the first (Google Benchmark's own name for the size of
``->Complexity()``), ``arg2``, ``arg3``, ... after it (``state.range(1)`` is ``arg2``). The kernel is the name without
its arguments and without the settings that only say how long it was measured (``min_time:``,
``min_warmup_time:``, ``iterations:``, ``repeats:``); ``real_time``, ``manual_time``, ``process_time`` and
``threads:N`` stay in it, because they change what is measured. A benchmark without an argument that others in the
file have gets 0 for it.

Every repetition (``--benchmark_repetitions=N``: one row of run_type "iteration" each) is a value of the metrics
``cpu_time`` and ``real_time``, in seconds, and of every numeric user counter (``items_per_second``, custom
counters) and memory figure under its own name. Aggregate rows (mean, median, stddev, cv) are skipped, unless an
instance has nothing else (``--benchmark_report_aggregates_only``): then its median (or mean) is its one value.
The ``_BigO`` and ``_RMS`` rows of ``->Complexity()`` become the note of the kernel's time series, so that Google
Benchmark's estimate is shown beside scalecheck's model. Rows of failed (``error_occurred``) or skipped benchmarks
are left out, and the kernel's series say so in their note.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from scalecheck.data.measurement import Run, number
from scalecheck.errors import InputError, Location
from scalecheck.formats.limits import MAX_PARAMETERS, LimitedRunBuilder, check_parameter_count
from scalecheck.formats.scalecheck_json import require
from scalecheck.formats.source import line_of, lines_of_errors, load_json, shown, type_name

# what every Google Benchmark version writes in "context" (since 1.0)
CONTEXT_KEYS = ("date", "num_cpus")
PER_SECOND = {"ns": 1e9, "us": 1e6, "ms": 1e3, "s": 1.0}  # the time units Google Benchmark writes
TIME_METRICS = ("cpu_time", "real_time")
FIRST_ARGUMENT = "n"  # the name of an unnamed first argument; later ones are arg2, arg3, ...
_MISSING = 0.0  # the value of an argument that a benchmark lacks while others in the file have it
_SETTINGS = ("min_time", "min_warmup_time", "iterations", "repeats")  # how long a benchmark ran, not what
_AGGREGATES = ("mean", "median", "stddev", "cv")  # aggregate rows of --benchmark_repetitions
_SINGLE = ("median", "mean")  # the aggregates that stand for an instance without repetitions, preferred first
# keys of a row that are not a user counter or a memory figure
_NOT_COUNTERS = frozenset({
    "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions", "repetition_index",
    "threads", "aggregate_name", "aggregate_unit", "error_occurred", "error_message", "skipped", "skip_message",
    "iterations", "real_time", "cpu_time", "time_unit", "cpu_coefficient", "real_coefficient", "big_o", "rms",
    "label"})
_UNITS = {"bytes_per_second": "B/s", "items_per_second": "1/s", "max_bytes_used": "B",
          "total_allocated_bytes": "B", "net_heap_growth": "B"}
_BIG_O = {"(1)": "O(1)", "N": "O(N)", "N^2": "O(N^2)", "N^3": "O(N^3)", "lgN": "O(log N)", "NlgN": "O(N log N)",
          "f(N)": "O(f(N)), the benchmark's own function"}
_INTEGER = re.compile(r"-?[0-9]+")
_NAMED = re.compile(r"([^:]+):(-?[0-9]+)")
_AGGREGATE_NAME = re.compile(r"(.+)_(" + "|".join(_AGGREGATES) + r")")
# Google Benchmark writes a NaN of negative sign (what 0/0 gives on x86) as -NaN, which JSON decoders refuse
_NEGATIVE_NAN = re.compile(r'(":\s*)-NaN(?=\s*[,}\]])')
ARGUMENTS_FIX = f"give the benchmarks at most {MAX_PARAMETERS} distinct arguments in all"
NAMES_FIX = ("give the arguments distinct names with ->ArgNames({...}) (an unnamed first argument is called n, the "
             "k-th arg<k>)")


def is_google_benchmark(doc: object) -> bool:
    """Whether `doc`, a decoded JSON document, is a google-benchmark file: an object with a "context" that has the
    keys every version writes and a list of "benchmarks"."""
    if not isinstance(doc, dict):
        return False
    context = doc.get("context")
    return (isinstance(context, dict) and all(key in context for key in CONTEXT_KEYS)
            and isinstance(doc.get("benchmarks"), list))


@dataclass
class _Name:
    """A benchmark's name taken apart: its kernel, the settings left out of it, and its arguments."""

    kernel: str  # without arguments and settings
    with_settings: str  # without arguments
    settings: tuple[str, ...]
    arguments: dict[str, float]  # parameter -> value
    positions: dict[str, int]  # parameter -> its position among the arguments


@dataclass
class _Kernel:
    """What the rows of one kernel hold, collected before the parameters of the whole file are known."""

    values: list[tuple[_Name, dict[str, tuple[float, str]], int, Location]] = field(default_factory=list)
    left_out: list[tuple[str, str]] = field(default_factory=list)  # ("failed" or "skipped", message)
    complexity: tuple[str, float, float, str] | None = None  # big O, cpu and real coefficient, time unit
    rms: float | None = None
    aggregate: str = ""  # the statistic that stands for its points' repetitions, when only aggregates were written
    aggregated: int = 0  # how many points that is


def read_google_benchmark_text(text: str, source: Path) -> Run:
    """Read `text`, the content of the google-benchmark file `source`."""
    doc = _decode(text, source)
    if not is_google_benchmark(doc):
        raise InputError(_not_google_benchmark(doc), where=Location(source, line_of(text, ())),
                         fix="name the file that --benchmark_out=FILE --benchmark_out_format=json (or "
                             "--benchmark_format=json) wrote")
    assert isinstance(doc, dict)
    rows = doc["benchmarks"]
    assert isinstance(rows, list)
    if not rows:
        raise InputError('the file lists no benchmarks ("benchmarks" is empty)',
                         where=Location(source, line_of(text, ("benchmarks",))),
                         fix="check that --benchmark_filter matches the benchmarks to measure")
    kernels: dict[tuple[str, tuple[str, ...]], _Kernel] = {}
    aggregates: list[tuple[int, dict[str, object], str]] = []  # (index, row, aggregate name) of --repetitions
    old_aggregates: list[tuple[int, dict[str, object], str, str]] = []  # (index, row, name, statistic) of <= 1.4
    plain_names: set[str] = set()
    for index, row in enumerate(rows):
        with lines_of_errors(text, ("benchmarks", index)):
            kind = _kind(row, index, source)
            assert isinstance(row, dict)
            name = str(row["name"])
            if kind == "old aggregate":
                match = _AGGREGATE_NAME.fullmatch(name)
                assert match is not None
                old_aggregates.append((index, row, match.group(1), match.group(2)))
                continue
            if kind == "aggregate":
                aggregates.append((index, row, str(row.get("aggregate_name", ""))))
                continue
            plain_names.add(name)
            _add_row(kernels, kind, row, index, source)
    # before run_type existed (Google Benchmark <= 1.4), X_mean, X_median and X_stddev followed the rows of X
    stems = Counter(stem for _, _, stem, _ in old_aggregates)
    for index, row, stem, statistic in old_aggregates:
        with lines_of_errors(text, ("benchmarks", index)):
            if stem in plain_names or stems[stem] > 1:
                aggregates.append((index, {**row, "run_name": stem}, statistic))
            else:  # a benchmark whose own name ends in _mean
                _add_row(kernels, "iteration", row, index, source)
    _add_single_aggregates(kernels, aggregates, text, source)
    return _build(kernels, text, source)


def _decode(text: str, source: Path) -> object:
    """The JSON document; a -NaN that Google Benchmark wrote for a counter is read as NaN."""
    try:
        return load_json(source, text)
    except InputError:
        if "-NaN" not in text:
            raise
        return load_json(source, _NEGATIVE_NAN.sub(r"\1NaN", text))


def _not_google_benchmark(doc: object) -> str:
    """What keeps `doc` from being a Google Benchmark file."""
    if not isinstance(doc, dict):
        return f'the top level must be an object with keys "context" and "benchmarks", got {type_name(doc)}'
    for key in ("context", "benchmarks"):
        if key not in doc:
            return f"missing key '{key}' at the top level"
    context, benchmarks = doc["context"], doc["benchmarks"]
    if not isinstance(context, dict):
        return f'"context" must be an object, got {type_name(context)}'
    if not isinstance(benchmarks, list):
        return f'"benchmarks" must be a list, got {type_name(benchmarks)}'
    missing = [key for key in CONTEXT_KEYS if key not in context]
    return f"\"context\" lacks '{missing[0]}', which Google Benchmark always writes"


def _where(source: Path, index: int, name: object) -> Location:
    """The location of benchmark row `index` (0-based), named as a user counts: "benchmark 3 'BM_Sort/1024'"."""
    label = f" '{name if len(name) <= 80 else name[:77] + '...'}'" if isinstance(name, str) else ""
    return Location(source, record=f"benchmark {index + 1}{label}")


def _kind(row: object, index: int, source: Path) -> str:
    """"iteration", "aggregate", "old aggregate", "big o", "rms", "failed" or "skipped" for a row."""
    if not isinstance(row, dict):
        raise InputError(f"a benchmark must be an object, got {type_name(row)}", where=_where(source, index, None),
                         fix='write each benchmark as {"name": ..., "real_time": ..., "cpu_time": ...}')
    name = row.get("name")
    where = _where(source, index, name)
    if not isinstance(name, str) or not name:
        raise InputError(f"'name' must be a non-empty string, got {shown(name) if 'name' in row else 'nothing'}",
                         where=where, fix='give every benchmark its name, e.g. "name": "BM_Sort/1024"')
    run_type = row.get("run_type")
    if "big_o" in row:
        return "big o"
    if "rms" in row:
        return "rms"
    if run_type == "aggregate":
        return "aggregate"
    if row.get("error_occurred") is True:
        return "failed"
    if row.get("skipped") is True:
        return "skipped"
    if run_type is None and _AGGREGATE_NAME.fullmatch(name):
        return "old aggregate"
    if run_type not in (None, "iteration"):
        raise InputError(f"'run_type' must be \"iteration\" or \"aggregate\", got {shown(run_type)}", where=where,
                         fix="correct the run_type, or write the file again with Google Benchmark")
    return "iteration"


def _add_row(kernels: dict[tuple[str, tuple[str, ...]], _Kernel], kind: str, row: dict[str, object], index: int,
             source: Path) -> None:
    """Add one row that is not an aggregate of repetitions to the kernel it belongs to."""
    name = str(row["name"])
    where = _where(source, index, name)
    run_name = row.get("run_name")
    if kind in ("big o", "rms"):
        # the row of a family: its name is the family's name with _BigO or _RMS appended
        suffix = "_BigO" if kind == "big o" else "_RMS"
        base = run_name if isinstance(run_name, str) and run_name else name.removesuffix(suffix)
        parsed = _parse_name(base, where)
        kernel = kernels.setdefault((parsed.kernel, parsed.settings), _Kernel())
        if kind == "big o":
            kernel.complexity = _complexity(row, where)
        else:
            kernel.rms = _finite(row["rms"])
        return
    parsed = _parse_name(run_name if isinstance(run_name, str) and run_name else name, where)
    kernel = kernels.setdefault((parsed.kernel, parsed.settings), _Kernel())
    if kind in ("failed", "skipped"):
        message = row.get("error_message" if kind == "failed" else "skip_message")
        kernel.left_out.append((kind, message if isinstance(message, str) else ""))
        return
    kernel.values.append((parsed, _values(row, where), index, where))


def _parse_name(name: str, where: Location) -> _Name:
    """Take `name` apart into kernel, settings and arguments (see the module's docstring)."""
    segments = name.split("/")
    kernel: list[str] = segments[:1]  # the family's name, whatever it looks like
    with_settings: list[str] = segments[:1]
    settings: list[str] = []
    arguments: dict[str, float] = {}
    positions: dict[str, int] = {}
    position = 0
    for segment in segments[1:]:
        named = _NAMED.fullmatch(segment)
        key = segment.split(":", 1)[0] if ":" in segment else ""
        if key in _SETTINGS:
            settings.append(segment)
            with_settings.append(segment)
            continue
        if key == "threads" or not (named or _INTEGER.fullmatch(segment)):
            kernel.append(segment)
            with_settings.append(segment)
            continue
        if position == MAX_PARAMETERS:  # before taking apart a name of a million arguments
            check_parameter_count(len(segments) - 1, where, fix=ARGUMENTS_FIX)
        parameter = named.group(1) if named else FIRST_ARGUMENT if position == 0 else f"arg{position + 1}"
        text = named.group(2) if named else segment
        if parameter in arguments:
            raise InputError(f"the name gives parameter '{parameter}' twice", where=where, fix=NAMES_FIX)
        arguments[parameter] = number(text, f"argument '{parameter}'", where, "correct the benchmark's name")
        positions[parameter] = position
        position += 1
    return _Name("/".join(kernel), "/".join(with_settings), tuple(settings), arguments, positions)


def _values(row: dict[str, object], where: Location) -> dict[str, tuple[float, str]]:
    """metric -> (value, unit) of a row: both times in seconds, then the numeric counters."""
    unit = row.get("time_unit", "ns")  # Google Benchmark 1.0 wrote nanoseconds without saying so
    if not isinstance(unit, str) or unit not in PER_SECOND:
        raise InputError(f"'time_unit' must be one of {', '.join(PER_SECOND)}, got {shown(unit)}", where=where,
                         fix="correct the time_unit, or write the file again with Google Benchmark")
    values: dict[str, tuple[float, str]] = {}
    for metric in TIME_METRICS:
        raw = require(row, metric, where, "benchmark")
        # a division by the exact 10^k rounds once, so 30 ns are 3e-08 s, not 3.0000000000000004e-08
        values[metric] = (number(raw, f"'{metric}'", where, "correct the time, or run the benchmark again")
                          / PER_SECOND[unit], "s")
    for key, raw in row.items():
        value = _finite(raw) if key not in _NOT_COUNTERS else None
        if value is not None:  # a counter that is NaN or infinite (a rate over no time) is left out
            values[key] = (value, _UNITS.get(key, ""))
    return values


def _finite(raw: object) -> float | None:
    """`raw` as a float when it is a finite JSON number, else None."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return None
    value = float(raw)
    return value if math.isfinite(value) else None


def _complexity(row: dict[str, object], where: Location) -> tuple[str, float, float, str]:
    """(big O, cpu coefficient, real coefficient, time unit) of a _BigO row."""
    big_o = row["big_o"]
    unit = row.get("time_unit", "ns")
    fix = "correct the row, or write the file again with Google Benchmark"
    if not isinstance(big_o, str) or not isinstance(unit, str):
        raise InputError(f"'big_o' and 'time_unit' must be strings, got {shown(big_o)} and {shown(unit)}",
                         where=where, fix=fix)
    cpu = number(require(row, "cpu_coefficient", where, "benchmark"), "'cpu_coefficient'", where, fix)
    real = number(require(row, "real_coefficient", where, "benchmark"), "'real_coefficient'", where, fix)
    return big_o, cpu, real, unit


def _add_single_aggregates(kernels: dict[tuple[str, tuple[str, ...]], _Kernel],
                           aggregates: Iterable[tuple[int, dict[str, object], str]], text: str, source: Path) -> None:
    """Give instances that have only aggregate rows (--benchmark_report_aggregates_only) their median, or their
    mean, as their one value."""
    measured = {(key, tuple(sorted(name.arguments.items()))) for key, kernel in kernels.items()
                for name, _, _, _ in kernel.values}
    chosen: dict[tuple[object, ...], tuple[int, int, dict[str, object], _Name, Location]] = {}
    for index, row, statistic in aggregates:
        if statistic not in _SINGLE:
            continue
        run_name = row.get("run_name")
        where = _where(source, index, row["name"])
        with lines_of_errors(text, ("benchmarks", index)):
            parsed = _parse_name(run_name if isinstance(run_name, str) and run_name else str(row["name"]), where)
        instance = ((parsed.kernel, parsed.settings), tuple(sorted(parsed.arguments.items())))
        rank = _SINGLE.index(statistic)
        if instance not in measured and (instance not in chosen or rank < chosen[instance][0]):
            chosen[instance] = (rank, index, row, parsed, where)
    for rank, index, row, parsed, where in chosen.values():
        with lines_of_errors(text, ("benchmarks", index)):
            values = _values(row, where)
        kernel = kernels.setdefault((parsed.kernel, parsed.settings), _Kernel())
        kernel.values.append((parsed, values, index, where))
        kernel.aggregate = _SINGLE[rank]
        kernel.aggregated += 1


def _build(kernels: Mapping[tuple[str, tuple[str, ...]], _Kernel], text: str, source: Path) -> Run:
    """The run of the collected kernels: one parameter per argument name of the file."""
    measured = {key: kernel for key, kernel in kernels.items() if kernel.values}
    if not measured:
        left_out = [(key[0], how, message) for key, kernel in kernels.items() for how, message in kernel.left_out]
        if left_out:
            kernel_name, how, message = left_out[0]
            raise InputError(f"every benchmark in the file failed or was skipped: '{kernel_name}' {how}"
                             + (f" ({message})" if message else ""), where=Location(source),
                             fix="make the benchmarks run (one that calls SkipWithError or SkipWithMessage gives no "
                                 "times) and measure again")
        raise InputError("the file holds no measured benchmark, only aggregate rows", where=Location(source),
                         fix="run the benchmarks without --benchmark_report_aggregates_only=true")
    positions: dict[str, int] = {}
    for kernel in measured.values():
        for name, _, _, _ in kernel.values:
            for parameter, position in name.positions.items():
                positions[parameter] = min(position, positions.get(parameter, position))
    first = next(iter(measured.values())).values[0][3]
    if not positions:
        raise InputError("no benchmark has an argument, so nothing gives a size to model the times over",
                         where=first, fix="register the sizes as arguments, e.g. BENCHMARK(BM_Sort)->RangeMultiplier(2)"
                                          "->Range(64, 4096), and read the size with state.range(0)")
    parameters = sorted(positions, key=lambda parameter: (positions[parameter], parameter))
    check_parameter_count(len(parameters), first, fix=ARGUMENTS_FIX)
    builder = LimitedRunBuilder(parameters, source)
    names = _kernel_names(measured)
    estimates: dict[str, list[_Kernel]] = {}  # kernel name -> its entries with a _BigO row
    for (kernel_name, _), kernel in kernels.items():
        if kernel.complexity is not None:
            estimates.setdefault(kernel_name, []).append(kernel)
    for key, kernel in measured.items():
        for name, values, index, where in kernel.values:
            point = [name.arguments.get(parameter, _MISSING) for parameter in parameters]
            with lines_of_errors(text, ("benchmarks", index)):
                for metric, (value, unit) in values.items():
                    builder.add(names[key], metric, point, [value], where, unit)
        absent = [p for p in parameters if all(p not in name.arguments for name, _, _, _ in kernel.values)]
        found = estimates.get(key[0], [])
        # its own _BigO row, or the one of its kernel name (before 1.5 these rows were named by the family alone)
        complexity = kernel if kernel.complexity is not None else found[0] if len(found) == 1 else None
        for metric in dict.fromkeys(m for _, values, _, _ in kernel.values for m in values):
            parts = [_complexity_note(complexity, metric), *_notes(kernel), _absent_note(absent)]
            if any(parts):
                builder.notes[(names[key], metric)] = "Google Benchmark: " + "; ".join(filter(None, parts))
    return builder.build()


def _kernel_names(kernels: Mapping[tuple[str, tuple[str, ...]], _Kernel]) -> dict[tuple[str, tuple[str, ...]], str]:
    """The kernel name of each (kernel, settings): the kernel alone, unless the same kernel was registered twice
    with different settings (say ->Iterations(10) and ->Iterations(1000)); then the settings stay in its name."""
    settings_of: Counter[str] = Counter(kernel for kernel, _ in kernels)
    return {(kernel, settings): kernel if settings_of[kernel] == 1 else collected.values[0][0].with_settings
            for (kernel, settings), collected in kernels.items()}


def _complexity_note(kernel: _Kernel | None, metric: str) -> str:
    """Google Benchmark's own complexity estimate for `metric`, e.g. "O(N^2), coefficient 0.93 ns, RMS 4%"."""
    if kernel is None or kernel.complexity is None or metric not in TIME_METRICS:
        return ""
    big_o, cpu, real, unit = kernel.complexity
    coefficient = cpu if metric == "cpu_time" else real
    text = f"{_BIG_O.get(big_o, big_o)}, coefficient {coefficient:.3g} {unit}"
    return text + (f", RMS {kernel.rms * 100:.2g}%" if kernel.rms is not None else "")


def _notes(kernel: _Kernel) -> list[str]:
    """What the series of `kernel` lack: failed or skipped rows, or repetitions when only aggregates were written."""
    parts = []
    for how in ("failed", "skipped"):
        messages = [message for kind, message in kernel.left_out if kind == how]
        if messages:
            shown_messages = [m for m in dict.fromkeys(messages) if m][:3]
            parts.append(f"{len(messages)} run(s) {how} and are left out"
                         + (f" ({'; '.join(shown_messages)})" if shown_messages else ""))
    if kernel.aggregate:
        parts.append(f"only aggregates were written (--benchmark_report_aggregates_only): the {kernel.aggregate} "
                     f"is the one value at {kernel.aggregated} point(s), without repetitions")
    return parts


def _absent_note(absent: list[str]) -> str:
    """What the value of the arguments that a kernel's names lack means."""
    if not absent:
        return ""
    names = ", ".join(absent)
    return f"its name has no argument {names}, unlike other benchmarks of the file ({names} = {_MISSING:g} here)"
