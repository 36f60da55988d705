"""JSON Lines: scalecheck's keys, Extra-P's keys, the optional header line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scalecheck.errors import InputError
from scalecheck.formats.jsonl import read_jsonl

DIR = Path(__file__).parent.parent / "inputs" / "jsonl"
EXTRAP = Path(__file__).parent.parent / "inputs" / "extrap"


def test_read_jsonl_takes_parameters_from_the_first_record_and_merges_repetitions(series_of) -> None:
    run = read_jsonl(DIR / "ok_scalecheck.jsonl")
    assert run.parameters == ("p", "n")
    series = series_of(run)
    assert sorted(series) == [("main->init", "time"), ("main->solve", "time")]
    solve = series["main->solve", "time"]
    assert solve.unit == "s"
    np.testing.assert_array_equal(solve.points, [[8, 100], [16, 100]])
    np.testing.assert_array_equal(solve.values, [[1.91, 1.95, 1.93], [3.9, np.nan, np.nan]])
    init = series["main->init", "time"]  # sparse: one point only; "value" may hold a list
    np.testing.assert_array_equal(init.points, [[16, 100]])
    np.testing.assert_array_equal(init.values, [[0.5, 0.6]])


def test_read_jsonl_header_line_declares_parameter_order_and_meta(series_of) -> None:
    run = read_jsonl(DIR / "ok_header.jsonl")
    assert run.parameters == ("n", "p")
    assert run.meta == {"commit": "a1b2c3d"}
    np.testing.assert_array_equal(series_of(run)["sort", "time"].points, [[1000, 2], [2000, 2]])


def test_read_jsonl_reads_extrap_keys(series_of) -> None:
    run = read_jsonl(DIR / "ok_extrap.jsonl")
    assert run.parameters == ("x", "y")
    series = series_of(run)
    test = series["test", "metr"]
    np.testing.assert_array_equal(test.points, [[1, 1], [2, 1]])
    np.testing.assert_array_equal(test.values, [[2, 2], [5, 5.5]])
    # like Extra-P, a record without "callpath" belongs to "<root>"; without "metric" it is a time
    np.testing.assert_array_equal(series["<root>", "time"].values, [[9]])


def test_read_jsonl_reads_extrap_sample_extended2(series_of) -> None:
    run = read_jsonl(EXTRAP / "extended2.jsonl")
    assert run.parameters == ("x", "y")
    (test,) = run.series
    assert (test.kernel, test.metric) == ("test", "metr")
    assert test.points.shape == (9, 2)
    np.testing.assert_array_equal(test.values[:, 0], [2, 3, 4, 5, 6, 7, 10, 11, 12])
    np.testing.assert_array_equal(test.repetitions, [5] * 9)


@pytest.mark.parametrize("name, message", [
    ("bad_changed_parameters.jsonl",
     r"bad_changed_parameters\.jsonl:3: the point has parameter 'm', but the first record has parameters \(p, n\)"),
    ("bad_not_json.jsonl", r"bad_not_json\.jsonl:3: not valid JSON: Expecting ',' delimiter \(column 53\)"),
    ("bad_undeclared_parameter.jsonl",
     r"bad_undeclared_parameter\.jsonl:2: the point has parameter 'q', but the file declares parameters \(p\)"),
    ("bad_nan.jsonl", r"bad_nan\.jsonl:2: the measured value must be a finite number, got nan"),
    ("bad_version.jsonl",
     r"bad_version\.jsonl:1: unsupported scalecheck format version 2; this scalecheck reads version 1"),
    ("bad_late_header.jsonl", r"bad_late_header\.jsonl:2: a header line must be the first line of the file"),
    ("bad_mixed_keys.jsonl", r"bad_mixed_keys\.jsonl:1: the measurement mixes scalecheck's keys \(kernel, point\) "
                             r"with Extra-P's \(callpath, params\)"),
])
def test_read_jsonl_errors_name_file_and_line(name: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        read_jsonl(DIR / name)
    assert info.value.fix


def test_read_jsonl_suggests_a_header_when_parameters_change() -> None:
    with pytest.raises(InputError) as info:
        read_jsonl(DIR / "bad_changed_parameters.jsonl")
    assert info.value.fix is not None and '{"scalecheck": 1, "parameters": [...]}' in info.value.fix


@pytest.mark.parametrize("line, message", [
    ('[1, 2]', r"a JSON Lines record must be an object, got a list"),
    ('{"kernel": "k", "point": {"p": 8}}', r"missing key 'values'"),
    ('{"callpath": "k", "params": {"p": 8}}', r"missing key 'value'"),
    ('{"callpath": "k", "params": {"p": 8}, "value": 1, "unit": "s"}', r"unknown key 'unit'"),
    ('{"kernel": "k", "point": {"p": 8}, "value": -1}', r"metric 'time' is a time but has a negative value -1"),
    ('{"kernel": "k", "point": {"p": 8}, "value": Infinity}', r"the measured value must be a finite number, got inf"),
    ('{"kernel": "k", "point": {}, "value": 1}', r"the point must be an object .*, got an empty object"),
])
def test_read_jsonl_checks_each_record(make_file, line: str, message: str) -> None:
    path = make_file("r.jsonl", '{"kernel": "k", "point": {"p": 4}, "value": 1}\n\n' + line + "\n")
    with pytest.raises(InputError, match=rf"r\.jsonl:3: {message}") as info:
        read_jsonl(path)
    assert info.value.fix


def test_read_jsonl_header_without_records_is_an_error(make_file) -> None:
    path = make_file("head.jsonl", '{"scalecheck": 1, "parameters": ["p"]}\n')
    with pytest.raises(InputError, match=r"head\.jsonl: the file holds no measurements"):
        read_jsonl(path)


def test_read_jsonl_header_needs_parameters(make_file) -> None:
    path = make_file("head.jsonl", '{"scalecheck": 1}\n{"kernel": "k", "point": {"p": 4}, "value": 1}\n')
    with pytest.raises(InputError, match=r"head\.jsonl:1: missing key 'parameters' in the header line"):
        read_jsonl(path)
