"""Batched weighted least squares with leave-one-out residuals from the hat matrix.

One call fits H hypotheses (design matrices sharing the point set) to K kernels at once: no Python loop per
(kernel, hypothesis) pair. Leave-one-out predictions come from the leverages h_ii, not from n refits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Chunk kernels so that one (H, K, n, k) work array stays around this many elements (about 32 MB of float64).
_CHUNK_ELEMENTS = 4_000_000
# A unit-diagonal normal matrix with a determinant below this is treated as rank-deficient (near-collinear columns).
_MIN_DETERMINANT = 1e-12
# A point with leverage this close to 1 alone determines a coefficient: its leave-one-out prediction is undefined.
_MAX_LEVERAGE = 1.0 - 1e-9
# A design shared by all kernels on up to this many points is fitted point by point (`_by_points`)
POINT_BY_POINT = 16


@dataclass(frozen=True, eq=False)
class BatchFit:
    """Fits of H hypotheses to K kernels on n shared points with k coefficients each."""

    coef: np.ndarray  # (H, K, k): coefficients in the units of the design matrix
    fitted: np.ndarray  # (H, K, n): in-sample model values
    loo: np.ndarray  # (H, K, n): leave-one-out predictions (NaN where undefined)
    valid: np.ndarray  # (H, K) bool: full rank and every leave-one-out prediction defined


def fit_batch(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> BatchFit:
    """Weighted least squares of every hypothesis against every kernel.

    Parameters
    ----------
    X : ndarray, shape (H, n, k) or (H, K, n, k)
        Design matrices on the same n points (column 0 is usually ones): one per hypothesis, or one per
        hypothesis and kernel (the multi-parameter search gives each kernel its own candidate terms).
    y : ndarray, shape (K, n)
        Per-point aggregates of K kernels.
    w : ndarray, shape (K, n)
        Positive weights (inverse variances up to a common factor).

    Returns
    -------
    BatchFit
        Coefficients, in-sample values, leave-one-out predictions and validity.

    Notes
    -----
    The weighted normal matrix is scaled to a unit diagonal (as if the columns, whitened by sqrt(w), had unit
    norm): p^3 next to log2(p) stays well conditioned, and its determinant (in (0, 1]) measures collinearity. It is
    built from products of design columns (`_fit_products`); where such a product overflows, from the whitened
    columns scaled first. The normal equations are solved in closed form for k <= 3, elementwise over all
    (hypothesis, kernel) pairs, which is several times faster than stacked LAPACK calls on tiny matrices. Cost
    O(H K n k^2); memory is bounded by chunking over kernels.
    """
    if X.ndim == 3:
        X = X[:, None]
    H, _, n, k = X.shape
    K = y.shape[0]
    step = max(1, _CHUNK_ELEMENTS // max(1, H * n * k))
    if K > step:
        per_kernel = X.shape[1] > 1
        parts = [fit_batch(X[:, s : s + step] if per_kernel else X, y[s : s + step], w[s : s + step])
                 for s in range(0, K, step)]
        return BatchFit(*(np.concatenate([getattr(p, f) for p in parts], axis=1)
                          for f in ("coef", "fitted", "loo", "valid")))
    fast = _fit_products(X, y, w)
    if fast is not None:
        return fast
    sw = np.sqrt(w)  # (K, n)
    with np.errstate(over="ignore", invalid="ignore"):
        cols = np.moveaxis(X, 3, 0) * sw[None, None]  # (k, H, K, n): whitened columns
    norms = _norms(cols)  # (k, H, K); not finite where a column is not (p^3 at p = 1e120 overflows)
    valid = np.all(np.isfinite(norms) & (norms > 0), axis=0)  # (H, K): such a term cannot be fitted
    if not valid.all():
        cols = np.where(valid[None, :, :, None], cols, 0.0)  # keep invalid fits finite and quiet
        X = np.where(np.isfinite(X), X, 0.0)
    norms = np.where(valid[None] & (norms > 0), norms, 1.0)
    cols /= norms[..., None]
    A = np.empty((k, k, H, K))
    for i in range(k):
        for j in range(i, k):
            A[i, j] = A[j, i] = np.einsum("hkn,hkn->hk", cols[i], cols[j])
    A_inv, det = _inverse(A)
    valid &= det > _MIN_DETERMINANT
    yw = y * sw
    b = np.einsum("chkn,kn->chk", cols, yw)  # (k, H, K)
    beta = np.einsum("ijhk,jhk->ihk", A_inv, b)
    coef = np.moveaxis(beta / norms, 0, 2)  # (H, K, k)
    with np.errstate(over="ignore", invalid="ignore"):
        fitted = np.sum(X * coef[:, :, None, :], axis=3)  # (H, K, n)
    valid &= np.all(np.isfinite(fitted), axis=2)
    leverage = np.zeros((H, K, n))
    for i in range(k):
        for j in range(k):
            leverage += cols[i] * A_inv[i, j][..., None] * cols[j]
    defined = leverage < _MAX_LEVERAGE
    valid &= np.all(defined, axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        loo = np.where(defined, y[None] - (y[None] - fitted) / (1.0 - leverage), np.nan)
    return BatchFit(coef, fitted, loo, valid)


def _fit_products(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> BatchFit | None:
    """`fit_batch` from products of design columns, X (H, 1 or K, n, k): the weighted products of two columns and
    the right-hand sides are sums over the points of the weights times products of design columns, so the whitened
    columns (k arrays of the size of the fitted values) are never formed. None where a product of two columns is
    not finite (p^3 at p = 1e120): the general path scales such columns first.

    The normal matrix is the general path's, scaled to a unit diagonal by the columns' weighted norms. Every sum is
    an `einsum` along the points or elementwise (never a BLAS product, whose order of summation depends on the shape
    of the batch): a kernel's fit is the same to the bit whatever other kernels share the batch.
    """
    H, shared, n, k = X.shape
    pairs = [(i, j) for i in range(k) for j in range(i, k)]
    along = "kn,hn->hk" if shared == 1 else "kn,hkn->hk"
    design = X[:, 0] if shared == 1 else X  # (H, n, k) or (H, K, n, k)
    with np.errstate(over="ignore", invalid="ignore"):
        products = [design[..., i] * design[..., j] for i, j in pairs]  # (H, n) or (H, K, n) each
        S = [np.einsum(along, w, product) for product in products]  # (H, K) each
    if not all(np.isfinite(a).all() for a in products + S):
        return None
    norms = [np.sqrt(S[pairs.index((i, i))]) for i in range(k)]
    valid = np.all([norm > 0 for norm in norms], axis=0)  # (H, K)
    norms = [np.where(norm > 0, norm, 1.0) for norm in norms]
    A = np.empty((k, k) + valid.shape)
    for q, (i, j) in enumerate(pairs):
        A[i, j] = A[j, i] = 1.0 if i == j else S[q] / (norms[i] * norms[j])
    A_inv, det = _inverse(A)
    valid &= det > _MIN_DETERMINANT
    wy = w * y
    columns = [design[..., i] if shared > 1 else design[:, None, :, i] for i in range(k)]  # (H, 1 or K, n) each
    with np.errstate(over="ignore", invalid="ignore"):
        b = [np.einsum(along, wy, design[..., i]) / norms[i] for i in range(k)]
        terms = [sum(A_inv[i, j] * b[j] for j in range(k)) / norms[i] for i in range(k)]  # (H, K) each
        coef = np.stack(terms, axis=2)  # (H, K, k)
        scaled = [A_inv[i, j] / (norms[i] * norms[j]) * (1.0 if i == j else 2.0) for i, j in pairs]
    if shared == 1 and n <= POINT_BY_POINT:
        return _by_points(design, y, w, coef, terms, products, scaled, valid)
    with np.errstate(over="ignore", invalid="ignore"):
        fitted = coef[:, :, 0, None] * columns[0]
        for i in range(1, k):
            fitted += coef[:, :, i, None] * columns[i]  # (H, K, n)
    valid &= np.all(np.isfinite(fitted), axis=2)
    leverage = np.zeros(fitted.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        for q in range(len(pairs)):  # A^-1 in the units of the design; an off-diagonal pair counts twice
            leverage += scaled[q][..., None] * (products[q] if shared > 1 else products[q][:, None])
        leverage *= w[None]
    defined = leverage < _MAX_LEVERAGE
    valid &= np.all(defined, axis=2)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        loo = np.where(defined, y[None] - (y[None] - fitted) / (1.0 - leverage), np.nan)
    return BatchFit(coef, fitted, loo, valid)


def _by_points(design: np.ndarray, y: np.ndarray, w: np.ndarray, coef: np.ndarray, terms: list[np.ndarray],
               products: list[np.ndarray], scaled: list[np.ndarray], valid: np.ndarray) -> BatchFit:
    """The rest of `_fit_products` for a design (H, n, k) that all K kernels share, point by point: each point's
    fitted values, leverages and leave-one-out predictions are (H, K) arrays, laid out point-major, so that numpy's
    loops run along the kernels, not along a few points. The same operations on the same values: the same bits.

    `terms` are the columns (H, K) of `coef` (H, K, k), `products` the (H, n) products of design columns (pairs
    i <= j), `scaled` the matching (H, K) entries of the inverse normal matrix in the design's units (off-diagonal
    ones doubled). The fitted values and leave-one-out predictions returned are (H, K, n) views of point-major
    arrays (`point_major`).
    """
    H, n, k = design.shape
    K = y.shape[0]
    fitted, loo = np.empty((n, H, K)), np.empty((n, H, K))
    leverage = np.empty((H, K))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for point in range(n):
            value = fitted[point]
            np.multiply(terms[0], design[:, point, 0, None], out=value)
            for i in range(1, k):
                value += terms[i] * design[:, point, i, None]
            valid &= np.isfinite(value)
            leverage.fill(0.0)
            for q, product in enumerate(products):
                leverage += scaled[q] * product[:, point, None]
            leverage *= w[:, point]
            defined = leverage < _MAX_LEVERAGE
            valid &= defined
            measured = y[:, point]
            loo[point] = np.where(defined, measured - (measured - value) / (1.0 - leverage), np.nan)
    return BatchFit(coef, np.moveaxis(fitted, 0, 2), np.moveaxis(loo, 0, 2), valid)


def point_major(values: np.ndarray) -> bool:
    """Whether `values` (..., n) may be taken point by point, as `_by_points` lays its results out: at most
    `POINT_BY_POINT` points, the last axis the slowest (a single row of many points is C-contiguous both ways)."""
    return 1 < values.ndim and values.shape[-1] <= POINT_BY_POINT and np.moveaxis(values, -1, 0).flags.c_contiguous


def _norms(cols: np.ndarray) -> np.ndarray:
    """Norms (k, H, K) of whitened columns (k, H, K, n), without overflow: a column whose squares overflow (p^3 at
    p = 1e60) is scaled by its largest entry first. Not finite for a column with an entry that is not."""
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.sqrt(np.einsum("chkn,chkn->chk", cols, cols))
    huge = ~np.isfinite(norms)
    if huge.any():
        big = cols[huge]  # (c, n)
        with np.errstate(over="ignore", invalid="ignore"):
            peak = np.max(np.abs(big), axis=-1)
            safe = np.where((peak > 0) & np.isfinite(peak), peak, 1.0)
            norms[huge] = peak * np.sqrt(np.sum((big / safe[:, None]) ** 2, axis=-1))
    return np.asarray(norms)


def _inverse(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inverse and determinant of a stack of symmetric k x k matrices laid out as (k, k, ...).

    Closed form for k <= 3; LAPACK for larger k. Singular matrices get a finite (meaningless) inverse and a
    determinant <= _MIN_DETERMINANT, which the caller treats as invalid.
    """
    k = A.shape[0]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if k == 1:
            det = A[0, 0]
            inv = (1.0 / np.where(det > 0, det, 1.0))[None, None]
            return inv, det
        if k == 2:
            det = A[0, 0] * A[1, 1] - A[0, 1] ** 2
            safe = np.where(det > _MIN_DETERMINANT, det, 1.0)
            return _symmetric([[A[1, 1], -A[0, 1]], [-A[0, 1], A[0, 0]]], safe), det
        if k == 3:
            c00 = A[1, 1] * A[2, 2] - A[1, 2] ** 2
            c01 = A[0, 2] * A[1, 2] - A[0, 1] * A[2, 2]
            c02 = A[0, 1] * A[1, 2] - A[0, 2] * A[1, 1]
            c11 = A[0, 0] * A[2, 2] - A[0, 2] ** 2
            c12 = A[0, 1] * A[0, 2] - A[0, 0] * A[1, 2]
            c22 = A[0, 0] * A[1, 1] - A[0, 1] ** 2
            det = A[0, 0] * c00 + A[0, 1] * c01 + A[0, 2] * c02
            safe = np.where(det > _MIN_DETERMINANT, det, 1.0)
            return _symmetric([[c00, c01, c02], [c01, c11, c12], [c02, c12, c22]], safe), det
    stacked = np.moveaxis(A, (0, 1), (-2, -1))
    det = np.linalg.det(stacked)
    ok = det > _MIN_DETERMINANT
    inv = np.linalg.inv(np.where(ok[..., None, None], stacked, np.eye(k)))
    return np.moveaxis(inv, (-2, -1), (0, 1)), det


