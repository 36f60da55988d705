"""The batched least-squares engine against closed-form answers and brute-force leave-one-out."""

from __future__ import annotations

import numpy as np

from scalecheck.core.fit import adjusted_r2, fit_batch, smape


def _designs(x: np.ndarray) -> np.ndarray:
    ones = np.ones_like(x)
    return np.stack([np.stack([ones, x**0.5], 1), np.stack([ones, x * np.log2(x)], 1), np.stack([ones, x**3], 1)])


def test_fit_batch_matches_weighted_normal_equations(rng: np.random.Generator) -> None:
    x = np.array([4.0, 8, 16, 32, 64, 128])
    X = _designs(x)
    y = rng.uniform(1, 100, (4, x.size))
    w = rng.uniform(0.1, 2, (4, x.size))
    batch = fit_batch(X, y, w)
    for h in range(X.shape[0]):
        for k in range(y.shape[0]):
            W = np.diag(w[k])
            expected = np.linalg.solve(X[h].T @ W @ X[h], X[h].T @ W @ y[k])
            np.testing.assert_allclose(batch.coef[h, k], expected, rtol=1e-8)
            np.testing.assert_allclose(batch.fitted[h, k], X[h] @ expected, rtol=1e-8)
    assert batch.valid.all()


def test_fit_batch_leave_one_out_equals_refits(rng: np.random.Generator) -> None:
    x = np.array([2.0, 4, 8, 16, 32])
    X = _designs(x)
    y = rng.uniform(1, 10, (3, x.size))
    w = rng.uniform(0.5, 1.5, (3, x.size))
    batch = fit_batch(X, y, w)
    for h in range(X.shape[0]):
        for k in range(y.shape[0]):
            for i in range(x.size):
                keep = np.arange(x.size) != i
                W = np.diag(w[k][keep])
                coef = np.linalg.solve(X[h][keep].T @ W @ X[h][keep], X[h][keep].T @ W @ y[k][keep])
                assert np.isclose(batch.loo[h, k, i], X[h][i] @ coef, rtol=1e-7)


def test_fit_batch_flags_rank_deficient_design() -> None:
    x = np.array([1.0, 1, 1, 1])
    X = np.stack([np.stack([np.ones(4), np.log2(x)], 1), np.stack([np.ones(4), x], 1)])
    batch = fit_batch(X, np.ones((1, 4)), np.ones((1, 4)))
    assert not batch.valid.any()


def test_fit_batch_chunks_many_kernels_consistently(rng: np.random.Generator) -> None:
    x = np.array([4.0, 8, 16, 32, 64])
    X = np.repeat(_designs(x), 400, axis=0)  # large enough to force chunking over kernels
    y = rng.uniform(1, 10, (2000, x.size))
    w = np.ones_like(y)
    whole = fit_batch(X[:3], y, w)
    chunked = fit_batch(X, y, w)
    np.testing.assert_allclose(chunked.coef[:3], whole.coef)


def test_a_kernels_fit_is_the_same_to_the_bit_whatever_kernels_share_its_batch(rng: np.random.Generator) -> None:
    x = np.array([4.0, 8, 16, 32, 64, 128, 256, 512])
    ones = np.ones_like(x)
    designs = {1: np.stack([np.stack([ones], 1)]), 2: _designs(x),
               3: np.stack([np.stack([ones, x, x**2], 1), np.stack([ones, x**0.5, x * np.log2(x)], 1)])}
    y = rng.uniform(1, 100, (301, x.size))
    w = rng.uniform(0.1, 2, (301, x.size))
    for X in designs.values():
        together = fit_batch(X, y, w)
        for k in (0, 7, 300):
            alone = fit_batch(X, y[k : k + 1], w[k : k + 1])
            for field in ("coef", "fitted", "loo", "valid"):
                np.testing.assert_array_equal(getattr(alone, field)[:, 0], getattr(together, field)[:, k])


def test_shared_designs_fit_as_designs_given_per_kernel(rng: np.random.Generator) -> None:
    x = np.array([4.0, 8, 16, 32, 64, 128])
    ones = np.ones_like(x)
    X = np.stack([np.stack([ones, x**0.5, x * np.log2(x)], 1), np.stack([ones, x, x**2], 1)])
    y = rng.uniform(1, 100, (5, x.size))
    w = rng.uniform(0.1, 2, (5, x.size))
    for designs in (X, X[:, :, :2]):
        shared = fit_batch(designs, y, w)
        per_kernel = fit_batch(np.broadcast_to(designs[:, None], (2, 5) + designs.shape[1:]), y, w)
        for field in ("coef", "fitted", "loo"):
            np.testing.assert_allclose(getattr(shared, field), getattr(per_kernel, field), rtol=1e-9)
        np.testing.assert_array_equal(shared.valid, per_kernel.valid)


