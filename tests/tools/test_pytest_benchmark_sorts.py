"""The sorting scenario with the real pytest-benchmark: the same test `test_sort` measures a pure-Python merge sort
(the baseline, twice) and a bubble sort (the candidate) over sizes; scalecheck models n log n and n^2 and fails the
check of the bubble sort against the merge sort, not that of the second merge sort run."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

from scalecheck.cli import OK, REGRESSION, main
from scalecheck.formats import read_measurements
from tests.conftest import missing_tool

# From 128 on: below it, the merge sort's calls (a cost linear in n) weigh so much against its merging (n log n) that
# the model search picks n^(3/4) * log2(n)^2 in about a third of the runs.
SIZES = (128, 256, 512, 1024, 2048)
# Rounds per size and pass, each one call on a fresh copy: a bubble sort of 2048 items takes about 80 ms, so it gets
# few; a merge sort takes 80 us to 1.8 ms and gets more, so that its mean is steady.
ROUNDS = {"bubble": 2, "merge": 10}
# The measurements must not bend with the load of a shared 2-core machine:
# - CPU time (pytest-benchmark's --benchmark-timer): under contention, wall time stretches a round longer than the
#   scheduler's time slice (the bubble sort of 512 items and more) and not a shorter one, which reads as a steeper
#   growth than n^2 (n^(5/2) in a third of the runs with wall time);
# - passes through the sizes (a conftest.py runs the session's tests PASSES times, in turn): a burst of load slows
#   every size a little instead of a few sizes a lot; pytest-benchmark writes a record per pass, scalecheck adds
#   their rounds up.
TIMER = "--benchmark-timer=time.process_time"
PASSES = 3
CONFTEST = f'''
    def pytest_collection_modifyitems(items):
        items[:] = items * {PASSES}
    '''
SESSION = f'''
    import os
    import random

    import pytest


    def bubble_sort(items):
        for end in range(len(items) - 1, 0, -1):
            for i in range(end):
                if items[i] > items[i + 1]:
                    items[i], items[i + 1] = items[i + 1], items[i]
        return items


    def merge_sort(items):
        if len(items) <= 1:
            return items
        middle = len(items) // 2
        left, right = merge_sort(items[:middle]), merge_sort(items[middle:])
        merged, i, j = [], 0, 0
        while i < len(left) and j < len(right):
            if left[i] <= right[j]:
                merged.append(left[i])
                i += 1
            else:
                merged.append(right[j])
                j += 1
        return merged + left[i:] + right[j:]


    SORT = {{"bubble": bubble_sort, "merge": merge_sort}}[os.environ["SORT"]]


    @pytest.mark.parametrize("n", {list(SIZES)})
    def test_sort(benchmark, n):
        # small ints: CPython keeps one object for each, side by side, so that no comparison waits for memory
        rng = random.Random(n)
        data = [rng.randrange(256) for _ in range(n)]
        rounds = {ROUNDS}[os.environ["SORT"]]
        result = benchmark.pedantic(SORT, setup=lambda: ((list(data),), {{}}), rounds=rounds)
        assert result == sorted(data)
    '''
KERNEL = "test_sorts.py::test_sort"


def measure(folder: Path, algorithm: str, out: str) -> None:
    """Run the real pytest-benchmark on SESSION with `algorithm` and write its JSON to folder/out."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SCALECHECK_"))} | {"SORT": algorithm}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:scalecheck",
                           "-p", "no:xdist", "-p", "benchmark", "test_sorts.py", TIMER, "--benchmark-json", out],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def lead(models: Path) -> tuple[Fraction, Fraction]:
    """(exponent of n, exponent of log2 n) of the lead term of the one model in a `scalecheck model --json` file."""
    (model,) = json.loads(models.read_text())["models"]
    assert model["status"] == "ok", model
    orders = [(Fraction(f["exponent"]), Fraction(f["log_exponent"])) for term in model["terms"]
              for f in term["factors"] if f["parameter"] == "n"]
    return max(orders, default=(Fraction(0), Fraction(0)))


def slope(order: tuple[Fraction, Fraction]) -> float:
    """How steeply n^i * log2(n)^j grows at the middle of the measured sizes: d ln f / d ln n = i + j / ln n.

    Classes are compared by this slope, so that "one neighbouring class" means a growth that the measured range can
    tell apart: n^(3/4) * log2(n)^2 grows between n and n * log2(n) there (slopes 1.07, 1.0 and 1.16 at n = 512),
    and the model search does pick it for a merge sort now and then."""
    i, j = order
    return float(i) + float(j) / math.log(math.sqrt(SIZES[0] * SIZES[-1]))


@pytest.mark.wall_clock
def test_pytest_benchmark_sorts_bubble_sort_regresses_from_merge_sort(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    try:
        import pytest_benchmark  # noqa: F401
    except ImportError:
        missing_tool("pytest-benchmark is not installed (pip install 'scalecheck[test]')")
    (tmp_path / "test_sorts.py").write_text(textwrap.dedent(SESSION), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # not scalecheck's settings
    (tmp_path / "conftest.py").write_text(textwrap.dedent(CONFTEST), encoding="utf-8")
    for algorithm, out in (("merge", "merge.json"), ("bubble", "bubble.json"), ("merge", "merge2.json")):
        measure(tmp_path, algorithm, out)
    monkeypatch.chdir(tmp_path)
    merge = read_measurements(tmp_path / "merge.json").series[0]  # the passes' records add up
    assert merge.points.ravel().tolist() == list(SIZES) and merge.values.shape == (5, PASSES * ROUNDS["merge"])

    assert main(["model", "bubble.json", "--json", "bubble-model.json"]) == OK
    assert main(["model", "merge.json", "--json", "merge-model.json"]) == OK
    # one neighbouring class either way: n^(7/4) .. n^(9/4) for n^2, and n .. n^(5/4) * log2(n) for n * log2(n)
    bubble, merge = lead(tmp_path / "bubble-model.json"), lead(tmp_path / "merge-model.json")
    assert slope((Fraction(7, 4), Fraction(0))) <= slope(bubble) <= slope((Fraction(9, 4), Fraction(0))), bubble
    assert slope((Fraction(1), Fraction(0))) <= slope(merge) <= slope((Fraction(5, 4), Fraction(1))), merge
    capsys.readouterr()

    assert main(["check", "bubble.json", "--baseline", "merge.json"]) == REGRESSION
    out = capsys.readouterr().out
    assert out.startswith("FAIL")
    growth = next(line for line in out.splitlines() if line.startswith("error ") and " growth " in line)
    assert growth.split()[:4] == ["error", "growth", KERNEL, "time"]

    assert main(["check", "merge2.json", "--baseline", "merge.json"]) == OK, capsys.readouterr().out
