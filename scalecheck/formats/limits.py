"""The limits every reader keeps, so that reading one file ends within about two seconds and a few hundred MB, or is
refused with a message that names the limit and how to stay within it.

Measured on a CI-sized machine (2 cores), in CPU time: a reader spends about 8 µs per record (a CSV row, a JSON
measurement; 1 to 3 µs for a DATA line of Extra-P's text format, whose values are checked all at once with
`RunBuilder.add_many`), under 1 µs per value and 25 µs per (kernel, metric), and holds about 15 times a file's
bytes in memory while it decodes it. Real measurement files hold kilobytes to a few MB: Extra-P's largest sample
(three parameters, 27 points) is 105 kB. Each limit is far above that and below what takes seconds or gigabytes.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from scalecheck.data.measurement import Run, RunBuilder
from scalecheck.errors import InputError, Location

# about 10,000 kernels of six points and five repetitions in scalecheck's JSON; a second to read
MAX_FILE_BYTES = 8 * 2**20
# a Score-P profile or an Extra-P experiment: compressed or binary, so more bytes for the same measurements; the
# readers of archives keep the limits on what they hold as well
MAX_ARCHIVE_BYTES = 64 * 2**20
# Extra-P's models use two or three parameters; the multi-parameter search grows combinatorially with their number
MAX_PARAMETERS = 16
MAX_RECORDS = 200_000  # rows, JSON measurements or DATA lines: up to two seconds
MAX_VALUES = 2_000_000  # measured values in all, repetitions included
MAX_SERIES = 50_000  # distinct (kernel, metric) pairs
# Values as stored: each (kernel, metric) keeps a table of its points by the repetitions of its most repeated point,
# so one point measured a million times makes every other point of that kernel take a million cells. 4 million
# cells are 32 MB per table of values (and as much for the rounds).
MAX_CELLS = 4_000_000
MAX_PROCESSES = 50_000  # processes to cluster: CI measures at small scale, a few to a few thousand
SPLIT_FIX = ("split it into several files (for example one per benchmark) and name them all: scalecheck merges the "
             "files it is given")
PARAMETERS_FIX = "keep the parameters that the measurements vary (process count, problem size, ...)"
PROCESSES_FIX = "cluster a representative subset of the processes (for example the ranks of one node)"


def check_process_count(count: int, where: Location) -> None:
    """An `InputError` when a file lists `count` processes, more than `MAX_PROCESSES`."""
    if count > MAX_PROCESSES:
        raise InputError(f"{count:,} processes, more than the {MAX_PROCESSES:,} scalecheck clusters from one file",
                         where=where, fix=PROCESSES_FIX)


def too_large(source: Path, max_bytes: int = MAX_FILE_BYTES, split_fix: str = SPLIT_FIX) -> InputError:
    """The error for the file `source`, larger than `max_bytes`."""
    return InputError(f"the file is larger than {mib(max_bytes)}, the most scalecheck reads in one file",
                      where=Location(source), fix=split_fix)


def check_parameter_count(count: int, where: Location, fix: str = PARAMETERS_FIX) -> None:
    """An `InputError` when a file declares `count` parameters, more than `MAX_PARAMETERS`."""
    if count > MAX_PARAMETERS:
        raise InputError(f"{count:,} parameters, more than the {MAX_PARAMETERS} scalecheck can model", where=where,
                         fix=fix)


def check_merged_cells(runs: Sequence[Run], paths: Sequence[Path]) -> None:
    """An `InputError` when merging `runs`, read from `paths`, would make tables of more than `MAX_CELLS` cells: each
    file may keep the limit while one holds a kernel's many points and another many values at one of them."""
    if len(runs) < 2 or any(run.parameters != runs[0].parameters for run in runs):
        return  # merging refuses different parameters itself
    tables: dict[tuple[str, str], dict[tuple[float, ...], int]] = {}
    widest: dict[tuple[str, str], tuple[int, Path]] = {}  # the most values at one point of a file, and that file
    for run, path in zip(runs, paths):
        for series in run.series:
            key = (series.kernel, series.metric)
            table = tables.setdefault(key, {})
            counts = np.count_nonzero(~np.isnan(series.values), axis=1).tolist()
            for point, count in zip(map(tuple, series.points.tolist()), counts):
                table[point] = table.get(point, 0) + count
            if counts and max(counts) > widest.get(key, (0, path))[0]:
                widest[key] = (max(counts), path)
    sizes = {key: (len(table), max(table.values(), default=0)) for key, table in tables.items()}
    total = sum(points * width for points, width in sizes.values())
    if total > MAX_CELLS:
        key = max(sizes, key=lambda k: sizes[k][0] * sizes[k][1])
        points, width = sizes[key]
        raise InputError(
            f"merged with the other files, kernel '{key[0]}', metric '{key[1]}' has {points:,} points and {width:,} "
            f"values at one of them; stored as a table of points by repetitions, the files' values take {total:,} "
            f"cells, more than the {MAX_CELLS:,} scalecheck holds", where=Location(widest[key][1]),
            fix="measure every point about as often as the others, or model these files separately")


