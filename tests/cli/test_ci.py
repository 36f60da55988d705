"""`scalecheck ci` driven through main(["ci"]) with its inputs in the environment, and the data branch's remote
(`scalecheck.history.remote`) with temporary git repositories.

The orchestration tests replace the commands `ci` runs in-process (`_scalecheck`) by a fake that records their
arguments, so that the arguments, outputs, comment modes and exit statuses are checked without fitting a model;
the record tests run the real `scalecheck record` and git. tests/test_action.py runs the action's step end to end.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from scalecheck.cli import OK, REGRESSION, USAGE_ERROR, ci, main
from scalecheck.errors import ConfigError
from scalecheck.history.remote import DataRemote, PushResult

from ..test_action import parse_output_file

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "check"
# the action's defaults, as its `env:` passes them
DEFAULTS = {"INPUT_COMMAND": "", "INPUT_ROUNDS": "2", "INPUT_MEASUREMENTS": "", "INPUT_BASELINE": "",
            "INPUT_MISSING_BASELINE": "", "INPUT_CONFIG": "", "INPUT_COMMENT": "on-regression",
            "INPUT_DATA_BRANCH": "scalecheck-data", "INPUT_RECORD": "true", "INPUT_FAIL": "true",
            "INPUT_COMMENT_KEY": "default"}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


@dataclass(frozen=True)
class Job:
    """The files a step of a job gets."""

    output: Path  # GITHUB_OUTPUT
    summary: Path  # GITHUB_STEP_SUMMARY
    temp: Path  # RUNNER_TEMP

    def outputs(self) -> dict[str, str]:
        """GITHUB_OUTPUT's values (what write_outputs writes); a later value wins, as on GitHub."""
        return parse_output_file(self.output.read_text(encoding="utf-8"))


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Job:
    """A pull_request job of octo/project; the working folder is tmp_path/work (no git repository)."""
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n",
                      encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    steps = Job(output=tmp_path / "output", summary=tmp_path / "summary.md", temp=tmp_path / "runner-temp")
    steps.output.touch()
    steps.summary.touch()
    steps.temp.mkdir()
    _set(monkeypatch, **DEFAULTS, GIT_CONFIG_GLOBAL=str(config), GIT_CONFIG_NOSYSTEM="1", GITHUB_ACTIONS="true",
         GITHUB_EVENT_NAME="pull_request", GITHUB_REF="refs/pull/7/merge", GITHUB_BASE_REF="main",
         GITHUB_REPOSITORY="octo/project", HEAD_REPOSITORY="octo/project", PR_NUMBER="7", DEFAULT_BRANCH="main",
         GITHUB_JOB="perf", GITHUB_RUN_ID="42", GITHUB_RUN_ATTEMPT="1", JOB_INDEX="0", RUNNER_TEMP=str(steps.temp),
         GITHUB_OUTPUT=str(steps.output), GITHUB_STEP_SUMMARY=str(steps.summary), GITHUB_TOKEN="secret-token",
         GITHUB_API_URL="http://127.0.0.1:9")  # nothing listens there: a comment made by mistake fails
    return steps


def _set(monkeypatch: pytest.MonkeyPatch, **env: str) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)


class FakeCommands:
    """Stands in for the commands `ci` runs in-process: records (argv, GITHUB_TOKEN as the command saw it)."""

    def __init__(self, check: int = REGRESSION, comment: int = OK) -> None:
        self.status = {"check": check, "comment": comment}
        self.calls: list[tuple[list[str], str | None]] = []

    def __call__(self, argv: Sequence[str]) -> int:
        argv = list(argv)
        self.calls.append((argv, os.environ.get("GITHUB_TOKEN")))
        if argv[0] == "check":
            for arg in argv[: argv.index("--")]:
                if arg.startswith(("--html=", "--markdown=")):
                    Path(arg.split("=", 1)[1]).write_text("## scalecheck\n", encoding="utf-8")
        return self.status[argv[0]]

    def argv(self, name: str) -> list[str] | None:
        found = [argv for argv, _ in self.calls if argv[0] == name]
        assert len(found) <= 1, found
        return found[0] if found else None


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeCommands:
    commands = FakeCommands()
    monkeypatch.setattr(ci, "_scalecheck", commands)
    return commands


