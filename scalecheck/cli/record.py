"""L6: `scalecheck record`: store a commit's measurements on the data branch."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scalecheck.cli._common import OK, command
from scalecheck.cli._settings import add_settings, settings


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    record = command(commands, "record", help="store a commit's measurements on the data branch",
                     description="Commit the measurement files, converted to scalecheck's JSON, to the data branch as "
                                 "<commit sha>.json, without touching the working tree or the index. Push the branch "
                                 "to share it (git push origin scalecheck-data).",
                     epilog="example:\n  scalecheck record bench/results.json --commit HEAD\n\nexit status: 0 "
                            "recorded, 2 bad input or usage, 3 internal error.")
    record.add_argument("files", nargs="*", metavar="FILE", type=Path,
                        help="measurement files (default: the measurements setting)")
    record.add_argument("--commit", default="HEAD", metavar="REF", help="the commit measured (default HEAD)")
    add_settings(record, "record")
    record.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from scalecheck.api import record

    config = settings(args, "record")
    sha, data_sha, measured = record(args.files, args.commit, config)
    print(f"recorded {len(measured.series)} series for commit {sha[:7]} on branch '{config.data_branch}' "
          f"(data commit {data_sha[:7]}); share it with: git push origin {config.data_branch}")
    return OK
