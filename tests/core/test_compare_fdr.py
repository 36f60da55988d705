"""core.compare.benjamini_hochberg: the false-discovery adjustment in numpy, against scipy.stats (seeded)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from scalecheck.core.compare import benjamini_hochberg


@pytest.mark.parametrize("m", [2, 3, 17, 1000])
def test_q_values_equal_scipys(m: int, rng: np.random.Generator) -> None:
    """Uniform p-values, a few tiny ones (real findings), ties (rounded values) and the ends 0 and 1."""
    p = rng.uniform(size=m)
    p[: m // 10] = 10.0 ** -rng.uniform(3, 300, m // 10)
    p[m // 2:] = np.round(p[m // 2:], 2)
    p[0], p[-1] = 0.0, 1.0
    rng.shuffle(p)
    ours = benjamini_hochberg(p)
    np.testing.assert_allclose(ours, stats.false_discovery_control(p, method="bh"), rtol=1e-12, atol=0)
    assert np.all(ours >= p) and np.all(ours <= 1)


def test_a_single_p_value_is_its_own_q_value() -> None:
    assert benjamini_hochberg(np.array([0.03])).tolist() == [0.03]
    assert benjamini_hochberg(np.array([])).size == 0


def test_the_worked_example_of_the_paper() -> None:
    """Benjamini and Hochberg (1995), section 4: 15 p-values; at q = 0.05 the four smallest are rejected."""
    p = np.array([0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719,
                  0.6528, 0.7590, 1.000])
    assert np.flatnonzero(benjamini_hochberg(p) <= 0.05).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("bad", [np.nan, -0.1, 1.5])
def test_a_p_value_outside_zero_one_is_a_programming_error(bad: float) -> None:
    with pytest.raises(ValueError, match="p-values must lie in"):
        benjamini_hochberg(np.array([0.2, bad]))
