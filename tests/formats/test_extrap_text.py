"""Extra-P's text format: PARAMETER, POINTS, METRIC, REGION, DATA."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scalecheck.errors import InputError
from scalecheck.formats.extrap_text import read_extrap_text

DIR = Path(__file__).parent.parent / "inputs" / "extrap-text"
EXTRAP = Path(__file__).parent.parent / "inputs" / "extrap"


def test_read_extrap_text_one_parameter_with_metrics_regions_and_repetitions(series_of) -> None:
    run = read_extrap_text(DIR / "ok_one_parameter.txt")
    assert run.parameters == ("p",)
    series = series_of(run)
    # as in Extra-P, a REGION keeps the last METRIC: "Update #synaptic elements" follows METRIC visits
    assert sorted(series) == [("Update #synaptic elements", "visits"), ("main -> solve loop", "runtime"),
                              ("main -> solve loop", "visits")]
    loop = series["main -> solve loop", "runtime"]
    np.testing.assert_array_equal(loop.points, [[4], [8], [16]])
    # the second REGION block of the same kernel restarts at the first point: one more repetition there
    np.testing.assert_array_equal(loop.values, [[1.0, 1.1, 1.2], [2.0, np.nan, np.nan], [4.0, 4.2, 4.1]])
    # a METRIC line restarts at the first point; fewer DATA lines than points leave the rest unmeasured
    np.testing.assert_array_equal(series["main -> solve loop", "visits"].points, [[4], [8]])
    # '#' inside a name is not a comment; runs of spaces collapse as in Extra-P
    np.testing.assert_array_equal(series["Update #synaptic elements", "visits"].values, [[0.5], [0.25]])


def test_read_extrap_text_two_parameters_with_tabs_and_several_points_per_line(series_of) -> None:
    run = read_extrap_text(DIR / "ok_two_parameters.txt")
    assert run.parameters == ("p", "n")
    kernel = series_of(run)["kernel", "time"]
    np.testing.assert_array_equal(kernel.points, [[32, 5000], [64, 5000], [64, 6000]])
    np.testing.assert_array_equal(kernel.values, [[406.5, 405.6], [574.5, np.nan], [714.7, 719.7]])


def test_read_extrap_text_points_in_parentheses_and_default_metric(series_of) -> None:
    sweep = series_of(read_extrap_text(DIR / "ok_parenthesised.txt"))["sweep", "time"]
    np.testing.assert_array_equal(sweep.points, [[4], [8], [16]])
    np.testing.assert_array_equal(sweep.values, [[3.5], [5.5], [9.5]])


@pytest.mark.parametrize("name, message", [
    ("bad_data_before_points.txt", r"bad_data_before_points\.txt:3: DATA before POINTS"),
    ("bad_data_before_region.txt", r"bad_data_before_region\.txt:4: DATA before REGION"),
    ("bad_too_many_data.txt", r"bad_too_many_data\.txt:6: more DATA lines than points: region 'main' already "
                              r"has one for each of the 2 point\(s\)"),
    ("bad_point_coordinates.txt", r"bad_point_coordinates\.txt:3: the point \( 64 \) has 1 value\(s\) but the "
                                  r"file declares 2 parameter\(s\) \(p, n\)"),
    ("bad_point_value.txt", r"bad_point_value\.txt:2: parameter 'p' must be a number, got 'eight'"),
    ("bad_value.txt", r"bad_value\.txt:4: region 'main': the measured value must be a number, got 'abc'"),
    ("bad_nan.txt", r"bad_nan\.txt:5: region 'main': the measured value must be a finite number, got 'nan'"),
    ("bad_inf.txt", r"bad_inf\.txt:4: region 'main': the measured value must be a finite number, got 'inf'"),
    ("bad_keyword.txt", r"bad_keyword\.txt:3: unknown keyword 'EXPERIMENT'"),
    ("bad_negative_time.txt",
     r"bad_negative_time\.txt:5: region 'main': metric 'time' is a time but has a negative value -2"),
])
def test_read_extrap_text_errors_name_file_and_line(name: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        read_extrap_text(DIR / name)
    assert info.value.fix


def test_read_extrap_text_data_before_points_fix() -> None:
    with pytest.raises(InputError) as info:
        read_extrap_text(DIR / "bad_data_before_points.txt")
    assert info.value.fix == "declare the measurement points with POINTS lines before the first DATA line"


@pytest.mark.parametrize("text, line, message", [
    ("POINTS 4 8\n", 1, r"POINTS before PARAMETER"),
    ("PARAMETER p\nPOINTS 4\nPARAMETER n\n", 3, r"PARAMETER after POINTS"),
    ("PARAMETER p\nPARAMETER p\n", 2, r"parameter 'p' is declared twice"),
    ("PARAMETER\n", 1, r"PARAMETER without a name"),
    ("PARAMETER p n\nPOINTS 4 8\n", 2, r"with 2 parameters \(p, n\) each point needs parentheses"),
    ("PARAMETER p\nPOINTS (4) x (8)\n", 2, r"cannot read the points: unexpected 'x' outside the parentheses"),
    ("PARAMETER p\nPOINTS\n", 2, r"POINTS without points"),
    ("PARAMETER p\nPOINTS 4\nREGION\n", 3, r"REGION without a name"),
    ("PARAMETER p\nPOINTS 4\nREGION r\nDATA\n", 4, r"region 'r': the measurement has no values"),
    ("PARAMETER p\nPOINTS 4\nData 1\n", 3, r"unknown keyword 'Data'"),
])
def test_read_extrap_text_checks_its_grammar(make_file, text: str, line: int, message: str) -> None:
    with pytest.raises(InputError, match=rf"t\.txt:{line}: {message}") as info:
        read_extrap_text(make_file("t.txt", text))
    assert info.value.fix


def test_read_extrap_text_suggests_the_keyword_meant(make_file) -> None:
    with pytest.raises(InputError) as info:
        read_extrap_text(make_file("t.txt", "PARAMETER p\nPOINTS 4\nREGION r\nData 1\n"))
    assert info.value.fix is not None and info.value.fix.startswith("did you mean 'DATA'?")


def test_read_extrap_text_without_data_is_an_error(make_file) -> None:
    with pytest.raises(InputError, match=r"t\.txt: the file holds no DATA lines"):
        read_extrap_text(make_file("t.txt", "PARAMETER p\nPOINTS 4 8\nREGION main\n"))


def test_read_extrap_text_real_mpi_data_mean(series_of) -> None:
    run = read_extrap_text(EXTRAP / "mpi_data_mean.txt")
    assert run.parameters == ("p",)
    assert len(run.series) == 14 and run.metrics == ("time",)
    allreduce = series_of(run)["IntelMPI->MPI_Allreduce", "time"]
    assert allreduce.callpath == ("IntelMPI", "MPI_Allreduce")
    np.testing.assert_array_equal(allreduce.points[:, 0], [32, 64, 128, 256, 512])
    np.testing.assert_allclose(allreduce.values[:, 0], [32.353045335, 44.22838795, 67.8051928696,
                                                         124.7911479438, 168.6753711])


def test_read_extrap_text_real_relearn_data(series_of) -> None:
    run = read_extrap_text(EXTRAP / "relearn_data.txt")
    assert run.parameters == ("p", "n")
    assert len(run.series) == 14
    series = series_of(run)
    main = series["main()", "time"]
    assert main.points.shape == (25, 2)
    np.testing.assert_array_equal(main.values[0], [406.498, 405.58])  # p=32, n=5000
    np.testing.assert_array_equal(main.values[-1], [2536.75, 2536.75])  # p=512, n=9000
    assert ("Update electrical activity", "time") in series  # leading indentation is not part of the name


def test_read_extrap_text_real_segmented_samples(series_of) -> None:
    one = read_extrap_text(EXTRAP / "one_parameter_segmented_1.txt")
    (main,) = one.series
    assert (main.kernel, main.metric) == ("main", "runtime")
    np.testing.assert_array_equal(main.values[:, 0], [1, 4, 9, 16, 25, 36, 37, 38, 39, 40])
    np.testing.assert_array_equal(main.repetitions, [5] * 10)
    two = read_extrap_text(EXTRAP / "two_parameter_segmented_1.txt")
    (reg,) = two.series
    assert two.parameters == ("x", "y") and (reg.kernel, reg.metric) == ("reg", "metr")
    assert reg.points.shape == (60, 2)
    np.testing.assert_array_equal(reg.values[0], [80, 80.21, 80.49, 80.03, 80.07])  # x=10, y=2