def _annotations(out: str, level: str) -> list[str]:
    prefix = f"::{level} title=scalecheck::"
    return [line[len(prefix):] for line in out.splitlines() if line.startswith(prefix)]


# -- inputs ------------------------------------------------------------------------------------------------------

def test_the_actions_defaults_are_read_as_the_defaults() -> None:
    assert ci.read_inputs(DEFAULTS) == ci.Inputs() == ci.read_inputs({})  # a variable not set: its default


def test_an_empty_input_is_not_its_default() -> None:
    with pytest.raises(ConfigError, match="^input 'comment' must be always, on-regression or never, not ''$"):
        ci.read_inputs({**DEFAULTS, "INPUT_COMMENT": ""})


def test_inputs_are_read_case_insensitively_where_the_action_says_so() -> None:
    inputs = ci.read_inputs({**DEFAULTS, "INPUT_COMMENT": "Always", "INPUT_RECORD": "FALSE", "INPUT_FAIL": "False",
                             "INPUT_MISSING_BASELINE": "Fail", "INPUT_ROUNDS": "20"})
    assert (inputs.comment, inputs.record, inputs.fail, inputs.missing_baseline, inputs.rounds) == (
        "always", False, False, "fail", 20)


@pytest.mark.parametrize(("env", "message"), [
    ({"INPUT_COMMENT": "sometimes"}, "input 'comment' must be always, on-regression or never, not 'sometimes'"),
    ({"INPUT_RECORD": "yes"}, "input 'record' must be true or false, not 'yes'"),
    ({"INPUT_FAIL": ""}, "input 'fail' must be true or false, not ''"),
    ({"INPUT_COMMENT_KEY": "a/b"}, "input 'comment-key' must be 1 to 64 letters, digits, '.', '_' or '-', not 'a/b'"),
    ({"INPUT_COMMENT_KEY": "k" * 65}, "input 'comment-key' must be 1 to 64 letters"),
    ({"INPUT_DATA_BRANCH": ""}, "input 'data-branch' must be a valid git branch name, not ''"),
    ({"INPUT_DATA_BRANCH": "--upload-pack=x"}, "input 'data-branch' must be a valid git branch name"),
    ({"INPUT_DATA_BRANCH": "a b"}, "input 'data-branch' must be a valid git branch name, not 'a b'"),
    ({"INPUT_MISSING_BASELINE": "skip"}, "input 'missing-baseline' must be pass or fail, not 'skip'"),
    ({"INPUT_ROUNDS": "+2"}, "input 'rounds' must be a whole number from 1 to 20, not '+2'"),
    ({"INPUT_ROUNDS": "2\n"}, "input 'rounds' must be a whole number from 1 to 20, not '2"),  # on one line
    ({"INPUT_ROUNDS": "\u0662"}, "input 'rounds' must be a whole number from 1 to 20"),  # an Arabic-Indic 2
    ({"INPUT_COMMAND": "make bench", "INPUT_MEASUREMENTS": "a.json"},
     "inputs 'command' and 'measurements' exclude each other"),
])
def test_a_bad_input_is_an_error_annotation_and_status_2(job: Job, fake: FakeCommands, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str], env: dict[str, str],
                                                         message: str) -> None:
    _set(monkeypatch, **env)
    assert main(["ci"]) == USAGE_ERROR
    out, err = capsys.readouterr()
    errors = _annotations(out, "error")
    assert len(errors) == 1 and errors[0].startswith(message), out
    assert "Traceback" not in err and fake.calls == [] and job.outputs() == {}


def test_ci_takes_no_arguments(job: Job, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["ci", "--measurements", "a.json"])
    assert stopped.value.code == USAGE_ERROR
    assert "unrecognized arguments" in capsys.readouterr().err


def test_expand_passes_paths_on_and_expands_globs_sorted(job: Job) -> None:
    for name in ("b.json", "a.json", "deep/x/c.json", "deep/d.json", "notes.txt"):
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text("{}", encoding="utf-8")
    assert ci._expand(["missing.json", "?.json", "deep/**/*.json", "not*es.txt"]) == [
        "missing.json", "a.json", "b.json", "deep/d.json", "deep/x/c.json", "notes.txt"]
    with pytest.raises(ConfigError, match=r"^input 'measurements': no file matches 'bench/\*\.json'$"):
        ci._expand(["a.json", "bench/*.json"])


