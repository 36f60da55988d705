"""core.measured.welch_greater: the one-sided Welch t-test in numpy, against scipy.stats.ttest_ind (seeded)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from scalecheck.core.measured import welch_greater


def scipy_p(x: np.ndarray, y: np.ndarray) -> float:
    return float(stats.ttest_ind(x, y, equal_var=False, alternative="greater").pvalue)


@pytest.mark.parametrize("n1, n2", [(2, 2), (3, 5), (5, 5), (30, 4), (200, 150)])
def test_p_values_equal_scipys(n1: int, n2: int, rng: np.random.Generator) -> None:
    for _ in range(50):
        x = rng.normal(rng.uniform(-1, 1), rng.uniform(0.1, 3), n1)
        y = rng.normal(0, rng.uniform(0.1, 3), n2)
        assert welch_greater(x, y) == pytest.approx(scipy_p(x, y), rel=1e-12, abs=0)


def test_without_spread_on_either_side() -> None:
    same = np.array([2.0, 2.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy warns that no value varies
        exact, undefined = scipy_p(same + 1, same), scipy_p(same, same)
    assert welch_greater(same + 1, same) == exact == 0.0  # an exact difference
    assert math.isnan(welch_greater(same, same)) and math.isnan(undefined)  # nothing differs: no p-value
