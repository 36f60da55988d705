"""Extra-P 4.2.5's own modeling tests as a benchmark: each planted function, modeled by scalecheck and by Extra-P.

    python benchmarks/extrap_suite.py [--family SUBSTRING] [--no-extrap] [--seed N] [--noise REL]
                                      [--repetitions R] [--fit-option KEY=VALUE ...] [--examples N] [--extrap PATH]

The cases are those of Extra-P 4.2.5's tests (tests/test_basic_modeler.py, test_multi_param_modeler.py,
test_segmented_modeler.py, test_refining_modeler.py), whose generating functions are tabled in
extrap_suite_cases.py: one family per test (one for the segmented tests). A case is "exact" when a tool's model
has the same terms as the generating function: the same exponents in each parameter, the same number of terms, no
terms for a constant, and for a segmented function the same number of segments with the same terms each.
Coefficients are not part of it; the "coef err" columns give, over a family's exact cases, the median of each
case's largest relative error of a coefficient (the constant included unless it is 0).

scalecheck fits each family in one `fit_kernels` call (in-process, change-point search on, as `scalecheck model`
does), with `FitOptions()` defaults, except `refine=True` for the refining families; `--fit-option` overrides any
field for every family. Extra-P runs as its CLI (found as extrap_reference.py says) on one text file per family and
point set, with the modeler and options of the test it re-creates: `--modeler basic` for the basic families, with
`--options allow_negative_exponents=True` for negative exponents and `use_crossvalidation=False` for test_compare;
its default (multi-parameter) modeler for the multi families; `--modeler segmented --measure median` for the
segmented one; `--modeler refining` for the refining ones, with `--options use_crossvalidation=False
compare_with_RSS=True` for test_compare. Extra-P's time includes its start-up (about 0.5 s per file).

Left out, having no planted function to recover: test_segmented_modeler.py::test_const_square_segmentation (its
segments have 3 points; the test checks only whether the model is segmented, with a minimum segment length that
the CLI does not expose) and ::test_segmented_function (evaluates a given function);
test_multi_param_modeler.py::TestFindBestMeasurements::test_2parameters_example (checks only that the model beats a
constant) and the tests of point selection and sparse data, which check no model terms.

Noise: Extra-P's tests plant exact values (the refining test_general models a measured file, kept as measured).
`--noise REL` multiplies every planted value by (1 + REL * e), e ~ N(0, 1) drawn from
`numpy.random.default_rng((seed, crc32 of the family's region prefix))`, independently for each of
`--repetitions` values per point (so a family's values do not depend on which other families run).

Prints one row per family (cases, exact share of each tool, coefficient errors, seconds), marks a family where
scalecheck is below Extra-P or below 95%, the total time per tool, the peak memory of this process (scalecheck's
fits; Extra-P runs in subprocesses), and for each marked family a few cases scalecheck misses.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import re
import resource
import sys
import tempfile
import time
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import extrap_suite_cases as tables  # noqa: E402
from extrap_reference import ExtrapError, find_extrap, parse_formula, run_extrap  # noqa: E402

from scalecheck.core.modeler import fit_kernels  # noqa: E402
from scalecheck.core.options import FitOptions  # noqa: E402
from scalecheck.data.measurement import Series  # noqa: E402
from scalecheck.data.outcome import FittedModel, KernelModel  # noqa: E402

METRIC = "time"
PARAMETER_NAMES = ("x", "y", "z", "w")
GOOD_ENOUGH = 0.95  # a family below this share of exact cases is marked

Factor = tuple[int, Fraction, Fraction]  # (parameter index, power, log power): x^power * log2(x)^log_power
TermKey = tuple[Factor, ...]


@dataclass(frozen=True)
class Term:
    """coefficient * product of factors; each factor has a nonzero power or log power, one factor per parameter."""

    coefficient: float
    factors: TermKey

    @property
    def key(self) -> TermKey:
        return tuple(sorted(self.factors))


@dataclass(frozen=True)
class Model:
    """constant + sum of terms: a generating function, or one segment of a tool's model."""

    constant: float
    terms: tuple[Term, ...] = ()

    def evaluate(self, points: np.ndarray) -> np.ndarray:
        """Values at `points`, shape (n, m) -> (n,)."""
        out = np.full(points.shape[0], self.constant, dtype=float)
        for term in self.terms:
            part = np.full(points.shape[0], term.coefficient, dtype=float)
            for param, power, log_power in term.factors:
                x = points[:, param]
                if power:
                    part = part * x ** float(power)
                if log_power:
                    part = part * np.log2(x) ** float(log_power)
            out = out + part
        return out

    @property
    def keys(self) -> list[TermKey]:
        return sorted(term.key for term in self.terms)

    def format(self, names: Sequence[str]) -> str:
        """E.g. `200 + 10 * x^(1/2) * log2(x)^(2)`; an unknown (NaN) coefficient shows as `c`."""
        parts = [_format_number(self.constant)]
        for term in self.terms:
            factors = [_format_factor(names[p], power, log) for p, power, log in term.key]
            parts.append(" * ".join([_format_number(term.coefficient), *factors]))
        return " + ".join(parts)


