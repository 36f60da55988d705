"""Run a fuzz case in this process (`run_case`) and list how its run breaks the promises of the command line
(`problems`). Each `Problem` has a `kind`, a short text without numbers or paths, so that the same fault found by
many cases counts once, and a `detail` that shows this run's evidence.

What every run must keep, whatever its input:
- exit status 0, 1 or 2 (or 141 when standard output's reader went away); never 3 (a traceback), another
  status, an uncaught exception, or a hang;
- on exit 2, exactly one error line, the last of stderr, starting ``scalecheck: error: ``, naming an input file and
  giving a fix; on 0 and 1, no error line;
- no hidden character on stdout or stderr (C0 controls other than the line feed, DEL, C1 controls, bidirectional
  controls, line separators, lone surrogates), no Python warning;
- no line the GitHub runner reads as a workflow command (after leading white space it starts with ``::``, or it
  holds ``##[``) unless scalecheck wrote it: in GitHub mode the stop-commands pair around the text and the
  ``::error|warning|notice title=scalecheck ...::`` annotations, whose text is %-escaped;
- each output file complete and valid (strict JSON, a whole HTML page, a whole dot graph) or as it was before;
  no temporary file left; on exit 0 and 1 every output written; the job summary under GitHub's limit, the step
  outputs well-formed;
- the run finishes within a few seconds.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import resource
import signal
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import scalecheck
from scalecheck.text import visible

from .cases import SENTINEL, SUMMARY_LIMIT, Case

TIMEOUT = 15.0  # seconds: a case still running then is stopped and counts as a hang
SLOW = 5.0  # seconds: a case slower than this is a problem of its own
MEMORY = 2 << 30  # bytes of address space a case may add before allocations fail (MemoryError, exit status 3)
OUTPUT_CLOSED = 141  # the exit status of a command whose standard output's reader went away (128 + SIGPIPE)

_HIDDEN = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
_ANNOTATION = re.compile(r"::(error|warning|notice)(?: title=([^:]*))?::(.*)")
_STOP = re.compile(r"::stop-commands::([0-9a-f]{32})")
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')
_WARNING_TEXT = re.compile(r"\.py:\d+: \w*Warning: ")
_HEREDOC = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)<<(ghadelimiter_[0-9a-f]{32})\n(.*?)\n?\2\n", re.DOTALL)
_ESCAPED_DATA = re.compile(r"%(?!25|0D|0A)")
_ESCAPED_PROPERTY = re.compile(r"%(?!25|0D|0A|3A|2C)")
PACKAGE = Path(scalecheck.__file__).resolve().parent  # a frame is scalecheck's when its file lies in here


class ClosedPipe(io.StringIO):
    """Standard output whose reader goes away after `room` characters: later writes and flushes raise
    BrokenPipeError, as they do for `scalecheck model FILE | head -c N`."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    def write(self, text: str) -> int:
        if self.tell() + len(text) > self.room:
            super().write(text[:max(0, self.room - self.tell())])
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)

    def flush(self) -> None:
        if self.tell() >= self.room and self.room >= 0:
            raise BrokenPipeError(32, "Broken pipe")


class CaseTimeout(BaseException):
    """Raised in the case by SIGALRM; a BaseException, so that the command's `except Exception` lets it pass."""


@dataclass
class Outcome:
    """What a run of a case did."""

    status: int | None = None  # the exit status (main's return value or SystemExit's code)
    stdout: str = ""
    stderr: str = ""
    warnings: list[tuple[str, str, str, int, str]] = field(default_factory=list)
    # category, message, file, line, and the innermost frame of scalecheck when the warning came ("" if none)
    uncaught: str | None = None  # the traceback of an exception that left main
    timed_out: bool = False
    seconds: float = 0.0
    rss_rise: int = 0  # KiB by which the process's peak resident memory rose during the run


@dataclass(frozen=True)
class Problem:
    """A broken promise: `kind` groups equal faults, `detail` shows this case's evidence."""

    kind: str
    detail: str


def evidence(detail: str, lines: int = 14) -> str:
    """The last `lines` lines of a problem's detail, each made visible and indented, for a report."""
    return "\n".join("    " + visible(line)[:300] for line in detail.rstrip("\n").split("\n")[-lines:])


def _timeout(signum: int, frame: object) -> None:
    raise CaseTimeout()


