"""Batched weighted least squares with leave-one-out residuals from the hat matrix.

One call fits H hypotheses (design matrices sharing the point set) to K kernels at once: no Python loop per
(kernel, hypothesis) pair. Leave-one-out predictions come from the leverages h_ii, not from n refits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Chunk kernels so that one (H, K, n, k) work array stays around this many elements (about 32 MB of float64).
_CHUNK_ELEMENTS = 4_000_000
# A normal matrix whose smallest/largest eigenvalue ratio is below this is treated as rank-deficient.
_MIN_EIGEN_RATIO = 1e-13
# A point with leverage this close to 1 alone determines a coefficient: its leave-one-out prediction is undefined.
_MAX_LEVERAGE = 1.0 - 1e-9


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
    X : ndarray, shape (H, n, k)
        Design matrices, one per hypothesis, on the same n points (column 0 is usually ones).
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
    Columns are whitened by sqrt(w) and scaled to unit norm before the k x k normal equations are solved, which
    keeps p^3 next to log2(p) well conditioned. Cost O(H K n k^2); memory is bounded by chunking over kernels.
    """
    H, n, k = X.shape
    K = y.shape[0]
    step = max(1, _CHUNK_ELEMENTS // max(1, H * n * k))
    if K > step:
        parts = [fit_batch(X, y[s : s + step], w[s : s + step]) for s in range(0, K, step)]
        return BatchFit(*(np.concatenate([getattr(p, f) for p in parts], axis=1)
                          for f in ("coef", "fitted", "loo", "valid")))
    sw = np.sqrt(w)  # (K, n)
    Xw = X[:, None, :, :] * sw[None, :, :, None]  # (H, K, n, k)
    norms = np.sqrt(np.einsum("hkni,hkni->hki", Xw, Xw))  # (H, K, k)
    valid = np.all(norms > 0, axis=2)
    norms = np.where(norms > 0, norms, 1.0)
    Xs = Xw / norms[:, :, None, :]
    A = np.einsum("hkni,hknj->hkij", Xs, Xs)  # (H, K, k, k), unit diagonal
    if k > 1:
        eig = np.linalg.eigvalsh(A)
        valid &= eig[..., 0] > _MIN_EIGEN_RATIO * eig[..., -1]
        A = np.where(valid[..., None, None], A, np.eye(k))
    A_inv = np.linalg.inv(A)
    b = np.einsum("hkni,kn->hki", Xs, y * sw)
    coef = np.einsum("hkij,hkj->hki", A_inv, b) / norms
    fitted = np.einsum("hni,hki->hkn", X, coef)
    leverage = np.einsum("hknj,hknj->hkn", np.einsum("hkni,hkij->hknj", Xs, A_inv), Xs)
    defined = leverage < _MAX_LEVERAGE
    valid &= np.all(defined, axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        loo = np.where(defined, y[None] - (y[None] - fitted) / (1.0 - leverage), np.nan)
    return BatchFit(coef, fitted, loo, valid)


def smape(y: np.ndarray, prediction: np.ndarray) -> np.ndarray:
    """Symmetric mean absolute percentage error over the last axis, in percent (0 where both are 0)."""
    denominator = np.abs(y) + np.abs(prediction)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(denominator > 0, 2.0 * np.abs(y - prediction) / denominator, 0.0)
    return 100.0 * np.mean(ratio, axis=-1)


def adjusted_r2(y: np.ndarray, fitted: np.ndarray, n_coefficients: int) -> float:
    """Adjusted R^2 of one fit; NaN when there are no residual degrees of freedom or y does not vary."""
    n = y.size
    tss = float(np.sum((y - y.mean()) ** 2))
    rss = float(np.sum((y - fitted) ** 2))
    if n - n_coefficients <= 0 or tss <= 0:
        return 1.0 if rss <= 1e-24 * max(1.0, float(np.sum(y**2))) and n > n_coefficients else float("nan")
    return 1.0 - (rss / (n - n_coefficients)) / (tss / (n - 1))
