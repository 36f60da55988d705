"""L3: the settings, declared once. `Config`'s fields are the option table: each field is one `setting(...)` that
names its TOML key and table, its rule, its default, its command-line flag and its help. From that one table come
the keys of `[tool.scalecheck]` (in pyproject.toml, or scalecheck.toml whose top level is that table), every
command's flags (`scalecheck.cli`), their help, and the settings reference (`settings_reference`, docs/settings.md).
The defaults of the model search are those of `scalecheck.core.options`, the records the settings feed.

    [tool.scalecheck]
    measurements = ["bench/results/*.json"]
    target = {p = 65536}
    [tool.scalecheck.search]
    max_terms = 2
    [tool.scalecheck.gate]
    threshold = 0.10
    fail_on = ["growth", "prediction", "expectation"]
    [tool.scalecheck.expectations]
    "solver->*" = "p log p"

Command-line flags override file values through `Config.with_flags` (flag text) or `Config.with_overrides`
(Python values), checked by the same rules. A wrong key or value is a `ConfigError` naming the file, the 1-based
line, the key and the fix (or the flag): a mistyped threshold must not pass CI silently.

This module stays free of numpy, so that `scalecheck --help` builds its flags from the table quickly.
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
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from scalecheck.core.options import CompareOptions, FitOptions
from scalecheck.data.exponents import DEFAULT_BUILDING_BLOCKS, Exponents
from scalecheck.errors import ConfigError, Location
from scalecheck.names import (AGGREGATE_NAMES, DEFAULT_FAIL_ON, FAILABLE_KINDS, FORMAT_NAMES, MISSING_BASELINE,
                              NEGATIVE_EXPONENTS, SCALINGS, STORES)

COMMANDS = ("model", "check", "record", "history")  # the commands that read settings
_MODELING = ("model", "check", "history")  # commands that fit models
_GIT = ("check", "record", "history")  # commands that find measurements of past commits in git
TABLES = ("search", "gate", "expectations")  # the sub-tables of [tool.scalecheck]
_UNSET: Any = object()


@dataclass(frozen=True, kw_only=True)
class Option:
    """One setting: where it is written, how its value is checked, its default, flag and help."""

    key: str = ""  # the TOML key, also the `Config` field (filled in from the field's name)
    table: str  # "" (the top of [tool.scalecheck]), "search", "gate" or "expectations"
    read: Callable[[Any], object]  # a TOML value (or a Python value) -> the setting's value, or `_Invalid`
    default: object  # from the core record the setting feeds (`source`), else given
    source: str | None  # "FitOptions.max_terms": the field of a core option record that takes the value
    example: str  # a valid TOML value, for fixes and the reference
    help: str  # one sentence: what the setting does
    commands: tuple[str, ...]  # commands that take it as a flag (every command in COMMANDS reads the file)
    flag: str  # the flag's name (also named in override errors)
    metavar: str | None  # what the flag's value is called; None: a switch (no value)
    flag_example: str  # a valid flag value, for fixes
    form: str  # how flag text becomes a value: "text", "number", "integer", "list" (repeatable flag),
    # "comma" (a comma-separated list), "target" (NAME=VALUE,...), "expect" (repeatable GLOB=GROWTH), "on" (switch
    # that sets true) or "off" (switch that sets false)
    choices: tuple[str, ...] | None  # the values a flag may take, when a fixed list

    @property
    def default_text(self) -> str:
        """The default as the reference and the help show it."""
        value = self.default
        if value is None:
            return "none"
        if isinstance(value, bool):
            return str(value).lower()
        if isinstance(value, tuple):
            return ", ".join(map(str, value)) if value else "none"
        return f"{value:g}" if isinstance(value, float) else str(value)


def setting(table: str, read: Callable[[Any], object], *, example: str, help: str, default: object = _UNSET,
            source: str | None = None, commands: Sequence[str] = (), flag: str | None = None,
            metavar: str | None = "", flag_example: str | None = None, form: str = "text",
            choices: Sequence[str] | None = None) -> Any:
    """A `Config` field that is one entry of the option table. `source` ("FitOptions.alpha") takes the default from
    the core record that the setting feeds; `metavar` None makes the flag a switch."""
    if source is not None:
        record, name = source.split(".")
        records: dict[str, Any] = {"FitOptions": FitOptions, "CompareOptions": CompareOptions}
        default = records[record].__dataclass_fields__[name].default
    if default is _UNSET:
        raise TypeError("a setting needs a default or a source")
    option = Option(table=table, read=read, default=default, source=source, example=example, help=help,
                    commands=tuple(commands), flag=flag or "", metavar=metavar, flag_example=flag_example or "",
                    form=form, choices=tuple(choices) if choices is not None else None)
    return field(default=default, metadata={"option": option})


# --- the rules a value must follow (each raises _Invalid; the caller says where) -----------------------------------

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
    """Exponents: numbers, or strings such as "3/2" or "-1/2"; sorted, without repeats."""
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
    from scalecheck.data.growth import parse_growth  # numpy: only when an expectation is read

    try:
        parse_growth(growth)
    except ValueError as err:
        raise _Invalid(str(err)) from None
    return str(glob), growth


def _expectations(value: object) -> tuple[tuple[str, str], ...]:
    """Expectations as a table (glob = growth) or as (glob, growth) pairs."""
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


@dataclass(frozen=True)
class Config:
    """Settings read from one file (or the built-in defaults), with command-line overrides applied.

    Every field after `source` and `root` is one setting of the option table (`OPTIONS`).
    """

    source: Path | None = None  # the file read (None: built-in defaults)
    root: Path = Path(".")  # folder of that file; relative measurement globs resolve against it
    # [tool.scalecheck]
    measurements: tuple[str, ...] = setting(
        "", _strings, default=(), example='["bench/*.json"]',
        help="glob patterns of the candidate's measurement files, relative to the folder of the settings file, "
             "used when a command is given no files: '*' stays within one folder, '**' matches any folders, "
             "'{a,b}' expands, hidden files match only a pattern that names their leading '.'; the same files are "
             "read at the baseline commit")
    format: str | None = setting(
        "", _choice(FORMAT_NAMES), default=None, example='"csv"', commands=COMMANDS, metavar="NAME", flag_example="csv",
        choices=FORMAT_NAMES, help="read every measurement file in this format instead of detecting it per file")
    scaling: str = setting(
        "", _choice(SCALINGS), default="weak", example='"strong"', commands=COMMANDS, metavar="TYPE",
        flag_example="strong", choices=SCALINGS,
        help="how a Score-P profile's values over its processes and threads make one value, as Extra-P's --scaling: "
             "weak (their mean), weak_threaded (the mean of the threads that ran the call path) or strong (their "
             "sum)")
    store: str = setting(
        "", _choice(STORES), default="auto", example='"auto"', commands=_GIT, metavar="STORE", flag_example="auto",
        choices=STORES, help="where the measurements of past commits are: the data branch, files committed in the "
                             "repository, or auto (the data branch first)")
    data_branch: str = setting(
        "", _branch, default="scalecheck-data", example='"scalecheck-data"', commands=_GIT, metavar="BRANCH",
        flag_example="scalecheck-data", help="the branch that holds the measurements of past commits")
    target: Mapping[str, float] | None = setting(
        "", _target, default=None, example="{p = 65536}", commands=("model", "check"), metavar="P=V[,Q=W]",
        flag_example="p=65536", form="target",
        help="the scale to predict at and rank by, a positive value per parameter (a check without it predicts "
             "at 4x the largest measured value)")
    metrics: tuple[str, ...] = setting(
        "", _strings, default=(), example='["time"]', commands=_MODELING, flag="--metric", metavar="M",
        flag_example="time", form="list", help="only these metrics (the flag is repeatable; default: all)")
    kernels: tuple[str, ...] = setting(
        "", _strings, default=(), example='["solver->*"]', commands=_MODELING, flag="--kernel", metavar="GLOB",
        flag_example="'solver->*'", form="list",
        help="only kernels matching one of these globs (the flag is repeatable; default: all)")
    aggregate: str = setting(
        "", _choice(AGGREGATE_NAMES), source="FitOptions.aggregate", example='"mean"', commands=_MODELING,
        metavar="NAME", flag_example="mean", choices=AGGREGATE_NAMES,
        help="statistic of the repetitions at each point: mean (as Extra-P), median, min, or tmax (min(S) plus the "
             "0.95 quantile of a noise model fitted to the repetitions; needs about 10 or more per point)")
    segmentation: bool = setting(
        "", _boolean, default=True, example="false", commands=_MODELING, flag="--no-segmentation", metavar=None,
        form="off", help="search single-parameter kernels with 6 or more points for a change of trend, with one "
                         "model per segment (--no-segmentation: one model over all points)")
    # [tool.scalecheck.search]
    max_terms: int = setting(
        "search", _integer(1), source="FitOptions.max_terms", example="2", commands=_MODELING, metavar="N",
        flag_example="2", form="integer",
        help="most terms per parameter besides the constant; a second term needs at least 7 points")
    exponents: tuple[Fraction, ...] | None = setting(
        "search", _fractions, default=None, example='[0, "1/2", 1, "3/2", 2]', commands=_MODELING, metavar="LIST",
        flag_example="0,1/2,1,3/2,2", form="comma",
        help="polynomial exponents i to search (default: Extra-P's 20; a negative one is a falling term); with "
             "log_exponents, every (i, j) pair")
    log_exponents: tuple[Fraction, ...] | None = setting(
        "search", _fractions, default=None, example="[0, 1, 2]", commands=_MODELING, metavar="LIST",
        flag_example="0,1,2", form="comma",
        help="logarithm exponents j to search (default: Extra-P's 42 pairs of i and j)")
    allow_decreasing: bool = setting(
        "search", _boolean, source="FitOptions.allow_decreasing", example="true", commands=_MODELING, metavar=None,
        form="on", help="accept models whose lead term decreases (else such kernels are modeled as constant)")
    negative_exponents: str = setting(
        "search", _choice(NEGATIVE_EXPONENTS), source="FitOptions.negative_exponents", example='"always"',
        commands=_MODELING, metavar="WHEN", flag_example="always", choices=NEGATIVE_EXPONENTS,
        help="when to search falling terms p^-i * log2(p)^-j (strong scaling: time that shrinks as processes are "
             "added): auto (for kernels whose values fall with a parameter), always, or never")
    refine: bool = setting(
        "search", _boolean, source="FitOptions.refine", example="true", commands=_MODELING, metavar=None, form="on",
        help="search-space refinement: exponents on a grid of 1/24 along Extra-P's four slices (single-parameter "
             "kernels); one off the building blocks is kept only where it fits better by more than noise could")
    alpha: float = setting(
        "search", _number("greater than 0 and less than 1", lambda x: 0 < x < 1), source="FitOptions.alpha",
        example="0.01", commands=_MODELING, metavar="A", flag_example="0.01", form="number",
        help="significance level of the constant test, of each extra term and of the test that confirms a change "
             "point")
    min_points: int = setting(
        "search", _integer(3), source="FitOptions.min_distinct_values", example="3", commands=_MODELING,
        metavar="N", flag_example="5", form="integer",
        help="fewest distinct values of a parameter that a kernel is modeled from; with fewer it is listed as "
             "insufficient data")
    # [tool.scalecheck.gate]
    threshold: float = setting(
        "gate", _number("greater than 0", lambda x: x > 0), source="CompareOptions.threshold", example="0.1", commands=("check",),
        metavar="X", flag_example="0.1", form="number",
        help="relative slowdown at the target scale (and at the measured points) that counts as a regression")
    confidence: float = setting(
        "gate", _number("at least 0.5 and less than 1", lambda x: 0.5 <= x < 1), source="CompareOptions.confidence",
        example="0.95",
        commands=("check",), metavar="C", flag_example="0.95", form="number",
        help="confidence of bounds and probabilities; 1 - C is the false discovery rate")
    bootstrap: int = setting(
        "gate", _integer(20), source="CompareOptions.resamples", example="200", commands=("check",), metavar="N", flag_example="200",
        form="integer", help="bootstrap resamples per kernel and side")
    seed: int = setting(
        "gate", _integer(0), source="CompareOptions.seed", example="0", commands=("check",), metavar="S", flag_example="0",
        form="integer", help="seed of the resampling, so that a verdict is reproducible")
    fail_on: tuple[str, ...] = setting(
        "gate", _kinds, default=DEFAULT_FAIL_ON, example='["growth", "prediction", "expectation"]',
        commands=("check",), metavar="KINDS", flag_example="growth,prediction", form="comma",
        help=f"the kinds of finding that fail the build, of {', '.join(FAILABLE_KINDS)} (empty: only report)")
    fail_across_machines: bool = setting(
        "gate", _boolean, default=False, example="true", commands=("check",), metavar=None, form="on",
        help="let level findings (prediction, measured, overhead, segmentation), and growth within what a memory "
             "hierarchy does, fail the build even when the two sides were measured on different machines (else "
             "they are reported as warnings)")
    missing_baseline: str = setting(
        "gate", _choice(MISSING_BASELINE), default="pass", example='"fail"', commands=("check",), metavar="WHAT",
        flag_example="fail", choices=MISSING_BASELINE,
        help="when no commit on the baseline side has measurements yet: pass with a notice (expectations still "
             "apply) or fail with an error (exit status 2)")
    # [tool.scalecheck.expectations]
    expectations: tuple[tuple[str, str], ...] = setting(
        "expectations", _expectations, default=(), example='{"solver->*" = "p log p"}', commands=("check",),
        flag="--expect", metavar="GLOB=GROWTH", flag_example="'solver->*=p log p'", form="expect",
        help="kernels matching a glob must grow no faster than the growth, in file order (the flag is repeatable "
             "and replaces the configured expectations)")

    def with_overrides(self, **settings: object) -> Config:
        """A copy with Python values in place of the file's; a value None means "not given"."""
        values: dict[str, object] = {}
        for name, value in settings.items():
            if name not in OPTIONS:
                raise TypeError(f"Config has no setting {name!r}")
            if value is not None:
                values[name] = _checked(OPTIONS[name], value)
        return _replace(self, values)

    def with_flags(self, flags: Mapping[str, object]) -> Config:
        """A copy with the command line's values (text, lists of text or True for a switch, by setting name) in
        place of the file's; None means the flag was not given."""
        values: dict[str, object] = {}
        for name, text in flags.items():
            if text is not None:
                option = OPTIONS[name]
                values[name] = _checked(option, _from_flag(option, text))
        return _replace(self, values)

    def fit_options(self) -> FitOptions:
        """The model-search options these settings give."""
        return FitOptions(building_blocks=building_blocks(self.exponents, self.log_exponents),
                          **self._section("FitOptions"))

    def compare_options(self) -> CompareOptions:
        """The comparison's thresholds these settings give."""
        return CompareOptions(**self._section("CompareOptions"))

    def _section(self, record: str) -> dict[str, Any]:
        """The fields of a core option record that settings set (by `source`), with their values."""
        return {option.source.split(".")[1]: getattr(self, name) for name, option in OPTIONS.items()
                if option.source is not None and option.source.split(".")[0] == record}


