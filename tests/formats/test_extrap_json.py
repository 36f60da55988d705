"""Extra-P's JSON formats: the current layout and the legacy id-based one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scalecheck.errors import InputError
from scalecheck.formats.extrap_json import read_extrap_json

DIR = Path(__file__).parent.parent / "inputs" / "extrap-json"
EXTRAP = Path(__file__).parent.parent / "inputs" / "extrap"


def test_read_extrap_json_new_layout(series_of) -> None:
    run = read_extrap_json(DIR / "ok_new.json")
    assert run.parameters == ("x", "y")
    series = series_of(run)
    assert sorted(series) == [("sweep", "time"), ("sweep", "visits"), ("sweep->inner", "time")]
    np.testing.assert_array_equal(series["sweep", "time"].points, [[4, 10], [8, 20]])
    np.testing.assert_array_equal(series["sweep", "time"].values, [[3.5, 3.6], [5.5, np.nan]])
    inner = series["sweep->inner", "time"]  # sparse: one point
    np.testing.assert_array_equal(inner.points, [[8, 20]])
    np.testing.assert_array_equal(inner.values, [[1.5, 1.25]])


def test_read_extrap_json_legacy_layout_orders_parameters_by_id(series_of) -> None:
    run = read_extrap_json(DIR / "ok_legacy.json")
    assert run.parameters == ("p", "n")
    series = series_of(run)
    np.testing.assert_array_equal(series["sweep", "time"].points, [[4, 100], [8, 100]])
    np.testing.assert_array_equal(series["sweep", "time"].values, [[3.5, 3.7], [5.5, np.nan]])
    np.testing.assert_array_equal(series["sweep->inner", "time"].values, [[1.5]])


@pytest.mark.parametrize("name, message", [
    ("bad_unknown_coordinate.json", r"bad_unknown_coordinate\.json:10: measurements\[1\]: unknown coordinate_id 9"),
    ("bad_point_length.json", r"bad_point_length\.json:7: measurements\[\"sweep\"\]\[\"time\"\]\[1\]: the point "
                              r"has 1 value\(s\) but the file declares 2 parameter\(s\) \(x, y\)"),
    ("bad_nan.json", r"bad_nan\.json:6: measurements\[\"sweep\"\]\[\"time\"\]\[0\]: the measured value must be a "
                     r"finite number, got nan"),
    ("bad_missing_key.json", r"bad_missing_key\.json:7: measurements\[\"sweep\"\]\[\"time\"\]\[1\]: missing key "
                             r"'point'"),
])
def test_read_extrap_json_errors_name_file_line_and_record(name: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        read_extrap_json(DIR / name)
    assert info.value.fix


LEGACY = """\
{"parameters": [{"id": 1, "name": "p"}],
 "callpaths": [{"id": 1, "name": "main"}],
 "metrics": [{"id": 1, "name": "time"}],
 "coordinates": [{"id": 1, "parameter_value_pairs": [{"parameter_id": 1, "parameter_value": 4}]}],
 "measurements": [{"callpath_id": 1, "coordinate_id": 1, "metric_id": 1, "value": 1.5}]}
