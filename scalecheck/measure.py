"""L5, beside `scalecheck.api`: run a command at every combination of parameter values and record how long it took.

`plan_measurements` checks everything that can be checked before anything runs (the parameters, the command's
placeholders, the program, the output file) and returns a `Plan`; `measure(plan)` runs it and returns a `Summary`.
Printing is the caller's: `measure` reports each run through callbacks, and `progress_line`, `failure_text` and
`summary_line` spell the reports out.

Behaviour (the decisions `scalecheck measure --help` states too):

- Parameters: `--param NAME=V1,V2,...`, NAME an ASCII identifier not starting with ``SCALECHECK_``; values positive
  finite numbers, no value twice. Values are spelled canonically wherever they appear (in the command, in the
  environment, in the file): a whole number without a decimal point (`1e3` becomes `1000`), any other number as
  Python's shortest repr (`0.5`).
- Points are the cross product, the first `--param` varying slowest. Repetitions go in rounds: round 1 runs every
  point once, then round 2, ..., so slow drift of the machine affects all points alike. Each value is stored with
  its round (`"rounds"` in the file; a session adding to a file numbers its rounds after the file's), so that the
  check can treat a round as the unit that noise hits.
- `{NAME}` in any argument is replaced by the value; `{{` and `}}` are literal braces, as in `str.format`; any other
  field (`{q}`, `{}`, `{p:03d}`) is a usage error. With `--shell` the arguments are joined with single spaces into
  one string, substituted, and run by the shell; without it the argument list runs directly, never through a shell.
- The child's environment is scalecheck's plus `NAME=value` per parameter (overriding a variable of that name),
  `SCALECHECK_METRICS` (the path of a fresh, empty temp file) and, on POSIX, `SCALECHECK_METRICS_FD=3` (that file
  opened for appending as descriptor 3). Its standard input is empty; its standard output is discarded unless
  `show_output`; its standard error is kept in a temp file for the report of a failed run.
- The wall time (`time.perf_counter` around start and exit of the child) is recorded as kernel `plan.kernel`,
  metric `time`, unit `s`. The default kernel is the program's file name (`./solver` -> `solver`), or the script's
  when the program is a Python interpreter (`python`, `python3.12`, `pypy3`) and the next argument ends in `.py`
  (`python3 bench.py` -> `bench.py`); with `--shell`, the same rule applied to the command's first words.
- Metrics the command reports: JSON lines in the metrics file, one object per line with the keys `kernel`
  (required), `metric` (default `time`), `unit` (optional) and `value` or `values`. A malformed line, a unit that
  contradicts an earlier one, or the wall-time series itself (kernel `plan.kernel`, metric `time`) stops the
  measurement with an `InputError` (also with `keep_going`: it is a bug in the command, not a flaky run); nothing
  of that run is kept.
- The output file: written as scalecheck JSON after every completed run (atomically), so it always holds everything
  measured so far. An existing file is read first and added to; it must be scalecheck JSON with the same parameter
  names (in any order; the file's order is kept), no `processes` section (which a rewrite would drop), and no other
  `meta.commit` than `commit`. `meta.machine` is this machine's fingerprint
  (`scalecheck.machine`: SCALECHECK_MACHINE, else the CPU, cores, OS and host), except that an existing file's
  `meta.machine` is kept, so that a name the user gave the machine is not overwritten.
- A failed run (non-zero exit status, killed by a signal, or past `timeout`, when it is killed) adds nothing; it
  stops the measurement unless `keep_going`. A program that cannot be found or executed is an error before anything
  runs. On `KeyboardInterrupt` the running child gets 0.5 s to exit (Ctrl-C in a terminal reaches it too), then
  SIGINT, then after 2 s SIGKILL; it is always reaped and the temp files removed, and `measure` returns a summary
  with `interrupted=True`. With `--shell`, a timeout kills the shell; commands the shell started in the background
  are not tracked.
"""

from __future__ import annotations

import itertools
import math
import os
import re
import shlex
import shutil
import signal
import string
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np

from scalecheck.data.measurement import Run, RunBuilder, merge_runs
from scalecheck.errors import ConfigError, InputError, Location
from scalecheck.files import write_atomic
from scalecheck.formats import read_measurements_text
from scalecheck.formats.detect import detect_format_text
from scalecheck.formats.metric_lines import MetricLine, MetricLineError, read_metric_lines
from scalecheck.formats.processes import read_processes_section_text
from scalecheck.formats.source import read_text
from scalecheck.formats.writer import dumps_run
from scalecheck.machine import fingerprint
from scalecheck.text import visible

