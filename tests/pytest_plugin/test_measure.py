"""The measuring engine behind `scaling.measure`, with a fake clock: rounds, the budget, the machine's reference."""

from __future__ import annotations


import numpy as np
import pytest

from scalecheck.core.bound import BoundOptions, check_bound
from scalecheck.core.search import FitOptions
from scalecheck.data.growth import parse_growth
from scalecheck.data.measurement import Series
from scalecheck.pytest_plugin._machine import machine_factors
from scalecheck.pytest_plugin._measure import Measured, Measurer, Sizes, measure_point
from scalecheck.pytest_plugin._scaling import (TIME_RULE, Recorder, ScalingInconclusiveWarning,
                                               ScalingOverBudgetWarning, ScalingResult, Settings, failure_message)


class FakeClock:
    """A clock that only the measured function moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def costs(clock: FakeClock, seconds_per_unit: float, fixed: float = 0.0):  # type: ignore[no-untyped-def]
    def func(n: int) -> None:
        clock.now += fixed + n * seconds_per_unit
    return func


def test_every_value_keeps_its_round_and_extensions_continue_the_numbering() -> None:
    clock = FakeClock()
    measurer = Measurer(costs(clock, 1e-4, 0.01), None, {"n": Sizes(10, 10_000)}, "time", seed=1, clock=clock)
    measured = measurer.run(1.0)
    assert len(measurer.points) >= 5
    for point in measurer.points:
        rounds = measured.rounds[point]
        assert len(rounds) == len(measured.values[point])
        assert rounds == sorted(rounds) and len(set(rounds)) == len(rounds)  # once per round, in order
    first = {r for rounds in measured.rounds.values() for r in rounds}
    measurer.extend(0.5)
    later = {r for rounds in measured.rounds.values() for r in rounds} - first
    assert later and min(later) == max(first) + 1
    assert all(set(measured.rounds[p]) >= later for p in measurer.points)  # an extension round visits every point


def test_rounds_reach_the_series_and_the_records() -> None:
    clock = FakeClock()
    measurer = Measurer(costs(clock, 1e-4, 0.01), None, {"n": Sizes(10, 10_000)}, "time", seed=1, clock=clock)
    measured = measurer.run(1.0)
    result = ScalingResult("k", measurer, measured, Settings(), 1.0)
    series = result.series
    assert series.rounds is not None and series.round_count == measured.round_count() >= 5
    assert np.array_equal(np.isnan(series.rounds), np.isnan(series.values))
    recorder = Recorder()
    recorder.add("k", measured)
    records = recorder.records()
    assert all(len(r["rounds"]) == len(r["values"]) for r in records)
    assert records[0]["rounds"] == measured.rounds[(records[0]["point"]["n"],)]


def test_time_spent_waiting_for_a_cpu_is_not_the_functions() -> None:
    clock = FakeClock()
    queue = FakeClock()  # seconds the thread waited for a CPU so far

    def func(n: int) -> None:
        clock.now += 0.01  # 10 ms of wall time, of which 7 ms another process ran
        queue.now += 0.007

    measured = Measurer(func, None, {"n": [10, 20, 30]}, "time", 0, clock=clock, waited=queue).run(0.5)
    values = [v for vs in measured.values.values() for v in vs]
    assert values and all(v == pytest.approx(0.003) for v in values)


def test_a_slow_first_call_stops_the_measurement() -> None:
    clock = FakeClock()
    measured = Measurer(costs(clock, 0.0, 10.0), None, {"n": Sizes(1_000, 10**6)}, "time", 0, clock=clock).run(0.3)
    assert measured.stopped == "the first call, at the smallest size"
    assert measured.seconds == pytest.approx(10.0)
    assert not measured.values


def test_probes_and_the_minimum_of_rounds_yield_to_the_budget() -> None:
    clock = FakeClock()
    measurer = Measurer(costs(clock, 1e-3), None, {"n": Sizes(100, 100_000)}, "time", 0, clock=clock)
    measured = measurer.run(0.5)  # 5 sizes x 5 rounds would take about 16 s
    assert measured.stopped
    assert measured.seconds <= 3 * 0.5 + 1.6  # stopped after the call under way at the latest (the 5th size)
    assert measured.stopped.startswith(("1 repetition at ", "2 repetitions at ", "3 sizes probed"))


def test_over_budget_passes_with_a_warning_that_says_what_to_do() -> None:
    clock = FakeClock()
    measurer = Measurer(costs(clock, 0.0, 10.0), None, {"n": Sizes(1_000, 10**6)}, "time", 0, clock=clock)
    result = ScalingResult("test_x.py::test_slow", measurer, measurer.run(0.3), Settings(), 0.3)
    with pytest.warns(ScalingInconclusiveWarning) as caught:
        assert result.assert_no_worse_than("n") is None
    assert str(caught[0].message) == (
        "scalecheck: test_x.py::test_slow: bound n not judged: measuring took 10.0 s, more than 3x the budget of "
        "0.3 s, and stopped after the first call, at the smallest size; raise the budget (--scalecheck-budget "
        "SECONDS, or budget=SECONDS) or lower the sizes")
    strict = ScalingResult("k", measurer, measurer.result, Settings(strict=True), 0.3)
    with pytest.raises(pytest.fail.Exception, match="k: bound n not judged: measuring took 10.0 s"):
        strict.assert_no_worse_than("n")


def test_what_was_measured_before_the_stop_is_judged_when_it_is_enough() -> None:
    """A quadratic function whose 5 sizes x 5 rounds would take 1.7 s under a budget of 0.4 s: the stop comes after
    3 or 4 repetitions, enough for a model, so the wrong bound still fails; the warning says the budget was exceeded."""
    clock = FakeClock()
    measurer = Measurer(costs(clock, 0.0), None, {"n": [100, 200, 400, 800, 1600]}, "time", 0, clock=clock)
    measurer.func = lambda n: setattr(clock, "now", clock.now + 1e-7 * n * n)
    measured = measurer.run(0.4)
    assert measured.stopped.startswith(("3 repetitions at 5 sizes", "4 repetitions at 5 sizes"))
    result = ScalingResult("k", measurer, measured, Settings(), 0.4)
    with pytest.warns(ScalingOverBudgetWarning, match="k: bound n judged on what was measured: measuring took "):
        with pytest.raises(pytest.fail.Exception, match="k grows as n\\^2, faster than the bound n"):
            result.assert_no_worse_than("n")
    with pytest.warns(ScalingOverBudgetWarning):
        assert ScalingResult("k", measurer, measured, Settings(), 0.4).assert_no_worse_than("n^2").outcome == "within"


def test_marker_case_stops_over_its_budget() -> None:
    clock = FakeClock()

    def body() -> None:
        clock.now += 1.0

    values, seconds = measure_point(body, "time", 0.1, clock)
    assert values == [1.0] and seconds == pytest.approx(1.0)  # the warm-up alone was over: it is the one value
    values, seconds = measure_point(body, "time", 0.1, clock, warm_up=False)  # a later case of a stopped group
    assert values == [1.0] and seconds == pytest.approx(1.0)


SIZES = (1000, 4000, 16000, 64000, 262144, 1048576, 4194304)
COPY = (1.0, 1.1, 1.0, 2.0, 3.5, 5.0, 6.1)  # seconds per byte of the reference copy, relative to n=1000
GATHER = (1.0, 1.2, 1.5, 1.5, 2.0, 3.0, 4.0)  # seconds per random read, relative


def fake_reference(copy: tuple[float, ...] = COPY, gather: tuple[float, ...] = GATHER) -> Measured:
    measured = Measured(("n",), "time", "s")
    for n, c, g in zip(SIZES, copy, gather):
        point = (float(n),)
        measured.values[point] = [1.0]
        measured.footprint[point] = 8.0 * n
        measured.copy_seconds[point] = [c * 1e-10 * 8 * n * k for k in (1.0, 0.9, 1.1)]  # median: c * 1e-10 / byte
        measured.gather_seconds[point] = [g * 1e-4, g * 1e-4 * 3, g * 1e-4]  # one slow repetition: median ignores it
    return measured


def test_machine_factor_from_reference_timings() -> None:
    machine = machine_factors(fake_reference())
    assert machine is not None
    factors = [machine.factors[(float(n),)] for n in SIZES]
    np.testing.assert_allclose(factors, [1.0, 1.2, 1.5, 2.0, 3.5, 5.0, 6.1], rtol=1e-9)  # the larger, nondecreasing
    assert machine.text((4194304.0,), ("n",)) == ("this machine's reference copy costs 6.1x more per byte at "
                                                  "n=4194304 than at n=1000; judged relative to it")
    assert machine.text((4000.0,), ("n",)) == ("this machine's reference random reads cost 1.2x more per read at "
                                               "n=4000 than at n=1000; judged relative to it")


def test_machine_factor_never_explains_half_a_degree() -> None:
    machine = machine_factors(fake_reference(copy=(1.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0)))
    assert machine is not None
    assert machine.factors[(4000.0,)] == pytest.approx(2.0)  # (4000 / 1000)^(1/2)
    assert machine.factors[(262144.0,)] == pytest.approx(10.0)
    assert machine.text((4000.0,), ("n",)).endswith("(counted as 2x: at most half a degree of growth over these "
                                                    "sizes)")


def test_no_footprint_means_no_machine_factor() -> None:
    measured = Measured(("n",), "time", "s")
    measured.values[(10.0,)] = [1.0]
    assert machine_factors(measured) is None


def planted_rounds(truth, rng: np.random.Generator, sizes=SIZES, rounds: int = 10, noise: float = 0.02,  # type: ignore[no-untyped-def]
                   burst=None) -> Series:
    """A time series measured in `rounds` rounds; `burst(round, sizes)` multiplies a round's values."""
    points = np.array(sizes, dtype=float)
    values = truth(points)[:, None] * (1 + noise * rng.standard_normal((points.size, rounds)))
    if burst is not None:
        values = values * np.stack([burst(r, points) for r in range(rounds)], axis=1)
    numbers = np.broadcast_to(np.arange(rounds, dtype=float), values.shape)
    return Series("k", "time", ("n",), points[:, None], values, "s", rounds=numbers)


