"""`scalecheck check --same-job`: both commits measured in this job, in ABBA rounds, then checked.

Real git repositories in tmp_path hold a module `src/walk.py` whose function counts its steps, and a script
`bench/run.py` that writes the exact step counts at n = 2, 4, ..., 256 as scalecheck JSON, so that every verdict is
deterministic. The script also appends what it saw (side, round, environment, arguments, folder, the module it
imported) to a log file outside the repository, as one JSON object per line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from scalecheck.cli import OK, REGRESSION, USAGE_ERROR, main

from .history.conftest import GitRepo, git_repo  # noqa: F401 - git_repo is the fixture

LINEAR = """\
def steps(n):
    count = 0
    for i in range(n):
        count += 1
    return count
"""
RENAMED = """\
def steps(n):
    total = 0
    for _ in range(n):
        total += 1
    return total
"""
QUADRATIC = """\
def steps(n):
    count = 0
    for i in range(n):
        for j in range(n):
            count += 1
    return count
"""
RUN_PY = """\
import json
import os
import signal
import sys

import walk

out = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else os.environ["SCALECHECK_OUTPUT"]
log = os.environ.get("SAMEJOB_LOG")
if log:
    names = ("SIDE", "ROUND", "ROUNDS", "COMMIT", "OUTPUT")
    seen = {name.lower(): os.environ.get("SCALECHECK_" + name) for name in names}
    seen.update(argv=sys.argv[1:], cwd=os.getcwd(), walk=walk.__file__, pythonpath=os.environ.get("PYTHONPATH"))
    with open(log, "a", encoding="utf-8") as stream:
        stream.write(json.dumps(seen) + "\\n")
mode = os.environ.get("SAMEJOB_MODE", "")
if mode == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
if mode == "interrupt":  # as Ctrl-C in a terminal: scalecheck gets SIGINT while the command runs
    os.kill(os.getppid(), signal.SIGINT)
    import time
    time.sleep(30)
if mode != "nothing":
    rows = [{"kernel": "walk.steps", "metric": "steps", "point": {"n": n}, "values": [walk.steps(n)]}
            for n in (2, 4, 8, 16, 32, 64, 128, 256)]
    doc = {"scalecheck": 1, "parameters": ["n"], "measurements": rows}
    with open(out, "w", encoding="utf-8") as stream:
        stream.write("{not json" if mode == "corrupt" else json.dumps(doc))
sys.exit(int(os.environ.get("SAMEJOB_EXIT", "0")))
"""
COMMAND = (sys.executable, "bench/run.py")
FAST = ("--bootstrap", "20")

MakeRepo = Callable[..., GitRepo]


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[dict[str, object]]]:
    """The runs bench/run.py logged, in order (the log file lies outside the repository)."""
    path = tmp_path / "runs.jsonl"
    monkeypatch.setenv("SAMEJOB_LOG", str(path))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    return lambda: [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def project(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch, change: str | None) -> GitRepo:
    """main: c1 (linear walk.steps, bench/run.py); with `change`, branch feature and its commit f1 checked out.
    The working folder is the repository's top."""
    operations: list[tuple[object, ...]] = [("commit", "c1", {"src/walk.py": LINEAR, "bench/run.py": RUN_PY})]
    if change is not None:
        operations += [("branch", "feature"), ("commit", "f1", {"src/walk.py": change})]
    repo = git_repo(operations)
    monkeypatch.chdir(repo.path)
    return repo


def same_job(capsys: pytest.CaptureFixture[str], *args: str, command: tuple[str, ...] = COMMAND
             ) -> tuple[int, str, str]:
    """main(["check", "--same-job", *args, "--", *command]) and what it printed: (exit status, stdout, stderr)."""
    code = main(["check", "--same-job", *FAST, *args, "--", *command])
    out, err = capsys.readouterr()
    return code, out, err


def user_error(result: tuple[int, str, str]) -> str:
    """Exit 2, no report, no traceback, and an error line with a fix line at the end of stderr (after any progress
    lines). Returns the error line without its prefix and its fix."""
    code, out, err = result
    assert code == USAGE_ERROR, (out, err)
    assert out == "" and "Traceback" not in err
    lines = err.splitlines()
    assert lines[-1].startswith("scalecheck: error: "), err
    head, _, fix = lines[-1].rpartition("; fix: ")
    assert head and fix, err
    assert all(line.startswith("scalecheck: round ") for line in lines[:-1]), err
    return head.removeprefix("scalecheck: error: ")


