"""core.pair: the statistics comparing both commits' sides of a kernel, on planted series (seeded)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from scalecheck.core.bootstrap import hypotheses, neighbourhood
from scalecheck.core.modeler import fit_kernels
from scalecheck.core.pair import KernelPair, growth_change, predict_ratio, ratio_rise, tail_spreads
from scalecheck.core.search import FitOptions
from scalecheck.core.side import Side, fit_side, prepare_side
from scalecheck.data.measurement import Series

P = 2.0 ** np.arange(1, 9)  # 2 .. 256
TARGET = np.array([4096.0])
OPTIONS = FitOptions()


def series(function: Callable[[np.ndarray], np.ndarray], rng: np.random.Generator, noise: float = 0.02,
           points: np.ndarray = P) -> Series:
    values = function(points)[:, None] * (1 + noise * rng.standard_normal((points.size, 5)))
    return Series("k", "time", ("p",), points[:, None], values)


def side(s: Series) -> Side:
    return prepare_side(s, fit_kernels([s], OPTIONS)[0], OPTIONS)


def pair(base: Series, cand: Series, rng: np.random.Generator) -> KernelPair:
    """Both sides selected among their models' neighbourhoods, as `compare` does."""
    b, c = side(base), side(cand)
    blocks = OPTIONS.building_blocks
    specs = neighbourhood(c.fitted.spec, blocks) + neighbourhood(b.fitted.spec, blocks)
    union = tuple(hypotheses(specs, np.vstack([b.points, c.points]), TARGET))
    return KernelPair(key=("k", "time"), baseline=fit_side(b, union, TARGET, OPTIONS, 100, rng),
                      candidate=fit_side(c, union, TARGET, OPTIONS, 100, rng), specs=union, target=TARGET,
                      searched=len(OPTIONS.building_blocks))


def test_a_planted_growth_change_differs_and_is_predicted_with_each_model(rng: np.random.Generator) -> None:
    """p -> p^2 (equal at p = 2): the growth rose, the bootstrap and the change test agree, and each commit is
    predicted with its own model, near the true ratio at p = 4096."""
    before, after = (lambda p: 1 + 0.1 * p), (lambda p: 1 + 0.05 * p**2)
    kernel = pair(series(before, rng), series(after, rng), rng)
    change = growth_change(kernel, confidence=0.95)
    assert change.rose and change.differs and not change.improved
    assert change.up >= 0.95 and change.p_value < 1e-6
    prediction = predict_ratio(kernel, differs=change.differs, confidence=0.95, threshold=0.1)
    truth = after(4096.0) / before(4096.0)
    assert prediction.basis == "each commit's own model"
    assert prediction.ratio == pytest.approx(truth, rel=0.2)
    assert prediction.bound is not None and prediction.upper is not None
    assert 1.1 < prediction.bound < prediction.ratio < prediction.upper
    assert prediction.p_value < 1e-6


def test_an_unchanged_kernel_is_predicted_with_one_class_for_both(rng: np.random.Generator) -> None:
    function = (lambda p: 2 + 0.05 * p * np.log2(p))
    kernel = pair(series(function, rng), series(function, rng), rng)
    change = growth_change(kernel, confidence=0.95)
    assert not change.differs and not change.improved
    prediction = predict_ratio(kernel, differs=change.differs, confidence=0.95, threshold=0.1)
    assert prediction.basis.startswith("both commits modeled as")
    assert prediction.bound is not None and prediction.upper is not None
    assert prediction.bound < 1.0 < prediction.upper and prediction.ratio == pytest.approx(1.0, rel=0.1)
    assert prediction.p_value > 0.05


def test_ratio_rise_reads_the_shared_points_or_else_the_models(rng: np.random.Generator) -> None:
    """Candidate = baseline * sqrt(p): the ratio rises sqrt(256 / 2) across the shared points (span 128); with no two
    points in common, the models at the ends of the shared range give it; a constant factor rises 1x."""
    base = series(lambda p: 1 + 0.1 * p, rng, noise=0.0)
    rise = ratio_rise(side(base), side(series(lambda p: (1 + 0.1 * p) * p**0.5, rng, noise=0.0)))
    assert rise.factor == pytest.approx(128**0.5) and rise.span == pytest.approx(128.0)
    apart = ratio_rise(side(base), side(series(lambda p: 1.3 * (1 + 0.1 * p), rng, noise=0.0, points=1.5 * P)))
    assert apart.factor == pytest.approx(1.0, abs=1e-6) and apart.span == pytest.approx(256 / 3)
    disjoint = ratio_rise(side(base), side(series(lambda p: 1 + 0.1 * p, rng, noise=0.0, points=P * 1000)))
    assert disjoint.factor is None and disjoint.span is None


def test_tail_spreads_of_a_skewed_resample_distribution() -> None:
    """Resampled log ratios with a long upper tail (a few resamples select a faster-growing class): the spread below
    the median is that of the bulk, not the standard deviation the tail inflates."""
    rng = np.random.default_rng(1)
    logs = np.concatenate([rng.normal(1.0, 0.1, 180), rng.normal(4.0, 0.5, 20)])
    spread = tail_spreads(logs)
    assert spread.below == pytest.approx(0.1, rel=0.25)
    assert spread.above > 5 * spread.below and float(np.std(logs)) > 5 * spread.below
    three = np.repeat([0.0, 1.0, 2.0], [50, 100, 50])  # a bootstrap of two rounds: a few distinct values
    spread = tail_spreads(three)
    assert (spread.below, spread.above) == pytest.approx((float(np.std(three)), float(np.std(three))))
