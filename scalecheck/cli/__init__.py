"""L6: the `scalecheck` command: one module per subcommand, each a short call into `scalecheck.api` and the
renderers (`ci`, the GitHub Action's job, runs the other commands in turn and pushes the data branch). The only
place that prints errors and picks exit codes.

Heavy modules (numpy, scipy, the readers) are imported inside the command functions, so `scalecheck --help`
stays fast; the settings' flags come from the option table (`scalecheck.config`).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from scalecheck import __version__
from scalecheck.cli import ci, check, cluster, comment, history, measure, model, overhead, record
from scalecheck.cli._common import INTERNAL_ERROR, INTERRUPTED, OK, REGRESSION, USAGE_ERROR, Parser
from scalecheck.errors import ScalecheckError
from scalecheck.names import AGGREGATE_NAMES, FORMAT_NAMES

__all__ = ["AGGREGATE_NAMES", "FORMAT_NAMES", "INTERNAL_ERROR", "INTERRUPTED", "OK", "REGRESSION", "USAGE_ERROR",
           "build_parser", "main"]
COMMANDS = (model, check, record, history, comment, cluster, overhead, measure, ci)  # in the order --help lists


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="scalecheck", description="Catch scalability bugs: fit performance models to "
                    "measurements taken at several scales, and find the kernels that will not scale.")
    parser.add_argument("--version", action="version", version=f"scalecheck {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for module in COMMANDS:
        module.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return USAGE_ERROR
    try:
        return int(args.run(args))
    except ScalecheckError as err:
        print(f"scalecheck: error: {err}", file=sys.stderr)
        return USAGE_ERROR
    except Exception:  # noqa: BLE001 - the one place that turns a crash into exit status 3
        traceback.print_exc()
        print("scalecheck: internal error - please report it with the traceback above", file=sys.stderr)
        return INTERNAL_ERROR
