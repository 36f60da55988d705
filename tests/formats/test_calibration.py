"""Calibration and event files: both formats read alike, units converted, and one exact message per mistake,
naming the file, the 1-based line, what is wrong and the fix."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from scalecheck.errors import InputError
from scalecheck.formats.calibration import read_calibration, read_events

MakeFile = Callable[[str, str], Path]
TIMES = [2.0, 2.5, 2.0, 3.0, 2.0, 4.5, 2.5, 2.0, 3.5, 2.0, 2.5, 2.0]


def jsonl(*records: dict[str, object]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def sample(p: float = 8, size: int = 1024, times: list[float] = TIMES, **extra: object) -> dict[str, object]:
    return {"operation": "MPI_Send", "p": p, "bytes": size, "times": times, **extra}


def test_jsonl_and_csv_calibrations_read_alike(make_file: MakeFile) -> None:
    from_json = read_calibration(make_file("cal.jsonl", jsonl(sample(unit="us", resolution=0.5),
                                                              sample(p=16, unit="us", resolution=0.5))))
    rows = "".join(f"MPI_Send,{p},1024,{t},us,0.5\n" for p in (8, 16) for t in TIMES)
    from_csv = read_calibration(make_file("cal.csv", "operation,p,bytes,time,unit,resolution\n" + rows))
    for a, b in zip(from_json.samples, from_csv.samples, strict=True):
        assert (a.operation, a.processes, a.size, a.resolution) == (b.operation, b.processes, b.size, 5e-7)
        np.testing.assert_allclose(a.times, np.array(TIMES) * 1e-6)
        np.testing.assert_allclose(b.times, a.times)
    assert from_json.samples[0].source is not None and from_json.samples[0].source.line == 1
    assert from_csv.samples[1].source is not None and from_csv.samples[1].source.line == 14


def test_lines_for_the_same_sample_add_timings_and_the_default_resolution_fills_in(make_file: MakeFile) -> None:
    path = make_file("cal.jsonl", jsonl(sample(times=TIMES[:6]), *({"operation": "MPI_Send", "p": 8,
                                                                       "bytes": 1024, "time": t} for t in TIMES[6:])))
    [one] = read_calibration(path, resolution=1e-7).samples
    np.testing.assert_allclose(one.times, TIMES)
    assert one.resolution == 1e-7


def test_events_read_alike_from_jsonl_and_csv(make_file: MakeFile) -> None:
    events = [("msg.c:311", "MPI_Send", 8, 4096, 3.1), ("msg.c:364", "MPI_Recv", 8, 4096, 9.0),
              ("msg.c:311", "MPI_Send", 16, 4096, 3.4)]
    a = read_events(make_file("ev.jsonl", jsonl(*({"location": l, "operation": o, "p": p, "bytes": b, "time": t,
                                                   "unit": "ms"} for l, o, p, b, t in events))))
    b = read_events(make_file("ev.csv", "location,operation,p,bytes,time,unit\n"
                              + "".join(f"{l},{o},{p},{b},{t},ms\n" for l, o, p, b, t in events)))
    for trace in (a, b):
        assert trace.locations == ("msg.c:311", "msg.c:364")
        assert trace.operations == ("MPI_Send", "MPI_Recv")
        np.testing.assert_array_equal(trace.location, [0, 1, 0])
        np.testing.assert_allclose(trace.time, [3.1e-3, 9e-3, 3.4e-3])
        np.testing.assert_array_equal(trace.processes, [8, 8, 16])
    np.testing.assert_array_equal(a.line, [1, 2, 3])
    np.testing.assert_array_equal(b.line, [2, 3, 4])


def test_a_file_without_a_known_suffix_is_told_apart_by_its_first_character(make_file: MakeFile) -> None:
    assert len(read_calibration(make_file("cal.txt", jsonl(sample()))).samples) == 1
    assert len(read_events(make_file("ev.txt", "location,operation,p,bytes,time\na,b,2,0,1.5\n"))) == 1


CALIBRATION_ERRORS = {
    "coarse_resolution": (jsonl(sample(resolution=1e308)), "cal.jsonl:1: sample MPI_Send p=8 bytes=1024: the timer "
                          "resolution 1e+308 s is larger than the largest timing 4.5 s; fix: give the timer's "
                          "resolution, the smallest step it measures, in the record's unit: a timer this coarse could "
                          "not have measured these times"),
    "too_few_values": (jsonl(sample(times=[1.0, 2.0, 3.0])), "cal.jsonl:1: sample MPI_Send p=8 bytes=1024: 3 "
                       "timing(s); a noise model needs at least 10; fix: time this operation at least 10 times at "
                       "this scale (about 200 give a stable t_max)"),
    "all_equal": (jsonl(sample(times=[2.5] * 12)), "cal.jsonl:1: sample MPI_Send p=8 bytes=1024: all 12 timings "
                  "are equal (2.5 s): there is no noise to model; fix: time with a finer timer, or check that "
                  "every repetition was timed on its own"),
    "negative": (jsonl(sample(times=TIMES[:11] + [-1.0])), "cal.jsonl:1: a time cannot be negative, got -1.0"
                 "; fix: correct the value or the timer that produced it"),
    "nan": ('{"operation": "MPI_Send", "p": 8, "bytes": 1, "times": [1.0, NaN]}\n',
            "cal.jsonl:1: a time must be a finite number, got nan; fix: correct the value or the timer that "
            "produced it"),
    "text_time": (jsonl(sample(times=TIMES[:11] + ["fast"])), "cal.jsonl:1: a time must be a number, got 'fast'"
                  "; fix: correct the value or the timer that produced it"),
    "unknown_key": (jsonl({**sample(), "byte": 3}), "cal.jsonl:1: unknown key 'byte'; fix: did you mean "
                    "'bytes'?"),
    "missing_key": (jsonl({"operation": "MPI_Send", "p": 8, "times": TIMES}), "cal.jsonl:1: missing key 'bytes'"
                    "; fix: give 'bytes' as a whole number >= 0 (the message size in bytes)"),
    "fractional_p": (jsonl(sample(p=2.5)), "cal.jsonl:1: 'p' must be a whole number >= 1, got 2.5; fix: give "
                     "'p' as a whole number >= 1 (the process count)"),
    "no_times": (jsonl({"operation": "MPI_Send", "p": 8, "bytes": 1}), "cal.jsonl:1: missing key 'times' (a list) "
                 "or 'time'; fix: give the measured duration(s), e.g. {\"operation\": \"MPI_Send\", \"p\": 8, "
                 "\"bytes\": 1024, \"times\": [2.1e-05, 2.3e-05, 2.2e-05]}"),
    "unit": (jsonl(sample(unit="sec")), "cal.jsonl:1: unknown unit 'sec'; fix: write the unit as s, ms, us or ns"),
    "resolution": (jsonl(sample(resolution=0)), "cal.jsonl:1: 'resolution' must be positive, got 0; fix: give "
                   "the timer resolution as a positive number in the record's unit, or leave it out"),
    "not_object": ("[1, 2]\n", "cal.jsonl:1: a line must hold one JSON object, got a list; fix: write one sample "
                   "per line, e.g. {\"operation\": \"MPI_Send\", \"p\": 8, \"bytes\": 1024, \"times\": [2.1e-05, "
                   "2.3e-05, 2.2e-05]}"),
    "bad_json": (jsonl(sample()) + '{"operation": "MPI_Send",\n', "cal.jsonl:2: not valid JSON: Expecting property "
                 "name enclosed in double quotes (column 26); fix: correct the JSON syntax on this line "
                 "(`python -m json.tool FILE` shows where it breaks)"),
    "incomplete_grid": (jsonl(sample(p=4, size=1), sample(p=4, size=100), sample(p=8, size=1)),
                        "cal.jsonl: operation 'MPI_Send': the grid is incomplete: no sample at (p=8, bytes=100)"
                        "; fix: time MPI_Send at every combination of p in 4, 8 and bytes in 1, 100 (bilinear "
                        "interpolation needs a complete grid)"),
}


@pytest.mark.parametrize("text, message", CALIBRATION_ERRORS.values(), ids=CALIBRATION_ERRORS.keys())
def test_calibration_errors_name_file_line_and_fix(text: str, message: str, make_file: MakeFile) -> None:
    path = make_file("cal.jsonl", text)
    with pytest.raises(InputError) as info:
        read_calibration(path)
    assert str(info.value) == f"{path.parent}/{message}"


CSV_ERRORS = {
    "unknown_column": ("operation,p,size,time\n", "cal.csv:1: unknown column 'size'; fix: the keys are operation, "
                       "p, bytes, time, unit, resolution; the columns are operation,p,bytes,time (unit and resolution "
                       "optional)"),
    "missing_column": ("operation,p,time\n", "cal.csv:1: missing column(s) bytes; fix: the columns are "
                       "operation,p,bytes,time (unit and resolution optional)"),
    "short_row": ("operation,p,bytes,time\nMPI_Send,8,1\n", "cal.csv:2: the row has 3 fields but the header has 4 "
                  "columns; fix: give every row the columns operation,p,bytes,time"),
    "nan_time": ("operation,p,bytes,time\nMPI_Send,8,1,nan\n", "cal.csv:2: a time must be a finite number, got "
                 "'nan'; fix: correct the value or the timer that produced it"),
    "negative_bytes": ("operation,p,bytes,time\nMPI_Send,8,-1,2.0\n", "cal.csv:2: 'bytes' must be a whole number "
                       ">= 0, got -1; fix: give 'bytes' as a whole number >= 0 (the message size in bytes)"),
    "empty_operation": ("operation,p,bytes,time\n,8,1,2.0\n", "cal.csv:2: 'operation' must be a non-empty string, "
                        "got an empty string; fix: name the operation, e.g. MPI_Send"),
    "header_only": ("operation,p,bytes,time\n", "cal.csv: the file holds no calibration samples; fix: write one "
                    "sample per line, e.g. {\"operation\": \"MPI_Send\", \"p\": 8, \"bytes\": 1024, \"times\": "
                    "[2.1e-05, 2.3e-05, 2.2e-05]}"),
}


@pytest.mark.parametrize("text, message", CSV_ERRORS.values(), ids=CSV_ERRORS.keys())
def test_csv_calibration_errors_name_file_line_and_fix(text: str, message: str, make_file: MakeFile) -> None:
    path = make_file("cal.csv", text)
    with pytest.raises(InputError) as info:
        read_calibration(path)
    assert str(info.value) == f"{path.parent}/{message}"


EVENT_ERRORS = {
    "missing_time": ('{"location": "a.c:1", "operation": "MPI_Send", "p": 2, "bytes": 8}\n',
                     "ev.jsonl:1: missing key 'time'; fix: give the measured duration(s), e.g. {\"location\": "
                     "\"solver.c:311\", \"operation\": \"MPI_Send\", \"p\": 8, \"bytes\": 1024, \"time\": 3.1e-05}"),
    "times_list": ('{"location": "a.c:1", "operation": "MPI_Send", "p": 2, "bytes": 8, "times": [1]}\n',
                   "ev.jsonl:1: unknown key 'times'; fix: did you mean 'time'?"),
    "infinite": ('{"location": "a.c:1", "operation": "MPI_Send", "p": 2, "bytes": 8, "time": Infinity}\n',
                 "ev.jsonl:1: a time must be a finite number, got inf; fix: correct the value or the timer that "
                 "produced it"),
    "zero_p": ('{"location": "a.c:1", "operation": "MPI_Send", "p": 0, "bytes": 8, "time": 1}\n',
               "ev.jsonl:1: 'p' must be a whole number >= 1, got 0; fix: give 'p' as a whole number >= 1 (the "
               "process count)"),
    "no_location": ('{"operation": "MPI_Send", "p": 2, "bytes": 8, "time": 1}\n', "ev.jsonl:1: missing key "
                    "'location'; fix: give every record its location"),
    "empty": ("\n\n", "ev.jsonl: the file is empty; fix: check that the benchmark wrote its results to this file"),
}


@pytest.mark.parametrize("text, message", EVENT_ERRORS.values(), ids=EVENT_ERRORS.keys())
def test_event_errors_name_file_line_and_fix(text: str, message: str, make_file: MakeFile) -> None:
    path = make_file("ev.jsonl", text)
    with pytest.raises(InputError) as info:
        read_events(path)
    assert str(info.value) == f"{path.parent}/{message}"


def test_a_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_calibration(tmp_path / "missing.jsonl")
