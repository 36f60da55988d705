"""core.measured: findings at the measured points themselves, on planted series (seeded)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from scalecheck.core.compare import CompareOptions, compare
from scalecheck.core.gate import verdict
from scalecheck.core.measured import (SeriesPair, between_rounds, measured_findings, measured_round_findings,
                                      top_point_finding, unmodeled_finding)
from scalecheck.data.measurement import Series
from scalecheck.data.verdict import Finding

P = 2.0 ** np.arange(1, 9)  # 2 .. 256
TARGET = {"p": 4096.0}
THRESHOLD = CompareOptions().threshold
TEMPLATE = Finding(kernel="k", metric="time", kind="growth", message="", evidence={"baseline": "b"})


def series(function: Callable[[np.ndarray], np.ndarray], rng: np.random.Generator, kernel: str = "k",
           noise: float = 0.05, points: np.ndarray = P) -> Series:
    values = function(points)[:, None] * (1 + noise * rng.standard_normal((points.size, 5)))
    return Series(kernel, "time", ("p",), points[:, None], values)


def rounds_of(levels: list[float], rng: np.random.Generator, function: Callable[[np.ndarray], np.ndarray],
              reps: int = 5) -> Series:
    """A series measured in rounds: round k's repetitions all carry the level levels[k] (load during that run)."""
    values = np.hstack([function(P)[:, None] * level * (1 + 0.02 * rng.standard_normal((P.size, reps)))
                        for level in levels])
    rounds = np.hstack([np.full((P.size, reps), k + 1.0) for k in range(len(levels))])
    return Series("k", "time", ("p",), P[:, None], values, rounds=rounds)


def test_series_pair_shares_the_points_both_measured_in_the_candidates_order(rng: np.random.Generator) -> None:
    base = series(lambda p: 1 + p, rng, points=np.array([2.0, 4.0, 8.0, 16.0]))
    cand = series(lambda p: 1 + p, rng, points=np.array([4.0, 16.0, 32.0]))
    pair = SeriesPair(baseline=base, candidate=cand)
    assert pair.key == ("k", "time")
    assert pair.shared() == [(1, 0), (3, 1)]
    assert not pair.in_rounds


@pytest.mark.parametrize("factor, found", [(1.3, True), (1.0, False)], ids=["slower", "same"])
def test_measured_findings_test_a_slowdown_at_the_shared_points(factor: float, found: bool,
                                                                rng: np.random.Generator) -> None:
    """30% slower at every point: a tiny p-value, an effect of 1.3x and the condition (beyond the threshold) met."""
    base = series(lambda p: 10 + 0.1 * p, rng, noise=0.02)
    cand = series(lambda p: factor * (10 + 0.1 * p), rng, noise=0.02)
    (pending,) = measured_findings([SeriesPair(baseline=base, candidate=cand)], THRESHOLD).values()
    assert pending.test == "measured" and pending.key == ("k", "time")
    assert pending.finding.ratio == pytest.approx(factor, rel=0.02)
    assert pending.finding.evidence == {"points": P.size}
    assert (pending.p_value < 1e-6) is found and pending.condition is found


@pytest.mark.parametrize("rounds, significant", [(2, False), (4, True)], ids=["two_rounds", "four_rounds"])
def test_a_measured_slowdown_in_rounds_needs_rounds_that_agree(rounds: int, significant: bool,
                                                                 rng: np.random.Generator) -> None:
    """Candidate rounds all 1.3x slower: with two rounds a side the rank test of round levels cannot tell that from
    two runs' own disagreement (p >= 1/6); with four a side it can (p = 1/70). No overhead test runs on rounds
    (its null model needs exchangeable repetitions)."""
    linear = (lambda p: 1 + 0.1 * p)
    base = rounds_of([1.0 + 0.02 * k for k in range(rounds)], rng, linear, reps=10)
    cand = rounds_of([1.3 + 0.02 * k for k in range(rounds)], rng, linear, reps=10)
    (test,) = measured_round_findings([SeriesPair(baseline=base, candidate=cand)], THRESHOLD).values()
    assert (test.p_value <= 0.05) is significant and test.condition
    assert test.finding.ratio == pytest.approx(1.3, rel=0.03)
    assert f"{rounds} candidate rounds against {rounds} baseline rounds" in test.finding.message
    assert all(f.kind != "overhead" for f in compare([base], [cand], TARGET).findings)