@dataclass(frozen=True)
class Case:
    """One planted function and its measurements: `points` (n, m) in the test's order, `values` (n, r)."""

    region: str  # the name in the Extra-P text file and the scalecheck kernel name
    parameters: tuple[str, ...]
    points: np.ndarray
    values: np.ndarray
    truth: tuple[Model, ...]  # one model, or one per segment


@dataclass(frozen=True)
class Family:
    """The cases of one Extra-P test and how each tool models them."""

    name: str
    source: str  # "Extra-P 4.2.5, tests/<file>::<test>"
    cases: tuple[Case, ...]
    fit_options: Mapping[str, object] = dataclasses.field(default_factory=dict)  # scalecheck FitOptions fields
    extrap_modeler: str | None = None  # the CLI's --modeler (None: its default)
    extrap_options: tuple[str, ...] = ()  # the CLI's --options KEY=VALUE
    extrap_measure: str | None = None  # the CLI's --measure


@dataclass(frozen=True)
class Answer:
    """A tool's model of one case: one model per segment (none when it gave no model), and what it said."""

    segments: tuple[Model, ...]
    text: str = ""  # the tool's own formula or note


@dataclass(frozen=True)
class ToolRun:
    answers: tuple[Answer, ...]  # in the order of the family's cases
    seconds: float
    error: str = ""


@dataclass(frozen=True)
class Row:
    family: Family
    scalecheck: ToolRun
    extrap: ToolRun | None  # None: Extra-P not run

    def hits(self, run: ToolRun) -> int:
        """How many cases `run` models exactly."""
        return sum(exact(c.truth, a) for c, a in zip(self.family.cases, run.answers))

    def share(self, run: ToolRun | None) -> float | None:
        return None if run is None else self.hits(run) / len(self.family.cases)

    def coefficient_error(self, run: ToolRun | None) -> float | None:
        if run is None:
            return None
        errors = [coefficient_error(c.truth, a) for c, a in zip(self.family.cases, run.answers) if exact(c.truth, a)]
        known = [e for e in errors if e is not None]
        return float(np.median(known)) if known else None

    @property
    def marks(self) -> list[str]:
        ours, theirs = self.share(self.scalecheck), self.share(self.extrap)
        assert ours is not None
        out = []
        if theirs is not None and ours < theirs:
            out.append("< Extra-P")
        if ours < GOOD_ENOUGH:
            out.append(f"< {GOOD_ENOUGH:.0%}")
        return out


# --------------------------------------------------------------------------- cases


