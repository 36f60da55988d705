"""Pure-Python functions of known complexity, measured by the plugin benchmarks (`pytest_plugin_accuracy.py`,
`plugin_under_load.py`)."""

from __future__ import annotations

import heapq


def py_binary_search(xs: list[float]) -> int:
    """log n: a binary search written in Python, on a sorted list."""
    lo, hi = 0, len(xs)
    while lo < hi:
        mid = (lo + hi) // 2
        if xs[mid] < 0.5:
            lo = mid + 1
        else:
            hi = mid
    return lo


def py_loop_sum(xs: list[float]) -> float:
    """n: a sum written as a Python loop."""
    total = 0.0
    for x in xs:
        total += x
    return total


def py_merge_sort(xs: list[int]) -> list[int]:
    """n log n: a recursive merge sort, merging with heapq.merge."""
    if len(xs) <= 1:
        return xs
    mid = len(xs) // 2
    return list(heapq.merge(py_merge_sort(xs[:mid]), py_merge_sort(xs[mid:])))


def all_pairs(xs: list[float]) -> int:
    """n^2: every ordered pair compared."""
    count = 0
    for x in xs:
        for y in xs:
            if x < y:
                count += 1
    return count


def front_inserts(xs: list[float]) -> list[float]:
    """n^2: list.insert(0, x) moves the whole list each time (a memmove in C; from a few thousand elements on it
    dominates)."""
    out: list[float] = []
    for x in xs:
        out.insert(0, x)
    return out
