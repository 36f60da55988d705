"""The `scaling` fixture's objects: measure a function, then assert how it may grow.

Imported only when a test uses the plugin (it loads numpy and scipy through the modeling core).
"""

from __future__ import annotations

import math
import warnings
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NoReturn, TypeVar

import numpy as np
import pytest

from scalecheck.core.bound import BoundCheck, BoundOptions, check_bound
from scalecheck.core.search import FitOptions
from scalecheck.data.growth import parse_growth
from scalecheck.data.measurement import Series
from scalecheck.data.spec import format_growth
from scalecheck.pytest_plugin._machine import MachineFactors, machine_factors
from scalecheck.pytest_plugin._measure import MIN_SIZES, OVER_BUDGET, Measured, Measurer, Sizes, shown
from scalecheck.text import visible

TIME_RULE = {"tolerance": 1 / 8, "floor": 2.0}  # times: a failure needs an excess of 2x and (b / a)^(1/8)
T = TypeVar("T")
EXTENSIONS = 2  # inconclusive evidence: measure up to this many budgets more before deciding
JUDGED_ROUNDS = 3  # repetitions per size a measurement stopped over its budget needs to be judged
EXTEND_WITHIN = 1.5  # a measurement that took more than this many budgets is not extended
HOPELESS = 1.5  # nor one whose rise is this many times short of a failure's (more of the same sizes won't move it)


def _usage(message: str) -> NoReturn:
    """A misused fixture fails its test with one line, no traceback."""
    pytest.fail(visible(message), pytrace=False)  # it may quote the test's arguments


def _or_usage(make: Callable[[], T], prefix: str) -> T:
    """`make()`, or the test failed with `prefix` and the ValueError's message (raised outside the handler, so no
    chained traceback is shown)."""
    try:
        return make()
    except ValueError as err:
        problem = str(err)
    _usage(f"{prefix}{problem}")


class ScalingOverBudgetWarning(pytest.PytestWarning):
    """Measuring took more than OVER_BUDGET times its budget and stopped; what it measured was judged."""


class ScalingInconclusiveWarning(pytest.PytestWarning):
    """The measurements could not tell whether the bound holds; the test passed (see --scalecheck-strict)."""


@dataclass(frozen=True)
class Settings:
    """The session's settings: command line over pytest ini over [tool.scalecheck] over defaults."""

    budget: float = 2.0  # seconds per measurement
    confidence: float = 0.95
    resamples: int = 200
    seed: int = 0
    strict: bool = False  # an inconclusive assertion fails instead of passing with a warning
    fit: FitOptions = FitOptions()


class Recorder:
    """Every measurement of the session, by kernel name, for --scalecheck-save."""

    def __init__(self) -> None:
        self.measured: dict[str, Measured] = {}

    def add(self, kernel: str, measured: Measured) -> None:
        self.measured[kernel] = measured

    def records(self) -> list[dict[str, Any]]:
        """JSON-ready measurement objects (the native format's), one per kernel and point."""
        out = []
        for kernel, m in self.measured.items():
            for point, values in m.values.items():
                if values:
                    record = {"kernel": kernel, "metric": m.metric, "unit": m.unit,
                              "point": dict(zip(m.parameters, point)), "values": list(values)}
                    rounds = m.rounds.get(point, [])
                    if len(rounds) == len(values):
                        record["rounds"] = list(rounds)
                    out.append(record)
        return out