def _rational(value: float | Fraction) -> Fraction:
    """`value` as a fraction, snapped to a small denominator when it is one up to rounding (0.3333333333 -> 1/3)."""
    exact_value = Fraction(value)
    near = exact_value.limit_denominator(1000)
    return near if abs(near - exact_value) < 1e-9 else exact_value


def _factor(param: int, exponents: tables.Exponents) -> Factor | None:
    """Extra-P's CompoundTerm.create(a, b, c) = x^(a/b) * log2(x)^c of parameter `param`; None for x^0."""
    a, b, c = exponents
    if a == 0 and c == 0:
        return None
    return (param, Fraction(a, b), Fraction(c))


def _term(coefficient: float, *factors: Factor | None) -> Term:
    return Term(coefficient, tuple(f for f in factors if f is not None))


def _function(constant: float, coefficient: float, exponents: tables.Exponents | None) -> Model:
    """constant + coefficient * x^(a/b) * log2(x)^c, or the constant when `exponents` is None."""
    return Model(constant, () if exponents is None else (_term(coefficient, _factor(0, exponents)),))


@dataclass(frozen=True)
class Planting:
    """How planted values are measured: `noise` (relative) and `repetitions` per point, seeded per family."""

    seed: int = 0
    noise: float = 0.0
    repetitions: int = 1

    def rng(self, family: str) -> np.random.Generator:
        """The family's own stream, so that its values do not depend on which other families run."""
        return np.random.default_rng((self.seed, zlib.crc32(family.encode())))


def _measure(exact_values: np.ndarray, rng: np.random.Generator, planting: Planting) -> np.ndarray:
    """Values (n, repetitions): `exact_values` (n,), times (1 + noise * N(0, 1)) per value when noise > 0."""
    values = np.repeat(exact_values[:, None], planting.repetitions, axis=1)
    if planting.noise <= 0:
        return values
    return values * (1.0 + planting.noise * rng.standard_normal(values.shape))


def _planted(family: str, functions: Sequence[Model], points: np.ndarray, planting: Planting) -> tuple[Case, ...]:
    """One case per function, regions named `family` + number."""
    names = PARAMETER_NAMES[: points.shape[1]]
    rng = planting.rng(family)
    return tuple(Case(f"{family}{k:03d}", names, points,
                      _measure(f.evaluate(points), rng, planting), (f,))
                 for k, f in enumerate(functions))


def _column(values: Sequence[float]) -> np.ndarray:
    return np.array(values, dtype=float)[:, None]


def _basic_families(planting: Planting) -> list[Family]:
    """tests/test_basic_modeler.py: test_modeling, test_modeling2, test_modeling3, negative exponents, test_compare."""
    points = _column(tables.BASIC_POINTS)
    source = "Extra-P 4.2.5, tests/test_basic_modeler.py::"
    blocks = [_function(tables.BUILDING_BLOCK_CONSTANT, tables.BUILDING_BLOCK_COEFFICIENT, e)
              for e in tables.BUILDING_BLOCKS]
    coefficients = [_function(tables.SUBSET_CONSTANT, c, e) for e in tables.SUBSET for c in tables.COEFFICIENTS]
    constants = [_function(c, tables.SUBSET_COEFFICIENT, e) for e in tables.SUBSET for c in tables.COEFFICIENTS]
    negative = [_function(c, tables.NEGATIVE_COEFFICIENT, e)
                for e in tables.NEGATIVE for c in tables.NEGATIVE_CONSTANTS]
    compare = [_function(c, k, e) for e, c, k in tables.COMPARE]
    basic = "basic"
    return [
        Family("basic: building blocks (test_modeling)", source + "test_modeling",
               _planted("bb", blocks, points, planting), extrap_modeler=basic),
        Family("basic: coefficients (test_modeling2)", source + "test_modeling2",
               _planted("co", coefficients, points, planting), extrap_modeler=basic),
        Family("basic: constants (test_modeling3)", source + "test_modeling3",
               _planted("cn", constants, points, planting), extrap_modeler=basic),
        Family("basic: negative exponents (test_modeling_negative_exponents)",
               source + "test_modeling_negative_exponents",
               _planted("ne", negative, points, planting), extrap_modeler=basic,
               extrap_options=("allow_negative_exponents=True",)),
        Family("basic: compare (test_compare)", source + "test_compare",
               _planted("cb", compare, _column(tables.COMPARE_POINTS), planting),
               extrap_modeler=basic, extrap_options=("use_crossvalidation=False",)),
    ]


