"""Writing scalecheck's own JSON format: what `dumps_run` writes, `read_scalecheck_json` reads back unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scalecheck.data.measurement import Run, Series
from scalecheck.formats import detect_format, read_measurements
from scalecheck.formats.scalecheck_json import read_scalecheck_json
from scalecheck.formats.writer import dumps_run

INPUTS = Path(__file__).parent.parent / "inputs"
NAN = np.nan


def _round_trip(run: Run, tmp_path: Path, meta: dict[str, str] | None = None) -> Run:
    path = tmp_path / "run.json"
    path.write_text(dumps_run(run, meta), encoding="utf-8")
    assert detect_format(path) == "scalecheck-json"
    return read_scalecheck_json(path)


def _assert_same_series(actual: Run, expected: Run) -> None:
    assert actual.parameters == expected.parameters
    assert [(s.kernel, s.metric) for s in actual.series] == [(s.kernel, s.metric) for s in expected.series]
    for got, want in zip(actual.series, expected.series):
        assert got.unit == want.unit
        np.testing.assert_array_equal(got.points, want.points)
        np.testing.assert_array_equal(got.values, want.values)  # NaN padding in the same places; exact floats


def test_dumps_run_round_trips_one_parameter_with_uneven_repetitions(tmp_path: Path) -> None:
    values = [[0.1, 0.2, 1 / 3], [2.5, NAN, NAN], [1e-9, 123456789.123456789, NAN]]
    run = Run(("p",), (Series("sort", "time", ("p",), [[2], [4], [8]], values, unit="s"),))
    back = _round_trip(run, tmp_path)
    _assert_same_series(back, run)
    assert back.series[0].unit == "s"
    assert back.series[0].repetitions.tolist() == [3, 1, 2]


def test_dumps_run_escapes_a_lone_surrogate_and_keeps_other_names_readable(tmp_path: Path) -> None:
    """JSON can carry "\\ud800" (a metric line may), UTF-8 cannot: that file is written in ASCII escapes."""
    run = Run(("p",), (Series("l\u00f6se\ud800", "time", ("p",), [[2], [4], [8]], [[1.0], [2.0], [4.0]]),))
    text = dumps_run(run)
    assert "\\ud800" in text and "\\u00f6" in text
    _assert_same_series(_round_trip(run, tmp_path), run)
    plain = Run(("p",), (Series("l\u00f6se", "time", ("p",), [[2], [4], [8]], [[1.0], [2.0], [4.0]]),))
    assert "l\u00f6se" in dumps_run(plain)


def test_dumps_run_round_trips_two_parameters_and_several_series(tmp_path: Path) -> None:
    solve = Series("main->solve", "time", ("p", "n"), [[8, 100], [16, 100], [16, 200.5]],
                   [[1.91, 1.95], [3.9, NAN], [7.25, 7.5]], unit="s")
    visits = Series("main->solve", "visits", ("p", "n"), [[8, 100]], [[8.0]])
    run = Run(("p", "n"), (solve, visits))
    _assert_same_series(_round_trip(run, tmp_path), run)


def test_dumps_run_writes_integral_coordinates_as_ints_values_as_floats_and_omits_empty_unit() -> None:
    run = Run(("p", "n"), (Series("k", "visits", ("p", "n"), [[8, 100.5]], [[3.0, NAN]]),))
    doc = json.loads(dumps_run(run))
    assert doc["scalecheck"] == 1
    assert doc["measurements"] == [{"kernel": "k", "metric": "visits", "point": {"p": 8, "n": 100.5},
                                    "values": [3.0]}]
    assert type(doc["measurements"][0]["point"]["p"]) is int


def test_dumps_run_sorts_points_and_is_deterministic() -> None:
    series = Series("k", "time", ("p",), [[16], [2], [8]], [[3.0], [1.0], [2.0]])
    text = dumps_run(Run(("p",), (series,)))
    assert [m["point"]["p"] for m in json.loads(text)["measurements"]] == [2, 8, 16]
    assert dumps_run(Run(("p",), (series,))) == text


def test_dumps_run_keeps_meta_and_updates_it(tmp_path: Path) -> None:
    run = Run(("p",), (Series("k", "time", ("p",), [[1]], [[1.0]]),), {"machine": "ci", "commit": "old"})
    back = _round_trip(run, tmp_path, {"commit": "1a2b3c4"})
    assert back.meta == {"machine": "ci", "commit": "1a2b3c4"}
    assert run.meta == {"machine": "ci", "commit": "old"}  # the run itself is unchanged


def test_dumps_run_writes_json_object_text_in_meta_as_an_object(tmp_path: Path) -> None:
    fingerprint = json.dumps({"cores": "4", "cpu": "AMD EPYC 7763", "host": "fv-az1"}, sort_keys=True)
    run = Run(("p",), (Series("k", "time", ("p",), [[1]], [[1.0]]),), {"commit": "old"})
    doc = json.loads(dumps_run(run, {"machine": fingerprint}))
    assert doc["meta"]["machine"] == {"cores": "4", "cpu": "AMD EPYC 7763", "host": "fv-az1"}
    back = _round_trip(run, tmp_path, {"machine": fingerprint})
    assert back.meta == {"commit": "old", "machine": fingerprint}  # the same text again
    assert _round_trip(back, tmp_path).meta == back.meta  # and again, when the run read is rewritten


def test_dumps_run_reads_back_a_file_meta_object_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "in.json"
    path.write_text('{"scalecheck": 1, "parameters": ["p"], "meta": {"machine": {"cpu": "x", "cores": 4}}, '
                    '"measurements": [{"kernel": "k", "point": {"p": 1}, "values": [1.0]}]}')
    run = read_scalecheck_json(path)
    assert json.loads(dumps_run(run))["meta"]["machine"] == {"cpu": "x", "cores": 4}
    assert _round_trip(run, tmp_path).meta == run.meta


@pytest.mark.parametrize("value", ["perf-box-1", "{perf-box-1}", "{\"cpu\": ", "[1, 2]", "4", '"quoted"',
                                   '{"cpu": NaN}', '{"cores": 1e999}', " {\"cpu\": \"x\"}"])
def test_dumps_run_keeps_other_meta_strings_as_strings(value: str, tmp_path: Path) -> None:
    run = Run(("p",), (Series("k", "time", ("p",), [[1]], [[1.0]]),))
    assert json.loads(dumps_run(run, {"machine": value}))["meta"]["machine"] == value
    assert _round_trip(run, tmp_path, {"machine": value}).meta == {"machine": value}


def test_dumps_run_refuses_a_run_without_series() -> None:
    with pytest.raises(ValueError, match="without series"):
        dumps_run(Run(("p",), ()))


@pytest.mark.parametrize("name", [
    "extrap/mpi_data_mean.txt",
    "extrap/relearn_data.txt",
    "extrap/one_parameter_segmented_1.txt",
    "extrap/two_parameter_segmented_1.txt",
    "extrap/cube_single_parameter.json",
    "extrap/new_json_input2.json",
    "extrap/extended2.jsonl",
    "extrap/talpas_1.txt",
    "scalecheck-json/ok_basic.json",
    "csv/ok_callpath_unit.csv",
])
def test_dumps_run_round_trips_real_inputs(name: str, tmp_path: Path) -> None:
    run = read_measurements(INPUTS / name)
    back = _round_trip(run, tmp_path)
    _assert_same_series(back, run)
    assert back.meta == run.meta


def test_dumps_run_writes_rounds_and_reads_them_back(tmp_path: Path) -> None:
    from scalecheck.data.measurement import merge_runs, with_round

    run = Run(("p",), (Series("k", "time", ("p",), [[1], [2]], [[1.0, 1.1], [2.0, np.nan]]),))
    merged = merge_runs([with_round(run, 1), with_round(run, 2)])
    np.testing.assert_array_equal(merged.series[0].rounds, [[1, 1, 2, 2], [1, 2, np.nan, np.nan]])
    path = tmp_path / "r.json"
    path.write_text(dumps_run(merged), encoding="utf-8")
    assert '"values": [1.0, 1.1, 1.0, 1.1], "rounds": [1, 1, 2, 2]' in path.read_text(encoding="utf-8")
    back = read_scalecheck_json(path).series[0]
    np.testing.assert_array_equal(back.rounds, merged.series[0].rounds)
    np.testing.assert_array_equal(back.values, merged.series[0].values)


def test_dumps_run_without_rounds_writes_none(tmp_path: Path) -> None:
    run = Run(("p",), (Series("k", "time", ("p",), [[1]], [[1.0, 1.1]]),))
    assert "rounds" not in dumps_run(run)
