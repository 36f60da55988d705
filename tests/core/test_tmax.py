"""t_max per sample: planted Poisson and exponential noise recovered, class widths, the chi-square test checked
against a plain implementation, the empirical fallback, the batch path and the tmax aggregate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from scalecheck.core.modeler import fit_kernels
from scalecheck.core.search import AGGREGATE_NAMES, FitOptions, point_stats
from scalecheck.core.tmax import (MIN_EXPECTED, NoiseOptions, fit_noise, fit_noise_batch, poisson_quantile,
                                  tmax)
from scalecheck.data.measurement import Series

Q = 0.95


def poisson_sample(rng: np.random.Generator, lam: float, n: int = 200, t_min: float = 20.0,
                   quantum: float = 1.0) -> np.ndarray:
    return t_min + quantum * rng.poisson(lam, n)


@pytest.mark.parametrize("lam", [1.0, 2.0, 3.5])
def test_fit_noise_recovers_planted_poisson_noise(lam: float, rng: np.random.Generator) -> None:
    sample = poisson_sample(rng, lam, quantum=0.5)
    model = fit_noise(sample)
    assert model.chosen == "poisson"
    assert (model.width, model.width_source, model.step) == (pytest.approx(0.5), "grid", pytest.approx(0.5))
    assert model.fit("poisson").parameter == pytest.approx(lam, rel=0.15)
    # on a grid the class is the reading itself: t_max is min(S) plus the quantile's whole quanta
    k_q = stats.poisson.ppf(Q, model.fit("poisson").parameter)
    assert model.t_max == pytest.approx(model.minimum + 0.5 * k_q)
    assert model.t_max == pytest.approx(20.0 + 0.5 * stats.poisson.ppf(Q, lam), abs=0.5)


@pytest.mark.parametrize("mean", [0.5, 2.0, 8.0])
def test_fit_noise_recovers_planted_exponential_noise(mean: float, rng: np.random.Generator) -> None:
    sample = 20.0 + rng.exponential(mean, 200)
    model = fit_noise(sample)
    assert model.chosen == "exponential"
    assert model.width_source == "spread" and model.step == 0.0
    true = 20.0 + mean * -math.log1p(-Q)
    assert model.t_max == pytest.approx(true, rel=0.05)
    # continuous values: the upper edge of the class that holds the quantile
    rate = model.fit("exponential").parameter
    k_q = math.ceil(-math.log1p(-Q) / rate) - 1
    assert model.t_max == pytest.approx(model.minimum + (k_q + 1) * model.width)
    assert stats.planck.ppf(Q, rate) == k_q


def test_width_is_never_finer_than_the_timer_resolution(rng: np.random.Generator) -> None:
    sample = 20.0 + rng.exponential(2.0, 200)
    model = fit_noise(sample, NoiseOptions(resolution=0.25))
    assert (model.width, model.width_source) == (0.25, "resolution")
    coarse = fit_noise(poisson_sample(rng, 2.0, quantum=1.0), NoiseOptions(resolution=0.1))
    assert (coarse.width, coarse.width_source) == (pytest.approx(1.0), "grid")  # errors come in whole ticks


def test_too_many_classes_widen_the_width_by_a_whole_factor(rng: np.random.Generator) -> None:
    sample = np.round(20.0 + rng.exponential(50.0, 200), 3)  # a grid of 0.001 under a spread of hundreds
    model = fit_noise(sample, NoiseOptions(max_classes=64))
    assert model.width_source == "grid"
    assert (np.max(sample) - model.minimum) / model.width < 64
    assert model.width / model.step == pytest.approx(round(model.width / model.step))


def test_all_equal_values_have_no_noise_and_t_max_is_the_value() -> None:
    model = fit_noise(np.full(20, 3.5))
    assert (model.width_source, model.t_max) == ("none", 3.5)
    assert fit_noise(np.full(20, 3.5), NoiseOptions(resolution=0.1)).t_max == 3.5


def _pooled_chi_square(classes: np.ndarray, pmf: np.ndarray, tail: float) -> tuple[float, int]:
    """A plain implementation: pool from the left to an expected count of 5, the tail joins the last group."""
    n = classes.size
    observed = np.bincount(classes, minlength=pmf.size)
    groups: list[list[float]] = []
    acc_o = acc_e = 0.0
    for o, p in zip(observed, pmf):
        acc_o, acc_e = acc_o + o, acc_e + n * p
        if acc_e >= MIN_EXPECTED:
            groups.append([acc_o, acc_e])
            acc_o = acc_e = 0.0
    acc_e += n * tail
    if acc_e >= MIN_EXPECTED:
        groups.append([acc_o, acc_e])
    else:
        groups[-1][0] += acc_o
        groups[-1][1] += acc_e
    o, e = np.array(groups).T
    return float(stats.chisquare(o, e, ddof=0).statistic), len(groups)


def test_chi_square_matches_a_plain_implementation(rng: np.random.Generator) -> None:
    sample = poisson_sample(rng, 2.5, n=150)
    model = fit_noise(sample)
    classes = (sample - sample.min()).astype(int)
    top = classes.max() + 1
    lam = model.fit("poisson").parameter
    statistic, groups = _pooled_chi_square(classes, stats.poisson.pmf(np.arange(top), lam),
                                           stats.poisson.sf(top - 1, lam))
    assert model.fit("poisson").chi2 == pytest.approx(statistic)
    assert model.fit("poisson").dof == groups - 2
    assert model.fit("poisson").p_value == pytest.approx(stats.chi2.sf(statistic, groups - 2))
    rate = model.fit("exponential").parameter
    assert rate == pytest.approx(math.log1p(1 / classes.mean()))  # maximum likelihood of the geometric
    statistic, groups = _pooled_chi_square(classes, stats.planck.pmf(np.arange(top), rate),
                                           stats.planck.sf(top - 1, rate))
    assert model.fit("exponential").chi2 == pytest.approx(statistic)


def test_every_model_rejected_falls_back_to_the_empirical_quantile(rng: np.random.Generator) -> None:
    sample = np.concatenate([10 + rng.uniform(0, 1, 100), 20 + rng.uniform(0, 1, 100)])  # two clusters
    model = fit_noise(sample)
    assert model.fallback and model.chosen == "empirical"
    assert all(f.tested and f.p_value < model.alpha for f in model.fits)
    assert model.best.family == "exponential"  # the lower chi^2, rejected
    k = np.sort(np.floor((sample - sample.min()) / model.width + 1e-9))
    assert model.t_max == pytest.approx(model.minimum + (k[math.ceil(Q * 200) - 1] + 1) * model.width)


def test_small_samples_are_untested_and_keep_the_likelier_model(rng: np.random.Generator) -> None:
    model = fit_noise(20 + rng.exponential(1.0, 12))
    assert not model.tested and math.isnan(model.p_value)
    likelier = max(model.fits, key=lambda f: f.log_likelihood).family
    assert model.chosen == likelier


def test_refinement_moves_the_parameter_to_a_lower_chi_square(rng: np.random.Generator) -> None:
    sample = 10 + rng.exponential(2.0, 300)
    plain, refined = fit_noise(sample), fit_noise(sample, NoiseOptions(refine=True))
    for family in ("poisson", "exponential"):
        assert refined.fit(family).chi2 <= plain.fit(family).chi2
    assert refined.fit("exponential").parameter == pytest.approx(plain.fit("exponential").parameter, rel=0.4)


def test_higher_quantile_gives_higher_t_max(rng: np.random.Generator) -> None:
    sample = 10 + rng.exponential(2.0, 200)
    values = [fit_noise(sample, NoiseOptions(quantile=q)).t_max for q in (0.8, 0.9, 0.95, 0.99)]
    assert values == sorted(values) and values[0] < values[-1]


def test_batch_rows_equal_single_fits_with_padding(rng: np.random.Generator) -> None:
    samples = [poisson_sample(rng, 2.0, n=40), 5 + rng.exponential(1.0, 200), 7 + rng.exponential(1.0, 12)]
    values = np.full((3, 200), np.nan)
    for row, s in enumerate(samples):
        values[row, : s.size] = s[rng.permutation(s.size)]  # order does not matter
    batch = fit_noise_batch(values)
    for row, s in enumerate(samples):
        single, batched = fit_noise(s), batch.model(row)
        assert (batched.chosen, batched.width, batched.t_max) == (single.chosen, single.width, single.t_max)
        for a, b in zip(batched.fits, single.fits):  # equal up to the summation order
            assert (a.family, a.dof) == (b.family, b.dof)
            np.testing.assert_allclose([a.parameter, a.chi2, a.p_value], [b.parameter, b.chi2, b.p_value],
                                       rtol=1e-12)


def test_tmax_aggregate_keeps_the_leading_shape_and_nan_for_empty_samples() -> None:
    values = np.array([[[1.0, 2.0, np.nan], [np.nan, np.nan, np.nan]], [[4.0, 4.0, 4.0], [2.0, 3.0, 3.0]]])
    out = tmax(values)
    assert out.shape == (2, 2)
    assert np.isnan(out[0, 1]) and out[1, 0] == 4.0


def test_point_stats_and_the_model_search_accept_the_tmax_aggregate(rng: np.random.Generator) -> None:
    assert "tmax" in AGGREGATE_NAMES
    p = 2.0 ** np.arange(1, 9)
    values = (1 + 0.1 * p)[:, None] * (1 + 0.05 * rng.exponential(size=(8, 30)))
    stats_ = point_stats(values[None], "tmax")
    np.testing.assert_allclose(stats_.y[0], tmax(values))
    assert np.all(stats_.y[0] > np.median(values, axis=1))
    [km] = fit_kernels([Series("k", "time", ("p",), p[:, None], values)], FitOptions(aggregate="tmax"))
    assert km.model is not None and km.model.growth_text() == "p"


def test_poisson_quantile_matches_scipy() -> None:
    mean = np.concatenate([np.linspace(0, 40, 4001), [1e-9]])
    for q in (0.8, 0.95, 0.999):
        np.testing.assert_array_equal(poisson_quantile(q, mean), stats.poisson.ppf(q, mean))


@pytest.mark.parametrize("options, message", [
    (dict(quantile=0.5), r"quantile must be in \[0.8, 1\), got 0.5"),
    (dict(quantile=1.0), r"quantile must be in \[0.8, 1\), got 1.0"),
    (dict(resolution=0.0), "resolution must be a positive number, got 0.0"),
    (dict(alpha=1.5), r"alpha must be in \(0, 1\), got 1.5"),
])
def test_noise_options_are_checked(options: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        NoiseOptions(**options)  # type: ignore[arg-type]


def test_fit_noise_rejects_empty_and_non_finite_samples() -> None:
    with pytest.raises(ValueError, match="finite"):
        fit_noise(np.array([1.0, np.inf]))
    with pytest.raises(ValueError, match="at least one value"):
        fit_noise(np.array([]))
