"""Measurements: a `Series` per (kernel, metric) over parameter points, collected in a `Run`.

`RunBuilder` is how every reader assembles a `Run`: it checks each value once, with the location the reader
knows, so that all formats reject the same bad input with the same message.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from scalecheck.errors import InputError, Location

# Per-point statistics of repeated values, ignoring the NaN padding: name -> reducer(values, axis).
AGGREGATES: dict[str, Callable[..., Any]] = {"mean": np.nanmean, "median": np.nanmedian, "min": np.nanmin}
TIME_METRICS = frozenset({"time", "runtime", "wall_time", "walltime", "seconds", "duration", "elapsed"})
_CALLPATH_SPLIT = re.compile(r"\s*->\s*")


def name_hash(*names: str) -> int:
    """CRC-32 of `names` joined by NUL, in UTF-8: the per-kernel part of a seed, so that a kernel's resamples do not
    depend on the other kernels. A lone surrogate (JSON can carry one in a name) is encoded as its code point."""
    return zlib.crc32("\0".join(names).encode("utf-8", "surrogatepass"))


def is_time_metric(metric: str, unit: str = "") -> bool:
    """True for metrics that measure durations, which can never be negative."""
    return metric.lower() in TIME_METRICS or unit.lower() in {"s", "ms", "us", "µs", "ns", "sec", "seconds"}


@dataclass(frozen=True, eq=False)
class Series:
    """Repeated measurements of one (kernel, metric) over a set of parameter points.

    Sparse data is normal: a series holds only the points it was measured at, and each point may have its own
    number of repetitions (missing repetitions are NaN).
    """

    kernel: str
    metric: str
    parameters: tuple[str, ...]
    points: np.ndarray  # shape (n, m): n distinct points, m = len(parameters), sorted lexicographically
    values: np.ndarray  # shape (n, r): r = most repetitions at any point; NaN where a point has fewer
    unit: str = ""
    source: Location | None = None
    rounds: np.ndarray | None = None  # shape (n, r) like values: the round each repetition came from, NaN unknown
    note: str = ""  # what the tool that measured says about the series, e.g. its own complexity estimate

    def __post_init__(self) -> None:
        for name in ("points", "values", "rounds"):
            if getattr(self, name) is None:
                continue
            arr = np.array(getattr(self, name), dtype=float)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        n = self.points.shape[0]
        if self.points.ndim != 2 or self.points.shape[1] != len(self.parameters):
            raise ValueError(f"points must have shape (n, {len(self.parameters)}), got {self.points.shape}")
        if self.values.ndim != 2 or self.values.shape[0] != n:
            raise ValueError(f"values must have shape ({n}, r), got {self.values.shape}")
        if self.rounds is not None and self.rounds.shape != self.values.shape:
            raise ValueError(f"rounds must have the shape of values {self.values.shape}, got {self.rounds.shape}")

    @property
    def round_count(self) -> int:
        """How many distinct rounds the repetitions came from (0 when not recorded)."""
        if self.rounds is None:
            return 0
        return int(np.unique(self.rounds[~np.isnan(self.rounds)]).size)

    @property
    def callpath(self) -> tuple[str, ...]:
        """The kernel name split into call-path frames (`->` or `/` separated)."""
        parts = _CALLPATH_SPLIT.split(self.kernel) if "->" in self.kernel else self.kernel.split("/")
        return tuple(part for part in parts if part) or (self.kernel,)

    @property
    def repetitions(self) -> np.ndarray:
        """Number of values at each point, shape (n,)."""
        return np.asarray(np.sum(~np.isnan(self.values), axis=1))

    def aggregate(self, how: str = "mean") -> np.ndarray:
        """One value per point, shape (n,): the mean, median or minimum of its repetitions."""
        return np.asarray(AGGREGATES[how](self.values, axis=1), dtype=float)


@dataclass(frozen=True)
class Run:
    """Everything read from one or more measurement files: the parameters and one `Series` per (kernel, metric)."""

    parameters: tuple[str, ...]
    series: tuple[Series, ...]
    meta: Mapping[str, str] = field(default_factory=dict)

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.metric for s in self.series))


def number(raw: object, what: str, where: Location, fix: str) -> float:
    """`raw` as a finite float, or an `InputError` naming `what` and where it is."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise InputError(f"{what} must be a number, got {_show(raw)}", where=where, fix=fix)
    try:
        value = float(raw)
    except OverflowError:  # an integer beyond the floats: as infinite as 1e999
        value = math.inf
    except ValueError:
        raise InputError(f"{what} must be a number, got {_show(raw)}", where=where, fix=fix) from None
    if not math.isfinite(value):
        raise InputError(f"{what} must be a finite number, got {_show(raw)}", where=where, fix=fix)
    return value