def _grid(values: Sequence[float], m: int, test: str) -> np.ndarray:
    """The full grid in the test's order: the first parameter fastest for two, the last fastest for more."""
    if m == 2 and test in ("test_modeling", "test_modeling_plus"):
        return np.array([(x, y) for y in values for x in values], dtype=float)
    return np.array(list(itertools.product(values, repeat=m)), dtype=float)


def _multi_function(shape: str, constant: float, coefficients: Sequence[float],
                    blocks: Sequence[tables.Exponents]) -> Model:
    factors = [_factor(k, e) for k, e in enumerate(blocks)]
    if shape == "product":
        return Model(constant, (_term(coefficients[0], *factors),))
    if shape == "sum":
        return Model(constant, tuple(_term(c, f) for c, f in zip(coefficients, factors)))
    if shape == "x + y*z":
        return Model(constant, (_term(coefficients[0], factors[0]), _term(coefficients[1], *factors[1:])))
    raise ValueError(f"unknown shape {shape!r}")


def _multi_families(planting: Planting) -> list[Family]:
    """tests/test_multi_param_modeler.py: test_modeling* (neighbouring building blocks, one per parameter)."""
    out = []
    for index, (test, title, m, shape, constant, coefficients) in enumerate(tables.MULTI):
        values = tables.GRID_VALUES_4P if m == 4 else tables.GRID_VALUES
        blocks = tables.BUILDING_BLOCKS
        functions = [_multi_function(shape, constant, coefficients, combo)
                     for combo in zip(*(blocks[k:] for k in range(m)))]
        out.append(Family(f"multi: {title} ({test})", f"Extra-P 4.2.5, tests/test_multi_param_modeler.py::{test}",
                          _planted(f"m{index}", functions, _grid(values, m, test), planting)))
    return out


def _segmented_family(planting: Planting) -> Family:
    """tests/test_segmented_modeler.py: f below the change point, g from it on."""
    cases = []
    rng = planting.rng("sg")
    for k, (_, points_list, change, f, g) in enumerate(tables.SEGMENTED):
        first, second = _function(*f), _function(*g)
        points = _column(points_list)
        values = _measure(np.where(points[:, 0] < change, first.evaluate(points), second.evaluate(points)), rng,
                          planting)
        truth = (first,) if f == g else (first, second)
        cases.append(Case(f"sg{k:03d}", PARAMETER_NAMES[:1], points, values, truth))
    return Family("segmented (test_segmented_modeler)", "Extra-P 4.2.5, tests/test_segmented_modeler.py",
                  tuple(cases), extrap_modeler="segmented", extrap_measure="median")


def _refining_families(planting: Planting) -> list[Family]:
    """tests/test_refining_modeler.py: test_compare (cross-validation off, RSS) and test_general (a measured file)."""
    source = "Extra-P 4.2.5, tests/test_refining_modeler.py::"
    compare = [_function(c, k, e) for e, c, k in tables.COMPARE]
    points = _column(tables.MEASURED_POINTS)
    measured = []
    for name, exponents, rows in tables.MEASURED:
        width = max(len(row) for row in rows)
        values = np.array([list(row) + [np.nan] * (width - len(row)) for row in rows], dtype=float)
        unknown = float("nan")  # the test checks the terms only: no coefficient to compare
        measured.append(Case(name, PARAMETER_NAMES[:1], points, values, (_function(unknown, unknown, exponents),)))
    refine = {"refine": True}
    return [
        Family("refining: compare (test_compare)", source + "test_compare",
               _planted("rc", compare, _column(tables.COMPARE_POINTS), planting), refine,
               "refining", ("use_crossvalidation=False", "compare_with_RSS=True")),
        Family("refining: measured file (test_general)", source + "test_general", tuple(measured), refine,
               "refining"),
    ]


