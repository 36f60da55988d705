"""Measure a function at several sizes within a time budget: the engine behind `scaling.measure`.

How the measurement stays stable on a noisy CI runner:

- The input is built by `setup` outside the timed region, afresh for every repetition; the garbage collector is off
  while timing.
- Sizes are a geometric grid. Within the budget, the sizes are probed from the smallest upwards (one repetition
  each, which also calibrates the number of calls per timing); the next size is taken only while its predicted
  cost, and that of the sizes before it, fits the budget. At least 5 sizes are measured (a model needs them), even
  over budget, up to OVER_BUDGET budgets (below).
- Calls faster than 5 ms are repeated in a loop and timed together, so the timer's resolution and the cost of
  reading it do not matter; the value is the time per call.
- The time the thread waited for a CPU while ready to run (another process's turn on a busy runner) is not the
  function's cost: where the system reports it (Linux, /proc/thread-self/schedstat), it is subtracted from each
  timing. Without it, a 5 ms timed loop on a runner with two busy neighbours often includes a whole time slice of
  theirs, and its median comes out several times too high at some sizes and not at others.
- Repetitions come in rounds, each visiting every size once in a shuffled order, so slow drift of the machine (a
  neighbour's job, clock scaling) spreads over all sizes instead of bending the trend. Rounds continue until the
  budget is spent (at least 5, at most 30). The per-size statistic is the median, robust to the occasional
  interruption.
- `extend` adds rounds when the caller found the evidence inconclusive. Every value keeps the number of its round
  (the probes are round 0; extension rounds continue the numbering), so the bootstrap can draw whole rounds.
- The budget is a budget: a measurement that has taken more than OVER_BUDGET times its budget stops at once (after
  the call under way; a call cannot be interrupted) and says so in `Measured.stopped`; warm-up, probes and the
  minimum of MIN_SIZES sizes x MIN_ROUNDS rounds do not outrank it.
- The machine's own reference (time only): the footprint of the input (bytes `tracemalloc` sees allocated by
  `setup`, else the peak of one call, at the two smallest points, extrapolated along their log-log slope) is copied
  into a fresh buffer and read at GATHER_COUNT random places, right after the function's timing at that point in
  the same round, so that load and the state of caches and heap hit both. `_machine.machine_factors` turns them
  into how much dearer per byte (per read) this machine is at each size than at the smallest. The reference is
  timed in the first REFERENCE_MIN rounds and then only while it has cost less than REFERENCE_SHARE of the time
  spent.

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

import numpy as np

MIN_SIZES = 5  # a model needs at least this many distinct sizes per parameter (segmentation wants more)
MIN_ROUNDS = 5
MAX_ROUNDS = 30
TIMING = 0.005  # seconds a timed loop lasts at least
GRID_STEP = 2.0  # ratio of neighbouring sizes of a geometric grid
MULTI_SIZES = 5  # sizes per parameter when several are measured (the grid is their product)
MAX_GRID = 100  # points of a geometric grid at most (the default has 8 to 16; each costs a probe)
OVER_BUDGET = 3.0  # a measurement stops when it has taken this many budgets (a slow call must not take minutes)
REFERENCE_MIN = 3  # rounds in which the reference is timed at every point, at least
REFERENCE_SHARE = 0.05  # after those, it is timed only while it has cost less than this share of the time spent
REFERENCE_TIMING = 0.0005  # seconds a reference timing lasts at least (short ones are looped)
GATHER_COUNT = 8192  # random reads of one reference gather


@dataclass(frozen=True)
class Sizes:
    """A geometric range of sizes, `scaling.sizes(low, high)`; the budget decides how far up it is measured."""

    low: int
    high: int
    count: int | None = None  # points of the grid (None: a ratio of about 2 between neighbours, at least 8)

    def __post_init__(self) -> None:
        for name in ("low", "high"):
            problem = size_problem(getattr(self, name))
            if problem:
                raise ValueError(f"sizes({shown(self.low)}, {shown(self.high)}): {name} {problem}")
        if not 1 <= self.low < self.high:
            raise ValueError(f"sizes({self.low!r}, {self.high!r}) needs 1 <= low < high")
        count = self.count
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or
                                  not MIN_SIZES <= count <= MAX_GRID):
            raise ValueError(f"sizes(..., count={shown(count)}) needs a whole number from {MIN_SIZES} (a model "
                             f"needs {MIN_SIZES} sizes) to {MAX_GRID}")
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
    rounds: dict[tuple[float, ...], list[int]] = field(default_factory=dict)  # the round of each value, parallel
    footprint: dict[tuple[float, ...], float] = field(default_factory=dict)  # bytes of the input (time only)
    copy_seconds: dict[tuple[float, ...], list[float]] = field(default_factory=dict)  # per reference copy
    gather_seconds: dict[tuple[float, ...], list[float]] = field(default_factory=dict)  # per reference gather
    reference_seconds: float = 0.0  # wall time the reference timings took
    stopped: str = ""  # what had been measured when the measurement stopped over its budget ("" when it did not)

    def add(self, point: tuple[float, ...], value: float, round_number: int) -> None:
        self.values.setdefault(point, []).append(value)
        self.rounds.setdefault(point, []).append(round_number)

    def round_count(self) -> int:
        return len({r for rounds in self.rounds.values() for r in rounds})

    def describe(self) -> str:
        """What has been measured, in words: "2 repetitions at 6 sizes up to n=64000"."""
        measured = sorted((p for p, v in self.values.items() if v), key=math.prod)
        if not measured:
            probed = len(self.loops)
            return (f"{probed} size{'s' if probed != 1 else ''} probed, no repetition kept" if probed else
                    "the first call, at the smallest size")
        top = ", ".join(f"{name}={number_text(x)}" for name, x in zip(self.parameters, measured[-1]))
        rounds = max(len(self.values[p]) for p in measured)
        return (f"{rounds} repetition{'s' if rounds != 1 else ''} at {len(measured)} "
                f"size{'s' if len(measured) != 1 else ''} up to {top}")


class _Stop(Exception):
    """The measurement has taken more than OVER_BUDGET times its budget."""


class Measurer:
    """Runs `func` at the points of a plan; `run(budget)` first, `extend(budget)` for more repetitions."""

    def __init__(self, func: Callable[..., Any], setup: Callable[..., Any] | None, axes: Mapping[str, Sizes | Sequence[int]],
                 metric: str, seed: int, clock: Callable[[], float] = time.perf_counter,
                 reference: bool = True, waited: Callable[[], float] | None = None) -> None:
        self.func, self.setup, self.metric = func, setup, metric
        # seconds waited for a CPU so far: the run-queue delay with the real clock, none with a test's fake clock
        self.waited = waited if waited is not None else (run_delay if clock is time.perf_counter else _no_wait)
        self.parameters = tuple(axes)
        self.axes = {name: (axis if isinstance(axis, Sizes) else _explicit(name, axis)) for name, axis in axes.items()}
        self.random = random.Random(seed)
        self.clock = clock
        unit = {"time": "s", "memory": "B"}.get(metric, "")
        self.result = Measured(self.parameters, metric, unit)
        self.points: list[tuple[int, ...]] = []
        self._cost: dict[tuple[int, ...], float] = {}  # seconds one repetition takes, setup included
        self._round_number = 0  # the probes are round 0
        self._deadline = math.inf
        self._started = 0.0
        self._reference = reference and metric == "time"
        self._footprint_model: tuple[float, float, float] | None = None  # (unit size, bytes there, log-log slope)
        self._source: np.ndarray | None = None  # bytes the reference copies and reads
        self._indices: dict[tuple[int, ...], np.ndarray] = {}
        self._reference_loops: dict[tuple[int, ...], int] = {}
        self._seed = seed

    # --- the plan --------------------------------------------------------------------------------------------

    def run(self, budget: float) -> Measured:
        """Choose the points within `budget` seconds and measure them in rounds; stop over OVER_BUDGET budgets."""
        start = self._start(budget)
        try:
            self._warm_up(budget)
            self.points = self._choose_points(budget)
            while self._rounds() < MAX_ROUNDS and not self._exact():
                if self._rounds() >= MIN_ROUNDS and self.clock() - start + self._round_cost() > budget:
                    break
                self._round()
        except _Stop:
            self.result.stopped = self.result.describe()
        self.result.seconds += self.clock() - start
        return self.result

    def extend(self, budget: float) -> Measured:
        """More rounds over the same points, for about `budget` seconds (at least one round, stopped over
        OVER_BUDGET budgets)."""
        start = self._start(budget)
        done = 0
        try:
            while not self._exact() and (done == 0 or self.clock() - start + self._round_cost() <= budget):
                self._round()
                done += 1
        except _Stop:
            self.result.stopped = self.result.describe()
        self.result.seconds += self.clock() - start
        return self.result

    def _start(self, budget: float) -> float:
        start = self.clock()
        self._started = start
        self._deadline = start + OVER_BUDGET * budget
        return start

    def _check(self) -> None:
        if self.clock() > self._deadline:
            raise _Stop

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
                if level >= MIN_SIZES and self._planned(product(level), probes) > budget * 0.6:
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

    def _warm_up(self, budget: float) -> None:
        """One untimed call at the first point (imports, caches, lazily built tables); for times, when that call
        was cheap (under REFERENCE_SHARE of the budget), one more under `tracemalloc`, which gives the footprint of
        the input there, and one at the second point."""
        first = tuple((axis.low if isinstance(axis, Sizes) else axis[0]) for axis in self.axes.values())
        began = self.clock()
        self._call_once(first)
        self._check()
        if not self._reference or self.clock() - began > REFERENCE_SHARE * budget:
            return  # a slow call: no second one for the footprint, so no reference (factor 1)
        began = self.clock()
        bytes_first = self._traced(first)
        cost = self.clock() - began
        self._check()
        if bytes_first <= 0:
            return  # no footprint: no reference (factor 1)
        second = tuple((axis.grid()[1] if isinstance(axis, Sizes) else axis[1]) for axis in self.axes.values())
        unit_first, unit_second = float(math.prod(first)), float(math.prod(second))
        slope = 1.0  # without a second footprint: proportional to the size
        if cost < REFERENCE_SHARE * budget and unit_second > unit_first:
            bytes_second = self._traced(second)
            self._check()
            if bytes_second > 0:
                slope = min(3.0, max(0.0, math.log(bytes_second / bytes_first) / math.log(unit_second / unit_first)))
        self._footprint_model = (unit_first, bytes_first, slope)

    def _traced(self, point: tuple[int, ...]) -> float:
        """Bytes `setup` allocates at `point` and keeps (the input); without them (no setup, or an input made of
        cached objects), the peak allocation of one call."""
        started = not tracemalloc.is_tracing()
        if started:
            tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            args, kwargs = self._argument(point)
            held = tracemalloc.get_traced_memory()[0] - base
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            self.func(*args, **kwargs)
            peak = tracemalloc.get_traced_memory()[1] - before
        finally:
            if started:
                tracemalloc.stop()
        return float(held if held > 0 else max(0, peak))

    def _footprint(self, point: tuple[int, ...]) -> float:
        """Bytes of the input at `point` (extrapolated from the smallest points); 0 without a footprint."""
        if self._footprint_model is None:
            return 0.0
        unit, size, slope = self._footprint_model
        return float(size * (math.prod(point) / unit) ** slope)

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
            self.result.add(point, value, self._round_number)
        self._cost[point] = cost + (loops - 1) * elapsed
        self._check()

    def _round(self) -> None:
        self._round_number += 1
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
            self.result.add(point, value, self._round_number)
            if self._wants_reference(point):
                self._time_reference(point)
            self._check()

    def _wants_reference(self, point: tuple[int, ...]) -> bool:
        if not self._reference or self._footprint(point) < 8:
            return False
        if len(self.result.copy_seconds.get(point, [])) < REFERENCE_MIN:
            return True
        spent = self.result.seconds + self.clock() - self._started
        return self.result.reference_seconds < REFERENCE_SHARE * spent

    def _time_reference(self, point: tuple[int, ...]) -> None:
        """Time the machine's reference at `point`, right after the function: a copy of the input's footprint into
        a fresh buffer (sequential, allocation and page faults included) and GATHER_COUNT random reads over it."""
        began = self.clock()
        size = int(self._footprint(point))
        if self._source is None or self._source.size < size:
            largest = max(int(self._footprint(p)) for p in self.points) if self.points else size
            self._source = np.ones(max(size, largest), dtype=np.uint8)  # written once: its pages are real
        source = self._source[:size]
        words = self._source[: max(8, size - size % 8)].view(np.int64)
        if point not in self._indices:
            rng = np.random.default_rng([self._seed, size])
            self._indices[point] = rng.integers(0, words.size, GATHER_COUNT)
        indices = self._indices[point]
        loops = self._reference_loops.get(point)
        if loops is None:
            once = _timed(lambda: source.copy(), 1, self.clock, self.waited)
            loops = max(1, min(10_000, math.ceil(REFERENCE_TIMING / max(once, 1e-8))))
            self._reference_loops[point] = loops
        copy = _timed(lambda: source.copy(), loops, self.clock, self.waited)
        gather = _timed(lambda: np.take(words, indices), max(1, loops // 4), self.clock, self.waited)
        self.result.copy_seconds.setdefault(point, []).append(copy)
        self.result.gather_seconds.setdefault(point, []).append(gather)
        self.result.footprint[point] = float(size)
        self.result.reference_seconds += self.clock() - began

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
        return _sample(self.func, args, kwargs, self.metric, loops, self.clock, self.waited)


def number_text(x: float) -> str:
    """A size as it is written: 4194304, not 4.19e+06."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _timed(call: Callable[[], Any], loops: int, clock: Callable[[], float], waited: Callable[[], float]) -> float:
    """Seconds per call of `loops` calls timed together, the garbage collector off, less the time the thread
    waited for a CPU meanwhile."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        queued = waited()
        began = clock()
        for _ in itertools.repeat(None, loops):
            call()
        elapsed = clock() - began
        queued = waited() - queued
    finally:
        if enabled:
            gc.enable()
    return _working(elapsed, queued) / loops


def measure_point(call: Callable[[], Any], metric: str, budget: float,
                  clock: Callable[[], float] = time.perf_counter, warm_up: bool = True) -> tuple[list[float], float]:
    """(repetitions of `call()` (a marker-form test body) within about `budget` seconds, seconds spent): at least
    MIN_ROUNDS, at most MAX_ROUNDS, looped like the sizes of `Measurer` when a call is short; stopped after
    OVER_BUDGET budgets whatever the count. Without `warm_up` (the group is over its budget already), or when the
    warm-up call alone took OVER_BUDGET budgets, the body runs once and that call is the one value.

    The repetitions carry no rounds: a case is measured in one go before the next case starts, so a burst of load
    hits all of one case's repetitions and none of another's; repetition k of two cases shares nothing a round
    would stand for."""
    waited = run_delay if clock is time.perf_counter else _no_wait
    start = clock()
    if not warm_up:
        value, _ = _sample(call, (), {}, metric, 1, clock, waited)
        return [value], clock() - start
    queued = waited()
    call()  # warm-up
    if clock() - start > OVER_BUDGET * budget:  # one slow call: for times, it is the value; nothing more runs
        return ([_working(clock() - start, waited() - queued)] if metric == "time" else []), clock() - start
    value, elapsed = _sample(call, (), {}, metric, 1, clock, waited)
    loops = max(1, math.ceil(TIMING / max(elapsed, 1e-7))) if metric == "time" and elapsed < TIMING else 1
    values = [value] if loops == 1 else []
    cost = max(elapsed, 1e-7) * loops
    while len(values) < MAX_ROUNDS:
        if values and clock() - start > OVER_BUDGET * budget:
            break
        if len(values) >= MIN_ROUNDS and clock() - start + cost > budget:
            break
        if metric != "time" and len(values) >= 2 and len(set(values)) == 1:
            break
        value, elapsed = _sample(call, (), {}, metric, loops, clock, waited)
        values.append(value)
    return values, clock() - start


def _sample(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], metric: str, loops: int,
            clock: Callable[[], float], waited: Callable[[], float] | None = None) -> tuple[float, float]:
    """(the metric's value, seconds the timed region took) of one repetition: `loops` calls timed together with
    the garbage collector off (time, less the time the thread `waited` for a CPU meanwhile), one call under
    tracemalloc (memory), or the number one call returns."""
    if metric == "memory":
        return _peak_memory(func, args, kwargs), 0.0
    if metric != "time":
        began = clock()
        returned = func(*args, **kwargs)
        return _number(returned, metric), clock() - began
    enabled = gc.isenabled()
    gc.disable()
    try:
        queued = waited() if waited is not None else 0.0
        began = clock()
        for _ in itertools.repeat(None, loops):
            func(*args, **kwargs)
        elapsed = clock() - began
        queued = (waited() - queued) if waited is not None else 0.0
    finally:
        if enabled:
            gc.enable()
    return _working(elapsed, queued) / loops, elapsed


def _working(elapsed: float, queued: float) -> float:
    """Seconds of `elapsed` the thread ran: less the time it waited for a CPU (never below 1% of `elapsed`)."""
    return max(elapsed - queued, 0.01 * elapsed)


def run_delay() -> float:
    """Seconds this thread has waited so far for a CPU while ready to run (Linux: /proc/thread-self/schedstat, the
    scheduler's run-queue delay); 0.0 where the system does not say."""
    try:
        with open("/proc/thread-self/schedstat", "rb") as stats:
            return int(stats.read().split()[1]) * 1e-9
    except (OSError, ValueError, IndexError):
        return 0.0


def _no_wait() -> float:
    return 0.0


def shown(value: object, limit: int = 60) -> str:
    """`value` as a message quotes it: its repr, cut after `limit` characters; an integer beyond the range of floats
    by its number of digits (Python refuses to write one of more than 4300 digits as text)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 1024:
        return f"<an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits>"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(shown(item, limit) for item in value[:limit])
        text = f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    else:
        try:
            text = repr(value)
        except ValueError:  # an object whose text Python refuses to make
            text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def size_problem(value: object) -> str:
    """What is wrong with `value` as a size ("" when it is a positive finite number); a whole number too large for
    a float (10**400) is refused here rather than overflowing later."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "is not a number"
    try:
        size = float(value)
    except OverflowError:
        return "is too large (sizes are floats, at most about 1.8e308)"
    if not math.isfinite(size) or not size > 0:
        return "is not a positive size"
    return ""


def _explicit(name: str, values: Sequence[int]) -> list[int]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise ValueError(f"{name}= must be scaling.sizes(low, high) or a list of sizes, not {shown(values)}")
    checked = []
    for value in values:
        if size_problem(value):
            raise ValueError(f"{name}={shown(list(values))}: every size must be a positive number, not "
                             f"{shown(value)}")
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
    """The value a measured function returned for a custom `metric`, as a finite float; a `MetricError` (which the
    callers prefix with the test's id) for anything else, an integer beyond the range of floats included."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."  # a returned list can be long
        raise MetricError(f"metric '{metric}' is the number the function returns, but it returned {shown}: "
                          f"return the count to model, or measure metric='time'")
    try:
        number = float(value)
    except OverflowError:  # an int beyond about 1.8e308
        number = math.inf
    if not math.isfinite(number):
        if isinstance(value, int):  # its digits, counted without converting it to text (which Python limits)
            digits = max(1, int(abs(value).bit_length() * math.log10(2)))
            digits += abs(value) >= 10**digits
            what = f"an integer of {digits} digits"
        else:
            what = repr(value)
        raise MetricError(f"metric '{metric}' is the number the function returns, but it returned {what}, which is "
                          "not a finite floating-point number (at most about 1.8e308): return the count to model "
                          "in a unit that keeps it finite, or measure metric='time'")
    return number


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
