"""Growth bounds as users write them: every accepted spelling, one message per mistake, and the order comparison."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from scalecheck.data.growth import exceeds, lower, parse_growth
from scalecheck.data.spec import Exponents, format_growth

F = Fraction
ACCEPTED: dict[str, tuple[str, dict[str, Exponents]]] = {
    "n_log_n_words": ("p log p", {"p": (F(1), 1)}),
    "big_o": ("O(p log p)", {"p": (F(1), 1)}),
    "big_o_n": ("O(n log n)", {"n": (F(1), 1)}),
    "big_o_spaces": ("O( n  log n )", {"n": (F(1), 1)}),
    "star_log2_call": ("n*log2(n)", {"n": (F(1), 1)}),
    "log2_word": ("n log2 n", {"n": (F(1), 1)}),
    "log_underscore_base": ("log_2 n", {"n": (F(0), 1)}),
    "log10": ("log10(n)", {"n": (F(0), 1)}),
    "ln": ("ln(p)", {"p": (F(0), 1)}),
    "caret": ("n^2", {"n": (F(2), 0)}),
    "double_star_decimal": ("n**1.5", {"n": (F(3, 2), 0)}),
    "caret_decimal": ("n^0.5", {"n": (F(1, 2), 0)}),
    "caret_fraction": ("n^(3/2)", {"n": (F(3, 2), 0)}),
    "caret_parenthesized_decimal": ("n^(1.5)", {"n": (F(3, 2), 0)}),
    "superscript": ("n²", {"n": (F(2), 0)}),
    "sqrt": ("sqrt(n)", {"n": (F(1, 2), 0)}),
    "sqrt_sign": ("√n", {"n": (F(1, 2), 0)}),
    "sqrt_of_product": ("sqrt(n log n)", {"n": (F(1, 2), F(1, 2))}),
    "sqrt_power": ("sqrt(n)^3", {"n": (F(3, 2), 0)}),
    "log_word": ("log p", {"p": (F(0), 1)}),
    "log_call_squared": ("log(p)^2", {"p": (F(0), 2)}),
    "log2_call_squared": ("log2(p)^2", {"p": (F(0), 2)}),
    "log_group_squared": ("(log p)^2", {"p": (F(0), 2)}),
    "log_power_before_argument": ("log^2 p", {"p": (F(0), 2)}),
    "log_of_power": ("log(p^2)", {"p": (F(0), 1)}),
    "upper_case_log": ("LOG p", {"p": (F(0), 1)}),
    "title_case_log": ("n Log(n)", {"n": (F(1), 1)}),
    "two_parameters": ("p^2 * n", {"p": (F(2), 0), "n": (F(1), 0)}),
    "two_parameters_juxtaposed": ("p^2n", {"p": (F(2), 0), "n": (F(1), 0)}),
    "mixed": ("p*log(p)*n^(1/2)", {"p": (F(1), 1), "n": (F(1, 2), 0)}),
    "middle_dot": ("p·log p", {"p": (F(1), 1)}),
    "times_sign": ("p × n", {"p": (F(1), 0), "n": (F(1), 0)}),
    "repeated_factor": ("p * p", {"p": (F(2), 0)}),
    "repeated_log": ("p log p log p", {"p": (F(1), 2)}),
    "group_power": ("(p log p)^2", {"p": (F(2), 2)}),
    "one": ("1", {}),
    "constant": ("constant", {}),
    "big_o_one": ("O(1)", {}),
    "zero_exponent": ("n^0", {"n": (F(0), 0)}),
}


@pytest.mark.parametrize("text, expected", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_parse_growth_reads_accepted_form(text: str, expected: dict[str, Exponents]) -> None:
    assert parse_growth(text) == expected


def test_parse_growth_gives_fraction_powers_and_whole_logs_as_int() -> None:
    [(i, j)] = parse_growth("n^(3/2) log(n)^2").values()
    assert type(i) is Fraction and i == F(3, 2)
    assert type(j) is int and j == 2
    [(_, j)] = parse_growth("sqrt(log n)").values()
    assert j == F(1, 2) and type(j) is Fraction


def test_parse_growth_keeps_order_of_mention() -> None:
    assert list(parse_growth("n * p^2 * n")) == ["n", "p"]


@pytest.mark.parametrize("orders", [
    {"p": (F(3, 2), 1), "n": (F(1), 0)},
    {"p": (F(0), 2)},
    {"p": (F(1, 2), F(1, 2))},
], ids=["two_parameters", "log_squared", "fractional_log"])
def test_parse_growth_reads_what_format_growth_writes(orders: dict[str, Exponents]) -> None:
    assert parse_growth(format_growth(orders)) == orders


def test_parse_growth_reads_constant_written_by_format_growth() -> None:
    assert parse_growth(format_growth({"p": (F(0), 0)})) == {}


HOW = "write a growth such as 'p log p', 'n^2' or 'O(n log n)'"
ERRORS = {
    "unknown_word": ("p lg p", f"cannot read 'p lg p': unknown word 'lg'; {HOW}"),
    "unknown_function": ("exp(n)", f"cannot read 'exp(n)': unknown word 'exp'; {HOW}"),
    "little_o": ("o(n)", f"cannot read 'o(n)': unknown word 'o'; {HOW}"),
    "words_run_together": ("nlogn", "cannot read 'nlogn': unknown word 'nlogn'; write 'n log n'"),
    "ambiguous_fraction": ("n^3/2", "cannot read 'n^3/2': 'n^3/2' is ambiguous; write 'n^(3/2)' for a fractional "
                                    "exponent"),
    "ambiguous_log_power": ("log p^2", "cannot read 'log p^2': 'log p^2' is ambiguous; write '(log p)^2' or "
                                       "'log(p^2)'"),
    "ambiguous_sqrt_power": ("sqrt n^3", "cannot read 'sqrt n^3': 'sqrt n^3' is ambiguous; write '(sqrt n)^3' or "
                                         "'sqrt(n^3)'"),
    "negative": ("n^-1", "cannot read 'n^-1': negative exponent in 'n^-1'; a growth bound has exponents >= 0, such "
                         "as 'n^2' or 'n^(1/2)'"),
    "negative_fraction": ("n^(-1/2)", "cannot read 'n^(-1/2)': negative exponent in 'n^(-1/2)'; a growth bound has "
                                      "exponents >= 0, such as 'n^2' or 'n^(1/2)'"),
    "empty": ("", f"cannot read '': the growth is empty; {HOW}"),
    "blank": ("  ", f"cannot read '  ': the growth is empty; {HOW}"),
    "sum": ("n^2 + n", "cannot read 'n^2 + n': '+' makes a sum; write only the leading term, e.g. 'n^2' for "
                       "'n^2 + n'"),
    "difference": ("n - 1", "cannot read 'n - 1': '-' makes a sum; write only the leading term, e.g. 'n^2' for "
                            "'n^2 + n'"),
    "division": ("n / log n", "cannot read 'n / log n': '/' divides, and a growth has no negative exponents; write "
                              "a product such as 'n log n'"),
    "unclosed": ("log(p", "cannot read 'log(p': '(' at character 4 is never closed; add the missing ')'"),
    "unopened": ("n)", "cannot read 'n)': ')' has no matching '('; remove it or add the missing '('"),
    "stray_number": ("2n", "cannot read '2n': stray number '2'; put exponents after '^', as in 'n^2'; a constant "
                           "growth is '1'"),
    "exponential": ("2^n", f"cannot read '2^n': '2^n' grows exponentially, and a bound is a product of powers and "
                           f"logarithms; {HOW}"),
    "log_of_product": ("log(p*n)", "cannot read 'log(p*n)': 'log' takes one parameter, not '(p*n)'; write e.g. "
                                   "'log(p)'"),
    "log_without_argument": ("log", f"cannot read 'log': 'log' needs one parameter, as in 'log(p)'; {HOW}"),
    "log_log": ("log log n", f"cannot read 'log log n': 'log' needs one parameter, as in 'log(p)'; {HOW}"),
    "missing_exponent": ("n ^", "cannot read 'n ^': '^' needs an exponent after it; write e.g. 'n^2' or 'n^(1/2)'"),
    "exponent_not_number": ("n^(a)", "cannot read 'n^(a)': an exponent in parentheses must be a number or a "
                                     "fraction; write e.g. 'n^(3/2)'"),
    "zero_denominator": ("n^(1/0)", "cannot read 'n^(1/0)': the exponent '1/0' divides by zero; write e.g. "
                                    "'n^(3/2)'"),
    "trailing_times": ("n *", f"cannot read 'n *': nothing follows '*'; {HOW}"),
    "leading_times": ("* n", f"cannot read '* n': '*' has no factor before it; {HOW}"),
    "bad_character": ("n $", f"cannot read 'n $': unexpected character '$'; {HOW}"),
    "text_after_big_o": ("O(n) p", f"cannot read 'O(n) p': 'O(...)' must hold the whole growth, but 'p' "
                                   f"follows it; {HOW}"),
    "empty_group": ("()", f"cannot read '()': nothing inside '()'; {HOW}"),
    "constant_in_product": ("constant n", "cannot read 'constant n': 'constant' must be the whole growth; write "
                                          "'constant' or '1' alone"),
}


@pytest.mark.parametrize("text, message", ERRORS.values(), ids=ERRORS.keys())
def test_parse_growth_says_what_is_wrong_and_how_to_write_it(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_growth(text)


def test_parse_growth_with_parameters_returns_all_in_their_order() -> None:
    assert parse_growth("n log n", ["p", "n"]) == {"p": (F(0), 0), "n": (F(1), 1)}
    assert list(parse_growth("n * p", ["p", "n"])) == ["p", "n"]
    assert parse_growth("O(1)", ["p", "n"]) == {"p": (F(0), 0), "n": (F(0), 0)}


def test_parse_growth_with_parameters_suggests_a_close_name() -> None:
    with pytest.raises(ValueError, match=re.escape("cannot read 'nn log nn': unknown parameter 'nn'; did you mean "
                                                   "'n'? (the parameters are p, n)")):
        parse_growth("nn log nn", ["p", "n"])


def test_parse_growth_with_parameters_lists_them_without_a_close_name() -> None:
    with pytest.raises(ValueError, match=re.escape("cannot read 'q^2': unknown parameter 'q'; the parameters are "
                                                   "p, n")):
        parse_growth("q^2", ("p", "n"))


def test_parse_growth_parameter_names_are_case_sensitive() -> None:
    with pytest.raises(ValueError, match="unknown parameter 'P'; did you mean 'p'"):
        parse_growth("P", ["p"])


def test_exceeds_compares_i_before_j_per_parameter() -> None:
    n_log_n, n2 = parse_growth("n log n"), parse_growth("n^2")
    assert exceeds(n2, n_log_n) and not exceeds(n_log_n, n2)
    assert exceeds(parse_growth("n log n log n"), n_log_n)
    assert not exceeds(n_log_n, n_log_n) and not lower(n_log_n, n_log_n)
    assert lower(n_log_n, n2) and not lower(n2, n_log_n)


def test_exceeds_counts_missing_parameter_as_constant() -> None:
    assert exceeds({"p": (F(1), 0)}, {})
    assert not exceeds({}, {"p": (F(1), 0)})
    assert lower({}, {"p": (F(0), 1)})
    assert not exceeds({"p": (F(0), 0)}, {})


def test_exceeds_and_lower_both_hold_when_parameters_disagree() -> None:
    a, b = parse_growth("p^2"), parse_growth("p * n")
    assert exceeds(a, b) and lower(a, b)
