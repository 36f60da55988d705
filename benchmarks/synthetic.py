"""Seeded synthetic kernels with known PMNF truth, written in Extra-P's text format (both tools read it).

Single parameter: f(p) = c0 + c1 * p^i * log2(p)^j with (i, j) drawn from the 42 default building blocks
(one kernel in ten is constant), p in {4, 8, 16, 32, 64}. Two parameters on a 5 x 5 grid: additive
c0 + c1 * a(x) + c2 * b(y) or multiplicative c0 + c1 * a(x) * b(y). Coefficients are log-uniform; every
repetition is f * (1 + U(-noise, +noise)), or with `lognormal=True` f * exp(N(0, noise)) (timings are skewed
to the slow side).

For speed and memory runs: other point sets (`points=`), one kernel at many distinct points (`dense_kernel`),
a baseline and candidate pair with some kernels regressed (`check_pair`), and the values of many kernels as one
array without per-kernel objects (`single_parameter_values`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
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


def _noisy(rng: np.random.Generator, exact: np.ndarray, repetitions: int, noise: float, lognormal: bool) -> np.ndarray:
    """`repetitions` noisy measurements of each value of `exact` (shape (n,)): shape (n, repetitions)."""
    shape = (exact.shape[0], repetitions)
    if lognormal:
        return exact[:, None] * np.exp(rng.normal(0.0, noise, shape))
    return exact[:, None] * (1 + rng.uniform(-noise, noise, shape))


def _measure(rng: np.random.Generator, name: str, truth: Truth, coef: Sequence[float], points: np.ndarray,
             repetitions: int, noise: float, lognormal: bool = False) -> Kernel:
    exact = np.full(points.shape[0], coef[0]) + sum(c * _term(t, points) for c, t in zip(coef[1:], truth))
    return Kernel(name, truth, tuple(coef), points, _noisy(rng, exact, repetitions, noise, lognormal))


def single_parameter(rng: np.random.Generator, count: int, repetitions: int = 5, noise: float = 0.02,
                     points: Sequence[float] = VALUES, lognormal: bool = False) -> list[Kernel]:
    grid = np.array(points, dtype=float)[:, None]
    kernels = []
    for k in range(count):
        c0 = _loguniform(rng, 1e-2, 1e3)
        if rng.uniform() < 0.1:
            kernels.append(_measure(rng, f"k{k}", (), [c0], grid, repetitions, noise, lognormal))
        else:
            truth = ((_block(rng, 0),),)
            kernels.append(_measure(rng, f"k{k}", truth, [c0, _loguniform(rng, 1e-3, 1e2)], grid, repetitions,
                                    noise, lognormal))
    return kernels


def single_parameter_values(rng: np.random.Generator, count: int, points: Sequence[float] = VALUES,
                            repetitions: int = 5, noise: float = 0.05) -> np.ndarray:
    """The values of `count` kernels drawn as by `single_parameter(..., lognormal=True)`, as one array of shape
    (count, len(points), repetitions): for a million kernels, without a million `Kernel` objects."""
    p = np.array(points, dtype=float)  # (n,)
    blocks = np.array([(float(i), float(j)) for i, j in DEFAULT_BUILDING_BLOCKS])  # (b, 2)
    chosen = blocks[rng.integers(len(blocks), size=count)]  # (count, 2)
    growth = p[None, :] ** chosen[:, :1] * np.log2(p)[None, :] ** chosen[:, 1:]  # (count, n)
    c0 = np.exp(rng.uniform(np.log(1e-2), np.log(1e3), count))
    c1 = np.exp(rng.uniform(np.log(1e-3), np.log(1e2), count)) * (rng.uniform(size=count) >= 0.1)  # 10% constant
    exact = c0[:, None] + c1[:, None] * growth  # (count, n)
    values: np.ndarray = exact[:, :, None] * np.exp(rng.normal(0.0, noise, (count, p.size, repetitions)))
    return values


def dense_kernel(rng: np.random.Generator, points: int, repetitions: int = 5, noise: float = 0.05) -> Kernel:
    """One kernel c0 + c1 * p * log2(p) measured at `points` distinct values p = 8, 16, ..., 8 * points."""
    grid = 8.0 * np.arange(1, points + 1)[:, None]
    truth: Truth = (((0, Fraction(1), 1),),)
    return _measure(rng, "dense", truth, [_loguniform(rng, 1e2, 1e3), _loguniform(rng, 1e-3, 1e-2)], grid,
                    repetitions, noise, lognormal=True)


def check_pair(rng: np.random.Generator, count: int, points: Sequence[float], regressed: float = 0.05,
               repetitions: int = 5, noise: float = 0.05) -> tuple[list[Kernel], list[Kernel], list[str]]:
    """A baseline and a candidate of the same `count` kernels, each measured with its own lognormal noise; in the
    candidate a share `regressed` of the growing kernels grows faster by p^(1/2) (equal at the smallest point).
    Returns (baseline, candidate, names of the regressed kernels)."""
    baseline = single_parameter(rng, count, repetitions, noise, points, lognormal=True)
    growing = [k for k, kernel in enumerate(baseline) if kernel.truth]
    worse = set(rng.choice(growing, size=round(regressed * len(growing)), replace=False).tolist()) if growing else set()
    candidate = []
    p0 = float(points[0])
    for k, kernel in enumerate(baseline):
        truth, coef = kernel.truth, list(kernel.coefficients)
        if k in worse:
            (param, i, j), = truth[0]
            truth = (((param, i + Fraction(1, 2), j),),)
            coef[1] /= p0 ** 0.5
        candidate.append(_measure(rng, kernel.name, truth, coef, kernel.points, repetitions, noise, lognormal=True))
    return baseline, candidate, [baseline[k].name for k in sorted(worse)]


def two_parameter(rng: np.random.Generator, count: int, repetitions: int = 5, noise: float = 0.02,
                  lognormal: bool = False) -> list[Kernel]:
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
        kernels.append(_measure(rng, f"k{k}", truth, coef, points, repetitions, noise, lognormal))
    return kernels


def write_extrap_text(kernels: list[Kernel], parameters: tuple[str, ...], path: Path,
                      digits: int | None = None) -> Path:
    """All kernels in one Extra-P text file (one REGION each, metric time); values with `digits` significant
    digits (default: as `repr`, which reads back exactly)."""
    def text(v: float) -> str:
        return repr(float(v)) if digits is None else f"{v:.{digits}g}"
    lines = [f"PARAMETER {name}" for name in parameters]
    for point in kernels[0].points:
        lines.append("POINTS ( " + " ".join(f"{v:.12g}" for v in point) + " )")
    lines.append("METRIC time")
    for kernel in kernels:
        lines.append(f"REGION {kernel.name}")
        lines += ["DATA " + " ".join(text(v) for v in row) for row in kernel.values]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
