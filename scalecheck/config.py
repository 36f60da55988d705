"""L3: the settings of `scalecheck check` (and of `model`, `record`, `history`, the pytest plugin).

They come from `[tool.scalecheck]` in pyproject.toml, or from scalecheck.toml whose top level is that table:

    [tool.scalecheck]
    measurements = ["bench/results/*.json"]
    target = {p = 65536}
    [tool.scalecheck.search]
    max_terms = 2
    [tool.scalecheck.gate]
    threshold = 0.10
    fail_on = ["growth", "prediction", "expectation"]
    missing_baseline = "pass"      # or "fail"
    fail_across_machines = false   # level findings across different machines only warn
    [tool.scalecheck.expectations]
    "solver->*" = "p log p"

Command-line flags override file values through `Config.with_overrides`, checked by the same rules. A wrong key or
value is a `ConfigError` naming the file, the 1-based line, the key and the fix: a mistyped threshold must not pass
CI silently.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from scalecheck.core.search import AGGREGATE_NAMES, FitOptions
from scalecheck.data.growth import parse_growth
from scalecheck.data.spec import DEFAULT_BUILDING_BLOCKS, Exponents
from scalecheck.errors import ConfigError, Location

# What a finding can be; every kind but "improvement" can fail the build.
FAILABLE_KINDS = ("growth", "prediction", "measured", "expectation", "segmentation", "overhead", "structure")
STORES = ("auto", "branch", "repo")
MISSING_BASELINE = ("pass", "fail")  # what a check does when no commit on the baseline side has measurements
# Kept here: scalecheck.formats is a sibling layer that config must not import (a test keeps the two equal).
FORMAT_NAMES = ("scalecheck-json", "jsonl", "csv", "extrap-text", "extrap-json", "talpas")


@dataclass(frozen=True)
class Config:
    """Settings read from one file (or the built-in defaults), with command-line overrides applied."""

    source: Path | None = None  # the file read (None: built-in defaults)
    root: Path = Path(".")  # folder of that file; relative measurement globs resolve against it
    # [tool.scalecheck]
    measurements: tuple[str, ...] = ()  # glob patterns of the candidate's measurement files, relative to root
    format: str | None = None  # one of FORMAT_NAMES (None: detect per file)
    store: str = "auto"  # where baselines are found in git: "auto", "branch" or "repo"
    data_branch: str = "scalecheck-data"
    target: Mapping[str, float] | None = None  # scale to predict at, one positive value per parameter
    metrics: tuple[str, ...] = ()
    kernels: tuple[str, ...] = ()  # glob patterns
    aggregate: str = "mean"  # mean, median, min or tmax (min(S) plus the fitted 0.95 quantile of the noise)
    segmentation: bool = True
    # [tool.scalecheck.search]
    max_terms: int = 2
    exponents: tuple[Fraction, ...] | None = None  # polynomial exponents i to search (None: Extra-P's)
    log_exponents: tuple[Fraction, ...] | None = None  # logarithm exponents j to search
    allow_decreasing: bool = False
    refine: bool = False
    alpha: float = 0.01
    # [tool.scalecheck.gate]
    threshold: float = 0.10  # relative slowdown at the target scale that counts as a regression
    confidence: float = 0.95
    bootstrap: int = 200  # resamples
    seed: int = 0
    fail_on: tuple[str, ...] = ("growth", "prediction", "expectation")  # () only reports
    fail_across_machines: bool = False  # level findings fail even when the two sides' machines differ
    missing_baseline: str = "pass"  # no measurements on the baseline side yet: "pass" with a notice, or "fail"
    # [tool.scalecheck.expectations]
    expectations: tuple[tuple[str, str], ...] = ()  # (kernel glob, growth text) in file order

    def with_overrides(self, **settings: object) -> Config:
        """A copy with command-line values in place of the file's; a value None means the flag was not given."""
        values: dict[str, object] = {}
        for name, value in settings.items():
            if name not in FLAGS:
                raise TypeError(f"Config has no setting {name!r}")
            if value is not None:
                values[name] = _read_flag(name, value)
        config = dataclasses.replace(self, **values)  # type: ignore[arg-type]
        building_blocks(config.exponents, config.log_exponents)
        return config

    def fit_options(self) -> FitOptions:
        """The model-search options these settings give."""
        return FitOptions(building_blocks=building_blocks(self.exponents, self.log_exponents),
                          max_terms=self.max_terms, allow_decreasing=self.allow_decreasing, aggregate=self.aggregate,
                          alpha=self.alpha, refine=self.refine)