class Scaling:
    """The `scaling` fixture: `measure` a function over sizes, then `assert_no_worse_than` a growth bound."""

    def __init__(self, nodeid: str, settings: Settings, recorder: Recorder) -> None:
        self._nodeid, self._settings, self._recorder = nodeid, settings, recorder
        self._count = 0

    @staticmethod
    def sizes(low: int, high: int, count: int | None = None) -> Sizes:
        """A geometric range of sizes from `low` to `high`; the time budget decides how far up it is measured."""
        return _or_usage(lambda: Sizes(low, high, count), "scalecheck: ")

    def measure(self, func: Callable[..., Any], *, setup: Callable[..., Any] | None = None, metric: str = "time",
                budget: float | None = None, name: str | None = None,
                **parameters: Sizes | Sequence[int]) -> ScalingResult:
        """Measure `func` at every size of each parameter (keyword arguments: `n=scaling.sizes(1_000, 10**6)` or
        `n=[1000, 2000, ...]`).

        `setup(**sizes)` builds the input outside the timed region, afresh for each repetition, and `func` gets it
        as its one argument; without `setup`, `func(**sizes)` is called. `metric` is "time" (seconds per call),
        "memory" (peak bytes allocated during a call) or any other name for the number `func` returns.
        `budget` overrides the session's seconds per measurement; `name` tells several measurements of one test
        apart in the saved file.
        """
        if not parameters:
            _usage("scalecheck: measure() needs at least one parameter, e.g. "
                                    "n=scaling.sizes(1_000, 1_000_000)")
        if not callable(func) or (setup is not None and not callable(setup)):
            _usage("scalecheck: measure(func, setup=...) needs functions")
        if not isinstance(metric, str) or not metric:
            _usage(f"scalecheck: metric must be a name such as 'time', not {metric!r}")
        seconds = self._settings.budget if budget is None else budget
        if not (isinstance(seconds, (int, float)) and seconds > 0 and math.isfinite(seconds)):
            _usage(f"scalecheck: budget must be a positive number of seconds, not {budget!r}")
        self._count += 1
        kernel = self._nodeid if name is None else f"{self._nodeid}::{name}"
        if name is None and self._count > 1:
            kernel = f"{self._nodeid}#{self._count}"
        seed = zlib.crc32(f"{self._settings.seed}\0{kernel}".encode("utf-8", "surrogatepass"))
        measurer = _or_usage(lambda: Measurer(func, setup, parameters, metric, seed), "scalecheck: ")
        measured = _or_usage(lambda: measurer.run(float(seconds)), f"scalecheck: {self._nodeid}: ")  # MetricError
        self._recorder.add(kernel, measured)
        return ScalingResult(kernel, measurer, measured, self._settings, float(seconds))