"""


@pytest.mark.parametrize("old, new, message", [
    ('"callpath_id": 1,', '"callpath_id": 2,', r":5: measurements\[0\]: unknown callpath_id 2"),
    ('"metric_id": 1,', '"metric_id": "x",', r":5: measurements\[0\]: unknown metric_id \"x\""),
    ('"value": 1.5', '"value": NaN', r":5: measurements\[0\]: the measured value must be a finite number, got nan"),
    ('"parameter_id": 1,', '"parameter_id": 7,', r":4: coordinates\[0\]: unknown parameter_id 7"),
    ('"parameter_value": 4', '"parameter_value": "four"', r":4: coordinates\[0\]: parameter 'p' must be a number"),
    ('{"id": 1, "name": "main"}', '{"id": 1}', r":2: callpaths\[0\]: missing key 'name'"),
    ('[{"id": 1, "name": "time"}]', '[{"id": 1, "name": "time"}, {"id": 1, "name": "visits"}]',
     r":3: metrics\[1\]: id 1 appears twice in \"metrics\""),
    ('"metric_id": 1,', '"metric_id": 1, "weight": 2,', r":5: measurements\[0\]: unknown key 'weight'"),
])
def test_read_extrap_json_legacy_checks_ids_and_values(make_file, old: str, new: str, message: str) -> None:
    path = make_file("legacy.json", LEGACY.replace(old, new, 1))
    with pytest.raises(InputError, match=r"legacy\.json" + message) as info:
        read_extrap_json(path)
    assert info.value.fix


def test_read_extrap_json_legacy_missing_section(make_file) -> None:
    path = make_file("legacy.json", '{"parameters": [], "callpaths": [], "metrics": [], "measurements": []}')
    with pytest.raises(InputError, match=r"legacy\.json: top level: missing key 'coordinates'"):
        read_extrap_json(path)


def test_read_extrap_json_unknown_top_level_key_is_an_error(make_file) -> None:
    path = make_file("new.json", '{"parameters": ["x"], "measurement": {}}')
    with pytest.raises(InputError, match=r"new\.json: top level: unknown key 'measurement'") as info:
        read_extrap_json(path)
    assert info.value.fix is not None and info.value.fix.startswith("did you mean 'measurements'?")


def test_read_extrap_json_points_native_files_to_their_reader(make_file) -> None:
    path = make_file("native.json", '{"scalecheck": 1, "parameters": ["x"], "measurements": []}')
    with pytest.raises(InputError, match=r"native\.json: this is a scalecheck JSON file, not an Extra-P one"):
        read_extrap_json(path)


def test_read_extrap_json_real_cube_single_parameter(series_of) -> None:
    run = read_extrap_json(EXTRAP / "cube_single_parameter.json")
    assert run.parameters == ("x",)
    assert len(run.series) == 28  # 4 call paths x 7 metrics
    assert run.metrics == ("visits", "time", "min_time", "max_time", "PAPI_FP_OPS", "PAPI_L3_TCM", "PAPI_L2_TCM")
    mat_mul = series_of(run)["main->mat_mul", "time"]
    assert mat_mul.points.shape == (9, 1) and mat_mul.points[-1, 0] == 2000


def test_read_extrap_json_real_new_and_legacy_samples(series_of) -> None:
    new = read_extrap_json(EXTRAP / "new_json_input2.json")
    assert new.parameters == ("x", "y") and len(new.series) == 4
    sweep2 = series_of(new)["sweep2", "time"]
    np.testing.assert_array_equal(sweep2.points, [[4, 10], [8, 20], [16, 30], [32, 40], [64, 50]])
    np.testing.assert_array_equal(sweep2.values[:, 0], [3.5, 5.5, 9.5, 17.5, 33.5])
    legacy = read_extrap_json(EXTRAP / "legacy_input_1.JSON")
    (sweep,) = legacy.series
    assert legacy.parameters == ("x",) and (sweep.kernel, sweep.metric) == ("sweep", "time")
    np.testing.assert_array_equal(sweep.points[:, 0], [4, 8, 16, 32, 64])
    np.testing.assert_array_equal(sweep.repetitions, [5] * 5)


@pytest.mark.parametrize("name, parameters, n_series, n_points", [
    ("cube_multi_parameter.json", ("x", "y", "z"), 28, 27),
    ("experiment_3_mp.json", ("x", "y", "z"), 36, 27),
])
def test_read_extrap_json_real_multi_parameter_files(real_extrap_data: Path, series_of, name: str,
                                                     parameters: tuple[str, ...], n_series: int,
                                                     n_points: int) -> None:
    run = read_extrap_json(real_extrap_data / name)
    assert run.parameters == parameters and len(run.series) == n_series
    main = series_of(run)["main", "visits"]
    assert main.points.shape == (n_points, 3)
    np.testing.assert_array_equal(main.values, np.ones((n_points, 1)))
