"""Measure a function at several sizes within a time budget: the engine behind `scaling.measure`.

How the measurement stays stable on a noisy CI runner:

- The input is built by `setup` outside the timed region, afresh for every repetition; the garbage collector is off
  while timing.
- Sizes are a geometric grid. Within the budget, the sizes are probed from the smallest upwards (one repetition
  each, which also calibrates the number of calls per timing); the next size is taken only while its predicted
  cost, and that of the sizes before it, fits the budget. At least 5 sizes are measured (a model needs them), even
  over budget.
- Calls faster than 5 ms are repeated in a loop and timed together, so the timer's resolution and the cost of
  reading it do not matter; the value is the time per call.
- Repetitions come in rounds, each visiting every size once in a shuffled order, so slow drift of the machine (a
  neighbour's job, clock scaling) spreads over all sizes instead of bending the trend. Rounds continue until the
  budget is spent (at least 5, at most 30). The per-size statistic is the median, robust to the occasional
  interruption.
- `extend` adds rounds when the caller found the evidence inconclusive.

Metrics: "time" (seconds per call), "memory" (peak bytes allocated during one call, `tracemalloc`) and any other
name: the number the function returns (a count of operations, say); the last two are taken once per repetition,
and when every size gives the same value twice the series is taken as exact.
"""

from __future__ import annotations

import gc
import itertools
import math
import random
import time
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MIN_SIZES = 5  # a model needs at least this many distinct sizes per parameter (segmentation wants more)
MIN_ROUNDS = 5
MAX_ROUNDS = 30
TIMING = 0.005  # seconds a timed loop lasts at least
GRID_STEP = 2.0  # ratio of neighbouring sizes of a geometric grid
MULTI_SIZES = 5  # sizes per parameter when several are measured (the grid is their product)


@dataclass(frozen=True)
class Sizes:
    """A geometric range of sizes, `scaling.sizes(low, high)`; the budget decides how far up it is measured."""

    low: int
    high: int
    count: int | None = None  # points of the grid (None: a ratio of about 2 between neighbours, at least 8)

    def __post_init__(self) -> None:
        for name in ("low", "high"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"sizes({self.low!r}, {self.high!r}): {name} must be a number")
        if not 1 <= self.low < self.high:
            raise ValueError(f"sizes({self.low!r}, {self.high!r}) needs 1 <= low < high")
        if self.count is not None and self.count < MIN_SIZES:
            raise ValueError(f"sizes(..., count={self.count}) needs count >= {MIN_SIZES}: a model needs "
                             f"{MIN_SIZES} sizes")
        if len(self.grid()) < MIN_SIZES:
            raise ValueError(f"sizes({self.low!r}, {self.high!r}) holds only {len(self.grid())} whole numbers; "
                             f"a model needs {MIN_SIZES} sizes: widen the range")

    def grid(self) -> list[int]:
        """The whole sizes of the grid, ascending."""
        count = self.count or max(8, min(16, math.ceil(math.log(self.high / self.low, GRID_STEP)) + 1))
        ratio = (self.high / self.low) ** (1 / (count - 1))
        return sorted({int(round(self.low * ratio**k)) for k in range(count)})


@dataclass
class Measured:
    """What one `measure` call collected, per point (a tuple of sizes in parameter order)."""

    parameters: tuple[str, ...]
    metric: str
    unit: str
    values: dict[tuple[float, ...], list[float]] = field(default_factory=dict)
    loops: dict[tuple[float, ...], int] = field(default_factory=dict)
    seconds: float = 0.0  # wall time spent, setup included
    truncated: dict[str, int] = field(default_factory=dict)  # parameter -> largest size of its range not measured
    exact: bool = False  # every repetition of every point gave the same value