TIMED = BoundOptions(**TIME_RULE)  # type: ignore[arg-type]
MEDIAN = FitOptions(aggregate="median")


def test_machine_factor_keeps_the_memory_hierarchy_from_failing_a_bound(rng: np.random.Generator) -> None:
    factor = np.array(COPY)
    series = planted_rounds(lambda n: 1e-9 * n * factor, rng)
    bound = parse_growth("n", ["n"])
    assert check_bound(series, bound, MEDIAN, TIMED).outcome == "exceeds"  # the hierarchy read as growth
    judged = check_bound(series, bound, MEDIAN, TIMED, machine=factor)
    assert judged.outcome != "exceeds"
    assert judged.machine == pytest.approx(6.1)
    wrong = check_bound(series, parse_growth("1", ["n"]), MEDIAN, TIMED, machine=factor)
    assert wrong.outcome == "exceeds"  # a degree of growth is still one
    with pytest.raises(ValueError, match="one factor >= 1 per point"):
        check_bound(series, bound, MEDIAN, TIMED, machine=np.full(len(SIZES), 0.5))


def test_failure_message_shows_the_machine_factor(rng: np.random.Generator) -> None:
    machine = machine_factors(fake_reference())
    assert machine is not None
    factors = np.array([machine.factors[(float(n),)] for n in SIZES])
    series = planted_rounds(lambda n: 1e-12 * n**2, rng)
    check = check_bound(series, parse_growth("n", ["n"]), MEDIAN, TIMED, machine=factors)
    assert check.outcome == "exceeds"
    text = failure_message("k", "n", check, series, 0.95, machine)
    assert ("  machine: this machine's reference copy costs 6.1x more per byte at n=4194304 than at n=1000; judged "
            "relative to it") in text.splitlines()