@contextlib.contextmanager
def _environment(case: Case, folder: Path):  # type: ignore[no-untyped-def]
    """The case's environment: its folder as working folder (no settings file above it), no SCALECHECK_* or
    GITHUB_* variable but those of GitHub mode, warnings shown every time (as a user would see them once)."""
    saved = {k: v for k, v in os.environ.items() if k.startswith(("SCALECHECK_", "GITHUB_"))}
    for name in saved:
        del os.environ[name]
    if case.github:
        os.environ.update(GITHUB_ACTIONS="true", GITHUB_STEP_SUMMARY=str(folder / "step_summary"),
                          GITHUB_OUTPUT=str(folder / "github_output"))
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(cwd)
        for name in [k for k in os.environ if k.startswith(("SCALECHECK_", "GITHUB_"))]:
            del os.environ[name]
        os.environ.update(saved)


def _address_space() -> int | None:
    """This process's virtual memory in bytes (Linux), to cap what one case may add to it."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


@contextlib.contextmanager
def _limits(timeout: float, memory: int):  # type: ignore[no-untyped-def]
    """SIGALRM after `timeout` seconds; at most `memory` more bytes of address space."""
    used = _address_space()
    old_limit = resource.getrlimit(resource.RLIMIT_AS)
    if used is not None:
        cap = used + memory
        if old_limit[1] != resource.RLIM_INFINITY:
            cap = min(cap, old_limit[1])
        resource.setrlimit(resource.RLIMIT_AS, (cap, old_limit[1]))
    old_handler = signal.signal(signal.SIGALRM, _timeout)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        resource.setrlimit(resource.RLIMIT_AS, old_limit)


def run_case(case: Case, folder: Path, *, timeout: float = TIMEOUT, memory: int = MEMORY) -> Outcome:
    """Write the case's files to `folder` and run `scalecheck.cli.main` on its command line in this process."""
    from scalecheck.cli import main

    case.write(folder)
    argv = case.argv(folder)
    outcome = Outcome()
    out = io.StringIO() if case.stdout_room is None else ClosedPipe(case.stdout_room)
    err = io.StringIO()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    caught: list[tuple[str, str, str, int, str]] = []

    def record(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: object = None,
               line: object = None) -> None:
        ours = [f"{short}:{frame.lineno} {frame.name}" for frame in traceback.extract_stack()
                if (short := scalecheck_file(frame.filename))]
        caught.append((category.__name__, str(message), filename, lineno, ours[-1] if ours else ""))

    with _environment(case, folder), warnings.catch_warnings():
        warnings.showwarning = record  # restored by catch_warnings
        warnings.simplefilter("always")
        for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.simplefilter("ignore", category)  # hidden from users by Python's default filters
        start = time.perf_counter()
        try:
            with _limits(timeout, memory), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                outcome.status = main(argv)
        except SystemExit as stop:
            outcome.status = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else -1
        except CaseTimeout:
            outcome.timed_out = True
        except BaseException:  # noqa: BLE001 - whatever leaves main is a finding
            outcome.uncaught = traceback.format_exc()
        outcome.seconds = time.perf_counter() - start
    outcome.stdout, outcome.stderr = out.getvalue(), err.getvalue()
    outcome.warnings = caught
    outcome.rss_rise = max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak)
    return outcome


def _generic(text: str, folder: Path | None = None) -> str:
    """`text` with the case's folder and every number replaced, and shortened: a kind, equal across cases."""
    if folder is not None:
        text = text.replace(visible(str(folder)), "DIR").replace(str(folder), "DIR")
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)  # quoted input differs from case to case
    return re.sub(r"\d+(\.\d+)?", "N", text)[:110]


def scalecheck_file(path: str) -> str | None:
    """'scalecheck/module.py' when `path` is a module of the scalecheck package, else None."""
    try:
        return "scalecheck/" + Path(path).resolve().relative_to(PACKAGE).as_posix()
    except ValueError:
        return None


def _crash_site(trace: str) -> str:
    """'ExceptionType in scalecheck/module.py function' from a traceback: the innermost frame of scalecheck."""
    frames = _FRAME.findall(trace)
    ours = [f for f in frames if scalecheck_file(f[0])] or frames
    last_line = [line for line in trace.strip().splitlines()
                 if line and not line.startswith((" ", "scalecheck: "))]
    exception = last_line[-1].split(":")[0] if last_line else "?"
    if not ours:
        return exception
    path, _, function = ours[-1]
    short = scalecheck_file(path) or Path(path).name
    return f"{exception} in {short} {function}"


