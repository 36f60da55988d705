"""CSV tables: kernel,metric,<parameter>...,value, one row per repetition."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scalecheck.errors import InputError
from scalecheck.formats.csv_table import read_csv_table

DIR = Path(__file__).parent.parent / "inputs" / "csv"
EXTRAP = Path(__file__).parent.parent / "inputs" / "extrap"


def test_read_csv_table_loads_rows_as_repetitions(series_of) -> None:
    run = read_csv_table(DIR / "ok_basic.csv")
    assert run.parameters == ("p", "n")
    series = series_of(run)
    assert sorted(series) == [("main->init", "time"), ("main->solve", "time"), ("main->solve", "visits")]
    solve = series["main->solve", "time"]
    np.testing.assert_array_equal(solve.points, [[8, 100], [16, 100]])
    np.testing.assert_array_equal(solve.values, [[1.91, 1.95], [3.9, np.nan]])
    np.testing.assert_array_equal(series["main->solve", "visits"].values, [[8]])
    np.testing.assert_array_equal(series["main->init", "time"].points, [[16, 200]])  # sparse


def test_read_csv_table_accepts_callpath_unit_crlf_and_quoted_commas(series_of) -> None:
    run = read_csv_table(DIR / "ok_callpath_unit.csv")
    assert run.parameters == ("p",)
    series = series_of(run)
    assert sorted(series) == [("main->a", "time"), ("main->a,b", "time")]
    assert series["main->a,b", "time"].unit == "s"
    np.testing.assert_array_equal(series["main->a", "time"].values, [[0.2]])


@pytest.mark.parametrize("name, message", [
    ("bad_missing_columns.csv", r"bad_missing_columns\.csv:1: missing column\(s\) kernel, value"),
    ("bad_value.csv", r"bad_value\.csv:3: the measured value must be a number, got 'n/a'"),
    ("bad_nan.csv", r"bad_nan\.csv:4: the measured value must be a finite number, got 'nan'"),
    ("bad_inf.csv", r"bad_inf\.csv:2: the measured value must be a finite number, got 'inf'"),
    ("bad_parameter.csv", r"bad_parameter\.csv:4: parameter 'p' must be a number, got 'eight'"),
    ("bad_fields.csv", r"bad_fields\.csv:3: the row has 4 fields but the header has 3 columns"),
    ("bad_negative_time.csv", r"bad_negative_time\.csv:3: metric 'time' is a time but has a negative value -0\.5"),
])
def test_read_csv_table_errors_name_file_and_line(name: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        read_csv_table(DIR / name)
    assert info.value.fix


def test_read_csv_table_missing_columns_fix_says_which_columns_are_read() -> None:
    with pytest.raises(InputError) as info:
        read_csv_table(DIR / "bad_missing_columns.csv")
    assert info.value.fix is not None and "kernel,metric,<parameter>...,value" in info.value.fix


def test_read_csv_table_rejects_extrap_summary_table_naming_missing_columns() -> None:
    # mpi_data.csv holds mean, sd, median... per row: not one repetition per row
    with pytest.raises(InputError, match=r"mpi_data\.csv:1: missing column\(s\) kernel, value") as info:
        read_csv_table(EXTRAP / "mpi_data.csv")
    assert info.value.fix


@pytest.mark.parametrize("text, line, message", [
    ("kernel,p,p,value\n", 1, r"column 'p' appears twice"),
    ("kernel,,p,value\n", 1, r"column 2 has no name"),
    ("kernel,callpath,p,value\n", 1, r"the header has both 'kernel' and 'callpath'"),
    ("kernel,metric,value\nk,time,1\n", 1, r"the header has no parameter column"),
    ("kernel;p;value\nk;2;1\n", 1, r"the header row has no commas"),
    ("\n\nkernel,p,value\n,2,1\n", 4, r"the kernel name is empty"),
    ('kernel,p,value\n"k\n', 2, r"not valid CSV: unexpected end of data"),
])
def test_read_csv_table_checks_header_and_rows(make_file, text: str, line: int, message: str) -> None:
    path = make_file("t.csv", text)
    with pytest.raises(InputError, match=rf"t\.csv:{line}: {message}") as info:
        read_csv_table(path)
    assert info.value.fix


def test_read_csv_table_with_header_only_is_an_error(make_file) -> None:
    with pytest.raises(InputError, match=r"t\.csv: the file holds no measurements"):
        read_csv_table(make_file("t.csv", "kernel,p,value\n\n"))
