"""A user's first steps, as the README gives them: `pip install .` (no pytest), the first command, the examples, a
mistyped flag. A missing tool is a one-line error naming what to install, never verdicts from nothing; the first
command's outputs leave `git status` clean; a mistyped flag or subcommand names the closest one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from scalecheck.cli import USAGE_ERROR, main

ROOT = Path(__file__).resolve().parents[1]
RUN_SH = ROOT / "examples" / "python-project" / "run.sh"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def run_example(work: Path, path: list[Path], **env: str) -> subprocess.CompletedProcess[str]:
    """bash examples/python-project/run.sh WORK, as the README says, with `path` first on PATH."""
    base = {key: value for key, value in os.environ.items() if key not in ("PYTHON", "PYTEST_ADDOPTS")}
    search = os.pathsep.join([*map(str, path), os.environ.get("PATH", "")])
    return subprocess.run(["bash", str(RUN_SH), str(work)], cwd=ROOT, env={**base, "PATH": search, **env},
                          capture_output=True, text=True, timeout=120, check=False)


@needs_git
def test_python_project_without_pytest_says_what_to_install(tmp_path: Path) -> None:
    # `python3 -m venv .venv && . .venv/bin/activate && pip install .` gives scalecheck and a python3 without pytest
    bare = tmp_path / "venv"
    venv.create(bare, with_pip=False)
    python3 = bare / "bin" / "python3"
    work = tmp_path / "demo"
    done = run_example(work, [bare / "bin", Path(sys.executable).parent])
    assert done.returncode == USAGE_ERROR, done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr == (f"run.sh: error: python3 cannot import pytest, which measures every commit; fix: pip "
                           f"install pytest (into the environment of {python3})\n")
    assert not work.exists()  # stopped before anything was built


@needs_git
def test_python_project_stops_when_pytest_cannot_run(tmp_path: Path) -> None:
    # pytest present, but it cannot run the tests (here: a flag it does not know): no verdict is printed
    work = tmp_path / "demo"
    done = run_example(work, [Path(sys.executable).parent], PYTHON=sys.executable,
                       PYTEST_ADDOPTS="--no-such-flag-4711")
    assert done.returncode == USAGE_ERROR, done.stdout + done.stderr
    assert "verdicts" not in done.stdout and "PASS" not in done.stdout and "pytest: passed" not in done.stdout
    [line] = done.stderr.splitlines()
    assert line.startswith("run.sh: error: the check of ")
    assert " stopped with exit status 2: pytest stopped with exit status 4 (its output: " in line
    assert line.endswith(".samejob.txt")


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout")
def test_the_first_commands_outputs_are_ignored() -> None:
    # the README's first command writes models.json and models.html in the clone's root
    names = ["models.json", "models.html", "demo-run/results/x.check.txt"]
    done = subprocess.run(["git", "check-ignore", "--no-index", *names], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    assert done.stdout.splitlines() == names
    ignored = subprocess.run(["git", "ls-files", "--cached", "--ignored", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True)
    assert ignored.stdout == ""  # no file of the project itself is ignored
    done = subprocess.run(["git", "check-ignore", "--no-index", "examples/models.json", "docs/models.html"],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.stdout == ""  # only the root's: a file of that name elsewhere is the project's


@pytest.mark.parametrize(("argv", "line"), [
    (["check", "--treshold", "0.2"], "unrecognized arguments: --treshold; fix: did you mean '--threshold'?"),
    (["check", "--tresh=0.2", "x.json"], "unrecognized arguments: --tresh=0.2; fix: did you mean '--threshold'?"),
    (["model", "m.txt", "--targte", "p=64", "--jsn", "out.json"],
     "unrecognized arguments: --targte p=64 --jsn out.json; fix: did you mean '--target' for '--targte', '--json' "
     "for '--jsn'?"),
    (["--verison"], "unrecognized arguments: --verison; fix: did you mean '--version'?"),
    (["ci", "results.json"], "unrecognized arguments: results.json; fix: see scalecheck ci --help"),
    (["chek"], "argument COMMAND: invalid choice: 'chek' (choose from 'model', 'check', 'record', 'history', "
               "'comment', 'cluster', 'overhead', 'measure', 'ci'); fix: did you mean 'check'?"),
    (["model", "m.txt", "--format", "cvs"], "argument --format: invalid choice: 'cvs' (choose from 'scalecheck-json', "
                                            "'jsonl', 'csv', 'extrap-text', 'extrap-json', 'talpas', "
                                            "'pytest-benchmark', 'google-benchmark', 'hyperfine', 'asv', 'cube', "
                                            "'extrap-experiment'); fix: did you mean 'csv'?"),
    (["model"], "the following arguments are required: FILE; fix: see scalecheck model --help"),
], ids=["flag", "flag_with_value", "two_flags", "top_level_flag", "no_close_flag", "subcommand", "choice",
        "missing_argument"])
def test_a_mistyped_argument_is_one_line_with_the_closest(argv: list[str], line: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == USAGE_ERROR
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"scalecheck: error: {line}\n")


def test_a_mistyped_flag_of_the_installed_command(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "scalecheck", "check", "--treshold", "0.2"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (USAGE_ERROR, "")
    assert done.stderr == "scalecheck: error: unrecognized arguments: --treshold; fix: did you mean '--threshold'?\n"