def build_families(planting: Planting = Planting()) -> list[Family]:
    """Every family, in a fixed order."""
    return [*_basic_families(planting), *_multi_families(planting), _segmented_family(planting),
            *_refining_families(planting)]


def select(families: Sequence[Family], patterns: Sequence[str]) -> list[Family]:
    """The families whose name contains any of `patterns` (case-insensitive); all without patterns."""
    if not patterns:
        return list(families)
    return [f for f in families if any(p.lower() in f.name.lower() for p in patterns)]


# --------------------------------------------------------------------------- scoring


def exact(truth: tuple[Model, ...], answer: Answer) -> bool:
    """Same number of segments, and in each the same set of terms (exponents per parameter) as the truth."""
    return len(truth) == len(answer.segments) and all(t.keys == a.keys for t, a in zip(truth, answer.segments))


def coefficient_error(truth: tuple[Model, ...], answer: Answer) -> float | None:
    """Largest relative error of a coefficient of an exact answer: the constant included unless the truth's is 0,
    None when the truth has no known coefficient (NaN)."""
    errors = []
    for t, a in zip(truth, answer.segments):
        found = {term.key: term.coefficient for term in a.terms}
        pairs = [(term.coefficient, found[term.key]) for term in t.terms]
        if t.constant:
            pairs.append((t.constant, a.constant))
        errors += [abs(f - c) / abs(c) for c, f in pairs if not np.isnan(c)]
    return max(errors, default=None)


# --------------------------------------------------------------------------- scalecheck


def _series(case: Case) -> Series:
    """The case as scalecheck's Series: points sorted lexicographically, as its readers deliver them."""
    order = np.lexsort(case.points.T[::-1])
    return Series(case.region, METRIC, case.parameters, case.points[order], case.values[order])


def _model(fitted: FittedModel) -> Model:
    coefficients = fitted.coefficients
    terms = tuple(Term(float(c), tuple((f.param, _rational(f.exponent), _rational(f.log_exponent))
                                       for f in term.factors))
                  for c, term in zip(coefficients[1:], fitted.spec.terms))
    return Model(float(coefficients[0]), terms)


def _answer(km: KernelModel) -> Answer:
    if km.model is None:
        return Answer((), f"no model ({km.status}): {km.note}")
    fitted = [s.model for s in km.segments] if km.segments else [km.model]
    text = " | ".join(_model(m).format(km.model.parameters) for m in fitted)
    return Answer(tuple(_model(m) for m in fitted), f"{text}   [{km.note}]" if km.note else text)


def run_scalecheck(family: Family, overrides: Mapping[str, object] | None = None) -> ToolRun:
    """Fit all cases of `family` in one `fit_kernels` call; `overrides` are FitOptions fields for every family."""
    options = FitOptions(**{**family.fit_options, **(overrides or {})})  # type: ignore[arg-type]
    series = [_series(case) for case in family.cases]
    start = time.perf_counter()
    try:
        models = fit_kernels(series, options)
    except Exception as exc:  # a crash of one family is reported in its row, the others still run
        seconds = time.perf_counter() - start
        note = f"{type(exc).__name__}: {exc}"
        return ToolRun(tuple(Answer((), note) for _ in family.cases), seconds, note)
    seconds = time.perf_counter() - start
    return ToolRun(tuple(_answer(km) for km in models), seconds)


# --------------------------------------------------------------------------- Extra-P