METRICS_FD = 3
WALL_METRIC, WALL_UNIT = "time", "s"
TAIL_LINES, TAIL_CHARS = 20, 2000
STOP_GRACE, SIGINT_GRACE = 0.5, 2.0  # seconds a child gets after Ctrl-C before SIGINT, and after SIGINT before SIGKILL
# detect_format reads files with these names as CSV or JSON Lines, so scalecheck JSON must not be written under them
FOREIGN_SUFFIXES = (".csv", ".jsonl", ".ndjson")
_POSIX = os.name == "posix"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INTERPRETER = re.compile(r"(python|pypy)[0-9.]*(\.exe)?", re.IGNORECASE)
_EXACT_INT = 2.0**53


@dataclass(frozen=True)
class Parameter:
    """One `--param NAME=V1,V2,...`: the name and its values, in the order given."""

    name: str
    values: tuple[float, ...]


@dataclass(frozen=True)
class Step:
    """One run: the `number`-th of `total`, at `point`, repetition `repetition` of `repeat`."""

    number: int
    total: int
    point: tuple[tuple[str, float], ...]  # (name, value) in --param order
    repetition: int
    repeat: int
    command: str | tuple[str, ...]  # what Popen gets: a string with --shell, else the argument list

    @property
    def where(self) -> str:
        """The point as `p=8, n=100`."""
        return ", ".join(f"{name}={spell(value)}" for name, value in self.point)

    @property
    def shown(self) -> str:
        """The command as a user would type it."""
        return self.command if isinstance(self.command, str) else shlex.join(self.command)


@dataclass(frozen=True)
class Failure:
    """A run that failed: how (`exit status 1`, `timed out after 2 s`) and the last lines of its stderr."""

    step: Step
    status: str
    stderr_tail: tuple[str, ...]


@dataclass(frozen=True)
class Summary:
    """What `measure` did: `runs` completed and written to `out` (of `total`), the failures, and why it ended."""

    runs: int
    total: int
    points: int
    repeat: int
    out: Path
    appended: bool  # `out` held measurements before
    seconds: float
    failures: tuple[Failure, ...] = ()
    stopped: bool = False  # a run failed and keep_going was off
    interrupted: bool = False


@dataclass(frozen=True)
class Plan:
    """Everything `measure` needs, checked: build it with `plan_measurements`."""

    parameters: tuple[Parameter, ...]  # in --param order: the order of the loops
    command: tuple[str, ...]  # the argument templates; with `shell`, one string
    shell: bool
    repeat: int
    kernel: str
    out: Path
    timeout: float | None = None
    keep_going: bool = False
    show_output: bool = False
    meta: Mapping[str, str] = field(default_factory=dict)
    existing: Run | None = None  # what `out` held; its parameter order is the file's

    @property
    def file_parameters(self) -> tuple[str, ...]:
        return self.existing.parameters if self.existing else tuple(p.name for p in self.parameters)

    @property
    def points(self) -> list[tuple[tuple[str, float], ...]]:
        """The cross product of the values, the first parameter varying slowest."""
        names = [p.name for p in self.parameters]
        return [tuple(zip(names, combo)) for combo in itertools.product(*(p.values for p in self.parameters))]

    def steps(self) -> Iterator[Step]:
        """The runs in order: every point in round 1, then every point in round 2, ..."""
        points = self.points
        total = len(points) * self.repeat
        for number, (repetition, point) in enumerate(itertools.product(range(1, self.repeat + 1), points), start=1):
            values = {name: spell(value) for name, value in point}
            command = (substitute(self.command[0], values) if self.shell
                       else tuple(substitute(arg, values) for arg in self.command))
            yield Step(number, total, point, repetition, self.repeat, command)


def spell(value: float) -> str:
    """A parameter value as it appears in commands, the environment and files: `8`, not `8.0`; else repr."""
    return str(int(value)) if value.is_integer() and abs(value) < _EXACT_INT else repr(value)