def test_a_glob_matching_nothing_stops_before_anything_runs(job: Job, fake: FakeCommands,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    _set(monkeypatch, INPUT_MEASUREMENTS="results/*.json\nother.json")
    assert main(["ci"]) == USAGE_ERROR
    assert _annotations(capsys.readouterr().out, "error") == ["input 'measurements': no file matches 'results/*.json'"]
    assert fake.calls == []


# -- checking ----------------------------------------------------------------------------------------------------

def test_a_pull_request_is_checked_with_reports_outputs_and_the_gate(job: Job, fake: FakeCommands,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    Path("bench").mkdir()
    for name in ("bench/b.json", "bench/a.json"):
        Path(name).write_text("{}", encoding="utf-8")
    _set(monkeypatch, INPUT_MEASUREMENTS="bench/*.json", INPUT_BASELINE="base.json", INPUT_MISSING_BASELINE="Fail",
         INPUT_CONFIG="perf.toml", INPUT_DATA_BRANCH="perf-data", INPUT_COMMENT="never")
    assert main(["ci"]) == REGRESSION
    out = capsys.readouterr().out
    outputs = job.outputs()
    artifact = outputs["artifact"]
    assert artifact.startswith("scalecheck-report-perf-42-1-0-") and len(artifact.rsplit("-", 1)[1]) == 8
    folder = job.temp / "scalecheck" / artifact
    assert outputs == {"verdict": "fail", "report": str(folder / "report.html"),
                       "markdown": str(folder / "summary.md"), "artifact": artifact}
    assert fake.argv("check") == ["check", f"--html={folder / 'report.html'}", f"--markdown={folder / 'summary.md'}",
                                  "--github", "--data-branch=perf-data", "--config=perf.toml",
                                  "--missing-baseline=fail", "--baseline=base.json", "--", "bench/a.json",
                                  "bench/b.json"]
    assert "comment: never" in out and fake.argv("comment") is None
    assert _annotations(out, "error") == [
        f"a new scalability problem was found: see the job summary and the report artifact {artifact}"]


def test_fail_false_reports_the_failing_verdict_and_goes_on(job: Job, fake: FakeCommands,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    _set(monkeypatch, INPUT_FAIL="false", INPUT_COMMENT="never")
    assert main(["ci"]) == OK
    assert job.outputs()["verdict"] == "fail"
    out = capsys.readouterr().out
    assert "scalecheck verdict: fail" in out and _annotations(out, "error") == []


def test_each_use_gets_its_own_artifact(job: Job, fake: FakeCommands, monkeypatch: pytest.MonkeyPatch) -> None:
    _set(monkeypatch, INPUT_FAIL="false", INPUT_COMMENT="never", JOB_INDEX="")
    main(["ci"])
    main(["ci"])
    first, second = (argv for argv, _ in fake.calls)
    assert first[1] != second[1]  # --html=<folder of its own>/report.html
    assert first[1].split(os.sep)[-2].startswith("scalecheck-report-perf-42-1-0-")  # no JOB_INDEX: 0


def test_same_job_runs_the_command_in_bash_without_the_token(job: Job, fake: FakeCommands,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    command = 'pytest perf --scalecheck-save "$SCALECHECK_OUTPUT"\necho done'
    _set(monkeypatch, INPUT_COMMAND=command, INPUT_ROUNDS="3", INPUT_BASELINE="origin/main", INPUT_COMMENT="always")
    assert main(["ci"]) == REGRESSION
    argv = fake.argv("check")
    assert argv is not None
    assert argv[3:] == ["--github", "--same-job", "--rounds=3", "--baseline=origin/main", "--", "bash", "--noprofile",
                        "--norc", "-eo", "pipefail", "-c", command]
    tokens = dict((call[0], token) for call, token in fake.calls)
    assert tokens == {"check": None, "comment": "secret-token"}  # the pull request's code never sees the token
    assert "GITHUB_TOKEN" not in os.environ


def test_rounds_without_a_command_is_a_warning(job: Job, fake: FakeCommands, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _set(monkeypatch, INPUT_ROUNDS="5", INPUT_COMMENT="never")
    main(["ci"])
    warnings = _annotations(capsys.readouterr().out, "warning")
    assert warnings == ["input 'rounds' is ignored: it counts the rounds of same-job mode, which needs 'command'"]
    assert not any(arg.startswith("--rounds") for arg in fake.argv("check") or [])


@pytest.mark.parametrize(("event", "env"), [
    ("push", {"GITHUB_REF": "refs/heads/feature"}),
    ("push", {"GITHUB_REF": "refs/heads/main", "INPUT_RECORD": "false"}),
    ("workflow_dispatch", {"GITHUB_REF": "refs/heads/main"}),
])
def test_outside_a_pull_request_the_baseline_is_needed(job: Job, fake: FakeCommands, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str], event: str,
                                                       env: dict[str, str]) -> None:
    monkeypatch.delenv("GITHUB_BASE_REF")
    _set(monkeypatch, GITHUB_EVENT_NAME=event, **env)
    assert main(["ci"]) == USAGE_ERROR
    assert _annotations(capsys.readouterr().out, "error") == [
        "no baseline: outside a pull request, set the input 'baseline' to a git ref (such as HEAD~1 or origin/main) "
        "or a measurement file"]
    assert fake.calls == []


@pytest.mark.parametrize(("status", "same_job", "what"), [
    (USAGE_ERROR, False, "bad input or usage"),
    (USAGE_ERROR, True, "bad input or usage, or a measurement command that wrote no measurements"),
    (3, False, "internal error"),
])
def test_a_check_that_stops_stops_ci_with_its_status(job: Job, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str], status: int, same_job: bool,
                                                     what: str) -> None:
    commands = FakeCommands(check=status)
    monkeypatch.setattr(ci, "_scalecheck", commands)
    if same_job:
        _set(monkeypatch, INPUT_COMMAND="make bench")
    assert main(["ci"]) == status
    assert _annotations(capsys.readouterr().out, "error") == [
        f"scalecheck check stopped with exit status {status} ({what}; the message is above)"]
    assert job.outputs() == {} and commands.argv("comment") is None


# -- the sticky comment ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("comment", "check", "extra"), [
    ("on-regression", REGRESSION, []),
    ("on-regression", OK, ["--update-only"]),  # a pass never opens a comment, but updates an earlier one
    ("always", OK, []),
    ("always", REGRESSION, []),
])
def test_comment_modes(job: Job, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], comment: str,
                       check: int, extra: list[str]) -> None:
    commands = FakeCommands(check=check)
    monkeypatch.setattr(ci, "_scalecheck", commands)
    _set(monkeypatch, INPUT_COMMENT=comment, INPUT_COMMENT_KEY="linux-3.12", INPUT_FAIL="false")
    assert main(["ci"]) == OK
    markdown = job.outputs()["markdown"]
    assert commands.argv("comment") == ["comment", f"--markdown={markdown}", "--key=linux-3.12", "--pr=7", *extra]
    assert _annotations(capsys.readouterr().out, "warning") == []


