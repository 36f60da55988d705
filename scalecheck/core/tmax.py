"""t_max of repeated timings: a noise model per sample (Kluge, Knuepfer and Nagel, section 4-7).

A timing is t = t_min + t_err: the time the hardware and library need plus positive errors (other processes, the
operating system, the timer). For a sample S of timings of one operation at one configuration:

1. **Shift and bin.** x = t - min(S) (min(S) stands for t_min) is binned into classes k = floor(x / width). The
   width is never finer than the timer resolution. When a resolution is given, the width is that resolution, or
   the sample's own grid when every value lies on a coarser step. Without one, the default is the sample's grid
   (the largest step every value lies on, the smallest gap between values or a tenth of it at most: the timer's
   tick shows in the data), else a sixteenth of the interquartile
   range (of the largest x when the IQR is 0): fine enough that the upper edge of a class overshoots t_max by
   about 1% of the error for exponential noise, while the test pools the sparse classes. A width giving more
   than `max_classes` classes is widened by a whole factor, so a grid stays aligned. The width used is recorded.
2. **Fit** a Poisson and a discretized exponential distribution (scipy's `poisson` and `planck`) to the classes by
   maximum likelihood: the Poisson mean is the mean class; the exponential's rate per class is log(1 + 1/mean).
3. **Test** each with the chi-square goodness-of-fit test, adjacent classes pooled from the left until each
   expected count is at least 5 (the upper tail, beyond the largest class seen, joins the last group), with
   groups - 2 degrees of freedom (one parameter estimated). With `refine`, the parameter is then moved to the
   minimum of chi^2 (the paper's equation 10) by a grid search around the maximum-likelihood value.
4. **Choose** the accepted model (p-value >= `alpha`) with the lowest chi^2; when every tested model is rejected,
   fall back to the empirical quantile (flagged as "empirical"). A sample too small for the test (fewer than 15
   values leave no degree of freedom) keeps the model with the higher likelihood.
5. **t_max** = min(S) + the upper edge of the class k_q that holds the chosen model's `quantile` q_max
   (0.8 <= q_max < 1, default 0.95): the largest time the class holds. For binned continuous values that is
   (k_q + 1) * width (a value just below the edge still belongs to class k_q). For values on a grid (a timer's
   tick), a class holds the grid values from k * width up to the last one below (k + 1) * width; when the width
   is the grid step, class k is the single reading k * width, and t_max is that reading. Either way the model
   gives P(t <= t_max) >= q_max, and no tighter bound does.

Every function works on a batch of samples at once (rows of a NaN-padded array), in chunks of rows, with one
Python loop over classes at most: `tmax` serves as a per-point aggregate over bootstrap resamples, and `fit_noise`
(one sample) is a batch of one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scalecheck.data.noise import EMPIRICAL, FAMILIES, WIDTH_SOURCES, FamilyFit, NoiseModel

DEFAULT_QUANTILE = 0.95
MIN_VALUES = 10  # a calibration sample needs at least this many timings (the readers enforce it)
MIN_EXPECTED = 5.0  # pooled classes of the chi-square test hold at least this expected count
MAX_CLASSES = 128
_CHUNK = 16384  # rows per chunk of the chi-square loop: bounds memory at chunk x classes
_GRID_DIVISORS = 10  # a grid step is looked for among the smallest gap divided by 1 .. 10
_SPREAD_CLASSES = 16  # without resolution or grid: the interquartile range spans this many classes
_TESTABLE = 15  # fewer values pool into at most 2 groups: no degree of freedom left
_POISSON, _EXPONENTIAL, _EMPIRICAL = 0, 1, 2
_REFINE_STEPS = (np.exp(np.linspace(-0.4, 0.4, 33)), np.exp(np.linspace(-0.03, 0.03, 13)))


@dataclass(frozen=True)
class NoiseOptions:
    """Settings of the noise model, with the paper's defaults where it gives one."""

    quantile: float = DEFAULT_QUANTILE  # q_max of t_max
    resolution: float | None = None  # timer resolution, in the timings' unit; None: unknown (see module docs)
    alpha: float = 0.01  # level of the chi-square test: a model whose p-value is below it is rejected
    refine: bool = False  # move each parameter to the minimum of chi^2 (the paper's optional refinement)
    max_classes: int = MAX_CLASSES

    def __post_init__(self) -> None:
        if not 0.8 <= self.quantile < 1:
            raise ValueError(f"quantile must be in [0.8, 1), got {self.quantile}")
        if self.resolution is not None and not (math.isfinite(self.resolution) and self.resolution > 0):
            raise ValueError(f"resolution must be a positive number, got {self.resolution}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha}")
        if self.max_classes < 8:
            raise ValueError(f"max_classes must be at least 8, got {self.max_classes}")