def parse_param(text: str) -> Parameter:
    """`--param NAME=V1,V2,...` as a `Parameter`; a `ConfigError` says what is wrong."""
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep:
        raise ConfigError(f"--param '{text}': expected NAME=VALUES", fix="write e.g. --param p=1,2,4,8")
    if not _NAME.fullmatch(name):
        raise ConfigError(f"--param '{text}': '{name}' is not a valid parameter name",
                          fix="use letters, digits and '_', not starting with a digit, e.g. --param p=1,2,4")
    if name.upper().startswith("SCALECHECK_"):
        raise ConfigError(f"--param '{text}': names starting with SCALECHECK_ are reserved",
                          fix="choose another parameter name")
    values: list[float] = []
    for item in (part.strip() for part in raw.split(",")):
        try:
            value = float(item)
        except ValueError:
            shown = f"'{item}' is not a number" if item else "a value is empty"
            raise ConfigError(f"--param '{text}': {shown}", fix=f"write e.g. --param {name}=1,2,4,8") from None
        if not math.isfinite(value) or value <= 0:
            raise ConfigError(f"--param '{text}': values must be positive numbers, got {item}",
                              fix="parameter values are model coordinates (process counts, sizes): use numbers > 0")
        if value in values:
            raise ConfigError(f"--param '{text}': value {spell(value)} is given twice", fix="give each value once")
        values.append(value)
    return Parameter(name, tuple(values))


def placeholders(template: str) -> list[str]:
    """The field names in `template` (`{p}` -> p), with `{{`/`}}` as literal braces; a malformed one is an error."""
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError as err:  # a single '{' or '}'
        raise ConfigError(f"the command argument '{template}' has an unmatched brace ({err})",
                          fix="write a literal brace as {{ or }}") from None
    names = []
    for _, name, spec, conversion in fields:
        if name is None:
            continue
        if spec or conversion:
            whole = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise ConfigError(f"the command argument '{template}' has '{whole}': format specifications are not "
                              "supported", fix=f"write {{{name}}}; values are spelled as given, whole numbers "
                                               "without a decimal point")
        names.append(name)
    return names


def substitute(template: str, values: Mapping[str, str]) -> str:
    """`template` with every `{name}` replaced by `values[name]` and `{{`/`}}` by single braces."""
    return "".join(literal + (values[name] if name is not None else "")
                   for literal, name, _, _ in string.Formatter().parse(template))


def default_kernel(command: Sequence[str], shell: bool) -> str:
    """The program's file name, or the script's when the program is a Python interpreter and a .py file follows."""
    words = list(command)
    if shell:
        try:
            words = shlex.split(command[0])
        except ValueError:  # unbalanced quotes: the shell will say so when it runs
            words = command[0].split()
    if not words:
        return "command"
    program = os.path.basename(words[0]) or words[0]
    if _INTERPRETER.fullmatch(program) and len(words) > 1 and words[1].endswith(".py"):
        return os.path.basename(words[1])
    return program


def plan_measurements(
    params: Sequence[str],
    command: Sequence[str],
    *,
    repeat: int = 5,
    kernel: str | None = None,
    out: Path = Path("measurements.json"),
    shell: bool = False,
    timeout: float | None = None,
    keep_going: bool = False,
    show_output: bool = False,
    commit: str | None = None,
) -> Plan:
    """Check the options, the command, the program and `out` (read when it exists) before anything runs."""
    parameters = tuple(parse_param(text) for text in params)
    if not parameters:
        raise ConfigError("no --param given", fix="give at least one, e.g. --param p=1,2,4,8")
    names = [p.name for p in parameters]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(f"--param {name} is given twice", fix=f"give all values of {name} in one --param")
    if not command:
        raise ConfigError("no command given", fix="put the command after --, e.g. -- ./bench {p}")
    if repeat < 1:
        raise ConfigError(f"--repeat must be at least 1, got {repeat}", fix="use --repeat 5, say")
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise ConfigError(f"--timeout must be a positive number of seconds, got {timeout:g}",
                          fix="use e.g. --timeout 60, or leave it out")
    templates = (" ".join(command),) if shell else tuple(command)
    for template in templates:
        for name in placeholders(template):
            if name not in names:
                missing = f"there is no parameter '{name}'" if name else "it names no parameter"
                raise ConfigError(f"the command uses {{{name}}}, but {missing} (parameters: {', '.join(names)})",
                                  fix=f"add --param {name or 'NAME'}=..., or write {{{{{name}}}}} for literal braces")
    kernel = default_kernel(templates, shell) if kernel is None else kernel.strip()
    if not kernel:
        raise ConfigError("--kernel is empty", fix="name the kernel, or leave --kernel out")
    existing = _read_existing(Path(out), names, kernel, commit)
    machine = existing.meta.get("machine") if existing is not None else None
    meta = {"machine": machine or fingerprint()} | ({"commit": commit} if commit else {})
    plan = Plan(parameters, templates, shell, repeat, kernel, Path(out), timeout, keep_going, show_output, meta,
                existing)
    if not shell:
        for program in sorted({step.command[0] for step in itertools.islice(plan.steps(), len(plan.points))}):
            _check_program(program)
    return plan


