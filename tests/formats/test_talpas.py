"""TaLPas files: JSON-like lines with semicolons between members."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scalecheck.errors import InputError
from scalecheck.formats.talpas import read_talpas, talpas_to_json

DIR = Path(__file__).parent.parent / "inputs" / "talpas"
EXTRAP = Path(__file__).parent.parent / "inputs" / "extrap"


def test_read_talpas_merges_lines_into_repetitions(series_of) -> None:
    run = read_talpas(DIR / "ok_basic.txt")
    assert run.parameters == ("p", "n")
    series = series_of(run)
    assert sorted(series) == [("compute;phase 1", "time"), ("exchange", "time")]
    compute = series["compute;phase 1", "time"]  # the ';' inside the name survives
    np.testing.assert_array_equal(compute.points, [[4, 10], [8, 10]])
    np.testing.assert_array_equal(compute.values, [[6500, 6600], [51300, np.nan]])
    np.testing.assert_array_equal(series["exchange", "time"].points, [[8, 20]])  # sparse, metric defaults to time


def test_read_talpas_real_sample(series_of) -> None:
    run = read_talpas(EXTRAP / "talpas_1.txt")
    (compute,) = run.series
    assert run.parameters == ("x",) and (compute.kernel, compute.metric) == ("compute", "time")
    np.testing.assert_array_equal(compute.points[:, 0], [20, 30, 40, 50, 60])
    np.testing.assert_array_equal(compute.repetitions, [5] * 5)
    assert compute.values[0, 0] == 82.00848518948744


@pytest.mark.parametrize("name, message", [
    ("bad_not_json.txt", r"bad_not_json\.txt:2: not valid JSON: Expecting value \(column 69\)"),
    ("bad_changed_parameters.txt",
     r"bad_changed_parameters\.txt:2: the point has parameter 'y', but the first record has parameters \(x\)"),
    ("bad_missing_value.txt", r"bad_missing_value\.txt:2: missing key 'value'"),
    ("bad_negative_time.txt", r"bad_negative_time\.txt:1: metric 'time' is a time but has a negative value -82"),
])
def test_read_talpas_errors_name_file_and_line(name: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        read_talpas(DIR / name)
    assert info.value.fix


@pytest.mark.parametrize("line, expected", [
    ('{"a":1;"b":2}', '{"a":1,"b":2}'),
    ('{"a":"x;y";"b":"q\\";r"}', '{"a":"x;y","b":"q\\";r"}'),
    ('{"p":{"x":1;"y":2};"v":3}', '{"p":{"x":1,"y":2},"v":3}'),
])
def test_talpas_to_json_replaces_only_separators_outside_strings(line: str, expected: str) -> None:
    assert talpas_to_json(line) == expected
