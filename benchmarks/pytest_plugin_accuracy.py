"""Accuracy of the pytest plugin's complexity assertions against big_O, on functions of known complexity.

Each function is measured and judged `--runs` times (default 20) against two bounds: its true class (the verdict
must be "pass") and the next class below (the verdict must be "fail"; not for constant functions). scalecheck runs
exactly what `scaling.measure(...).assert_no_worse_than(bound)` runs in a test, with the default budget of 2 s per
measurement; an inconclusive outcome passes with a warning, as in a test. big_O (`pip install big_O`) measures the
same function over the same range of sizes in about the same time, and its verdict is "pass" when the class it
picks is at most the bound.

    python benchmarks/pytest_plugin_accuracy.py [--runs 20] [--only NAME] [--budget 2]

Prints, per function and bound, the share of correct verdicts of each tool, then the totals: the share of correct
verdicts, and the number of failures of a correct bound (the flaky failure a CI user sees).
"""

from __future__ import annotations

import argparse
import bisect
import math
import random
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from scalecheck.pytest_plugin._scaling import Recorder, Scaling, ScalingInconclusiveWarning, Settings

from known_functions import all_pairs, front_inserts, py_binary_search, py_loop_sum, py_merge_sort


def floats(n: int) -> list[float]:
    n = int(n)
    rng = random.Random(n)
    return [rng.random() for _ in range(n)]


def ints(n: int) -> list[int]:
    n = int(n)
    rng = random.Random(n)
    return [rng.randrange(1 << 30) for _ in range(n)]


def sorted_floats(n: int) -> list[float]:
    return sorted(floats(n))


def table(n: int) -> dict[int, int]:
    return {k: k for k in range(int(n))}


def py_sqrt_scan(data: list[float]) -> float:
    total = 0.0
    for _ in range(math.isqrt(len(data))):  # sqrt(n) scans of n elements in Python
        for x in data:
            total += x
    return total


def c_sqrt_sums(data: list[float]) -> float:
    return sum(sum(data) for _ in range(math.isqrt(len(data))))  # sqrt(n) sums of n elements, in C


@dataclass(frozen=True)
class Case:
    name: str
    func: Callable[[Any], Any]
    setup: Callable[[int], Any]
    low: int
    high: int
    truth: str  # the class, a bound that holds
    below: str | None  # the next class below: a bound that does not hold
    kind: str  # "C" or "Python", and the speed


CASES = [
    Case("len(list)", len, floats, 1_000, 1_000_000, "1", None, "C, ~30 ns"),
    Case("dict lookup", lambda d: d.get(7), table, 1_000, 300_000, "1", None, "C, ~40 ns"),
    Case("py binary search", py_binary_search, sorted_floats, 1_000, 1_000_000, "log n", "1", "Python, ~2 us"),
    Case("bisect (C)", lambda d: bisect.bisect_left(d, 0.5), sorted_floats, 1_000, 1_000_000, "log n", None,
         "C, ~100 ns"),
    Case("sum(list)", sum, floats, 1_000, 1_000_000, "n", "log n", "C, 5 us - 5 ms"),
    Case("py sum loop", py_loop_sum, floats, 1_000, 1_000_000, "n", "log n", "Python, 20 us - 20 ms"),
    Case("sorted(list)", sorted, floats, 1_000, 1_000_000, "n log n", "n", "C, 50 us - 0.5 s"),
    Case("py merge sort", py_merge_sort, ints, 100, 100_000, "n log n", "n", "Python, 50 us - 0.3 s"),
    Case("front inserts", front_inserts, floats, 1_000, 200_000, "n^2", "n^1.5", "C memmove, 1 ms - 2 s"),
    Case("py all pairs", all_pairs, floats, 30, 3_000, "n^2", "n^1.5", "Python, 30 us - 1 s"),
    Case("C sqrt(n) sums", c_sqrt_sums, floats, 1_000, 1_000_000, "n^1.5", "n log n", "C, 100 us - 1 s"),
    Case("py sqrt(n) scans", py_sqrt_scan, floats, 100, 100_000, "n^1.5", "n log n", "Python, 20 us - 2 s"),
]


def scalecheck_verdict(case: Case, bound: str, budget: float, seed: int) -> tuple[str, float]:
    """("pass" | "fail", seconds) of what `scaling.measure(...).assert_no_worse_than(bound)` does in a test."""
    scaling = Scaling(f"bench::{case.name}", Settings(budget=budget, seed=seed), Recorder())
    began = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScalingInconclusiveWarning)
        try:
            result = scaling.measure(case.func, setup=case.setup, n=scaling.sizes(case.low, case.high))
            result.assert_no_worse_than(bound)
            verdict = "pass"
        except pytest.fail.Exception:
            verdict = "fail"
    return verdict, time.perf_counter() - began