def numbers(raws: Iterable[object], what: str, where: Location, fix: str) -> list[float]:
    """`number` of each of `raws`, the first bad one named. Texts of finite numbers are parsed in one numpy call
    (the common case: a DATA line, a CSV row); anything else takes `number`'s path, value by value."""
    raws = raws if isinstance(raws, list) else list(raws)
    if raws and all(type(raw) is str for raw in raws):
        try:
            parsed = np.array(raws, dtype=np.float64)
        except (ValueError, OverflowError):
            parsed = None
        if parsed is not None and bool(np.isfinite(parsed).all()):
            return [float(value) for value in parsed.tolist()]
    return [number(raw, what, where, fix) for raw in raws]


def _show(raw: object) -> str:
    if isinstance(raw, int) and not isinstance(raw, bool) and raw.bit_length() > 1024:
        return f"an integer of about {int(raw.bit_length() * math.log10(2)) + 1} digits"  # str() refuses 4,300+
    text = repr(raw[:41]) if isinstance(raw, str) else ("null" if raw is None else str(raw))
    return text if len(text) <= 40 else text[:37] + "..."


class RunBuilder:
    """Collects values per (kernel, metric, point) in the order readers meet them, then freezes a `Run`.

    Repeated (kernel, metric, point) entries append repetitions, as Extra-P's JSON Lines format does.
    """

    def __init__(self, parameters: Sequence[str], path: Path) -> None:
        self.parameters = tuple(parameters)
        self.path = path
        self.meta: dict[str, str] = {}
        self._cells: dict[tuple[str, str], dict[tuple[float, ...], list[float]]] = {}
        self._rounds: dict[tuple[str, str], dict[tuple[float, ...], list[float]]] = {}  # NaN where not given
        self._units: dict[tuple[str, str], str] = {}
        self.notes: dict[tuple[str, str], str] = {}  # (kernel, metric) -> `Series.note`

    def add(
        self,
        kernel: str,
        metric: str,
        point: Sequence[float],
        values: Iterable[object],
        where: Location,
        unit: str = "",
        rounds: Sequence[object] | None = None,
    ) -> None:
        """Append repetitions `values` of (kernel, metric) at `point`; each value is checked here. `rounds`, when
        given, names the round each value came from (whole numbers >= 0, one per value)."""
        if not kernel:
            raise InputError("the kernel name is empty", where=where, fix="give every measurement a kernel name")
        if len(point) != len(self.parameters):
            raise InputError(
                f"the point has {len(point)} value(s) but the file declares {len(self.parameters)} parameter(s) "
                f"({', '.join(self.parameters)})",
                where=where,
                fix="give one value per declared parameter",
            )
        metric = metric or "time"
        fix = "correct or delete this measurement"
        checked = numbers(values, "the measured value", where, fix)
        if not checked:
            raise InputError("the measurement has no values", where=where, fix="give at least one measured value")
        if is_time_metric(metric, unit) and min(checked) < 0:
            raise InputError(
                f"metric '{metric}' is a time but has a negative value {min(checked):g}",
                where=where,
                fix="times cannot be negative: correct the value or the timer that produced it",
            )
        key = (kernel, metric)
        where_point = tuple(float(x) for x in point)
        self._cells.setdefault(key, {}).setdefault(where_point, []).extend(checked)
        self._rounds.setdefault(key, {}).setdefault(where_point, []).extend(_checked_rounds(rounds, len(checked), where))
        if unit:
            self._units.setdefault(key, unit)

    def build(self) -> Run:
        """Freeze what was added into a `Run`; an empty file is an error."""
        if not self._cells:
            raise InputError("the file holds no measurements", where=Location(self.path),
                             fix="check that the benchmark wrote its results to this file")
        series = []
        for (kernel, metric), cells in self._cells.items():
            order = sorted(cells)
            width = max(len(cells[p]) for p in order)
            values = np.full((len(order), width), np.nan)
            rounds = np.full((len(order), width), np.nan)
            for row, point in enumerate(order):
                values[row, : len(cells[point])] = cells[point]
                rounds[row, : len(cells[point])] = self._rounds[(kernel, metric)][point]
            points = np.array(order, dtype=float).reshape(len(order), len(self.parameters))
            series.append(Series(kernel, metric, self.parameters, points, values, self._units.get((kernel, metric), ""),
                                 Location(self.path, record=f"kernel '{kernel}', metric '{metric}'"),
                                 rounds if np.any(~np.isnan(rounds)) else None, self.notes.get((kernel, metric), "")))
        return Run(self.parameters, tuple(series), dict(self.meta))


