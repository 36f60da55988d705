"""read_measurements, read_measurements_text and read_many: file-level errors, format choice, merging."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scalecheck.errors import InputError
from scalecheck.formats import FORMATS, read_many, read_measurements, read_measurements_text

INPUTS = Path(__file__).parent.parent / "inputs"


def test_read_measurements_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nothere\.json: no such file") as info:
        read_measurements(tmp_path / "nothere.json")
    assert info.value.fix


@pytest.mark.parametrize("name", ["nothere.csv", "nothere.txt", "nothere.jsonl"])
def test_read_measurements_missing_file_for_every_way_of_detecting(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError, match=rf"{name.replace('.', '[.]')}: no such file"):
        read_measurements(tmp_path / name)


@pytest.mark.parametrize("text", ["", "  \n\n\t\n"])
@pytest.mark.parametrize("name", ["e.json", "e.csv", "e.txt", "e.jsonl"])
def test_read_measurements_empty_file(make_file, name: str, text: str) -> None:
    with pytest.raises(InputError, match=rf"{name.replace('.', '[.]')}: the file is empty") as info:
        read_measurements(make_file(name, text))
    assert info.value.fix


def test_read_measurements_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"this is a directory, not a measurement file") as info:
        read_measurements(tmp_path)
    assert info.value.fix


def test_read_measurements_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.csv"
    path.write_bytes("kernel,p,value\nl\xf6sen,2,1.0\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin1\.csv:2: the file is not UTF-8 text \(byte 0xf6 at offset 16\)"):
        read_measurements(path)


def test_read_measurements_accepts_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    path.write_bytes("kernel,p,value\nsort,2,1.0\n".encode("utf-8-sig"))
    assert read_measurements(path).series[0].kernel == "sort"


def test_read_measurements_not_json(make_file) -> None:
    path = make_file("broken.json", '{\n  "scalecheck": 1,\n  "parameters": ["p"\n}\n')
    with pytest.raises(InputError, match=r"broken\.json:4: not valid JSON: Expecting ',' delimiter") as info:
        read_measurements(path)
    assert info.value.fix


def test_read_measurements_unknown_format_suggests_the_name_meant() -> None:
    with pytest.raises(InputError, match=r"^unknown format 'cvs'") as info:
        read_measurements(INPUTS / "csv" / "ok_basic.csv", "cvs")
    assert info.value.fix == ("did you mean 'csv'? scalecheck reads the formats scalecheck-json, jsonl, csv, "
                              "extrap-text, extrap-json, talpas, pytest-benchmark, google-benchmark, hyperfine, asv, "
                              "cube, extrap-experiment")


def test_read_measurements_format_override_reads_csv_in_a_txt_file() -> None:
    run = read_measurements(INPUTS / "csv" / "ok_csv_in.txt", "csv")
    (sort,) = run.series
    np.testing.assert_array_equal(sort.values, [[0.25], [0.5]])


def test_read_measurements_detects_each_real_file() -> None:
    counts = {name: len(read_measurements(INPUTS / "extrap" / name).series)
              for name in ("mpi_data_mean.txt", "relearn_data.txt", "cube_single_parameter.json",
                           "extended2.jsonl", "legacy_input_1.JSON", "new_json_input2.json",
                           "one_parameter_segmented_1.txt", "two_parameter_segmented_1.txt", "talpas_1.txt")}
    assert counts == {"mpi_data_mean.txt": 14, "relearn_data.txt": 14, "cube_single_parameter.json": 28,
                      "extended2.jsonl": 1, "legacy_input_1.JSON": 1, "new_json_input2.json": 4,
                      "one_parameter_segmented_1.txt": 1, "two_parameter_segmented_1.txt": 1, "talpas_1.txt": 1}


def test_read_many_merges_points_of_several_files(make_file) -> None:
    first = make_file("a.csv", "kernel,p,value\nsort,2,1.0\nsort,4,2.0\n")
    second = make_file("b.jsonl", '{"kernel": "sort", "point": {"p": 4}, "value": 2.2}\n'
                                  '{"kernel": "sort", "point": {"p": 8}, "value": 4.0}\n')
    run = read_many([first, second])
    (sort,) = run.series
    np.testing.assert_array_equal(sort.points, [[2], [4], [8]])
    np.testing.assert_array_equal(sort.values, [[1.0, np.nan], [2.0, 2.2], [4.0, np.nan]])


def test_read_many_rejects_files_with_different_parameters(make_file) -> None:
    first = make_file("a.csv", "kernel,p,value\nsort,2,1.0\n")
    second = make_file("b.csv", "kernel,n,value\nsort,2,1.0\n")
    with pytest.raises(InputError, match=r"b\.csv: parameters \(n\) differ from the first file's \(p\)"):
        read_many([first, second])


def test_read_many_needs_a_file() -> None:
    with pytest.raises(InputError, match=r"no measurement files given") as info:
        read_many([])
    assert info.value.fix


BAD_FILES = [
    ("bad_value.csv", "kernel,p,value\nsort,2,1.0\nsort,4,n/a\n"),
    ("bad.jsonl", '{"kernel": "k", "point": {"p": 2}, "value": 1.0}\n{"kernel": "k", "point": {"q": 4}, "value": 1}\n'),
    ("bad.json", '{"scalecheck": 1,\n "parameters": ["p"],\n "measurements": [\n  {"kernel": "k", "point": {"p": 2},'
                 ' "values": [1.0], "colour": 1}\n ]}\n'),
    ("bad.txt", "PARAMETER p\nPOINTS 2 4\nREGION r\nDATA 1.0\nDATA x\n"),
    ("talpas.txt", '{"parameters":{"x":20};"metric":"time";"callpath":"c";"value":"slow"}\n'),
    ("mystery.out", "hello\n"),
]


@pytest.mark.parametrize("name, text", BAD_FILES, ids=[name for name, _ in BAD_FILES])
def test_read_measurements_text_names_its_source_as_read_measurements_names_the_path(
        make_file, name: str, text: str) -> None:
    path = make_file(name, text)
    with pytest.raises(InputError) as from_path:
        read_measurements(path)
    with pytest.raises(InputError) as from_text:
        read_measurements_text(text, path)
    assert str(from_text.value) == str(from_path.value)
    assert str(from_path.value).startswith(f"{path}:") and from_path.value.fix


def test_read_measurements_text_detects_the_format_from_the_source_name_and_the_text() -> None:
    csv = read_measurements_text("kernel,p,value\nsort,2,1.0\n", "1a2b3c4:bench/r.csv")
    assert str(csv.series[0].source) == "1a2b3c4:bench/r.csv: kernel 'sort', metric 'time'"
    extrap = read_measurements_text("PARAMETER p\nPOINTS 2\nREGION r\nDATA 1.0\n", Path("r.out"))
    assert [s.kernel for s in extrap.series] == ["r"]


def test_read_measurements_text_of_nothing_is_an_empty_file() -> None:
    with pytest.raises(InputError, match=r"^1a2b3c4:r\.json: the file is empty"):
        read_measurements_text(" \n", "1a2b3c4:r.json")


def test_read_measurements_reads_the_file_once(make_file, monkeypatch: pytest.MonkeyPatch) -> None:
    path = make_file("r.out", "PARAMETER p\nPOINTS 2\nREGION r\nDATA 1.0\n")  # detected by its content
    reads: list[Path] = []
    original = Path.open
    monkeypatch.setattr(Path, "open", lambda self, *args, **kw: reads.append(self) or original(self, *args, **kw))
    read_measurements(path)
    assert reads == [path]


def test_every_format_reader_takes_text_and_a_source() -> None:
    texts = {"scalecheck-json": '{"scalecheck": 1, "parameters": ["p"], "measurements": [{"kernel": "k", '
                                '"point": {"p": 2}, "values": [1.0]}]}',
             "jsonl": '{"kernel": "k", "point": {"p": 2}, "value": 1.0}\n',
             "csv": "kernel,p,value\nk,2,1.0\n",
             "extrap-text": "PARAMETER p\nPOINTS 2\nREGION k\nDATA 1.0\n",
             "extrap-json": '{"parameters": ["p"], "measurements": {"k": {"time": [{"point": [2], "values": [1.0]}]}}}',
             "talpas": '{"parameters":{"p":2};"metric":"time";"callpath":"k";"value":1.0}\n',
             "pytest-benchmark": '{"machine_info": {}, "commit_info": {}, "benchmarks": [{"name": "k", "fullname": '
                                 '"k", "params": {"p": 2}, "stats": {"data": [1.0]}}], "datetime": "", '
                                 '"version": "5.1.0"}',
             "google-benchmark": '{"context": {"date": "2024-01-01", "num_cpus": 1}, "benchmarks": [{"name": "k/2", '
                                 '"run_name": "k/2", "run_type": "iteration", "iterations": 1, "real_time": 1.0, '
                                 '"cpu_time": 1.0, "time_unit": "ns"}]}',
             "hyperfine": '{"results": [{"command": "k", "mean": 1.0, "min": 1.0, "max": 1.0, "times": [1.0], '
                          '"parameters": {"n": "2"}}]}',
             "asv": '{"version": 2, "commit_hash": "a1b2c3d", "params": {}, "result_columns": ["result", "params"], '
                    '"results": {"k": [[1.0], [["2"]]]}}'}
    assert tuple(texts) == tuple(FORMATS)
    for fmt, reader in FORMATS.items():
        run = reader(texts[fmt], Path(f"git:{fmt}.data"))
        assert {s.kernel for s in run.series} == {"k"}, fmt  # Google Benchmark: cpu_time and real_time
        assert read_measurements_text(texts[fmt], "x.data", fmt).series[0].kernel == "k"
