"""`scalecheck model` on segmented data: the table's segment listing, the JSON keys, and --no-segmentation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scalecheck.cli import OK, main

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "examples" / "segmented.txt"  # the paper's worked example: p^2 for p <= 5, 30 + p from p = 6
CUBE = ROOT / "tests" / "inputs" / "extrap" / "cube_single_parameter.json"


def test_model_lists_segments_and_predicts_with_last(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", str(PAPER), "--target", "p=20"]) == OK
    out = capsys.readouterr().out
    row = out.splitlines()[2]
    assert row.split()[:7] == ["main", "runtime", "30", "+", "1", "*", "p"]
    assert "[p >= 6]" in row and row.rstrip().endswith(" 50")
    listing = out[out.index("segmented:"):].splitlines()
    assert listing[1].strip() == "main [runtime]: 2 segments, change point p=6"
    assert listing[2].split()[:3] == ["p", "<=", "6"] and listing[2].rstrip().endswith("* p^2")
    assert listing[3].split() == ["p", ">=", "6", "30", "+", "1", "*", "p"]


def test_model_json_has_segments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.json"
    assert main(["model", str(PAPER), "--target", "p=20", "--json", str(out)]) == OK
    [model] = json.loads(out.read_text())["models"]
    assert model["segmented"] is True
    assert model["change_point"] == {"parameter": "p", "low": 6.0, "high": 6.0, "shared": True, "text": "p=6"}
    first, last = model["segments"]
    assert (first["start"], first["end"], first["points"], first["status"]) == (1.0, 6.0, 6, "ok")
    assert first["change_point"] is None and first["growth"] == "p^2"
    assert (last["start"], last["end"], last["range"], last["change_point"]["text"]) == (6.0, 10.0, "p >= 6", "p=6")
    assert last["formula"] == model["formula"] and model["prediction"] == pytest.approx(50.0)
    assert last["constant"] == pytest.approx(30.0) and last["terms"][0]["coefficient"] == pytest.approx(1.0)


def test_no_segmentation_gives_one_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.json"
    assert main(["model", str(PAPER), "--no-segmentation", "--json", str(out)]) == OK
    assert "segmented:" not in capsys.readouterr().out
    [model] = json.loads(out.read_text())["models"]
    assert (model["segmented"], model["change_point"], model["segments"]) == (False, None, [])


def test_short_segment_is_insufficient_with_range_to_measure(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # Real data: the matrix-multiply run's first point (x = 1) takes 2.7x the others (a cold start).
    out = tmp_path / "m.json"
    assert main(["model", str(CUBE), "--kernel", "main", "--metric", "time", "--json", str(out)]) == OK
    text = capsys.readouterr().out
    assert "main [time]: 2 segments, change point between x=1 and x=10" in text
    [model] = json.loads(out.read_text())["models"]
    first = model["segments"][0]
    assert first["status"] == "insufficient" and first["points"] == 1
    assert first["note"] == ("1 point(s) in this segment, a reliable model needs 5: measure more points between "
                             "x=1 and x=10")
    assert model["segments"][1]["status"] == "ok" and model["segments"][1]["points"] == 8


def test_unsegmented_json_keys_present(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.json"
    assert main(["model", str(ROOT / "examples" / "mpi_data_mean.txt"), "--json", str(out)]) == OK
    for model in json.loads(out.read_text())["models"]:
        assert (model["segmented"], model["change_point"], model["segments"]) == (False, None, [])