class ScalingResult:
    """What `measure` collected, and the assertions on it."""

    def __init__(self, kernel: str, measurer: Measurer | None, measured: Measured, settings: Settings,
                 budget: float) -> None:
        self.kernel, self.measured = kernel, measured
        self._measurer, self._settings, self._budget = measurer, settings, budget
        self.check: BoundCheck | None = None

    @property
    def series(self) -> Series:
        m = self.measured
        points = sorted(p for p, v in m.values.items() if v)
        width = max(len(m.values[p]) for p in points)
        values = np.full((len(points), width), np.nan)
        rounds = np.full((len(points), width), np.nan)
        for row, point in enumerate(points):
            values[row, : len(m.values[point])] = m.values[point]
            if len(m.rounds.get(point, [])) == len(m.values[point]):
                rounds[row, : len(m.values[point])] = m.rounds[point]
        known = bool(np.all(np.isnan(rounds) == np.isnan(values)))  # every value's round, or none are used
        return Series(self.kernel, m.metric, m.parameters, np.array(points, dtype=float), values, m.unit,
                      rounds=rounds if known and m.rounds else None)

    @property
    def machine(self) -> MachineFactors | None:
        """This machine's factors at the measured points (time only; None without a reference)."""
        return machine_factors(self.measured) if self.measured.metric == "time" else None

    def _check(self, growth: Mapping[str, Any], fit: FitOptions, options: BoundOptions) -> BoundCheck:
        series = self.series
        machine = self.machine
        factors = None
        if machine is not None:
            factors = np.array([machine.factors.get(tuple(p), 1.0) for p in series.points.tolist()])
        return check_bound(series, growth, fit, options, machine=factors)

    def _over_budget(self, bound: str, judged: bool) -> str:
        """What a measurement that stopped over its budget measured, and what to do, in one line."""
        m = self.measured
        over = (f"more than {OVER_BUDGET:g}x the budget of {self._budget:g} s" if m.seconds > OVER_BUDGET * self._budget
                else f"with a budget of {self._budget:g} s")
        what = "judged on what was measured" if judged else "not judged"
        return (f"scalecheck: {self.kernel}: bound {bound} {what}: measuring took {m.seconds:.1f} s, {over}, and "
                f"stopped after {m.stopped}; raise the budget (--scalecheck-budget SECONDS, or budget=SECONDS) or "
                f"lower the sizes")

    def _not_judged(self, bound: str) -> None:
        """The measurement stopped over its budget with too little to judge: pass with a warning, or fail under
        --scalecheck-strict."""
        text = self._over_budget(bound, judged=False)
        if self._settings.strict:
            pytest.fail(text, pytrace=False)
        warnings.warn(ScalingInconclusiveWarning(text), stacklevel=3)

    def _judgeable(self) -> bool:
        """Enough was measured before the stop for a model and the check of both halves of the rounds: at least
        MIN_SIZES sizes of each parameter with JUDGED_ROUNDS repetitions each."""
        kept = [p for p, v in self.measured.values.items() if len(v) >= JUDGED_ROUNDS]
        return all(len({p[k] for p in kept}) >= MIN_SIZES for k in range(len(self.measured.parameters)))

    def assert_no_worse_than(self, bound: str) -> BoundCheck | None:
        """Fail the test unless the measured function grows no faster than `bound` ('n log n', 'O(n^2)', ...).

        Passes when the growth is within the bound with the session's confidence. When the evidence is
        inconclusive it measures more (up to two more budgets); still inconclusive, the test passes with a
        `ScalingInconclusiveWarning` (fails with --scalecheck-strict). Fails when the growth exceeds the bound
        significantly and by a margin that matters, twice in a row (the second time with more repetitions); the
        message shows the model, the bound and the points. Times are judged relative to this machine: a reference
        copy and random reads of the input's footprint, timed beside the function, say how much dearer per byte
        the machine is at each size. A measurement that stopped over its budget is not judged (None, with a
        `ScalingInconclusiveWarning`; a failure under --scalecheck-strict).
        """
        if not isinstance(bound, str):
            _usage(f"scalecheck: assert_no_worse_than(bound) needs a growth text such as 'n log n', not "
                   f"{shown(bound)}")
        growth = _or_usage(lambda: parse_growth(bound, self.measured.parameters),
                           f"scalecheck: invalid bound {bound!r}: ")
        settings = self._settings
        if self.measured.stopped:
            if not self._judgeable():
                self._not_judged(bound)
                return None
            # what was measured before the stop is judged (a failure needs both halves of the rounds, below);
            # the warning says the budget was exceeded whatever the outcome
            warnings.warn(ScalingOverBudgetWarning(self._over_budget(bound, judged=True)), stacklevel=2)
        options = BoundOptions(confidence=settings.confidence, resamples=settings.resamples,
                               seed=zlib.crc32(f"{settings.seed}\0{self.kernel}".encode("utf-8", "surrogatepass")),
                               **(TIME_RULE if self.measured.metric == "time" else {}))
        fit = settings.fit if self.measured.metric != "time" else replace(settings.fit, aggregate="median")
        check = self._check(growth, fit, options)
        confirmed = False
        for done in range(EXTENSIONS):
            if check.outcome == "within" or confirmed or self._measurer is None or self.measured.exact:
                break
            if self.measured.seconds > EXTEND_WITHIN * self._budget * (1 + done):
                # over its budget(s) already: judge what there is, and measure no more; a failure then needs the
                # confirmation of both halves of its rounds
                if check.outcome == "exceeds" and not check.halves:
                    check = replace(check, outcome="inconclusive", note="over its budget, the excess could not be "
                                    "confirmed on more rounds: raise the budget")
                break
            if check.outcome == "inconclusive" and check.above and check.rise * HOPELESS < check.needed:
                break  # its growth is above the bound by too little to fail: more rounds would not decide
            # inconclusive: more repetitions may decide; exceeds: confirmed on more repetitions before failing,
            # so that a burst of load on the machine while measuring does not fail a correct bound
            confirmed = check.outcome == "exceeds"
            self._measurer.extend(self._budget)
            if self.measured.stopped:
                warnings.warn(ScalingOverBudgetWarning(self._over_budget(bound, judged=True)), stacklevel=2)
            check = self._check(growth, fit, options)
        self.check = check
        if check.outcome == "within":
            return check
        text = failure_message(self.kernel, bound, check, self.series, settings.confidence, self.machine)
        if check.outcome == "inconclusive" and not settings.strict:
            warnings.warn(ScalingInconclusiveWarning(text), stacklevel=2)
            return check
        pytest.fail(text, pytrace=False)


