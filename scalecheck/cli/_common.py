"""L6: what every command shares: exit statuses, the argument parser's error line, the help formatter."""

from __future__ import annotations

import argparse
import sys

from scalecheck.text import visible

OK, REGRESSION, USAGE_ERROR, INTERNAL_ERROR = 0, 1, 2, 3
INTERRUPTED = 130  # 128 + SIGINT, as shells report a program stopped by Ctrl-C
DOCS = "https://github.com/scalecheck/scalecheck/blob/main/docs/cli.md"  # the full reference of every command


class Parser(argparse.ArgumentParser):
    """argparse with scalecheck's error line (exit status 2, no usage dump for a bad value)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"scalecheck: error: {visible(message)}", file=sys.stderr)  # it may quote the user's arguments
        sys.exit(USAGE_ERROR)


def command(commands: argparse._SubParsersAction, name: str, *, help: str, description: str,  # type: ignore[type-arg]
            epilog: str, usage: str | None = None) -> argparse.ArgumentParser:
    """A subcommand whose epilog (examples, exit statuses) keeps its line breaks and ends with the reference link."""
    return commands.add_parser(name, help=help, description=description, usage=usage,
                               epilog=f"{epilog.rstrip()}\n\nreference: {DOCS}#{name}\n",
                               formatter_class=argparse.RawDescriptionHelpFormatter)
