"""The model-free adequacy check: a model that contradicts its data says so, a healthy fit of noisy data does not."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from scalecheck.core.adequacy import contradiction, model_contradiction
from scalecheck.core.modeler import fit_kernels
from scalecheck.core.search import FitOptions
from scalecheck.data.measurement import Series
from scalecheck.data.spec import DEFAULT_BUILDING_BLOCKS
from tests.conftest import planted_series

N = np.array([2000.0, 4000, 8000, 16000, 32000, 64000])


def sorted_timings(rng: np.random.Generator) -> np.ndarray:
    """(6, 5) sorted() timings rising 260x from n=2000 to n=64000 (more than n log n: a loaded runner), with a 40x
    stall and three 5x repetitions."""
    exact = 1e-6 * (N / 2000) ** 1.6
    values = exact[:, None] * np.exp(rng.normal(0, 0.05, (N.size, 5)))
    values[0, 1] *= 40
    values[1, 3] *= 5
    values[3, 0] *= 5
    values[4, 2] *= 5
    return values


def test_constant_model_of_rising_data_is_named(rng: np.random.Generator) -> None:
    values = sorted_timings(rng)
    note = contradiction(N, values, np.full(N.size, np.mean(values)), "mean", ("n",))
    assert note.startswith("the measured values rise ")
    assert "x from n=2000 to n=64000 but the model is constant (SMAPE " in note
    rise = float(note.split()[4].rstrip("x"))
    assert 200 < rise < 350


def test_model_rising_far_less_than_the_data_is_named(rng: np.random.Generator) -> None:
    values = sorted_timings(rng)
    fitted = np.median(values, axis=1)[0] * (N / 2000) ** 0.2  # 2x over the range
    assert "but the model rises only 2x" in contradiction(N, values, fitted, "median", ("n",))


def test_poor_fit_is_named_and_noise_is_not(rng: np.random.Generator) -> None:
    values = 5.0 * np.exp(rng.normal(0, 0.05, (N.size, 5)))
    assert contradiction(N, values, np.full(N.size, 5.0)) == ""
    note = contradiction(N, values, np.full(N.size, 3.0))
    assert note == "the model misses the measured values by 40% on average, more than their noise explains"
    loud = 5.0 * np.exp(rng.normal(0, 0.8, (N.size, 5)))  # 80% noise: a 40% miss is within it
    assert contradiction(N, loud, np.full(N.size, 3.0)) == ""


def test_falling_data_are_judged_by_the_fit_only(rng: np.random.Generator) -> None:
    values = (10 / np.log2(N))[:, None] * np.exp(rng.normal(0, 0.02, (N.size, 5)))  # falls 1.4x
    assert contradiction(N, values, np.full(N.size, np.mean(values))) == ""


def test_too_few_points_say_nothing_and_shapes_are_checked() -> None:
    assert contradiction(N[:2], np.ones((2, 3)), np.ones(2)) == ""
    with pytest.raises(ValueError, match="shape"):
        contradiction(N, np.ones((5, 3)), np.ones(6))


def test_healthy_fits_of_noisy_data_raise_no_note(rng: np.random.Generator) -> None:
    """False alarms on 300 seeded single-term kernels (one in ten constant) at 5% lognormal noise: none."""
    p = np.array([4.0, 8, 16, 32, 64, 128, 256, 512])
    series = []
    for k in range(300):
        exact = np.full(p.size, float(np.exp(rng.uniform(np.log(1e-2), np.log(1e3)))))
        if k % 10:
            i, j = DEFAULT_BUILDING_BLOCKS[rng.integers(len(DEFAULT_BUILDING_BLOCKS))]
            exact += float(np.exp(rng.uniform(np.log(1e-3), np.log(1e2)))) * p ** float(i) * np.log2(p) ** float(j)
        values = exact[:, None] * np.exp(rng.normal(0, 0.05, (p.size, 5)))
        series.append(Series(f"k{k}", "time", ("p",), p[:, None], values))
    notes = [km.note for km in fit_kernels(series)]
    assert not [note for note in notes if "measured values" in note]


def test_fit_kernels_appends_the_contradiction_to_the_note(rng: np.random.Generator) -> None:
    """A search space that cannot follow the data (only p^(1/4)) gives a poor model of data rising 10^5x."""
    series = planted_series(lambda p: 1 + 0.01 * p**3, [4, 8, 16, 32, 64, 128, 256], rng)
    [km] = fit_kernels([series], FitOptions(building_blocks=((Fraction(1, 4), 0),)), None)
    assert km.model is not None and km.note.startswith("the model misses the measured values by ")
    assert model_contradiction(series, km) == km.note
    falling = planted_series(lambda p: 5 + 800 / p**0.5, [4, 8, 16, 32, 64], rng)
    [km] = fit_kernels([falling], FitOptions(negative_exponents="never"))
    first, second = km.note.rsplit("; ", 1)
    assert "allow decreasing models" in first
    assert second.startswith("the model misses the measured values by ")