def worktrees(repo: GitRepo) -> list[str]:
    text = str(repo.repo.git.worktree("list", "--porcelain"))
    return [line for line in text.splitlines() if line.startswith("worktree ")]


# -- verdicts -----------------------------------------------------------------------------------------------------


def test_quadratic_commit_fails_and_names_the_kernel(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str], log) -> None:
    repo = project(git_repo, monkeypatch, QUADRATIC)
    code, out, err = same_job(capsys, "--baseline", "main")
    assert code == REGRESSION, err
    assert "walk.steps" in out and "growth" in out
    assert worktrees(repo) == [f"worktree {repo.path.resolve()}"]
    assert [line.split(":")[1] for line in err.splitlines()] == [
        " round 1 of 2, baseline (commit {})".format(repo.commits["c1"][:7]),
        " round 1 of 2, candidate (commit {})".format(repo.commits["f1"][:7]),
        " round 2 of 2, candidate (commit {})".format(repo.commits["f1"][:7]),
        " round 2 of 2, baseline (commit {})".format(repo.commits["c1"][:7])]


def test_rename_only_commit_passes(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str], log) -> None:
    project(git_repo, monkeypatch, RENAMED)
    code, out, err = same_job(capsys, "--baseline", "main")
    assert code == OK, (out, err)
    assert out.startswith("PASS")
    assert "warning" not in err


def test_candidate_is_the_working_tree_with_uncommitted_changes(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str], log) -> None:
    repo = project(git_repo, monkeypatch, None)  # HEAD is main itself: the merge-base is HEAD
    (repo.path / "src" / "walk.py").write_text(QUADRATIC)
    code, out, err = same_job(capsys, "--baseline", "main")
    assert code == REGRESSION, err
    assert "walk.steps" in out
    runs = log()
    assert {run["commit"] for run in runs} == {repo.commits["c1"]}  # the same commit on both sides (A/A)
    assert (repo.path / "src" / "walk.py").read_text() == QUADRATIC  # the working tree is left as it was


def test_a_a_run_of_a_clean_tree_passes(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str], log) -> None:
    project(git_repo, monkeypatch, None)
    code, out, err = same_job(capsys, "--baseline", "HEAD", "--rounds", "1")
    assert code == OK, err
    assert [run["side"] for run in log()] == ["baseline", "candidate"]


def test_json_report_says_both_sides_were_measured_in_this_job(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                               log) -> None:
    repo = project(git_repo, monkeypatch, QUADRATIC)
    report = tmp_path / "check.json"
    code, _, err = same_job(capsys, "--baseline", "main", "--rounds", "3", "--json", str(report))
    assert code == REGRESSION, err
    doc = json.loads(report.read_text())
    assert doc["verdict"] == "fail"
    assert [f["kernel"] for f in doc["findings"] if f["kind"] == "growth"] == ["walk.steps"]
    assert "3 rounds" in doc["same_job"]
    assert repo.commits["c1"][:7] in doc["baseline"]
    # three rounds: 3 repetitions per point on each side
    kernel = next(k for k in doc["kernels"] if k["kernel"] == "walk.steps")
    assert kernel["baseline"]["points"] == kernel["candidate"]["points"] == 8


def test_api_check_carries_the_same_job_record(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch, log) -> None:
    from scalecheck.api import check
    from scalecheck.config import load_config
    from scalecheck.samejob import measure_both

    repo = project(git_repo, monkeypatch, QUADRATIC)
    lines: list[str] = []
    candidate, baseline, info = measure_both(COMMAND, "main", rounds=2, cwd=repo.path, env=os.environ,
                                             progress=lines.append)
    assert (info.rounds, info.baseline_commit, info.candidate_commit) == (2, repo.commits["c1"], repo.commits["f1"])
    assert info.command.endswith("bench/run.py")
    assert len(lines) == 4
    assert candidate.series[0].values.shape == baseline.series[0].values.shape == (8, 2)  # rounds add repetitions
    assert baseline.series[0].values[-1].tolist() == [256, 256]
    assert candidate.series[0].values[-1].tolist() == [256 * 256] * 2
    assert candidate.series[0].rounds[-1].tolist() == baseline.series[0].rounds[-1].tolist() == [1, 2]
    result = check(candidate, baseline, load_config(None).with_overrides(bootstrap=20), same_job=info)
    assert result.verdict.failed
    assert result.context.same_job == info.text()