def merge_runs(runs: Sequence[Run]) -> Run:
    """Combine runs read from several files; the same (kernel, metric) in two files gains their points and values."""
    if len(runs) == 1:
        return runs[0]
    parameters = runs[0].parameters
    first = _path(runs[0])
    for run in runs[1:]:
        if run.parameters != parameters:
            where = _path(run)
            raise InputError(
                f"parameters ({', '.join(run.parameters)}) differ from the first file's ({', '.join(parameters)})"
                + (f" in {first}" if first else ""),
                where=Location(where) if where else None,
                fix="model files with different parameters separately",
            )
    builder = RunBuilder(parameters, Path("<merged>"))
    sources: dict[tuple[str, str], Location | None] = {}
    for run in runs:
        builder.meta.update(run.meta)
        for s in run.series:
            sources.setdefault((s.kernel, s.metric), s.source)
            if s.note:
                builder.notes.setdefault((s.kernel, s.metric), s.note)
            for index, (point, row) in enumerate(zip(s.points, s.values)):
                kept = ~np.isnan(row)
                rounds = None if s.rounds is None else [None if np.isnan(r) else int(r) for r in s.rounds[index][kept]]
                builder.add(s.kernel, s.metric, tuple(point), row[kept].tolist(),
                            s.source or Location(Path("<merged>")), s.unit, rounds)
    merged = builder.build()
    return Run(parameters, tuple(_with_source(s, sources[(s.kernel, s.metric)]) for s in merged.series), merged.meta)


def _path(run: Run) -> Path | None:
    """The file `run` was read from, as its first series names it."""
    return run.series[0].source.path if run.series and run.series[0].source else None


def _with_source(series: Series, source: Location | None) -> Series:
    return Series(series.kernel, series.metric, series.parameters, series.points, series.values, series.unit, source,
                  series.rounds, series.note)


def single_valued(runs: Sequence[Run]) -> dict[str, float]:
    """The parameters that keep one value in every point of every run in `runs` (which share their parameters),
    with that value; empty when every parameter would go, since then nothing varies and the models say so."""
    runs = [run for run in runs if run.series]
    if not runs or any(run.parameters != runs[0].parameters for run in runs):
        return {}
    points = np.vstack([s.points for run in runs for s in run.series])
    found = {name: float(points[0, k]) for k, name in enumerate(runs[0].parameters)
             if np.all(points[:, k] == points[0, k])}
    return {} if len(found) == len(runs[0].parameters) else found


def without_parameters(run: Run, names: Iterable[str]) -> Run:
    """`run` without the parameters `names`, each of which holds one value throughout (`single_valued`)."""
    names = set(names)
    if not names & set(run.parameters):
        return run
    keep = [k for k, name in enumerate(run.parameters) if name not in names]
    parameters = tuple(run.parameters[k] for k in keep)
    series = tuple(Series(s.kernel, s.metric, parameters, s.points[:, keep], s.values, s.unit, s.source, s.rounds,
                          s.note) for s in run.series)
    return Run(parameters, series, run.meta)


def dropped_note(dropped: Mapping[str, float]) -> str:
    """What leaving out the single-valued parameters `dropped` means, for the reports."""
    shown = ", ".join(f"{name} = {value:g}" for name, value in dropped.items())
    one = len(dropped) == 1
    return (f"{'parameter' if one else 'parameters'} {shown} {'has' if one else 'have'} a single value in every "
            f"measurement, so the models leave {'it' if one else 'them'} out")


def with_round(run: Run, number: int) -> Run:
    """`run` with every repetition marked as coming from round `number` (a whole run measured in one go)."""
    series = tuple(Series(s.kernel, s.metric, s.parameters, s.points, s.values, s.unit, s.source,
                          np.where(np.isnan(s.values), np.nan, float(number)), s.note) for s in run.series)
    return Run(run.parameters, series, run.meta)


def _checked_rounds(rounds: Sequence[object] | None, count: int, where: Location) -> list[float]:
    """The rounds of `count` values as floats (NaN: not given); a wrong list is an `InputError`."""
    if rounds is None:
        return [math.nan] * count
    fix = "give one round per value, as whole numbers from 0, e.g. \"rounds\": [1, 1, 2]"
    if len(rounds) != count:
        raise InputError(f"the measurement has {count} value(s) but {len(rounds)} round(s)", where=where, fix=fix)
    out = []
    for item in rounds:
        if item is None:
            out.append(math.nan)
            continue
        if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item < 2**53:
            raise InputError(f"a round must be a whole number from 0, got {_show(item)}", where=where, fix=fix)
        out.append(float(item))
    return out
