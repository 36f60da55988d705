"""examples/python-project end to end: four commits, the third quadratic; the same-job check of each commit against
its parent fails on it alone."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "python-project"


@pytest.mark.wall_clock
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_check_fails_on_the_quadratic_commit_only(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHON": sys.executable, "SIZES": "1000,2000,4000,8000,16000"}
    work = tmp_path / "run"
    done = subprocess.run(["bash", str(EXAMPLE / "run.sh"), str(work)], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verdicts (exit status of each check, commits 2-4): 0 1 0" in done.stdout
    commits = subprocess.run(["git", "-C", str(work / "repo"), "rev-list", "--reverse", "main"],
                             capture_output=True, text=True, check=True).stdout.split()
    assert len(commits) == 4
    bad = (work / "results" / f"{commits[2]}.check.txt").read_text()
    assert bad.startswith("FAIL: ")
    # the kernel is named with its new growth: as a growth finding or, when the timings leave the growth test short
    # of significance, a prediction finding; either row shows the candidate's model class
    growth = re.search(r"^error +(?:growth|prediction) +tests/test_scaling.py::test_distinct_scales +time "
                       r"+(\S+(?: \* \S+)?) +(\S+)", bad, re.MULTILINE)
    assert growth is not None, bad
    new = re.fullmatch(r"n\^(?:(\d+)|\((\d+)/(\d+)\))(?: \* log2\(n\)(?:\^\d+)?)?", growth.group(2))
    assert new is not None, growth.group(2)  # the new growth, named: at least n^(3/2) (n^2 measured under load
    exponent = int(new[1]) if new[1] else int(new[2]) / int(new[3])  # can read as n^(7/4))
    assert exponent >= 1.5, growth.group(2)
    assert "both sides measured in this job, 2 rounds" in bad
    assert re.search(r"^error +(growth|prediction) +wordcount.distinct ", bad, re.MULTILINE), bad
    for good in (commits[1], commits[3]):
        assert (work / "results" / f"{good}.check.txt").read_text().startswith("PASS: ")
    html = (work / "results" / f"report-{commits[2][:7]}.html").read_text()
    assert "wordcount.distinct" in html and "FAIL" in html
    assert "grows as n^" in (work / "results" / f"{commits[2]}.pytest.txt").read_text()
