"""`RunBuilder.add_many`, and the Extra-P text reader that adds all its DATA lines with it: the same `Run`, and the
same first error, as adding the measurements one by one with `RunBuilder.add`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from scalecheck.data.measurement import Run, RunBuilder
from scalecheck.errors import InputError, Location
from scalecheck.formats import extrap_text, limits
from scalecheck.formats.extrap_text import read_extrap_text
from scalecheck.formats.limits import LimitedRunBuilder

MakeFile = Callable[[str, str], Path]
Blocks = list[tuple[str, str, int]]
PATH = Path("m.txt")


def where(index: int) -> Location:
    return Location(PATH, index + 1, f"measurement {index}")


def canonical(run: Run) -> list[object]:
    """Everything a run holds, arrays as their exact bytes, shapes and types."""
    def exact(array: np.ndarray | None) -> object:
        return None if array is None else (array.dtype.str, array.shape, array.tobytes())
    return [run.parameters, dict(run.meta)] + [
        (s.kernel, s.metric, s.parameters, exact(s.points), exact(s.values), exact(s.rounds), s.unit, s.source, s.note)
        for s in run.series]


def one_by_one(builder: RunBuilder, blocks: Blocks, points: Sequence[Sequence[float]], counts: Sequence[int],
               values: Sequence[object], unit: str = "") -> None:
    """What `add_many` promises: `add` of each measurement in turn."""
    index = first = 0
    for kernel, metric, size in blocks:
        for _ in range(size):
            builder.add(kernel, metric, points[index], values[first:first + counts[index]], where(index), unit)
            first += counts[index]
            index += 1


def measurements(rng: np.random.Generator, uniform: bool) -> tuple[Blocks, list[tuple[float, ...]], list[int],
                                                                        list[str]]:
    """Blocks of three kernels and two metrics (a pair may come back), at points that repeat and come unsorted."""
    pool = [(2.0, 8.0), (4.0, 8.0), (8.0, 8.0), (2.0, 16.0), (16.0, 4.0)]
    blocks: Blocks = []
    points: list[tuple[float, ...]] = []
    counts: list[int] = []
    values: list[str] = []
    for _ in range(8):
        size = int(rng.integers(1, 6))
        blocks.append((f"k{rng.integers(3)}", ["time", "visits"][int(rng.integers(2))], size))
        for _ in range(size):
            points.append(pool[int(rng.integers(len(pool)))])
            counts.append(3 if uniform else int(rng.integers(1, 4)))
            values.extend(f"{value:.6g}" for value in rng.uniform(0.5, 9.5, counts[-1]))
    return blocks, points, counts, values


@pytest.mark.parametrize("uniform", [True, False], ids=["equal_counts", "unequal_counts"])
def test_add_many_builds_what_add_builds_one_by_one(rng: np.random.Generator, uniform: bool) -> None:
    blocks, points, counts, values = measurements(rng, uniform)
    many, single = RunBuilder(("p", "n"), PATH), RunBuilder(("p", "n"), PATH)
    for builder in (many, single):  # a pair with rounds first, and one that `add` extends after `add_many`
        builder.add("k1", "time", (4, 8), ["1.5", "2.5"], where(0), rounds=[1, 2])
    many.add_many(blocks, points, counts, values, where, "s")
    one_by_one(single, blocks, points, counts, values, "s")
    for builder in (many, single):
        builder.add("k2", "visits", (2, 8), ["7"], where(99))
    assert canonical(many.build()) == canonical(single.build())


def test_add_many_takes_floats_and_arrays_of_floats_as_add_takes_them(rng: np.random.Generator) -> None:
    blocks, points, counts, texts = measurements(rng, uniform=True)
    floats = [float(text) for text in texts]
    expected = RunBuilder(("p", "n"), PATH)
    one_by_one(expected, blocks, points, counts, texts)
    for values in (floats, np.array(floats)):
        builder = RunBuilder(("p", "n"), PATH)
        builder.add_many(blocks, points, counts, values, where)
        assert canonical(builder.build()) == canonical(expected.build())


@pytest.mark.parametrize("blocks, counts, values, message", [
    ([("k", "time", 3)], [1, 2, 1], ["1", "2", "x", "3"],
     "m.txt:2: measurement 1: the measured value must be a number, got 'x'"),
    ([("k", "time", 2), ("j", "time", 1)], [1, 1, 1], ["1", "2", "nan"],
     "m.txt:3: measurement 2: the measured value must be a finite number, got 'nan'"),
    ([("k", "visits", 1), ("k", "", 2)], [1, 1, 1], ["-1", "2", "-3"],
     "m.txt:3: measurement 2: metric 'time' is a time but has a negative value -3"),
    ([("k", "time", 2)], [1, 0], ["1"], "m.txt:2: measurement 1: the measurement has no values"),
    ([("k", "time", 1), ("", "time", 1)], [1, 1], ["1", "2"], "m.txt:2: measurement 1: the kernel name is empty"),
], ids=["text", "nan", "negative_time", "no_values", "no_kernel"])
def test_add_many_names_the_first_bad_measurement(blocks: Blocks, counts: list[int], values: list[object],
                                                  message: str) -> None:
    with pytest.raises(InputError) as info:
        RunBuilder(("p",), PATH).add_many(blocks, [(8.0,)] * len(counts), counts, values, where)
    assert str(info.value).split("; fix: ")[0] == message


def test_add_many_takes_texts_and_floats_together_as_add_does() -> None:
    builder = RunBuilder(("p",), PATH)
    builder.add_many([("k", "time", 2)], [(8.0,), (8.0,)], [1, 1], ["1", 2.0], where)
    np.testing.assert_array_equal(builder.build().series[0].values, [[1.0, 2.0]])


def test_add_many_checks_that_its_arguments_agree() -> None:
    with pytest.raises(ValueError, match="2 measurements in the blocks, 2 points, 2 counts and 2 values for 3"):
        RunBuilder(("p",), PATH).add_many([("k", "time", 2)], [(1.0,), (2.0,)], [1, 2], ["1", "2"], where)


@pytest.mark.parametrize("limit, value, message", [
    ("MAX_RECORDS", 3, "m.txt:4: measurement 3: more than 3 measurements (rows, records or DATA lines) in one file"),
    ("MAX_VALUES", 5, "m.txt:3: measurement 2: more than 5 measured values in one file"),
    ("MAX_SERIES", 1, "m.txt:3: measurement 2: more than 1 (kernel, metric) pairs in one file"),
], ids=["records", "values", "series"])
def test_limited_add_many_refuses_at_the_measurement_that_crosses_a_limit(
        monkeypatch: pytest.MonkeyPatch, limit: str, value: int, message: str) -> None:
    monkeypatch.setattr(limits, limit, value)
    builder = LimitedRunBuilder(("p",), PATH)
    with pytest.raises(InputError) as info:
        builder.add_many([("k", "time", 2), ("j", "time", 2)], [(2.0,), (4.0,), (2.0,), (4.0,)], [2, 2, 2, 2],
                         ["1"] * 8, where)
    assert str(info.value) == f"{message}; fix: {limits.SPLIT_FIX}"


def test_limited_add_many_names_a_bad_value_before_the_limit_it_crosses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_RECORDS", 2)
    with pytest.raises(InputError, match=r"^m\.txt:2: measurement 1: the measured value must be a number, got 'x'"):
        LimitedRunBuilder(("p",), PATH).add_many([("k", "time", 3)], [(2.0,), (4.0,), (8.0,)], [1, 1, 1],
                                                 ["1", "x", "3"], where)


def test_limited_add_many_counts_what_it_added(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_RECORDS", 3)
    builder = LimitedRunBuilder(("p",), PATH)
    builder.add_many([("k", "time", 2)], [(2.0,), (4.0,)], [1, 1], ["1", "2"], where)
    builder.add("k", "time", (8,), ["3"], where(2))
    with pytest.raises(InputError, match=r"^m\.txt:4: measurement 3: more than 3 measurements"):
        builder.add("k", "time", (16,), ["4"], where(3))


def test_limited_add_many_refuses_tables_past_max_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_CELLS", 11)
    builder = LimitedRunBuilder(("p",), PATH)
    builder.add_many([("k", "time", 3), ("j", "time", 1)], [(2.0,), (4.0,), (8.0,), (2.0,)], [3, 3, 3, 3],
                     ["1"] * 12, where)
    with pytest.raises(InputError) as info:
        builder.build()
    assert str(info.value).startswith("m.txt: kernel 'k', metric 'time' has 3 points and 3 values at one of them; "
                                      "stored as a table of points by repetitions, the file's values take 12 cells, "
                                      "more than the 11 scalecheck holds")


# --- the reader ---------------------------------------------------------------------------------------------------

TEXT = """\
PARAMETER p
POINTS 16 4
METRIC time
REGION solve
DATA 3.0 3.5
# a comment between DATA lines