def _read_existing(out: Path, names: Sequence[str], kernel: str, commit: str | None) -> Run | None:
    """The measurements `out` holds, if it exists, after checking that new ones can be added to them."""
    if out.suffix.lower() in FOREIGN_SUFFIXES:
        raise ConfigError(f"--out {out}: measure writes scalecheck JSON, which other tools would read as "
                          f"{out.suffix.lower()[1:]} by the name", fix="name the output file *.json")
    folder = out.parent if str(out.parent) else Path(".")
    try:
        if not folder.is_dir():
            raise ConfigError(f"cannot write {out}: folder {folder} does not exist",
                              fix="create the folder first, or choose another --out")
        if not os.access(folder, os.W_OK):
            raise ConfigError(f"cannot write {out}: folder {folder} is not writable", fix="choose another --out")
        if not out.exists() and not out.is_symlink():
            return None
    except OSError as err:  # a name the system refuses, such as one longer than 255 bytes
        raise ConfigError(f"cannot write {out}: {err.strerror or err}", fix="choose a shorter --out") from None
    adding = "measure adds to an existing --out file; choose another --out to start a new one"
    try:
        text = read_text(out)  # read once: the format, the measurements and the processes section come from it
        fmt = detect_format_text(text, out)
        run = read_measurements_text(text, out, fmt)
    except InputError as err:
        raise InputError(err.problem, where=err.where, fix=f"{err.fix}; or: {adding}" if err.fix else adding) \
            from None
    if fmt != "scalecheck-json":
        raise InputError(f"the file is in format {fmt}; measure adds only to scalecheck JSON files",
                         where=Location(out), fix="choose another --out (scalecheck model reads several files "
                                                  "together)")
    if read_processes_section_text(text, out) is not None:
        raise InputError("the file has a processes section, which measure would drop when it rewrites the file",
                         where=Location(out), fix="choose another --out")
    if sorted(run.parameters) != sorted(names):
        raise InputError(f"the file has parameters ({', '.join(run.parameters)}), but --param gives "
                         f"({', '.join(names)})", where=Location(out),
                         fix="measure the same parameters, or choose another --out")
    if commit and run.meta.get("commit", commit) != commit:
        raise InputError(f"the file holds measurements of commit {run.meta['commit']}, not {commit}",
                         where=Location(out), fix="choose another --out for another commit")
    for series in run.series:
        if (series.kernel, series.metric) == (kernel, WALL_METRIC) and series.unit not in ("", WALL_UNIT):
            raise InputError(f"kernel '{kernel}', metric '{WALL_METRIC}' has unit '{series.unit}' in the file, but "
                             f"measure records wall time in {WALL_UNIT}", where=Location(out),
                             fix="pass another --kernel, or choose another --out")
    return run


def _check_program(program: str) -> None:
    """A `ConfigError` unless `program` names an executable file (a path, or a name on PATH)."""
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program)
        if not path.exists():
            raise ConfigError(f"cannot run '{program}': no such file", fix="check the path of the program")
        if path.is_dir() or not os.access(path, os.X_OK):
            raise ConfigError(f"cannot run '{program}': not an executable file",
                              fix=f"make it executable (chmod +x {shlex.quote(program)}), or run it through its "
                                  "interpreter")
    elif shutil.which(program) is None:
        raise ConfigError(f"cannot run '{program}': not found on PATH",
                          fix=f"check the spelling, or give its path (./{program})")


