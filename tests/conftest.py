"""Shared fixtures: a seeded generator and planted series with known PMNF truth."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from scalecheck.data.measurement import Series

SEED = 20240601


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(SEED)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No SCALECHECK_* variable of the developer's shell leaks into a test."""
    import os

    for name in list(os.environ):
        if name.startswith("SCALECHECK_"):
            monkeypatch.delenv(name)


def planted_series(
    function: Callable[..., np.ndarray],
    points: Sequence[Sequence[float]] | np.ndarray,
    rng: np.random.Generator,
    *,
    noise: float = 0.02,
    repetitions: int = 5,
    parameters: tuple[str, ...] = ("p",),
    kernel: str = "k",
) -> Series:
    """Series of f(points) * (1 + U(-noise, noise)) with `repetitions` values per point."""
    pts = np.asarray(points, dtype=float).reshape(len(points), len(parameters))
    exact = np.asarray(function(*pts.T), dtype=float) * np.ones(pts.shape[0])
    values = exact[:, None] * (1 + rng.uniform(-noise, noise, (pts.shape[0], repetitions)))
    return Series(kernel, "time", parameters, pts, values)
