"""Growth bounds as users write them (`p log p`, `O(n^2)`, `sqrt(n)`), read into lead-order exponents per parameter.

A bound is one product of powers of parameters and of their logarithms: `n^2`, `p log p`, `p^2 * n`, `log(p)^2`,
optionally inside `O(...)`. All logarithm bases are the same growth (log2). Sums are refused rather than guessed
at: in several parameters `p + n` and `p * n` would have the same lead orders. `format_growth` (in `spec`) writes
such a mapping back as text that this module reads.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import NoReturn

from scalecheck.data.spec import Exponents

_HOW = "write a growth such as 'p log p', 'n^2' or 'O(n log n)'"
_SUP = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_TOKEN = re.compile(rf"(?P<number>[0-9]+(?:\.[0-9]+)?|\.[0-9]+)|(?P<name>(?:(?![{_SUP}])[^\W\d])(?:(?![{_SUP}])\w)*)"
                    rf"|(?P<sup>[{_SUP}]+)|(?P<op>\*\*|[()^*·×/+\-√])")
_SUPERSCRIPTS = str.maketrans(_SUP, "0123456789")
_LOG_WORD = re.compile(r"log(?:_?\d+|_e)?|ln")  # log, log2, log_2, log10, log_e, ln: every base is one growth
_TIMES = ("*", "·", "×")
_UNSUPPORTED = frozenset({"lg", "lb", "ld", "exp", "cbrt", "min", "max"})  # lg: some write it for log2, others log10
_ZERO: Exponents = (Fraction(0), 0)

_Growth = dict[str, tuple[Fraction, Fraction]]  # exact (i, j) per parameter while parsing, in order of mention


def parse_growth(text: str, parameters: Sequence[str] | None = None) -> dict[str, Exponents]:
    """`"p log p"` → {'p': (Fraction(1), 1)}: the exponents (i, j) of x^i * log2(x)^j per parameter.

    Without `parameters` the mentioned names are returned, in order of mention (a constant gives {}). With them,
    every parameter is returned in their order (unmentioned ones at (0, 0)) and any other name is an error.
    Raises ValueError with a one-line message that says what is wrong and how to write it.
    """
    growth = _Parser(text, None if parameters is None else tuple(parameters)).parse()
    names = list(growth) if parameters is None else list(parameters)
    return {name: _exponents(growth[name]) if name in growth else _ZERO for name in names}


def exceeds(a: Mapping[str, Exponents], b: Mapping[str, Exponents]) -> bool:
    """Whether `a` grows faster than `b` in some parameter: a larger (i, j), compared lexicographically.

    A parameter missing from a mapping counts as (0, 0). Both `exceeds(a, b)` and `lower(a, b)` can hold, when `a`
    grows faster in one parameter and slower in another.
    """
    return any(a.get(name, _ZERO) > b.get(name, _ZERO) for name in {**a, **b})


def lower(a: Mapping[str, Exponents], b: Mapping[str, Exponents]) -> bool:
    """Whether `a` grows slower than `b` in some parameter (`exceeds(b, a)`)."""
    return exceeds(b, a)


def _exponents(order: tuple[Fraction, Fraction]) -> Exponents:
    i, j = order
    return (i, int(j) if j.denominator == 1 else j)


def _times(a: _Growth, b: _Growth) -> _Growth:
    out = dict(a)
    for name, (i, j) in b.items():
        i0, j0 = out.get(name, (Fraction(0), Fraction(0)))
        out[name] = (i0 + i, j0 + j)
    return out


def _power(growth: _Growth, k: Fraction) -> _Growth:
    return {name: (i * k, j * k) for name, (i, j) in growth.items()}


@dataclass(frozen=True)
class _Token:
    kind: str  # "number", "name", "sup" (superscript digits), "op" or "end"
    text: str
    start: int  # offsets into the text, for quoting a fragment in a message
    end: int


def _tokens(text: str) -> list[_Token]:
    tokens, pos = [], 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ValueError(f"cannot read '{text}': unexpected character '{text[pos]}'; {_HOW}")
        kind = match.lastgroup or "op"
        tokens.append(_Token(kind, match.group(), pos, match.end()))
        pos = match.end()
    return tokens + [_Token("end", "", len(text), len(text))]


class _Parser:
    """Recursive descent over the tokens of one growth text; lives for one `parse_growth` call."""

    def __init__(self, text: str, parameters: tuple[str, ...] | None) -> None:
        self.text, self.parameters = text, parameters
        self.tokens = _tokens(text)
        self.pos = 0

    def parse(self) -> _Growth:
        if self._peek().kind == "end":
            self._fail("the growth is empty")
        if self._peek().text == "O" and self._peek(1).text == "(":  # big-O around the whole growth
            self.pos += 2
            growth = self._whole()
            self._close(self.tokens[1])
        else:
            growth = self._whole()
        token = self._peek()
        if token.text == ")":
            self._fail("')' has no matching '('", "remove it or add the missing '('")
        if token.kind != "end":  # only an 'O(...)' followed by more text gets here
            self._fail(f"'O(...)' must hold the whole growth, but '{self.text[token.start:]}' follows it")
        return growth

    def _whole(self) -> _Growth:
        token, after = self._peek(), self._peek(1)
        constant = token.kind == "number" and Fraction(token.text) == 1 or token.text.lower() == "constant"
        if constant and after.text in (")", ""):
            self.pos += 1
            return {}
        return self._product()

    def _product(self) -> _Growth:
        growth: _Growth = {}
        factors, times = 0, None
        while True:
            token = self._peek()
            if token.kind == "end" or token.text == ")":
                if times is not None:
                    self._fail(f"nothing follows '{times.text}'")
                if not factors:
                    self._fail("the growth is empty" if token.kind == "end" else "nothing inside '()'")
                return growth
            if token.text in _TIMES:
                if times is not None or not factors:
                    self._fail(f"'{token.text}' has no factor before it")
                times = self._advance()
                continue
            growth, factors, times = _times(growth, self._factor()), factors + 1, None

    def _factor(self) -> _Growth:
        start = self._peek().start
        growth = self._primary()
        if self._at_power():
            growth = _power(growth, self._exponent(start))
        return growth

    def _primary(self) -> _Growth:
        token = self._advance()
        if token.kind == "name":
            word = token.text.lower()
            if _LOG_WORD.fullmatch(word) or word == "sqrt":
                return self._function(token)
            return {self._name(token): (Fraction(1), Fraction(0))}
        if token.text == "√":
            return self._function(token)
        if token.text == "(":
            growth = self._product()
            self._close(token)
            return growth
        if token.kind == "number" and self._at_power():
            self._fail(f"'{self.text[token.start:]}' grows exponentially, and a bound is a product of powers "
                       "and logarithms")
        if token.kind == "number":
            self._fail(f"stray number '{token.text}'", "put exponents after '^', as in 'n^2'; a constant growth is '1'")
        if token.text in ("+", "-"):
            self._fail(f"'{token.text}' makes a sum", "write only the leading term, e.g. 'n^2' for 'n^2 + n'")
        if token.text == "/":
            self._fail("'/' divides, and a growth has no negative exponents", "write a product such as 'n log n'")
        self._fail(f"unexpected '{token.text}'")

    def _function(self, word: _Token) -> _Growth:
        """`log p`, `log(p)`, `log^2 p`, `log(p)^2` (both: (log p)^2), `sqrt(n)`, `√n`."""
        outer = self._exponent(word.start) if self._at_power() else Fraction(1)
        token = self._peek()
        if token.text == "(":
            self._advance()
            inner = self._product()
            self._close(token)
        elif token.kind == "name" and not _LOG_WORD.fullmatch(token.text.lower()) and token.text.lower() != "sqrt":
            self._advance()
            inner = {self._name(token): (Fraction(1), Fraction(0))}
            if self._at_power():  # log p^2: (log p)^2 or log(p^2)?
                caret = self._peek().start
                self._exponent(word.start)
                power = self.text[caret:self.tokens[self.pos - 1].end].replace(" ", "")
                space = "" if word.text == "√" else " "
                self._fail(f"'{self.text[word.start:self.tokens[self.pos - 1].end]}' is ambiguous",
                           f"write '({word.text}{space}{token.text}){power}' or "
                           f"'{word.text}({token.text}{power})'")
        else:
            self._fail(f"'{word.text}' needs one parameter, as in '{word.text}(p)'")
        if word.text.lower() == "sqrt" or word.text == "√":
            return _power(inner, outer / 2)
        orders = list(inner.items())
        if len(orders) != 1 or orders[0][1][0] == 0 or orders[0][1][1] != 0:  # log(p*n), log(log p), log(1)
            argument = self.text[token.start:self.tokens[self.pos - 1].end]
            self._fail(f"'{word.text}' takes one parameter, not '{argument}'", f"write e.g. '{word.text}(p)'")
        return {orders[0][0]: (Fraction(0), outer)}

    def _name(self, token: _Token) -> str:
        word, lower = token.text, token.text.lower()
        if lower == "constant":
            self._fail("'constant' must be the whole growth", "write 'constant' or '1' alone")
        if "log" in lower or "sqrt" in lower:  # nlogn, logn
            self._fail(f"unknown word '{word}'",
                       "write '" + " ".join(re.sub(r"(?i)(log\d*|sqrt)", r" \1 ", word).split()) + "'")
        if lower in _UNSUPPORTED or self._peek().text == "(":
            self._fail(f"unknown word '{word}'")
        if self.parameters is not None and word not in self.parameters:
            known = f"the parameters are {', '.join(self.parameters)}"
            close = ([p for p in self.parameters if p.lower() == lower]
                     or difflib.get_close_matches(word, self.parameters, n=1))
            self._fail(f"unknown parameter '{word}'", f"did you mean '{close[0]}'? ({known})" if close else known)
        return word

    def _exponent(self, base: int) -> Fraction:
        """The exponent after `^`, `**` or as superscript digits; `base` is where the powered factor starts."""
        op = self._advance()
        if op.kind == "sup":
            return Fraction(op.text.translate(_SUPERSCRIPTS))
        token = self._peek()
        if token.text == "(":
            self._advance()
            self._no_minus(base)
            numerator = self._number().text
            value = Fraction(numerator)
            if self._peek().text == "/":
                self._advance()
                denominator = self._number().text
                if not Fraction(denominator):
                    self._fail(f"the exponent '{numerator}/{denominator}' divides by zero", "write e.g. 'n^(3/2)'")
                value /= Fraction(denominator)
            self._close(token)
            return value
        self._no_minus(base)
        if token.kind != "number":
            self._fail(f"'{op.text}' needs an exponent after it", "write e.g. 'n^2' or 'n^(1/2)'")
        self._advance()
        if self._peek().text == "/" and self._peek(1).kind == "number":  # n^3/2: n^(3/2) or (n^3)/2?
            end = self._peek(1).end
            self._fail(f"'{self.text[base:end]}' is ambiguous",
                       f"write '{self.text[base:op.start].strip()}^({token.text}/{self._peek(1).text})' "
                       "for a fractional exponent")
        return Fraction(token.text)

    def _no_minus(self, base: int) -> None:
        if self._peek().text == "-":
            last = self.pos + 1  # quote the whole exponent: n^-1, n^(-1/2)
            while self.tokens[last].kind == "number" or self.tokens[last].text in ("/", ")"):
                last += 1
                if self.tokens[last - 1].text == ")":
                    break
            end = self.tokens[last - 1].end
            self._fail(f"negative exponent in '{self.text[base:end]}'",
                       "a growth bound has exponents >= 0, such as 'n^2' or 'n^(1/2)'")

    def _number(self) -> _Token:
        if self._peek().kind != "number":
            self._fail("an exponent in parentheses must be a number or a fraction", "write e.g. 'n^(3/2)'")
        return self._advance()

    def _close(self, opened: _Token) -> None:
        if self._peek().text != ")":
            self._fail(f"'(' at character {opened.start + 1} is never closed", "add the missing ')'")
        self._advance()

    def _at_power(self) -> bool:
        token = self._peek()
        return token.text in ("^", "**") or token.kind == "sup"

    def _peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def _advance(self) -> _Token:
        token = self._peek()
        self.pos = min(self.pos + 1, len(self.tokens) - 1)
        return token

    def _fail(self, problem: str, how: str = _HOW) -> NoReturn:
        raise ValueError(f"cannot read '{self.text}': {problem}; {how}")