def mib(size: int) -> str:
    """`size` bytes in MiB, for a message: 8 MiB."""
    return f"{size / 2**20:g} MiB"


class LimitedRunBuilder(RunBuilder):
    """A `RunBuilder` that refuses a file past `MAX_RECORDS`, `MAX_VALUES`, `MAX_SERIES` or `MAX_CELLS`, as soon as
    the record that crosses the limit is added (the cells when the run is built)."""

    def __init__(self, parameters: Sequence[str], path: Path) -> None:
        super().__init__(parameters, path)
        self._records = 0
        self._values = 0

    def add(self, kernel: str, metric: str, point: Sequence[float], values: Iterable[object], where: Location,
            unit: str = "", rounds: Sequence[object] | None = None) -> None:
        """`RunBuilder.add`, counted against the limits first."""
        values = values if isinstance(values, list) else list(values)
        self._records += 1
        self._values += len(values)
        if self._records > MAX_RECORDS:
            raise InputError(f"more than {MAX_RECORDS:,} measurements (rows, records or DATA lines) in one file",
                             where=where, fix=SPLIT_FIX)
        if self._values > MAX_VALUES:
            raise InputError(f"more than {MAX_VALUES:,} measured values in one file", where=where, fix=SPLIT_FIX)
        if self._new_series_past_limit(kernel, metric):
            raise InputError(f"more than {MAX_SERIES:,} (kernel, metric) pairs in one file", where=where,
                             fix=SPLIT_FIX)
        super().add(kernel, metric, point, values, where, unit, rounds)

    def add_many(self, blocks: Sequence[tuple[str, str, int]], points: Sequence[Sequence[float]],
                 counts: Sequence[int], values: Sequence[object] | np.ndarray, where: Callable[[int], Location],
                 unit: str = "") -> None:
        """`RunBuilder.add_many`, counted against the limits first; measurements that would cross one are added one
        by one, so that the error names the measurement that crosses it (or a bad one before it)."""
        if (self._records + len(counts) > MAX_RECORDS or self._values + len(values) > MAX_VALUES
                or (len(self._cells) + len(blocks) > MAX_SERIES  # at most one pair more per block
                    and len(self._cells.keys() | {(kernel, metric or "time") for kernel, metric, size in blocks
                                                  if size}) > MAX_SERIES)):
            self._add_each(self.add, blocks, points, counts, values, where, unit)
            return
        super().add_many(blocks, points, counts, values, where, unit)
        self._records += len(counts)
        self._values += len(values)

    def _new_series_past_limit(self, kernel: str, metric: str) -> bool:
        """True when (kernel, metric) is not yet in the file and would be one pair more than `MAX_SERIES`."""
        return (kernel, metric or "time") not in self._cells and len(self._cells) >= MAX_SERIES  # RunBuilder's key

    def _check_tables(self, points: list[int], widths: list[int]) -> None:
        """An `InputError` when the values' tables would take more than `MAX_CELLS` cells."""
        total = sum(map(operator.mul, points, widths))
        if total > MAX_CELLS:
            # (cells, repetitions, key) of the largest table
            cells, width, (kernel, metric) = max(zip(map(operator.mul, points, widths), widths, self._cells))
            raise InputError(
                f"kernel '{kernel}', metric '{metric}' has {cells // width:,} points and {width:,} values at one of "
                f"them; stored as a table of points by repetitions, the file's values take {total:,} cells, more "
                f"than the {MAX_CELLS:,} scalecheck holds", where=Location(self.path),
                fix="measure every point about as often as the others (a few to a few hundred repetitions each)")