@dataclass(frozen=True, eq=False)
class NoiseBatch:
    """Noise models of K samples. Family axis 0 is (poisson, exponential), as `FAMILIES`."""

    n: np.ndarray  # (K,) values per sample
    minimum: np.ndarray  # (K,)
    width: np.ndarray  # (K,) class width used
    width_source: np.ndarray  # (K,) index into WIDTH_SOURCES
    step: np.ndarray  # (K,) grid step every value lies on (0: none)
    parameter: np.ndarray  # (2, K) in class units (Poisson mean; exponential rate per class)
    log_likelihood: np.ndarray  # (2, K)
    chi2: np.ndarray  # (2, K) NaN where untested
    dof: np.ndarray  # (2, K) 0 where untested
    p_value: np.ndarray  # (2, K) NaN where untested
    chosen: np.ndarray  # (K,) 0 poisson, 1 exponential, 2 empirical
    t_max: np.ndarray  # (K,)
    quantile: float
    alpha: float

    def model(self, index: int) -> NoiseModel:
        """Sample `index` as a `NoiseModel` record."""
        fits = tuple(FamilyFit(family, float(self.parameter[f, index]), float(self.log_likelihood[f, index]),
                               float(self.chi2[f, index]), int(self.dof[f, index]), float(self.p_value[f, index]))
                     for f, family in enumerate(FAMILIES))
        chosen = EMPIRICAL if self.chosen[index] == _EMPIRICAL else FAMILIES[int(self.chosen[index])]
        return NoiseModel(int(self.n[index]), float(self.minimum[index]), float(self.width[index]),
                          WIDTH_SOURCES[int(self.width_source[index])], float(self.step[index]), self.quantile,
                          self.alpha, fits, chosen, float(self.t_max[index]))


def fit_noise(sample: np.ndarray, options: NoiseOptions = NoiseOptions()) -> NoiseModel:
    """The noise model and t_max of one sample (module docstring).

    Parameters
    ----------
    sample : ndarray, shape (N,)
        Repeated timings of one operation at one configuration, finite and N >= 1. The readers of calibration
        files require N >= `MIN_VALUES` and values that are not all equal; this function accepts any sample.

    Cost: O(N log N) plus O(C) per family for C classes (at most `options.max_classes`).
    """
    values = np.asarray(sample, dtype=float).reshape(1, -1)
    if values.size == 0 or not np.all(np.isfinite(values)):
        raise ValueError("a sample needs at least one value, and only finite ones")
    return fit_noise_batch(values, options).model(0)


def tmax(values: np.ndarray, quantile: float = DEFAULT_QUANTILE, resolution: float | None = None) -> np.ndarray:
    """t_max of every sample along the last axis, shape values.shape[:-1]: min(S) plus the fitted quantile.

    NaN pads samples of unequal size; a sample without values gives NaN. This is the `tmax` aggregate.
    """
    values = np.asarray(values, dtype=float)
    flat = values.reshape(-1, values.shape[-1])
    out = np.full(flat.shape[0], np.nan)
    rows = np.flatnonzero(np.any(~np.isnan(flat), axis=1))
    if rows.size:
        out[rows] = fit_noise_batch(flat[rows], NoiseOptions(quantile=quantile, resolution=resolution)).t_max
    return out.reshape(values.shape[:-1])