def _traceback_of(stderr: str) -> str:
    start = stderr.rfind("Traceback (most recent call last):")
    return stderr[start:] if start >= 0 else ""


def _excerpt(text: str, at: int, width: int = 50) -> str:
    return repr(text[max(0, at - width):at + width])


def _hidden_class(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        return "C0 control"
    if code <= 0x9F:
        return "DEL or C1 control"
    if 0xD800 <= code <= 0xDFFF:
        return "lone surrogate"
    if code in (0x2028, 0x2029):
        return "line separator"
    return "bidirectional control"


def hidden_problems(name: str, text: str) -> list[Problem]:
    """One problem per class of hidden character in `text` (C0, C1, bidirectional, ...), showing the first."""
    first: dict[str, int] = {}
    for match in _HIDDEN.finditer(text):
        first.setdefault(_hidden_class(match.group()), match.start())
    return [Problem(f"{name}: hidden character ({what})", f"U+{ord(text[at]):04X} in {_excerpt(text, at)}")
            for what, at in first.items()]


def stream_problems(name: str, text: str, *, github: bool, cut: bool = False) -> list[Problem]:
    """Hidden characters and workflow commands in `text`, the stdout (`name` "stdout") or stderr of a run; `cut`:
    the text was cut short (its reader went away), so a stop-commands line may lack its resume line."""
    found = hidden_problems(name, text)
    token = None
    for number, line in enumerate(text.split("\n"), start=1):
        if "##[" in line:
            found.append(Problem(f"{name}: a line holds '##['", f"line {number}: {line[:200]!r}"))
        rest = line.lstrip(" \t")
        if not rest.startswith("::"):
            continue
        stop = _STOP.fullmatch(rest)
        annotation = _ANNOTATION.fullmatch(rest)
        if github and name == "stdout" and stop and token is None:
            token = stop.group(1)
        elif github and name == "stdout" and token is not None and rest == f"::{token}::":
            token = None
        elif github and name == "stdout" and annotation and rest == line and token is None:
            title, data = annotation.group(2), annotation.group(3)
            if title is not None and not title.startswith("scalecheck"):
                found.append(Problem(f"{name}: annotation title not scalecheck's", f"line {number}: {line[:200]!r}"))
            if title is not None and (_ESCAPED_PROPERTY.search(title) or "," in title):
                found.append(Problem(f"{name}: annotation title not escaped", f"line {number}: {line[:200]!r}"))
            if _ESCAPED_DATA.search(data):
                found.append(Problem(f"{name}: annotation message not %-escaped", f"line {number}: {line[:200]!r}"))
        else:
            found.append(Problem(f"{name}: a workflow command scalecheck did not write",
                                 f"line {number}: {line[:200]!r}"))
    if token is not None and not cut:
        found.append(Problem(f"{name}: stop-commands without its resume line", f"token {token}"))
    return found


def _error_problems(case: Case, folder: Path, outcome: Outcome) -> list[Problem]:
    """The exit-status-2 promise: one error line, last, naming an input file, with a fix."""
    lines = outcome.stderr.rstrip("\n").split("\n")
    errors = [line for line in lines if line.startswith("scalecheck: error: ")]
    if len(errors) != 1:
        return [Problem(f"exit 2 with {len(errors)} error lines" if errors else "exit 2 without an error line",
                        repr(outcome.stderr[-400:]))]
    line = errors[0]
    found = []
    if lines[-1] != line:
        found.append(Problem("exit 2: stderr goes on after the error line", repr(outcome.stderr[-400:])))
    names = [visible(str(path)) for path in case.paths(folder).values()]
    message = line[len("scalecheck: error: "):]
    if not any(name in line for name in names):
        found.append(Problem(f"exit 2: the error does not name the input file: {_generic(message, folder)}",
                             line[:400]))
    if "; fix: " not in line:
        found.append(Problem(f"exit 2: the error has no fix: {_generic(message, folder)}", line[:400]))
    return found


def _strict_json(text: str) -> None:
    def constant(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    json.loads(text, parse_constant=constant)


def _output_problems(case: Case, folder: Path, outcome: Outcome) -> list[Problem]:
    """Each output complete and valid, or as it was; written on success; no temporary file left behind."""
    found = []
    for name in case.outputs:
        path = folder / name
        flag = case.args[case.args.index(f"{{out:{name}}}") - 1]
        if not path.exists():
            if outcome.status in (0, 1):
                found.append(Problem(f"{flag} output missing after exit {outcome.status}", name))
            continue
        data = path.read_bytes()
        if case.previous and data == SENTINEL:
            if outcome.status in (0, 1):
                found.append(Problem(f"{flag} output not rewritten after exit {outcome.status}", name))
            continue
        try:
            text = data.decode("utf-8")
            if flag == "--json":
                _strict_json(text)
            elif flag == "--html" and not (text.lstrip().lower().startswith("<!doctype html")
                                           and text.rstrip().endswith("</html>")):
                raise ValueError("not a whole HTML page")
            elif flag == "--dot" and not (text.startswith("digraph") and text.rstrip().endswith("}")):
                raise ValueError("not a whole dot graph")
            elif flag == "--markdown" and not text.strip():
                raise ValueError("empty")
        except ValueError as err:  # UnicodeDecodeError and json.JSONDecodeError too
            found.append(Problem(f"{flag} output invalid: {_generic(str(err))}", f"{name}: {err}"))
            continue
        if flag == "--markdown":
            found += hidden_problems("--markdown output", text)
    left = sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))
    if left:
        found.append(Problem("temporary file left behind", ", ".join(left)))
    return found


