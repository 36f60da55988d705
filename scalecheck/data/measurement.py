"""Measurements: a `Series` per (kernel, metric) over parameter points, collected in a `Run`.

`RunBuilder` is how every reader assembles a `Run`: it checks each value once, with the location the reader
knows, so that all formats reject the same bad input with the same message.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import re
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

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


def distinct(values: Any) -> np.ndarray:
    """The sorted distinct values of `values` (flattened), as `np.unique(values)` gives them.

    Plain `np.unique` asks numpy.ma whether the values are masked, which loads it: about 9 ms of every start-up
    (numpy 2). Asked for the counts too, it does not.
    """
    return np.asarray(np.unique(values, return_counts=True)[0])


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
        return int(distinct(self.rounds[~np.isnan(self.rounds)]).size)

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
    parsed = finite_numbers(raws)
    if parsed is not None:
        return [float(value) for value in parsed.tolist()]
    return [number(raw, what, where, fix) for raw in raws]


def finite_numbers(raws: Sequence[object]) -> np.ndarray | None:
    """`raws` parsed in one numpy call, shape (len(raws),), when all are texts of finite numbers; else None (then
    `number` tells which is not). numpy parses each text on its own, so the values of many measurements parsed
    together are those each would have alone: a reader may parse many at once and pass the floats on."""
    if not raws or set(map(type, raws)) != {str}:
        return None
    try:
        parsed = np.array(raws, dtype=np.float64)
    except (ValueError, OverflowError):
        return None
    return parsed if bool(np.isfinite(parsed).all()) else None


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
        # the values at each point of each (kernel, metric), in the order added; empty for a kept block (below)
        self._cells: dict[tuple[str, str], dict[tuple[float, ...], list[float]]] = {}
        # the pairs whose measurements all came in one `add_many` block with as many values each, kept as that block
        # until `build`, or until more of the pair come: its points, and its values, shape (n, r)
        self._blocks: dict[tuple[str, str], tuple[Sequence[tuple[float, ...]], np.ndarray]] = {}
        # only for the (kernel, metric) pairs given rounds, parallel to their cells: NaN where not given
        self._rounds: dict[tuple[str, str], dict[tuple[float, ...], list[float]]] = {}
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
        checked_rounds = None if rounds is None else _checked_rounds(rounds, len(checked), where)
        cells = self._unblocked(key)
        if checked_rounds is not None or key in self._rounds:
            self._known_rounds(key, cells).setdefault(where_point, []).extend(
                checked_rounds if checked_rounds is not None else [math.nan] * len(checked))
        cells.setdefault(where_point, []).extend(checked)
        if unit:
            self._units.setdefault(key, unit)

    def add_many(
        self,
        blocks: Sequence[tuple[str, str, int]],
        points: Sequence[Sequence[float]],
        counts: Sequence[int],
        values: Sequence[object] | np.ndarray,
        where: Callable[[int], Location],
        unit: str = "",
    ) -> None:
        """Many measurements, each added as `add` would add it (without rounds): measurement i has the `counts[i]`
        values in `values` that follow those of measurement i - 1, at `points[i]`; `where(i)` is its location, and
        `blocks` say whose the measurements are: (kernel, metric, n) for the next n measurements. `values` may be
        texts, floats, or an array of floats, shape (sum(counts),).

        The checks and errors are `add`'s. All values are checked, and texts parsed, at once; only when one fails a
        check are the blocks added one by one, and the failing one measurement by measurement, so that the error
        names the first bad measurement."""
        if not len(points) == len(counts) == sum(size for _, _, size in blocks) or sum(counts) != len(values):
            raise ValueError(f"{sum(size for _, _, size in blocks)} measurements in the blocks, {len(points)} points, "
                             f"{len(counts)} counts and {len(values)} values for {sum(counts)}")
        if not counts:
            return
        rows = self._checked_rows(blocks, points, counts, values, unit)
        if rows is None:
            # RunBuilder's own methods: a subclass that counts measurements has counted these already
            if len(blocks) == 1:
                self._add_each(functools.partial(RunBuilder.add, self), blocks, points, counts, values, where, unit)
                return
            start = first = 0  # the block's first measurement and first value
            for kernel, metric, size in blocks:
                end = first + sum(counts[start:start + size])
                RunBuilder.add_many(self, [(kernel, metric, size)], points[start:start + size],
                                    counts[start:start + size], values[first:end], _shifted(where, start), unit)
                start, first = start + size, end
            return
        distinct = _distinct(points)
        if (all(type(point) is tuple for point in distinct)
                and set(map(type, itertools.chain.from_iterable(distinct))) <= {float}):
            keys = cast("Sequence[tuple[float, ...]]", points)  # already what `add` makes of a point
        else:
            keys = [tuple(float(x) for x in point) for point in points]
        start = 0
        for kernel, metric, size in blocks:
            if not size:
                continue
            key = (kernel, metric or "time")
            block_points, block_rows = keys[start:start + size], rows[start:start + size]
            start += size
            if unit:
                self._units.setdefault(key, unit)
            if key not in self._cells and isinstance(block_rows, np.ndarray):  # a new pair, the common case
                self._cells[key] = {}
                self._blocks[key] = (block_points, block_rows)
                continue
            self._add_rows(key, block_points,
                           block_rows.tolist() if isinstance(block_rows, np.ndarray) else block_rows)

    def _add_rows(self, key: tuple[str, str], points: Sequence[tuple[float, ...]], rows: list[list[float]]) -> None:
        """Append the values `rows[i]` at `points[i]` to the cells of `key`, each in turn."""
        cells = self._unblocked(key)
        known = self._rounds.get(key)
        for point, row in zip(points, rows):
            if known is not None:
                known.setdefault(point, []).extend([math.nan] * len(row))
            cell = cells.get(point)
            if cell is None:
                cells[point] = row
            else:
                cell.extend(row)

    def _unblocked(self, key: tuple[str, str]) -> dict[tuple[float, ...], list[float]]:
        """The cells of `key`, made from its kept block if it has one, so that more values can follow."""
        block = self._blocks.pop(key, None)
        if block is None:
            return self._cells.setdefault(key, {})
        self._cells[key] = {}
        self._add_rows(key, block[0], block[1].tolist())
        return self._cells[key]

    @staticmethod
    def _add_each(add: Callable[..., None], blocks: Sequence[tuple[str, str, int]], points: Sequence[Sequence[float]],
                  counts: Sequence[int], values: Sequence[object] | np.ndarray, where: Callable[[int], Location],
                  unit: str) -> None:
        """`add` of the measurements of `add_many`'s arguments one by one."""
        start = first = 0  # the block's first measurement, and the measurement's first value
        for kernel, metric, size in blocks:
            for index in range(start, start + size):
                add(kernel, metric, points[index], values[first:first + counts[index]], where(index), unit)
                first += counts[index]
            start += size

    def _checked_rows(self, blocks: Sequence[tuple[str, str, int]], points: Sequence[Sequence[float]],
                      counts: Sequence[int], values: Sequence[object] | np.ndarray,
                      unit: str) -> np.ndarray | list[list[float]] | None:
        """The values of each measurement of `add_many`'s arguments as `add` checks them, when every check of `add`
        passes for all; else None. As a table, shape (measurements, values each), when each has as many values.
        Texts are parsed and floats taken together; anything else is left to `add`."""
        if (0 in counts or not all(kernel for kernel, _, size in blocks if size)
                or not set(map(len, _distinct(points))) <= {len(self.parameters)}):
            return None
        parsed: np.ndarray | None
        if isinstance(values, np.ndarray) and values.dtype == np.float64 and values.ndim == 1:
            parsed = values if bool(np.isfinite(values).all()) else None
        else:
            flat = values if isinstance(values, list) else list(values)
            kinds = set(map(type, flat))
            if kinds == {str}:
                parsed = finite_numbers(flat)
            elif kinds == {float}:
                # a NaN or an infinity makes the sum one (so may an overflow, which only sends the values to `add`)
                parsed = np.array(flat, dtype=float) if math.isfinite(sum(cast("list[float]", flat))) else None
            else:
                return None
        if parsed is None:
            return None
        rows: np.ndarray | list[list[float]]
        if min(counts) == max(counts):
            rows = parsed.reshape(len(counts), counts[0])
            lowest = rows.min(axis=1).tolist() if parsed.min() < 0 else None
        else:
            checked = parsed.tolist()
            rows = [checked[end - count:end] for count, end in zip(counts, itertools.accumulate(counts))]
            lowest = list(map(min, rows)) if parsed.min() < 0 else None
        if lowest is not None:  # a negative value: an error if it is a time's
            start = 0
            for _, metric, size in blocks:
                if is_time_metric(metric or "time", unit) and min(lowest[start:start + size], default=0) < 0:
                    return None
                start += size
        return rows

    def _known_rounds(self, key: tuple[str, str],
                      cells: dict[tuple[float, ...], list[float]]) -> dict[tuple[float, ...], list[float]]:
        """The rounds of `key`, made on its first rounds: NaN for the values `cells` already holds."""
        known = self._rounds.get(key)
        if known is None:
            known = self._rounds[key] = {point: [math.nan] * len(row) for point, row in cells.items()}
        return known

    def build(self) -> Run:
        """Freeze what was added into a `Run`; an empty file is an error."""
        if not self._cells:
            raise InputError("the file holds no measurements", where=Location(self.path),
                             fix="check that the benchmark wrote its results to this file")
        orders, blocks = self._sorted()
        rows = [self._cells[key][point] for key, order, block in zip(self._cells, orders, blocks) if block is None
                for point in order]  # the values of the pairs kept in cells, point by point
        lengths = np.fromiter(map(len, rows), dtype=np.intp, count=len(rows))
        sizes = list(map(len, orders))
        in_cells = [size for size, block in zip(sizes, blocks) if block is None]
        firsts = list(itertools.accumulate(in_cells, initial=0))[:-1]  # each pair's first row in `rows`
        widest = iter(np.maximum.reduceat(lengths, firsts).tolist() if rows else [])
        widths = [next(widest) if block is None else block.shape[1] for block in blocks]
        self._check_tables(sizes, widths)
        # every point in one array: the series' points are slices of it
        all_points = np.fromiter(itertools.chain.from_iterable(itertools.chain.from_iterable(orders)), dtype=float,
                                 count=sum(sizes) * len(self.parameters)).reshape(sum(sizes), len(self.parameters))
        from_cells = self._cell_tables(orders, blocks, rows, lengths, widths)
        series = []
        row = 0  # the series' first row in all_points
        for (kernel, metric), size, block in zip(self._cells, sizes, blocks):
            values, rounds = (block, None) if block is not None else next(from_cells)
            series.append(Series(kernel, metric, self.parameters, all_points[row:row + size], values,
                                 self._units.get((kernel, metric), ""),
                                 Location(self.path, record=f"kernel '{kernel}', metric '{metric}'"), rounds,
                                 self.notes.get((kernel, metric), "")))
            row += size
        return Run(self.parameters, tuple(series), dict(self.meta))

    def _sorted(self) -> tuple[list[Sequence[tuple[float, ...]]], list[np.ndarray | None]]:
        """The points of each (kernel, metric), sorted, and the values of a kept block in that order (None for the
        pairs kept in cells). A kept block with a point measured twice goes to the cells, which append its values."""
        orders: list[Sequence[tuple[float, ...]]] = []
        blocks: list[np.ndarray | None] = []
        for key in self._cells:
            block = self._blocks.get(key)
            if block is not None:
                points, values = block
                if all(map(operator.lt, points, points[1:])):  # sorted already, as files usually list them
                    orders.append(points)
                    blocks.append(values)
                    continue
                order = sorted(range(len(points)), key=points.__getitem__)
                ordered = [points[i] for i in order]
                if all(map(operator.ne, ordered, ordered[1:])):
                    orders.append(ordered)
                    blocks.append(values[order])
                    continue
            orders.append(sorted(self._unblocked(key)))
            blocks.append(None)
        return orders, blocks

    def _cell_tables(self, orders: list[Sequence[tuple[float, ...]]], blocks: list[np.ndarray | None],
                     rows: list[list[float]], lengths: np.ndarray,
                     widths: list[int]) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
        """The tables of values and of rounds of the pairs kept in cells, in order: `rows` are their values at
        their sorted points `orders`, `lengths` how many there are of each, `widths` the most of each pair."""
        all_values = np.fromiter(itertools.chain.from_iterable(rows), dtype=float, count=int(lengths.sum()))
        first = start = 0  # the pair's first row in `rows`, and its first value
        for key, order, block, width in zip(self._cells, orders, blocks, widths):
            if block is not None:
                continue
            counts = lengths[first:first + len(order)]
            count = int(counts.sum())
            values = all_values[start:start + count]
            values = values.reshape(len(order), width) if count == len(order) * width else _padded(values, counts,
                                                                                                  width)
            known = self._rounds.get(key)
            rounds = None
            if known is not None:
                rounds = _padded(np.array([r for point in order for r in known[point]], dtype=float), counts, width)
            yield values, (rounds if rounds is not None and np.any(~np.isnan(rounds)) else None)
            first, start = first + len(order), start + count

    def _check_tables(self, points: list[int], widths: list[int]) -> None:
        """Called by `build` before it makes the tables of values: each (kernel, metric), in the order added, has
        `points[k]` points and at most `widths[k]` values at one of them. Nothing to check here; a subclass may
        refuse tables too large."""


def _distinct(points: Sequence[Sequence[float]]) -> Iterable[Sequence[float]]:
    """Each object in `points` once: a reader passes the same few point tuples for many measurements."""
    return dict(zip(map(id, points), points)).values()


def _shifted(where: Callable[[int], Location], start: int) -> Callable[[int], Location]:
    """`where` of the measurements from `start` on, counted from 0."""
    return lambda index: where(start + index)


def _padded(values: np.ndarray, counts: np.ndarray, width: int) -> np.ndarray:
    """`values`, `counts[i]` of them for row i, as a table padded with NaN: shape (len(counts), width)."""
    table = np.full((len(counts), width), np.nan)
    table[np.arange(width) < counts[:, None]] = values  # row by row, in order
    return table


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