def test_smape_and_adjusted_r2_closed_form() -> None:
    y = np.array([1.0, 2.0, 4.0])
    assert np.isclose(smape(y, np.array([1.0, 2.0, 2.0])), 100 * (2 * 2 / 6) / 3)
    fitted = np.array([1.5, 1.5, 4.0])
    rss, tss = 0.5, np.sum((y - y.mean()) ** 2)
    assert np.isclose(adjusted_r2(y, fitted, 2), 1 - (rss / 1) / (tss / 2))
    assert adjusted_r2(y, y, 1) == 1.0
    np.testing.assert_allclose(adjusted_r2(np.stack([y, y]), np.stack([fitted, y]), np.array([2, 1])),
                               [1 - (rss / 1) / (tss / 2), 1.0])


def test_fit_batch_rejects_terms_beyond_the_floats_without_warnings() -> None:
    x = 1e160 * np.array([1.0, 2, 4, 8, 16, 32])  # p^3 overflows, and so do the squares of p
    ones = np.ones_like(x)
    with np.errstate(over="ignore"):
        X = np.stack([np.stack([ones, x**0.5], 1), np.stack([ones, x], 1), np.stack([ones, x**3], 1)])
    y = (10 + 1e-160 * x)[None]
    with np.errstate(all="raise"):
        batch = fit_batch(X, y, 1 / y**2)
    assert batch.valid[:, 0].tolist() == [True, True, False]
    np.testing.assert_allclose(batch.coef[1, 0], [10, 1e-160], rtol=1e-9)
    assert np.all(np.isfinite(batch.coef)) and np.all(np.isfinite(batch.fitted[:2]))


def test_a_shared_design_on_a_few_points_is_fitted_point_by_point_to_the_same_bits(monkeypatch,
                                                                                  rng: np.random.Generator) -> None:
    """Up to `POINT_BY_POINT` points, a design all kernels share is fitted point by point (point-major arrays, loops
    along the kernels): the same values, to the bit, as the kernel-major layout, and the same scores."""
    from scalecheck.core import fit
    from scalecheck.core.fit import point_major
    from scalecheck.core.search import FitOptions, point_stats, score

    for n in (3, 5, 8, 16):
        x = 2.0 ** np.arange(1, n + 1)
        ones = np.ones_like(x)
        designs = [np.stack([np.stack([ones], 1)]), _designs(x),
                   np.stack([np.stack([ones, x, x**2], 1), np.stack([ones, x**0.5, x * np.log2(x)], 1)])]
        values = rng.lognormal(0, 0.3, (40, n, 3)) * (1 + x[None, :, None])
        values[3, 1] = 7.0  # no spread at one point
        values[5] = 2.0  # a constant
        values[6, :, 1:] = np.nan  # one repetition
        stats = point_stats(values)
        for X in designs:
            lead = np.zeros((X.shape[0], X.shape[2]), dtype=bool)
            lead[:, -1] = X.shape[2] > 1
            by_points, scored = fit.fit_batch(X, stats.y, stats.weights), score(X, lead, stats, FitOptions())
            monkeypatch.setattr(fit, "POINT_BY_POINT", 0)
            by_kernels, reference = fit.fit_batch(X, stats.y, stats.weights), score(X, lead, stats, FitOptions())
            monkeypatch.undo()
            assert point_major(by_points.fitted) and point_major(by_points.loo)
            assert not point_major(by_kernels.fitted)
            for field in ("coef", "fitted", "loo", "valid"):
                np.testing.assert_array_equal(getattr(by_points, field), getattr(by_kernels, field))
            np.testing.assert_array_equal(scored.loo, reference.loo)
            np.testing.assert_array_equal(scored.wrss, reference.wrss)


def test_a_single_fit_on_many_points_is_scored_along_its_points(rng: np.random.Generator) -> None:
    """One hypothesis and one kernel on many points: a (1, 1, n) array is C-contiguous both ways, but it is not the
    point-by-point layout; its scores are numpy's sums (pairwise beyond 128 values) to the bit."""
    from scalecheck.core.fit import point_major
    from scalecheck.core.search import FitOptions, point_stats, score

    x = np.linspace(1, 1000, 3000)
    X = np.stack([np.stack([np.ones_like(x), x], 1)])
    stats = point_stats((3 + x)[None, :, None] * rng.lognormal(0, 0.05, (1, x.size, 3)))
    batch = fit_batch(X, stats.y, stats.weights)
    assert not point_major(batch.fitted) and point_major(np.zeros((1, 1, 16))) and not point_major(np.zeros((2, 3, 17)))
    scored = score(X, np.array([[False, True]]), stats, FitOptions())
    w, y = stats.weights[None], stats.y[None]
    np.testing.assert_array_equal(scored.wrss, np.sum(w * (y - batch.fitted) ** 2, axis=-1))
    np.testing.assert_array_equal(scored.loo, np.sum(w * (y - batch.loo) ** 2, axis=-1))
