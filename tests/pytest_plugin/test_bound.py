"""core.bound: the decision behind assert_no_worse_than, on planted series (seeded)."""

from __future__ import annotations

import numpy as np
import pytest

from scalecheck.core.bound import BoundOptions, check_bound
from scalecheck.core.search import FitOptions
from scalecheck.data.growth import parse_growth
from scalecheck.data.measurement import Series

SIZES = np.unique(np.round(np.geomspace(1_000, 1_000_000, 11)))
MEDIAN = FitOptions(aggregate="median")


def planted(f, rng: np.random.Generator, noise: float = 0.03, reps: int = 7, sizes: np.ndarray = SIZES) -> Series:
    values = f(sizes)[:, None] * (1 + noise * rng.standard_normal((sizes.size, reps)))
    return Series("k", "time", ("n",), sizes[:, None], values, "s")


@pytest.mark.parametrize(("truth", "bound", "outcome"), [
    (lambda n: 1e-6 * n * np.log2(n) + 1e-4, "n log n", "within"),
    (lambda n: 1e-6 * n * np.log2(n) + 1e-4, "n^2", "within"),
    (lambda n: 1e-6 * n * np.log2(n) + 1e-4, "n", "exceeds"),
    (lambda n: 1e-9 * n**2 + 1e-3, "n log n", "exceeds"),
    (lambda n: 1e-9 * n**2 + 1e-3, "O(n^2)", "within"),
    (lambda n: 2e-7 * n**1.5, "n**1.5", "within"),
    (lambda n: 2e-7 * n**1.5, "n*log2(n)", "exceeds"),
    (lambda n: 3e-6 + 0 * n, "1", "within"),
])
def test_planted_growth_against_bound(truth, bound: str, outcome: str, rng: np.random.Generator) -> None:
    check = check_bound(planted(truth, rng), parse_growth(bound, ["n"]), MEDIAN)
    assert check.outcome == outcome, (check.fitted.formula(), check.within, check.p_value, check.rise)


def test_exceeding_carries_its_evidence(rng: np.random.Generator) -> None:
    check = check_bound(planted(lambda n: 1e-9 * n**2, rng), parse_growth("n", ["n"]), MEDIAN)
    assert check.outcome == "exceeds"
    assert check.growth == {"n": (2, 0)}
    assert check.p_value < 1e-6 and check.within == 0.0
    assert check.rise > 100 and check.rise >= check.needed


def test_cache_like_rise_below_a_log_factor_does_not_fail(rng: np.random.Generator) -> None:
    # linear, but 25% dearer per element at the top (a list outgrowing the caches): no failure of "n"
    def cached(n: np.ndarray) -> np.ndarray:
        return 5e-9 * n * (1 + 0.25 / (1 + np.exp(-(np.log10(n) - 4.5) * 3)))

    check = check_bound(planted(cached, rng, noise=0.01), parse_growth("n", ["n"]), MEDIAN)
    assert check.outcome != "exceeds"
    assert check.rise < check.needed


def test_noisy_short_range_is_inconclusive_not_failing(rng: np.random.Generator) -> None:
    sizes = np.array([1000.0, 1300, 1700, 2200, 2900])
    series = planted(lambda n: 1e-7 * n * np.log2(n), rng, noise=0.2, reps=3, sizes=sizes)
    check = check_bound(series, parse_growth("n", ["n"]), MEDIAN)
    assert check.outcome in ("within", "inconclusive")


def test_too_few_sizes_is_unmodeled(rng: np.random.Generator) -> None:
    series = planted(lambda n: n, rng, sizes=np.array([10.0, 20.0]))
    check = check_bound(series, parse_growth("n", ["n"]))
    assert check.outcome == "unmodeled"
    assert check.note


def test_exact_counts_are_decided(rng: np.random.Generator) -> None:
    sizes = np.array([16.0, 32, 64, 128, 256, 512, 1024])
    series = Series("k", "comparisons", ("n",), sizes[:, None], (sizes * np.log2(sizes))[:, None], "")
    assert check_bound(series, parse_growth("n log n", ["n"])).outcome == "within"
    assert check_bound(series, parse_growth("n", ["n"])).outcome == "exceeds"


def test_decision_is_reproducible(rng: np.random.Generator) -> None:
    series = planted(lambda n: 1e-6 * n * np.log2(n), rng, noise=0.1, reps=4)
    first = check_bound(series, parse_growth("n log n", ["n"]), MEDIAN, BoundOptions(seed=3))
    again = check_bound(series, parse_growth("n log n", ["n"]), MEDIAN, BoundOptions(seed=3))
    assert (first.outcome, first.within, first.p_value, first.rise) == (again.outcome, again.within, again.p_value,
                                                                         again.rise)


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="confidence"):
        BoundOptions(confidence=1.0)
    with pytest.raises(ValueError, match="share"):
        BoundOptions(share=-1)


def test_time_tolerance_needs_more_than_a_log_factor(rng: np.random.Generator) -> None:
    series = planted(lambda n: 1e-7 * n * np.log2(n), rng, noise=0.01)
    bound = parse_growth("n", ["n"])
    assert check_bound(series, bound, MEDIAN).outcome == "exceeds"  # exact-metric rule: 3/4 of a log factor
    timed = check_bound(series, bound, MEDIAN, BoundOptions(tolerance=1 / 8))
    assert timed.outcome == "inconclusive"
    assert timed.needed == pytest.approx(1000 ** (1 / 8), rel=0.01)
    quadratic = check_bound(planted(lambda n: 1e-9 * n**2, rng), parse_growth("n^1.5", ["n"]), MEDIAN,
                            BoundOptions(tolerance=1 / 8))
    assert quadratic.outcome == "exceeds"


def test_a_model_within_the_bound_that_the_measurements_contradict_is_not_within() -> None:
    # medians of `sorted` on a runner so loaded that some sizes came out 5-10x too slow: the model search settles on
    # a log n curve through them, but the measured cost per unit of log n rises a thousandfold over the sizes
    sizes = np.array([1000, 1995, 3981, 7943, 15849, 31623, 63096.0])
    medians = np.array([2.114e-05, 3.703e-4, 1.202e-3, 6.683e-4, 5.481e-3, 1.908e-2, 3.623e-2])
    values = medians[:, None] * np.exp(0.3 * np.random.default_rng(1).standard_normal((7, 20)))
    series = Series("k", "time", ("n",), sizes[:, None], values, "s", rounds=np.broadcast_to(np.arange(20.0),
                                                                                               values.shape))
    check = check_bound(series, parse_growth("log n", ["n"]), MEDIAN, BoundOptions(tolerance=1 / 8, floor=2.0))
    assert check.growth == {"n": (0, 1)} and check.within >= 0.95  # the model alone would say "within"
    assert check.outcome == "inconclusive"
    assert check.rise > 100 and "the model does not describe the measurements" in check.note
