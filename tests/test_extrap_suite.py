"""benchmarks/extrap_suite.py: the re-created Extra-P 4.2.5 test cases carry the planted values, and the scoring
tells a model with the generating function's terms from one without (scalecheck only, no Extra-P needed)."""

from __future__ import annotations

from fractions import Fraction
from types import ModuleType

import numpy as np
import pytest

from .conftest import load_benchmark


@pytest.fixture(scope="module")
def suite() -> ModuleType:
    """benchmarks/extrap_suite.py, loaded from its file."""
    return load_benchmark("extrap_suite")


def _family(suite: ModuleType, name: str) -> object:
    (family,) = suite.select(suite.build_families(), [name])
    return family


def _case(family: object, key: tuple[tuple[int, Fraction, Fraction], ...]) -> tuple[int, object]:
    """The index and case of `family` whose single truth term is `key`."""
    (found,) = [(k, c) for k, c in enumerate(family.cases) if c.truth[0].keys == [key]]  # type: ignore[attr-defined]
    return found


SQUARE = ((0, Fraction(2), Fraction(0)),)  # x^2


def test_planted_square_is_generated_and_modeled_exactly(suite: ModuleType) -> None:
    family = _family(suite, "building blocks (test_modeling)")
    assert len(family.cases) == 42
    index, case = _case(family, SQUARE)  # Extra-P's CompoundTerm.create(2, 1, 0), coefficient 10, constant 200
    assert case.parameters == ("x",)
    np.testing.assert_array_equal(case.points[:, 0], [2, 4, 8, 16, 32])
    np.testing.assert_array_equal(case.values[:, 0], [240.0, 360.0, 840.0, 2760.0, 10440.0])  # 200 + 10 * x^2

    run = suite.run_scalecheck(family)
    answer = run.answers[index]
    assert suite.exact(case.truth, answer)
    assert answer.segments[0].keys == [SQUARE]
    assert suite.coefficient_error(case.truth, answer) < 1e-9


def test_scoring_compares_terms_not_coefficients(suite: ModuleType) -> None:
    Model, Term, Answer = suite.Model, suite.Term, suite.Answer
    truth = (Model(200.0, (Term(10.0, SQUARE),)),)
    square_log = ((0, Fraction(2), Fraction(1)),)
    assert suite.exact(truth, Answer((Model(150.0, (Term(11.0, SQUARE),)),)))  # other coefficients: still exact
    assert not suite.exact(truth, Answer((Model(200.0, (Term(10.0, square_log),)),)))  # x^2 * log2(x)
    assert not suite.exact(truth, Answer((Model(200.0, (Term(10.0, SQUARE), Term(0.1, square_log))),)))  # a term more
    assert not suite.exact(truth, Answer((Model(2000.0),)))  # constant
    assert not suite.exact(truth, Answer(()))  # no model
    assert not suite.exact(truth, Answer((truth[0], truth[0])))  # segmented
    assert suite.exact((Model(5.0),), Answer((Model(4.9),)))  # a constant truth: no terms


def test_two_parameter_sum_and_segmented_cases_hold_the_test_functions(suite: ModuleType) -> None:
    family = _family(suite, "2 parameters, sum")
    first = family.cases[0]  # 200 + 10 * log2(x) + 20 * log2(y)^2: blocks (0, 1, 1) and (0, 1, 2)
    assert first.points.shape == (25, 2)
    assert [t.key for t in first.truth[0].terms] == [((0, Fraction(0), Fraction(1)),), ((1, Fraction(0), Fraction(2)),)]
    at = {tuple(p): v for p, v in zip(first.points, first.values[:, 0])}
    assert at[(4.0, 8.0)] == pytest.approx(200 + 10 * 2 + 20 * 3 ** 2, rel=1e-15)

    segmented = _family(suite, "segmented").cases[0]  # x^2 below x = 6, 30 + x from it on
    np.testing.assert_array_equal(segmented.values[:, 0], [1, 4, 9, 16, 25, 36, 37, 38, 39, 40])
    printed = "6.08e-15 + 0.9999999999999997 * x^(2) for x<=6.0\n29.99 + 1.0000000000000029 * x^(1) for x>=6.0"
    assert suite.exact(segmented.truth, suite.parse_extrap_answer(printed, ("x",)))
    assert not suite.exact(segmented.truth, suite.parse_extrap_answer("-2.8e-16 + x^(2)", ("x",)))


def test_fit_option_values_are_typed(suite: ModuleType) -> None:
    assert suite.parse_fit_option("refine=true") == ("refine", True)
    assert suite.parse_fit_option("max_terms=3") == ("max_terms", 3)
    assert suite.parse_fit_option("alpha=0.05") == ("alpha", 0.05)
    assert suite.parse_fit_option("aggregate=median") == ("aggregate", "median")
    with pytest.raises(ValueError, match="KEY one of"):
        suite.parse_fit_option("max_term=3")


def test_a_miss_shows_both_shapes_refitted_relative_and_absolute(suite: ModuleType) -> None:
    family = _family(suite, "measured file (test_general)")
    (case,) = [c for c in family.cases if c.region == "met3"]
    eleven_sixths = ((0, Fraction(11, 6), Fraction(0)),)
    answer = suite.Answer((suite.Model(0.5, (suite.Term(4.8e-6, eleven_sixths),)),))
    truth_line, answer_line, spread_line = suite.residuals(case, answer)
    # the file's noise is absolute: x^2 fits best unweighted, x^(11/6) relative to each value
    assert truth_line == "truth's terms refitted: residual sum of squares 0.0216 relative, 3.09 absolute"
    assert answer_line == "scalecheck's terms refitted: residual sum of squares 0.00579 relative, 22.3 absolute"
    assert spread_line.startswith("repetitions' standard deviation per point: 0.00045, 0.084, 0.084, 0.084, 0.1")
    assert suite.residuals(case, suite.Answer(())) == []  # no model: nothing to refit
