"""`scalecheck model` loads what modeling needs and nothing else: not git, the comparison and its statistics, the
clustering, the overhead analysis or the HTML report (start-up time). `scalecheck.api` keeps offering the model use
case, and loads the other use cases' dependencies when they run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOT_FOR_MODELING = ("git", "scalecheck.api", "scalecheck.history.store", "scalecheck.core.compare",
                    "scalecheck.core.measured", "scalecheck.core.bootstrap", "scalecheck.core.pair",
                    "scalecheck.core.cluster", "scalecheck.core.overhead", "scalecheck.formats.calibration",
                    "scalecheck.formats.processes", "scalecheck.report.html_report", "scipy.stats", "scipy.special",
                    "jinja2", "matplotlib", "wcmatch", "numpy.ma", "secrets", "scalecheck.data.verdict", "traceback")


def loaded_after(code: str, candidates: tuple[str, ...]) -> list[str]:
    """Which of `candidates` a fresh interpreter has loaded after running `code` in the repository."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {candidates!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.splitlines()[-1]))


def test_model_command_loads_only_what_modeling_needs(tmp_path: Path) -> None:
    grid = tmp_path / "grid.txt"  # two parameters: the multi-parameter search too
    points = [(x, y) for x in (2, 4, 8, 16, 32) for y in (10, 20, 30, 40, 50)]
    grid.write_text("PARAMETER x\nPARAMETER y\nPOINTS " + " ".join(f"( {x} {y} )" for x, y in points)
                    + "\nREGION k\nMETRIC time\n" + "".join(f"DATA {3 + x * y} {3.1 + x * y}\n" for x, y in points))
    code = ("from scalecheck.cli import main\n"
            f"assert main(['model', 'examples/mpi_data_mean.txt', '--json', {str(tmp_path / 'm.json')!r}]) == 0\n"
            f"assert main(['model', {str(grid)!r}]) == 0")
    assert loaded_after(code, NOT_FOR_MODELING) == []


def test_api_loads_what_check_cluster_and_overhead_need_when_they_run() -> None:
    later = ("git", "scalecheck.core.compare", "scalecheck.core.measured", "scalecheck.core.overhead",
             "scalecheck.formats.calibration", "scalecheck.formats.processes", "scipy", "wcmatch")
    assert loaded_after("import scalecheck.api", later) == []


def test_api_offers_the_model_use_case() -> None:
    import scalecheck.api as api
    import scalecheck.modeling as modeling

    for name in ("BAND_RESAMPLES", "ModelResult", "check_target", "fit_models", "model", "model_plots",
                 "parse_target", "varying"):
        assert getattr(api, name) is getattr(modeling, name), name


def test_commands_compute_with_one_blas_thread_and_run_commands_with_the_users_environment(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    seen = tmp_path / "seen.txt"
    probe.write_text("import os, sys\n"
                     f"open({str(seen)!r}, 'a').write(os.environ.get('OPENBLAS_NUM_THREADS', 'unset') + '\\n')\n"
                     "print('{\"time\": 1.0}')\n")
    code = (f"import os, sys\nfrom scalecheck.cli import main\n"
            f"assert main(['model', 'examples/mpi_data_mean.txt']) == 0\n"
            f"assert main(['measure', '--param', 'n=1,2,4', '--repeat', '1', '--out', {str(tmp_path / 'm.json')!r},"
            f" '--', sys.executable, {str(probe)!r}, '{{n}}']) == 0\n"
            "threads = len(os.listdir('/proc/self/task')) if os.path.isdir('/proc/self/task') else 1\n"
            "print(threads, os.environ.get('OPENBLAS_NUM_THREADS', 'unset'))")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "1 unset"  # no BLAS thread beside the main one; the variable is gone
    assert set(seen.read_text().split()) == {"unset"}  # the measured command never saw it


def test_a_fresh_command_freezes_what_it_loaded_and_a_caller_of_main_is_left_as_it_is() -> None:
    probe = ("import gc, json\nfrom scalecheck.cli import main\n"
             "assert main(['model', 'examples/mpi_data_mean.txt']) == 0\nprint(json.dumps(gc.get_freeze_count()))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) > 10_000  # numpy's, scipy's and scalecheck's objects
    loaded = "import numpy\n" + probe  # numpy loaded first: the caller's process, not frozen
    done = subprocess.run([sys.executable, "-c", loaded], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == 0