# -- how each run is made -----------------------------------------------------------------------------------------


def test_rounds_alternate_abba(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str], log) -> None:
    project(git_repo, monkeypatch, RENAMED)
    code, _, err = same_job(capsys, "--baseline", "main", "--rounds", "4")
    assert code == OK, err
    assert [(run["side"], run["round"]) for run in log()] == [
        ("baseline", "1"), ("candidate", "1"), ("candidate", "2"), ("baseline", "2"),
        ("baseline", "3"), ("candidate", "3"), ("candidate", "4"), ("baseline", "4")]


def test_placeholders_and_environment_of_each_run(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str], log) -> None:
    repo = project(git_repo, monkeypatch, RENAMED)
    command = (*COMMAND, "{out}", "{side}-{round}", "{n}", "{{out}}", "plain")
    code, _, err = same_job(capsys, "--baseline", "main", command=command)
    assert code == OK, err
    runs = log()
    assert len(runs) == 4
    folders = set()
    for run in runs:
        side, number = run["side"], run["round"]
        out = Path(str(run["output"]))
        folders.add(out.parent)
        assert out.name == f"{side}-{number}.json"
        # {n} is left for a nested `scalecheck measure`; only {out}, {round} and {side} are replaced
        assert run["argv"] == [str(out), f"{side}-{number}", "{n}", "{" + str(out) + "}", "plain"]
        assert run["rounds"] == "2"
        assert run["commit"] == repo.commits["c1" if side == "baseline" else "f1"]
        tree = Path(str(run["cwd"]))
        path = str(run["pythonpath"]).split(os.pathsep)
        assert path[:2] == [str(tree), str(tree / "src")]
        if side == "candidate":
            assert tree == repo.path.resolve() or tree == repo.path
        else:
            assert tree.name == "baseline" and tree.parent.name.startswith("scalecheck-baseline-")
    assert len(folders) == 1  # one private folder for the outputs ...
    folder = folders.pop()
    assert not folder.exists()  # ... removed afterwards
    assert not any(Path(str(run["cwd"])).exists() for run in runs if run["side"] == "baseline")


def test_baseline_imports_its_own_module_before_the_candidates(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str], log) -> None:
    """Like an editable install, PYTHONPATH puts the candidate's src first; the baseline must still measure its own
    code (else both sides measure the candidate and the quadratic commit passes)."""
    repo = project(git_repo, monkeypatch, QUADRATIC)
    monkeypatch.setenv("PYTHONPATH", str(repo.path.resolve() / "src"))
    code, out, err = same_job(capsys, "--baseline", "main")
    assert code == REGRESSION, (out, err)
    for run in log():
        tree = Path(str(run["cwd"]))
        assert Path(str(run["walk"])).resolve() == (tree / "src" / "walk.py").resolve()
        # the inherited entry last for the baseline, and not twice for the candidate
        inherited = [str(repo.path.resolve() / "src")] if run["side"] == "baseline" else []
        assert str(run["pythonpath"]).split(os.pathsep) == [str(tree), str(tree / "src"), *inherited]


def test_subfolder_runs_in_the_same_subfolder_of_the_worktree(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str], log) -> None:
    repo = project(git_repo, monkeypatch, QUADRATIC)
    monkeypatch.chdir(repo.path / "bench")
    code, out, err = same_job(capsys, "--baseline", "main", command=(sys.executable, "run.py"))
    assert code == REGRESSION, err
    for run in log():
        assert Path(str(run["cwd"])).name == "bench"


def test_pull_request_base_is_the_default_baseline(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str], log) -> None:
    repo = project(git_repo, monkeypatch, QUADRATIC)
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    code, out, err = same_job(capsys, "--no-github")
    assert code == REGRESSION, err
    assert {run["commit"] for run in log() if run["side"] == "baseline"} == {repo.commits["c1"]}


def test_progress_lines_escape_control_characters(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str], log) -> None:
    project(git_repo, monkeypatch, RENAMED)
    code, _, err = same_job(capsys, "--baseline", "main", "--rounds", "1", command=(*COMMAND, "-", "\x1b]0;x\x07"))
    assert code == OK, err
    assert "\x1b" not in err and "\x07" not in err
    assert err.count("\\x1b]0;x\\x07") == 2