def measure(
    plan: Plan,
    *,
    on_step: Callable[[Step, float], None] | None = None,
    on_failure: Callable[[Failure], None] | None = None,
) -> Summary:
    """Run `plan`, writing `plan.out` after every completed run; `on_step(step, seconds since start)` is called before
    each run, `on_failure(failure)` after each failed one. Stops at the first failure unless `plan.keep_going`."""
    builder = RunBuilder(plan.file_parameters, plan.out)  # this session's runs; the file's are merged in to write
    units = {(s.kernel, s.metric): s.unit for s in (plan.existing.series if plan.existing else ()) if s.unit}
    units[(plan.kernel, WALL_METRIC)] = WALL_UNIT
    started = time.perf_counter()
    runs, failures = 0, list[Failure]()
    first_round = _rounds_held(plan.existing) + 1  # a session adding to a file continues its rounds

    def summary(**flags: bool) -> Summary:
        return Summary(runs, len(plan.points) * plan.repeat, len(plan.points), plan.repeat, plan.out,
                       plan.existing is not None, time.perf_counter() - started, tuple(failures), **flags)

    try:
        for step in plan.steps():
            if on_step is not None:
                on_step(step, time.perf_counter() - started)
            seconds, failure, reported = _run(plan, step, units)
            if failure is not None:
                failures.append(failure)
                if on_failure is not None:
                    on_failure(failure)
                if plan.keep_going:
                    continue
                return summary(stopped=True)
            coords = dict(step.point)
            point = tuple(coords[name] for name in plan.file_parameters)
            where = Location(plan.out, record=f"run {step.number}")
            round_number = first_round + step.repetition - 1
            builder.add(plan.kernel, WALL_METRIC, point, [seconds], where, WALL_UNIT, [round_number])
            for line in reported:
                builder.add(line.kernel, line.metric, point, line.values, where, line.unit,
                            [round_number] * len(line.values))
            run = builder.build() if plan.existing is None else merge_runs([plan.existing, builder.build()])
            write_atomic(plan.out, dumps_run(run, plan.meta))
            runs += 1
    except KeyboardInterrupt:
        return summary(interrupted=True)
    return summary()


def _rounds_held(run: Run | None) -> int:
    """The highest round number in `run` (0 for none, or when no round is recorded)."""
    rounds = [s.rounds for s in (run.series if run else ()) if s.rounds is not None and not np.isnan(s.rounds).all()]
    return int(max(np.nanmax(r) for r in rounds)) if rounds else 0


def _run(plan: Plan, step: Step,
         units: dict[tuple[str, str], str]) -> tuple[float, Failure | None, list[MetricLine]]:
    """Run `step` once: (wall seconds, the failure or None, the metrics it reported, checked). Cleans up always."""
    fd, name = tempfile.mkstemp(prefix="scalecheck-metrics-", suffix=".jsonl")
    os.close(fd)
    metrics = Path(name)
    try:
        with tempfile.TemporaryFile() as stderr:
            env = {**os.environ, **{n: spell(v) for n, v in step.point}, "SCALECHECK_METRICS": str(metrics)}
            env.pop("SCALECHECK_METRICS_FD", None)  # a nested measure must not pass on its parent's descriptor
            if _POSIX:
                env["SCALECHECK_METRICS_FD"] = str(METRICS_FD)
            seconds, status = _spawn(plan, step, env, metrics, stderr)
            if status is not None:
                return seconds, Failure(step, status, _tail(stderr)), []
        return seconds, None, _check_reported(metrics, plan, step, units)
    finally:
        metrics.unlink(missing_ok=True)


