"""core.side: one side of a comparison, its resampled model selection and the restricted test (seeded)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from scalecheck.core.bootstrap import capped, hypotheses, neighbourhood
from scalecheck.core.modeler import fit_kernels
from scalecheck.core.search import FitOptions
from scalecheck.core.side import draw, fit_side, prepare_side, restricted_test, screened
from scalecheck.data.growth import parse_growth
from scalecheck.data.measurement import Series

P = 2.0 ** np.arange(1, 9)  # 2 .. 256
OPTIONS = FitOptions()


def series(function: Callable[[np.ndarray], np.ndarray], rng: np.random.Generator, noise: float = 0.02,
           points: np.ndarray = P, reps: int = 5) -> Series:
    values = function(points)[:, None] * (1 + noise * rng.standard_normal((points.size, reps)))
    return Series("k", "time", ("p",), points[:, None], values)


def test_a_segmented_kernel_is_read_on_its_last_segment(rng: np.random.Generator) -> None:
    x = np.arange(1.0, 17.0)
    s = series(lambda p: np.where(p <= 8, 1 + 0.5 * p, 5 + 4 * (p - 8)), rng, noise=0.01, points=x)
    model = fit_kernels([s], OPTIONS)[0]
    assert model.segmented and model.segments[-1].status == "ok"
    side = prepare_side(s, model, OPTIONS)
    assert side.fitted is model.model and side.series is s
    last = model.segments[-1]
    np.testing.assert_array_equal(side.points[:, 0], x[(x >= last.start) & (x <= last.end)])
    assert side.values.shape == (side.points.shape[0], 5) and side.rounds is None


def test_rounds_are_kept_only_when_every_value_has_one(rng: np.random.Generator) -> None:
    s = series(lambda p: 1 + 0.1 * p, rng, reps=4)
    rounds = np.broadcast_to(np.array([1.0, 1.0, 2.0, 2.0]), s.values.shape)
    model = fit_kernels([s], OPTIONS)[0]
    whole = Series("k", "time", ("p",), s.points, s.values, rounds=rounds)
    assert prepare_side(whole, model, OPTIONS).rounds is not None
    holes = rounds.copy()
    holes[0, 0] = np.nan
    partial = Series("k", "time", ("p",), s.points, s.values, rounds=holes)
    assert prepare_side(partial, model, OPTIONS).rounds is None


@pytest.mark.parametrize("reps", [5, 1], ids=["repetitions", "parametric"])
def test_fit_side_selects_on_the_data_and_on_every_resample(reps: int, rng: np.random.Generator) -> None:
    """A clear p^2 kernel: the selection on the data is its own model, and nearly every resample agrees; the same
    generator state gives the same draws."""
    s = series(lambda p: 1 + 0.05 * p**2, rng, reps=reps)
    side = prepare_side(s, fit_kernels([s], OPTIONS)[0], OPTIONS)
    target = np.array([4096.0])
    specs = hypotheses(neighbourhood(side.fitted.spec, OPTIONS.building_blocks), side.points, target)
    fit = fit_side(side, specs, target, OPTIONS, 50, np.random.default_rng(3))
    assert fit.side is side and fit.observed.chosen.shape == (1,) and fit.resampled.chosen.shape == (50,)
    assert specs[int(fit.observed.chosen[0])] == side.fitted.spec
    assert np.mean(fit.resampled.chosen == fit.observed.chosen[0]) >= 0.8
    again = fit_side(side, specs, target, OPTIONS, 50, np.random.default_rng(3))
    np.testing.assert_array_equal(again.resampled.chosen, fit.resampled.chosen)


@pytest.mark.parametrize("bound, rejected", [("p", True), ("p^2", False)])
def test_restricted_test_rejects_only_a_bound_below_the_growth(bound: str, rejected: bool,
                                                               rng: np.random.Generator) -> None:
    s = series(lambda p: 1 + 0.05 * p**2, rng)
    side = prepare_side(s, fit_kernels([s], OPTIONS)[0], OPTIONS)
    growth = parse_growth(bound, ["p"])
    specs = neighbourhood(side.fitted.spec, OPTIONS.building_blocks) + [capped(side.fitted.spec, growth, ("p",))]
    p_value = restricted_test(side, specs, growth, OPTIONS)
    assert (p_value < 1e-6) is rejected
    if not rejected:
        assert p_value == 1.0  # the model itself is allowed: nothing fits better


def test_resamples_within_points_are_drawn_from_the_repetitions_the_screen_keeps(rng: np.random.Generator) -> None:
    """One repetition of five stalled 6x: the selection sees the data as measured (resample 0, the stalled value
    included, which it sets aside itself), but no resample draws the stalled value, which three draws of five
    would make a majority."""
    s = series(lambda p: 1 + 0.05 * p**2, rng)
    values = s.values.copy()
    values[3, 1] *= 6.0
    stalled = Series("k", "time", ("p",), s.points, values)
    side = prepare_side(stalled, fit_kernels([stalled], OPTIONS)[0], OPTIONS)
    samples = draw(side, 200, np.random.default_rng(5))
    assert samples.shape == (201, P.size, 5)
    np.testing.assert_array_equal(samples[0], values)
    assert not np.any(samples[1:] == values[3, 1])
    assert np.all(np.sum(~np.isnan(samples[1:, 3]), axis=1) == 4)  # the point's four other repetitions
    np.testing.assert_array_equal(screened(values)[3], np.r_[np.delete(values[3], 1), np.nan])
    assert screened(s.values) is s.values  # nothing to set aside: the array itself
    np.testing.assert_array_equal(screened(values, side.stats.reps[0]), screened(values))
    assert side.stats.reps[0][3] == 4 and screened(s.values, np.full(P.size, 5)) is s.values


def test_resamples_of_rounds_keep_every_repetition(rng: np.random.Generator) -> None:
    """Series measured in rounds are not screened: a round slowed by load is the noise their resamples carry."""
    s = series(lambda p: 1 + 0.05 * p**2, rng, reps=6)
    values = s.values.copy()
    values[:, 5] *= 1.5  # the last round of one repetition, slowed at every point
    rounds = np.broadcast_to(np.arange(1.0, 7.0), values.shape)
    slowed = Series("k", "time", ("p",), s.points, values, rounds=rounds)
    side = prepare_side(slowed, fit_kernels([slowed], OPTIONS)[0], OPTIONS)
    assert side.rounds is not None
    samples = draw(side, 200, np.random.default_rng(5))
    assert np.any(samples[1:, 0] == values[0, 5])