def test_failing_run_that_wrote_measurements_is_a_warning(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], log) -> None:
    repo = project(git_repo, monkeypatch, QUADRATIC)
    monkeypatch.setenv("SAMEJOB_EXIT", "1")  # as pytest exits when a complexity assertion failed
    code, out, err = same_job(capsys, "--baseline", "main")
    assert code == REGRESSION, err
    assert "walk.steps" in out
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert warnings[0] == ("scalecheck: warning: the measurement command exited with status 1 in round 1 "
                           f"(baseline, commit {repo.commits['c1'][:7]}); using the measurements it wrote")
    assert len(warnings) == 4


# -- errors -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["0", "3"])
def test_command_that_writes_nothing(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str], log, status: str) -> None:
    repo = project(git_repo, monkeypatch, QUADRATIC)
    monkeypatch.setenv("SAMEJOB_MODE", "nothing")
    monkeypatch.setenv("SAMEJOB_EXIT", status)
    result = same_job(capsys, "--baseline", "main")
    line = user_error(result)
    output = Path(str(log()[0]["output"]))
    assert line == (f"the measurement command exited with status {status} in round 1 (baseline, commit "
                    f"{repo.commits['c1'][:7]}) and wrote no measurements to {output}")
    assert "{out}" in result[2] and "SCALECHECK_OUTPUT" in result[2]
    assert len(log()) == 1  # stopped at the first run
    assert worktrees(repo) == [f"worktree {repo.path.resolve()}"]
    assert not output.parent.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="signals are POSIX")
def test_command_killed_by_a_signal(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str], log) -> None:
    project(git_repo, monkeypatch, QUADRATIC)
    monkeypatch.setenv("SAMEJOB_MODE", "kill")
    assert "was killed by signal 9 (SIGKILL) in round 1 (baseline" in user_error(same_job(capsys, "--baseline",
                                                                                          "main"))


@pytest.mark.skipif(sys.platform == "win32", reason="signals are POSIX")
def test_ctrl_c_removes_the_worktree_and_exits_130(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str], log) -> None:
    repo = project(git_repo, monkeypatch, QUADRATIC)
    monkeypatch.setenv("SAMEJOB_MODE", "interrupt")
    code, out, err = same_job(capsys, "--baseline", "main")
    assert code == 130, err
    assert out == "" and "Traceback" not in err
    assert err.splitlines()[-1] == "scalecheck: interrupted; the baseline's worktree and the measurements were removed"
    assert worktrees(repo) == [f"worktree {repo.path.resolve()}"]
    assert not Path(str(log()[0]["cwd"])).exists() and not Path(str(log()[0]["output"])).parent.exists()


def test_unreadable_output_is_the_readers_error(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str], log) -> None:
    repo = project(git_repo, monkeypatch, QUADRATIC)
    monkeypatch.setenv("SAMEJOB_MODE", "corrupt")
    line = user_error(same_job(capsys, "--baseline", "main"))
    assert "baseline-1.json" in line
    assert line.endswith(f"(written by the measurement command in round 1 (baseline, commit "
                         f"{repo.commits['c1'][:7]}))")
    assert worktrees(repo) == [f"worktree {repo.path.resolve()}"]


def test_program_not_found(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str], log) -> None:
    repo = project(git_repo, monkeypatch, QUADRATIC)
    result = same_job(capsys, "--baseline", "main", command=("no-such-program-scalecheck", "x"))
    assert user_error(result) == ("cannot run the measurement command: 'no-such-program-scalecheck' is not found "
                                  "on PATH")
    assert "round" not in result[2]  # refused before anything was checked out or run
    assert worktrees(repo) == [f"worktree {repo.path.resolve()}"]


def test_pytest_not_installed_says_what_to_install(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str], tmp_path: Path, log) -> None:
    project(git_repo, monkeypatch, QUADRATIC)
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no pytest on it, as after `pip install .` alone
    result = same_job(capsys, "--baseline", "main", command=("pytest", "tests/perf", "--scalecheck-save", "{out}"))
    assert result[2] == ("scalecheck: error: cannot run the measurement command: 'pytest' is not found on PATH; fix: "
                         "install pytest where the command runs, with scalecheck for its plugin: pip install pytest "
                         "scalecheck (or your project's test extra), or activate the environment that has them\n")


