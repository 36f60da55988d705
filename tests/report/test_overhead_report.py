"""The overhead report: the ranking with its totals, the calibration's noise models, JSON, hostile names inert."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scalecheck.core.overhead import attribute, build_profiles
from scalecheck.data.overhead import EventTrace, OverheadTable
from scalecheck.formats.calibration import read_calibration, read_events
from scalecheck.report.overhead_report import OverheadContext, render_overhead_json, render_overhead_text

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "overhead"
CONTEXT = OverheadContext("calibration.jsonl", "events.csv")


@pytest.fixture(scope="module")
def table() -> OverheadTable:
    profiles = build_profiles(read_calibration(EXAMPLE / "calibration.jsonl"))
    return attribute(read_events(EXAMPLE / "events.csv"), profiles)


def test_text_ranks_locations_with_the_overhead_per_process_count(table: OverheadTable) -> None:
    text = render_overhead_text(table, CONTEXT)
    lines = text.splitlines()
    assert lines[0].startswith("overhead above t_max: ") and "in 1,057 event(s) at 4 location(s)" in lines[0]
    assert "(q_max = 0.95, linear interpolation)" in lines[0]
    head = next(i for i, line in enumerate(lines) if line.startswith("location"))
    assert lines[head].split() == ["location", "operation", "events", "time", "ms", "overhead", "ms", "share",
                                   "clamped", "p=4", "p=8", "p=12", "p=14", "p=21", "p=24", "p=28"]
    ranked = [line.split()[:2] for line in lines[head + 2:head + 6]]
    assert ranked == [["msg_stuff.cpp:364", "MPI_Recv"], ["io.c:88", "MPI_Send"], ["msg_stuff.cpp:311", "MPI_Send"],
                      ["sweep.f:411", "MPI_Allreduce"]]
    assert "  MPI_Send: 7 of 357 event(s); the grid spans p 2..32 and bytes 1..100000" in lines


def test_text_lists_every_calibration_point_with_its_model_and_p_value(table: OverheadTable) -> None:
    lines = render_overhead_text(table, CONTEXT).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("operation       p"))
    points = lines[start + 2:]
    assert len(points) == 90
    first = points[0].split()
    assert first[:5] == ["MPI_Send", "2", "1", "200", "poisson"]
    model = table.profiles[0].models[0]
    assert first[7] == f"{model.p_value:.2g}" and float(first[-1]) == pytest.approx(model.t_max * 1e6, rel=1e-3)
    assert {line.split()[4] for line in points} <= {"poisson", "exponential", "empirical"}


def test_json_holds_rows_totals_and_every_noise_model(table: OverheadTable) -> None:
    doc = json.loads(render_overhead_json(table, CONTEXT))
    assert (doc["scalecheck"], doc["kind"], doc["quantile"], doc["interpolation"]) == (1, "overhead", 0.95, "linear")
    assert doc["rows"][0]["location"] == "msg_stuff.cpp:364"
    assert doc["total"]["overhead"] == pytest.approx(table.total.overhead)
    assert sum(r["overhead"] for r in doc["rows"]) == pytest.approx(table.total.overhead)
    point = doc["profiles"][0]["points"][0]
    assert set(point) == {"p", "bytes", "n", "minimum", "width", "width_source", "step", "model", "t_max",
                          "p_value", "fits"}
    assert [f["family"] for f in point["fits"]] == ["poisson", "exponential"]


def test_hostile_names_stay_on_one_line(table: OverheadTable) -> None:
    trace = EventTrace(("a.c:1\n::error::boom\x1b[31m",), ("MPI_Send",), [0], [0], [8], [1000], [1e-3], [2])
    text = render_overhead_text(attribute(trace, table.profiles), CONTEXT)
    assert "\n::error::" not in text and "\x1b" not in text
    assert "a.c:1\\n::error::boom\\x1b[31m" in text
    assert json.loads(render_overhead_json(attribute(trace, table.profiles), CONTEXT))["rows"][0]["location"] == \
        "a.c:1\n::error::boom\x1b[31m"


def test_untested_calibration_points_say_so() -> None:
    from scalecheck.data.overhead import Calibration, CalibrationSample

    rng = np.random.default_rng(3)
    small = CalibrationSample("op", 2, 8, 1e-6 * (5 + rng.exponential(1.0, 12)))
    profiles = build_profiles(Calibration((small,)))
    trace = EventTrace(("x",), ("op",), [0], [0], [2], [8], [1e-5], [1])
    assert "(untested)" in render_overhead_text(attribute(trace, profiles), CONTEXT)
