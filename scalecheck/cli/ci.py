"""L6: `scalecheck ci`, what the GitHub Action (action.yml) runs: check or record, comment, and fail the job.

Every input comes from the environment, never from the command line: the action's inputs as INPUT_COMMAND,
INPUT_ROUNDS, INPUT_MEASUREMENTS, INPUT_BASELINE, INPUT_MISSING_BASELINE, INPUT_CONFIG, INPUT_COMMENT,
INPUT_DATA_BRANCH, INPUT_RECORD, INPUT_FAIL and INPUT_COMMENT_KEY, then DEFAULT_BRANCH, JOB_INDEX, GITHUB_TOKEN,
PR_NUMBER, HEAD_REPOSITORY and the runner's GITHUB_* and RUNNER_TEMP. The mode and the work:

- same-job (`command` set): `scalecheck check --same-job` measures the merge-base and the working tree in this
  job; on a push to the default branch without `baseline` there is nothing to compare, and a notice says so;
- stored baseline: on a push to the default branch (with `record`), `scalecheck record`, then the data branch is
  pushed, and recorded again on top of another run's push that came first (`TRIES` tries); on anything else,
  `scalecheck check` against the recorded measurements;
- a check writes its reports to $RUNNER_TEMP/scalecheck/<artifact>/, the step outputs `OUTPUTS`, then the sticky
  comment (never a failure of the job), and exit status 1 when the verdict is fail and `fail` is true.

The other commands run in this process through `scalecheck.cli.main`. GITHUB_TOKEN is taken out of the
environment first, so that the measurement command (the pull request's code) never sees it; only `comment` gets
it back. Exit status: 0 done, 1 a new scalability problem, 2 a bad input, or the data branch could not be read or
pushed (an error annotation says which), else the status of the command that stopped.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from scalecheck.cli._common import INTERRUPTED, OK, OUTPUT_CLOSED, REGRESSION, USAGE_ERROR, command
from scalecheck.errors import ConfigError, HistoryError, ScalecheckError

if TYPE_CHECKING:  # what only some runs need is imported where they need it: `model` and `check` start faster
    import random

    from scalecheck.history.remote import DataRemote  # gitpython: imported when a run needs it

OUTPUTS = ("verdict", "report", "markdown", "findings", "artifact")  # the step outputs; `check` writes findings
# The action's defaults, for a variable that is not set at all (the action sets every one; an empty value is checked
# as it is). tests/test_action.py keeps them equal to action.yml's.
INPUT_DEFAULTS = {"COMMAND": "", "ROUNDS": "2", "MEASUREMENTS": "", "BASELINE": "", "MISSING_BASELINE": "",
                  "CONFIG": "", "COMMENT": "on-regression", "DATA_BRANCH": "scalecheck-data", "RECORD": "true",
                  "FAIL": "true", "COMMENT_KEY": "default"}
COMMENT_MODES = ("always", "on-regression", "never")
TRIES = 5  # pushes of the data branch, each after recording again on top of the run that pushed first
DEFAULT_ROUNDS = 2  # the action's default of `rounds`
_PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")
_ROUNDS = re.compile(r"[1-9]|1[0-9]|20", re.ASCII)  # digits only: no sign, no leading zero
_WORDS = re.compile(r"[ \t\r\n]+")  # what separates the words of `measurements` (bash's IFS, and \r)
_FORK_SAFE = "https://github.com/scalecheck/scalecheck/tree/main/examples/workflows"

EPILOG = """\
example (what action.yml runs; every input is an environment variable):
  INPUT_MEASUREMENTS='bench/*.json' INPUT_BASELINE=origin/main scalecheck ci