def test_failed_command_that_wrote_nothing_points_at_its_error(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str], log) -> None:
    # `python -m pytest` without pytest installed: "No module named pytest", exit status 1, nothing written
    project(git_repo, monkeypatch, QUADRATIC)
    result = same_job(capsys, "--baseline", "main", command=(sys.executable, "-c", "import no_such_module_4711"))
    user_error(result)
    assert result[2].splitlines()[-1].split("; fix: ", 1)[1].startswith(
        "read the command's own error above (a missing tool? pytest --scalecheck-save needs pytest and scalecheck "
        "installed where it runs: pip install pytest scalecheck); if it ran, make the command write")


def test_script_the_baseline_does_not_have(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str], log) -> None:
    repo = project(git_repo, monkeypatch, QUADRATIC)
    script = repo.path / "bench" / "new.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    line = user_error(same_job(capsys, "--baseline", "main", command=("./bench/new.sh",)))
    assert line == (f"cannot run the measurement command './bench/new.sh' in round 1 (baseline, commit "
                    f"{repo.commits['c1'][:7]}): no such file")


def test_unknown_ref(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                     log) -> None:
    repo = project(git_repo, monkeypatch, QUADRATIC)
    assert "unknown git ref 'nosuch'" in user_error(same_job(capsys, "--baseline", "nosuch"))
    assert log() == []
    assert worktrees(repo) == [f"worktree {repo.path.resolve()}"]


def test_ref_starting_with_a_dash_is_refused(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str], log) -> None:
    project(git_repo, monkeypatch, QUADRATIC)
    assert "refusing the git ref '--exec=x'" in user_error(same_job(capsys, "--baseline=--exec=x"))
    assert log() == []


def test_baseline_file_is_refused(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str], log) -> None:
    repo = project(git_repo, monkeypatch, QUADRATIC)
    (repo.path / "old.json").write_text("{}")
    result = same_job(capsys, "--baseline", "old.json")
    assert user_error(result) == ("--same-job measures the baseline itself, so --baseline must be a git ref, not the "
                                  "measurement file 'old.json'")
    assert "--baseline origin/main" in result[2]
    assert log() == []


def test_no_baseline_outside_a_pull_request(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str], log) -> None:
    project(git_repo, monkeypatch, QUADRATIC)
    result = same_job(capsys)
    assert user_error(result).startswith("no baseline given")
    assert "--baseline origin/main" in result[2]


def test_same_job_without_a_command(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str], log) -> None:
    project(git_repo, monkeypatch, QUADRATIC)
    result = same_job(capsys, "--baseline", "main", command=())
    assert user_error(result) == "--same-job needs the measurement command after --"
    assert "-- pytest" in result[2]


@pytest.mark.parametrize("rounds", ["0", "-1"])
def test_rounds_must_be_at_least_one(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str], log, rounds: str) -> None:
    project(git_repo, monkeypatch, QUADRATIC)
    assert user_error(same_job(capsys, "--baseline", "main", f"--rounds={rounds}")) == \
        f"--rounds must be at least 1, got {rounds}"
    assert log() == []


def test_rounds_without_same_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["check", "a.json", "--baseline", "b.json", "--rounds", "3"])
    out, err = capsys.readouterr()
    assert user_error((code, out, err)) == "--rounds counts the rounds of --same-job"


def test_outside_a_git_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    result = same_job(capsys, "--baseline", "main")
    assert "not inside a git repository" in user_error(result)
    assert "--same-job" in result[2].splitlines()[-1]


def test_help_describes_same_job(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    assert "same-job mode" in out and "--rounds N" in out
    assert "SCALECHECK_OUTPUT" in out and "SCALECHECK_COMMIT" in out
    assert "scalecheck check --same-job --baseline origin/main -- pytest" in out


# -- the real program ---------------------------------------------------------------------------------------------


def test_python_m_scalecheck_same_job(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch, log) -> None:
    repo = project(git_repo, monkeypatch, QUADRATIC)
    env = {name: value for name, value in os.environ.items() if name != "SAMEJOB_LOG"}
    done = subprocess.run([sys.executable, "-m", "scalecheck", "check", "--same-job", "--baseline", "main", *FAST,
                           "--", *COMMAND], cwd=repo.path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == REGRESSION, done.stderr
    assert "walk.steps" in done.stdout
    assert [line.split(":")[1] for line in done.stderr.splitlines()] == [
        f" round {number} of 2, {side} (commit {repo.commits['c1' if side == 'baseline' else 'f1'][:7]})"
        for number, side in ((1, "baseline"), (1, "candidate"), (2, "candidate"), (2, "baseline"))]
    assert worktrees(repo) == [f"worktree {repo.path.resolve()}"]