def write_extrap_text(cases: Sequence[Case], path: Path) -> Path:
    """Cases measured at the same points as one Extra-P text file, a REGION each, values at full precision."""
    first = cases[0]
    lines = [f"PARAMETER {name}" for name in first.parameters]
    if len(first.parameters) == 1:
        lines.append("POINTS " + " ".join(repr(float(p)) for p in first.points[:, 0]))
    else:
        lines.append("POINTS " + " ".join("( " + " ".join(repr(float(v)) for v in p) + " )" for p in first.points))
    lines.append(f"METRIC {METRIC}")
    for case in cases:
        lines.append(f"REGION {case.region}")
        lines += ["DATA " + " ".join(repr(float(v)) for v in row if not np.isnan(v)) for row in case.values]
    path.write_text("\n".join(lines) + "\n")
    return path


_SEGMENT_RANGE = re.compile(r"\s+for\s+\S+\s*[<>]=?\s*\S+\s*$")  # "... for x<=6.0", Extra-P's segmented models


def parse_extrap_answer(formula: str, parameters: Sequence[str]) -> Answer:
    """Extra-P's printed model (one line, or one line per segment) as an Answer."""
    segments = []
    for line in formula.strip().splitlines():
        try:
            constant, terms = parse_formula(_SEGMENT_RANGE.sub("", line.strip()))
        except ValueError:
            return Answer((), formula)
        segments.append(Model(constant, tuple(
            Term(term.coefficient, tuple((parameters.index(name), _rational(power), _rational(log))
                                         for name, (power, log) in term.factors.items() if power or log))
            for term in terms)))
    return Answer(tuple(segments), formula.strip().replace("\n", " | "))


def run_extrap_family(exe: Path, family: Family, folder: Path) -> ToolRun:
    """Model `family` with Extra-P's CLI: one text file per point set of its cases."""
    groups: dict[bytes, list[int]] = {}
    for index, case in enumerate(family.cases):
        groups.setdefault(case.points.tobytes(), []).append(index)
    answers: list[Answer] = [Answer(())] * len(family.cases)
    seconds, errors = 0.0, []
    for number, members in enumerate(groups.values()):
        cases = [family.cases[i] for i in members]
        path = write_extrap_text(cases, folder / f"{cases[0].region}_{number}.txt")
        try:
            result = run_extrap(exe, path, "text", modeler=family.extrap_modeler, options=family.extrap_options,
                                measure=family.extrap_measure)
        except ExtrapError as exc:
            errors.append(str(exc).splitlines()[0])
            for i in members:
                answers[i] = Answer((), f"Extra-P failed: {errors[-1]}")
            continue
        seconds += result.seconds
        for i, case in zip(members, cases):
            model = result.models.get((case.region, METRIC))
            answers[i] = (parse_extrap_answer(model.formula, case.parameters) if model is not None
                          else Answer((), "no model printed"))
    return ToolRun(tuple(answers), seconds, "; ".join(errors))


# --------------------------------------------------------------------------- output


def _format_number(value: float) -> str:
    return "c" if np.isnan(value) else f"{value:.6g}"


def _format_factor(name: str, power: Fraction, log_power: Fraction) -> str:
    parts = []
    if power:
        parts.append(f"{name}^({power})")
    if log_power:
        parts.append(f"log2({name})^({log_power})")
    return " * ".join(parts)


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _error(value: float | None) -> str:
    return "-" if value is None else f"{value:.1e}"