def _github_problems(case: Case, folder: Path) -> list[Problem]:
    """The job summary under GitHub's limit and free of hidden characters; the step outputs in heredoc blocks."""
    found = []
    summary = (folder / "step_summary").read_bytes()
    if len(summary) > SUMMARY_LIMIT:
        found.append(Problem("job summary over GitHub's limit", f"{len(summary):,} bytes"))
    found += hidden_problems("job summary", summary[case.summary_used:].decode("utf-8", "replace"))
    outputs = (folder / "github_output").read_text(encoding="utf-8", errors="replace")
    rest = _HEREDOC.sub("", outputs)
    if rest:
        found.append(Problem("GITHUB_OUTPUT not in name<<delimiter blocks", repr(outputs[:300])))
    return found


def problems(case: Case, folder: Path, outcome: Outcome, *, slow: float = SLOW) -> list[Problem]:
    """Every promise the run of `case` in `folder` broke (empty when it kept them all)."""
    found = []
    if outcome.uncaught is not None:
        found.append(Problem(f"uncaught {_crash_site(outcome.uncaught)}", outcome.uncaught[-6000:]))
    elif outcome.timed_out:
        found.append(Problem(f"hang: still running after {TIMEOUT:g} s", f"stopped after {outcome.seconds:.1f} s"))
    elif outcome.status == 3:
        trace = _traceback_of(outcome.stderr)
        found.append(Problem(f"exit 3: {_crash_site(trace)}", trace[-6000:] or outcome.stderr[-6000:]))
    elif outcome.status not in (0, 1, 2) and not (outcome.status == OUTPUT_CLOSED and case.stdout_room is not None):
        found.append(Problem(f"exit status {outcome.status}", outcome.stderr[-400:]))
    if not outcome.timed_out and outcome.seconds > slow:
        found.append(Problem(f"slow: over {slow:g} s", f"{outcome.seconds:.1f} s"))
    if outcome.status != 3 and "Traceback (most recent call last)" in outcome.stderr:
        found.append(Problem(f"traceback on stderr with exit {outcome.status}: "
                             f"{_crash_site(_traceback_of(outcome.stderr))}", outcome.stderr[-1500:]))
    for category, message, filename, lineno, site in outcome.warnings:
        where = (site.split(":")[0] + " " + site.split(" ")[-1]) if site else Path(filename).name
        found.append(Problem(f"warning: {category} in {where}: {_generic(message)}",
                             f"{filename}:{lineno}: {category}: {message[:300]}"
                             + (f"\n  called from {site}" if site else "")))
    if _WARNING_TEXT.search(outcome.stderr):
        found.append(Problem("stderr: warning text", outcome.stderr[:400]))
    found += stream_problems("stdout", outcome.stdout, github=case.github, cut=case.stdout_room is not None)
    found += stream_problems("stderr", outcome.stderr, github=case.github)
    if outcome.status == 2:
        found += _error_problems(case, folder, outcome)
    elif outcome.status in (0, 1, OUTPUT_CLOSED) and "scalecheck: error: " in outcome.stderr:
        found.append(Problem(f"an error line with exit {outcome.status}", outcome.stderr[-400:]))
    found += _output_problems(case, folder, outcome)
    if case.github:
        found += _github_problems(case, folder)
    first = {}
    for problem in found:
        first.setdefault(problem.kind, problem)  # a warning repeated in a loop is one problem of the case
    return list(first.values())
