"""The pytest plugin as users meet it: correct and wrong bounds of known functions, on an idle and a loaded machine.

Each of 24 functions of known complexity (numpy vectorised operations, sorting, set/dict/list dedup, bytes and str
building, heaps, bisect, all-pairs loops, ...) is asserted against two bounds, exactly as a test does it: a fresh
`scaling.measure(f, n=scaling.sizes(low, high), setup=...)` followed by `.assert_no_worse_than(bound)` (in-process,
through the plugin's `Scaling`, with `Settings(budget=B, seed=run)`):

- the correct bound, the function's true class: it must not fail (an inconclusive pass, with a
  `ScalingInconclusiveWarning`, does not fail a test, so it counts as not failing);
- a wrong bound, one polynomial degree below the truth (linear: "1"; n log n: "log n"; quadratic: "n log n"): it
  must fail (pytest's `Failed` outcome). Constant and logarithmic functions have no wrong bound (nothing lies a
  polynomial degree below them), and no wrong bound differs from the truth by a log factor only, which the plugin's
  time rule deliberately calls inconclusive.

Every assertion gets its own measurement, as in a test that asserts once: `assert_no_worse_than` may extend the
measurement it is given (up to two more budgets), so a second assertion on the same measurement would judge more
data than a test does. It costs twice the time of a shared measurement.

A run asserts every bound of every function once. Runs alternate idle, loaded, idle, loaded, ... (so slow drift of
the machine hits both alike); idle run i and loaded run i use the same seed i (the plugin's seed, which orders the
repetitions and the bootstrap, and the seed of the random inputs). During a loaded run one busy-loop process per core
(`while True: pass`) runs; they are started right before the run and stopped by process id right after it (also on
Ctrl-C, SIGTERM and SIGHUP; on Linux they also die with this script).

    python benchmarks/plugin_under_load.py                        # 10 idle + 10 loaded runs, budget 2 s
    python benchmarks/plugin_under_load.py --runs 1 --budget 1    # a smoke run over every function
    python benchmarks/plugin_under_load.py --runs 3 --only sum,np_sort --loaded-only --json out.json --seed 100

It prints a line per run, then per function and bound the outcomes idle and loaded (failed / inconclusive /
passed), the messages of every failed correct bound (the bugs), the wrong bounds that did not fail, the totals and
"target met"/"target missed" per target: no correct bound fails (idle, loaded), at least 95% (idle) and 90% (loaded)
of the wrong bounds fail. Also the share of correct bounds inconclusive, the seconds per assertion and the peak
memory. `--json FILE` keeps every outcome with its message and measured points (rewritten after every run). It exits
0 unless it breaks itself (130 when interrupted, after printing what it has). On 2 cores one run of the 44 assertions
takes about 100 s at --budget 1 (an assertion takes 1-3 budgets: extensions when inconclusive or failing), so the
default, 10 idle and 10 loaded runs at 2 s, takes about 45 minutes.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import difflib
import heapq
import json
import os
import resource
import signal
import statistics
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
import pytest

import scalecheck
from scalecheck.data.spec import format_growth
from scalecheck.pytest_plugin._scaling import Recorder, Scaling, ScalingInconclusiveWarning, Settings

from busy import busy_loops
from known_functions import all_pairs, front_inserts, py_binary_search, py_loop_sum, py_merge_sort

LOADS = ("idle", "loaded")
OUTCOMES = ("failed", "inconclusive", "passed", "error")  # error: the measured function or the harness raised
TARGET_WRONG = {"idle": 0.95, "loaded": 0.90}  # share of wrong bounds that must fail


# -- inputs: setup(rng, n), built outside the timed region, afresh for every repetition ------------------------------

def floats(rng: np.random.Generator, n: int) -> list[float]:
    return rng.random(n).tolist()  # type: ignore[no-any-return]


def ints(rng: np.random.Generator, n: int) -> list[int]:
    return rng.integers(0, 1 << 62, n).tolist()  # type: ignore[no-any-return]  # distinct with near certainty


def sorted_floats(rng: np.random.Generator, n: int) -> list[float]:
    return np.sort(rng.random(n)).tolist()  # type: ignore[no-any-return]


def descending_floats(rng: np.random.Generator, n: int) -> list[float]:
    return np.sort(rng.random(n))[::-1].tolist()  # type: ignore[no-any-return]


def array(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.random(n)


def chunks(rng: np.random.Generator, n: int) -> list[bytes]:
    data = rng.bytes(8 * n)
    return [data[i:i + 8] for i in range(0, 8 * n, 8)]


def words(rng: np.random.Generator, n: int) -> list[str]:
    return [f"{x:08x}" for x in rng.integers(0, 1 << 32, n).tolist()]


def table(rng: np.random.Generator, n: int) -> dict[int, int]:
    return {k: k for k in range(n)}


# -- the measured functions -------------------------------------------------------------------------------------------

def dict_build(xs: list[int]) -> dict[int, int]:
    return {x: i for i, x in enumerate(xs)}


def bytearray_extend(pieces: list[bytes]) -> int:
    buf = bytearray()
    for piece in pieces:
        buf += piece
    return len(buf)


def str_concat(pieces: list[str]) -> int:
    text = ""
    for piece in pieces:
        text += piece  # CPython resizes `text` in place (its only reference): linear overall
    return len(text)


def heapify(xs: list[float]) -> list[float]:
    heap = list(xs)  # a copy: the timed loop calls this again on the same input
    heapq.heapify(heap)
    return heap


def heap_pushes(xs: list[float]) -> list[float]:
    heap: list[float] = []
    for x in xs:  # descending input: every push sifts up to the root, log n swaps (random input: O(1) on average)
        heapq.heappush(heap, x)
    return heap


def list_dedup(xs: list[int]) -> list[int]:
    seen: list[int] = []
    for x in xs:
        if x not in seen:  # a scan of the list: quadratic on distinct input
            seen.append(x)
    return seen


@dataclass(frozen=True)
class Case:
    name: str
    func: Callable[[Any], Any]
    setup: Callable[[np.random.Generator, int], Any]
    low: int
    high: int
    truth: str  # the true class: a correct bound
    wrong: str | None  # one polynomial degree below the truth: must fail (None: nothing below constant or log n)
    kind: str  # what it is, for the table


CASES = [
    Case("dict_lookup", lambda d: d.get(7), table, 1_000, 1_000_000, "1", None, "C dict"),
    Case("list_index", lambda xs: xs[len(xs) // 2], floats, 1_000, 1_000_000, "1", None, "C list"),
    Case("bisect", lambda xs: bisect.bisect_left(xs, 0.5), sorted_floats, 1_000, 1_000_000, "log n", None, "C"),
    Case("py_binary_search", py_binary_search, sorted_floats, 1_000, 1_000_000, "log n", None, "Python loop"),
    Case("sum", sum, floats, 1_000, 1_000_000, "n", "1", "C, list of floats"),
    Case("py_loop_sum", py_loop_sum, floats, 1_000, 1_000_000, "n", "1", "Python loop"),
    Case("set_dedup", lambda xs: len(set(xs)), ints, 1_000, 1_000_000, "n", "1", "C set"),
    Case("dict_build", dict_build, ints, 1_000, 1_000_000, "n", "1", "dict comprehension"),
    Case("counter", collections.Counter, ints, 1_000, 1_000_000, "n", "1", "collections.Counter"),
    Case("bytes_join", b"".join, chunks, 1_000, 1_000_000, "n", "1", "b''.join of 8-byte chunks"),
    Case("bytearray_extend", bytearray_extend, chunks, 1_000, 1_000_000, "n", "1", "bytearray +="),
    Case("str_join", "".join, words, 1_000, 1_000_000, "n", "1", "''.join of 8-char words"),
    Case("str_concat", str_concat, words, 1_000, 1_000_000, "n", "1", "str += in a loop"),
    Case("np_affine", lambda x: 2 * x + 1, array, 10_000, 4_000_000, "n", "1", "numpy float64"),
    Case("heapify", heapify, floats, 1_000, 1_000_000, "n", "1", "copy + heapq.heapify"),
    Case("sorted_presorted", sorted, sorted_floats, 1_000, 1_000_000, "n", "1", "timsort, one run"),
    Case("np_sort", np.sort, array, 10_000, 2_000_000, "n log n", "log n", "numpy float64"),
    Case("sorted_random", sorted, floats, 1_000, 1_000_000, "n log n", "log n", "timsort"),
    Case("heap_pushes", heap_pushes, descending_floats, 1_000, 1_000_000, "n log n", "log n", "heappush, descending"),
    Case("py_merge_sort", py_merge_sort, ints, 1_000, 1_000_000, "n log n", "log n", "Python + heapq.merge"),
    Case("list_dedup", list_dedup, ints, 250, 16_000, "n^2", "n log n", "`not in` a list"),
    Case("all_pairs", all_pairs, floats, 100, 8_000, "n^2", "n log n", "Python double loop"),
    Case("front_inserts", front_inserts, floats, 2_000, 256_000, "n^2", "n log n", "list.insert(0, x)"),
    Case("np_outer", lambda x: np.outer(x, x), array, 100, 3_000, "n^2", "n log n", "numpy, n x n float64"),
]


@dataclass(frozen=True)
class Assertion:
    """One `measure(...).assert_no_worse_than(bound)`, as a test would run it, and what came of it."""

    run: int
    load: str  # "idle" or "loaded"
    function: str
    bound: str
    correct: bool  # the bound is the true class (else: a wrong bound that must fail)
    outcome: str  # one of OUTCOMES
    seconds: float  # measuring and asserting
    message: str  # the failure or warning message, or the traceback of an error
    fitted: str  # the growth the plugin fitted ("" when none)
    largest: int  # the largest size measured
    sizes: int  # the number of sizes measured
    repetitions: int  # the fewest repetitions of a size
    loadavg: float  # 1-minute load average when it ended
    points: tuple[tuple[int, float, int, int], ...]  # (n, median s per call, repetitions, calls per timing) per size


def assert_once(case: Case, bound: str, correct: bool, run: int, load: str, budget: float) -> Assertion:
    """Measure `case` afresh and assert `bound`, catching what pytest would report."""
    scaling = Scaling(f"benchmarks/plugin_under_load.py::test_{case.name}", Settings(budget=budget, seed=run),
                      Recorder())

    def setup(n: int) -> Any:
        return case.setup(np.random.default_rng([run, int(n)]), int(n))

    result = None
    began = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = scaling.measure(case.func, setup=setup, n=scaling.sizes(case.low, case.high))
            result.assert_no_worse_than(bound)
            outcome, message = "passed", ""
        except pytest.fail.Exception as failed:
            outcome, message = "failed", str(failed.msg)
        except Exception:  # noqa: BLE001 - the measured function or the plugin raised: a test error, kept as data
            outcome, message = "error", traceback.format_exc()
    seconds = time.perf_counter() - began
    inconclusive = [str(w.message) for w in caught if issubclass(w.category, ScalingInconclusiveWarning)]
    if outcome == "passed" and inconclusive:
        outcome, message = "inconclusive", inconclusive[-1]
    fitted = ""
    points: tuple[tuple[int, float, int, int], ...] = ()
    if result is not None:
        check = result.check
        if check is not None and check.growth is not None:
            fitted = format_growth(dict(check.growth))
        loops = result.measured.loops
        points = tuple(sorted((int(p[0]), statistics.median(v), len(v), loops.get(p, 0))
                              for p, v in result.measured.values.items() if v))
    return Assertion(run, load, case.name, bound, correct, outcome, seconds, message, fitted,
                     max((p[0] for p in points), default=0), len(points), min((p[2] for p in points), default=0),
                     os.getloadavg()[0], points)


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    """SIGTERM/SIGHUP act as Ctrl-C: the normal unwinding runs every `finally` (which stops the busy loops), then
    the results so far are printed."""
    raise KeyboardInterrupt


# -- the report ---------------------------------------------------------------------------------------------------

def counts(rows: list[Assertion]) -> str:
    """failed/inconclusive/passed (and errors, if any) of `rows`, or '-' when there are none."""
    if not rows:
        return "-"
    n = {o: sum(r.outcome == o for r in rows) for o in OUTCOMES}
    text = f"{n['failed']}/{n['inconclusive']}/{n['passed']}"
    return text + (f" +{n['error']} err" if n["error"] else "")


def print_table(results: list[Assertion], cases: list[Case]) -> None:
    head = (f"{'function':<18} {'kind':<26} {'bound':<8} {'want':<7} {'idle f/i/p':>12} {'loaded f/i/p':>13} "
            f"{'largest n':>10} {'s/assert':>8}")
    print(head)
    print("-" * len(head))
    for case in cases:
        for bound, correct in ((case.truth, True), (case.wrong, False)):
            if bound is None:
                print(f"{case.name:<18} {case.kind:<26} {'none':<8} {'-':<7} (no wrong bound: nothing lies a "
                      f"polynomial degree below {case.truth})")
                continue
            rows = [r for r in results if r.function == case.name and r.bound == bound]
            cells = [counts([r for r in rows if r.load == load]) for load in LOADS]
            largest = f"{statistics.median(r.largest for r in rows):,.0f}" if rows else "-"
            seconds = f"{statistics.median(r.seconds for r in rows):.1f}" if rows else "-"
            print(f"{case.name:<18} {case.kind:<26} {bound:<8} {'no fail' if correct else 'fail':<7} {cells[0]:>12} "
                  f"{cells[1]:>13} {largest:>10} {seconds:>8}")


def print_problems(results: list[Assertion]) -> None:
    bugs = [r for r in results if r.correct and r.outcome == "failed"]
    print(f"\nfailed correct bounds (bugs): {len(bugs)}")
    for r in bugs:
        print(f"--- run {r.run} {r.load}: {r.function} '{r.bound}' ({r.seconds:.1f} s, load {r.loadavg:.2f})")
        print("    " + r.message.replace("\n", "\n    "))
    errors = [r for r in results if r.outcome == "error"]
    if errors:
        print(f"\nerrors (the function or the harness raised): {len(errors)}")
        for r in errors:
            print(f"--- run {r.run} {r.load}: {r.function} '{r.bound}'")
            print("    " + r.message.replace("\n", "\n    "))
    misses = [r for r in results if not r.correct and r.outcome != "failed"]
    print(f"\nwrong bounds that did not fail: {len(misses)}")
    for r in misses:
        print(f"  run {r.run} {r.load:6}: {r.function} '{r.bound}' {r.outcome}, fitted {r.fitted or '-'}, "
              f"{r.sizes} sizes up to n = {r.largest:,}, {r.repetitions}+ repetitions, {r.seconds:.1f} s")


def verdict_line(label: str, value: str, met: bool | None) -> str:
    """One line of the totals; `met` None: no target (or no data for it)."""
    mark = "" if met is None else ("   target met" if met else "   target MISSED")
    return f"  {label:<62} {value}{mark}"


def print_totals(results: list[Assertion], loads: list[str]) -> None:
    print("\ntotals")
    for load in loads:
        rows = [r for r in results if r.load == load]
        right = [r for r in rows if r.correct]
        wrong = [r for r in rows if not r.correct]
        failed_right = sum(r.outcome == "failed" for r in right)
        inconclusive = sum(r.outcome == "inconclusive" for r in right)
        failed_wrong = sum(r.outcome == "failed" for r in wrong)
        print(verdict_line(f"{load}: correct bounds failed (target 0)", f"{failed_right}/{len(right)}",
                           failed_right == 0 if right else None))
        share = failed_wrong / len(wrong) if wrong else 0.0
        print(verdict_line(f"{load}: wrong bounds failed (target >= {TARGET_WRONG[load]:.0%})",
                           f"{failed_wrong}/{len(wrong)} ({share:.1%})",
                           share >= TARGET_WRONG[load] if wrong else None))
        print(verdict_line(f"{load}: correct bounds inconclusive (passed with a warning)",
                           f"{inconclusive}/{len(right)} ({inconclusive / max(1, len(right)):.1%})", None))
        errors = sum(r.outcome == "error" for r in rows)
        if errors:
            print(verdict_line(f"{load}: errors (the function or the harness raised)", str(errors), None))
        if rows:
            seconds = [r.seconds for r in rows]
            print(verdict_line(f"{load}: seconds per assertion (median, max)",
                               f"{statistics.median(seconds):.1f}, {max(seconds):.1f}", None))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak_mib = peak / 2**20 if sys.platform == "darwin" else peak / 2**10  # bytes on macOS, KiB on Linux
    print(verdict_line("peak memory of this process (max RSS)", f"{peak_mib:.0f} MiB", None))


def write_json(path: Path, args: argparse.Namespace, results: list[Assertion], finished: bool) -> None:
    data = {"benchmark": "plugin_under_load", "finished": finished, "scalecheck": str(Path(scalecheck.__file__).parent),
            "python": sys.version.split()[0],
            "cores": os.cpu_count(), "budget": args.budget, "runs": args.runs, "seed": args.seed,
            "busy_loops": args.load, "assertions": [asdict(r) for r in results]}
    path.write_text(json.dumps(data, indent=1) + "\n")


# -- main ---------------------------------------------------------------------------------------------------------

def select(only: str | None, parser: argparse.ArgumentParser) -> list[Case]:
    if only is None:
        return list(CASES)
    names = {c.name for c in CASES}
    wanted = [name.strip() for name in only.split(",") if name.strip()]
    for name in wanted:
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1)
            parser.error(f"--only: unknown function {name!r}"
                         + (f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(sorted(names))}"))
    return [c for c in CASES if c.name in wanted]


def one_run(cases: list[Case], run: int, load: str, args: argparse.Namespace, done: list[Assertion]) -> None:
    """Append to `done` as it goes, so an interrupted run keeps the assertions it finished."""
    for case in cases:
        for bound, correct in ((case.truth, True), (case.wrong, False)):
            if bound is not None:
                done.append(assert_once(case, bound, correct, run, load, args.budget))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="idle runs and loaded runs, each (default 10)")
    parser.add_argument("--budget", type=float, default=Settings().budget,
                        help=f"seconds per measurement (default: the plugin's, {Settings().budget:g})")
    parser.add_argument("--only", metavar="NAME[,NAME]", help="only these functions (see the table for the names)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--idle-only", action="store_true", help="no loaded runs")
    which.add_argument("--loaded-only", action="store_true", help="no idle runs")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every outcome, with its message, here")
    parser.add_argument("--seed", type=int, default=0, help="run i uses seed SEED + i (default 0)")
    parser.add_argument("--load", type=int, default=os.cpu_count() or 2,
                        help="busy-loop processes in the loaded runs (default: one per core)")
    args = parser.parse_args()
    if args.runs < 1 or args.budget <= 0:
        parser.error("--runs must be at least 1 and --budget positive")
    cases = select(args.only, parser)
    loads = [load for load in LOADS if not (load == "idle" and args.loaded_only or
                                             load == "loaded" and args.idle_only)]
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _exit_on_signal)
    per_run = sum(1 + (c.wrong is not None) for c in cases)
    print(f"scalecheck {scalecheck.__version__} from {Path(scalecheck.__file__).parent}")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} cores; budget {args.budget:g} s; "
          f"{len(cases)} functions, {per_run} assertions per run; {args.runs} run(s) each {' and '.join(loads)}; "
          f"seeds {args.seed}..{args.seed + args.runs - 1}; load average "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()), flush=True)
    results: list[Assertion] = []
    began = time.perf_counter()
    finished = False
    try:
        for index in range(args.runs):
            for load in loads:
                start, first = time.perf_counter(), len(results)
                seed = args.seed + index
                if load == "loaded":
                    with busy_loops(args.load) as procs:
                        pids = " ".join(str(p.pid) for p in procs)
                        one_run(cases, seed, load, args, results)
                    note = f", busy loops {pids} stopped"
                else:
                    one_run(cases, seed, load, args, results)
                    note = ""
                done = results[first:]
                print(f"run {index + 1}/{args.runs} {load:6} seed {seed}: {counts(done)} (failed/inconclusive/passed) "
                      f"in {time.perf_counter() - start:.0f} s, load average {os.getloadavg()[0]:.2f}{note}",
                      flush=True)
                if args.json:
                    write_json(args.json, args, results, finished=False)
        finished = True
    except KeyboardInterrupt:
        print("\ninterrupted: the results so far", file=sys.stderr)
    print(f"\n{len(results)} assertions in {time.perf_counter() - began:.0f} s "
          f"(f/i/p: failed / inconclusive, passed with a warning / passed)\n")
    print_table(results, cases)
    print_problems(results)
    print_totals(results, loads)
    if args.json:
        write_json(args.json, args, results, finished)
        print(f"\noutcomes written to {args.json}")
    return 0 if finished else 130


if __name__ == "__main__":
    sys.exit(main())
