"""Extra-P's default building blocks: the (i, j) exponent pairs of x^i * log2(x)^j searched by default.

Free of numpy, so that the option table (and `scalecheck --help`) can name the defaults without loading it.
"""

from __future__ import annotations

from fractions import Fraction

Exponents = tuple[Fraction, int | Fraction]  # (i, j) of x^i * log2(x)^j; j is whole except after refinement

_F = Fraction
# Extra-P's default building blocks (42): every i with j = 0, a subset with j = 1 and j = 2.
_POWERS = (_F(0), _F(1, 4), _F(1, 3), _F(1, 2), _F(2, 3), _F(3, 4), _F(4, 5), _F(1), _F(5, 4), _F(4, 3), _F(3, 2),
           _F(5, 3), _F(7, 4), _F(2), _F(9, 4), _F(7, 3), _F(5, 2), _F(8, 3), _F(11, 4), _F(3))
_LOG1 = (_F(0), _F(1, 4), _F(1, 3), _F(1, 2), _F(2, 3), _F(3, 4), _F(1), _F(5, 4), _F(4, 3), _F(3, 2), _F(2), _F(5, 2),
         _F(3))
_LOG2 = (_F(0), _F(1, 4), _F(1, 3), _F(1, 2), _F(2, 3), _F(3, 4), _F(1), _F(3, 2), _F(2), _F(5, 2))
DEFAULT_BUILDING_BLOCKS: tuple[Exponents, ...] = tuple(
    [(i, 0) for i in _POWERS if i] + [(i, 1) for i in _LOG1] + [(i, 2) for i in _LOG2]
)


def falling(blocks: tuple[Exponents, ...]) -> tuple[Exponents, ...]:
    """The mirror images (-i, -j) of the growing blocks among `blocks`: x^-i * log2(x)^-j, terms that fall as the
    parameter grows (Extra-P's negative exponents, for strong scaling), in the order of `blocks`."""
    return tuple((-_F(i), -j) for i, j in blocks if i >= 0 and j >= 0 and (i or j))