def fit_noise_batch(values: np.ndarray, options: NoiseOptions = NoiseOptions(),
                    resolution: np.ndarray | None = None) -> NoiseBatch:
    """Noise models of K samples at once.

    Parameters
    ----------
    values : ndarray, shape (K, r)
        One sample per row, NaN-padded; every row holds at least one value.
    resolution : ndarray, shape (K,), optional
        Timer resolution per sample (NaN: unknown); overrides `options.resolution`.

    Cost: a sort of the rows, then for rows with at least 15 values one pass per class over chunks of rows for
    each family (x 46 with `refine`); about 13 us per sample of 30 values, 40 us per sample of 200.

    Reference: M. Kluge, A. Knuepfer, W. E. Nagel, *Statistical methods for automatic performance bottleneck
    detection in MPI based programs*, ICCS 2005, sections 4-7.
    """
    from scalecheck.core import special

    values = np.sort(np.asarray(values, dtype=float), axis=1)  # NaN last
    K = values.shape[0]
    n = np.sum(~np.isnan(values), axis=1)
    if np.any(n == 0):
        raise ValueError("every sample needs at least one value")
    if resolution is None:
        resolution = np.full(K, np.nan if options.resolution is None else options.resolution)
    minimum = values[:, 0]
    x = values - minimum[:, None]
    width, source, step = _widths(values, x, n, np.asarray(resolution, dtype=float), options.max_classes)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(width[:, None] > 0, np.floor(x / width[:, None] + 1e-9), 0.0)  # NaN stays NaN
    total = np.nansum(k, axis=1)
    mean = total / n
    log_fact = np.nansum(special.gammaln(k + 1), axis=1)
    rate = np.where(mean > 0, np.log1p(1 / np.where(mean > 0, mean, 1.0)), np.inf)  # planck's lambda
    parameter = np.stack([mean, rate])
    with np.errstate(divide="ignore", invalid="ignore"):
        loglik = np.stack([
            np.where(mean > 0, total * np.log(np.where(mean > 0, mean, 1.0)) - n * mean - log_fact, 0.0),
            np.where(mean > 0, n * np.log(-np.expm1(-rate)) - rate * total, 0.0),
        ])
    chi2 = np.full((2, K), np.nan)
    dof = np.zeros((2, K), dtype=int)
    rows = np.flatnonzero((n >= _TESTABLE) & (mean > 0))
    if rows.size:
        for family in (_POISSON, _EXPONENTIAL):
            stat, groups = _chi_square(k[rows], n[rows], family, parameter[family, rows])
            if options.refine:
                parameter[family, rows], stat, groups = _refine(k[rows], n[rows], family, parameter[family, rows],
                                                                stat, groups)
            chi2[family, rows], dof[family, rows] = stat, groups - 2
    tested = dof > 0
    chi2 = np.where(tested, chi2, np.nan)
    dof = np.where(tested, dof, 0)
    p_value = np.where(tested, special.chdtrc(np.maximum(dof, 1), np.where(tested, chi2, 0.0)), np.nan)
    accepted = tested & (p_value >= options.alpha)
    chosen = np.where(np.argmax(loglik, axis=0) == 1, _EXPONENTIAL, _POISSON)  # ties (all in class 0): Poisson
    any_tested = tested.any(axis=0)
    best_accepted = np.argmin(np.where(accepted, chi2, np.inf), axis=0)
    chosen = np.where(any_tested, np.where(accepted.any(axis=0), best_accepted, _EMPIRICAL), chosen)
    q = options.quantile
    k_q = np.zeros(K)
    rows = np.flatnonzero(chosen == _POISSON)
    k_q[rows] = poisson_quantile(q, parameter[_POISSON, rows])
    rows = np.flatnonzero(chosen == _EXPONENTIAL)
    rate = parameter[_EXPONENTIAL, rows]
    k_q[rows] = np.where(np.isfinite(rate), np.maximum(np.ceil(-math.log1p(-q) / rate - 1e-9) - 1, 0), 0.0)
    rows = np.flatnonzero(chosen == _EMPIRICAL)
    k_q[rows] = np.take_along_axis(np.where(np.isnan(k[rows]), np.inf, k[rows]),
                                   (np.ceil(q * n[rows]).astype(int) - 1)[:, None], axis=1)[:, 0]
    return NoiseBatch(n, minimum, width, source, step, parameter, loglik, chi2, dof, p_value, chosen,
                      minimum + _upper_edge(k_q, width, step), q, options.alpha)