@pytest.mark.parametrize(("env", "said"), [
    ({"INPUT_COMMENT": "never"}, "comment: never"),
    ({"GITHUB_EVENT_NAME": "push", "GITHUB_REF": "refs/heads/feature", "INPUT_BASELINE": "HEAD~1"},
     "Not a pull request (push): no comment."),
    ({"HEAD_REPOSITORY": "someone/fork"}, "::notice title=scalecheck::pull request from a fork: its token cannot "
                                          "comment. Use the fork-safe two-workflow pattern of examples/workflows"),
])
def test_no_comment(job: Job, fake: FakeCommands, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                    env: dict[str, str], said: str) -> None:
    _set(monkeypatch, **{"INPUT_COMMENT": "always", **env})
    assert main(["ci"]) == REGRESSION  # the gate is the same without a comment
    assert said in capsys.readouterr().out
    assert fake.argv("comment") is None


def test_a_fork_pull_request_target_comments(job: Job, fake: FakeCommands, monkeypatch: pytest.MonkeyPatch) -> None:
    """pull_request_target runs with the base repository's token, which may comment."""
    _set(monkeypatch, GITHUB_EVENT_NAME="pull_request_target", HEAD_REPOSITORY="someone/fork", INPUT_COMMENT="always")
    main(["ci"])
    assert fake.argv("comment") is not None


