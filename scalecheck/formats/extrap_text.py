"""Extra-P's text format: PARAMETER, POINTS, METRIC, REGION and DATA lines (Extra-P's TextFileReader grammar)."""

from __future__ import annotations

import bisect
import difflib
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from scalecheck.data.measurement import Run, RunBuilder, finite_numbers, number
from scalecheck.errors import InputError, Location
from scalecheck.formats.detect import EXTRAP_KEYWORDS
from scalecheck.formats.limits import LimitedRunBuilder, check_parameter_count
from scalecheck.formats.source import read_text

KEYWORDS = EXTRAP_KEYWORDS
_GROUP = re.compile(r"\(([^()]*)\)")  # one parenthesised point of POINTS ( 32 5000 ) ( 64 5000 )
_CHUNK = 2**16  # values parsed at once while reading: about 4 MB of texts
_ORDER_FIX = ("give one DATA line per point, in POINTS order; a new REGION or METRIC line starts again at the "
              "first point")


def read_extrap_text(path: Path) -> Run:
    """`read_extrap_text_text` of the file `path`, read once."""
    path = Path(path)
    return read_extrap_text_text(read_text(path), path)


def read_extrap_text_text(text: str, source: Path) -> Run:
    """Read an Extra-P text file; several values on a DATA line are repetitions."""
    data = _Data()
    error = _scan(text, source, data)
    if not data.blocks:
        raise error or InputError("the file holds no DATA lines", where=Location(source),
                                  fix="check that this is an Extra-P text file with measurements (DATA lines)")
    builder = LimitedRunBuilder(data.parameters, source)
    _add_blocks(builder, data, source)  # first: a DATA line before the line of `error` may be wrong too
    if error is not None:
        raise error
    return builder.build()


@dataclass
class _Data:
    """What `_scan` collects from an Extra-P text file: its parameters, its points, and its DATA lines."""

    parameters: list[str] = field(default_factory=list)
    points: list[tuple[float, ...]] = field(default_factory=list)
    # the values of the DATA lines in the file's order, in chunks: parsed (floats), or the texts when one of them is
    # not a finite number, for the builder to name it. Texts wait in `values` until there are _CHUNK of them: they
    # take several times the memory of their floats. (No lists per line: the garbage collector would visit each.)
    chunks: list[np.ndarray | list[str]] = field(default_factory=list)
    values: list[str] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)  # how many values each DATA line has
    lines: list[int] = field(default_factory=list)  # the number of each DATA line
    # the DATA lines of one region and metric in a row: (region, metric, first DATA line, end, index of its point)
    blocks: list[tuple[str, str, int, int, int]] = field(default_factory=list)
    first: int = 0  # the first DATA line not in a block yet

    def end_block(self, region: str | None, metric: str, next_point: int) -> None:
        """Make the DATA lines since the last block a block of `region` and `metric`, measuring the points before
        `next_point`."""
        size = len(self.counts) - self.first
        if size:
            assert region is not None, "DATA lines are taken only after a REGION line"
            self.blocks.append((region, metric, self.first, len(self.counts), next_point - size))
            self.first = len(self.counts)

    def parse(self) -> None:
        """Move the texts waiting in `values` to `chunks`, as floats when all are finite numbers."""
        if self.values:
            parsed = finite_numbers(self.values)
            self.chunks.append(parsed if parsed is not None else self.values.copy())
            self.values.clear()

    def all_values(self) -> np.ndarray | list[object]:
        """Every value, in order: one array when all are finite numbers, else a list of floats and texts."""
        self.parse()
        if all(isinstance(chunk, np.ndarray) for chunk in self.chunks):
            return np.concatenate(self.chunks) if self.chunks else np.empty(0)
        return list(itertools.chain.from_iterable(chunk.tolist() if isinstance(chunk, np.ndarray) else chunk
                                                  for chunk in self.chunks))


def _scan(text: str, source: Path, data: _Data) -> InputError | None:
    """Collect the lines of `text` into `data`; the first error in the grammar ends the scan and is returned. The
    values of DATA lines are only collected here, to be added all at once (`_add_blocks`)."""
    parameters, points = data.parameters, data.points
    region: str | None = None
    metric = ""  # Extra-P leaves the metric unnamed without a METRIC line; RunBuilder then calls it "time"
    next_point = 0  # index of the point the next DATA line measures
    open_points = 0  # how many points DATA lines may measure: 0 before the first REGION, else len(points)
    values = data.values
    add_values, add_count, add_line = values.extend, data.counts.append, data.lines.append  # once, not per line
    try:
        # only \n ends a line, as in `split_lines`; split() drops the \r of a \r\n ending with the other whitespace
        for line_no, line in enumerate(text.split("\n"), start=1):
            words = line.split()  # once: a DATA line may hold a million values
            if not words:
                continue
            keyword = words[0]
            if keyword == "DATA" and next_point < open_points:
                del words[0]
                add_values(words)
                add_count(len(words))
                add_line(line_no)
                next_point += 1
                if len(values) >= _CHUNK:
                    data.parse()
                continue
            if keyword[0] == "#":
                continue  # only whole-line comments: a region name such as "Update #elements" keeps its '#'
            data.end_block(region, metric, next_point)  # any other line ends a block of DATA lines
            # Extra-P collapses runs of spaces and tabs, also inside region names; so do we, to name kernels alike
            rest = " ".join(words[1:])
            where = Location(source, line_no)
            if keyword == "PARAMETER":
                if points:
                    raise InputError("PARAMETER after POINTS", where=where,
                                     fix="declare all parameters with PARAMETER lines before the first POINTS line")
                parameters.extend(_parameter_names(rest, parameters, where))
            elif keyword == "POINTS":
                if not parameters:
                    raise InputError("POINTS before PARAMETER", where=where,
                                     fix="declare the parameters with PARAMETER lines before the POINTS lines")
                points.extend(_points(rest, parameters, where))
            elif keyword in ("METRIC", "REGION"):
                if not rest:
                    raise InputError(f"{keyword} without a name", where=where, fix=f"write {keyword} <name>")
                region, metric = (rest, metric) if keyword == "REGION" else (region, rest)
                next_point = 0
            elif keyword == "DATA":  # one that measures no point: the others were taken above
                raise _misplaced_data(points, region, where)
            else:
                raise _unknown_keyword(keyword, where)
            open_points = len(points) if region is not None else 0
    except InputError as err:
        return err
    data.end_block(region, metric, next_point)
    return None


