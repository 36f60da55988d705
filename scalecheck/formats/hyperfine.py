"""hyperfine's JSON export (hyperfine --export-json FILE) of a scan over a size: --parameter-scan NAME MIN MAX
[-D STEP], or -L NAME V1,V2,...

Each result is one command at one value of each parameter. A parameter whose values are all numbers is a parameter
of the run; one with other values (``-L compiler gcc,clang``) is part of the kernel's name. The kernel is the
command (or the ``--command-name``) with each numeric parameter's value put back as its placeholder, ``./sort {n}``:
hyperfine records the command after substituting the values, so a value is replaced where it stands as a whole
number (not inside a longer one), and when a value also appears elsewhere by chance (``./sort -j 4 {n}`` at n = 4),
the template that the file's other results share wins, as long as it gives the recorded command. A non-numeric value
that is not in the command is added as hyperfine shows it: ``sort (compiler = gcc)``.

The runs (``times``, in seconds) are the repetitions of metric ``time``, the wall-clock time; ``user`` plus
``system`` is metric ``cpu_time``, one value per point since hyperfine writes their mean over the runs only, which
leaves out the time other processes took; ``memory_usage_byte`` (hyperfine >= 1.19) gives metric ``memory`` in
bytes. Runs that did not exit with 0 (kept by ``--ignore-failure``) time a failed command and are left out (and
their result's cpu_time, whose mean includes them), and the series' note says so. Files of hyperfine 1.6 to 1.10,
which recorded one unnamed ``parameter``, name it ``parameter``; without any parameter (a plain comparison of
commands) there is no size to model over.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from scalecheck.data.measurement import Run, number
from scalecheck.errors import InputError, Location
from scalecheck.formats.limits import LimitedRunBuilder, check_parameter_count
from scalecheck.formats.scalecheck_json import require
from scalecheck.formats.source import line_of, lines_of_errors, load_json, shown, type_name

RESULT_KEYS = ("command", "mean", "min", "max")  # what every hyperfine version writes for a result
LEGACY_PARAMETER = "parameter"  # hyperfine 1.6 to 1.10 wrote one parameter's value without its name
TIME, CPU_TIME, MEMORY = "time", "cpu_time", "memory"
_NUMBER = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_NUMBER_TOKEN = re.compile(r"-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")  # a number in a command
_CANDIDATES = 20  # the most common templates a result's command is tried against
SCAN_FIX = ("run hyperfine with --parameter-scan NAME MIN MAX (or -L NAME V1,V2,...) and {NAME} in the command, so "
            "that each result records its size")


def is_hyperfine(doc: object) -> bool:
    """Whether `doc`, a decoded JSON document, is a hyperfine file: an object whose "results" is a list of objects
    with the keys every hyperfine version writes (the first one is checked; the reader checks the others)."""
    if not isinstance(doc, dict):
        return False
    results = doc.get("results")
    if not isinstance(results, list):
        return False
    if not results:
        return list(doc) == ["results"]
    first = results[0]
    return isinstance(first, dict) and all(key in first for key in RESULT_KEYS)


@dataclass
class _Result:
    """One result as read: where it is, its command, its parameter values as written, its runs."""

    index: int  # 0-based in "results"
    where: Location
    command: str
    parameters: dict[str, str]
    values: dict[str, tuple[list[float], str]] = field(default_factory=dict)  # metric -> (runs, unit)
    failed: list[object] = field(default_factory=list)  # the exit codes of the runs left out
    summary: str = ""  # the statistic that stands for the runs when the file has none


def read_hyperfine_text(text: str, source: Path) -> Run:
    """Read `text`, the content of the hyperfine file `source`."""
    doc = load_json(source, text)
    if not is_hyperfine(doc):
        raise InputError(_not_hyperfine(doc), where=Location(source, line_of(text, ())),
                         fix="name the file that hyperfine --export-json FILE wrote")
    assert isinstance(doc, dict)
    raw_results = doc["results"]
    assert isinstance(raw_results, list)
    if not raw_results:
        raise InputError('the file lists no results ("results" is empty)', where=Location(source),
                         fix="check that hyperfine ran the commands to measure")
    results = []
    for index, raw in enumerate(raw_results):
        with lines_of_errors(text, ("results", index)):
            results.append(_result(raw, index, source))
    numeric = _numeric_parameters(results, text)
    if not any(result.values for result in results):
        codes = ", ".join(dict.fromkeys(_code(code) for result in results for code in result.failed))
        raise InputError(f"every run exited with a non-zero code ({codes}): hyperfine kept them because of "
                         "--ignore-failure, but they time a failed command", where=Location(source),
                         fix="make the command succeed (exit code 0) at every size; when its exit code says nothing "
                             "about failure, append `|| true` to the command")
    builder = LimitedRunBuilder(numeric, source)
    kernels: dict[str, list[_Result]] = {}
    for result, kernel in zip(results, _templates(results, numeric)):
        point = [float(result.parameters[name]) for name in numeric]
        with lines_of_errors(text, ("results", result.index)):
            for metric, (values, unit) in result.values.items():
                builder.add(kernel, metric, point, values, result.where, unit)
        kernels.setdefault(kernel, []).append(result)
    for kernel, members in kernels.items():
        note = _note(members)
        if note:
            for metric in dict.fromkeys(m for result in members for m in result.values):
                builder.notes[(kernel, metric)] = note
    return builder.build()


def _not_hyperfine(doc: object) -> str:
    """What keeps `doc` from being a hyperfine file."""
    if not isinstance(doc, dict):
        return f'the top level must be an object with the key "results", got {type_name(doc)}'
    if "results" not in doc:
        return "missing key 'results' at the top level"
    results = doc["results"]
    if not isinstance(results, list):
        return f'"results" must be a list, got {type_name(results)}'
    if not results:
        return 'the file lists no results ("results" is empty)'
    first = results[0]
    if not isinstance(first, dict):
        return f"result 1 must be an object, got {type_name(first)}"
    missing = [key for key in RESULT_KEYS if key not in first]
    return f"result 1 lacks '{missing[0]}', which hyperfine always writes"


def _where(source: Path, index: int, command: object) -> Location:
    """The location of result `index` (0-based), named as a user counts: "result 3 './sort 1000'"."""
    label = ""
    if isinstance(command, str):
        label = f" '{command if len(command) <= 80 else command[:77] + '...'}'"
    return Location(source, record=f"result {index + 1}{label}")


def _result(raw: object, index: int, source: Path) -> _Result:
    """Check one result and take its command, parameters and runs."""
    if not isinstance(raw, dict):
        raise InputError(f"a result must be an object, got {type_name(raw)}", where=_where(source, index, None),
                         fix='write each result as {"command": ..., "mean": ..., "times": [...], ...}')
    command = raw.get("command")
    where = _where(source, index, command)
    for key in RESULT_KEYS:
        require(raw, key, where, "result")
    if not isinstance(command, str) or not command:
        raise InputError(f"'command' must be a non-empty string, got {shown(command)}", where=where,
                         fix="give every result the command it measured")
    result = _Result(index, where, command, _parameters(raw, where))
    fix = "correct the result, or measure again with hyperfine"
    if "times" not in raw or raw["times"] is None:
        # hyperfine always writes the runs; a file without them keeps one statistic per result
        statistic = "median" if raw.get("median") is not None else "mean"
        result.values[TIME] = ([number(raw[statistic], f"'{statistic}'", where, fix)], "s")
        result.summary = statistic
        _add_cpu_time(result, raw, where)
        return result
    times = _numbers(raw, "times", where)
    kept = list(range(len(times)))
    codes = raw.get("exit_codes")
    if codes is not None:
        if not isinstance(codes, list) or len(codes) != len(times):
            raise InputError(f"'exit_codes' must be a list of one code per run ({len(times)}), got "
                             f"{shown(codes, 40)}", where=where, fix=fix)
        kept = [k for k in kept if codes[k] == 0 and not isinstance(codes[k], bool)]
        result.failed = [codes[k] for k in sorted(set(range(len(times))) - set(kept))]
    if kept:
        result.values[TIME] = ([times[k] for k in kept], "s")
        memory = raw.get("memory_usage_byte")
        if memory is not None:
            sizes = _numbers(raw, "memory_usage_byte", where)
            if len(sizes) != len(times):
                raise InputError(f"'memory_usage_byte' has {len(sizes)} value(s) but 'times' {len(times)}",
                                 where=where, fix=fix)
            result.values[MEMORY] = ([sizes[k] for k in kept], "B")
    if not result.failed:  # hyperfine's user and system times are means over all runs, the failed ones too
        _add_cpu_time(result, raw, where)
    return result


def _add_cpu_time(result: _Result, raw: dict[str, object], where: Location) -> None:
    """Metric cpu_time: user plus system time, of which hyperfine writes the mean over the runs only (one value per
    point); unlike the wall-clock time, it leaves out the time that other processes took from the command."""
    if raw.get("user") is None or raw.get("system") is None:
        return
    fix = "correct the result, or measure again with hyperfine"
    user = number(raw["user"], "'user'", where, fix)
    system = number(raw["system"], "'system'", where, fix)
    result.values[CPU_TIME] = ([user + system], "s")


def _numbers(raw: dict[str, object], key: str, where: Location) -> list[float]:
    """The list of numbers `raw[key]`, each checked."""
    values = raw[key]
    fix = "correct the result, or measure again with hyperfine"
    if not isinstance(values, list) or not values:
        got = "an empty list" if values == [] else type_name(values)
        raise InputError(f"'{key}' must be a non-empty list of numbers, got {got}", where=where, fix=fix)
    return [number(value, f"a value of '{key}'", where, fix) for value in values]


def _parameters(raw: dict[str, object], where: Location) -> dict[str, str]:
    """The result's parameter values as hyperfine wrote them (strings; hyperfine 1.6 to 1.9 wrote numbers)."""
    fix = 'write the parameters as {"n": "1000", ...}, or measure again with hyperfine'
    if raw.get("parameters") is not None:
        parameters = raw["parameters"]
        if not isinstance(parameters, dict):
            raise InputError(f"'parameters' must be an object, got {type_name(parameters)}", where=where, fix=fix)
        found = list(parameters.items())
    elif raw.get(LEGACY_PARAMETER) is not None:
        found = [(LEGACY_PARAMETER, raw[LEGACY_PARAMETER])]
    else:
        return {}
    out = {}
    for name, value in found:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise InputError(f"parameter '{name}' must be a string or a number, got {type_name(value)}",
                             where=where, fix=fix)
        out[name] = value if isinstance(value, str) else repr(value) if isinstance(value, float) else str(value)
    return out


