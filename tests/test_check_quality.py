"""benchmarks/check_quality.py: its diagnostic of rounds (`round_effect`) tells rounds that move every size together
from repetitions that only vary one by one."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from scalecheck.data.measurement import Series

from .conftest import load_benchmark


@pytest.fixture(scope="module")
def quality() -> ModuleType:
    """benchmarks/check_quality.py, loaded from its file."""
    return load_benchmark("check_quality")


def _series(rng: np.random.Generator, round_spread: float, kernel: str) -> Series:
    """6 sizes, 5 rounds of 3 repetitions: 5% noise per repetition, each round's level off by `round_spread`."""
    sizes = 2.0 ** np.arange(11, 17)
    levels = np.repeat(np.exp(round_spread * rng.standard_normal(5)), 3)  # (15,) one level per round
    values = sizes[:, None] * 1e-8 * levels * np.exp(0.05 * rng.standard_normal((6, 15)))
    rounds = np.tile(np.repeat(np.arange(1.0, 6.0), 3), (6, 1))
    return Series(kernel, "time", ("n",), sizes[:, None], values, rounds=rounds)


def test_round_effect_is_near_one_without_rounds_and_far_above_with_them(quality: ModuleType) -> None:
    rng = np.random.default_rng(3)
    plain = [quality.round_effect([_series(rng, 0.0, f"k{i}") for i in range(20)])[0] for _ in range(40)]
    f, dof_rounds, dof_residual = quality.round_effect([_series(rng, 0.1, f"k{i}") for i in range(20)])
    assert (dof_rounds, dof_residual) == (80, 400)  # 20 series x 4, and x 5 sizes x 4
    assert 0.9 < float(np.mean(plain)) < 1.1  # no round effect: both mean squares estimate the same
    assert f > 5  # rounds 10% apart under 5% noise per repetition


def test_round_oracle_finds_a_large_change_and_fails_unchanged_code_at_its_level(quality: ModuleType) -> None:
    rng = np.random.default_rng(5)
    found = false = 0
    for i in range(200):
        baseline, candidate = _series(rng, 0.1, f"b{i}"), _series(rng, 0.1, f"c{i}")
        changed = quality._plus_quadratic(candidate, 0.5)  # a term worth half of the top size's time
        found += quality.round_oracle(baseline, candidate, changed) < 0.05
        false += quality.round_oracle(baseline, candidate, changed, compare_with=candidate) < 0.05
    assert found >= 190  # the change, 2x at the top, stands far out of rounds 10% apart
    assert 2 <= false <= 20  # one-sided at 5%: about 10 of 200 unchanged pairs
