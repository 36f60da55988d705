"""point_stats, outliers, nan_median, spread and pair_differences give numpy's straightforward results bit for bit.

The module computes them column by column (sorting networks, sums down the columns) because numpy's reductions
over a short last axis cost a call per row; the references below are the plain numpy formulation of the same
statistics, and every float must match to the bit, every NaN in place, every mask and count exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from scalecheck.core import search
from scalecheck.core.search import (AGGREGATE_VARIANCE, OUTLIER_CUTOFF, nan_median, outliers, pair_differences,
                                    point_stats, relative_scale, spread)
from scalecheck.core.tmax import tmax
from scalecheck.data.measurement import AGGREGATES

FIELDS = ("y", "weights", "sigma2", "dof", "reps", "center")
SHAMOS = 1.0 / (math.sqrt(2.0) * 0.6744897501960817)
MAD_SMALL = np.array([np.nan, np.nan, 1.196, 1.495, 1.363, 1.206, 1.200, 1.140, 1.129, 1.107])


# --- the references: numpy's own reductions, one call each ---------------------------------------------------------

def reference_nan_median(values: np.ndarray) -> np.ndarray:
    if values.shape[-1] == 0:
        return np.full(values.shape[:-1], np.nan)
    if not np.isnan(values).any():
        with np.errstate(over="ignore", invalid="ignore"):
            median = np.asarray(np.median(values, axis=-1))
        if np.all(np.isfinite(median)):
            return median
    ordered = np.sort(values, axis=-1)
    count = np.sum(~np.isnan(values), axis=-1)
    low = np.take_along_axis(ordered, np.maximum((count - 1) // 2, 0)[..., None], axis=-1)[..., 0]
    high = np.take_along_axis(ordered, np.minimum(count // 2, values.shape[-1] - 1)[..., None], axis=-1)[..., 0]
    return np.asarray(np.where(count > 0, low / 2 + high / 2, np.nan))


def reference_pair_differences(values: np.ndarray) -> np.ndarray:
    r = values.shape[-1]
    pairs = [np.abs(values[..., lag:] - values[..., :-lag]) for lag in range(1, min(r, 9))]
    return np.concatenate(pairs, axis=-1) if pairs else np.full(values.shape[:-1] + (0,), np.nan)


def reference_spread(differences: np.ndarray) -> np.ndarray:
    median = reference_nan_median(differences)
    count = np.sum(~np.isnan(differences), axis=-1)
    with np.errstate(invalid="ignore"):
        mean = np.where(count > 0, np.nansum(differences, axis=-1) / np.maximum(count, 1), np.nan)
    return np.asarray(np.where(median > 0, median * SHAMOS, mean * math.sqrt(math.pi) / 2))


def reference_relative_scale(center: np.ndarray) -> np.ndarray:
    scale = np.maximum(np.abs(center), 1e-3 * np.max(np.abs(center), axis=1, keepdims=True))
    return np.where(scale > 0, scale, 1.0)


def reference_outliers(values: np.ndarray, cutoff: float = OUTLIER_CUTOFF) -> np.ndarray:
    if values.shape[2] < 3:
        return np.zeros(values.shape, dtype=bool)
    median = reference_nan_median(values)
    scale = np.abs(median)
    scale = np.where(scale > 0, scale, reference_relative_scale(median))
    relative = values / scale[..., None]
    distance = np.abs(relative - (median / scale)[..., None])
    count = np.sum(~np.isnan(values), axis=2)
    differences = reference_pair_differences(relative)
    pooled = reference_spread(differences.reshape(differences.shape[0], -1))
    typical = reference_nan_median(distance)
    mad_factor = np.where(count < len(MAD_SMALL), np.take(MAD_SMALL, np.minimum(count, len(MAD_SMALL) - 1)),
                          count / np.maximum(count - 0.8, 1.0))
    own = np.where(count >= 5, 1.4826 * mad_factor * typical, 0.0)
    limit = cutoff * np.fmax(pooled[:, None], own)
    far_half = distance > typical[..., None]
    return np.asarray((distance > limit[..., None]) & far_half & (count[..., None] >= 3))


def reference_point_stats(values: np.ndarray, aggregate: str = "mean") -> dict[str, np.ndarray]:
    kept = np.where(reference_outliers(values), np.nan, values)
    if aggregate == "tmax":
        y = tmax(values)
    else:
        y = AGGREGATES[aggregate](kept if aggregate == "mean" else values, axis=2)
    reps = np.sum(~np.isnan(kept), axis=2)
    used = reps if aggregate == "mean" else np.sum(~np.isnan(values), axis=2)
    center = np.nanmean(kept, axis=2)
    scale = reference_relative_scale(center)
    squares = np.nansum(((kept - center[..., None]) / scale[..., None]) ** 2, axis=(1, 2))
    dof = np.sum(np.maximum(reps - 1, 0), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sigma2 = np.where(dof > 0, squares / np.maximum(dof, 1), np.nan) * AGGREGATE_VARIANCE[aggregate]
    weights = used / reference_relative_scale(center) ** 2
    return {"y": y, "weights": weights, "sigma2": sigma2, "dof": dof, "reps": reps, "center": center}


def assert_same_bits(actual: object, expected: object) -> None:
    """Same type, shape and dtype; NaN in the same places; every other value with the same bits."""
    assert type(actual) is type(expected)
    a, e = np.asarray(actual), np.asarray(expected)
    assert (a.shape, a.dtype) == (e.shape, e.dtype)
    if a.dtype.kind != "f":
        np.testing.assert_array_equal(a, e)
        return
    np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
    bits = np.dtype(f"u{a.dtype.itemsize}")
    np.testing.assert_array_equal(np.where(np.isnan(a), 0, a).astype(a.dtype).view(bits),
                                  np.where(np.isnan(e), 0, e).astype(e.dtype).view(bits))


# --- the inputs: enough kernels for the column-wise paths (sorting network, sums down the columns) -----------------

def _timings(rng: np.random.Generator, K: int, n: int, r: int) -> np.ndarray:
    values = rng.lognormal(0.0, 0.1, (K, n, r)) * np.geomspace(1.0, 1e3, n)[:, None] * rng.uniform(0.5, 2, (K, 1, 1))
    spoiled = rng.random(values.shape) < 0.03  # stalled repetitions: outliers to find
    values[spoiled] *= rng.uniform(2.0, 10.0, int(spoiled.sum()))
    return values


def _ragged(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    count = rng.integers(1, values.shape[2] + 1, values.shape[:2])
    return np.where(np.arange(values.shape[2]) < count[..., None], values, np.nan)


def _noise(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return values


def _quantized(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.floor(values / 50.0) * 50.0  # a coarse timer


def _ties(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    # most repetitions repeat their point's first value: most pairs tie, and the mean difference, a sum of
    # irregular values, stands in
    return np.where(rng.random(values.shape) < 0.8, values[..., :1], values)


def _zeros(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    values = np.where(rng.random(values.shape) < 0.3, 0.0, values)
    values[:5] = 0.0  # kernels and points of zeros only
    return values


def _huge(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.asarray(values / np.nanmax(values) * 1.79e308)  # middle values whose sum overflows


def _huge_ragged(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return _huge(_ragged(values, rng), rng) if values.shape[2] > 1 else _huge(values, rng)


def _magnitudes(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.asarray(values * 10.0 ** rng.integers(-300, 300, (values.shape[0], 1, 1)))  # each kernel its unit


def _signed(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    signed = np.asarray(values - np.median(values))
    signed[rng.random(values.shape) < 0.1] = -0.0  # -0.0 sorts as 0.0: numpy's sort must place it
    signed[rng.random(values.shape) < 0.1] = 0.0
    return signed


def _infinite(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.where(rng.random(values.shape) < 0.05, np.inf, _ragged(values, rng))


def _subnormal(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return values * 1e-311  # halving loses bits: (a + b) / 2 and a / 2 + b / 2 differ


KINDS: dict[str, Callable[[np.ndarray, np.random.Generator], np.ndarray]] = {
    "noise": _noise, "ragged": _ragged, "quantized": _quantized, "ties": _ties, "zeros": _zeros, "huge": _huge,
    "huge_ragged": _huge_ragged, "magnitudes": _magnitudes, "signed": _signed, "infinite": _infinite,
    "subnormal": _subnormal,
}
REPETITIONS = (1, 2, 3, 4, 5, 8, 9, 10, 30)


def _values(kind: str, r: int) -> np.ndarray:
    rng = np.random.default_rng([2024, r, list(KINDS).index(kind)])
    return KINDS[kind](_timings(rng, 300 if r <= 10 else 60, 8, r), rng)


@pytest.mark.parametrize("r", REPETITIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_point_stats_is_numpy_bit_for_bit(kind: str, r: int) -> None:
    values = _values(kind, r)
    with np.errstate(all="ignore"):
        for aggregate in ("mean", "median", "min"):
            stats, expected = point_stats(values, aggregate), reference_point_stats(values, aggregate)
            for field in FIELDS:
                assert_same_bits(getattr(stats, field), expected[field])
            assert stats.values is values


@pytest.mark.parametrize("r", REPETITIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_outliers_and_medians_are_numpy_bit_for_bit(kind: str, r: int) -> None:
    values = _values(kind, r)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(outliers(values), reference_outliers(values))
        assert_same_bits(nan_median(values), reference_nan_median(values))
        assert_same_bits(nan_median(values.reshape(values.shape[0], -1)),
                         reference_nan_median(values.reshape(values.shape[0], -1)))
        assert_same_bits(nan_median(values[0, 0]), reference_nan_median(values[0, 0]))
        differences = pair_differences(values)
        assert_same_bits(differences, reference_pair_differences(values))
        for shape in (differences.shape[:1] + (-1,), differences.shape):
            assert_same_bits(spread(differences.reshape(shape)), reference_spread(differences.reshape(shape)))
        assert_same_bits(spread(differences[0, 0]), reference_spread(differences[0, 0]))
        relative = values / np.abs(reference_nan_median(values))[..., None]  # as `outliers` pools them
        pooled = reference_spread(reference_pair_differences(relative).reshape(values.shape[0], -1))
        assert_same_bits(search._pooled_spread(relative), pooled)


@pytest.mark.parametrize("r", [3, 5, 10])
def test_point_stats_tmax_is_unchanged(r: int) -> None:
    values = _ragged(_timings(np.random.default_rng([7, r]), 12, 6, r), np.random.default_rng(r))
    stats, expected = point_stats(values, "tmax"), reference_point_stats(values, "tmax")
    for field in FIELDS:
        assert_same_bits(getattr(stats, field), expected[field])


@pytest.mark.parametrize("layout", ["fortran", "strided", "float32", "float32_ragged", "integers"])
def test_point_stats_other_layouts_and_types_are_numpy_bit_for_bit(layout: str) -> None:
    rng = np.random.default_rng(11)
    values = _timings(rng, 200, 8, 12)
    values = {"fortran": np.asfortranarray(_ragged(values, rng)), "strided": values[..., ::2],
              "float32": values.astype(np.float32), "float32_ragged": _ragged(values, rng).astype(np.float32),
              "integers": rng.integers(1, 20, (200, 8, 5))}[layout]
    for aggregate in ("mean", "median", "min"):
        stats, expected = point_stats(values, aggregate), reference_point_stats(values, aggregate)
        for field in FIELDS:
            assert_same_bits(getattr(stats, field), expected[field])
    np.testing.assert_array_equal(outliers(values), reference_outliers(values))
    assert_same_bits(nan_median(values[0, 0]), reference_nan_median(values[0, 0]))
    differences = pair_differences(values)
    assert_same_bits(differences, reference_pair_differences(values))
    for rows in (differences, differences.reshape(200, -1), differences[0, 0], np.asfortranarray(differences)):
        assert_same_bits(spread(rows), reference_spread(rows))


def test_point_stats_median_of_600_repetitions_is_numpy_bit_for_bit() -> None:
    values = _timings(np.random.default_rng(9), 2, 3, 601) * 1e300  # np.nanmedian takes another method from 600
    values[0, 0, 300:] = 1.7e308
    with np.errstate(all="ignore"):
        stats, expected = point_stats(values, "median"), reference_point_stats(values, "median")
    for field in FIELDS:
        assert_same_bits(getattr(stats, field), expected[field])


def test_point_stats_of_a_point_without_values_is_numpy_bit_for_bit() -> None:
    values = _ragged(_timings(np.random.default_rng(3), 300, 8, 5), np.random.default_rng(4))
    values[7, 2] = np.nan
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        for aggregate in ("mean", "median", "min"):
            stats, expected = point_stats(values, aggregate), reference_point_stats(values, aggregate)
            for field in FIELDS:
                assert_same_bits(getattr(stats, field), expected[field])
    assert np.isnan(stats.center[7, 2]) and stats.reps[7, 2] == 0


@pytest.mark.parametrize("length", [*range(1, 20), 31, 32, 33, 64, 127, 128, 129, 200, 300])
def test_row_sum_adds_as_numpy_does(length: int) -> None:
    rng = np.random.default_rng(length)
    values = rng.standard_normal((6400, length)) * 10.0 ** rng.integers(-12, 12, (6400, length))
    values[:3] = -0.0  # a sum of -0.0 is 0.0 in numpy (it starts from 0.0)
    assert_same_bits(search._row_sum(values), np.sum(values, axis=-1))
    assert_same_bits(search._row_sum(values.reshape(800, 8, length)), np.sum(values.reshape(800, 8, length), axis=-1))


@pytest.mark.parametrize("r", [2, 3, 4, 5, 6, 7])
@pytest.mark.parametrize("kind", ["noise", "ragged", "ties", "zeros", "signed", "infinite"])
def test_sort_last_places_numpy_values(kind: str, r: int) -> None:
    values = _values(kind, r)
    count = np.sum(~np.isnan(values), axis=-1)
    first = np.arange(r) < count[..., None]  # the places of the values; NaN or +inf follow them
    ordered = search._sort_last(values)
    assert ordered.shape == values.shape
    assert_same_bits(np.where(first, ordered, np.nan), np.where(first, np.sort(values, axis=-1), np.nan))
    assert np.all(np.isnan(ordered[~first]) | (ordered[~first] == np.inf))


def test_relative_scale_is_numpy_bit_for_bit() -> None:
    rng = np.random.default_rng(5)
    center = rng.standard_normal((500, 8)) * 10.0 ** rng.integers(-5, 5, (500, 8))
    center[:10] = 0.0
    center[10:20, 3] = np.nan
    center[20, 1] = -0.0
    assert_same_bits(relative_scale(center), reference_relative_scale(center))
    assert_same_bits(relative_scale(center.reshape(500, 2, 4)), reference_relative_scale(center.reshape(500, 2, 4)))