def building_blocks(exponents: Sequence[Fraction] | None,
                    log_exponents: Sequence[Fraction] | None) -> tuple[Exponents, ...]:
    """The (i, j) pairs to search: Extra-P's 42 when neither list is given, else every pair of the lists.

    A missing list stands for Extra-P's exponents (i) or for 0, 1, 2 (j).
    """
    if exponents is None and log_exponents is None:
        return DEFAULT_BUILDING_BLOCKS
    powers = sorted({b[0] for b in DEFAULT_BUILDING_BLOCKS}) if exponents is None else exponents
    logs = (Fraction(0), Fraction(1), Fraction(2)) if log_exponents is None else log_exponents
    blocks = tuple((Fraction(i), int(j) if Fraction(j).denominator == 1 else Fraction(j)) for i in powers for j in logs
                   if i or j)
    if not blocks:
        raise ConfigError("the exponent lists leave no term to search", fix="give at least one exponent other than 0")
    return blocks


def find_config(start: Path) -> Path | None:
    """scalecheck.toml, or else a pyproject.toml with a [tool.scalecheck] table, in `start` or the nearest parent.

    The search stops after the folder that holds `.git` (the top of the repository) or at the filesystem root.
    """
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / "scalecheck.toml").is_file():
            return folder / "scalecheck.toml"
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and _has_table(pyproject):
            return pyproject
        if (folder / ".git").exists():
            return None
    return None


def load_config(path: Path | None = None, start: Path | None = None) -> Config:
    """Settings from `path` (given with --config), or from the file `find_config` finds from `start` (default: the
    working folder); the built-in defaults when there is none."""
    if path is None:
        start = Path.cwd() if start is None else start
        found = find_config(start)
        return Config(root=start) if found is None else _load(found)
    path = Path(path)
    if not path.is_file():
        raise ConfigError("no such file", where=Location(path),
                          fix="check the path given to --config, or leave --config out to use the pyproject.toml "
                              "or scalecheck.toml found from the working folder")
    return _load(path)


# --- one key: read and check its value ---------------------------------------------------------------------------

class _Invalid(Exception):
    """A value breaks its key's rule. The caller adds where (file and line, or flag)."""

    def __init__(self, problem: str, fix: str | None = None, example: str | None = None) -> None:
        super().__init__(problem)
        self.problem, self.fix, self.example = problem, fix, example


def _kind(value: object) -> str:
    """How a value reads in a message: `a string ('10%')`."""
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__} ({value})"


