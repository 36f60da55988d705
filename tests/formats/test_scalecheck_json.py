"""scalecheck's own JSON format (version 1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scalecheck.errors import InputError
from scalecheck.formats.scalecheck_json import read_scalecheck_json

DIR = Path(__file__).parent.parent / "inputs" / "scalecheck-json"


def test_read_scalecheck_json_loads_kernels_metrics_points_and_values(series_of) -> None:
    run = read_scalecheck_json(DIR / "ok_basic.json")
    assert run.parameters == ("p", "n")
    assert run.meta == {"commit": "a1b2c3d", "machine": "ci-runner-x64", "runs": "3"}
    series = series_of(run)
    assert sorted(series) == [("main->init", "time"), ("main->solve", "time"), ("main->solve", "visits")]
    solve = series["main->solve", "time"]
    assert solve.unit == "s"
    np.testing.assert_array_equal(solve.points, [[8, 100], [16, 100]])  # point keys in any order
    # the third record repeats (main->solve, time, p=8 n=100): its value is one more repetition
    np.testing.assert_array_equal(solve.values, [[1.91, 1.95, 1.93, 1.92], [3.9, 3.8, np.nan, np.nan]])
    np.testing.assert_array_equal(series["main->solve", "visits"].values, [[8]])


def test_read_scalecheck_json_keeps_sparse_kernels_and_defaults_metric_to_time(series_of) -> None:
    init = series_of(read_scalecheck_json(DIR / "ok_basic.json"))["main->init", "time"]
    np.testing.assert_array_equal(init.points, [[16, 200]])  # measured at one point only
    np.testing.assert_array_equal(init.values, [[0.5]])
    assert init.unit == ""


@pytest.mark.parametrize("name, message", [
    ("bad_version.json",
     r"bad_version\.json:2: unsupported scalecheck format version 2; this scalecheck reads version 1"),
    ("bad_missing_key.json", r"bad_missing_key\.json:6: measurements\[1\]: missing key 'values'"),
    ("bad_not_json.json", r"bad_not_json\.json:4: not valid JSON: Expecting value \(column 20\)"),
    ("bad_nan.json",
     r"bad_nan\.json:5: measurements\[0\]: the measured value must be a finite number, got nan"),
    ("bad_infinity.json",
     r"bad_infinity\.json:6: measurements\[1\]: the measured value must be a finite number, got inf"),
    ("bad_negative_time.json",
     r"bad_negative_time\.json:5: measurements\[0\]: metric 'time' is a time but has a negative value -0\.5"),
    ("bad_undeclared_parameter.json", r"bad_undeclared_parameter\.json:7: measurements\[2\]: the point has "
                                      r"parameter 'q', but the file declares parameters \(p\)"),
    ("bad_missing_parameter.json", r"bad_missing_parameter\.json:5: measurements\[0\]: the point lacks "
                                   r"parameter 'n': the file declares parameters \(p, n\)"),
    ("bad_unknown_key.json", r"bad_unknown_key\.json:5: measurements\[0\]: unknown key 'metirc'"),
    ("bad_top_level.json", r"bad_top_level\.json:1: the top level must be an object with keys \"scalecheck\", "
                           r"\"parameters\" and \"measurements\", got a list"),
    ("bad_no_measurements.json", r"bad_no_measurements\.json: missing key 'measurements'"),
])
def test_read_scalecheck_json_errors_name_file_line_and_record(name: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        read_scalecheck_json(DIR / name)
    assert info.value.fix


def test_read_scalecheck_json_suggests_the_key_meant() -> None:
    with pytest.raises(InputError) as info:
        read_scalecheck_json(DIR / "bad_unknown_key.json")
    assert info.value.fix is not None and info.value.fix.startswith("did you mean 'metric'?")


def test_read_scalecheck_json_asks_for_an_upgrade_for_a_newer_version() -> None:
    with pytest.raises(InputError) as info:
        read_scalecheck_json(DIR / "bad_version.json")
    assert info.value.fix is not None and "upgrade scalecheck" in info.value.fix


@pytest.mark.parametrize("version, shown", [('"1"', r'"1"'), ("true", "true"), ("0", "0")])
def test_read_scalecheck_json_rejects_versions_that_are_not_the_number_1(make_file, version: str,
                                                                         shown: str) -> None:
    path = make_file("v.json", f'{{"scalecheck": {version}, "parameters": ["p"], "measurements": []}}')
    with pytest.raises(InputError, match=rf"v\.json:1: unsupported scalecheck format version {shown};") as info:
        read_scalecheck_json(path)
    assert info.value.fix == 'set "scalecheck": 1, the format version'


@pytest.mark.parametrize("parameters, message", [
    ("[]", r'"parameters" must be a non-empty list of names, got an empty list'),
    ('"p"', r'"parameters" must be a non-empty list of names, got a string'),
    ('["p", "p"]', r"parameter 'p' is declared twice"),
    ('["p", 3]', r"a parameter name must be a non-empty string, got 3"),
])
def test_read_scalecheck_json_checks_the_declared_parameters(make_file, parameters: str, message: str) -> None:
    path = make_file("p.json", f"""\
        {{"scalecheck": 1,
          "parameters": {parameters},
          "measurements": []}}
        """)
    with pytest.raises(InputError, match=rf"p\.json:2: parameters: {message}") as info:
        read_scalecheck_json(path)
    assert info.value.fix


@pytest.mark.parametrize("record, message", [
    ('"solve"', r"a measurement must be an object, got a string"),
    ('{"kernel": 3, "point": {"p": 8}, "values": [1]}', r"'kernel' must be a string, got a number"),
    ('{"kernel": "", "point": {"p": 8}, "values": [1]}', r"the kernel name is empty"),
    ('{"kernel": "k", "point": [8], "values": [1]}',
     r"the point must be an object mapping parameters to values, got a list"),
    ('{"kernel": "k", "point": {"p": "eight"}, "values": [1]}', r"parameter 'p' must be a number, got 'eight'"),
    ('{"kernel": "k", "point": {"p": 8}, "values": []}', r"the measurement has no values"),
    ('{"kernel": "k", "point": {"p": 8}, "values": [1], "value": 2}', r"the measurement has both 'values' and 'value'"),
    ('{"kernel": "k", "point": {"p": 8}, "values": ["fast"]}', r"the measured value must be a number, got 'fast'"),
    ('{"kernel": "k", "point": {"p": 8}, "values": [1, 2], "rounds": [1]}',
     r"the measurement has 2 value\(s\) but 1 round\(s\)"),
    ('{"kernel": "k", "point": {"p": 8}, "values": [1, 2], "rounds": [1, 1.5]}',
     r"a round must be a whole number from 0, got 1.5"),
    ('{"kernel": "k", "point": {"p": 8}, "values": [1], "rounds": "first"}',
     r"'rounds' must be a list of whole numbers, got a string"),
])
def test_read_scalecheck_json_checks_each_record(make_file, record: str, message: str) -> None:
    path = make_file("r.json", f"""\
        {{"scalecheck": 1, "parameters": ["p"],
          "measurements": [
            {{"kernel": "k", "point": {{"p": 4}}, "values": [1]}},
            {record}
          ]}}
        """)
    with pytest.raises(InputError, match=rf"r\.json:4: measurements\[1\]: {message}") as info:
        read_scalecheck_json(path)
    assert info.value.fix


def test_read_scalecheck_json_with_no_measurements_is_an_error(make_file) -> None:
    path = make_file("none.json", '{"scalecheck": 1, "parameters": ["p"], "measurements": []}')
    with pytest.raises(InputError, match=r"none\.json: the file holds no measurements"):
        read_scalecheck_json(path)


def test_read_scalecheck_json_ignores_optional_sections_it_does_not_read(make_file) -> None:
    # other issues add sections (timing samples, call pairs) that their own readers consume
    path = make_file("extra.json", """\
        {"scalecheck": 1, "parameters": ["p"], "samples": {"solve": []},
         "measurements": [{"kernel": "solve", "point": {"p": 2}, "values": [1.0]}]}
        """)
    assert [s.kernel for s in read_scalecheck_json(path).series] == ["solve"]


def test_read_scalecheck_json_keeps_the_round_of_each_value(make_file) -> None:
    path = make_file("rounds.json", """\
        {"scalecheck": 1, "parameters": ["p"], "measurements": [
          {"kernel": "k", "point": {"p": 2}, "values": [1.0, 1.1, 1.2], "rounds": [1, 1, 2]},
          {"kernel": "k", "point": {"p": 4}, "value": 2.0, "rounds": 2},
          {"kernel": "k", "point": {"p": 4}, "values": [2.1]}
        ]}
        """)
    (series,) = read_scalecheck_json(path).series
    np.testing.assert_array_equal(series.rounds, [[1, 1, 2], [2, np.nan, np.nan]])
    assert series.round_count == 2