def _replace(config: Config, values: dict[str, object]) -> Config:
    config = dataclasses.replace(config, **values)  # type: ignore[arg-type]
    building_blocks(config.exponents, config.log_exponents)
    return config


def _options() -> dict[str, Option]:
    table = {}
    for item in dataclasses.fields(Config):
        option = item.metadata.get("option")
        if option is not None:
            flag = option.flag or ("--" + item.name.replace("_", "-") if option.commands else "")
            table[item.name] = dataclasses.replace(option, key=item.name, flag=flag)
    return table


OPTIONS: dict[str, Option] = _options()  # the option table, in declaration order
FLAGS = {name: option.flag or "--" + name.replace("_", "-") for name, option in OPTIONS.items()}
DEFAULTS = Config()


def _checked(option: Option, value: object) -> object:
    """`value` by the option's rule; a mistake names the flag."""
    try:
        return option.read(value)
    except _Invalid as err:
        raise ConfigError(f"{FLAGS[option.key]} {err.problem}",
                          fix=err.fix or f"for example {FLAGS[option.key]} {option.flag_example}".rstrip()) from None


def _from_flag(option: Option, text: object) -> object:
    """Flag text as the value the option's rule reads (the rule then checks it)."""
    flag = FLAGS[option.key]
    if option.form == "on":
        return bool(text)
    if option.form == "off":
        return not text
    if option.form == "list":
        return list(text) if isinstance(text, (list, tuple)) else [text]
    if option.form == "expect":
        return [_expect(flag, str(item)) for item in (text if isinstance(text, (list, tuple)) else [text])]
    if not isinstance(text, str):
        return text
    if option.form == "comma":
        return [item.strip() for item in text.split(",") if item.strip()]
    if option.form == "target":
        return parse_target(text)
    if option.form in ("number", "integer"):
        try:
            return int(text) if option.form == "integer" else float(text)
        except ValueError:
            kind = "an integer" if option.form == "integer" else "a number"
            raise ConfigError(f"{flag} must be {kind}, got '{text}'",
                              fix=f"for example {flag} {option.flag_example}") from None
    return text


