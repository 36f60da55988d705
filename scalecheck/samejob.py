"""L5, beside `scalecheck.measure`: measure the baseline commit and the working tree in the same job, in rounds.

Timings taken in different jobs differ by the runner, its load and its caches. `measure_both` runs one measurement
command for both sides on this machine, alternating (ABBA: round 1 baseline then candidate, round 2 candidate then
baseline, ...), so that drift and load hit both sides alike, and returns each side's measurements for
`scalecheck.api.check`.

Behaviour (the decisions `scalecheck check --help` and docs/same-job.md state too):

- The baseline is the merge-base of HEAD and `base_ref`, checked out in a temporary git worktree
  (`scalecheck.history.worktree`) and measured in the same folder relative to the repository's top as `cwd`;
  the candidate is the working tree as it is (uncommitted changes included), measured in `cwd`.
- The command runs as an argument list, never through a shell, with stdin empty and stdout and stderr inherited.
  `{out}`, `{round}` and `{side}` in any argument become the output file, the round (1-based) and ``baseline`` or
  ``candidate``; other braces are left alone (so `scalecheck measure`'s `{n}` passes through). The environment adds
  SCALECHECK_OUTPUT, SCALECHECK_ROUND, SCALECHECK_ROUNDS, SCALECHECK_SIDE and SCALECHECK_COMMIT (the side's full
  sha: HEAD's for the candidate), and puts the side's top folder and its ``src`` folder (when there is one) first
  on PYTHONPATH, so that Python code imports the code of the tree it runs in, also when the project is installed in
  editable mode.
- The output file is ``<side>-<round>.json`` in a private temporary folder, read right after its run (the
  reader's `InputError` for a malformed file). A run that exits non-zero but wrote measurements is reported
  through `progress` as a warning and kept (a pytest run whose complexity assertion failed still wrote its
  measurements); a run that wrote nothing, whatever its exit status, is an `InputError`. The rounds of a side are
  merged into one `Run` (repetitions add up), each repetition marked with its round: the check resamples whole
  rounds, since a burst of load or a slow process start hits a whole run at once.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scalecheck.data.measurement import Run, merge_runs, with_round
from scalecheck.data.provenance import SameJob
from scalecheck.errors import ConfigError, InputError
from scalecheck.formats import read_measurements
from scalecheck.formats.limits import check_merged_cells
from scalecheck.history.worktree import baseline_worktree
from scalecheck.text import visible

DEFAULT_ROUNDS = 2
SIDES = ("baseline", "candidate")
_PYTEST = ("pytest", "py.test")  # a measurement command by these names needs pytest installed
_PLACEHOLDER = re.compile(r"\{(out|round|side)\}")
_PLAIN_WORD = re.compile(r"[\w@%+=:,./{}-]+", re.ASCII)  # shown without quotes
_WRITE_FIX = ("make the command write its measurements to the path in {out} or $SCALECHECK_OUTPUT, e.g. "
              "pytest tests/perf --scalecheck-save {out}, or scalecheck measure ... --out {out} -- ...; "
              "$SCALECHECK_OUTPUT needs a shell: bash -c 'pytest --scalecheck-save \"$SCALECHECK_OUTPUT\"'")


@dataclass(frozen=True)
class _Side:
    """Where one side runs: its name, its tree's top folder, the folder the command runs in, its commit."""

    name: str
    tree: Path
    workdir: Path
    sha: str


def run_order(round_number: int) -> tuple[str, str]:
    """The sides of round `round_number` (1-based) in the order they run: baseline first in odd rounds (ABBA)."""
    if round_number < 1:
        raise ValueError(f"rounds are numbered from 1, got {round_number}")
    return SIDES if round_number % 2 else (SIDES[1], SIDES[0])


def expand(command: Sequence[str], values: Mapping[str, str]) -> list[str]:
    """`command` with `{out}`, `{round}` and `{side}` replaced by `values`, in one pass; other braces stay."""
    return [_PLACEHOLDER.sub(lambda m: values[m.group(1)], word) for word in command]


def python_path(tree: Path, inherited: str | None) -> str:
    """PYTHONPATH with `tree` and `tree/src` (when it exists) before the `inherited` entries."""
    first = [str(tree)] + ([str(tree / "src")] if (tree / "src").is_dir() else [])
    rest = [entry for entry in (inherited or "").split(os.pathsep) if entry and entry not in first]
    return os.pathsep.join(first + rest)


def shown_command(command: Sequence[str]) -> str:
    """The command as one line for people: words quoted as a shell needs (placeholders left bare), control
    characters escaped."""
    return visible(" ".join(word if _PLAIN_WORD.fullmatch(word) else shlex.quote(word) for word in command))