def test_a_failing_comment_is_a_warning(job: Job, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(ci, "_scalecheck", FakeCommands(check=OK, comment=USAGE_ERROR))
    _set(monkeypatch, INPUT_COMMENT="always")
    assert main(["ci"]) == OK
    out = capsys.readouterr().out
    assert _annotations(out, "warning") == [
        "the pull-request comment failed (see above); the check itself is unaffected"]
    assert "scalecheck verdict: pass" in out


def test_the_real_comment_command_fails_softly_without_a_token(job: Job, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """ci runs `scalecheck comment` in-process: its error is printed, and only a warning follows."""
    real = ci._scalecheck

    def check_then_real_comment(argv: Sequence[str]) -> int:
        return FakeCommands(check=OK)(argv) if argv[0] == "check" else real(argv)

    monkeypatch.setattr(ci, "_scalecheck", check_then_real_comment)
    monkeypatch.delenv("GITHUB_TOKEN")
    _set(monkeypatch, INPUT_COMMENT="always")
    assert main(["ci"]) == OK
    out, err = capsys.readouterr()
    assert "scalecheck: error:" in err and "Traceback" not in err
    assert _annotations(out, "warning") == [
        "the pull-request comment failed (see above); the check itself is unaffected"]


# -- a push to the default branch --------------------------------------------------------------------------------

def test_same_job_on_a_push_to_the_default_branch_has_nothing_to_do(job: Job, fake: FakeCommands,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("GITHUB_BASE_REF")
    _set(monkeypatch, GITHUB_EVENT_NAME="push", GITHUB_REF="refs/heads/main", INPUT_COMMAND="make bench")
    assert main(["ci"]) == OK
    notices = _annotations(capsys.readouterr().out, "notice")
    assert len(notices) == 1 and notices[0].startswith("same-job mode (input 'command') records nothing")
    assert "Set 'baseline' (such as HEAD~1)" in job.summary.read_text(encoding="utf-8")
    assert fake.calls == [] and job.outputs() == {}


def _origin_and_clone(tmp_path: Path) -> tuple[Path, Path]:
    """A bare origin and a clone at tmp_path/work (the job's working folder), main pushed with the examples."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "--quiet", "--bare", str(origin))
    repo = tmp_path / "work"
    git(tmp_path, "clone", "--quiet", str(origin), str(repo))
    for name in ("baseline.json", "candidate.json"):
        (repo / name).write_bytes((EXAMPLE / name).read_bytes())
        git(repo, "add", name)
        git(repo, "commit", "--quiet", "-m", f"add {name}")
    git(repo, "push", "--quiet", "origin", "main")
    return origin, repo


def _push_to_main(monkeypatch: pytest.MonkeyPatch, repo: Path) -> str:
    head = git(repo, "rev-parse", "HEAD")
    monkeypatch.delenv("GITHUB_BASE_REF")
    _set(monkeypatch, GITHUB_EVENT_NAME="push", GITHUB_REF="refs/heads/main", GITHUB_SHA=head,
         INPUT_MEASUREMENTS="candidate.json")
    return head


def _files(origin: Path, ref: str = "scalecheck-data") -> set[str]:
    return set(git(origin, "ls-tree", "--name-only", ref).split())


def test_a_push_to_the_default_branch_records_and_pushes(job: Job, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    origin, repo = _origin_and_clone(tmp_path)
    head = _push_to_main(monkeypatch, repo)
    assert main(["ci"]) == OK
    assert _files(origin) == {f"{head}.json"}
    assert f"Recorded the measurements of {head[:7]} on 'scalecheck-data'." in job.summary.read_text(encoding="utf-8")
    assert job.outputs() == {}  # nothing checked, nothing to upload
    assert "Another run pushed" not in capsys.readouterr().out


def test_a_racing_push_is_decided_by_the_remote_ref_not_by_gits_words(job: Job, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Origin refuses our first push with words no race ever prints, while another run's record lands on the data
    branch: the branch moved since our fetch, so it is a race, and ours is recorded again on top of theirs."""
    origin, repo = _origin_and_clone(tmp_path)
    parent = git(repo, "rev-parse", "HEAD~1")
    other = tmp_path / "other"
    git(tmp_path, "clone", "--quiet", str(origin), str(other))
    monkeypatch.chdir(other)
    assert main(["record", f"--commit={parent}", "--", "baseline.json"]) == OK  # another run's record
    monkeypatch.chdir(repo)
    git(other, "push", "--quiet", "origin", "scalecheck-data:refs/heads/theirs")
    theirs = git(origin, "rev-parse", "refs/heads/theirs")
    marker = tmp_path / "raced"
    hook = origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\ncat >/dev/null\n"
                    f"if [ ! -e '{marker}' ]; then\n"
                    f"  touch '{marker}'\n"
                    "  unset GIT_QUARANTINE_PATH\n"  # our objects are not needed for the other run's ref
                    f"  git update-ref refs/heads/scalecheck-data {theirs}\n"
                    "  echo 'the server is having a quiet day' >&2\n"
                    "  exit 1\n"
                    "fi\n", encoding="utf-8")
    hook.chmod(0o755)
    waits: list[float] = []
    monkeypatch.setattr(ci, "_wait", waits.append)
    head = _push_to_main(monkeypatch, repo)
    assert main(["ci"]) == OK
    out = capsys.readouterr().out
    assert marker.exists(), "the hook never ran"
    assert "the server is having a quiet day" in out  # git's output is shown, not interpreted
    assert "Another run pushed 'scalecheck-data' first; recording again on top of it (try 2 of 5)." in out
    assert len(waits) == 1 and 1 <= waits[0] <= 3  # a short randomised back-off
    assert _files(origin) == {f"{head}.json", f"{parent}.json"}
    assert git(origin, "rev-parse", "scalecheck-data^") == theirs  # on top of theirs: nothing lost


def test_a_refused_push_is_not_retried(job: Job, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    origin, repo = _origin_and_clone(tmp_path)
    _refuse_with_race_words(origin)
    monkeypatch.setattr(ci, "_wait", lambda seconds: pytest.fail("a refused push was retried"))
    _push_to_main(monkeypatch, repo)
    assert main(["ci"]) == USAGE_ERROR
    out = capsys.readouterr().out
    errors = _annotations(out, "error")
    assert len(errors) == 1 and errors[0].startswith("cannot push the data branch 'scalecheck-data' to origin"), out
    assert git(origin, "branch", "--list", "scalecheck-data") == ""


def test_a_race_lost_every_time_gives_up_after_five_tries(job: Job, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    origin, repo = _origin_and_clone(tmp_path)
    pushes: list[str | None] = []

    def always_raced(self: DataRemote, expected: str | None) -> PushResult:
        pushes.append(expected)
        return PushResult(pushed=False, raced=True, output="")

    monkeypatch.setattr(DataRemote, "push", always_raced)
    waits: list[float] = []
    monkeypatch.setattr(ci, "_wait", waits.append)
    _push_to_main(monkeypatch, repo)
    assert main(["ci"]) == USAGE_ERROR
    assert len(pushes) == ci.TRIES and len(waits) == ci.TRIES - 1
    assert all(attempt <= seconds <= attempt + 2 for attempt, seconds in enumerate(waits, start=1)), waits
    assert _annotations(capsys.readouterr().out, "error") == [
        "cannot push the data branch 'scalecheck-data': other runs kept pushing first (5 tries)"]


def test_a_data_branch_that_cannot_be_read_stops_the_recording(job: Job, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    origin, repo = _origin_and_clone(tmp_path)
    git(repo, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    _push_to_main(monkeypatch, repo)
    assert main(["ci"]) == USAGE_ERROR
    errors = _annotations(capsys.readouterr().out, "error")
    assert len(errors) == 1 and errors[0].startswith("cannot read the data branch 'scalecheck-data' of origin: "), \
        errors


def test_a_failing_record_stops_with_its_status(job: Job, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    origin, repo = _origin_and_clone(tmp_path)
    _push_to_main(monkeypatch, repo)
    _set(monkeypatch, INPUT_MEASUREMENTS="no-such-file.json")
    assert main(["ci"]) == USAGE_ERROR
    out, err = capsys.readouterr()
    assert "scalecheck: error:" in err and "no-such-file.json" in err
    assert _annotations(out, "error") == [
        "scalecheck record stopped with exit status 2 (bad input or usage; the message is above)"]
    assert git(origin, "branch", "--list", "scalecheck-data") == ""


# -- the data branch's remote ------------------------------------------------------------------------------------

def _refuse_with_race_words(origin: Path) -> None:
    """A pre-receive hook that refuses every push with the words git prints when it loses a race."""
    hook = origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\ncat >/dev/null\n"
                    "echo ' ! [rejected] scalecheck-data -> scalecheck-data (fetch first)' >&2\n"
                    "echo 'error: failed to update ref: cannot lock ref: incorrect old value (stale info); "
                    "non-fast-forward, already exists' >&2\n"
                    "exit 1\n", encoding="utf-8")
    hook.chmod(0o755)


@pytest.fixture
def repos(job: Job, tmp_path: Path) -> tuple[Path, Path]:
    """(origin, clone), the clone with a local data branch at its HEAD."""
    origin, repo = _origin_and_clone(tmp_path)
    git(repo, "branch", "scalecheck-data")
    return origin, repo


def test_remote_head_and_fetch(repos: tuple[Path, Path], tmp_path: Path) -> None:
    origin, repo = repos
    with DataRemote(repo, "scalecheck-data") as remote:
        assert remote.configured()
        assert remote.head() is None and remote.fetch() is None  # a first run: no data branch on origin yet
        main_sha = git(origin, "rev-parse", "main")
        git(origin, "update-ref", "refs/heads/scalecheck-data", main_sha)
        git(origin, "update-ref", "refs/heads/x/refs/heads/scalecheck-data", f"{main_sha}~1")  # a longer name
        assert remote.head() == main_sha
        assert remote.fetch() == main_sha == git(repo, "rev-parse", "refs/remotes/origin/scalecheck-data")


def test_remote_push_pushed(repos: tuple[Path, Path]) -> None:
    origin, repo = repos
    with DataRemote(repo, "scalecheck-data") as remote:
        result = remote.push(remote.fetch())
    assert result.pushed and not result.raced
    assert git(origin, "rev-parse", "scalecheck-data") == git(repo, "rev-parse", "scalecheck-data")


def test_remote_push_refused_with_a_races_words_is_no_race(repos: tuple[Path, Path]) -> None:
    origin, repo = repos
    _refuse_with_race_words(origin)
    with DataRemote(repo, "scalecheck-data") as remote:
        result = remote.push(remote.fetch())
    assert not result.pushed and not result.raced
    assert "fetch first" in result.output  # shown to the user, never read


def test_remote_push_after_another_push_is_a_race(repos: tuple[Path, Path], tmp_path: Path) -> None:
    origin, repo = repos
    with DataRemote(repo, "scalecheck-data") as remote:
        expected = remote.fetch()
        other = tmp_path / "other"
        git(tmp_path, "clone", "--quiet", str(origin), str(other))
        git(other, "commit", "--quiet", "--allow-empty", "-m", "theirs")
        git(other, "push", "--quiet", "origin", "HEAD:refs/heads/scalecheck-data")
        result = remote.push(expected)
        assert not result.pushed and result.raced
        remote.fetch()
        remote.drop_local()
        assert git(repo, "branch", "--list", "scalecheck-data") == ""


def test_remote_without_origin(job: Job, tmp_path: Path) -> None:
    repo = tmp_path / "work"
    git(repo, "init", "--quiet")
    with DataRemote(repo, "scalecheck-data") as remote:
        assert not remote.configured()


def test_remote_outside_a_repository_is_a_history_error(job: Job, tmp_path: Path) -> None:
    from scalecheck.errors import HistoryError

    with pytest.raises(HistoryError, match="not inside a git repository"):
        DataRemote(tmp_path / "work", "scalecheck-data")


def test_a_stored_check_refreshes_origins_data_branch(job: Job, tmp_path: Path, fake: FakeCommands,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    origin, repo = _origin_and_clone(tmp_path)
    main_sha = git(origin, "rev-parse", "main")
    git(origin, "update-ref", "refs/heads/scalecheck-data", main_sha)
    _set(monkeypatch, INPUT_MEASUREMENTS="candidate.json", INPUT_COMMENT="never", INPUT_FAIL="false")
    assert main(["ci"]) == OK
    assert git(repo, "rev-parse", "refs/remotes/origin/scalecheck-data") == main_sha
