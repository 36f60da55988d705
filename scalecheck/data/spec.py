"""PMNF model specifications: `Factor` x^i * log2(x)^j, `Term` (a product of factors), `ModelSpec` (constant + terms).

A spec holds no coefficients and no parameter names: factors refer to parameters by index, so one spec (and one
design matrix) serves every kernel measured on the same points.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property, lru_cache
from fractions import Fraction
from typing import Any

import numpy as np

from scalecheck.data.exponents import DEFAULT_BUILDING_BLOCKS as DEFAULT_BUILDING_BLOCKS  # re-exported
from scalecheck.data.exponents import Exponents as Exponents


def format_exponent(value: Fraction) -> str:
    """`3/2` → `^(3/2)`, `2` → `^2`, `1` → `` (for display)."""
    if value == 1:
        return ""
    if value.denominator == 1:
        return f"^{value.numerator}"
    return f"^({value.numerator}/{value.denominator})"


def _cached_hash(record: Any) -> int:
    """The hash of a frozen record, as the dataclass computes it (the hash of its fields' tuple, so sets and dicts
    order records as they always did), computed once: terms and models are dictionary keys all through a search, and
    hashing their fractions again each time cost a share of every fit."""
    found = record.__dict__.get("_hash")
    if found is None:
        found = hash(tuple(getattr(record, f.name) for f in fields(record)))
        object.__setattr__(record, "_hash", found)
    return int(found)


@dataclass(frozen=True, order=True)
class Factor:
    """x_param^exponent * log2(x_param)^log_exponent for one parameter (by index)."""

    __hash__ = _cached_hash

    param: int
    exponent: Fraction
    log_exponent: int | Fraction = 0

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        """Values at parameter values `x`, shape (n,) → (n,). log2 terms need x >= 1 (the caller checks)."""
        out = np.power(x, float(self.exponent)) if self.exponent else np.ones_like(x, dtype=float)
        if self.log_exponent:
            out = out * np.power(np.log2(x), float(self.log_exponent))
        return out

    def format(self, names: tuple[str, ...]) -> str:
        name = names[self.param]
        parts = []
        if self.exponent:
            parts.append(f"{name}{format_exponent(self.exponent)}")
        if self.log_exponent:
            parts.append(f"log2({name}){format_exponent(Fraction(self.log_exponent))}")
        return " * ".join(parts) or "1"

    @property
    def order(self) -> Exponents:
        return (self.exponent, self.log_exponent)


@dataclass(frozen=True, order=True)
class Term:
    """A product of factors over distinct parameters, sorted by parameter index."""

    __hash__ = _cached_hash

    factors: tuple[Factor, ...]

    def __post_init__(self) -> None:
        params = [f.param for f in self.factors]
        if not self.factors or len(set(params)) != len(params):
            raise ValueError(f"a term needs factors over distinct parameters, got {self.factors}")
        object.__setattr__(self, "factors", tuple(sorted(self.factors)))

    def evaluate(self, points: np.ndarray) -> np.ndarray:
        """Values at `points`, shape (n, m) → (n,)."""
        out = np.ones(points.shape[0])
        for factor in self.factors:
            out = out * factor.evaluate(points[:, factor.param])
        return out

    def format(self, names: tuple[str, ...]) -> str:
        return " * ".join(f.format(names) for f in self.factors)

    def order_in(self, param: int) -> Exponents:
        """(i, j) of this term in parameter `param`; (0, 0) if the term does not involve it."""
        for factor in self.factors:
            if factor.param == param:
                return factor.order
        return (Fraction(0), 0)

    @property
    def params(self) -> frozenset[int]:
        return frozenset(f.param for f in self.factors)


@dataclass(frozen=True)
class ModelSpec:
    """A PMNF hypothesis: c0 + sum_k c_k * term_k. The constant model has no terms."""

    __hash__ = _cached_hash

    terms: tuple[Term, ...] = ()

    @cached_property
    def lead_columns(self) -> tuple[int, ...]:
        """Design-matrix columns (1-based: column 0 is the constant) of the lead terms: those that no other term
        dominates (at least the same order in every parameter, higher in one). These set the growth at scale, so
        their coefficients must be positive unless decreasing models are allowed. Computed once per distinct list
        of terms (`_lead_columns`): the searches and the check build equal specs again and again."""
        return _lead_columns(self.terms)

    @property
    def n_params(self) -> int:
        return _n_params(self.terms)

    def basis(self, points: np.ndarray) -> np.ndarray:
        """Design matrix, shape (n, 1 + k): column 0 is ones, column k is term k at `points` (shape (n, m)).

        A value beyond the range of floats (p^3 at p = 1e200) is inf or NaN, without a warning: the callers treat a
        term that is not finite at some point as undefined there."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            columns = [np.ones(points.shape[0])] + [term.evaluate(points) for term in self.terms]
        return np.stack(columns, axis=1)

    def lead_order(self, param: int) -> Exponents:
        """The growth in `param`: the highest (i, j) of any term, compared lexicographically, and (0, 0) when no
        term grows (none, or only falling ones: c0 + c1 * p^-1 tends to c0, a constant at scale)."""
        return max([(Fraction(0), 0)] + [term.order_in(param) for term in self.terms])

    @property
    def n_terms(self) -> int:
        return len(self.terms)

    def format(self, names: tuple[str, ...]) -> str:
        return " + ".join(["c"] + [f"c * {t.format(names)}" for t in self.terms])


@lru_cache(maxsize=2**14)
def _lead_columns(terms: tuple[Term, ...]) -> tuple[int, ...]:
    """`ModelSpec.lead_columns` of the spec with these terms."""
    orders = [[term.order_in(p) for p in range(_n_params(terms))] for term in terms]
    return tuple(1 + k for k, mine in enumerate(orders)
                 if not any(other != mine and all(o >= m for o, m in zip(other, mine)) for other in orders))


def _n_params(terms: tuple[Term, ...]) -> int:
    """How many parameters terms reach: one past the highest parameter index (1 for no terms)."""
    return 1 + max((f.param for t in terms for f in t.factors), default=0)


def single_term(param: int, exponents: Exponents) -> Term:
    """The one-factor term x_param^i * log2(x_param)^j."""
    log_exponent = Fraction(exponents[1])
    return Term((Factor(param, Fraction(exponents[0]), int(log_exponent) if log_exponent.denominator == 1
                        else log_exponent),))


def format_growth(orders: dict[str, Exponents]) -> str:
    """Lead-order growth per parameter as text: `p^(3/2) * log2(p) * n`, or `constant`."""
    parts = [Factor(k, *order).format(tuple(orders)) for k, order in enumerate(orders.values()) if order[0] or order[1]]
    return " * ".join(parts) if parts else "constant"
