"""`scalecheck overhead` through main(argv): the example's ranking, the JSON, and clean errors (exit status 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scalecheck.cli import OK, USAGE_ERROR, main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "overhead"
CALIBRATION, EVENTS = EXAMPLES / "calibration.jsonl", EXAMPLES / "events.csv"


def test_overhead_ranks_the_example_and_lists_the_calibration(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["overhead", "--calibration", str(CALIBRATION), str(EVENTS)]) == OK
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("overhead above t_max: ") and lines[0].endswith("(q_max = 0.95, linear interpolation)")
    head = next(i for i, line in enumerate(lines) if line.startswith("location"))
    assert lines[head + 2].split()[:2] == ["msg_stuff.cpp:364", "MPI_Recv"]
    assert "  MPI_Send: 7 of 357 event(s); the grid spans p 2..32 and bytes 1..100000" in lines
    assert sum(1 for line in lines if line.startswith(("MPI_Send ", "MPI_Recv ", "MPI_Allreduce "))) >= 90


def test_overhead_writes_json_and_takes_the_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "overhead.json"
    assert main(["overhead", "--calibration", str(CALIBRATION), str(EVENTS), "--quantile", "0.9",
                 "--interpolation", "log", "--json", str(out)]) == OK
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert (doc["kind"], doc["quantile"], doc["interpolation"]) == ("overhead", 0.9, "log")
    assert doc["events"] == str(EVENTS) and len(doc["profiles"]) == 3
    assert "(q_max = 0.9, log interpolation)" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--quantile", "0.5"], "scalecheck: error: --quantile must be at least 0.8 and less than 1, got 0.5"
                            "; fix: use a quantile such as 0.95 (Kluge et al.: 0.8 <= q_max < 1)\n"),
    (["--resolution", "0"], "scalecheck: error: --resolution must be a positive number of seconds, got 0"
                            "; fix: give the timer resolution in seconds, e.g. --resolution 1e-7, or leave it out\n"),
])
def test_overhead_rejects_bad_options(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["overhead", "--calibration", str(CALIBRATION), str(EVENTS), *args]) == USAGE_ERROR
    assert capsys.readouterr().err == message


def test_overhead_names_the_trace_line_of_an_uncalibrated_operation(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    events = tmp_path / "events.csv"
    events.write_text("location,operation,p,bytes,time\na.c:1,MPI_Send,8,1000,5e-06\n"
                      "b.c:2,MPI_Bcast,8,1000,5e-06\n", encoding="utf-8")
    assert main(["overhead", "--calibration", str(CALIBRATION), str(events)]) == USAGE_ERROR
    assert capsys.readouterr().err == (
        f"scalecheck: error: {events}:3: 1 event(s) of operation 'MPI_Bcast', which the calibration does not cover "
        "(it calibrates MPI_Send, MPI_Recv, MPI_Allreduce); fix: add samples of MPI_Bcast to the calibration, or "
        "leave its events out of the trace\n")


def test_overhead_reports_a_bad_calibration_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calibration = tmp_path / "cal.jsonl"
    calibration.write_text('{"operation": "MPI_Send", "p": 8, "bytes": 1, "times": [1e-6, 2e-6, 3e-6]}\n',
                           encoding="utf-8")
    assert main(["overhead", "--calibration", str(calibration), str(EVENTS)]) == USAGE_ERROR
    assert capsys.readouterr().err == (
        f"scalecheck: error: {calibration}:1: sample MPI_Send p=8 bytes=1: 3 timing(s); a noise model needs at "
        "least 10; fix: time this operation at least 10 times at this scale (about 200 give a stable t_max)\n")


def test_overhead_without_calibration_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["overhead", str(EVENTS)])
    assert info.value.code == USAGE_ERROR
    assert "the following arguments are required: --calibration" in capsys.readouterr().err