def test_between_rounds_is_the_variance_of_the_round_levels(rng: np.random.Generator) -> None:
    """Rounds at levels 1, 1.2, 1.44 (log steps of log 1.2) on both sides: the variance of a round's log level is
    that of (-1, 0, 1) log 1.2, i.e. log(1.2)^2; without pairs measured in rounds, 0."""
    linear = (lambda p: 1 + 0.1 * p)
    levels = [1.0, 1.2, 1.44]
    pair = SeriesPair(baseline=rounds_of(levels, rng, linear, reps=20),
                      candidate=rounds_of(levels, rng, linear, reps=20))
    assert pair.in_rounds
    assert between_rounds([pair]) == pytest.approx(np.log(1.2) ** 2, rel=0.1)
    assert between_rounds([]) == 0.0


def test_the_largest_measured_scale_is_compared_point_for_point(rng: np.random.Generator) -> None:
    """A kernel 1.25x slower at its largest measured size only: a test of that point, reported as a prediction, and
    not repeated when a model-based prediction finding already explains the kernel."""
    flat = series(lambda p: 5 + 0 * p, rng, noise=0.02)
    top = series(lambda p: np.where(p == 256, 6.25, 5.0), rng, noise=0.02)
    test = top_point_finding(SeriesPair(baseline=flat, candidate=top), TEMPLATE, THRESHOLD)
    assert test is not None and test.test == "top" and test.condition and test.p_value < 1e-3
    assert test.finding.kind == "prediction" and test.finding.ratio == pytest.approx(1.25, rel=0.05)
    assert "x the baseline at p=256, the largest scale both commits measured (1" in test.finding.message
    assert test.finding.evidence["baseline"] == "b" and test.finding.evidence["basis"] == "the largest measured scale"
    assert top_point_finding(SeriesPair(baseline=flat, candidate=flat), TEMPLATE, THRESHOLD) is None
    # a finding also needs the prediction at the target beyond the threshold: a rise the models say stays below it
    # (a lead coefficient a few percent larger) is not a regression
    for predicted, agrees in ((1.05, False), (1.3, True), (None, True)):
        probe = top_point_finding(SeriesPair(baseline=flat, candidate=top), TEMPLATE, THRESHOLD, predicted)
        assert probe is not None and probe.condition is agrees and probe.p_value == test.p_value
    slower = series(lambda p: 6.25 + 0 * p, rng, noise=0.02)  # 1.25x everywhere: not a rise toward the top
    assert top_point_finding(SeriesPair(baseline=flat, candidate=slower), TEMPLATE, THRESHOLD) is None
    outcome = verdict(compare([flat], [top], TARGET, settings=CompareOptions(resamples=60)))
    predictions = [f for f in outcome.failures if f.kind == "prediction"]
    assert [f.evidence["basis"] for f in predictions] == ["each commit's own model"]  # not repeated for the point


def test_a_rise_at_the_top_fails_where_the_models_claim_an_improvement(rng: np.random.Generator) -> None:
    """A prediction below the threshold keeps a rise at the top from failing, unless the models claim an improvement
    that the rise contradicts: then what is measured wins."""
    flat = series(lambda p: 5 + 0 * p, rng, noise=0.02)
    top = series(lambda p: np.where(p == 256, 6.25, 5.0), rng, noise=0.02)
    pair = SeriesPair(baseline=flat, candidate=top)
    claimed = top_point_finding(pair, TEMPLATE, THRESHOLD, 0.6, improved=True)
    assert claimed is not None and claimed.condition
    assert claimed.finding.message.endswith("; the models claim an improvement (0.6x at the target), which this rise "
                                            "contradicts")
    quiet = top_point_finding(pair, TEMPLATE, THRESHOLD, 0.6)
    assert quiet is not None and not quiet.condition and quiet.p_value == claimed.p_value
    assert "improvement" not in quiet.finding.message
    agreeing = top_point_finding(pair, TEMPLATE, THRESHOLD, 1.3, improved=True)
    assert agreeing is not None and agreeing.condition and "improvement" not in agreeing.finding.message


