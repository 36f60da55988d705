"""Segmentation on long series: window searches in batches, candidate splits screened, work linear in the points."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from scalecheck.core import search, segment
from scalecheck.core.search import FitOptions, PointStats, point_stats, select_one_parameter, single_parameter_specs
from scalecheck.core.segment import SCREENED, SegmentOptions, change_points, segment_kernels, split_errors, \
    window_errors

OPTIONS = FitOptions()


def _stats(y: np.ndarray, rng: np.random.Generator, noise: float, reps: int) -> PointStats:
    """PointStats of values y (K, n) times lognormal noise, `reps` repetitions per point."""
    return point_stats(y[..., None] * rng.lognormal(0.0, noise, y.shape + (reps,)))


def _counting(monkeypatch: pytest.MonkeyPatch, module: object, name: str, size: Callable[..., int],
              most: int) -> list[int]:
    """Replace module.name by a wrapper that records size(*args) per call and fails past `most` calls."""
    original = getattr(module, name)
    calls: list[int] = []

    def wrapper(*args: object) -> object:
        calls.append(size(*args))
        if len(calls) > most:
            raise AssertionError(f"more than {most} calls of {name}")
        return original(*args)

    monkeypatch.setattr(module, name, wrapper)
    return calls


@pytest.mark.parametrize("options", [FitOptions(), FitOptions(negative_exponents="always"), FitOptions(refine=True),
                                     FitOptions(allow_decreasing=True)],
                         ids=["auto", "always", "refine", "decreasing"])
def test_window_errors_equal_main_search_of_each_window_alone(options: FitOptions, rng: np.random.Generator) -> None:
    x = np.linspace(0.0, 3.0, 16)  # windows from 0, below 1, across 1 and above: each has its own hypotheses
    y = np.stack([3 + 2 * x, 50 / (1 + x), np.where(x < 1.5, 5.0, 40 + x**2)])  # rising, falling, a step
    stats = _stats(y, rng, 0.03, 3)
    expected = np.zeros((3, x.size - 4))
    for w in range(x.size - 4):
        span = slice(w, w + 5)
        part = stats.subset(slice(None), span)
        for k, choice in enumerate(select_one_parameter(x[span], part, options)):
            X = choice.spec.basis(x[span, None])
            coef = np.linalg.lstsq(X, part.y[k], rcond=None)[0]
            expected[k, w] = np.sqrt(np.sum((part.y[k] - X @ coef) ** 2)) / np.mean(part.y[k])
    np.testing.assert_allclose(window_errors(x, stats, options), expected, rtol=1e-9, atol=1e-12)


def test_window_errors_fit_windows_in_batches_with_linear_work(monkeypatch: pytest.MonkeyPatch,
                                                               rng: np.random.Generator) -> None:
    def elements(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> int:  # hypotheses x kernels x points
        return int(X.shape[0] * y.size)

    work = []
    for n in (1000, 4000):
        calls = _counting(monkeypatch, search, "fit_batch", elements, 40)
        calls += _counting(monkeypatch, segment, "fit_batch", elements, 40)
        x = np.arange(1.0, n + 1)
        nrss = window_errors(x, _stats((50 + 0.5 * x)[None], rng, 0.05, 3), OPTIONS)
        assert nrss.shape == (1, n - 4)
        work.append(sum(calls))
        monkeypatch.undo()
    assert work[1] <= 4.2 * work[0]  # 4x the windows, 4x the work


def test_split_errors_equal_least_squares_of_each_prefix_and_suffix(rng: np.random.Generator) -> None:
    x = 1.0 + np.arange(40.0)
    stats = _stats(np.where(x <= 25, 1000 + 30 * x, 50 * x**1.5)[None], rng, 0.02, 3)
    specs = single_parameter_specs(x, FitOptions(max_terms=1, negative_exponents="always"))
    prefix, suffix = split_errors(x, stats, OPTIONS)

    def least(span: slice) -> float:  # smallest weighted RSS of an eligible model: constant, or term slope > 0
        sw = np.sqrt(stats.weights[0, span])
        errors = []
        for spec in specs:
            X = spec.basis(x[span, None])
            coef = np.linalg.lstsq(X * sw[:, None], stats.y[0, span] * sw, rcond=None)[0]
            if spec.n_terms == 0 or coef[1] > 0:
                errors.append(np.sum((sw * (stats.y[0, span] - X @ coef)) ** 2))
        return min(errors)

    for end in (2, 9, 24, 25, 39):
        assert prefix[0, end] == pytest.approx(least(slice(0, end + 1)), rel=1e-6, abs=1e-9)
    for start in (1, 20, 26, 37):
        assert suffix[0, start] == pytest.approx(least(slice(start, 40)), rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("n, most", [(200, 2 * 197), (3000, 2 * SCREENED)], ids=["200-every-split", "3000-screened"])
def test_change_points_fits_every_split_or_screened_few_and_finds_planted_gap(
        n: int, most: int, monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator) -> None:
    x = np.arange(1.0, n + 1)
    change = int(0.6 * n)
    stats = _stats(np.where(np.arange(n) < change, 100 + 2 * x, 500 + 3 * x)[None], rng, 0.02, 3)
    pattern = np.ones((1, n - 4), dtype=bool)  # every window heterogeneous: every split is a candidate
    fitted = _counting(monkeypatch, segment, "fit_range", lambda x, stats, options: x.size * stats.y.shape[0],
                       most)
    boundaries, _, coefs = change_points(x, stats, pattern, OPTIONS)
    assert boundaries == [(change - 1, change)] and coefs.tolist() == [4]
    if n == 200:  # every split, as published: each prefix and suffix of 2..n-2 points
        assert len(fitted) == 2 * (n - 3) and sum(fitted) == 2 * sum(range(2, n - 1))
    else:  # the SCREENED best by running sums: at most 2 * SCREENED segments of at most n points
        assert sum(fitted) <= 2 * SCREENED * n


def test_change_points_screening_keeps_published_answer_among_many_clean_runs(monkeypatch: pytest.MonkeyPatch,
                                                                            rng: np.random.Generator) -> None:
    n, shared = 3000, 1234
    x = np.arange(1.0, n + 1)
    y = np.where(np.arange(n) <= shared, 0.01 * x**2, 0.01 * x[shared] ** 2 + 400 * (x - x[shared]))
    stats = _stats(y[None], rng, 0.001, 3)
    pattern = np.zeros(n - 4, dtype=bool)
    for start in [*range(20, 1200, 40), shared - 3, *range(1300, 2950, 50)]:  # clean runs of 3 ones
        pattern[start : start + 3] = True
    found, preferred = segment.candidates(pattern, n)
    assert (len(found), len(preferred)) == (192, 64)  # 3 candidates per run
    # the SCREENED best, each with the other candidates of its run: at most 3 * SCREENED prefixes and suffixes
    fitted = _counting(monkeypatch, segment, "fit_range", lambda x, stats, options: x.size, 6 * SCREENED)
    assert change_points(x, stats, pattern[None], OPTIONS)[0] == [(shared, shared)]
    assert len(fitted) >= 3  # the shared point and the gaps beside it


def test_segment_kernels_finds_planted_change_in_30000_points(monkeypatch: pytest.MonkeyPatch,
                                                              rng: np.random.Generator) -> None:
    n = 30_000
    x = np.arange(1.0, n + 1)
    stats = _stats(np.where(np.arange(n) < n // 2, 100 + 2 * x, 1.5e5 + 0.5 * x**1.5)[None], rng, 0.02, 3)
    fitted = _counting(monkeypatch, segment, "fit_range", lambda x, stats, options: x.size * stats.y.shape[0],
                       4 * SCREENED)
    # the confirmation's model of the whole series is the main search's cost, not the detection's
    assert segment_kernels(x, stats, OPTIONS, SegmentOptions(confirm=False)) == [((n // 2 - 1, n // 2),)]
    assert sum(fitted) <= 2 * SCREENED * n
