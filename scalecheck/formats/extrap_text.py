"""Extra-P's text format: PARAMETER, POINTS, METRIC, REGION and DATA lines (Extra-P's TextFileReader grammar)."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from scalecheck.data.measurement import Run, RunBuilder, number
from scalecheck.errors import InputError, Location
from scalecheck.formats.limits import LimitedRunBuilder, check_parameter_count
from scalecheck.formats.source import read_text, split_lines

KEYWORDS = ("PARAMETER", "POINTS", "METRIC", "REGION", "DATA")
_GROUP = re.compile(r"\(([^()]*)\)")  # one parenthesised point of POINTS ( 32 5000 ) ( 64 5000 )
_ORDER_FIX = ("give one DATA line per point, in POINTS order; a new REGION or METRIC line starts again at the "
              "first point")


def read_extrap_text(path: Path) -> Run:
    """`read_extrap_text_text` of the file `path`, read once."""
    path = Path(path)
    return read_extrap_text_text(read_text(path), path)


def read_extrap_text_text(text: str, source: Path) -> Run:
    """Read an Extra-P text file; several values on a DATA line are repetitions."""
    parameters: list[str] = []
    points: list[tuple[float, ...]] = []
    builder: RunBuilder | None = None
    region: str | None = None
    metric = ""  # Extra-P leaves the metric unnamed without a METRIC line; RunBuilder then calls it "time"
    next_point = 0  # index of the point the next DATA line measures
    for line_no, raw in enumerate(split_lines(text), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue  # only whole-line comments: a region name such as "Update #elements" keeps its '#'
        keyword, *tail = line.split(None, 1)
        words = tail[0].split() if tail else []  # split once: a DATA line may hold a million values
        # Extra-P collapses runs of spaces and tabs, also inside region names; so do we, to name kernels alike
        rest = " ".join(words)
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
        elif keyword == "DATA":
            if not points:
                raise InputError("DATA before POINTS", where=where,
                                 fix="declare the measurement points with POINTS lines before the first DATA line")
            if region is None:
                raise InputError("DATA before REGION", where=where,
                                 fix="name the kernel with a REGION line before its DATA lines")
            if next_point >= len(points):
                raise InputError(
                    f"more DATA lines than points: region '{region}' already has one for each of the "
                    f"{len(points)} point(s)", where=where, fix=_ORDER_FIX)
            if builder is None:
                builder = LimitedRunBuilder(parameters, source)
            builder.add(region, metric, points[next_point], words,
                        Location(source, line_no, f"region '{region}'"))
            next_point += 1
        else:
            raise _unknown_keyword(keyword, where)
    if builder is None:
        raise InputError("the file holds no DATA lines", where=Location(source),
                         fix="check that this is an Extra-P text file with measurements (DATA lines)")
    return builder.build()


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