def failure_message(kernel: str, bound: str, check: BoundCheck, series: Series, confidence: float,
                    machine: MachineFactors | None = None) -> str:
    """Several lines: what was found, the model, the evidence, and the measured points."""
    metric = f"{series.metric} ({series.unit})" if series.unit else series.metric
    if check.outcome == "unmodeled":
        head = f"scalecheck: {kernel}: no model of {metric}: {check.note}"
        return "\n".join([head, *_points_table(series)])
    assert check.fitted is not None and check.growth is not None
    growth = format_growth(dict(check.growth))
    if check.outcome == "exceeds":
        head = f"scalecheck: {kernel} grows as {growth}, faster than the bound {bound}"
    elif check.above:
        head = (f"scalecheck: {kernel} may grow faster than the bound {bound} (fitted: {growth}), but the evidence "
                f"is not conclusive")
    else:
        head = (f"scalecheck: {kernel} grows as {growth}, within the bound {bound}, but only "
                f"{check.within:.0%} of the bootstrap resamples agree (needed: {confidence:.0%})")
    reps = series.repetitions
    lines = [head, f"  model: {metric} = {check.fitted.formula()}   (median of {int(reps.min())}-{int(reps.max())} "
                   f"repetitions per size)" if series.metric == "time" else
             f"  model: {metric} = {check.fitted.formula()}"]
    if check.model.segmented:
        lines.append("  segments: the trend changes at " + ", ".join(cp.text() for cp in check.model.change_points)
                     + "; the last segment is judged")
    if check.above:
        lines.append(f"  evidence: no model within {bound} fits as well (p = {check.p_value:.2g}); "
                     f"{1 - check.within:.0%} of the bootstrap resamples grow faster; its cost per unit of "
                     f"{bound} rises {check.rise:.3g}x over the measured sizes (a failure needs {check.needed:.3g}x)")
    if machine is not None and check.machine > 1:
        top = tuple(series.points[int(np.argmax(np.prod(series.points, axis=1)))].tolist())
        lines.append(f"  machine: {machine.text(top, series.parameters)}")
    if check.note:
        lines.append(f"  note: {check.note}")
    lines += _points_table(series)
    return "\n".join(lines)


def _points_table(series: Series) -> list[str]:
    names = series.parameters
    center = series.aggregate("median" if series.metric == "time" else "mean")
    header = "  measured: " + "  ".join(f"{n:>10}" for n in names) + f"  {series.metric:>12}  reps"
    rows = [header]
    for point, value, reps in zip(series.points, center, series.repetitions):
        rows.append("            " + "  ".join(f"{x:>10g}" for x in point) + f"  {value:>12.4g}  {int(reps):>4}")
    return rows


def bound_growth(text: str, parameters: Sequence[str]) -> Mapping[str, Any]:
    """Parse a bound for the marker form (raises ValueError with the parser's message)."""
    return parse_growth(text, parameters)
