"""Hostile inputs: numbers no float can hold, deep nesting, a million columns, huge and binary files. Every reader
refuses them with one `InputError` naming the file and the line or record, in bounded time and memory."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import tarfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from scalecheck.cli import USAGE_ERROR, main
from scalecheck.errors import InputError
from scalecheck.formats import MAX_FILE_BYTES, limits, read_many, read_measurements, read_measurements_text
from scalecheck.formats.calibration import read_calibration, read_calibration_text, read_events
from scalecheck.formats.detect import detect_format_text
from scalecheck.formats.metric_lines import MetricLineError, parse_metric_line, read_metric_lines
from scalecheck.formats.processes import read_processes
from scalecheck.formats.source import decode_text, line_of
from scalecheck.formats.writer import dumps_run

MakeFile = Callable[[str, str], Path]
BIG = "1" + "0" * 400  # an integer no float can hold: float() raises OverflowError
HUGE = "7" * 5000  # past the 4,300 digits that int() parses
DEEP = "[" * 3000 + "]" * 3000  # deeper than the JSON decoder's stack
TIMES = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
FINITE = "must be a finite number, got inf"


def sc_json(value: str = "1.5", p: str = "8") -> str:
    return ('{"scalecheck": 1, "parameters": ["p"], "measurements": [\n'
            f' {{"kernel": "k", "point": {{"p": {p}}}, "values": [{value}]}}\n]}}\n')


def jsonl(value: str = "1.5", p: str = "8") -> str:
    return (f'{{"kernel": "k", "point": {{"p": {p}}}, "value": {value}}}\n'
            '{"kernel": "k", "point": {"p": 16}, "value": 2}\n')


def extrap_json(value: str = "1.5", p: str = "8") -> str:
    return (f'{{"parameters": ["p"],\n'
            f' "measurements": {{"k": {{"time": [{{"point": [{p}], "values": [{value}]}}]}}}}}}\n')


def legacy(value: str = "3.5", pvalue: str = "8", coordinate_id: str = "1", parameter_id: str = "1") -> str:
    return ('{"parameters": [{"id": PID, "name": "p"}], "callpaths": [{"id": 1, "name": "k"}],\n'
            ' "metrics": [{"id": 1, "name": "time"}],\n'
            ' "coordinates": [{"id": 1, "parameter_value_pairs": [{"parameter_id": PID, "parameter_value": PV}]}],\n'
            ' "measurements": [{"id": 1, "callpath_id": 1, "coordinate_id": CID, "metric_id": 1, "value": VAL}]}\n'
            ).replace("PID", parameter_id).replace("PV", pvalue).replace("CID", coordinate_id).replace("VAL", value)


def talpas(value: str = "82.0", x: str = "20") -> str:
    return (f'{{"parameters":{{"x":{x}}};"metric":"time";"callpath":"compute";"value":{value}}}\n'
            '{"parameters":{"x":40};"metric":"time";"callpath":"compute";"value":90.0}\n')


def problem_of(path: Path, read: Callable[[Path], object] = read_measurements) -> str:
    """The error `read` raises for `path`, as printed, with the folder dropped."""
    with pytest.raises(InputError) as info:
        read(path)
    assert info.value.fix
    return str(info.value).replace(f"{path.parent}/", "")


# --- numbers too large for a float, and nesting too deep: every reader, one line naming where ----------------------

@pytest.mark.parametrize("name, text, message", [
    ("value.json", sc_json(BIG), f"value.json:2: measurements[0]: the measured value {FINITE}"),
    ("digits.json", sc_json(HUGE), f"digits.json:2: measurements[0]: the measured value {FINITE}"),
    ("point.json", sc_json(p=BIG), f"point.json:2: measurements[0]: parameter 'p' {FINITE}"),
    ("point_digits.json", sc_json(p=HUGE), f"point_digits.json:2: measurements[0]: parameter 'p' {FINITE}"),
    ("value.jsonl", jsonl(BIG), f"value.jsonl:1: the measured value {FINITE}"),
    ("digits.jsonl", jsonl(HUGE), f"digits.jsonl:1: the measured value {FINITE}"),
    ("point.jsonl", jsonl(p=HUGE), f"point.jsonl:1: parameter 'p' {FINITE}"),
    ("new_value.json", extrap_json(BIG), f'new_value.json:2: measurements["k"]["time"][0]: the measured value '
                                         f"{FINITE}"),
    ("new_point.json", extrap_json(p=HUGE), f"new_point.json:2: measurements[\"k\"][\"time\"][0]: parameter 'p' "
                                            f"{FINITE}"),
    ("legacy_value.json", legacy(BIG), f"legacy_value.json:4: measurements[0]: the measured value {FINITE}"),
    ("legacy_digits.json", legacy(HUGE), f"legacy_digits.json:4: measurements[0]: the measured value {FINITE}"),
    ("legacy_point.json", legacy(pvalue=BIG), f"legacy_point.json:3: coordinates[0]: parameter 'p' {FINITE}"),
    ("legacy_id.json", legacy(coordinate_id=HUGE), "legacy_id.json:4: measurements[0]: unknown coordinate_id Infinity"),
    ("talpas.txt", talpas(BIG), f"talpas.txt:1: the measured value {FINITE}"),
    ("talpas_digits.txt", talpas(HUGE), f"talpas_digits.txt:1: the measured value {FINITE}"),
    ("talpas_point.txt", talpas(x=HUGE), f"talpas_point.txt:1: parameter 'x' {FINITE}"),
])
def test_a_number_no_float_holds_is_not_finite_where_it_stands(make_file: MakeFile, name: str, text: str,
                                                               message: str) -> None:
    assert problem_of(make_file(name, text)).split("; fix: ")[0] == message


def test_a_legacy_id_too_large_for_a_float_still_identifies_its_entry(make_file: MakeFile) -> None:
    run = read_measurements(make_file("legacy.json", legacy(parameter_id=BIG)))  # ids are sorted as numbers
    assert run.parameters == ("p",)
    assert run.series[0].values.tolist() == [[3.5]]


@pytest.mark.parametrize("name, text, message", [
    ("value.csv", f"kernel,p,value\nk,8,{HUGE}\n", "value.csv:2: the measured value must be a finite number, got "
                                                  "'777777777777777777777777777777777777..."),
    ("value.txt", f"PARAMETER p\nPOINTS 8 16\nREGION r\nDATA {HUGE}\nDATA 2\n",
     "value.txt:4: region 'r': the measured value must be a finite number, got "
     "'777777777777777777777777777777777777..."),
])
def test_text_formats_read_long_numbers_as_floats_too(make_file: MakeFile, name: str, text: str,
                                                      message: str) -> None:
    assert problem_of(make_file(name, text)).split("; fix: ")[0] == message


@pytest.mark.parametrize("name, text, message", [
    ("deep.json", sc_json(DEEP), "deep.json:2: not valid JSON: nested too deeply"),
    ("deep.jsonl", '{"kernel": "k", "point": {"p": 8}, "value": 1}\n' * 2 + jsonl(DEEP),
     "deep.jsonl:3: not valid JSON: nested too deeply"),
    ("deep_new.json", extrap_json(DEEP), "deep_new.json:2: not valid JSON: nested too deeply"),
    ("deep.txt", talpas(DEEP), "deep.txt:1: not valid JSON: nested too deeply"),
    # no extension: the format is told from the first line, which the decoder cannot take apart
    ("deep_first_line", '{"a": ' + DEEP + "}\n", "deep_first_line:1: not valid JSON: nested too deeply"),
    ("deep_first_of_two", '{"a": ' + DEEP + '}\n{"kernel": "k"}\n',
     "deep_first_of_two:1: not valid JSON: nested too deeply"),
])
def test_nesting_too_deep_for_the_decoder_names_its_line(make_file: MakeFile, name: str, text: str,
                                                          message: str) -> None:
    assert problem_of(make_file(name, text)).split("; fix: ")[0] == message


def test_detection_survives_a_first_line_nested_too_deeply() -> None:
    assert detect_format_text('{"a": ' + DEEP + "}\n", Path("r.out")) == "extrap-json"  # whose reader says why


def test_line_of_survives_a_value_nested_too_deeply_before_the_one_sought() -> None:
    assert line_of('{"a": ' + DEEP + ',\n "b": 1}', ("b",)) is None


def test_a_deeply_nested_version_is_shown_short() -> None:
    with pytest.raises(InputError) as info:
        read_measurements_text('{"scalecheck": ' + "[" * 300 + "]" * 300 + ', "parameters": ["p"], '
                               '"measurements": []}', "r.json")
    assert info.value.problem == ("unsupported scalecheck format version " + "[" * 57 + "...; this scalecheck reads "
                                  "version 1")


def test_the_writer_keeps_a_meta_value_nested_too_deeply_as_text() -> None:
    run = read_measurements_text(jsonl(), "r.jsonl")
    machine = '{"a": ' + DEEP + "}"
    doc = json.loads(dumps_run(run, {"machine": machine}))
    assert doc["meta"] == {"machine": machine}


@pytest.mark.parametrize("text, message", [
    ('{"scalecheck": 1, "processes": [{"id": ' + HUGE + ', "paths": ["a->b"]}]}',
     "p.json:1: processes[0]: 'id' must be a non-empty string or a whole number, got Infinity"),
    ('{"scalecheck": 1, "processes": [{"id": ' + DEEP + ', "paths": ["a->b"]}]}',
     "p.json:1: not valid JSON: nested too deeply"),
    ('{"id": ' + HUGE + ', "paths": ["a->b"]}\n{"id": 2, "paths": ["a->b"]}\n',
     "p.json:1: 'id' must be a non-empty string or a whole number, got Infinity"),
])
def test_processes_refuse_huge_and_deep_values(make_file: MakeFile, text: str, message: str) -> None:
    assert problem_of(make_file("p.json", text), read_processes).split("; fix: ")[0] == message


@pytest.mark.parametrize("name, line, message", [
    ("cal.jsonl", f'{{"operation": "MPI_Send", "p": {BIG}, "bytes": 8, "times": {TIMES}}}',
     f"cal.jsonl:1: 'p' {FINITE}"),
    ("cal.jsonl", f'{{"operation": "MPI_Send", "p": 2, "bytes": {HUGE}, "times": {TIMES}}}',
     f"cal.jsonl:1: 'bytes' {FINITE}"),
    ("cal.jsonl", f'{{"operation": "MPI_Send", "p": 2, "bytes": 8, "times": [{BIG}, 1, 2, 3, 4, 5, 6, 7, 8, 9]}}',
     f"cal.jsonl:1: a time {FINITE}"),
    ("events.jsonl", f'{{"location": "a.c:1", "operation": "MPI_Send", "p": 2, "bytes": {BIG}, "time": 1e-05}}',
     f"events.jsonl:1: 'bytes' {FINITE}"),
    ("events.jsonl", f'{{"location": "a.c:1", "operation": "MPI_Send", "p": 2, "bytes": 8, "time": {DEEP}}}',
     "events.jsonl:1: not valid JSON: nested too deeply"),
])
def test_calibration_and_events_refuse_huge_values(make_file: MakeFile, name: str, line: str, message: str) -> None:
    read = read_events if name.startswith("events") else read_calibration
    assert problem_of(make_file(name, line + "\n"), read).split("; fix: ")[0] == message


@pytest.mark.parametrize("text, problem", [
    (f'{{"kernel": "k", "value": {BIG}}}', "Infinity is not a finite number"),
    (f'{{"kernel": "k", "values": [1, {HUGE}]}}', "Infinity is not a finite number"),
    (f'{{"kernel": "k", "value": {DEEP}}}', "not JSON: nested too deeply"),
])
def test_metric_lines_refuse_huge_and_deep_values(text: str, problem: str) -> None:
    with pytest.raises(MetricLineError) as info:
        parse_metric_line(3, text)
    assert (info.value.problem, info.value.number) == (problem, 3)


def test_a_metrics_file_past_the_limit_is_refused_at_the_line_that_crosses_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scalecheck.formats import metric_lines

    monkeypatch.setattr(metric_lines, "MAX_FILE_BYTES", 2**20)
    path = tmp_path / "metrics"
    path.write_text('{"kernel": "k", "value": 1}\n' * 40_000)  # 28 bytes a line: line 37,450 crosses 1 MiB
    with pytest.raises(MetricLineError) as info:
        read_metric_lines(path)
    assert (info.value.problem, info.value.number) == ("the metrics file is larger than 1 MiB", 37_450)


@pytest.mark.parametrize("name, text", [
    ("value.json", sc_json(HUGE)),
    ("deep.jsonl", jsonl(DEEP)),
    ("legacy.json", legacy(HUGE)),
    ("talpas.txt", talpas(HUGE)),
    ("deep_first_line", '{"a": ' + DEEP + "}\n"),
])
def test_model_prints_one_error_line_and_exits_2(make_file: MakeFile, capsys: pytest.CaptureFixture[str],
                                                 name: str, text: str) -> None:
    path = make_file(name, text)
    assert main(["model", str(path)]) == USAGE_ERROR
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"scalecheck: error: {path}:"), err


# --- duplicate names: linear checks, the same messages ---------------------------------------------------------------

NAMES = [f"x{i}" for i in range(30_000)]


@pytest.mark.wall_clock
@pytest.mark.parametrize("name, text, message", [
    ("r.csv", "kernel," + ",".join(NAMES) + ",x29999,value\n", "r.csv:1: column 'x29999' appears twice"),
    ("r.json", json.dumps({"scalecheck": 1, "parameters": [*NAMES, "x5", "x29999"], "measurements": []}),
     "r.json:1: parameters: parameter 'x29999' is declared twice"),  # the first in sorted order, as before
    ("line.txt", "PARAMETER " + " ".join(NAMES) + " x7\n", "line.txt:1: parameter 'x7' is declared twice"),
    ("lines.txt", "PARAMETER x1 x2\nPARAMETER x3 x2\n", "lines.txt:2: parameter 'x2' is declared twice"),
])
def test_a_name_declared_twice_among_30000_is_found_at_once(make_file: MakeFile, name: str, text: str,
                                                            message: str) -> None:
    path = make_file(name, text)
    start = time.perf_counter()
    problem = problem_of(path).split("; fix: ")[0]
    assert time.perf_counter() - start < 1.0  # 4 to 11 s when each name was counted in the whole list
    assert problem == message


@pytest.mark.parametrize("name, text, message", [
    ("r.csv", "kernel," + ",".join(NAMES[:17]) + ",value\n", "r.csv:1: 17 parameters, more than the 16 scalecheck "
                                                             "can model"),
    ("r.json", json.dumps({"scalecheck": 1, "parameters": NAMES, "measurements": []}),
     "r.json:1: parameters: 30,000 parameters, more than the 16 scalecheck can model"),
    ("r.jsonl", json.dumps({"kernel": "k", "point": {n: 1 for n in NAMES[:17]}, "value": 1}) + "\n",
     "r.jsonl:1: 17 parameters, more than the 16 scalecheck can model"),
    ("new.json", json.dumps({"parameters": NAMES[:17], "measurements": {}}),
     "new.json:1: parameters: 17 parameters, more than the 16 scalecheck can model"),
    ("lines.txt", "".join(f"PARAMETER {n}\n" for n in NAMES), "lines.txt:17: 17 parameters, more than the 16 "
                                                              "scalecheck can model"),
])
def test_more_parameters_than_a_model_can_take_are_refused(make_file: MakeFile, name: str, text: str,
                                                           message: str) -> None:
    assert problem_of(make_file(name, text)).split("; fix: ")[0] == message


@pytest.mark.wall_clock
def test_calibration_grids_of_many_operations_are_checked_in_one_pass() -> None:
    text = "".join(f'{{"operation": "op{i}", "p": 2, "bytes": 8, "times": {TIMES}}}\n' for i in range(10_000))
    start = time.perf_counter()
    assert len(read_calibration_text(text, Path("cal.jsonl")).samples) == 10_000
    assert time.perf_counter() - start < 1.0  # 2 s when each operation's samples were found in all of them


@pytest.mark.wall_clock
def test_a_sparse_calibration_grid_names_a_few_holes_without_listing_all() -> None:
    text = "".join(f'{{"operation": "op", "p": {i + 1}, "bytes": {i}, "times": {TIMES}}}\n' for i in range(4000))
    start = time.perf_counter()
    with pytest.raises(InputError) as info:
        read_calibration_text(text, Path("cal.jsonl"))
    assert time.perf_counter() - start < 1.0  # 4 s and 1 GB when all 16 million holes were listed
    assert info.value.problem == ("the grid is incomplete: no sample at (p=1, bytes=1), (p=1, bytes=2), "
                                  "(p=1, bytes=3), (p=1, bytes=4) and 15995996 more")


# --- size limits ------------------------------------------------------------------------------------------------------

def test_a_file_larger_than_the_limit_is_refused_before_it_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    row = b"k,8,1.5\n"
    path.write_bytes(b"kernel,p,value\n" + row * (MAX_FILE_BYTES // len(row) + 1))
    assert problem_of(path) == ("big.csv: the file is larger than 8 MiB, the most scalecheck reads in one file; fix: "
                                "split it into several files (for example one per benchmark) and name them all: "
                                "scalecheck merges the files it is given")


def test_a_text_larger_than_the_limit_is_refused_too() -> None:
    text = "kernel,p,value\n" + "k,8,1.5\n" * (MAX_FILE_BYTES // 8 + 1)
    with pytest.raises(InputError, match=r"^1a2b3c4:big\.csv: the file is larger than 8 MiB"):
        read_measurements_text(text, "1a2b3c4:big.csv")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_device_without_end_is_read_to_the_limit_only() -> None:
    with pytest.raises(InputError, match=r"^/dev/zero: the file is larger than 8 MiB"):
        read_measurements(Path("/dev/zero"), "csv")


@pytest.mark.parametrize("limit, value, text, message", [
    ("MAX_RECORDS", 3, jsonl() * 2, "r.jsonl:4: more than 3 measurements (rows, records or DATA lines) in one file"),
    ("MAX_VALUES", 4, '{"kernel": "k", "point": {"p": 8}, "values": [1, 2, 3]}\n' * 2,
     "r.jsonl:2: more than 4 measured values in one file"),
    ("MAX_SERIES", 2, "".join(f'{{"kernel": "k{i}", "point": {{"p": 8}}, "value": 1}}\n' for i in range(3)),
     "r.jsonl:3: more than 2 (kernel, metric) pairs in one file"),
])
def test_a_file_past_a_count_limit_is_refused_at_the_record_that_crosses_it(
        make_file: MakeFile, monkeypatch: pytest.MonkeyPatch, limit: str, value: int, text: str, message: str) -> None:
    monkeypatch.setattr(limits, limit, value)
    assert problem_of(make_file("r.jsonl", text)) == f"{message}; fix: {limits.SPLIT_FIX}"


def test_one_point_repeated_far_more_than_the_others_is_refused_before_its_table_is_made(make_file: MakeFile) -> None:
    # 2,001 points of one value each and 2,001 values at one of them: a table of 2,001 x 2,001 cells
    text = "".join(f'{{"kernel": "k", "point": {{"p": {p}}}, "value": 1}}\n' for p in range(2, 2002))
    repeated = '{"kernel": "k", "point": {"p": 1}, "values": [%s]}\n' % ", ".join(["1"] * 2001)
    path = make_file("r.jsonl", text + repeated)
    assert problem_of(path) == (
        "r.jsonl: kernel 'k', metric 'time' has 2,001 points and 2,001 values at one of them; stored as a table of "
        "points by repetitions, the file's values take 4,004,001 cells, more than the 4,000,000 scalecheck holds; "
        "fix: measure every point about as often as the others (a few to a few hundred repetitions each)")


def test_files_each_within_the_limit_that_merge_past_it_are_refused(make_file: MakeFile) -> None:
    many_points = make_file("a.jsonl", "".join(f'{{"kernel": "k", "point": {{"p": {p}}}, "value": 1}}\n'
                                               for p in range(2, 2003)))
    many_values = make_file("b.jsonl", '{"kernel": "k", "point": {"p": 1}, "values": [%s]}\n'
                            % ", ".join(["1"] * 2001))
    with pytest.raises(InputError) as info:
        read_many([many_points, many_values])
    assert str(info.value).replace(f"{many_values.parent}/", "") == (
        "b.jsonl: merged with the other files, kernel 'k', metric 'time' has 2,002 points and 2,001 values at one of "
        "them; stored as a table of points by repetitions, the files' values take 4,006,002 cells, more than the "
        "4,000,000 scalecheck holds; fix: measure every point about as often as the others, or model these files "
        "separately")


def test_a_processes_file_past_the_limit_is_refused(make_file: MakeFile, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_PROCESSES", 2)
    monkeypatch.setattr("scalecheck.formats.processes.MAX_PROCESSES", 2)
    lines = "".join(f'{{"id": {i}, "paths": ["a->b"]}}\n' for i in range(3))
    assert problem_of(make_file("p.jsonl", lines), read_processes) == (
        "p.jsonl:3: 3 processes, more than the 2 scalecheck clusters from one file; fix: cluster a representative "
        "subset of the processes (for example the ranks of one node)")


# --- binary files are named for what they are ----------------------------------------------------------------------

CSV = b"kernel,p,value\nk,8,1.5\n"


def _zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("experiment.json", "{}")
    return out.getvalue()


def _tar() -> bytes:  # a Score-P .cubex profile is a tar archive of anchor.xml and binary data
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        info = tarfile.TarInfo("anchor.xml")
        info.size = len(CSV)
        archive.addfile(info, io.BytesIO(CSV))
    return out.getvalue()


@pytest.mark.parametrize("name, data, problem", [
    ("r.csv.gz", gzip.compress(CSV), "this is a gzip-compressed file, not a text file"),
    ("r.csv", bz2.compress(CSV), "this is a bzip2-compressed file, not a text file"),
    ("r.json", lzma.compress(CSV), "this is an xz-compressed file, not a text file"),
    ("exp.extra-p", _zip(), 'not an Extra-P experiment: experiment.json has no "parameters"'),
    ("profile.cubex", _tar(), "not a CUBE profile: its anchor.xml is not an XML document"),
    ("bench", b"\x7fELF\x02\x01\x01" + bytes(57), "this is an executable program (ELF), not a text file"),
    # the first bytes of experiment_3 in Extra-P's test data
    ("experiment_3", b"\x01\x00\x11\x00\x00\x00EXTRAP_EXPERIMENT\x03\x00\x00\x001.0", "this is an Extra-P 3 "
     "experiment, not a text file"),
    ("r.csv", "kernel,p,value\n".encode("utf-16"), "the file is UTF-16 text, not UTF-8"),
    ("r.jsonl", '{"kernel": "k"}\n'.encode("utf-16-le"), "the file is UTF-16 text, not UTF-8"),
    ("r.csv", b"kernel,p,value\nk,8,1.5\x00\n", "this is binary data, not a text file (a NUL byte at offset 22)"),
])
def test_a_binary_file_is_named_for_what_it_is(tmp_path: Path, name: str, data: bytes, problem: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as info:
        read_measurements(path)
    assert info.value.problem == problem
    assert "iconv" not in str(info.value) or "UTF-16" in problem  # converting an archive's encoding cannot help


def test_random_bytes_are_binary_data_not_text_in_another_encoding(rng: np.random.Generator) -> None:
    data = rng.integers(1, 256, 4096, dtype=np.uint8).tobytes()  # no NUL byte
    with pytest.raises(InputError) as info:
        decode_text(data, Path("1a2b3c4:bench/r.json"))  # as a file from git is decoded
    assert info.value.problem.startswith("this is binary data, not a text file (byte 0x")
    assert info.value.fix == ("check that this is a measurement file: scalecheck reads text (JSON, JSON Lines, CSV, "
                              "Extra-P text), Score-P .cubex profiles and Extra-P .extra-p experiments")


def test_latin1_text_still_gets_the_advice_to_convert_it(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_bytes("kernel,p,value\nl\xf6sen,2,1.0\n".encode("latin-1"))
    assert problem_of(path) == ("r.csv:2: the file is not UTF-8 text (byte 0xf6 at offset 16); fix: save the file as "
                                "UTF-8 (for example `iconv -t UTF-8`), or check that it is a measurement file")