def _spawn(plan: Plan, step: Step, env: dict[str, str], metrics: Path, stderr: IO[bytes]) -> tuple[float, str | None]:
    """Start the child, wait for it, and time it: (seconds, None) or (seconds, why it failed)."""
    child: _Child | subprocess.Popen[bytes] | None = None
    timer: threading.Timer | None = None
    timed_out = threading.Event()
    # both descriptors above METRICS_FD, so that the child's descriptor METRICS_FD is always a fresh duplicate
    fd = _above(os.open(metrics, os.O_WRONLY | os.O_APPEND), METRICS_FD, close=True)
    err_fd = _above(stderr.fileno(), METRICS_FD)
    try:
        start = time.perf_counter()
        try:
            if _POSIX:
                child = _Child.start(step.command, plan.shell, env, plan.show_output, err_fd, fd)
            else:
                child = subprocess.Popen(step.command, shell=plan.shell, env=env, stdin=subprocess.DEVNULL,
                                         stdout=None if plan.show_output else subprocess.DEVNULL, stderr=err_fd)
        except OSError as err:
            raise ConfigError(f"cannot run {step.shown}: {err.strerror or err}",
                              fix="check that the program exists and is executable") from None
        os.close(fd)
        os.close(err_fd)
        fd = err_fd = -1
        if plan.timeout is not None:
            # a timer thread, not wait(timeout=...), which polls and would add up to 50 ms to the measured time
            timer = threading.Timer(plan.timeout, _kill, (child, timed_out))
            timer.daemon = True
            timer.start()
        returncode = child.wait()
        seconds = time.perf_counter() - start
    except BaseException:
        if child is not None:
            _stop(child)
        raise
    finally:
        for open_fd in (fd, err_fd):
            if open_fd >= 0:
                os.close(open_fd)
        if timer is not None:
            timer.cancel()
            timer.join()
    if returncode == 0:
        return seconds, None
    if timed_out.is_set():
        return seconds, f"timed out after {plan.timeout:g} s"
    if returncode < 0:
        try:
            return seconds, f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return seconds, f"killed by signal {-returncode}"
    return seconds, f"exit status {returncode}"


class _Child:
    """A child started by posix_spawn, which places the metrics file at descriptor METRICS_FD in the child only.

    (Popen keeps descriptor numbers only for descriptors the parent already has at those numbers; giving the
    parent's descriptor 3 away for a moment breaks any thread that uses it, such as pytest-xdist's channel.)
    The subset of Popen's interface that `_spawn`, `_kill` and `_stop` use; a pid is signalled only until it is
    reaped.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._lock = threading.Lock()

    @classmethod
    def start(cls, command: str | tuple[str, ...], shell: bool, env: dict[str, str], show_output: bool,
              err_fd: int, metrics_fd: int) -> _Child:
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        actions: list[tuple[object, ...]] = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)]
        if not show_output:
            actions.append((os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0))
        actions += [(os.POSIX_SPAWN_DUP2, err_fd, 2), (os.POSIX_SPAWN_DUP2, metrics_fd, METRICS_FD)]
        executable = shutil.which(argv[0], path=env.get("PATH", os.defpath)) if os.sep not in argv[0] else argv[0]
        if executable is None:
            raise FileNotFoundError(2, "No such file or directory", argv[0])
        return cls(os.posix_spawn(executable, argv, env, file_actions=actions))

    def poll(self) -> int | None:
        with self._lock:
            if self.returncode is None:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
            return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if timeout is None:
            if self.returncode is None:
                _, status = os.waitpid(self.pid, 0)
                with self._lock:
                    self.returncode = os.waitstatus_to_exitcode(status)
            return self.returncode
        end = time.monotonic() + timeout
        while (code := self.poll()) is None:
            if time.monotonic() >= end:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
            time.sleep(0.01)
        return code

    def send_signal(self, number: int) -> None:
        with self._lock:
            if self.returncode is None:
                try:
                    os.kill(self.pid, number)
                except ProcessLookupError:
                    pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _kill(child: _Child | subprocess.Popen[bytes], timed_out: threading.Event) -> None:
    """Kill `child` at its timeout; the event tells the waiting thread why it ended."""
    timed_out.set()
    child.kill()


def _above(fd: int, floor: int, close: bool = False) -> int:
    """A duplicate of `fd` numbered above `floor` (on POSIX; elsewhere any duplicate), not inheritable; `close`
    closes `fd` itself."""
    if not _POSIX:
        duplicate = os.dup(fd)
    else:
        import fcntl

        duplicate = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor + 1)
    if close:
        os.close(fd)
    return duplicate


def _stop(child: _Child | subprocess.Popen[bytes]) -> None:
    """End and reap `child` after Ctrl-C: it may have had the SIGINT itself; else send it one, then SIGKILL."""
    try:
        try:
            child.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGINT if _POSIX else signal.SIGTERM)
            child.wait(SIGINT_GRACE)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        child.kill()
    child.wait()


def _tail(stderr: IO[bytes]) -> tuple[str, ...]:
    """The last lines of a failed run's stderr: at most TAIL_LINES lines and TAIL_CHARS characters, made visible."""
    stderr.seek(0, os.SEEK_END)
    size = stderr.tell()
    stderr.seek(max(0, size - 4 * TAIL_CHARS))
    text = stderr.read().decode("utf-8", errors="replace")
    lines = [visible(line.removesuffix("\r")) for line in text.rstrip("\n").split("\n")] if text.strip() else []
    if size > 4 * TAIL_CHARS and lines:
        lines = lines[1:]  # the first line is cut
    lines = lines[-TAIL_LINES:]
    while len(lines) > 1 and sum(len(line) for line in lines) > TAIL_CHARS:
        lines = lines[1:]
    if lines and len(lines[0]) > TAIL_CHARS:
        lines[0] = "..." + lines[0][-(TAIL_CHARS - 3):]
    return tuple(lines)


