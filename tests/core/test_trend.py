"""The rank trend test, and the constant model it keeps off values that rise under bursts of load."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from scalecheck.core.modeler import fit_kernels
from scalecheck.core.trend import MIN_VALUES, trend_p_values
from scalecheck.data.measurement import Series

SIZES = np.array([1000.0, 2000, 4000, 8000, 16000])


def test_p_values_are_scipys_spearman_with_ties_and_missing_repetitions(rng: np.random.Generator) -> None:
    compared = 0
    for trial in range(120):
        n, r = int(rng.integers(3, 9)), int(rng.integers(1, 6))
        x = rng.permutation(np.arange(1.0, n + 1))
        values = rng.lognormal(0, 1, (3, n, r))
        if trial % 3 == 0:
            values = np.round(values * 2) / 2  # ties
        values[rng.random(values.shape) < 0.1] = np.nan
        got = trend_p_values(x, values)
        for k in range(3):
            kept = ~np.isnan(values[k])
            if kept.sum() < MIN_VALUES:
                assert got[k] == 1.0
                continue
            expected = scipy_stats.spearmanr(np.broadcast_to(x[:, None], (n, r))[kept], values[k][kept]).pvalue
            assert got[k] == pytest.approx(1.0 if np.isnan(expected) else expected, rel=1e-9, abs=1e-15)
            compared += 1
    assert compared > 100


def test_too_few_or_equal_values_show_no_trend() -> None:
    x = np.array([1.0, 2, 4])
    assert trend_p_values(x, np.array([[[1.0, 2, 3], [4, 5, 6], [7, 8, np.nan]]]))[0] == 1.0  # 8 values
    assert trend_p_values(x, np.full((1, 3, 4), 2.5))[0] == 1.0


def _bursty(rng: np.random.Generator, base: np.ndarray, count: int, repetitions: int) -> list[Series]:
    """Lognormal noise, a quarter of the repetitions stalled 3-30x (a loaded runner)."""
    out = []
    for k in range(count):
        values = base[:, None] * rng.lognormal(0, 0.3, (base.size, repetitions))
        values = np.where(rng.random(values.shape) < 0.25, values * rng.uniform(3, 30, values.shape), values)
        out.append(Series(kernel=f"k{k}", metric="time", unit="s", parameters=("n",), points=SIZES[:, None],
                          values=values))
    return out


def test_values_rising_48x_under_bursts_are_not_modeled_as_constant(rng: np.random.Generator) -> None:
    models = fit_kernels(_bursty(rng, 1e-4 * SIZES**1.4, 200, repetitions=5))
    constant = sum(m.model is not None and m.model.spec.n_terms == 0 for m in models)
    assert constant <= 0.05 * len(models)  # about 18% without the trend test


def test_flat_values_under_bursts_stay_constant(rng: np.random.Generator) -> None:
    models = fit_kernels(_bursty(rng, np.ones(SIZES.size), 400, repetitions=3))
    with_terms = sum(m.model is not None and m.model.spec.n_terms > 0 for m in models)
    assert with_terms <= 0.04 * len(models)