def test_a_quadratic_term_at_the_top_fitted_as_a_lower_class_fails_the_build() -> None:
    """p -> p + a quadratic term worth 20% at p = 64, six points, 5% noise (seed 1): the candidate is modeled as
    p^(1/2) * log2(p)^2, a class below p that rises faster over the measured range, so the models predict 0.57x at
    p = 4096 and claim an improvement. The largest measured scale, 1.2x slower and rising, fails the build, and no
    improvement is reported."""
    rng = np.random.default_rng(1)
    points = 2.0 ** np.arange(1, 7)
    base = series(lambda p: 19 + 9.4 * p, rng, points=points)
    cand = series(lambda p: 19 + 9.4 * p + 0.038 * p**2, rng, points=points)
    outcome = verdict(compare([base], [cand], TARGET))
    (row,) = outcome.comparison.kernels
    assert row.ratio is not None and row.ratio < 0.7 and "log2(p)^2" in row.candidate.model.formula()
    assert outcome.failed
    (failure,) = outcome.failures
    assert failure.kind == "prediction" and failure.evidence["basis"] == "the largest measured scale"
    assert "x the baseline at p=64, the largest scale both commits measured (" in failure.message
    assert failure.message.endswith("; the models claim an improvement (0.574x at the target), which this rise "
                                    "contradicts")
    assert all(f.kind != "improvement" for f in outcome.findings)


def test_measured_findings_of_values_near_the_largest_float_stay_finite(rng: np.random.Generator) -> None:
    base = series(lambda p: 1e-300 * (1 + p), rng)
    cand = series(lambda p: 1e300 * (1 + p), rng)
    with np.errstate(all="raise"):
        found = measured_findings([SeriesPair(baseline=base, candidate=cand)], THRESHOLD)[("k", "time")]
    assert found.condition and found.p_value < 1e-10
    assert found.finding.ratio == pytest.approx(np.finfo(float).max)  # 1e600 is no float: capped, never inf


@pytest.mark.parametrize("factor, failing", [(1e300, True), (1.0, False), (1e-300, False)],
                         ids=["1e300x", "same", "1e-300x"])
def test_unmodeled_finding_compares_the_measured_points(factor: float, failing: bool,
                                                        rng: np.random.Generator) -> None:
    base = series(lambda p: 1 + p, rng)
    cand = series(lambda p: factor * (1 + p), rng)
    found = unmodeled_finding(SeriesPair(baseline=base, candidate=cand), THRESHOLD, "the candidate's values are odd")
    assert found is not None and found.test == "prediction" and found.finding.kind == "prediction"
    assert (found.condition and found.p_value < 1e-10) == failing
    assert found.finding.ratio == pytest.approx(factor, rel=0.1)
    assert found.finding.evidence == {"basis": "the measured points both commits share", "points": P.size}


def test_unmodeled_finding_of_exact_values_without_repetitions() -> None:
    base = Series("k", "count", ("p",), P[:, None], (1 + P)[:, None])
    cand = Series("k", "count", ("p",), P[:, None], 1e300 * (1 + P)[:, None])
    found = unmodeled_finding(SeriesPair(baseline=base, candidate=cand), THRESHOLD, "why")
    assert found is not None and found.condition and found.p_value < 1e-100  # the ratios agree across the points
    assert found.finding.message == ("1e+300x the baseline at the 8 measured point(s) both commits share, compared "
                                     "as measured: why")


def test_compare_fails_a_candidate_whose_values_cannot_be_modeled(rng: np.random.Generator) -> None:
    base = series(lambda p: 1 + p, rng)
    cand = series(lambda p: 1e300 * (1 + p), rng)
    result = verdict(compare([base], [cand], TARGET, settings=CompareOptions(resamples=20)))
    assert result.failed and [f.kind for f in result.failures] == ["prediction"]
    (row,) = result.comparison.kernels
    assert (row.status, row.candidate is not None and row.candidate.status) == ("unmodeled", "out of range")
