"""The runnable examples (examples/<name>/run.sh) run end to end, and say what their READMEs say they do.

The scripts call `scalecheck` from PATH, as a user would; here it is the console script installed beside the
interpreter running the tests (pip install '.[test]' in CI, the editable install in development).
The c-kernel example needs a C compiler, and the shellcheck test shellcheck: without its tool a test skips, unless
SCALECHECK_REQUIRE_TOOLS=1 (as in CI), where it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from .conftest import missing_tool

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SIZES = (1000, 2000, 4000, 8000, 16000)  # the c-kernel run takes about a second at these sizes


def run_example(name: str, out: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run examples/<name>/run.sh OUT with bash, from an unrelated working directory, with scalecheck on PATH."""
    scripts = [str(Path(sys.executable).parent), sysconfig.get_path("scripts")]
    path = os.pathsep.join([*scripts, os.environ.get("PATH", "")])
    if shutil.which("scalecheck", path=path) is None:
        pytest.fail(f"no scalecheck script beside {sys.executable}: pip install -e '.[test]'", pytrace=False)
    done = subprocess.run(["bash", str(EXAMPLES / name / "run.sh"), str(out)], cwd=out.parent,
                          env={**os.environ, "PATH": path, **env}, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, f"run.sh exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def models_by_name(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """The models of a `scalecheck model --json` file by (kernel, metric)."""
    return {(m["kernel"], m["metric"]): m for m in json.loads(path.read_text(encoding="utf-8"))["models"]}


def lead_exponent(model: dict[str, Any]) -> tuple[float, float]:
    """(polynomial, logarithm) exponent of the fastest-growing term of a single-parameter model."""
    return max(((f["exponent"], f["log_exponent"]) for t in model["terms"] for f in t["factors"]), default=(0, 0))


def test_mpi_collectives_models_every_collective_whole(tmp_path: Path) -> None:
    """As the README says: 14 kernels of 5 rank counts, too few for the change-point search, so none is
    segmented; the ranking's top is OpenMPI->MPI_Bcast with p^3 * log2(p)."""
    out = tmp_path / "out"
    done = run_example("mpi-collectives", out)
    models = models_by_name(out / "models.json")
    assert len(models) == 14
    assert {m["points"] for m in models.values()} == {5}
    assert [k for k, m in models.items() if m["segmented"] or m["change_point"] or m["segments"]] == []
    assert "segmented:" not in done.stdout
    top = done.stdout.splitlines()[2].split()
    assert top[0] == "OpenMPI->MPI_Bcast"
    assert models["OpenMPI->MPI_Bcast", "time"]["growth"] == "p^3 * log2(p)"
    assert (out / "models.html").stat().st_size > 0


@pytest.fixture(scope="module")
def c_kernel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder of one c-kernel run at small sizes, 3 repetitions."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        missing_tool("no C compiler (cc or gcc): apt-get install gcc")
    out = tmp_path_factory.mktemp("c-kernel") / "out"
    run_example("c-kernel", out, SIZES=",".join(map(str, SIZES)), REPEAT="3")
    return out


@pytest.mark.wall_clock
def test_c_kernel_measures_both_kernels_and_the_wall_time(c_kernel: Path) -> None:
    document = json.loads((c_kernel / "measurements.json").read_text(encoding="utf-8"))
    series = {(m["kernel"], m["metric"], m["point"]["n"]): m["values"] for m in document["measurements"]}
    expected = {("wall", "time"), ("sort", "time"), ("sort", "comparisons"),
                ("count_duplicates", "time"), ("count_duplicates", "comparisons")}
    assert {(kernel, metric) for kernel, metric, _ in series} == expected
    assert all(len(values) == 3 for values in series.values())
    for n in SIZES:  # the nested loop compares every pair once, at every run
        assert series["count_duplicates", "comparisons", n] == [n * (n - 1) / 2] * 3
        assert all(value > 0 for value in series["sort", "time", n])


@pytest.mark.wall_clock
def test_c_kernel_models_find_the_quadratic_kernel(c_kernel: Path) -> None:
    """The comparison counts do not depend on the machine's load, so their models are certain: n^2 for the
    nested loop, less for qsort. The time models, noisier, still put the nested loop far above the sort at the
    target n = 1,000,000."""
    models = models_by_name(c_kernel / "models.json")
    assert models["count_duplicates", "comparisons"]["growth"] == "n^2"
    assert lead_exponent(models["sort", "comparisons"])[0] < 2
    assert all(models[kernel, "time"]["status"] == "ok" for kernel in ("wall", "sort", "count_duplicates"))
    assert models["count_duplicates", "time"]["prediction"] > 100 * models["sort", "time"]["prediction"]


def test_run_scripts_pass_shellcheck() -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        missing_tool("shellcheck is missing: apt-get install -y shellcheck")
    scripts = sorted(str(path) for path in EXAMPLES.glob("*/run.sh"))
    assert scripts
    done = subprocess.run([str(shellcheck), "--norc", "--format=gcc", *scripts], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