DATA 1.0\r
POINTS 8
DATA 2.0 2.25 2.5
REGION solve
DATA 3.75
METRIC visits
DATA 7
REGION init
DATA 0.5
DATA 0.25
"""


def test_read_extrap_text_adds_all_data_lines_at_once(make_file: MakeFile, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    add, add_many = LimitedRunBuilder.add, LimitedRunBuilder.add_many
    monkeypatch.setattr(LimitedRunBuilder, "add", lambda *args, **kwargs: calls.append("add") or add(*args, **kwargs))
    monkeypatch.setattr(LimitedRunBuilder, "add_many",
                        lambda *args, **kwargs: calls.append("add_many") or add_many(*args, **kwargs))
    read_extrap_text(make_file("t.txt", TEXT))
    assert calls == ["add_many"]


def test_read_extrap_text_keeps_points_repetitions_and_padding(make_file: MakeFile, series_of) -> None:
    series = series_of(read_extrap_text(make_file("t.txt", TEXT)))
    assert list(series) == [("solve", "time"), ("solve", "visits"), ("init", "visits")]
    solve = series["solve", "time"]
    np.testing.assert_array_equal(solve.points, [[4], [8], [16]])  # sorted; POINTS may come between DATA lines
    np.testing.assert_array_equal(solve.values, [[1.0, np.nan, np.nan], [2.0, 2.25, 2.5], [3.0, 3.5, 3.75]])
    assert solve.rounds is None and solve.source == Location(solve.source.path, None, "kernel 'solve', metric 'time'")
    np.testing.assert_array_equal(series["solve", "visits"].values, [[7.0]])  # at 16: METRIC starts again
    np.testing.assert_array_equal(series["init", "visits"].points, [[4], [16]])
    np.testing.assert_array_equal(series["init", "visits"].values, [[0.25], [0.5]])


def test_read_extrap_text_adds_a_point_listed_twice_as_repetitions(make_file: MakeFile) -> None:
    (series,) = read_extrap_text(make_file("t.txt", "PARAMETER p\nPOINTS 8 4 8\nREGION r\nDATA 1\nDATA 2\n"
                                                    "DATA 3 4\n")).series
    np.testing.assert_array_equal(series.points, [[4], [8]])
    np.testing.assert_array_equal(series.values, [[2.0, np.nan, np.nan], [1.0, 3.0, 4.0]])


@pytest.mark.parametrize("text, message", [
    ("PARAMETER p\nPOINTS 4 8\nREGION r\nDATA 1\nDATA x\nEXPERIMENT\n",
     "t.txt:5: region 'r': the measured value must be a number, got 'x'"),
    ("PARAMETER p\nPOINTS 4 8\nREGION r\nDATA 1\nEXPERIMENT\nDATA x\n", "t.txt:5: unknown keyword 'EXPERIMENT'"),
    ("PARAMETER p\nPOINTS 4\nREGION r\nDATA -1\nDATA 2\n", "t.txt:4: region 'r': metric 'time' is a time but has a "
                                                          "negative value -1"),
    ("PARAMETER p\nPOINTS 4\nREGION r\nDATA 1\nREGION q\nDATA inf\nDATA 2\n",
     "t.txt:6: region 'q': the measured value must be a finite number, got 'inf'"),
    ("PARAMETER p\nPOINTS 4\nREGION r\nDATA nan\nDATA 2\n",
     "t.txt:4: region 'r': the measured value must be a finite number, got 'nan'"),
    ("PARAMETER p\nPOINTS 4\nMETRIC bytes\nREGION r\nDATA -1\nREGION\n", "t.txt:6: REGION without a name"),
], ids=["value_before_keyword", "keyword_before_value", "negative_time", "second_region", "too_many_after_nan",
        "negative_bytes"])
def test_read_extrap_text_reports_the_first_error_of_the_file(make_file: MakeFile, text: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        read_extrap_text(make_file("t.txt", text))
    assert str(info.value).split("; fix: ")[0].endswith(message)


@pytest.mark.parametrize("limit, value, line, region", [
    ("MAX_RECORDS", 2, 7, "q"), ("MAX_VALUES", 2, 5, "r"), ("MAX_SERIES", 2, 9, "s"),
], ids=["records", "values", "series"])
def test_read_extrap_text_refuses_the_data_line_that_crosses_a_limit(
        make_file: MakeFile, monkeypatch: pytest.MonkeyPatch, limit: str, value: int, line: int, region: str) -> None:
    monkeypatch.setattr(limits, limit, value)
    path = make_file("t.txt", "PARAMETER p\nPOINTS 4 8\nREGION r\nDATA 1\nDATA 2 3\nREGION q\nDATA 4\nREGION s\n"
                              "DATA 5\n")
    with pytest.raises(InputError) as info:
        read_extrap_text(path)
    assert info.value.where == Location(path, line, f"region '{region}'")
    assert info.value.fix == limits.SPLIT_FIX


def test_read_extrap_text_parses_its_values_in_chunks_alike(make_file: MakeFile,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = make_file("t.txt", TEXT)
    whole = canonical(read_extrap_text(path))
    monkeypatch.setattr(extrap_text, "_CHUNK", 2)
    assert canonical(read_extrap_text(path)) == whole
    bad = make_file("bad.txt", TEXT.replace("DATA 7", "DATA 7x"))
    with pytest.raises(InputError, match=r"bad\.txt:14: region 'solve': the measured value must be a number, got '7x'"):
        read_extrap_text(bad)