def poisson_quantile(q: float, mean: np.ndarray) -> np.ndarray:
    """The smallest k with P(K <= k) >= q for K ~ Poisson(mean), elementwise (scipy.stats.poisson.ppf without
    importing scipy.stats, which costs a second at start-up)."""
    from scalecheck.core import special

    mean = np.asarray(mean, dtype=float)
    positive = mean > 0
    safe = np.where(positive, mean, 1.0)
    k = np.ceil(special.pdtrik(q, safe))
    below = np.maximum(k - 1, 0)
    k = np.where(special.pdtr(below, safe) >= q, below, k)
    return np.asarray(np.where(positive, k, 0.0))


def _upper_edge(k: np.ndarray, width: np.ndarray, step: np.ndarray) -> np.ndarray:
    """(K,) the largest value above the minimum that class k holds: (k + 1) * width for binned continuous values;
    on a grid of `step`, the largest grid value below that edge (k * width when the width is the step)."""
    edge = (k + 1) * width
    with np.errstate(invalid="ignore", divide="ignore"):
        on_grid = np.maximum(np.ceil(edge / step - 1e-6) - 1, 0) * step
    return np.asarray(np.where(width > 0, np.where(step > 0, on_grid, edge), 0.0))


def _widths(values: np.ndarray, x: np.ndarray, n: np.ndarray, resolution: np.ndarray,
            max_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(K,) class widths, (K,) their sources (index into WIDTH_SOURCES) and (K,) the grid step the values lie on
    (0: none); `values` sorted, NaN last."""
    rows = np.arange(values.shape[0])
    xmax = x[rows, n - 1]
    scale = np.maximum(np.abs(values[:, 0]), xmax)
    with np.errstate(invalid="ignore", divide="ignore"):
        gaps = np.diff(values, axis=1)
        smallest = np.min(np.where(gaps > 1e-9 * scale[:, None], gaps, np.inf), axis=1, initial=np.inf)
        grid = np.full(values.shape[0], np.nan)
        # the grid is the smallest gap, or a whole fraction of it (values rounded to a tick rarely sit one apart);
        # the few smallest values rule out most rows cheaply, the rest are checked in full
        for divisor in range(_GRID_DIVISORS, 0, -1):
            step = smallest / divisor
            rows = np.flatnonzero(np.isfinite(step) & (xmax / step <= 1e7) & _on_steps(x[:, :5], step))
            rows = rows[_on_steps(x[rows], step[rows])]
            grid[rows] = step[rows]
    on_grid = np.isfinite(grid)
    low, high = _sorted_quantile(x, n, 0.25), _sorted_quantile(x, n, 0.75)
    spread = np.where(high > low, high - low, xmax) / _SPREAD_CLASSES
    known = np.isfinite(resolution)
    width = np.where(known, np.fmax(resolution, np.where(grid > resolution, grid, np.nan)),
                     np.where(on_grid, grid, spread))
    source = np.where(known, np.where(on_grid & (grid > resolution), 1, 0), np.where(on_grid, 1, 2))
    flat = xmax <= 0
    width = np.where(flat, np.where(known, resolution, 0.0), width)
    source = np.where(flat & ~known, 3, source)
    with np.errstate(invalid="ignore", divide="ignore"):
        classes = np.where(width > 0, xmax / width, 0.0)
    factor = np.where(classes >= max_classes, np.floor(classes / max_classes) + 1, 1.0)
    # all values equal: the single class is the minimum itself, so t_max is the minimum
    return width * factor, source, np.where(flat, width, np.where(on_grid, grid, 0.0))


def _on_steps(x: np.ndarray, step: np.ndarray) -> np.ndarray:
    """(K,) True where every value of the row (NaN ignored) is a whole multiple of its step, to 0.1%."""
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = x / step[:, None]
        off = np.abs(ratio - np.round(ratio))
    return np.asarray(np.all((off <= 1e-3) | np.isnan(off), axis=1))


def _sorted_quantile(x: np.ndarray, n: np.ndarray, q: float) -> np.ndarray:
    """(K,) the q-quantile (linear interpolation) of each row's first n values; rows sorted ascending."""
    position = (n - 1) * q
    below = np.floor(position).astype(int)
    above = np.minimum(below + 1, n - 1)
    rows = np.arange(x.shape[0])
    return np.asarray(x[rows, below] + (position - below) * (x[rows, above] - x[rows, below]))


def _pmf(family: int, parameter: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """(R, C) probabilities of classes 0..C-1 for R parameters."""
    from scalecheck.core import special

    c = classes[None, :]
    p = parameter[:, None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if family == _POISSON:
            return np.asarray(np.exp(c * np.log(p) - p - special.gammaln(c + 1)))
        return np.asarray(-np.expm1(-p) * np.exp(-p * c))


def _chi_square(k: np.ndarray, n: np.ndarray, family: int, parameter: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Chi-square statistic (R,) and number of pooled groups (R,) of R samples' classes `k` (R, r), NaN-padded.

    Classes are pooled from the left until the expected count reaches `MIN_EXPECTED`; the rest, with the upper
    tail beyond the largest class, forms the last group if it reaches it too and joins the group before otherwise.
    Rows are processed in chunks of similar class counts, so that one wide sample does not widen a whole chunk.
    """
    stat = np.zeros(parameter.size)
    groups = np.zeros(parameter.size, dtype=int)
    order = np.argsort(np.nanmax(k, axis=1), kind="stable")
    for start in range(0, parameter.size, _CHUNK):
        part = order[start:start + _CHUNK]
        stat[part], groups[part] = _chi_square_chunk(k[part], n[part].astype(float), family, parameter[part])
    return stat, groups


def _chi_square_chunk(k: np.ndarray, n: np.ndarray, family: int,
                      parameter: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    R = parameter.size
    C = int(np.nanmax(k)) + 1
    valid = ~np.isnan(k)
    rows = np.broadcast_to(np.arange(R)[:, None], k.shape)[valid]
    observed = np.bincount(rows * C + k[valid].astype(int), minlength=R * C).reshape(R, C).astype(float)
    expected = n[:, None] * _pmf(family, parameter, np.arange(C, dtype=float))
    tail = np.maximum(n - expected.sum(axis=1), 0.0)
    stat, groups = np.zeros(R), np.zeros(R, dtype=int)
    acc_e, acc_o = np.zeros(R), np.zeros(R)
    last_e, last_o, last_term = np.zeros(R), np.zeros(R), np.zeros(R)
    for c in range(C):
        acc_e += expected[:, c]
        acc_o += observed[:, c]
        close = np.flatnonzero(acc_e >= MIN_EXPECTED)  # a few rows per class: the work below is on them only
        if not close.size:
            continue
        e, o = acc_e[close], acc_o[close]
        term = (o - e) ** 2 / e
        stat[close] += term
        groups[close] += 1
        last_e[close], last_o[close], last_term[close] = e, o, term
        acc_e[close] = 0.0
        acc_o[close] = 0.0
    acc_e += tail
    own = acc_e >= MIN_EXPECTED
    with np.errstate(divide="ignore", invalid="ignore"):
        alone = (acc_o - acc_e) ** 2 / acc_e
        merged = (last_o + acc_o - last_e - acc_e) ** 2 / (last_e + acc_e)
    stat = np.where(own, stat + alone, np.where(groups > 0, stat - last_term + merged, 0.0))
    groups = np.where(own, groups + 1, np.maximum(groups, 1))
    return stat, groups


def _refine(k: np.ndarray, n: np.ndarray, family: int, parameter: np.ndarray, stat: np.ndarray,
            groups: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Minimum-chi^2 parameters near the maximum-likelihood ones: a coarse then a fine grid of multipliers.

    The pooling moves with the parameter, so chi^2 is piecewise smooth; a grid search is robust to that.
    """
    best, best_stat, best_groups = parameter.copy(), stat.copy(), groups.copy()
    for steps in _REFINE_STEPS:
        trial = (best[:, None] * steps[None, :]).ravel()
        rows = np.repeat(np.arange(parameter.size), steps.size)
        trial_stat, trial_groups = _chi_square(k[rows], n[rows], family, trial)
        trial_stat = np.where(trial_groups >= 3, trial_stat, np.inf).reshape(-1, steps.size)
        pick = np.argmin(trial_stat, axis=1)
        found = trial_stat[np.arange(parameter.size), pick]
        better = found < best_stat
        best = np.where(better, trial.reshape(-1, steps.size)[np.arange(parameter.size), pick], best)
        best_stat = np.where(better, found, best_stat)
        best_groups = np.where(better, trial_groups.reshape(-1, steps.size)[np.arange(parameter.size), pick],
                               best_groups)
    return best, best_stat, best_groups
