"""The sort scenario with Google Benchmark: one benchmark, BM_Sort over n = 64..4096, compiled once with merge sort
(the baseline) and once with bubble sort (the candidate). scalecheck must model bubble sort as n^2 and merge sort
as n log n (or a neighbouring class), fail the check of bubble sort against merge sort naming BM_Sort, and pass a
second merge sort run against the first.

The models have one term (--max-terms 1): a sort's cost is one term, and with a second one the
search can add a term worth a few per cent at the largest size (a few per cent of noise there) that then names the
growth, say n log n + 1e-12 n^(3/2) log n for merge sort."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from scalecheck.cli import OK, REGRESSION, main
from tests.conftest import missing_tool
from tests.tools.classes import BUBBLE_ORDERS, MERGE_ORDERS

SORTS = Path(__file__).parent / "sorts"
ALGORITHMS: dict[str, list[str]] = {"merge": [], "bubble": ["-DSORT_BUBBLE"]}  # compiler flags choosing the sort

pytestmark = pytest.mark.wall_clock


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The benchmark program compiled with each sort."""
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        missing_tool("no C++ compiler (g++): apt-get install g++")
    assert compiler is not None
    folder = tmp_path_factory.mktemp("google-benchmark-sorts")
    built = {}
    for algorithm, flags in ALGORITHMS.items():
        program = folder / f"sort_{algorithm}"
        done = subprocess.run([compiler, "-O2", *flags, str(SORTS / "sort_benchmark.cc"), "-o", str(program),
                               "-lbenchmark", "-lpthread"], capture_output=True, text=True, timeout=120)
        if done.returncode != 0 and ("benchmark/benchmark.h" in done.stderr or "lbenchmark" in done.stderr):
            missing_tool("Google Benchmark is missing: apt-get install libbenchmark-dev")
        assert done.returncode == 0, done.stderr
        built[algorithm] = program
    return built


def measure(program: Path, out: Path) -> Path:
    """Run the benchmark with three repetitions of at least 20 ms of CPU time each, writing Google Benchmark's JSON to
    `out`. The repetitions of all sizes run in random order, so that a burst of load on the machine spreads over the
    sizes instead of raising the three repetitions of one."""
    subprocess.run([str(program), "--benchmark_repetitions=3", "--benchmark_enable_random_interleaving=true",
                    "--benchmark_min_time=0.02", f"--benchmark_out={out}", "--benchmark_out_format=json"], check=True,
                   capture_output=True, timeout=120)
    return out


def lead_orders(models_json: Path) -> dict[str, tuple[float, float]]:
    """metric -> (exponent, log exponent) of the fastest-growing term of BM_Sort's model ((0, 0): a constant)."""
    leads = {}
    for model in json.loads(models_json.read_text())["models"]:
        assert model["kernel"] == "BM_Sort" and model["status"] == "ok", model
        factors = [factor for term in model["terms"] for factor in term["factors"]]
        leads[model["metric"]] = max(((float(f["exponent"]), float(f["log_exponent"])) for f in factors),
                                     default=(0.0, 0.0))
    return leads


def test_model_finds_n_squared_for_bubble_sort_and_n_log_n_for_merge_sort(
        programs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for algorithm, orders in (("bubble", BUBBLE_ORDERS), ("merge", MERGE_ORDERS)):
        measured = measure(programs[algorithm], tmp_path / f"{algorithm}.json")
        models = tmp_path / f"{algorithm}-models.json"
        assert main(["model", str(measured), "--max-terms", "1", "--json", str(models)]) == OK
        leads = lead_orders(models)
        assert set(leads) == {"cpu_time", "real_time"}
        # the CPU time is the sort's own; the real time also holds what other processes on a loaded machine took
        assert leads["cpu_time"] in orders, (algorithm, leads)
        # Google Benchmark's own estimate stands beside the model
        expected = "O(N^2)" if algorithm == "bubble" else "O(N log N)"
        assert f"BM_Sort [cpu_time]: Google Benchmark: {expected}, coefficient " in capsys.readouterr().out


def test_check_fails_bubble_sort_against_merge_sort_and_passes_merge_sort_again(
        programs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    merge = measure(programs["merge"], tmp_path / "merge.json")
    bubble = measure(programs["bubble"], tmp_path / "bubble.json")
    again = measure(programs["merge"], tmp_path / "merge-again.json")
    verdict = tmp_path / "verdict.json"
    status = main(["check", str(bubble), "--baseline", str(merge), "--json", str(verdict)])
    out = capsys.readouterr().out
    assert status == REGRESSION, out
    assert out.startswith("FAIL: ") and "BM_Sort" in out
    errors = [f for f in json.loads(verdict.read_text())["findings"] if f["severity"] == "error"]
    assert {f["kernel"] for f in errors} == {"BM_Sort"} and "cpu_time" in {f["metric"] for f in errors}
    assert {f["kind"] for f in errors} <= {"growth", "prediction"}
    assert main(["check", str(again), "--baseline", str(merge)]) == OK, capsys.readouterr().out