def _numeric_parameters(results: list[_Result], text: str) -> list[str]:
    """The parameters whose values are numbers in every result, sorted by name; every result must have them."""
    names = sorted({name for result in results for name in result.parameters})
    if not names:
        raise InputError("the results have no parameters: a comparison of commands gives no size to model the "
                         "times over", where=results[0].where, fix=SCAN_FIX)
    numeric = [name for name in names
               if all(_NUMBER.fullmatch(r.parameters.get(name, "0").strip()) for r in results)]
    if not numeric:
        name = names[0]
        value = next(r.parameters[name] for r in results
                     if name in r.parameters and not _NUMBER.fullmatch(r.parameters[name].strip()))
        raise InputError(f"no parameter is a number in every result (parameter '{name}' is {shown(value)})",
                         where=results[0].where, fix=SCAN_FIX)
    check_parameter_count(len(numeric), results[0].where)
    for result in results:
        with lines_of_errors(text, ("results", result.index)):
            missing = [name for name in numeric if name not in result.parameters]
            if missing:
                raise InputError(f"the result lacks parameter '{missing[0]}', which other results have",
                                 where=result.where,
                                 fix="measure every command with the same parameters (one hyperfine run gives them "
                                     "all), or model the files separately")
            for name in numeric:
                number(result.parameters[name], f"parameter '{name}'", result.where, "correct the parameter's value")
    return numeric


