"""L6: `scalecheck history`: each kernel's model and growth over the measured commits."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scalecheck.cli._common import OK, command
from scalecheck.cli._settings import add_settings, settings
from scalecheck.errors import ConfigError


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    history = command(commands, "history", help="each kernel's model and growth over the measured commits",
                      description="Model the measurements of every commit on the first-parent history of REF that "
                                  "has some, and show each kernel's growth class per commit and the commits where it "
                                  "changed.",
                      epilog="example:\n  scalecheck history --ref main --kernel 'solver->*'\n\nexit status: 0 "
                             "success, 2 bad input or usage, 3 internal error.")
    history.add_argument("--ref", default="HEAD", help="where the walk starts (default HEAD)")
    history.add_argument("--limit", type=int, default=50, metavar="N",
                         help="most measured commits to show (default 50)")
    history.add_argument("--json", type=Path, metavar="OUT", help="also write the history as JSON (atomically)")
    add_settings(history, "history")
    history.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from scalecheck.api import history
    from scalecheck.report.history_report import render_history_json, render_history_text
    from scalecheck.files import check_outputs, write_atomic

    if args.limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {args.limit}", fix="use --limit 1 or more")
    check_outputs({"--json": args.json})  # before the work
    entries = history(args.ref, settings(args, "history"), limit=args.limit)
    if args.json is not None:
        write_atomic(args.json, render_history_json(entries))
    sys.stdout.write(render_history_text(entries))
    return OK
