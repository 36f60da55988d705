"""core.bound: machine factors, rounds and segmented kernels, on planted series (seeded).

The plain outcomes (within / exceeds / inconclusive for planted growths, the time tolerance, counts) are tested
beside the plugin that uses them, in tests/pytest_plugin/test_bound.py, and a burst caught by the halves of the
rounds in tests/pytest_plugin/test_measure.py.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from scalecheck.core.bound import BoundOptions, check_bound
from scalecheck.core.search import FitOptions
from scalecheck.data.growth import parse_growth
from scalecheck.data.measurement import Series

SIZES = np.unique(np.round(np.geomspace(1_000, 1_000_000, 11)))
MEDIAN = FitOptions(aggregate="median")
LINEAR = parse_growth("n", ["n"])


def planted(f: Callable[[np.ndarray], np.ndarray], rng: np.random.Generator, noise: float = 0.01, reps: int = 7,
            sizes: np.ndarray = SIZES) -> Series:
    values = f(sizes)[:, None] * (1 + noise * rng.standard_normal((sizes.size, reps)))
    return Series("k", "time", ("n",), sizes[:, None], values, "s")


def in_rounds(f: Callable[[np.ndarray], np.ndarray], rng: np.random.Generator, rounds: int, reps: int = 2,
              noise: float = 0.01) -> Series:
    """`reps` repetitions in each of `rounds` rounds."""
    values = f(SIZES)[:, None] * (1 + noise * rng.standard_normal((SIZES.size, rounds * reps)))
    numbers = np.broadcast_to(np.repeat(np.arange(1.0, rounds + 1), reps), values.shape)
    return Series("k", "time", ("n",), SIZES[:, None], values, "s", rounds=numbers)


def machine_ramp(sizes: np.ndarray, top: float) -> np.ndarray:
    """A machine factor rising geometrically from 1 at the smallest size to `top` at the largest."""
    return np.asarray(top ** (np.log(sizes / sizes[0]) / np.log(sizes[-1] / sizes[0])), dtype=float)


def test_a_rise_the_machine_explains_does_not_fail() -> None:
    """Linear work on a machine whose cost per byte triples across the sizes (the memory hierarchy): without the
    machine factors the cost per element rises 3x, beyond 3/4 of a log factor, and the bound n fails; divided by
    the factors of a reference operation timed beside it, it does not rise at all."""
    rng = np.random.default_rng(4)
    ramp = machine_ramp(SIZES, 3.0)
    series = planted(lambda n: 1e-8 * n * ramp, rng)
    alone = check_bound(series, LINEAR, MEDIAN)
    assert alone.outcome == "exceeds" and alone.machine == 1.0
    assert alone.rise == pytest.approx(3.0, rel=0.15)
    judged = check_bound(series, LINEAR, MEDIAN, machine=ramp)
    assert judged.outcome != "exceeds"
    assert judged.machine == pytest.approx(3.0) and judged.rise == pytest.approx(1.0, abs=0.15)


def test_a_growth_beyond_the_machine_still_fails() -> None:
    rng = np.random.default_rng(5)
    ramp = machine_ramp(SIZES, 3.0)
    check = check_bound(planted(lambda n: 1e-12 * n**2 * ramp, rng), LINEAR, MEDIAN, machine=ramp)
    assert check.outcome == "exceeds" and check.above
    assert check.rise > 100  # n^2 / n over three decades, the machine's 3x divided out


@pytest.mark.parametrize("machine, message", [
    (np.ones(3), r"machine must hold one factor >= 1 per point, shape \(11,\)"),
    (np.full(SIZES.size, 0.5), "machine must hold one factor >= 1 per point"),
])
def test_machine_factors_are_checked(machine: np.ndarray, message: str, rng: np.random.Generator) -> None:
    with pytest.raises(ValueError, match=message):
        check_bound(planted(lambda n: 1e-8 * n, rng), LINEAR, MEDIAN, machine=machine)


def test_fewer_than_four_rounds_skip_the_halves() -> None:
    rng = np.random.default_rng(8)
    series = in_rounds(lambda n: 1e-12 * n**2, rng, rounds=2)
    check = check_bound(series, LINEAR, MEDIAN)
    assert check.outcome == "exceeds" and check.halves is None


def test_a_segmented_kernel_is_judged_on_its_last_segment() -> None:
    """Quadratic up to 32k, linear beyond (a switch of algorithm): the behaviour at scale is linear, within n; the
    same kernel without segmentation detection would be judged on one model of every size."""
    rng = np.random.default_rng(9)
    sizes = np.unique(np.round(np.geomspace(1_000, 1_000_000, 16)))
    knee = 32_000.0
    series = planted(lambda n: np.where(n <= knee, 1e-9 * n**2, 1e-9 * knee * n), rng, sizes=sizes)
    check = check_bound(series, LINEAR, MEDIAN)
    assert check.model.segmented
    assert check.growth == {"n": (1, 0)} and check.outcome == "within"


def test_options_carry_the_comparisons_checks() -> None:
    with pytest.raises(ValueError, match="resamples"):
        BoundOptions(resamples=0)
    with pytest.raises(ValueError, match="tolerance"):
        BoundOptions(tolerance=-0.1)
