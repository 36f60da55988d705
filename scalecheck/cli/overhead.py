"""L6: `scalecheck overhead`: necessary time versus overhead in an event trace (t_max per operation)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scalecheck.cli._common import OK, command
from scalecheck.errors import ConfigError

EPILOG = """\
examples:
  scalecheck overhead --calibration examples/overhead/calibration.jsonl examples/overhead/events.csv
  scalecheck overhead --calibration cal.csv trace.jsonl --quantile 0.9 --json overhead.json
  scalecheck overhead --calibration cal.jsonl trace.csv --resolution 1e-7 --interpolation log

The calibration holds, per operation, samples of repeated timings at process counts p and
message sizes b (at least 10 per sample, about 200 recommended); t_max is the q_max quantile
of the noise model fitted to each sample. An event's overhead is max(0, t - t_max(p, b)),
summed per source location and operation.

files (JSON Lines or CSV, told apart by the extension; times in seconds unless a unit of
ms, us or ns is given):
  calibration  {"operation": "MPI_Send", "p": 8, "bytes": 1024, "times": [2.1e-05, ...]}
               or CSV operation,p,bytes,time[,unit][,resolution], a row per timing
  events       {"location": "msg.c:311", "operation": "MPI_Send", "p": 8, "bytes": 1024,
                "time": 3.1e-05}, or CSV location,operation,p,bytes,time[,unit]

exit status: 0 success, 2 bad input or usage, 3 internal error."""


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    overhead = command(
        commands, "overhead", help="separate necessary time from overhead in an event trace (t_max per operation)",
        description="Fit a noise model to every calibration sample, derive t_max per operation, process count and "
                    "message size, and rank the source locations of an event trace by their time above t_max.",
        epilog=EPILOG)
    overhead.add_argument("events", metavar="EVENTS", type=Path,
                          help="the event trace: location, operation, p, bytes and time of every event")
    overhead.add_argument("--calibration", metavar="CAL", type=Path, required=True,
                          help="repeated timings of each operation at several process counts and message sizes")
    overhead.add_argument("--quantile", type=float, default=0.95, metavar="Q",
                          help="q_max: t_max is this quantile of the noise model, in [0.8, 1) (default 0.95)")
    overhead.add_argument("--resolution", type=float, metavar="SECONDS",
                          help="timer resolution for samples that do not give one (default: the step the timings "
                               "lie on, else a sixteenth of their interquartile range)")
    overhead.add_argument("--interpolation", choices=("linear", "log"), default="linear",
                          help="between calibrated points: bilinear in (p, b) (default), or in (log p, log(1 + b)) "
                               "with log t_max")
    overhead.add_argument("--alpha", type=float, default=0.01, metavar="A",
                          help="level of the chi-square test that accepts or rejects a noise model (default 0.01)")
    overhead.add_argument("--refine", action="store_true",
                          help="move each model's parameter to the minimum of chi^2 after maximum likelihood")
    overhead.add_argument("--json", type=Path, metavar="OUT",
                          help="also write the ranking and every calibration point's noise model as JSON "
                               "(atomically)")
    overhead.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from scalecheck.api import overhead
    from scalecheck.files import check_outputs, write_atomic
    from scalecheck.report.overhead_report import OverheadContext, render_overhead_json, render_overhead_text

    if not 0.8 <= args.quantile < 1:
        raise ConfigError(f"--quantile must be at least 0.8 and less than 1, got {args.quantile:g}",
                          fix="use a quantile such as 0.95 (Kluge et al.: 0.8 <= q_max < 1)")
    if args.resolution is not None and not args.resolution > 0:
        raise ConfigError(f"--resolution must be a positive number of seconds, got {args.resolution:g}",
                          fix="give the timer resolution in seconds, e.g. --resolution 1e-7, or leave it out")
    if not 0 < args.alpha < 1:
        raise ConfigError(f"--alpha must be between 0 and 1, got {args.alpha:g}", fix="use a level such as 0.01")
    check_outputs({"--json": args.json})  # before the work
    result = overhead(args.calibration, args.events, quantile=args.quantile, resolution=args.resolution,
                      interpolation=args.interpolation, alpha=args.alpha, refine=args.refine)
    context = OverheadContext(str(args.calibration), str(args.events))
    if args.json is not None:
        write_atomic(args.json, render_overhead_json(result.table, context))
    sys.stdout.write(render_overhead_text(result.table, context))
    return OK
