"""The exceedance test: false alarms at most alpha on seeded unchanged pairs, planted overhead and a doubled
noise found, and its place in the comparison (an "overhead" warning, adjusted with every other test)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats

from scalecheck.core.compare import CompareOptions, compare
from scalecheck.core.exceedance import ExceedanceOptions, exceedance_test, exceedance_tests
from scalecheck.core.gate import DEFAULT_FAIL_ON, verdict
from scalecheck.data.measurement import Series

ALPHA = 0.05
R = 30  # repetitions per side
Draw = Callable[[tuple[int, ...]], np.ndarray]


def p_values(base: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """One single-point test per row of (M, R) arrays, each kernel with its own seeded generator."""
    results = exceedance_tests([[(b, c)] for b, c in zip(base, cand)], ExceedanceOptions(),
                               [np.random.default_rng([7, i]) for i in range(base.shape[0])])
    return np.array([r.p_value for r in results if r is not None])


NOISE: dict[str, Callable[[np.random.Generator, float], Draw]] = {
    # t = t_min + error, the error's mean scaled by `scale` (2 doubles it)
    "exponential": lambda rng, scale: lambda shape: 10 + scale * rng.exponential(1.0, shape),
    "poisson": lambda rng, scale: lambda shape: 10 + rng.poisson(2.0 * scale, shape).astype(float),
}


@pytest.mark.parametrize("family", NOISE)
def test_false_alarm_rate_on_1000_unchanged_pairs_is_at_most_alpha(family: str, rng: np.random.Generator) -> None:
    draw = NOISE[family](rng, 1.0)
    p = p_values(draw((1000, R)), draw((1000, R)))
    assert p.size == 1000
    assert np.mean(p <= ALPHA) <= ALPHA


def test_doubling_the_mean_error_is_detected(rng: np.random.Generator) -> None:
    """Poisson noise (interruptions): found in >= 80% of pairs of 30. Exponential noise: about 62% (documented in
    benchmarks/exceedance_quality.py; an oracle knowing the baseline's true t_max would reach 80%)."""
    for family, share in (("poisson", 0.80), ("exponential", 0.55)):
        base = NOISE[family](rng, 1.0)((400, R))
        p = p_values(base, NOISE[family](rng, 2.0)((400, R)))
        assert np.mean(p <= ALPHA) >= share, family


def test_planted_delays_in_a_fifth_of_the_repetitions_are_found(rng: np.random.Generator) -> None:
    base = 10 + rng.exponential(1.0, (3, R))
    cand = 10 + rng.exponential(1.0, (3, R)) + 3.0 * (rng.random((3, R)) < 0.2)
    result = exceedance_test(list(base), list(cand), rng=rng)
    assert result is not None and result.points == 3 and result.repetitions == 3 * R
    assert result.excess and result.p_value < 0.01
    assert result.exceedances == sum(int(np.sum(c > t)) for c, t in zip(cand, result.t_max))
    assert result.binomial_p == pytest.approx(stats.binom.sf(result.exceedances - 1, 3 * R, 0.05))
    assert result.overhead == pytest.approx(sum(float(np.sum(np.maximum(c - t, 0))) for c, t in
                                                zip(cand, result.t_max)))


def test_expected_count_without_a_change_is_near_one_minus_q(rng: np.random.Generator) -> None:
    base, cand = 10 + rng.exponential(1.0, (6, R)), 10 + rng.exponential(1.0, (6, R))
    result = exceedance_test(list(base), list(cand), rng=rng)
    assert result is not None
    assert 0.02 * 6 * R < result.expected < 0.12 * 6 * R
    assert result.spread > np.sqrt(6 * R * 0.05 * 0.95)  # more spread than a binomial: t_max is estimated


def test_points_without_enough_baseline_repetitions_are_left_out(rng: np.random.Generator) -> None:
    assert exceedance_test(rng.exponential(1.0, 9), rng.exponential(1.0, 30)) is None
    result = exceedance_test([rng.exponential(1.0, 9), rng.exponential(1.0, 12)], [rng.exponential(1.0, 5)] * 2)
    assert result is not None and result.points == 1 and result.repetitions == 5


def test_a_kernels_result_does_not_depend_on_the_others(rng: np.random.Generator) -> None:
    pairs = [[(10 + rng.exponential(1.0, R), 10 + rng.exponential(1.5, R))] for _ in range(3)]
    alone = exceedance_tests(pairs[1:2], ExceedanceOptions(), [np.random.default_rng(5)])[0]
    together = exceedance_tests(pairs, ExceedanceOptions(), [np.random.default_rng(s) for s in (3, 5, 9)])[1]
    assert alone == together


# --- in the comparison ---------------------------------------------------------------------------------------------

P = np.array([4.0, 8.0, 16.0, 32.0])


def series(kernel: str, rng: np.random.Generator, delayed: float = 0.0, metric: str = "time",
           repetitions: int = 20) -> Series:
    base = (2.0 + 0.05 * P)[:, None]
    values = base * (1 + 0.05 * rng.exponential(1.0, (P.size, repetitions)))
    values = values + base * 0.3 * (rng.random(values.shape) < delayed)
    return Series(kernel, metric, ("p",), P[:, None], values, "s" if metric == "time" else "")


SETTINGS = CompareOptions(resamples=20)


def test_unchanged_kernels_raise_overhead_findings_at_most_at_the_fdr_level(rng: np.random.Generator) -> None:
    base = [series(f"k{i}", rng) for i in range(100)]
    cand = [series(f"k{i}", rng) for i in range(100)]
    comparison = compare(base, cand, {"p": 128.0}, settings=SETTINGS, segmentation=None)
    overhead = [f for f in comparison.findings if f.kind == "overhead"]
    assert len(overhead) <= (1 - SETTINGS.confidence) * len(base)


def test_planted_overhead_is_an_overhead_warning_that_fails_only_when_asked(rng: np.random.Generator) -> None:
    base = [series(f"k{i}", rng) for i in range(20)]
    cand = [series(f"k{i}", rng) for i in range(19)] + [series("k19", rng, delayed=0.2)]
    comparison = compare(base, cand, {"p": 128.0}, settings=SETTINGS, segmentation=None)
    [found] = [f for f in comparison.findings if f.kind == "overhead"]
    assert found.kernel == "k19" and found.q_value is not None and found.q_value <= 0.05
    assert found.p_value is not None and found.evidence["binomial_p"] <= found.p_value
    assert found.message.startswith(f"{found.evidence['exceedances']} of 80 repetitions")
    assert "overhead" not in DEFAULT_FAIL_ON
    assert not verdict(comparison).failed
    assert verdict(comparison, DEFAULT_FAIL_ON + ("overhead",)).failed


def test_only_time_metrics_with_enough_baseline_repetitions_are_tested(rng: np.random.Generator) -> None:
    base = [series("visits", rng, metric="visits"), series("few", rng, repetitions=5)]
    cand = [series("visits", rng, delayed=0.5, metric="visits"), series("few", rng, delayed=0.5, repetitions=5)]
    comparison = compare(base, cand, {"p": 128.0}, settings=SETTINGS, segmentation=None)
    assert not [f for f in comparison.findings if f.kind == "overhead"]


@pytest.mark.parametrize("options, message", [
    (dict(quantile=0.7), r"quantile must be in \[0.8, 1\), got 0.7"),
    (dict(permutations=5), "permutations must be at least 10, got 5"),
])
def test_compare_options_check_the_exceedance_settings(options: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CompareOptions(**options)  # type: ignore[arg-type]