def _expect(flag: str, item: str) -> tuple[str, str]:
    pattern, sep, growth = item.rpartition("=")
    if not sep or not pattern.strip() or not growth.strip():
        raise ConfigError(f"{flag}: cannot read '{item}'", fix=f"write {flag} 'GLOB=GROWTH', e.g. "
                                                               f"{flag} 'solver->*=p log p'")
    return pattern.strip(), growth.strip()


def parse_target(text: str) -> dict[str, float]:
    """`p=65536,n=1e6` → {'p': 65536.0, 'n': 1000000.0}."""
    target: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or not name.strip() or not math.isfinite(number) or number <= 0:
            raise ConfigError(f"--target: cannot read '{item}'",
                              fix="write the target scale as NAME=VALUE with a positive number, e.g. --target p=65536")
        if name.strip() in target:
            raise ConfigError(f"--target gives {name.strip()} twice",
                              fix="give each parameter one value, e.g. --target p=65536")
        target[name.strip()] = number
    if not target:
        raise ConfigError("--target is empty", fix="write the target scale as NAME=VALUE, e.g. --target p=65536")
    return target


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


def settings_reference() -> str:
    """The settings reference (docs/settings.md), generated from the option table."""
    lines = ["# Settings", "",
             "scalecheck reads `[tool.scalecheck]` in `pyproject.toml`, or `scalecheck.toml` (whose top level is that "
             "table), found from the working folder upwards to the top of the repository; `--config FILE` names "
             "another file. Every command that models or compares reads it. A flag overrides its setting. An "
             "unknown key or a wrong value is an error naming the file, the line and the fix.", "",
             "This page is generated from the option table in `scalecheck/config.py`.", ""]
    for table in ("", "search", "gate", "expectations"):
        lines += [f"## `[tool.scalecheck{'.' + table if table else ''}]`", "",
                  "| key | default | flag | commands | what it does |", "|---|---|---|---|---|"]
        for name, option in OPTIONS.items():
            if option.table == table:
                flag = f"`{FLAGS[name]}{' ' + option.metavar if option.metavar else ''}`" if option.commands else ""
                lines.append(f"| `{name}` | `{option.default_text}` | {flag} | {', '.join(option.commands)} | "
                             f"{option.help.replace('|', '&#124;')} (e.g. `{name} = {option.example}`) |")
        lines.append("")
    return "\n".join(lines)


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
    try:
        found_file = path.is_file()
    except OSError as err:  # a name the system refuses, such as one longer than 255 bytes
        raise ConfigError(f"cannot read it: {err.strerror or err}", where=Location(path),
                          fix="check the path given to --config") from None
    if not found_file:
        raise ConfigError("no such file", where=Location(path),
                          fix="check the path given to --config, or leave --config out to use the pyproject.toml "
                              "or scalecheck.toml found from the working folder")
    return _load(path)


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
        if key in TABLES and not isinstance(value, dict):
            raise file.error(f"must be a table, got {_kind(value)}", (), key,
                             fix=f"write the settings of {key} under [{'.'.join(file.prefix + (key,))}]")
        if key == "expectations":
            values[key] = tuple(_read_expectation(glob, growth, file) for glob, growth in value.items())
        elif key in TABLES:
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
    spec = OPTIONS.get(key)
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
        hint = _did_you_mean(key, TABLES) or f"the tables are {', '.join(TABLES)}"
        return ConfigError(f"unknown table '{key}'", where=dataclasses.replace(file.where(table + (key,)),
                                                                                   record=file.where(table).record),
                           fix=hint)
    here = table[0] if table else ""
    valid = [name for name, spec in OPTIONS.items() if spec.table == here] + ([] if here else list(TABLES))
    owner = OPTIONS.get(key)
    if owner is not None:
        hint = f"{key} belongs in [{'.'.join(file.prefix + ((owner.table,) if owner.table else ()))}]"
        hint = hint if owner.table or file.prefix else f"{key} belongs at the top level"
    else:
        hint = _did_you_mean(key, valid) or f"the keys here are {', '.join(valid)}"
    location = dataclasses.replace(file.where(table, key), record=file.where(table).record)
    return ConfigError(f"unknown key '{key}'", where=location, fix=hint)