class Measurer:
    """Runs `func` at the points of a plan; `run(budget)` first, `extend(budget)` for more repetitions."""

    def __init__(self, func: Callable[..., Any], setup: Callable[..., Any] | None, axes: Mapping[str, Sizes | Sequence[int]],
                 metric: str, seed: int, clock: Callable[[], float] = time.perf_counter) -> None:
        self.func, self.setup, self.metric = func, setup, metric
        self.parameters = tuple(axes)
        self.axes = {name: (axis if isinstance(axis, Sizes) else _explicit(name, axis)) for name, axis in axes.items()}
        self.random = random.Random(seed)
        self.clock = clock
        unit = {"time": "s", "memory": "B"}.get(metric, "")
        self.result = Measured(self.parameters, metric, unit)
        self.points: list[tuple[int, ...]] = []
        self._cost: dict[tuple[int, ...], float] = {}  # seconds one repetition takes, setup included

    # --- the plan --------------------------------------------------------------------------------------------

    def run(self, budget: float) -> Measured:
        """Choose the points within `budget` seconds and measure them in rounds."""
        start = self.clock()
        self._warm_up()
        self.points = self._choose_points(budget)
        while self._rounds() < MAX_ROUNDS and not self._exact():
            if self._rounds() >= MIN_ROUNDS and self.clock() - start + self._round_cost() > budget:
                break
            self._round()
        self.result.seconds += self.clock() - start
        return self.result

    def extend(self, budget: float) -> Measured:
        """More rounds over the same points, for about `budget` seconds (at least one round)."""
        start = self.clock()
        done = 0
        while not self._exact() and (done == 0 or self.clock() - start + self._round_cost() <= budget):
            self._round()
            done += 1
        self.result.seconds += self.clock() - start
        return self.result

    def _choose_points(self, budget: float) -> list[tuple[int, ...]]:
        ranged = [name for name, axis in self.axes.items() if isinstance(axis, Sizes)]
        fixed = {name: axis for name, axis in self.axes.items() if not isinstance(axis, Sizes)}
        if not ranged:
            return list(itertools.product(*(fixed[name] for name in self.parameters)))
        grids = {name: self.axes[name].grid() for name in ranged}  # type: ignore[union-attr]
        levels = max(len(g) for g in grids.values())
        top = {name: fixed[name][-1] for name in fixed}

        def at(level: int) -> dict[str, list[int]]:
            """Each ranged parameter's grid up to `level` (a fraction of its own grid)."""
            return {name: g[: 1 + round(level * (len(g) - 1) / (levels - 1))] for name, g in grids.items()}

        def product(level: int) -> list[tuple[int, ...]]:
            axes = {**fixed, **at(level)}
            if len(ranged) > 1 or fixed:
                axes = {name: _thin(values, MULTI_SIZES) for name, values in axes.items()}
            return list(itertools.product(*(axes[name] for name in self.parameters)))

        level = 0
        probes: list[tuple[tuple[int, ...], float]] = []
        while level < levels:
            corner = {**top, **{name: g[-1] for name, g in at(level).items()}}
            point = tuple(corner[name] for name in self.parameters)
            if point not in self._cost:
                if level >= MIN_SIZES - 1 and self._planned(product(level), probes) > budget * 0.6:
                    break
                self._probe(point)
                probes.append((point, self._cost[point]))
            level += 1
        chosen = product(level - 1)
        for name in ranged:
            largest = max(p[self.parameters.index(name)] for p in chosen)
            if largest < grids[name][-1]:
                self.result.truncated[name] = grids[name][-1]
        return chosen

    def _planned(self, points: list[tuple[int, ...]], probes: list[tuple[tuple[int, ...], float]]) -> float:
        """Predicted seconds of MIN_ROUNDS rounds over `points`, from the costs of the probes (log-log trend)."""
        return MIN_ROUNDS * sum(self._predict(p, probes) for p in points)

    def _predict(self, point: tuple[int, ...], probes: list[tuple[tuple[int, ...], float]]) -> float:
        if point in self._cost:
            return self._cost[point]
        (p0, c0), (p1, c1) = (probes[-2] if len(probes) > 1 else probes[-1]), probes[-1]
        size = math.prod(point)
        s0, s1 = math.prod(p0), math.prod(p1)
        slope = math.log(c1 / c0) / math.log(s1 / s0) if s1 > s0 and c0 > 0 and c1 > 0 else 1.0
        slope = min(3.0, max(1.0, slope))  # at least linear: the setup alone builds the input
        return c1 * (size / s1) ** slope if size > s1 else c1

    # --- measuring -------------------------------------------------------------------------------------------

    def _warm_up(self) -> None:
        """One untimed call at the first point (imports, caches, lazily built tables)."""
        first = tuple((axis.low if isinstance(axis, Sizes) else axis[0]) for axis in self.axes.values())
        self._call_once(first)

    def _probe(self, point: tuple[int, ...]) -> None:
        """Time one call at `point`; calibrate its loop; keep the value when it was timed as it will be."""
        began = self.clock()
        value, elapsed = self._one(point, 1)
        cost = self.clock() - began
        loops = 1
        if self.metric == "time" and elapsed < TIMING:
            loops = max(1, math.ceil(TIMING / max(elapsed, 1e-7)))
        self.result.loops[point] = loops
        if loops == 1:
            self.result.values.setdefault(point, []).append(value)
        self._cost[point] = cost + (loops - 1) * elapsed

    def _round(self) -> None:
        order = list(self.points)
        self.random.shuffle(order)
        for point in order:
            if point not in self.result.loops:
                self._probe(point)
                if self.result.values.get(point):
                    continue
            began = self.clock()
            value, _ = self._one(point, self.result.loops[point])
            self._cost[point] = self.clock() - began
            self.result.values.setdefault(point, []).append(value)

    def _rounds(self) -> int:
        """Repetitions of the least measured point."""
        return min((len(self.result.values.get(p, [])) for p in self.points), default=0)

    def _round_cost(self) -> float:
        return sum(self._cost.get(p, 0.0) for p in self.points)

    def _exact(self) -> bool:
        """Memory and counts: every point measured twice with one value each (then more rounds add nothing)."""
        if self.metric == "time" or not self.points:
            return False
        values = [self.result.values.get(p, []) for p in self.points]
        self.result.exact = all(len(v) >= 2 and len(set(v)) == 1 for v in values)
        return self.result.exact

    def _argument(self, point: tuple[int, ...]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        sizes = dict(zip(self.parameters, point))
        if self.setup is None:
            return (), sizes
        return (self.setup(**sizes),), {}

    def _call_once(self, point: tuple[int, ...]) -> None:
        args, kwargs = self._argument(point)
        self.func(*args, **kwargs)

    def _one(self, point: tuple[int, ...], loops: int) -> tuple[float, float]:
        """(the metric's value, seconds the timed region took) of one repetition at `point`."""
        args, kwargs = self._argument(point)
        return _sample(self.func, args, kwargs, self.metric, loops, self.clock)


def measure_point(call: Callable[[], Any], metric: str, budget: float,
                  clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """Repetitions of `call()` (a marker-form test body) within about `budget` seconds: at least MIN_ROUNDS, at most
    MAX_ROUNDS, looped like the sizes of `Measurer` when a call is short."""
    start = clock()
    call()  # warm-up
    value, elapsed = _sample(call, (), {}, metric, 1, clock)
    loops = max(1, math.ceil(TIMING / max(elapsed, 1e-7))) if metric == "time" and elapsed < TIMING else 1
    values = [value] if loops == 1 else []
    cost = max(elapsed, 1e-7) * loops
    while len(values) < MAX_ROUNDS:
        if len(values) >= MIN_ROUNDS and clock() - start + cost > budget:
            break
        if metric != "time" and len(values) >= 2 and len(set(values)) == 1:
            break
        value, elapsed = _sample(call, (), {}, metric, loops, clock)
        values.append(value)
    return values


def _sample(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], metric: str, loops: int,
            clock: Callable[[], float]) -> tuple[float, float]:
    """(the metric's value, seconds the timed region took) of one repetition: `loops` calls timed together with
    the garbage collector off (time), one call under tracemalloc (memory), or the number one call returns."""
    if metric == "memory":
        return _peak_memory(func, args, kwargs), 0.0
    if metric != "time":
        began = clock()
        returned = func(*args, **kwargs)
        return _number(returned, metric), clock() - began
    enabled = gc.isenabled()
    gc.disable()
    try:
        began = clock()
        for _ in itertools.repeat(None, loops):
            func(*args, **kwargs)
        elapsed = clock() - began
    finally:
        if enabled:
            gc.enable()
    return elapsed / loops, elapsed


def _explicit(name: str, values: Sequence[int]) -> list[int]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise ValueError(f"{name}= must be scaling.sizes(low, high) or a list of sizes, not {values!r}")
    checked = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or not math.isfinite(value):
            raise ValueError(f"{name}={list(values)!r}: every size must be a positive number, not {value!r}")
        checked.append(value)
    distinct = sorted(set(checked))
    if len(distinct) < 3:
        raise ValueError(f"{name}={list(values)!r} has {len(distinct)} distinct size(s); a model needs at least 3 "
                         f"(better {MIN_SIZES})")
    return distinct


def _thin(values: list[int], count: int) -> list[int]:
    """At most `count` of `values`, spread evenly over their indices, first and last kept."""
    if len(values) <= count:
        return values
    return sorted({values[round(k * (len(values) - 1) / (count - 1))] for k in range(count)})


class MetricError(ValueError):
    """The measured function did not return the number its metric needs."""


def _number(value: object, metric: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise MetricError(f"metric '{metric}' is the number the function returns, but it returned {value!r}: "
                        f"return the count to model, or measure metric='time'")
    return float(value)


def _peak_memory(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> float:
    """Peak bytes allocated above the starting level during one call (tracemalloc)."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        func(*args, **kwargs)
        return float(max(0, tracemalloc.get_traced_memory()[1] - before))
    finally:
        if started:
            tracemalloc.stop()
