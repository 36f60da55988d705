"""Memory of the model search: bounded per kernel, whatever the number of kernels and of hypotheses."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from scalecheck.core import search
from scalecheck.core.modeler import fit_kernels
from scalecheck.core.search import FitOptions, choose, point_stats, select_one_parameter, single_parameter_specs
from scalecheck.data.measurement import Series
from scalecheck.data.spec import DEFAULT_BUILDING_BLOCKS, ModelSpec

X = 2.0 ** np.arange(2, 10)  # 8 points: two-term hypotheses are searched
OPTIONS = FitOptions(building_blocks=DEFAULT_BUILDING_BLOCKS[:8])  # 1 + 8 + 28 hypotheses: a fast test


def _values(K: int, rng: np.random.Generator) -> np.ndarray:
    """(K, 8, 5) repetitions of c0 + c1 * x under 2% noise."""
    exact = rng.uniform(1, 10, (K, 1)) + rng.uniform(0.01, 1, (K, 1)) * X[None]
    return exact[..., None] * (1 + rng.uniform(-0.02, 0.02, (K, X.size, 5)))


def _peak(call: object) -> int:
    tracemalloc.start()
    try:
        call()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_kernels_per_batch_keeps_the_work_arrays_within_work_bytes() -> None:
    # 8 points, the default space: 1 constant, 42 one-term and 861 two-term hypotheses
    per_kernel = 8 * 8 * (1 * 10 + 42 * 12 + 861 * 14)
    assert search.kernels_per_batch(8, [0, 1, 2], [1, 42, 861]) == search.WORK_BYTES // per_kernel == 41
    assert search.kernels_per_batch(8, [2], [10**9]) == 1  # never fewer than one kernel


def test_selection_memory_per_kernel_does_not_grow_with_the_hypotheses(monkeypatch: pytest.MonkeyPatch,
                                                                        rng: np.random.Generator) -> None:
    monkeypatch.setattr(search, "WORK_BYTES", 2**20, raising=False)  # both runs span several batches
    small, large = (point_stats(_values(K, rng)) for K in (1_000, 4_000))
    peaks = [_peak(lambda stats=stats: select_one_parameter(X, stats, OPTIONS)) for stats in (small, large)]
    per_kernel = (peaks[1] - peaks[0]) / 3_000
    # the choices themselves (a Choice and views of its coefficients, fit and leave-one-out predictions) stay;
    # the 37 hypotheses' fits of every kernel (about 12 KB per kernel here) do not
    assert per_kernel < 1_500, f"{per_kernel:.0f} bytes per kernel"


def test_fit_kernels_memory_per_kernel_is_bounded(monkeypatch: pytest.MonkeyPatch,
                                                  rng: np.random.Generator) -> None:
    monkeypatch.setattr(search, "WORK_BYTES", 2**20, raising=False)
    runs = []
    for K in (1_000, 3_000):
        values = _values(K, rng)
        runs.append([Series(f"k{k}", "time", ("p",), X[:, None], values[k]) for k in range(K)])
    peaks = [_peak(lambda series=series: fit_kernels(series, OPTIONS, segmentation=None)) for series in runs]
    per_kernel = (peaks[1] - peaks[0]) / 2_000
    # the models returned (about 1.5 KB each) and a bounded batch of work
    assert per_kernel < 4_000, f"{per_kernel:.0f} bytes per kernel"


def test_a_kernel_larger_than_the_work_budget_is_searched_in_groups_with_the_same_choice(
        rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.geomspace(4, 4096, 40)
    values = (100 + 2 * x**1.5)[None, :, None] * rng.lognormal(0, 0.05, (3, 40, 3))
    values[2] = 7.0 * rng.lognormal(0, 0.05, (40, 3))  # a constant kernel too
    stats, options = point_stats(values), FitOptions()
    specs = single_parameter_specs(x, options)
    whole = choose(x[:, None], specs, stats, options)
    monkeypatch.setattr(search, "WORK_BYTES", 200_000)  # less than one kernel's work: groups of hypotheses
    groups = []
    original = search.score
    monkeypatch.setattr(search, "score", lambda X, *a, **k: groups.append(X.shape[0]) or original(X, *a, **k))
    grouped = choose(x[:, None], specs, stats, options)
    assert max(groups) < len(specs) - 42  # never all two-term hypotheses at once
    assert grouped.index.tolist() == whole.index.tolist() and grouped.chosen()[2] == ModelSpec()
    for name in ("coef", "fitted", "loo", "fallback"):
        np.testing.assert_array_equal(getattr(grouped, name), getattr(whole, name))