def test_a_burst_in_some_rounds_is_inconclusive_not_a_failure(rng: np.random.Generator) -> None:
    # linear; rounds 0-4 of 10 hit by load that slows the long timings most (up to 5x at the top)
    def burst(number: int, n: np.ndarray) -> np.ndarray:
        return 1 + 4 * (n / n.max()) ** 0.5 if number < 5 else np.ones_like(n)

    series = planted_rounds(lambda n: 1e-9 * n + 1e-6, rng, burst=burst)
    check = check_bound(series, parse_growth("n", ["n"]), MEDIAN, TIMED)
    assert check.outcome == "inconclusive"
    assert check.above
    clean = planted_rounds(lambda n: 1e-12 * n**2 + 1e-6, rng)
    confirmed = check_bound(clean, parse_growth("n", ["n"]), MEDIAN, TIMED)
    assert confirmed.outcome == "exceeds" and confirmed.halves is True


def test_a_burst_the_round_bootstrap_believes_is_caught_by_the_halves(rng: np.random.Generator) -> None:
    # rounds 0-6 of 10 slowed, the more the longer the timing: 7 of 10 rounds convince the round bootstrap (>= 95% of
    # its resamples grow faster), but the second half of the rounds (5-9) is mostly clean and does not confirm
    def burst(number: int, n: np.ndarray) -> np.ndarray:
        return (n / n.min()) ** 0.6 if number < 7 else np.ones_like(n)

    series = planted_rounds(lambda n: 1e-9 * n + 1e-6, rng, burst=burst)
    check = check_bound(series, parse_growth("n", ["n"]), MEDIAN, TIMED)
    assert 1 - check.within >= 0.95 and check.rise >= check.needed  # everything but the halves says "exceeds"
    assert check.outcome == "inconclusive" and check.halves is False
    assert "does not hold on both halves of the rounds" in check.note