def _symmetric(entries: list[list[np.ndarray]], scale: np.ndarray) -> np.ndarray:
    """The (k, k, ...) array of `entries` (k lists of k arrays) divided by `scale`: each entry divided once."""
    k = len(entries)
    out = np.empty((k, k) + np.shape(scale))
    for i in range(k):
        for j in range(k):
            np.divide(entries[i][j], scale, out=out[i, j])
    return out


def smape(y: np.ndarray, prediction: np.ndarray) -> np.ndarray:
    """Symmetric mean absolute percentage error over the last axis, in percent (0 where both are 0)."""
    denominator = np.abs(y) + np.abs(prediction)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(denominator > 0, 2.0 * np.abs(y - prediction) / denominator, 0.0)
    return np.asarray(100.0 * np.mean(ratio, axis=-1))


def adjusted_r2(y: np.ndarray, fitted: np.ndarray, n_coefficients: np.ndarray | int) -> np.ndarray:
    """Adjusted R^2 over the last axis: y, fitted of shape (..., n), n_coefficients broadcastable to (...).

    1.0 for an exact fit of data that do not vary; NaN when there are no residual degrees of freedom or y does not
    vary and the fit is not exact.
    """
    n = y.shape[-1]
    tss = np.sum((y - y.mean(axis=-1, keepdims=True)) ** 2, axis=-1)
    rss = np.sum((y - fitted) ** 2, axis=-1)
    free = n - np.asarray(n_coefficients)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 1.0 - (rss / free) / (tss / (n - 1))
    exact = rss <= 1e-24 * np.maximum(1.0, np.sum(y**2, axis=-1))
    return np.where((free > 0) & (tss > 0), value, np.where(exact & (free > 0), 1.0, np.nan))