def _check_reported(metrics: Path, plan: Plan, step: Step,
                    units: dict[tuple[str, str], str]) -> list[MetricLine]:
    """The metric lines of one run; a bad line is an `InputError` naming the command, the point, the line number
    and its text. `units` gains the units first seen here, if all lines are good."""
    seen = dict(units)
    try:
        lines = read_metric_lines(metrics)
        for line in lines:
            key = (line.kernel, line.metric)
            if key == (plan.kernel, WALL_METRIC):
                raise MetricLineError(f"kernel '{line.kernel}', metric '{WALL_METRIC}' is the wall time scalecheck "
                                      "records itself", number=line.number, text=line.text,
                                      fix="name your kernels differently, or pass --kernel NAME for the wall time")
            if line.unit and seen.setdefault(key, line.unit) != line.unit:
                raise MetricLineError(f"unit '{line.unit}', but kernel '{line.kernel}', metric '{line.metric}' is "
                                      f"in '{seen[key]}'", number=line.number, text=line.text,
                                      fix="report every value of a metric in the same unit")
    except MetricLineError as err:
        shown = visible(err.text.strip())
        shown = shown if len(shown) <= 200 else shown[:197] + "..."
        raise InputError(f"{step.shown} at {step.where}, repetition {step.repetition}/{step.repeat}: "
                         f"$SCALECHECK_METRICS line {err.number}: {err.problem}",
                         details=[f"line {err.number}: {shown}"], fix=err.fix) from None
    units.update(seen)
    return lines


def progress_line(step: Step, seconds: float, width: int = 80, bar: int = 20) -> str:
    """`measure [#######-------------] 14/40 p=8 rep 2/5 3.1s`: the runs done and the one starting, fitted to
    `width` columns so that the line never wraps (a `\\r` could not then overwrite it)."""
    done = round(bar * (step.number - 1) / step.total)
    where = " ".join(f"{name}={spell(value)}" for name, value in step.point)
    line = (f"measure [{'#' * done}{'-' * (bar - done)}] {step.number}/{step.total} {where} "
            f"rep {step.repetition}/{step.repeat} {seconds:.1f}s")
    return line if len(line) < width else line[: max(width - 4, 0)] + "..."


def failure_text(failure: Failure) -> str:
    """The report of a failed run: one line naming the run, then the tail of its stderr, `  | `-indented."""
    step = failure.step
    head = (f"run {step.number}/{step.total} failed ({failure.status}) at {step.where}, repetition "
            f"{step.repetition}/{step.repeat}: {step.shown}")
    if not failure.stderr_tail:
        return f"{head}\n  (nothing on stderr)"
    count = len(failure.stderr_tail)
    return "\n".join([head, f"  stderr, last {count} line{'s' if count > 1 else ''}:"]
                     + [f"  | {line}" for line in failure.stderr_tail])


def summary_line(summary: Summary) -> str:
    """`measured 40 runs (8 points x 5 repetitions) in 12.3 s; wrote measurements.json`."""
    runs = f"{summary.runs} runs" if summary.runs == summary.total else f"{summary.runs} of {summary.total} runs"
    shape = f"{summary.points} point{'s' if summary.points > 1 else ''} x {summary.repeat} " \
            f"repetition{'s' if summary.repeat > 1 else ''}"
    if not summary.runs:
        wrote = f"{summary.out} unchanged" if summary.appended else f"{summary.out} not written"
    else:
        wrote = f"added them to {summary.out}" if summary.appended else f"wrote {summary.out}"
    return f"measured {runs} ({shape}) in {summary.seconds:.1f} s; {wrote}"
