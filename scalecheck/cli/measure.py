"""L6: `scalecheck measure`: run a command at several parameter values and write a measurement file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scalecheck.cli._common import INTERRUPTED, OK, USAGE_ERROR, command

EPILOG = """\
examples:
  scalecheck measure --param p=1,2,4,8,16 --repeat 5 -- ./bench --procs {p}
  scalecheck measure --param p=2,4,8 --param n=1000,10000 --out bench.json -- python3 bench.py {p} {n}
  scalecheck measure --param n=64,128,256 --timeout 60 --keep-going --commit "$(git rev-parse HEAD)" \\
      --shell -- 'mpirun -n 4 ./solver --size {n} > /dev/null'

The command runs once per combination of the --param values, in rounds (every point once,
then again, --repeat times). {NAME} in the command becomes the value (also in the
environment as NAME). Without --shell the arguments run as a list, never through a shell.
Each run's wall time is recorded (kernel: the program's name, metric time, unit s); the
command can add its own metrics as JSON lines written to $SCALECHECK_METRICS
  {"kernel": "solve", "metric": "time", "unit": "s", "value": 0.12}
The output file is rewritten atomically after every completed run; an existing one is added to.

exit status: 0 every run succeeded, 2 bad usage or input, a failed run or a malformed
metrics line, 3 internal error, 130 interrupted (Ctrl-C)."""


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    measure = command(
        commands, "measure", help="run a command at several parameter values and write a measurement file",
        usage="scalecheck measure --param NAME=V1,V2,... [--param ...] [options] -- COMMAND [ARG ...]",
        description="Run COMMAND for every combination of parameter values, --repeat times each, and write its "
                    "wall time and the metrics it reports to a scalecheck JSON measurement file.",
        epilog=EPILOG)
    measure.add_argument("--param", action="append", required=True, metavar="NAME=V1,V2,...",
                         help="a parameter and its values, e.g. p=1,2,4,8 (repeatable: the cross product is measured)")
    measure.add_argument("--repeat", type=int, default=5, metavar="N",
                         help="repetitions per point (default 5)")
    measure.add_argument("--kernel", metavar="NAME",
                         help="kernel name of the wall time (default: the program's file name, or the script's "
                              "for a Python interpreter running a .py file)")
    measure.add_argument("--out", type=Path, default=Path("measurements.json"), metavar="FILE",
                         help="the measurement file; an existing one is added to (default measurements.json)")
    measure.add_argument("--shell", action="store_true",
                         help="run the command, its arguments joined with spaces, through the shell")
    measure.add_argument("--timeout", type=float, metavar="SECONDS",
                         help="kill a run after this long and count it as failed (default: no limit)")
    measure.add_argument("--keep-going", action="store_true",
                         help="report a failed run, skip it and go on; exit status 2 at the end if any failed")
    measure.add_argument("--show-output", action="store_true",
                         help="pass the command's stdout through (default: discarded; turns the progress bar off)")
    measure.add_argument("--commit", metavar="SHA", help="the commit measured, stored as meta.commit")
    measure.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARG ...]",
                         help="the command; {NAME} is replaced by the value of parameter NAME")
    measure.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from scalecheck.measure import failure_text, measure, plan_measurements, progress_line, summary_line

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    plan = plan_measurements(args.param, command, repeat=args.repeat, kernel=args.kernel, out=args.out,
                             shell=args.shell, timeout=args.timeout, keep_going=args.keep_going,
                             show_output=args.show_output, commit=args.commit)
    bar = _ProgressBar() if sys.stderr.isatty() and not args.show_output else None

    def on_failure(failure) -> None:  # type: ignore[no-untyped-def]
        if bar is not None:
            bar.clear()
        prefix = "scalecheck: " if args.keep_going else "scalecheck: error: "
        print(prefix + failure_text(failure), file=sys.stderr)

    try:
        summary = measure(plan, on_step=(lambda step, seconds: bar.show(progress_line(step, seconds, bar.width)))
                          if bar is not None else None, on_failure=on_failure)
    finally:
        if bar is not None:
            bar.clear()
    kept = f"kept {summary.runs} of {summary.total} runs in {summary.out}" if summary.runs \
        else f"no run completed; {summary.out} {'unchanged' if summary.appended else 'not written'}"
    if summary.interrupted:
        print(f"scalecheck: interrupted; {kept}", file=sys.stderr)
        return INTERRUPTED
    if summary.stopped:
        print(f"scalecheck: stopped; {kept}\n  fix: correct the command, or pass --keep-going to skip failed runs",
              file=sys.stderr)
        return USAGE_ERROR
    print(summary_line(summary))
    if summary.failures:
        print(f"scalecheck: error: {len(summary.failures)} of {summary.total} runs failed (reported above); {kept}",
              file=sys.stderr)
        return USAGE_ERROR
    return OK


class _ProgressBar:
    """One status line on stderr, redrawn in place with \\r."""

    def __init__(self) -> None:
        import shutil

        self.width = shutil.get_terminal_size((80, 24)).columns
        self._shown = 0

    def show(self, line: str) -> None:
        sys.stderr.write("\r" + line + " " * max(self._shown - len(line), 0))
        sys.stderr.flush()
        self._shown = len(line)

    def clear(self) -> None:
        if self._shown:
            sys.stderr.write("\r" + " " * self._shown + "\r")
            sys.stderr.flush()
            self._shown = 0