def measure_both(
    command: Sequence[str],
    base_ref: str | None,
    *,
    rounds: int = DEFAULT_ROUNDS,
    cwd: Path,
    env: Mapping[str, str],
    fmt: str | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> tuple[Run, Run, SameJob]:
    """Measure the working tree and the merge-base of HEAD and `base_ref` with `command`, `rounds` times each.

    Returns (candidate run, baseline run, how they were measured). `base_ref` None: the pull request's base branch
    in GitHub Actions (GITHUB_BASE_REF in `env`). `progress` receives one line before each run and a warning line
    after a run that failed but wrote measurements. The worktree and the output files are removed before this
    returns, also on an error or Ctrl-C.
    """
    if not command:
        raise ConfigError("--same-job needs the measurement command after --",
                          fix="scalecheck check --same-job --baseline origin/main -- pytest tests/perf "
                              "--scalecheck-save {out}")
    if rounds < 1:
        raise ConfigError(f"--rounds must be at least 1, got {rounds}",
                          fix=f"use --rounds {DEFAULT_ROUNDS} (the default) or more")
    if base_ref is not None and _is_file(Path(cwd) / base_ref):
        raise ConfigError(f"--same-job measures the baseline itself, so --baseline must be a git ref, not the "
                          f"measurement file '{visible(base_ref)}'",
                          fix="pass a git ref such as --baseline origin/main, or drop --same-job to compare "
                              "with the file")
    _check_program(command[0], env)
    text = shown_command(command)
    with tempfile.TemporaryDirectory(prefix="scalecheck-samejob-") as folder, \
            baseline_worktree(Path(cwd), base_ref, env=env) as tree:
        sides = {"baseline": _Side("baseline", tree.root, tree.workdir, tree.sha),
                 "candidate": _Side("candidate", tree.repo_root, Path(cwd), tree.head_sha)}
        runs: dict[str, list[Run]] = {name: [] for name in SIDES}
        for number in range(1, rounds + 1):
            for name in run_order(number):
                side = sides[name]
                where = f"round {number} of {rounds}, {name} (commit {side.sha[:7]})"
                progress(f"{where}: {text}")
                out = Path(folder) / f"{name}-{number}.json"
                runs[name].append(_run_once(command, side, out, number, rounds, env, fmt, progress))
        info = SameJob(rounds=rounds, baseline_commit=tree.sha, candidate_commit=tree.head_sha, command=text)
        for name in SIDES:  # each file keeps the limits; together they might not
            check_merged_cells(runs[name], [Path(folder) / f"{name}-{n}.json" for n in range(1, rounds + 1)])
        return merge_runs(runs["candidate"]), merge_runs(runs["baseline"]), info


def _run_once(command: Sequence[str], side: _Side, out: Path, number: int, rounds: int, env: Mapping[str, str],
              fmt: str | None, progress: Callable[[str], None]) -> Run:
    """Run the command once for `side` and read what it wrote to `out`."""
    argv = expand(command, {"out": str(out), "round": str(number), "side": side.name})
    child_env = {**env, "SCALECHECK_OUTPUT": str(out), "SCALECHECK_ROUND": str(number),
                 "SCALECHECK_ROUNDS": str(rounds), "SCALECHECK_SIDE": side.name, "SCALECHECK_COMMIT": side.sha,
                 "PYTHONPATH": python_path(side.tree, env.get("PYTHONPATH"))}
    which = f"round {number} ({side.name}, commit {side.sha[:7]})"
    try:
        status = subprocess.run(argv, cwd=side.workdir, env=child_env, stdin=subprocess.DEVNULL).returncode
    except OSError as err:  # not found, not executable: nothing ran
        reason = "no such file" if isinstance(err, FileNotFoundError) else err.strerror or str(err)
        raise InputError(f"cannot run the measurement command '{visible(argv[0])}' in {which}: {reason}",
                         fix="check the program's name or path; a path is relative to the folder it runs in, "
                             "and the baseline's worktree has only the files committed in the baseline") from None
    ended = _ended(status)
    if not out.is_file() or out.stat().st_size == 0:
        fix = _WRITE_FIX if status <= 0 else (
            "read the command's own error above (a missing tool? pytest --scalecheck-save needs pytest and "
            f"scalecheck installed where it runs: pip install pytest scalecheck); if it ran, {_WRITE_FIX}")
        raise InputError(f"the measurement command {ended} in {which} and wrote no measurements to {out}", fix=fix)
    if status != 0:
        progress(f"warning: the measurement command {ended} in {which}; using the measurements it wrote")
    try:
        return with_round(read_measurements(out, fmt), number)  # a round is the unit that load and drift hit
    except InputError as err:
        raise InputError(f"{err.problem} (written by the measurement command in {which})", where=err.where,
                         fix=err.fix) from None


def _ended(status: int) -> str:
    """How a run ended, for messages: `exited with status 3`, `was killed by signal 9 (SIGKILL)`."""
    if status >= 0:
        return f"exited with status {status}"
    try:
        name = f" ({signal.Signals(-status).name})"
    except ValueError:
        name = ""
    return f"was killed by signal {-status}{name}"


def _is_file(path: Path) -> bool:
    """Whether `path` is a file; False for a name the system refuses (too long, say), which is then a git ref."""
    try:
        return path.is_file()
    except OSError:
        return False


def _check_program(program: str, env: Mapping[str, str]) -> None:
    """An `InputError` before anything is checked out when a program name (no path) is not on PATH."""
    if os.sep in program or (os.altsep and os.altsep in program) or "{" in program:
        return  # a path: relative to the folder each side runs in, so it is found (or not) when it runs
    if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        fix = ("check the spelling, or give its path (./bench.sh); to run shell syntax, write -- bash -c '...'"
               if program not in _PYTEST else
               "install pytest where the command runs, with scalecheck for its plugin: pip install pytest scalecheck "
               "(or your project's test extra), or activate the environment that has them")
        raise InputError(f"cannot run the measurement command: '{visible(program)}' is not found on PATH", fix=fix)