def _number(rule: str, ok: Callable[[float], bool]) -> Callable[[object], float]:
    def read(value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Invalid(f"must be a number, got {_kind(value)}")
        if not math.isfinite(value) or not ok(value):
            raise _Invalid(f"must be {rule}, got {value}")
        return float(value)
    return read


def _integer(minimum: int) -> Callable[[object], int]:
    def read(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Invalid(f"must be an integer, got {_kind(value)}")
        if value < minimum:
            raise _Invalid(f"must be at least {minimum}, got {value}")
        return value
    return read


def _boolean(value: object) -> bool:
    if not isinstance(value, bool):
        raise _Invalid(f"must be true or false, got {_kind(value)}")
    return value


def _choice(choices: Sequence[str]) -> Callable[[object], str]:
    def read(value: object) -> str:
        if not isinstance(value, str):
            raise _Invalid(f"must be one of {', '.join(choices)}, got {_kind(value)}")
        if value not in choices:
            raise _Invalid(f"must be one of {', '.join(choices)}, got {value!r}", fix=_did_you_mean(value, choices))
        return value
    return read


def _did_you_mean(word: str, choices: Sequence[str]) -> str | None:
    close = difflib.get_close_matches(word, choices, n=1)
    return f"did you mean '{close[0]}'?" if close else None


def _strings(value: object) -> tuple[str, ...]:
    """A list of non-empty strings (path objects too: overrides may give them)."""
    if isinstance(value, (str, os.PathLike)):
        raise _Invalid(f"must be a list of strings, got {_kind(value)}", example=json.dumps([os.fspath(value)]))
    if not isinstance(value, (list, tuple)):
        raise _Invalid(f"must be a list of strings, got {_kind(value)}")
    for item in value:
        if not isinstance(item, (str, os.PathLike)) or not os.fspath(item):
            raise _Invalid(f"must be a list of non-empty strings, but holds {_kind(item)}")
    return tuple(os.fspath(item) for item in value)


def _branch(value: object) -> str:
    if not isinstance(value, str):
        raise _Invalid(f"must be a branch name, got {_kind(value)}")
    if not re.fullmatch(r"[^\s~^:?*\[\\]+", value) or value.startswith("-") or ".." in value:
        raise _Invalid(f"must be a git branch name, got {value!r}")
    return value


def _target(value: object) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise _Invalid(f"must be a table of parameter values, got {_kind(value)}")
    if not value:
        raise _Invalid("names no parameter")
    target = {}
    for name, number in value.items():
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not number > 0 \
                or not math.isfinite(number):
            shown = number if isinstance(number, (int, float)) and not isinstance(number, bool) else _kind(number)
            raise _Invalid(f"must give each parameter a positive number, got {name} = {shown}",
                           example=f"{{{name} = 65536}}")
        target[str(name)] = float(number)
    return target


def _fractions(value: object) -> tuple[Fraction, ...]:
    """Exponents: numbers, or strings such as "3/2"; >= 0; sorted, without repeats."""
    if not isinstance(value, (list, tuple)):
        raise _Invalid(f"must be a list of exponents, got {_kind(value)}")
    if not value:
        raise _Invalid("is empty")
    out = set()
    for item in value:
        try:
            if isinstance(item, bool) or not isinstance(item, (int, float, str, Fraction)):
                raise ValueError
            number = Fraction(str(item)) if isinstance(item, (float, str)) else Fraction(item)  # str: 0.1 exactly
        except (ValueError, ZeroDivisionError):
            raise _Invalid(f"holds {_kind(item)}, which is not a number or a fraction") from None
        if number < 0:
            raise _Invalid(f"holds {item!r}, which is negative",
                           fix="use exponents >= 0 (allow_decreasing accepts falling trends)")
        out.add(number)
    return tuple(sorted(out))


def _kinds(value: object) -> tuple[str, ...]:
    kinds = _strings(value)
    for kind in kinds:
        if kind == "improvement":
            raise _Invalid("improvements never fail the build",
                           fix=f"leave 'improvement' out; the kinds that can fail are {', '.join(FAILABLE_KINDS)}")
        if kind not in FAILABLE_KINDS:
            hint = _did_you_mean(kind, FAILABLE_KINDS)
            raise _Invalid(f"holds unknown kind {kind!r}",
                           fix=f"{hint + ' ' if hint else ''}(the kinds are {', '.join(FAILABLE_KINDS)})")
    return tuple(dict.fromkeys(kinds))


def _expectation(glob: object, growth: object) -> tuple[str, str]:
    """One expectation: the growth must read as one (parameter names are checked against the measurements later)."""
    if not isinstance(growth, str):
        fix = f'quote the kernel glob, e.g. "{glob}.{next(iter(growth))}" = "p log p"' \
            if isinstance(growth, Mapping) and growth else None  # main.solve = ... is a nested table in TOML
        raise _Invalid(f"must be a growth as text, such as \"p log p\", got {_kind(growth)}", fix=fix)
    try:
        parse_growth(growth)
    except ValueError as err:
        raise _Invalid(str(err)) from None
    return str(glob), growth


@dataclass(frozen=True)
class _Key:
    table: str  # "" (the top), "search" or "gate"
    read: Callable[[Any], object]  # TOML value → field value, or _Invalid
    example: str  # a valid TOML value, for the fix
    flag_example: str  # the same on the command line


_KEYS: dict[str, _Key] = {
    "measurements": _Key("", _strings, '["bench/*.json"]', "'bench/*.json'"),
    "format": _Key("", _choice(FORMAT_NAMES), '"csv"', "csv"),
    "store": _Key("", _choice(STORES), '"auto"', "auto"),
    "data_branch": _Key("", _branch, '"scalecheck-data"', "scalecheck-data"),
    "target": _Key("", _target, "{p = 65536}", "p=65536"),
    "metrics": _Key("", _strings, '["time"]', "time"),
    "kernels": _Key("", _strings, '["solver->*"]', "'solver->*'"),
    "aggregate": _Key("", _choice(AGGREGATE_NAMES), '"mean"', "mean"),
    "segmentation": _Key("", _boolean, "false", ""),
    "max_terms": _Key("search", _integer(1), "2", "2"),
    "exponents": _Key("search", _fractions, '[0, "1/2", 1, "3/2", 2]', "0,1/2,1,3/2,2"),
    "log_exponents": _Key("search", _fractions, "[0, 1, 2]", "0,1,2"),
    "allow_decreasing": _Key("search", _boolean, "true", ""),
    "refine": _Key("search", _boolean, "true", ""),
    "alpha": _Key("search", _number("greater than 0 and less than 1", lambda x: 0 < x < 1), "0.01", "0.01"),
    "threshold": _Key("gate", _number("greater than 0", lambda x: x > 0), "0.1", "0.1"),
    "confidence": _Key("gate", _number("at least 0.5 and less than 1", lambda x: 0.5 <= x < 1), "0.95", "0.95"),
    "bootstrap": _Key("gate", _integer(20), "200", "200"),
    "seed": _Key("gate", _integer(0), "0", "0"),
    "fail_on": _Key("gate", _kinds, '["growth", "prediction", "expectation"]', "growth,prediction"),
    "fail_across_machines": _Key("gate", _boolean, "true", ""),
    "missing_baseline": _Key("gate", _choice(MISSING_BASELINE), '"fail"', "fail"),
}
_TABLES = ("search", "gate", "expectations")
# The command-line flag of each setting, named in override errors.
FLAGS = {name: "--" + name.replace("_", "-") for name in _KEYS} | {
    "metrics": "--metric", "kernels": "--kernel", "segmentation": "--no-segmentation", "expectations": "--expect"}


def _read_flag(name: str, value: object) -> object:
    flag = FLAGS[name]
    try:
        if name != "expectations":
            return _KEYS[name].read(value)
        if isinstance(value, Mapping):
            pairs = list(value.items())
        elif isinstance(value, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value):
            pairs = list(value)
        else:
            raise _Invalid(f"must be (kernel glob, growth) pairs, got {_kind(value)}")
        expectations = []
        for glob, growth in pairs:
            try:
                expectations.append(_expectation(glob, growth))
            except _Invalid as err:
                raise _Invalid(f"for '{glob}': {err.problem}", err.fix) from None
        return tuple(expectations)
    except _Invalid as err:
        example = _KEYS[name].flag_example if name in _KEYS else "'solver->*=p log p'"
        raise ConfigError(f"{flag} {err.problem}", fix=err.fix or f"for example {flag} {example}".rstrip()) from None


# --- one file ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _File:
    """A settings file being read: where its table starts, and how to point at one of its keys."""

    path: Path
    lines: tuple[str, ...]
    prefix: tuple[str, ...]  # ("tool", "scalecheck") in pyproject.toml, () in scalecheck.toml

    def where(self, table: tuple[str, ...], key: str | None = None, quoted: bool = False) -> Location:
        """`[tool.scalecheck.gate] threshold` and its line; without `key`, the table itself."""
        name = ".".join(self.prefix + table)
        shown = json.dumps(key) if quoted else key
        record = " ".join(filter(None, (f"[{name}]" if name else "", shown))) or None
        return Location(self.path, _line_of(self.lines, self.prefix + table + ((key,) if key else ())), record)

    def error(self, problem: str, table: tuple[str, ...], key: str | None = None, *, fix: str | None,
              quoted: bool = False) -> ConfigError:
        return ConfigError(problem, where=self.where(table, key, quoted), fix=fix)


_HEADER = re.compile(r"\s*\[\[?([^\]]*)\]")


def _split_key(text: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in text.split("."))


def _line_of(lines: Sequence[str], path: tuple[str, ...]) -> int | None:
    """1-based line that defines the dotted key or table `path`: its [header], or `key =` (or `a.key =`) under the
    nearest header above it. A cheap scan, not a TOML parser: None when the key is written some other way."""
    current: tuple[str, ...] = ()
    for number, line in enumerate(lines, start=1):
        header = _HEADER.match(line)
        if header:
            current = _split_key(header.group(1))
            if current[:len(path)] == path:  # [tool.scalecheck.gate] also defines `tool`
                return number
            continue
        if len(path) > len(current) and path[:len(current)] == current:
            parts = (rf"""(?:{re.escape(p)}|"{re.escape(p)}"|'{re.escape(p)}')""" for p in path[len(current):])
            if re.match(r"\s*" + r"\s*\.\s*".join(parts) + r"\s*[.=]", line):
                return number
    return None


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except OSError as err:
        raise ConfigError(f"cannot read the file: {err.strerror}", where=Location(path),
                          fix="check that the file exists and is readable") from err
    except UnicodeDecodeError as err:
        raise ConfigError("is not UTF-8 text", where=Location(path), fix="save the file as UTF-8") from err


def _parse_toml(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        message = str(err)
        at = re.search(r"\s*\(at line (\d+), column (\d+)\)", message)
        if at:
            line: int | None = int(at.group(1))
            message = message[:at.start()] + f" at column {at.group(2)}"
        else:  # "(at end of document)"
            line = len(text.splitlines()) or None
        raise ConfigError(f"not valid TOML: {message}", where=Location(path, line),
                          fix="correct the TOML syntax") from err


def _has_table(pyproject: Path) -> bool:
    text = _read_text(pyproject)
    if "scalecheck" not in text:  # most pyproject files: no need to parse them
        return False
    tool = _parse_toml(text, pyproject).get("tool")
    return isinstance(tool, dict) and "scalecheck" in tool


def _load(path: Path) -> Config:
    text = _read_text(path)
    document = _parse_toml(text, path)
    lines = tuple(text.splitlines())
    if path.name != "pyproject.toml":
        return _from_table(document, _File(path, lines, ()))
    tool = document.get("tool")
    table = tool.get("scalecheck") if isinstance(tool, dict) else None
    if table is None:
        raise ConfigError("has no [tool.scalecheck] table", where=Location(path),
                          fix="add a [tool.scalecheck] table, or leave --config out to use the defaults")
    file = _File(path, lines, ("tool", "scalecheck"))
    if not isinstance(table, dict):
        raise file.error(f"must be a table, got {_kind(table)}", (), fix="write the settings under [tool.scalecheck]")
    return _from_table(table, file)


def _from_table(table: dict[str, Any], file: _File) -> Config:
    values: dict[str, object] = {}
    for key, value in table.items():
        if key in _TABLES and not isinstance(value, dict):
            raise file.error(f"must be a table, got {_kind(value)}", (), key,
                             fix=f"write the settings of {key} under [{'.'.join(file.prefix + (key,))}]")
        if key == "expectations":
            values[key] = tuple(_read_expectation(glob, growth, file) for glob, growth in value.items())
        elif key in _TABLES:
            for name, setting in value.items():
                values[name] = _read_key(file, key, name, setting)
        else:
            values[key] = _read_key(file, "", key, value)
    config = Config(source=file.path, root=file.path.parent, **values)  # type: ignore[arg-type]
    try:
        building_blocks(config.exponents, config.log_exponents)
    except ConfigError as err:
        raise file.error(err.problem, ("search",), "exponents", fix=err.fix) from None
    return config


def _read_key(file: _File, table: str, key: str, value: object) -> object:
    here = (table,) if table else ()
    spec = _KEYS.get(key)
    if spec is None or spec.table != table:
        raise _unknown(file, here, key, isinstance(value, dict) and not table)
    try:
        return spec.read(value)
    except _Invalid as err:
        raise file.error(err.problem, here, key, fix=err.fix or f"write {key} = {err.example or spec.example}") \
            from None


def _read_expectation(glob: str, growth: object, file: _File) -> tuple[str, str]:
    try:
        return _expectation(glob, growth)
    except _Invalid as err:
        raise file.error(err.problem, ("expectations",), glob, quoted=True,
                         fix=err.fix or 'write each expectation as "KERNEL GLOB" = "GROWTH", e.g. '
                                        '"solver->*" = "p log p"') from None


def _unknown(file: _File, table: tuple[str, ...], key: str, is_table: bool) -> ConfigError:
    if key == "tool" and not file.prefix:
        return file.error("unknown key 'tool'", table, fix="in scalecheck.toml the settings stand at the top level, "
                                                          "without [tool.scalecheck]")
    if is_table:
        hint = _did_you_mean(key, _TABLES) or f"the tables are {', '.join(_TABLES)}"
        return ConfigError(f"unknown table '{key}'", where=dataclasses.replace(file.where(table + (key,)),
                                                                                   record=file.where(table).record),
                           fix=hint)
    here = table[0] if table else ""
    valid = [name for name, spec in _KEYS.items() if spec.table == here] + ([] if here else list(_TABLES))
    owner = _KEYS.get(key)
    if owner is not None:
        hint = f"{key} belongs in [{'.'.join(file.prefix + ((owner.table,) if owner.table else ()))}]"
        hint = hint if owner.table or file.prefix else f"{key} belongs at the top level"
    else:
        hint = _did_you_mean(key, valid) or f"the keys here are {', '.join(valid)}"
    location = dataclasses.replace(file.where(table, key), record=file.where(table).record)
    return ConfigError(f"unknown key '{key}'", where=location, fix=hint)
