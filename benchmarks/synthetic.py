"""Seeded synthetic kernels with known PMNF truth, written in Extra-P's text format (both tools read it).

Single parameter: f(p) = c0 + c1 * p^i * log2(p)^j with (i, j) drawn from the 42 default building blocks
(one kernel in ten is constant), p in {4, 8, 16, 32, 64}. Two parameters on a 5 x 5 grid: additive
c0 + c1 * a(x) + c2 * b(y) or multiplicative c0 + c1 * a(x) * b(y). Coefficients are log-uniform; every
repetition is f * (1 + U(-noise, +noise)).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scalecheck.data.spec import DEFAULT_BUILDING_BLOCKS  # noqa: E402

VALUES = (4.0, 8.0, 16.0, 32.0, 64.0)
Truth = tuple[tuple[tuple[int, Fraction, int], ...], ...]  # terms; each term a tuple of (param, i, j) factors


@dataclass(frozen=True)
class Kernel:
    name: str
    truth: Truth  # () for a constant kernel
    coefficients: tuple[float, ...]  # c0, c1, ...
    points: np.ndarray  # (n, m)
    values: np.ndarray  # (n, r)

    def term_shares(self) -> list[float]:
        """Each true term's share of the true value at the largest point."""
        top = self.points[-1]
        parts = [c * _term(t, top[None])[0] for c, t in zip(self.coefficients[1:], self.truth)]
        total = self.coefficients[0] + sum(parts)
        return [abs(p) / abs(total) for p in parts]


def _term(term: tuple[tuple[int, Fraction, int], ...], points: np.ndarray) -> np.ndarray:
    out = np.ones(points.shape[0])
    for param, i, j in term:
        x = points[:, param]
        out = out * x ** float(i) * np.log2(x) ** j
    return out


def _loguniform(rng: np.random.Generator, low: float, high: float) -> float:
    return float(np.exp(rng.uniform(np.log(low), np.log(high))))


def _block(rng: np.random.Generator, param: int) -> tuple[int, Fraction, int]:
    i, j = DEFAULT_BUILDING_BLOCKS[rng.integers(len(DEFAULT_BUILDING_BLOCKS))]
    return (param, Fraction(i), int(j))


def _measure(rng: np.random.Generator, name: str, truth: Truth, coef: list[float], points: np.ndarray,
             repetitions: int, noise: float) -> Kernel:
    exact = np.full(points.shape[0], coef[0]) + sum(c * _term(t, points) for c, t in zip(coef[1:], truth))
    values = exact[:, None] * (1 + rng.uniform(-noise, noise, (points.shape[0], repetitions)))
    return Kernel(name, truth, tuple(coef), points, values)


def single_parameter(rng: np.random.Generator, count: int, repetitions: int = 5, noise: float = 0.02) -> list[Kernel]:
    points = np.array(VALUES)[:, None]
    kernels = []
    for k in range(count):
        c0 = _loguniform(rng, 1e-2, 1e3)
        if rng.uniform() < 0.1:
            kernels.append(_measure(rng, f"k{k}", (), [c0], points, repetitions, noise))
        else:
            truth = ((_block(rng, 0),),)
            kernels.append(_measure(rng, f"k{k}", truth, [c0, _loguniform(rng, 1e-3, 1e2)], points, repetitions,
                                    noise))
    return kernels


def two_parameter(rng: np.random.Generator, count: int, repetitions: int = 5, noise: float = 0.02) -> list[Kernel]:
    points = np.array([(x, y) for x in VALUES for y in VALUES])
    kernels = []
    for k in range(count):
        a, b = _block(rng, 0), _block(rng, 1)
        c0 = _loguniform(rng, 1e-2, 1e3)
        if k % 2:
            truth: Truth = ((a, b),)
            coef = [c0, _loguniform(rng, 1e-3, 1e2)]
        else:
            truth = ((a,), (b,))
            coef = [c0, _loguniform(rng, 1e-3, 1e2), _loguniform(rng, 1e-3, 1e2)]
        kernels.append(_measure(rng, f"k{k}", truth, coef, points, repetitions, noise))
    return kernels


def write_extrap_text(kernels: list[Kernel], parameters: tuple[str, ...], path: Path) -> Path:
    """All kernels in one Extra-P text file (one REGION each, metric time)."""
    lines = [f"PARAMETER {name}" for name in parameters]
    for point in kernels[0].points:
        lines.append("POINTS ( " + " ".join(f"{v:g}" for v in point) + " )")
    lines.append("METRIC time")
    for kernel in kernels:
        lines.append(f"REGION {kernel.name}")
        lines += ["DATA " + " ".join(repr(float(v)) for v in row) for row in kernel.values]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
