"""Profiles T_f(p, b) and overhead attribution: grids from calibration samples, bilinear interpolation checked
against closed forms, clamping, and the ranking of a trace whose overheads are known."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scalecheck.core.overhead import attribute, build_profiles, evaluate
from scalecheck.core.tmax import NoiseOptions, fit_noise
from scalecheck.data.noise import FamilyFit, NoiseModel
from scalecheck.data.overhead import Calibration, CalibrationSample, EventTrace, Profile
from scalecheck.errors import InputError, ModelingError
from scalecheck.formats.calibration import read_calibration, read_events

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "overhead"


def _model(t_max: float) -> NoiseModel:
    fits = (FamilyFit("poisson", 1.0, 0.0, 1.0, 1, 0.5), FamilyFit("exponential", 1.0, 0.0, 2.0, 1, 0.2))
    return NoiseModel(200, t_max, 0.1, "resolution", 0.0, 0.95, 0.01, fits, "poisson", t_max)


def profile(table: list[list[float]], processes: list[float], sizes: list[float], name: str = "op") -> Profile:
    grid = np.array(table, dtype=float)
    return Profile(name, np.array(processes, dtype=float), np.array(sizes, dtype=float), grid,
                   tuple(_model(v) for v in grid.ravel()))


def trace(events: list[tuple[str, str, float, float, float]], source: Path | None = None) -> EventTrace:
    locations = tuple(dict.fromkeys(e[0] for e in events))
    operations = tuple(dict.fromkeys(e[1] for e in events))
    return EventTrace(locations, operations, [locations.index(e[0]) for e in events],
                      [operations.index(e[1]) for e in events], [e[2] for e in events], [e[3] for e in events],
                      [e[4] for e in events], list(range(2, len(events) + 2)), source)


def test_build_profiles_arranges_each_samples_t_max_on_its_grid(rng: np.random.Generator) -> None:
    samples = tuple(CalibrationSample(op, p, b, 1e-6 * (5 + b / 100 + p + rng.exponential(1.0, 60)))
                    for op in ("send", "recv") for p in (2, 4) for b in (1, 100, 1000))
    profiles = build_profiles(Calibration(samples))
    assert [p.operation for p in profiles] == ["send", "recv"]
    send = profiles[0]
    np.testing.assert_array_equal(send.processes, [2, 4])
    np.testing.assert_array_equal(send.sizes, [1, 100, 1000])
    for s in samples[:6]:
        single = fit_noise(s.times)
        assert send.model(s.processes, s.size).t_max == pytest.approx(single.t_max)
        i, j = [2, 4].index(s.processes), [1, 100, 1000].index(s.size)
        assert send.t_max[i, j] == pytest.approx(single.t_max)


def test_a_samples_own_resolution_wins_over_the_default(rng: np.random.Generator) -> None:
    times = 1e-6 * (5 + rng.exponential(1.0, 60))
    own = CalibrationSample("op", 2, 8, times, resolution=2e-7)
    other = CalibrationSample("op", 4, 8, times)
    first, second = build_profiles(Calibration((own, other)), NoiseOptions(resolution=5e-8))[0].models
    assert (first.width, second.width) == (pytest.approx(2e-7), pytest.approx(5e-8))


def test_linear_interpolation_is_exact_for_a_bilinear_function() -> None:
    p, b = [2.0, 4.0, 8.0], [1.0, 10.0, 100.0]
    f = lambda p_, b_: 1.0 + 0.5 * p_ + 0.01 * b_ + 0.002 * p_ * b_  # noqa: E731 - bilinear in each cell
    prof = profile([[f(x, y) for y in b] for x in p], p, b)
    queries_p, queries_b = np.array([2.0, 3.0, 5.5, 8.0]), np.array([1.0, 55.0, 7.0, 100.0])
    value, clamped = evaluate(prof, queries_p, queries_b)
    np.testing.assert_allclose(value, f(queries_p, queries_b))
    assert not clamped.any()


def test_log_interpolation_is_exact_for_a_power_law() -> None:
    p, b = [2.0, 4.0, 8.0], [0.0, 9.0, 99.0]
    f = lambda p_, b_: 3.0 * p_ ** 0.5 * (1 + b_) ** 0.8  # noqa: E731 - linear in log p and log(1 + b)
    prof = profile([[f(x, y) for y in b] for x in p], p, b)
    queries_p, queries_b = np.array([3.0, 5.0, 2.0]), np.array([4.0, 50.0, 0.0])
    value, _ = evaluate(prof, queries_p, queries_b, "log")
    np.testing.assert_allclose(value, f(queries_p, queries_b))
    linear, _ = evaluate(prof, queries_p, queries_b)
    assert not np.allclose(linear, f(queries_p, queries_b))


def test_outside_the_grid_is_clamped_to_its_edge_and_flagged() -> None:
    prof = profile([[1.0, 2.0], [3.0, 4.0]], [2, 4], [10, 100])
    value, clamped = evaluate(prof, np.array([1.0, 8.0, 3.0, 4.0]), np.array([10.0, 100.0, 1000.0, 50.0]))
    np.testing.assert_allclose(value, [1.0, 4.0, 3.0, 3.0 + 40 / 90])
    np.testing.assert_array_equal(clamped, [True, True, True, False])


def test_a_single_process_count_or_size_interpolates_along_the_other_axis() -> None:
    prof = profile([[1.0, 3.0]], [8], [0, 100])
    value, clamped = evaluate(prof, np.array([8.0, 16.0]), np.array([50.0, 25.0]))
    np.testing.assert_allclose(value, [2.0, 1.5])
    np.testing.assert_array_equal(clamped, [False, True])


def test_unknown_interpolation_is_a_caller_error_and_log_of_zero_a_modeling_error() -> None:
    prof = profile([[0.0, 1.0]], [8], [0, 100])
    with pytest.raises(ValueError, match="interpolation must be one of"):
        evaluate(prof, np.array([8.0]), np.array([1.0]), "cubic")
    with pytest.raises(ModelingError, match="log-log interpolation needs a positive t_max"):
        evaluate(prof, np.array([8.0]), np.array([1.0]), "log")


def test_attribute_sums_overhead_per_location_and_operation_and_ranks_it() -> None:
    send = profile([[10.0, 20.0], [30.0, 40.0]], [2, 4], [0, 100], "MPI_Send")
    recv = profile([[5.0]], [2], [8], "MPI_Recv")
    events = [("a.c:1", "MPI_Send", 2, 0, 12.0), ("a.c:1", "MPI_Send", 4, 100, 39.0),
              ("a.c:1", "MPI_Send", 3, 50, 30.0), ("b.c:7", "MPI_Recv", 2, 8, 9.0),
              ("b.c:7", "MPI_Recv", 4, 8, 5.5), ("a.c:1", "MPI_Recv", 2, 8, 5.0), ("a.c:1", "MPI_Send", 8, 0, 31.0)]
    table = attribute(trace(events), [send, recv])
    np.testing.assert_allclose(table.event_t_max, [10, 40, 25, 5, 5, 5, 30])
    np.testing.assert_allclose(table.event_overhead, [2, 0, 5, 4, 0.5, 0, 1])
    np.testing.assert_array_equal(table.clamped, [False, False, False, False, True, False, True])
    assert [(r.location, r.operation, r.events, r.overhead, r.clamped) for r in table.rows] == [
        ("a.c:1", "MPI_Send", 4, 8.0, 1), ("b.c:7", "MPI_Recv", 2, 4.5, 1), ("a.c:1", "MPI_Recv", 1, 0.0, 0)]
    assert table.rows[0].by_processes == ((2.0, 2.0), (3.0, 5.0), (4.0, 0.0), (8.0, 1.0))
    assert table.rows[0].time == pytest.approx(112.0)
    assert [(r.location, r.overhead) for r in table.locations] == [("a.c:1", 8.0), ("b.c:7", 4.5)]
    assert [(r.operation, r.overhead) for r in table.operations] == [("MPI_Send", 8.0), ("MPI_Recv", 4.5)]
    assert (table.total.events, table.total.overhead, table.total.clamped) == (7, 12.5, 2)


def test_an_event_of_an_uncalibrated_operation_names_the_trace_line(tmp_path: Path) -> None:
    send = profile([[10.0]], [2], [0], "MPI_Send")
    events = [("a.c:1", "MPI_Send", 2, 0, 12.0), ("a.c:9", "MPI_Isend", 2, 0, 12.0)]
    with pytest.raises(InputError) as info:
        attribute(trace(events, tmp_path / "trace.csv"), [send])
    assert str(info.value) == (
        f"{tmp_path / 'trace.csv'}:3: 1 event(s) of operation 'MPI_Isend', which the calibration does not cover "
        "(it calibrates MPI_Send); fix: add samples of MPI_Isend to the calibration, or leave its events out of "
        "the trace")


def test_sweep3d_example_ranks_the_late_receives_first() -> None:
    calibration = read_calibration(EXAMPLE / "calibration.jsonl")
    table = attribute(read_events(EXAMPLE / "events.csv"), build_profiles(calibration))
    top = table.rows[0]
    assert (top.location, top.operation) == ("msg_stuff.cpp:364", "MPI_Recv")
    by_p = dict(top.by_processes)
    assert by_p[28] > by_p[8] > by_p[4]  # late senders cost more at scale, as in the paper's Table 2
    clamped = {(r.location, r.clamped) for r in table.rows if r.clamped}
    assert clamped == {("io.c:88", 7)}  # 256 KiB is beyond the calibrated 100,000 bytes
    allreduce = next(r for r in table.rows if r.operation == "MPI_Allreduce")
    assert allreduce.share < 0.02  # calibrated noise alone is not overhead
