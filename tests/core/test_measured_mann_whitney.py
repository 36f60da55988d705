"""core.measured.mann_whitney_greater: the one-sided rank test in numpy, against scipy.stats.mannwhitneyu (seeded)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from scalecheck.core.measured import mann_whitney_greater

SHAPES = {  # (rows, n1, n2): the regime scipy chooses for samples without ties
    "exact 5 against 5": (200, 5, 5),
    "exact 2 against 2": (50, 2, 2),
    "exact 1 against 6": (30, 1, 6),
    "exact 8 against 8": (100, 8, 8),
    "exact 3 against 30": (60, 3, 30),
    "asymptotic 9 against 12": (100, 9, 12),
    "asymptotic 30 against 25": (40, 30, 25),
}


def scipy_p(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.asarray(stats.mannwhitneyu(x, y, alternative="greater", axis=1).pvalue)


@pytest.mark.parametrize("rows, n1, n2", SHAPES.values(), ids=SHAPES.keys())
def test_p_values_equal_scipys_without_ties(rows: int, n1: int, n2: int, rng: np.random.Generator) -> None:
    shift = rng.uniform(-1.5, 1.5, (rows, 1))  # from clear slowdowns to clear speed-ups
    x, y = rng.standard_normal((rows, n1)) + shift, rng.standard_normal((rows, n2))
    np.testing.assert_allclose(mann_whitney_greater(x, y), scipy_p(x, y), rtol=1e-12, atol=0)


@pytest.mark.parametrize("rows, n1, n2", SHAPES.values(), ids=SHAPES.keys())
def test_p_values_equal_scipys_with_ties(rows: int, n1: int, n2: int, rng: np.random.Generator) -> None:
    """Values on a coarse grid (a timer's resolution) tie within and across samples: the normal approximation with
    the tie correction, for every row of the call."""
    x, y = rng.integers(0, 5, (rows, n1)).astype(float), rng.integers(0, 4, (rows, n2)).astype(float)
    np.testing.assert_allclose(mann_whitney_greater(x, y), scipy_p(x, y), rtol=1e-12, atol=0)


def test_one_row_with_ties_makes_the_whole_call_asymptotic_as_in_scipy(rng: np.random.Generator) -> None:
    x, y = rng.standard_normal((20, 5)), rng.standard_normal((20, 5))
    x[7, 0] = y[7, 3]  # one tie in one row
    ours = mann_whitney_greater(x, y)
    np.testing.assert_allclose(ours, scipy_p(x, y), rtol=1e-12, atol=0)
    np.testing.assert_allclose(ours[:7], scipy_p(x[:7], y[:7]), rtol=0.5)  # near the exact values, not equal
    assert not np.allclose(ours[:7], scipy_p(x[:7], y[:7]), rtol=1e-6, atol=0)


def test_extremes_and_all_tied_values_equal_scipys() -> None:
    x = np.array([[6.0, 7, 8, 9, 10], [1, 2, 3, 4, 5], [3, 3, 3, 3, 3]])
    y = np.array([[1.0, 2, 3, 4, 5], [6, 7, 8, 9, 10], [3, 3, 3, 3, 3]])
    ours = mann_whitney_greater(x, y)
    np.testing.assert_allclose(ours, scipy_p(x, y), rtol=1e-12, atol=0)
    assert ours[2] == 1.0  # no difference at all: no evidence of a slowdown
    exact = mann_whitney_greater(x[:2] + np.array([[0.0], [0.5]]), y[:2])  # without ties: the exact law
    np.testing.assert_allclose(exact, [1 / 252, 1.0], rtol=1e-12)  # every candidate above every baseline: 1/C(10,5)