_ORDER = {"1": 0.0, "log n": 0.5, "n": 1.0, "n log n": 1.5, "n^1.5": 1.75, "n^2": 2.0}


def big_o_verdict(case: Case, bound: str, seconds: float) -> str:
    """big_O's class for the function over the same sizes, compared with the bound ("error" when big_O raises:
    it crashes on a function too fast for one timed call, counted as a wrong verdict)."""
    import big_o

    # big_O times one call per size; repeat its measures to spend about the time scalecheck spent
    per_call = _time_call(case)
    repeats = max(1, min(5, int(seconds / max(per_call * 10, 1e-9))))
    # without Cubic: its least-squares fit of n^3 is rank-deficient for sizes beyond ~10^5 and big_O raises
    # IndexError; none of the cases is cubic, so leaving it out only helps big_O
    classes = [c for c in big_o.complexities.ALL_CLASSES if c.__name__ != "Cubic"]
    try:
        best, _ = big_o.big_o(case.func, case.setup, min_n=case.low, max_n=_affordable(case, seconds),
                              n_measures=10, n_repeats=1, n_timings=repeats, classes=classes)
    except (IndexError, ValueError, FloatingPointError):
        return "error"
    name = type(best).__name__
    order = {"Constant": 0.0, "Logarithmic": 0.5, "Linear": 1.0, "Linearithmic": 1.5, "Quadratic": 2.0,
             "Cubic": 3.0, "Exponential": 9.0}.get(name)
    if order is None:  # Polynomial: x^k with its fitted exponent
        order = float(best.coeff[1]) if hasattr(best, "coeff") else 9.0
    return "pass" if order <= _ORDER[bound] + 1e-9 else "fail"


def _time_call(case: Case) -> float:
    data = case.setup(case.low)
    began = time.perf_counter()
    case.func(data)
    return time.perf_counter() - began


def _affordable(case: Case, seconds: float) -> int:
    """The largest size big_O can afford in about `seconds` (its sizes are linear, so the top size dominates)."""
    high = case.high
    while high > case.low * 4:
        data = case.setup(high)
        began = time.perf_counter()
        case.func(data)
        if (time.perf_counter() - began) * 6 < seconds:
            break
        high //= 2
    return high


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--budget", type=float, default=2.0)
    parser.add_argument("--only", default=None, help="run the cases whose name contains this text")
    parser.add_argument("--no-big-o", action="store_true", help="skip big_O (when it is not installed)")
    args = parser.parse_args()
    try:
        import big_o  # noqa: F401
    except ImportError:
        if not args.no_big_o:
            print("big_O is not installed: pip install big_O (or pass --no-big-o)", file=sys.stderr)
            return 2
    cases = [c for c in CASES if args.only is None or args.only in c.name]
    totals = {"scalecheck": [0, 0, 0], "big_O": [0, 0, 0]}  # correct, verdicts, failures of a correct bound
    print(f"{'function':<20} {'kind':<24} {'bound':<9} {'want':<5} {'scalecheck':>10} {'big_O':>7} {'time/run':>9}")
    for case in cases:
        for bound, want in [(case.truth, "pass")] + ([(case.below, "fail")] if case.below else []):
            right = {"scalecheck": 0, "big_O": 0}
            spent = 0.0
            for run in range(args.runs):
                verdict, seconds = scalecheck_verdict(case, bound, args.budget, run)
                spent += seconds
                right["scalecheck"] += verdict == want
                totals["scalecheck"][2] += want == "pass" and verdict == "fail"
                if not args.no_big_o:
                    other = big_o_verdict(case, bound, seconds)
                    right["big_O"] += other == want
                    totals["big_O"][2] += want == "pass" and other == "fail"
            for tool in right:
                totals[tool][0] += right[tool]
                totals[tool][1] += args.runs
            big = "-" if args.no_big_o else f"{right['big_O'] / args.runs:.0%}"
            print(f"{case.name:<20} {case.kind:<24} {bound:<9} {want:<5} {right['scalecheck'] / args.runs:>10.0%} "
                  f"{big:>7} {spent / args.runs:>8.1f}s", flush=True)
    for tool, (correct, count, false_failures) in totals.items():
        if count:
            print(f"{tool}: {correct}/{count} correct verdicts ({correct / count:.1%}); "
                  f"{false_failures} failure(s) of a correct bound")
    return 0


if __name__ == "__main__":
    sys.exit(main())