Inputs: INPUT_COMMAND, INPUT_ROUNDS, INPUT_MEASUREMENTS, INPUT_BASELINE,
INPUT_MISSING_BASELINE, INPUT_CONFIG, INPUT_COMMENT, INPUT_DATA_BRANCH, INPUT_RECORD,
INPUT_FAIL and INPUT_COMMENT_KEY (the action's inputs of the same names; one not set at
all has the action's default), DEFAULT_BRANCH, JOB_INDEX, GITHUB_TOKEN, PR_NUMBER and
HEAD_REPOSITORY, and the runner's GITHUB_* and RUNNER_TEMP.

With INPUT_COMMAND, both sides are measured in this job (check --same-job). Without it,
the measurements are recorded on a push to the default branch, and checked against the
recorded ones on any other event. Step outputs: verdict, report, markdown, findings,
artifact.

exit status: 0 done, 1 a new scalability problem (with INPUT_FAIL=true), 2 a bad input
or a data branch that cannot be read or pushed, 3 internal error, 130 interrupted (Ctrl-C)."""


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register `scalecheck ci`."""
    ci = command(commands, "ci", help="what the GitHub Action runs: check or record, comment, fail the job",
                 description="Run the GitHub Action's work with its inputs from the environment: measure both "
                             "sides in this job or check against recorded measurements, record them on a push to "
                             "the default branch, write the step outputs and the sticky comment, and fail the job "
                             "on a new scalability problem.",
                 epilog=EPILOG)
    ci.set_defaults(run=run)


@dataclass(frozen=True)
class Inputs:
    """The action's inputs, checked; globs of `measurements` expanded."""

    command: str = ""  # same-job mode when it holds more than white space
    rounds: int = DEFAULT_ROUNDS
    measurements: tuple[str, ...] = ()  # files (none: the measurements setting)
    baseline: str = ""
    missing_baseline: str = ""  # "" (the setting), "pass" or "fail"
    config: str = ""
    comment: str = "on-regression"  # one of COMMENT_MODES
    data_branch: str = "scalecheck-data"
    record: bool = True
    fail: bool = True
    comment_key: str = "default"

    @property
    def same_job(self) -> bool:
        return bool(self.command.strip())


@dataclass(frozen=True)
class Job:
    """What the runner's environment says about the event and the job (empty when not set)."""

    event_name: str = ""
    ref: str = ""
    sha: str = ""
    base_ref: str = ""  # the pull request's base branch
    default_branch: str = ""
    repository: str = ""
    head_repository: str = ""  # the pull request's head repository (a fork's differs)
    pr_number: str = ""
    job: str = ""
    run_id: str = ""
    run_attempt: str = ""
    job_index: str = ""
    temp: str = ""  # RUNNER_TEMP
    summary: Path | None = None  # GITHUB_STEP_SUMMARY
    output: Path | None = None  # GITHUB_OUTPUT

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Job:
        def path(name: str) -> Path | None:
            return Path(env[name]) if env.get(name) else None

        return cls(event_name=env.get("GITHUB_EVENT_NAME", ""), ref=env.get("GITHUB_REF", ""),
                   sha=env.get("GITHUB_SHA", ""), base_ref=env.get("GITHUB_BASE_REF", ""),
                   default_branch=env.get("DEFAULT_BRANCH", ""), repository=env.get("GITHUB_REPOSITORY", ""),
                   head_repository=env.get("HEAD_REPOSITORY", ""), pr_number=env.get("PR_NUMBER", ""),
                   job=env.get("GITHUB_JOB", ""), run_id=env.get("GITHUB_RUN_ID", ""),
                   run_attempt=env.get("GITHUB_RUN_ATTEMPT", ""), job_index=env.get("JOB_INDEX", ""),
                   temp=env.get("RUNNER_TEMP", ""), summary=path("GITHUB_STEP_SUMMARY"), output=path("GITHUB_OUTPUT"))

    @property
    def default_push(self) -> bool:
        """A push to the repository's default branch."""
        return (self.event_name == "push" and bool(self.default_branch)
                and self.ref == f"refs/heads/{self.default_branch}")

    @property
    def from_fork(self) -> bool:
        """A pull_request event from another repository: its token is read-only."""
        return self.event_name == "pull_request" and self.head_repository != self.repository

    def artifact(self) -> str:
        """A unique artifact name: per job, run and attempt, and a random part for matrix jobs and for several uses
        of the action in one job (strategy.job-index has been reported as always 0 inside composite actions)."""
        import secrets

        return (f"scalecheck-report-{self.job}-{self.run_id}-{self.run_attempt}-{self.job_index or '0'}-"
                f"{secrets.token_hex(4)}")


def run(args: argparse.Namespace) -> int:
    token = os.environ.pop("GITHUB_TOKEN", None)  # out of reach of the measurement command; `comment` gets it back
    try:
        return _ci(os.environ, token)
    except ScalecheckError as err:  # the job's page shows annotations: the error, and its fix, on one line
        _annotate("error", "; ".join(line.strip() for line in str(err).splitlines()))
        return USAGE_ERROR


def read_inputs(env: Mapping[str, str]) -> Inputs:
    """The INPUT_* variables of `env`, checked; the first bad one is a `ConfigError` naming the input."""
    from scalecheck.config import Config
    from scalecheck.errors import GitHubError
    from scalecheck.github.comment import marker

    def get(name: str) -> str:
        return env.get(f"INPUT_{name}", INPUT_DEFAULTS[name])

    comment = get("COMMENT").lower()
    if comment not in COMMENT_MODES:
        raise ConfigError(f"input 'comment' must be always, on-regression or never, not '{get('COMMENT')}'")
    record, fail = _boolean("record", get("RECORD")), _boolean("fail", get("FAIL"))
    key = get("COMMENT_KEY")
    try:
        marker(key)  # the comment's own rule for its key
    except GitHubError:
        raise ConfigError(f"input 'comment-key' must be 1 to 64 letters, digits, '.', '_' or '-', not '{key}'") \
            from None
    branch = get("DATA_BRANCH")
    try:
        Config().with_overrides(data_branch=branch)  # the settings' rule for the data branch
    except ConfigError:
        raise ConfigError(f"input 'data-branch' must be a valid git branch name, not '{branch}'") from None
    missing_baseline = get("MISSING_BASELINE").lower()
    try:
        Config().with_overrides(missing_baseline=missing_baseline or None)
    except ConfigError:
        raise ConfigError(f"input 'missing-baseline' must be pass or fail, not '{get('MISSING_BASELINE')}'") \
            from None
    rounds = get("ROUNDS")
    if not _ROUNDS.fullmatch(rounds):
        raise ConfigError(f"input 'rounds' must be a whole number from 1 to 20, not '{rounds}'")
    inputs = Inputs(command=get("COMMAND"), rounds=int(rounds), baseline=get("BASELINE"),
                    missing_baseline=missing_baseline, config=get("CONFIG"), comment=comment, data_branch=branch,
                    record=record, fail=fail, comment_key=key)
    words = [word for word in _WORDS.split(get("MEASUREMENTS")) if word]
    if inputs.same_job and words:
        raise ConfigError("inputs 'command' and 'measurements' exclude each other: with 'command' the action "
                          "measures both sides itself (each run writes to $SCALECHECK_OUTPUT), with 'measurements' "
                          "it compares stored measurements; remove one of them")
    return dataclasses.replace(inputs, measurements=tuple(_expand(words)))


def _boolean(name: str, text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise ConfigError(f"input '{name}' must be true or false, not '{text}'")
    return text.lower() == "true"


def _expand(words: Sequence[str]) -> list[str]:
    """The files `words` name, relative to the working folder: a word with a wildcard is a pattern, read by the
    rules of the `measurements` setting (the same files in the working tree and in history), that must match
    something; any other word is a path, passed on as it is."""
    from scalecheck.api import files_matching  # numpy: only when a run needs it

    files: list[str] = []
    for word in words:
        matched = files_matching(word, Path("."))
        if matched is None:
            files.append(word)
            continue
        if not matched:
            raise ConfigError(f"input 'measurements': no file matches '{word}'")
        files.extend(path.as_posix() for path in matched)
    return files


def _ci(env: Mapping[str, str], token: str | None) -> int:
    inputs, job = read_inputs(env), Job.from_env(env)
    if not inputs.same_job and inputs.rounds != DEFAULT_ROUNDS:
        _annotate("warning", "input 'rounds' is ignored: it counts the rounds of same-job mode, which needs 'command'")
    if inputs.same_job and job.default_push and not inputs.baseline:
        message = ("same-job mode (input 'command') records nothing, and a push to the default branch has no base "
                   "to compare with: nothing to do. Set 'baseline' (such as HEAD~1) to check pushes too.")
        _annotate("notice", message)
        _summarise(job, f"scalecheck: {message}")
        return OK
    if not inputs.same_job and job.default_push and inputs.record:
        return _record(inputs, job)
    return _check(inputs, job, token)


# -- a push to the default branch: record, and push the data branch ---------------------------------------------

def _record(inputs: Inputs, job: Job) -> int:
    from scalecheck.history.remote import DataRemote

    branch = inputs.data_branch
    try:
        remote = DataRemote(Path.cwd(), branch)
    except HistoryError as err:
        raise _unreadable(branch, err) from None
    with remote:
        try:
            expected = remote.fetch()  # origin's branch as it was when we started; a first run finds none
        except HistoryError as err:
            raise _unreadable(branch, err) from None
        argv = ["record", f"--commit={job.sha or 'HEAD'}", f"--data-branch={branch}", *_config(inputs), "--",
                *inputs.measurements]
        return _record_and_push(remote, expected, argv, job)


def _unreadable(branch: str, err: HistoryError) -> ConfigError:
    return ConfigError(f"cannot read the data branch '{branch}' of origin: {err.problem}", fix=err.fix)


def _record_and_push(remote: DataRemote, expected: str | None, argv: list[str], job: Job) -> int:
    """Record, push; after a lost race (origin's branch moved since `expected`), fetch, record again on top, push."""
    import random

    branch = remote.branch
    rng = random.Random()
    for attempt in range(1, TRIES + 1):
        if attempt > 1:
            print(f"Another run pushed '{branch}' first; recording again on top of it (try {attempt} of {TRIES}).",
                  flush=True)
            _wait(_back_off(attempt - 1, rng))
            expected = remote.fetch()
            remote.drop_local()  # so that record starts from origin's branch
        status = _scalecheck(argv)
        if status != OK:
            return _stopped("record", status)
        pushed = remote.push(expected)
        if pushed.output:
            print(pushed.output, flush=True)
        if pushed.pushed:
            line = f"Recorded the measurements of {(job.sha or 'HEAD')[:7]} on '{branch}'."
            print(line)
            _summarise(job, line)
            return OK
        if not pushed.raced:
            _annotate("error", f"cannot push the data branch '{branch}' to origin (git's message is above): the job "
                               "needs 'permissions: contents: write', the credentials that actions/checkout keeps "
                               "(persist-credentials: true), and a branch that accepts the push")
            return USAGE_ERROR
    _annotate("error", f"cannot push the data branch '{branch}': other runs kept pushing first ({TRIES} tries)")
    return USAGE_ERROR


def _back_off(attempt: int, rng: random.Random) -> float:
    """Seconds to wait after the `attempt`-th lost race: longer each time, and random, so that racing runs part."""
    return attempt + rng.uniform(0, 2)


def _wait(seconds: float) -> None:
    time.sleep(seconds)


# -- everything else: check -------------------------------------------------------------------------------------

def _check(inputs: Inputs, job: Job, token: str | None) -> int:
    import shutil
    import tempfile

    from scalecheck.github.workflow import write_outputs

    if not inputs.baseline and not job.base_ref:
        raise ConfigError("no baseline: outside a pull request, set the input 'baseline' to a git ref (such as "
                          "HEAD~1 or origin/main)" + ("" if inputs.same_job else " or a measurement file"))
    if not inputs.same_job:
        _refresh_data_branch(inputs.data_branch)
    artifact = job.artifact()
    folder = Path(job.temp or tempfile.gettempdir()) / "scalecheck" / artifact
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    report, markdown = folder / "report.html", folder / "summary.md"
    baseline = [f"--baseline={inputs.baseline}"] if inputs.baseline else []
    if inputs.same_job:
        # the user's command line is one argument of bash, as in a `run:` step; check runs it once per side and round
        options = ["--same-job", f"--rounds={inputs.rounds}", *_config(inputs), *baseline]
        operands = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", inputs.command]
    else:
        missing = [f"--missing-baseline={inputs.missing_baseline}"] if inputs.missing_baseline else []
        options = [f"--data-branch={inputs.data_branch}", *_config(inputs), *missing, *baseline]
        operands = list(inputs.measurements)
    status = _scalecheck(["check", f"--html={report}", f"--markdown={markdown}", "--github", *options, "--",
                          *operands])
    if status not in (OK, REGRESSION):
        return _stopped("check", status, same_job=inputs.same_job)
    verdict = "fail" if status == REGRESSION else "pass"
    summary = markdown if _is_file(markdown) else None
    # `check --github` wrote verdict, findings and report; verdict and report are written again (the same values,
    # and the last one counts), so that the action's outputs do not hang on what check chooses to write
    if job.output is not None:
        write_outputs(job.output, {"verdict": verdict, "report": str(report) if _is_file(report) else "",
                                   "markdown": str(summary or ""), "artifact": artifact})
    _comment(inputs, job, token, verdict, summary)
    if verdict == "fail" and inputs.fail:
        _annotate("error", f"a new scalability problem was found: see the job summary and the report artifact "
                           f"{artifact}")
        return REGRESSION
    print(f"scalecheck verdict: {verdict}")
    return OK


def _refresh_data_branch(branch: str) -> None:
    """Fetch origin's data branch, where there is an origin; a first run finds none, which is fine."""
    from scalecheck.history.remote import DataRemote

    try:
        remote = DataRemote(Path.cwd(), branch)
    except HistoryError:
        return  # not a git repository: the baseline can still be a file
    with remote:
        if not remote.configured():
            return
        try:
            remote.fetch()
        except HistoryError:
            _annotate("warning", f"cannot fetch the data branch '{branch}'; using the local refs")


def _comment(inputs: Inputs, job: Job, token: str | None, verdict: str, summary: Path | None) -> None:
    """The sticky pull-request comment; whatever goes wrong is a warning, never a failure of the job."""
    if job.event_name not in _PULL_REQUEST_EVENTS:
        print(f"Not a pull request ({job.event_name or 'no event'}): no comment.")
        return
    if inputs.comment == "never":
        print("comment: never")
        return
    if summary is None:
        _annotate("warning", "no summary was written, so there is nothing to comment")
        return
    if job.from_fork:  # a read-only token: commenting needs a second workflow that never runs the pull request's code
        _annotate("notice", "pull request from a fork: its token cannot comment. Use the fork-safe two-workflow "
                            f"pattern of examples/workflows ({_FORK_SAFE}).")
        return
    argv = ["comment", f"--markdown={summary}", f"--key={inputs.comment_key}"]
    if job.pr_number:
        argv.append(f"--pr={job.pr_number}")
    if inputs.comment == "on-regression" and verdict == "pass":
        argv.append("--update-only")  # a pass never opens a comment, but updates one an earlier failure left
    with _environment("GITHUB_TOKEN", token):
        status = _scalecheck(argv)
    if status != OK:
        _annotate("warning", "the pull-request comment failed (see above); the check itself is unaffected")


# -- helpers ----------------------------------------------------------------------------------------------------

def _config(inputs: Inputs) -> list[str]:
    return [f"--config={inputs.config}"] if inputs.config else []


def _scalecheck(argv: Sequence[str]) -> int:
    """Run another scalecheck command in this process: it prints its own errors; its exit status is returned."""
    from scalecheck.cli import main

    sys.stdout.flush()
    try:
        status = main(list(argv))
    except SystemExit as stop:  # argparse stops on an argument it cannot read
        status = stop.code if isinstance(stop.code, int) else USAGE_ERROR
    sys.stdout.flush()
    return status


def _stopped(name: str, status: int, *, same_job: bool = False) -> int:
    """Say which command stopped and why, as an error annotation; return its exit status."""
    if status == USAGE_ERROR:
        what = "bad input or usage" + (", or a measurement command that wrote no measurements" if same_job else "")
    else:
        what = {INTERRUPTED: "interrupted", OUTPUT_CLOSED: "its standard output was closed", 128 + 15: "stopped by SIGTERM",
                128 + 1: "stopped by SIGHUP"}.get(status, "internal error")
    _annotate("error", f"scalecheck {name} stopped with exit status {status} ({what}; the message is above)")
    return status


def _is_file(path: Path) -> bool:
    """Whether `path` is a file; False for a name the system refuses (too long, say) as for a missing one."""
    try:
        return path.is_file()
    except OSError:
        return False


@contextmanager
def _environment(name: str, value: str | None) -> Iterator[None]:
    """`name` set to `value` (when not None) for the duration of the block, and removed again afterwards."""
    if value is not None:
        os.environ[name] = value
    try:
        yield
    finally:
        os.environ.pop(name, None)


def _annotate(level: str, message: str) -> None:
    from scalecheck.github.workflow import annotation

    print(annotation(level, message, title="scalecheck"), flush=True)


def _summarise(job: Job, text: str) -> None:
    """Append a line to the job summary, when there is one and it has room."""
    if job.summary is None:
        return
    from scalecheck.github.workflow import append_summary

    try:
        append_summary(job.summary, text)
    except (ValueError, OSError) as err:
        print(f"scalecheck: cannot append to the job summary ({err})", file=sys.stderr)