def _add_blocks(builder: RunBuilder, data: _Data, source: Path) -> None:
    """Add all DATA lines of `data` to `builder` in one call, which checks all their values at once."""
    blocks = [(region, metric, end - first) for region, metric, first, end, _ in data.blocks]
    points = list(itertools.chain.from_iterable(data.points[point:point + end - first]
                                                for _, _, first, end, point in data.blocks))
    builder.add_many(blocks, points, data.counts, data.all_values(), _where(source, data))


def _where(source: Path, data: _Data) -> Callable[[int], Location]:
    """The location of the i-th DATA line of `data`, with its region (asked for on the way to an error)."""
    firsts = [first for _, _, first, _, _ in data.blocks]

    def where(index: int) -> Location:
        region = data.blocks[bisect.bisect_right(firsts, index) - 1][0]
        return Location(source, data.lines[index], f"region '{region}'")
    return where


def _misplaced_data(points: list[tuple[float, ...]], region: str | None, where: Location) -> InputError:
    """The error for a DATA line that measures no point: before POINTS, before REGION, or past the last point."""
    if not points:
        return InputError("DATA before POINTS", where=where,
                          fix="declare the measurement points with POINTS lines before the first DATA line")
    if region is None:
        return InputError("DATA before REGION", where=where,
                          fix="name the kernel with a REGION line before its DATA lines")
    return InputError(f"more DATA lines than points: region '{region}' already has one for each of the "
                      f"{len(points)} point(s)", where=where, fix=_ORDER_FIX)


def _parameter_names(rest: str, known: list[str], where: Location) -> list[str]:
    """The names on a PARAMETER line (Extra-P allows several, separated by spaces)."""
    names = rest.split()
    if not names:
        raise InputError("PARAMETER without a name", where=where, fix="write PARAMETER <name>, e.g. PARAMETER p")
    seen = set(known)  # a set: a line may list a million names
    for name in names:
        if name in seen:
            raise InputError(f"parameter '{name}' is declared twice", where=where,
                             fix="declare each parameter once")
        seen.add(name)
    check_parameter_count(len(known) + len(names), where)
    return names


def _points(rest: str, parameters: list[str], where: Location) -> list[tuple[float, ...]]:
    """The points of one POINTS line: `4 8 16`, `(4) (8) (16)` or `( 32 5000 ) ( 64 5000 )`."""
    names = ", ".join(parameters)
    example = "( " + " ".join(["8"] * len(parameters)) + " )"
    if "(" in rest or ")" in rest:
        leftover = _GROUP.sub(" ", rest).strip()
        if leftover:
            raise InputError(f"cannot read the points: unexpected '{leftover}' outside the parentheses",
                             where=where, fix=f"write each point in parentheses, e.g. POINTS {example} {example}")
        groups = [group.split() for group in _GROUP.findall(rest)]
    elif len(parameters) > 1:
        raise InputError(f"with {len(parameters)} parameters ({names}) each point needs parentheses",
                         where=where, fix=f"write the points as POINTS {example} {example}")
    else:
        groups = [[value] for value in rest.split()]
    if not groups:
        raise InputError("POINTS without points", where=where, fix=f"list the points, e.g. POINTS {example}")
    fix = f"write each point with one number per parameter ({names}), e.g. {example}"
    for group in groups:
        if len(group) != len(parameters):
            raise InputError(
                f"the point ( {' '.join(group)} ) has {len(group)} value(s) but the file declares "
                f"{len(parameters)} parameter(s) ({names})", where=where, fix=fix)
    return [tuple(number(value, f"parameter '{name}'", where, fix) for value, name in zip(group, parameters))
            for group in groups]


def _unknown_keyword(keyword: str, where: Location) -> InputError:
    """The error for a line that starts with none of Extra-P's keywords."""
    close = difflib.get_close_matches(keyword.upper(), KEYWORDS, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return InputError(
        f"unknown keyword '{keyword}'", where=where,
        fix=f"{hint}Extra-P text files have the keywords {', '.join(KEYWORDS)}; start a comment line with #",
    )
