"""Falling terms (strong scaling): time that shrinks as processes are added is modeled, not read as a constant."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from scalecheck.core.compare import compare, prediction_band
from scalecheck.core.modeler import fit_kernels
from scalecheck.core.search import FitOptions, falling_values, single_parameter_specs
from scalecheck.data.exponents import DEFAULT_BUILDING_BLOCKS, falling
from scalecheck.data.spec import format_growth
from tests.conftest import planted_series

P = [2, 4, 8, 16, 32, 64, 128, 256]
F = Fraction


def terms(km: object) -> set[tuple[Fraction, int | Fraction]]:
    model = getattr(km, "model")
    return {term.order_in(0) for term in model.spec.terms}


def test_falling_blocks_mirror_the_growing_ones() -> None:
    blocks = falling(DEFAULT_BUILDING_BLOCKS)
    assert len(blocks) == 42 and (F(-1, 2), 0) in blocks and (F(0), -1) in blocks and (F(-1), -2) in blocks
    assert falling(((F(-1), 0), (F(2), 1))) == ((F(-2), -1),)


@pytest.mark.parametrize(("function", "expected"), [
    (lambda p: 30 + 1000 * p**-0.5, {(F(-1, 2), 0)}),
    (lambda p: 2 + 1000 / p, {(F(-1), 0)}),
    (lambda p: 400 + 1000 / np.log2(p), {(F(0), -1)}),
    (lambda p: 30 + 1000 / p + 5 * np.log2(p), {(F(-1), 0), (F(0), 1)}),
])
def test_strong_scaling_kernels_get_their_falling_terms(function, expected, rng: np.random.Generator) -> None:
    [km] = fit_kernels([planted_series(function, P, rng, noise=0.005)], segmentation=None)
    assert km.ok and terms(km) == expected
    growth = km.model.growth()
    assert format_growth(growth) == ("log2(p)" if (F(0), 1) in expected else "constant")


def test_without_falling_terms_a_falling_kernel_keeps_the_old_note(rng: np.random.Generator) -> None:
    series = planted_series(lambda p: 30 + 1000 * p**-0.5, P, rng)
    [never] = fit_kernels([series], FitOptions(negative_exponents="never"), None)
    assert never.model is not None and never.model.spec.n_terms == 0 and "allow decreasing models" in never.note


def test_growing_and_cold_start_kernels_never_search_falling_terms(rng: np.random.Generator) -> None:
    growing = planted_series(lambda p: 5 + 0.5 * p * np.log2(p), P, rng)
    cold = planted_series(lambda p: 10 + 2 * p + 200 * (p == 2), P, rng, kernel="cold")
    x = np.array(P, dtype=float)
    assert falling_values(x, np.array([5 + x, 10 + 2 * x + 200 * (x == 2), 100 / x])).tolist() == [False, False, True]
    for km in fit_kernels([growing, cold], segmentation=None):
        assert all(order >= (0, 0) for order in terms(km))


def test_always_searches_them_for_every_kernel_and_never_for_none(rng: np.random.Generator) -> None:
    x = np.array(P, dtype=float)
    always = single_parameter_specs(x, FitOptions(max_terms=1, building_blocks=DEFAULT_BUILDING_BLOCKS +
                                                  falling(DEFAULT_BUILDING_BLOCKS)))
    assert len(always) == 1 + 84
    assert len(single_parameter_specs(np.array([1.0, 2, 4, 8]), FitOptions(
        max_terms=1, building_blocks=falling(DEFAULT_BUILDING_BLOCKS)))) == 1 + 19  # log2(1) = 0: no log2(p)^-j
    noisy_flat = planted_series(lambda p: 100 + 0 * p, P, rng, noise=0.02)
    [km] = fit_kernels([noisy_flat], FitOptions(negative_exponents="always"), None)
    assert km.model is not None and km.model.spec.n_terms == 0


def test_two_parameters_fall_in_one_and_grow_in_the_other(rng: np.random.Generator) -> None:
    grid = [(p, n) for p in (2, 4, 8, 16, 32) for n in (10, 20, 40, 80, 160)]
    series = planted_series(lambda p, n: 5 + 40 * n / p, grid, rng, parameters=("p", "n"), noise=0.01)
    [km] = fit_kernels([series])
    assert km.model is not None
    orders = [(term.order_in(0), term.order_in(1)) for term in km.model.spec.terms]
    assert orders == [((F(-1), 0), (F(1), 0))]
    assert format_growth(km.model.growth()) == "n"


def test_a_kernel_that_stops_shrinking_is_a_finding(rng: np.random.Generator) -> None:
    baseline = planted_series(lambda p: 30 + 1000 * p**-0.5, P, rng)
    stopped = planted_series(lambda p: 30 + 1000 * 2**-0.5 + 0 * p, P, rng)
    result = compare([baseline], [stopped], target={"p": 4096})
    kinds = {finding.kind for finding in result.findings}
    assert "prediction" in kinds or "measured" in kinds
    assert compare([baseline], [planted_series(lambda p: 30 + 1000 * p**-0.5, P, rng)],
                   target={"p": 4096}).findings == ()


def test_the_band_of_a_falling_model_contains_it(rng: np.random.Generator) -> None:
    series = planted_series(lambda p: 30 + 1000 * p**-0.5, P, rng)
    [km] = fit_kernels([series])
    grid = np.geomspace(2, 4096, 40)[:, None]
    band = prediction_band(series, km, grid)
    assert np.all(band.low <= band.model) and np.all(band.model <= band.high)
