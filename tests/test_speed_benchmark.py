"""benchmarks/speed.py: one quick run prints both tables, every requested row with its columns, a target per row and
positive peak-memory figures (no timing is asserted; Extra-P is left out, so its column says it is not installed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEED = ROOT / "benchmarks" / "speed.py"
MEMORY = re.compile(r"(\d[\d,]*(?:\.\d+)?) (KB|MB|GB)\b")

pytestmark = pytest.mark.wall_clock  # the benchmark times its children and kills them after a timeout


def _tables(stdout: str) -> list[list[list[str]]]:
    """The Markdown tables in `stdout`: per table, its rows (header first, separator left out) as lists of cells."""
    tables: list[list[list[str]]] = []
    previous = ""
    for line in stdout.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                tables.append([])
            if not line.startswith("|---"):
                tables[-1].append([cell.strip() for cell in line.strip().strip("|").split("|")])
        previous = line
    return tables


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The output of `speed.py --quick` on a few rows of both tables, without Extra-P."""
    env = dict(os.environ, SCALECHECK_EXTRAP=str(tmp_path_factory.mktemp("none") / "extrap"))  # not an executable
    done = subprocess.run([sys.executable, str(SPEED), "--quick", "--repeat", "1", "--seed", "3",
                           "--rows", "single,startup,memory,check,html"],
                          capture_output=True, text=True, env=env, cwd=tmp_path_factory.mktemp("run"), timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def test_speed_prints_the_extrap_table_without_extrap(quick_run: str) -> None:
    header, *rows = _tables(quick_run)[0]
    assert header == ["work", "scalecheck", "Extra-P", "ratio", "target"]
    assert [row[0] for row in rows] == ["`model`, 100 kernels, 1 parameter, 5 points x 5 repetitions"]
    (row,) = rows
    assert row[2:] == ["not installed", "-", ">= 30x: not measured"]
    assert MEMORY.search(row[1])
    assert "Extra-P not installed" in quick_run


def test_speed_prints_scalecheck_rows_with_targets_and_positive_memory(quick_run: str) -> None:
    header, *rows = _tables(quick_run)[1]
    assert header == ["work", "scalecheck", "target"]
    labels = [row[0] for row in rows]
    assert not [row for row in rows if "not measured" in row[2]], quick_run  # every child ran to its end
    assert labels == [
        "fixed start-up: `scalecheck model` of a 1-kernel file (3 runs)",
        "floor: `python -c \"import numpy\"`",
        "memory per kernel, 5 points, 1 parameter, 5 repetitions (`scalecheck model FILE`)",
        "memory per kernel, 8 points, 1 parameter, 5 repetitions (`scalecheck model FILE`)",
        "`scalecheck check` of 100 kernels at 8 points, bootstrap 200 (5% of the growing kernels regressed)",
        "`scalecheck check --html` of 100 kernels: share of the run writing the report (CPU)",
    ]
    targets = [row[2] for row in rows]
    assert re.fullmatch(r"<= 0\.25 s: (met|MISSED)", targets[0])
    assert targets[1] == "-"
    assert all(re.fullmatch(r"<= 20 KB/kernel: (met|MISSED)", t) for t in targets[2:4])
    assert re.fullmatch(r"<= 3 s: (met|MISSED)", targets[4])
    assert re.fullmatch(r"<= 25%: (met|MISSED)", targets[5])
    for row in rows:
        figures = [float(number.replace(",", "")) for number, _ in MEMORY.findall(row[1])]
        assert figures and all(f > 0 for f in figures), row
    for row in rows[2:4]:
        assert re.match(r"\*\*\d+(\.\d+)? (KB|MB)/kernel\*\* from 200 and 1,000 kernels", row[1]), row
