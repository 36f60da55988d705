"""The growth classes the sort scenarios accept: the lead term's class (exponent of n, exponent of log2 n) or a
neighbouring one, the classes one step slower and one step faster in the search space, ordered by growth
(n^(7/4) < n^2 < n^2 log2(n); n < n log2(n) < n log2(n)^2)."""

from __future__ import annotations

from scalecheck.data.spec import DEFAULT_BUILDING_BLOCKS

LADDER = sorted({(float(i), float(j)) for i, j in DEFAULT_BUILDING_BLOCKS})
BUBBLE_ORDERS = set(LADDER[LADDER.index((2.0, 0.0)) - 1:LADDER.index((2.0, 0.0)) + 2])
MERGE_ORDERS = set(LADDER[LADDER.index((1.0, 1.0)) - 1:LADDER.index((1.0, 1.0)) + 2])