def render(rows: Sequence[Row], extrap_note: str, examples: int) -> str:
    """The table, the totals and the examples of marked families."""
    width = max(len("family"), *(len(r.family.name) for r in rows))
    head = (f"{'family':<{width}} {'cases':>5} {'scalecheck':>10} {'Extra-P':>8} {'coef err sc':>11} "
            f"{'coef err EP':>11} {'sc s':>6} {'EP s':>6}  mark")
    lines = [head, "-" * len(head)]
    for row in rows:
        ep_seconds = "n/a" if row.extrap is None else f"{row.extrap.seconds:.1f}"
        lines.append(f"{row.family.name:<{width}} {len(row.family.cases):>5} {_percent(row.share(row.scalecheck)):>10} "
                     f"{_percent(row.share(row.extrap)):>8} {_error(row.coefficient_error(row.scalecheck)):>11} "
                     f"{_error(row.coefficient_error(row.extrap)):>11} {row.scalecheck.seconds:>6.2f} "
                     f"{ep_seconds:>6}  {', '.join(row.marks)}".rstrip())
    cases = sum(len(r.family.cases) for r in rows)
    ours = sum(r.hits(r.scalecheck) for r in rows) / cases
    extrap_runs = [r.extrap for r in rows if r.extrap is not None]
    theirs = sum(r.hits(run) for r, run in zip(rows, extrap_runs)) / cases if len(extrap_runs) == len(rows) else None
    lines.append(f"{'all cases':<{width}} {cases:>5} {_percent(ours):>10} {_percent(theirs):>8}")
    lines.append("")
    sc_seconds = sum(r.scalecheck.seconds for r in rows)
    ep_total = "n/a" if any(r.extrap is None for r in rows) else \
        f"{sum(r.extrap.seconds for r in rows if r.extrap):.1f} s (CLI runs, start-up included)"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    lines.append(f"wall time: scalecheck {sc_seconds:.2f} s (in-process fits), Extra-P {ep_total}")
    lines.append(f"peak memory of this process (scalecheck's fits; Extra-P runs in subprocesses): {peak:.0f} MiB")
    if extrap_note:
        lines.append(extrap_note)
    lines.append(f"mark: '< Extra-P' scalecheck has fewer exact cases than Extra-P; '< {GOOD_ENOUGH:.0%}' fewer "
                 f"than {GOOD_ENOUGH:.0%} exact")
    for row in rows:
        for run, tool in ((row.scalecheck, "scalecheck"), (row.extrap, "Extra-P")):
            if run is not None and run.error:
                lines.append(f"{row.family.name}: {tool} failed: {run.error}")
    for row in rows:
        if not row.marks or examples <= 0:
            continue
        missed = [k for k, (c, a) in enumerate(zip(row.family.cases, row.scalecheck.answers))
                  if not exact(c.truth, a)]
        lines += ["", f"{row.family.name}: {len(missed)} of {len(row.family.cases)} missed by scalecheck "
                      f"({row.family.source}), e.g."]
        for k in missed[:examples]:
            case = row.family.cases[k]
            truth = " | ".join(m.format(case.parameters) for m in case.truth)
            lines.append(f"  {case.region}  truth:      {truth}")
            lines.append(f"  {'':<{len(case.region)}}  scalecheck: {row.scalecheck.answers[k].text}")
            lines += [f"  {'':<{len(case.region)}}  {line}" for line in residuals(case, row.scalecheck.answers[k])]
            if row.extrap is not None:
                mark = "exact" if exact(case.truth, row.extrap.answers[k]) else "not exact"
                lines.append(f"  {'':<{len(case.region)}}  Extra-P:    {row.extrap.answers[k].text}  ({mark})")
    return "\n".join(lines)


