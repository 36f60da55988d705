"""The sort scenario with hyperfine: one program, `./sort N`, built once with merge sort (the baseline) and once with
bubble sort (the candidate), each in its own folder, and timed by hyperfine with -L (a list of sizes) and with
--parameter-scan. scalecheck must model bubble sort as n^2 and merge sort as n log n (or a neighbouring class), fail
the check of bubble sort against merge sort naming the kernel `./sort {n}`, and pass a second merge sort run against
the first. Models and checks use the CPU time (user + system), which load on the machine does not inflate, and the
models have one term (--max-terms 1; see test_google_benchmark_sorts).

Bubble sort is timed at n = 2,000..16,000, where it takes 2 to 100 ms a run. Merge sort takes under 2 ms there,
little more than starting a process, so its scan goes on to a million (70 ms), where the sort itself dominates; the
check compares the two where both were measured."""

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
BUBBLE_SIZES = [round(2000 * 2 ** (k / 2)) for k in range(7)]  # 2,000 .. 16,000
MERGE_SIZES = [round(2000 * 2 ** (k / 2)) for k in range(19)]  # 2,000 .. 1,024,000
KERNEL = "./sort {n}"

pytestmark = pytest.mark.wall_clock


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A folder per sort holding the program `sort`, so that both runs time the same command, `./sort {n}`."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        missing_tool("no C compiler (cc or gcc): apt-get install gcc")
    if shutil.which("hyperfine") is None:
        missing_tool("hyperfine is missing: apt-get install hyperfine (or cargo install hyperfine)")
    assert compiler is not None
    folders = {}
    for algorithm, flags in ALGORITHMS.items():
        folder = tmp_path_factory.mktemp(algorithm)
        subprocess.run([compiler, "-O2", *flags, str(SORTS / "sort.c"), "-o", str(folder / "sort")], check=True,
                       capture_output=True, timeout=120)
        folders[algorithm] = folder
    return folders


def hyperfine(folder: Path, out: Path, *scan: str, runs: int = 5) -> Path:
    """Time `./sort {n}` in `folder` over the sizes that `scan` gives, writing hyperfine's JSON to `out`."""
    hyperfine_path = shutil.which("hyperfine")
    assert hyperfine_path is not None
    subprocess.run([hyperfine_path, "--shell=none", "--style", "none", "--warmup", "1", "--runs", str(runs), *scan,
                    "./sort {n}", "--export-json", str(out)], cwd=folder, check=True, capture_output=True,
                   timeout=120)
    return out


def merge_sort(builds: dict[str, Path], out: Path) -> Path:
    return hyperfine(builds["merge"], out, "-L", "n", ",".join(map(str, MERGE_SIZES)))


def bubble_sort(builds: dict[str, Path], out: Path) -> Path:
    return hyperfine(builds["bubble"], out, "-L", "n", ",".join(map(str, BUBBLE_SIZES)), runs=3)


def lead_orders(models_json: Path) -> dict[str, tuple[float, float]]:
    """metric -> (exponent, log exponent) of the fastest-growing term of the kernel's model ((0, 0): a constant)."""
    leads = {}
    for model in json.loads(models_json.read_text())["models"]:
        assert model["kernel"] == KERNEL and model["status"] == "ok", model
        factors = [factor for term in model["terms"] for factor in term["factors"]]
        leads[model["metric"]] = max(((float(f["exponent"]), float(f["log_exponent"])) for f in factors),
                                     default=(0.0, 0.0))
    return leads


def test_model_finds_n_squared_for_bubble_sort_and_n_log_n_for_merge_sort(builds: dict[str, Path],
                                                                           tmp_path: Path) -> None:
    measured = {"bubble": bubble_sort(builds, tmp_path / "bubble.json"),
                "merge": merge_sort(builds, tmp_path / "merge.json")}
    for algorithm, orders in (("bubble", BUBBLE_ORDERS), ("merge", MERGE_ORDERS)):
        models = tmp_path / f"{algorithm}-models.json"
        assert main(["model", str(measured[algorithm]), "--max-terms", "1", "--json", str(models)]) == OK
        leads = lead_orders(models)
        assert set(leads) == {"time", "cpu_time"}
        # the CPU time (user + system) is the command's own; the wall-clock time also holds what other processes
        # on a loaded machine took
        assert leads["cpu_time"] in orders, (algorithm, leads)


def test_a_parameter_scan_reads_like_a_list(builds: dict[str, Path], tmp_path: Path) -> None:
    measured = hyperfine(builds["bubble"], tmp_path / "scan.json", "--parameter-scan", "n", "2000", "8000", "-D",
                         "2000", runs=2)
    models = tmp_path / "models.json"
    assert main(["model", str(measured), "--json", str(models)]) == OK
    assert {(m["kernel"], m["metric"], m["points"]) for m in json.loads(models.read_text())["models"]} == {
        (KERNEL, "time", 4), (KERNEL, "cpu_time", 4)}


def test_check_fails_bubble_sort_against_merge_sort_and_passes_merge_sort_again(
        builds: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    merge = merge_sort(builds, tmp_path / "merge.json")
    bubble = bubble_sort(builds, tmp_path / "bubble.json")
    again = merge_sort(builds, tmp_path / "merge-again.json")
    verdict = tmp_path / "verdict.json"
    # the CPU time: a process's wall-clock time on a loaded machine (a test worker beside this one) also holds what
    # the other processes took, in bursts that can bend one run's curve
    status = main(["check", str(bubble), "--baseline", str(merge), "--metric", "cpu_time", "--json", str(verdict)])
    out = capsys.readouterr().out
    assert status == REGRESSION, out
    assert out.startswith("FAIL: ") and KERNEL in out
    errors = [f for f in json.loads(verdict.read_text())["findings"] if f["severity"] == "error"]
    assert {(f["kernel"], f["metric"]) for f in errors} == {(KERNEL, "cpu_time")}
    assert {f["kind"] for f in errors} <= {"growth", "prediction"}
    assert main(["check", str(again), "--baseline", str(merge), "--metric", "cpu_time"]) == OK, \
        capsys.readouterr().out
