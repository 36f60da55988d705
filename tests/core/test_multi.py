"""Multi-parameter hierarchical search: sums and products recovered, diagonal designs refused."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from scalecheck.core.modeler import fit_kernels
from scalecheck.core.multi import _shapes, fit_multi_parameter, hypotheses, most_parameters, search_plan
from scalecheck.core.search import FitOptions, point_stats
from scalecheck.data.measurement import Series
from scalecheck.data.spec import ModelSpec
from tests.conftest import planted_series

F = Fraction

GRID = [(x, y) for x in (4, 8, 16, 32, 64) for y in (10, 20, 40, 80, 160)]


def _terms(km) -> set[tuple[tuple[int, Fraction, int], ...]]:
    return {tuple((f.param, f.exponent, f.log_exponent) for f in t.factors) for t in km.model.spec.terms}


def test_additive_model_recovered(rng: np.random.Generator) -> None:
    series = planted_series(lambda p, n: 5 + 2 * p + 0.01 * n**2, GRID, rng, parameters=("p", "n"))
    [km] = fit_kernels([series])
    assert _terms(km) == {((0, Fraction(1), 0),), ((1, Fraction(2), 0),)}


def test_multiplicative_model_recovered(rng: np.random.Generator) -> None:
    series = planted_series(lambda p, n: 5 + 0.3 * p * np.log2(p) * n**0.5, GRID, rng, parameters=("p", "n"))
    [km] = fit_kernels([series])
    assert _terms(km) == {((0, Fraction(1), 1), (1, Fraction(1, 2), 0))}
    assert km.model.growth_text() == "p * log2(p) * n^(1/2)"


def test_parameter_without_effect_drops_out(rng: np.random.Generator) -> None:
    series = planted_series(lambda p, n: 7 + p**1.5 + 0 * n, GRID, rng, parameters=("p", "n"))
    [km] = fit_kernels([series])
    assert _terms(km) == {((0, Fraction(3, 2), 0),)}


def test_constant_two_parameter_kernel(rng: np.random.Generator) -> None:
    series = planted_series(lambda p, n: 7 + 0 * p, GRID, rng, parameters=("p", "n"))
    [km] = fit_kernels([series])
    assert km.model is not None and km.model.spec.n_terms == 0


def test_diagonal_design_is_reported_inseparable(rng: np.random.Generator) -> None:
    diagonal = [(4, 10), (8, 20), (16, 30), (32, 40), (64, 50)]
    [km] = fit_kernels([planted_series(lambda p, n: p * n, diagonal, rng, parameters=("p", "n"))])
    assert km.status == "inseparable" and km.model is None
    assert km.note.startswith("p and n only grow together")


def test_noisy_outlier_line_does_not_hide_the_trend(rng: np.random.Generator) -> None:
    series = planted_series(lambda p, n: 1 + 0.5 * p + 0 * n, GRID, rng, parameters=("p", "n"), noise=0.02)
    values = np.array(series.values)
    values[7, 0] *= 8  # one wild repetition, as in real data
    noisy = type(series)(series.kernel, series.metric, series.parameters, series.points, values)
    [km] = fit_kernels([noisy])
    assert km.model is not None and km.model.growth()["p"] > (Fraction(1, 2), 0)  # the trend in p is found
    assert km.model.growth()["n"] == (Fraction(0), 0)  # and the outlier does not make n matter
    [robust] = fit_kernels([noisy], FitOptions(aggregate="median"))
    assert robust.model is not None and robust.model.growth() == {"p": (Fraction(1), 0), "n": (Fraction(0), 0)}


def test_terms_of_a_multi_parameter_model_are_positive(rng: np.random.Generator) -> None:
    """The sign rule of `search._eligible` holds for compound terms too: no a + b - a*b cancelling into a class."""
    truth = lambda p, n: 3 + 0.2 * p * n**0.5 + 0.5 * p - 0.004 * p * n  # noqa: E731
    series = [planted_series(truth, GRID, rng, parameters=("p", "n"), noise=0.03, kernel=f"k{k}") for k in range(10)]
    for km in fit_kernels(series):
        assert km.model is not None and np.all(km.model.coefficients[1:] > 0)


def test_the_count_of_hypotheses_is_the_number_the_search_enumerates() -> None:
    for m in (2, 3, 4):
        for candidates in (1, 2, 3):
            for terms in (2, 3, 4):
                enumerated = sum(len(_shapes(used, terms)) * candidates ** r for r in range(1, m + 1)
                                 for used in itertools.combinations(range(m), r))
                assert hypotheses(m, candidates, terms) == enumerated


def test_the_search_narrows_from_four_parameters_and_stops_past_six() -> None:
    options = FitOptions()
    assert options.candidates_per_parameter == 3
    assert [search_plan(m, options) for m in range(2, 9)] == [(3, 3), (3, 3), (1, 4), (1, 2), (1, 2), None, None]
    assert hypotheses(4, 3, 4) == 137_388 and hypotheses(5, 3, 5) > 46_000_000  # the full search, never run
    assert most_parameters() == 6


def test_four_parameters_are_modeled_without_the_full_search(rng: np.random.Generator) -> None:
    grid = list(itertools.product((4, 8, 16, 32), repeat=4))
    series = planted_series(lambda a, b, c, d: 3 + 0.5 * a * np.log2(b) + 0.2 * d, grid, rng,
                            parameters=("a", "b", "c", "d"))
    [km] = fit_kernels([series])
    assert _terms(km) == {((0, Fraction(1), 0), (1, Fraction(0), 1)), ((3, Fraction(1), 0),)}


def test_seven_parameters_that_vary_are_not_modeled(rng: np.random.Generator) -> None:
    grid = list(itertools.product((2, 4, 8), repeat=7))
    [km] = fit_kernels([planted_series(lambda *x: 1 + x[0], grid, rng, parameters=tuple("abcdefg"))])
    assert km.status == "insufficient" and km.model is None
    assert km.note == ("7 parameters vary (a, b, c, d, e, f, g); scalecheck models at most 6 together: model a "
                       "subset, holding the others at one value (a file per value)")


def test_a_weak_term_of_a_noise_free_three_parameter_sum_is_kept() -> None:
    """Without repetitions the noise is the residual of the largest models: the x term (2% of the value) of
    200 + 10 x^(1/3) + 20 y^(1/4) log2(y) + 30 z^(1/3) log2(z) is not mistaken for noise, nor is a product formed."""
    grid = np.array(list(itertools.product([2, 4, 8, 16, 32], repeat=3)), dtype=float)
    cases = {
        "x^(1/3) + y^(1/4) log y + z^(1/3) log z": (lambda x, y, z: 200 + 10 * x ** (1 / 3) + 20 * y**0.25 * np.log2(y)
                                                    + 30 * z ** (1 / 3) * np.log2(z),
                                                    [(F(1, 3), 0), (F(1, 4), 1), (F(1, 3), 1)]),
        "log x + log^2 y + z^(1/4)": (lambda x, y, z: 200 + 10 * np.log2(x) + 20 * np.log2(y) ** 2 + 30 * z**0.25,
                                      [(F(0), 1), (F(0), 2), (F(1, 4), 0)]),
        "x + y log y + z log^2 z": (lambda x, y, z: 200 + 10 * x + 20 * y * np.log2(y) + 30 * z * np.log2(z) ** 2,
                            [(F(1), 0), (F(1), 1), (F(1), 2)]),
    }
    series = [Series(name, "time", ("x", "y", "z"), grid, function(*grid.T)[:, None])
              for name, (function, _) in cases.items()]
    for km, (_, expected) in zip(fit_kernels(series), cases.values()):
        assert km.model is not None
        got = sorted((tuple(term.order_in(k) for k in range(3)) for term in km.model.spec.terms))
        want = sorted(tuple(order if k == param else (F(0), 0) for k in range(3)) for param, order in enumerate(expected))
        assert got == want, km.model.spec.format(("x", "y", "z"))


def test_screened_search_chooses_as_the_full_search(rng: np.random.Generator) -> None:
    from scalecheck.core.modeler import _stack_values
    from scalecheck.core.multi import fit_multi_parameter
    from scalecheck.core.search import point_stats

    points = np.array(list(itertools.product([2, 4, 8, 16], [2, 4, 8, 16], [2, 4, 8, 16])), dtype=float)
    x, y, z = points.T
    truths = [10 + 2 * x + 3 * y**2, 5 + 0.5 * x * np.log2(y) * z, 7 + 0 * x, 3 + 4 * x**1.5 + y * z,
              100 / x + 0 * y, 50 + 2 * np.sqrt(x) * y + 0.1 * z]
    series = []
    for k, truth in enumerate(truths):
        reps = 1 if k % 2 else 5  # without repetitions too: the noise then comes from the residuals
        noise = 0.0 if k == 3 else 0.02
        values = truth[:, None] * (1 + rng.uniform(-noise, noise, (points.shape[0], reps)))
        series.append(Series(f"k{k}", "time", ("x", "y", "z"), points, values))
    stats = point_stats(_stack_values(series))
    screened = fit_multi_parameter(points, stats, FitOptions())
    full = fit_multi_parameter(points, stats, FitOptions(), exhaustive=True)
    assert screened.chosen() == full.chosen()
    for field in ("coef", "fitted", "loo", "fallback"):
        np.testing.assert_array_equal(getattr(screened, field), getattr(full, field))
    from scalecheck.data.spec import ModelSpec, single_term

    assert screened.chosen()[0] == ModelSpec((single_term(0, (Fraction(1), 0)), single_term(1, (Fraction(2), 0))))


def test_no_parameter_to_search_gives_the_constant(rng: np.random.Generator) -> None:
    values = rng.lognormal(0, 0.1, (2, 1, 3))
    chosen = fit_multi_parameter(np.zeros((1, 0)), point_stats(values), FitOptions())
    assert chosen.chosen() == [ModelSpec(), ModelSpec()]
    np.testing.assert_allclose(chosen.coef[:, 0], np.nanmean(values, axis=2)[:, 0])


def test_exact_data_fit_few_slots_and_choose_as_the_full_search(monkeypatch) -> None:
    """Exact four-parameter products: every slot that adds terms to the true one fits exactly, but cannot be eligible
    (its extra terms vanish); the bounds see that, so a kernel fits a few of its slots, not a quarter of them."""
    from scalecheck.core import multi
    from scalecheck.core.modeler import _stack_values

    grid = np.array(list(itertools.product([2, 4, 8, 10, 12], repeat=4)), dtype=float)
    x, y, z, w = grid.T
    truths = [2e4 + 10 * np.log2(x) * np.log2(y) ** 2 * z**0.25 * w ** (1 / 3),
              2e4 + 10 * x**0.25 * y ** (1 / 3) * z**0.25 * np.log2(z) * w ** (1 / 3) * np.log2(w),
              2e4 + 10 * np.log2(x) ** 2 * y**0.25 * z ** (1 / 3) * w**0.25 * np.log2(w)]
    series = [Series(f"k{k}", "time", ("x", "y", "z", "w"), grid, truth[:, None]) for k, truth in enumerate(truths)]
    stats = point_stats(_stack_values(series))
    fitted = []
    original = multi._Slots.fit

    def counted(self, pairs, *args):
        fitted.append(int(pairs.sum()))
        return original(self, pairs, *args)

    monkeypatch.setattr(multi._Slots, "fit", counted)
    screened = fit_multi_parameter(grid, stats, FitOptions())
    monkeypatch.setattr(multi._Slots, "fit", original)
    full = fit_multi_parameter(grid, stats, FitOptions(), exhaustive=True)
    assert screened.chosen() == full.chosen()
    for field in ("coef", "fitted", "loo", "fallback"):
        np.testing.assert_array_equal(getattr(screened, field), getattr(full, field))
    assert [len(spec.terms) for spec in screened.chosen()] == [1, 1, 1]
    plan = search_plan(4, FitOptions())
    assert plan is not None
    per_kernel = hypotheses(4, *plan)
    assert sum(fitted) < 0.05 * per_kernel * len(truths)


def _line_candidates(monkeypatch, points, stats, param: int) -> tuple[tuple, tuple, float]:
    """`_candidates` as it is, and scoring every term on every line: both results and the share of the work done."""
    from scalecheck.core import multi

    scored: list[int] = []
    original = multi.score

    def counted(X, lead, sub, options, exists=None):
        scored.append(X.shape[0] * sub.y.shape[0])
        return original(X, lead, sub, options, exists)

    monkeypatch.setattr(multi, "score", counted)
    split = multi._candidates(points, param, stats, FitOptions())
    work = sum(scored)
    scored.clear()
    monkeypatch.setattr(multi, "_line_scores", lambda X, lead, late, wanted, sub, options: counted(X, lead, sub,
                                                                                                   options))
    everything = multi._candidates(points, param, stats, FitOptions())
    share = work / sum(scored)
    monkeypatch.undo()
    return split, everything, share


def test_falling_terms_are_scored_on_lines_only_where_they_can_count(monkeypatch, rng: np.random.Generator) -> None:
    """Stage 1 scores the falling terms of a growing kernel only where its noise could come from them (no repetitions,
    the rising terms' residual above the noise floor): its candidates stay those of scoring every term everywhere,
    to the bit, with about half the work on growing kernels with repetitions."""
    from scalecheck.core.modeler import _stack_values

    points = np.array(GRID, dtype=float)
    x, y = points.T
    truths = [3 + 2 * x + 0.5 * y**2, 40 + 900 / x + 0 * y, 7 + 0 * x, 5 + x**2 + 30 * np.log2(x) + np.sqrt(y),
              2 + 0.1 * x * y, 1e3 / np.sqrt(x * y), 9 + x**1.5 * np.log2(y)]
    series = []
    for k, truth in enumerate(truths):
        reps = 1 if k in (2, 3, 5) else 5
        values = truth[:, None] * (1 + rng.normal(0, 0.0 if k == 3 else 0.02, (points.shape[0], reps)))
        series.append(Series(f"k{k}", "time", ("x", "y"), points, values))
    stats = point_stats(_stack_values(series))
    for param in range(2):
        split, everything, _ = _line_candidates(monkeypatch, points, stats, param)
        for ours, theirs in zip(split, everything):
            np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    (index, terms, _), _, _ = _line_candidates(monkeypatch, points, stats, 0)
    assert terms[index[1, 0]].order_in(0) == (-1, 0)  # 40 + 900 / x: its falling term is found
    assert terms[index[5, 0]].order_in(0) == (F(-1, 2), 0)
    assert terms[index[0, 0]].order_in(0) == (1, 0)
    growing = point_stats(_stack_values([series[k] for k in (0, 4, 6)]))
    for param in range(2):
        split, everything, share = _line_candidates(monkeypatch, points, growing, param)
        np.testing.assert_array_equal(split[0], everything[0])
        assert share < 0.6


def test_stage_one_is_the_same_however_many_lines_it_scores_at_once(monkeypatch, rng: np.random.Generator) -> None:
    """Lines are scored a few at a time (`LINE_PAIRS`): one at a time or all at once, the candidates are the same."""
    from scalecheck.core import multi
    from scalecheck.core.modeler import _stack_values

    points = np.array(GRID, dtype=float)
    x, y = points.T
    series = []
    for k in range(30):
        truth = rng.uniform(1, 50) + rng.uniform(0.1, 2) * x ** rng.choice([0.5, 1, 1.5]) * y ** rng.choice([0, 1])
        reps = 1 if k % 4 == 0 else 4
        values = truth[:, None] * (1 + rng.normal(0, 0.03, (points.shape[0], reps)))
        series.append(Series(f"k{k}", "time", ("x", "y"), points, values))
    stats = point_stats(_stack_values(series))
    for param in range(2):
        together = multi._candidates(points, param, stats, FitOptions())
        monkeypatch.setattr(multi, "LINE_PAIRS", 1)
        alone = multi._candidates(points, param, stats, FitOptions())
        monkeypatch.undo()
        for ours, theirs in zip(together, alone):
            np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    chosen = fit_multi_parameter(points, stats, FitOptions())
    assert sum(spec.n_terms > 0 for spec in chosen.chosen()) >= 25