def residuals(case: Case, answer: Answer) -> list[str]:
    """For a one-segment case: the truth's terms and the answer's, each refitted to the means of the repetitions
    (constant + terms, least squares), with their residual sums of squares weighted as scalecheck weighs a point
    (by its relative noise: residual / value) and unweighted (absolute residuals): which shape fits better
    depends on the weighting when the repetitions' noise is absolute rather than relative. Empty otherwise."""
    if len(case.truth) != 1 or len(answer.segments) != 1:
        return []
    y = np.nanmean(case.values, axis=1)
    spread = np.nanstd(case.values, axis=1, ddof=1) if case.values.shape[1] > 1 else np.full(y.shape, np.nan)
    out = []
    for name, model in (("truth", case.truth[0]), ("scalecheck", answer.segments[0])):
        columns = [np.ones_like(y)] + [Model(0.0, (dataclasses.replace(term, coefficient=1.0),)).evaluate(case.points)
                                       for term in model.terms]
        design = np.column_stack(columns)
        found = []
        for weight in (1 / np.abs(y), np.ones_like(y)):
            coefficients = np.linalg.lstsq(design * weight[:, None], y * weight, rcond=None)[0]
            found.append(float(np.sum((weight * (y - design @ coefficients)) ** 2)))
        out.append(f"{name}'s terms refitted: residual sum of squares {found[0]:.3g} relative, {found[1]:.3g} "
                   "absolute")
    if np.all(np.isfinite(spread)):
        out.append("repetitions' standard deviation per point: " + ", ".join(f"{v:.2g}" for v in spread)
                   + " (relative: " + ", ".join(f"{v:.2g}" for v in spread / np.abs(y)) + ")")
    return out


def parse_fit_option(text: str) -> tuple[str, object]:
    """KEY=VALUE for FitOptions: true/false, an int, a float, else the text; raises ValueError."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    names = [f.name for f in dataclasses.fields(FitOptions)]
    if not sep or key not in names:
        raise ValueError(f"expected KEY=VALUE with KEY one of {', '.join(names)}, got {text!r}")
    raw = raw.strip()
    value: object
    if raw.lower() in ("true", "false"):
        value = raw.lower() == "true"
    else:
        for convert in (int, float, str):
            try:
                value = convert(raw)
                break
            except ValueError:
                continue
    return key, value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--family", action="append", default=[], metavar="SUBSTRING",
                        help="run the families whose name contains SUBSTRING (repeatable; default: all)")
    parser.add_argument("--no-extrap", action="store_true", help="model with scalecheck only")
    parser.add_argument("--extrap", help="path of Extra-P's `extrap` command (default: found automatically)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the noise (default 0)")
    parser.add_argument("--noise", type=float, default=0.0,
                        help="relative standard deviation of Gaussian noise on planted values (default 0, as in "
                        "the tests)")
    parser.add_argument("--repetitions", type=int, default=1, help="values per point (default 1, as the tests)")
    parser.add_argument("--fit-option", action="append", default=[], metavar="KEY=VALUE",
                        help="a scalecheck FitOptions field for every family, e.g. max_terms=3 (repeatable)")
    parser.add_argument("--examples", type=int, default=3, help="missed cases shown per marked family (default 3)")
    args = parser.parse_args(argv)
    if args.noise < 0 or args.repetitions < 1:
        parser.error("--noise must be >= 0 and --repetitions >= 1")
    try:
        overrides = dict(parse_fit_option(text) for text in args.fit_option)
        FitOptions(**overrides)  # type: ignore[arg-type]
    except (ValueError, TypeError) as exc:
        parser.error(f"--fit-option: {exc}")
    every = build_families(Planting(args.seed, args.noise, args.repetitions))
    families = select(every, args.family)
    if not families:
        parser.error("no family matches --family; the families are:\n  " + "\n  ".join(f.name for f in every))

    exe = None if args.no_extrap else find_extrap(args.extrap)
    extrap_note = ""
    if exe is None:
        extrap_note = ("Extra-P: not run (--no-extrap)" if args.no_extrap else
                       "Extra-P: not found, see benchmarks/README.md (Extra-P reference); its columns are n/a")
    print(f"Extra-P 4.2.5 modeling tests, seed {args.seed}, noise {args.noise:g}, {args.repetitions} value(s) "
          f"per point{', FitOptions ' + str(overrides) if overrides else ''}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="extrap_suite_") as tmp:
        for family in families:
            ours = run_scalecheck(family, overrides)
            theirs = None if exe is None else run_extrap_family(exe, family, Path(tmp))
            rows.append(Row(family, ours, theirs))
    print(render(rows, extrap_note, args.examples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