def _templates(results: list[_Result], numeric: list[str]) -> list[str]:
    """The kernel of each result: its command with the values of the numeric parameters put back as placeholders
    (see the module's docstring). Cost: one scan of each command, and for a result whose template few others
    share, a fill of each of the most common templates."""
    own = [_template(result, numeric) for result in results]
    counts = Counter(own)
    # only a template that several results share can stand for another result's; a few of them are tried
    popular = [template for template, count in counts.most_common(_CANDIDATES) if count > 1]
    placeholders = re.compile("|".join(re.escape("{" + name + "}") for name in numeric))
    chosen = []
    for result, template in zip(results, own):
        best = template
        for candidate in popular:
            if counts[candidate] <= counts[template]:
                break
            filled = placeholders.sub(lambda match: result.parameters[match.group()[1:-1]], candidate)
            if filled == result.command:  # hyperfine substitutes in one pass, as this does
                best = candidate
                break
        chosen.append(best + _unused(result, numeric))
    return chosen


def _template(result: _Result, numeric: list[str]) -> str:
    """`result`'s command with every number in it that is the value of a numeric parameter replaced by its
    placeholder; numbers are taken whole, so the 100 in 1000 or the 10 in 10.5 stay."""
    by_value: dict[str, str] = {}
    for name in numeric:
        by_value.setdefault(result.parameters[name].strip(), name)

    def placeholder(match: re.Match[str]) -> str:
        token = match.group()
        if token in by_value:
            return "{" + by_value[token] + "}"
        if token.startswith("-") and token[1:] in by_value:  # a minus sign before a positive value: -{n}
            return "-{" + by_value[token[1:]] + "}"
        return token

    return _NUMBER_TOKEN.sub(placeholder, result.command)


def _unused(result: _Result, numeric: list[str]) -> str:
    """The non-numeric parameters whose value the command does not show, as hyperfine lists them: " (cc = gcc)"."""
    unused = [f"{name} = {value}" for name, value in sorted(result.parameters.items())
              if name not in numeric and value not in result.command]
    return f" ({', '.join(unused)})" if unused else ""


def _code(code: object) -> str:
    """An exit code as a message shows it; hyperfine writes null for a run that a signal ended."""
    return "a signal" if code is None else str(code)


def _note(members: list[_Result]) -> str:
    """What the series of one kernel lack: failed runs, or the runs themselves."""
    parts = []
    failed = [code for result in members for code in result.failed]
    if failed:
        runs = len(failed) + sum(len(result.values[TIME][0]) for result in members if result.values)
        codes = ", ".join(dict.fromkeys(_code(code) for code in failed))
        parts.append(f"hyperfine: {len(failed)} of {runs} run(s) exited with a non-zero code ({codes}) and are "
                     "left out")
    summaries = [result.summary for result in members if result.summary]
    if summaries:
        parts.append(f"hyperfine wrote no run times: the {summaries[0]} is the one value at {len(summaries)} "
                     "point(s), without repetitions")
    return "; ".join(parts)
