"""The use cases that need no git history run where gitpython (or git itself) is missing: the store loads lazily."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import sys
from pathlib import Path
sys.modules["git"] = None  # any `import git` now raises ImportError
import scalecheck.api as api
from scalecheck.config import Config

table = api.fit_models(["examples/mpi_data_mean.txt"], target={"p": 65536})
result = api.check(["examples/check/candidate.json"], "examples/check/baseline.json",
                   Config(root=Path(".")).with_overrides(bootstrap=20))
print(len(table.models), result.verdict.failed, "scalecheck.history.store" in sys.modules)
"""


def test_fit_models_and_a_check_of_files_run_without_git() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    models, failed, store_loaded = done.stdout.split()
    assert int(models) > 0 and failed in ("True", "False") and store_loaded == "False"
