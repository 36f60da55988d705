"""L6: what every command shares: exit statuses, the argument parser's error line, the help formatter."""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from scalecheck.text import visible

OK, REGRESSION, USAGE_ERROR, INTERNAL_ERROR = 0, 1, 2, 3
INTERRUPTED = 130  # 128 + SIGINT, as shells report a program stopped by Ctrl-C
OUTPUT_CLOSED = 141  # 128 + SIGPIPE: what shells report for a program whose reader closed the pipe (`| head`)
DOCS = "https://github.com/scalecheck/scalecheck/blob/main/docs/cli.md"  # the full reference of every command


class Parser(argparse.ArgumentParser):
    """argparse with scalecheck's error line: `scalecheck: error: <problem>; fix: <fix>`, one line, exit status 2,
    no usage dump. A mistyped flag, subcommand or choice gets the closest valid one (difflib, as the settings file
    does) on every Python version scalecheck supports; argparse's own suggest_on_error (Python 3.14) stays off, so
    that nothing is suggested twice."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.suggest_on_error = False

    def error(self, message: str) -> NoReturn:
        problem, _, fix = message.partition("; fix: ")
        fix = fix or f"see {self.prog} --help"
        print(f"scalecheck: error: {visible(problem)}; fix: {visible(fix)}", file=sys.stderr)  # it may quote the
        sys.exit(USAGE_ERROR)                                                                  # user's arguments

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            chosen = self._chosen(parsed)
            chosen.error(_unrecognized(chosen, extras))
        return parsed

    def _chosen(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The parser of the subcommand that `parsed` names (this one without a subcommand): its flags are the ones
        a mistyped flag was meant to be."""
        parser: argparse.ArgumentParser = self
        while True:
            commands = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
            name = getattr(parsed, commands.dest, None) if commands is not None else None
            if commands is None or not isinstance(name, str) or name not in commands.choices:
                return parser
            parser = commands.choices[name]

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """An invalid choice (a subcommand, --format, ...) names the closest valid one."""
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(choice) for choice in choices]
        close = difflib.get_close_matches(str(value), names, n=1)
        fix = f"did you mean '{close[0]}'?" if close else f"see {self.prog} --help"
        raise argparse.ArgumentError(action, f"invalid choice: {value!r} (choose from "
                                             f"{', '.join(repr(n) for n in names)}); fix: {fix}")


def _unrecognized(parser: argparse.ArgumentParser, extras: Sequence[str]) -> str:
    """The error for arguments no option of `parser` takes, with the closest of its flags for each mistyped one."""
    flags = [flag for action in parser._actions for flag in action.option_strings if flag.startswith("--")]
    guesses = []
    for word in extras:
        if word.startswith("--"):
            close = difflib.get_close_matches(word.split("=", 1)[0], flags, n=1)
            if close:
                guesses.append((word.split("=", 1)[0], close[0]))
    if len(guesses) == 1:
        fix = f"did you mean '{guesses[0][1]}'?"
    elif guesses:
        fix = "did you mean " + ", ".join(f"'{flag}' for '{word}'" for word, flag in guesses) + "?"
    else:
        fix = f"see {parser.prog} --help"
    return f"unrecognized arguments: {' '.join(extras)}; fix: {fix}"


def command(commands: argparse._SubParsersAction, name: str, *, help: str, description: str,  # type: ignore[type-arg]
            epilog: str, usage: str | None = None) -> argparse.ArgumentParser:
    """A subcommand whose epilog (examples, exit statuses) keeps its line breaks and ends with the reference link."""
    return commands.add_parser(name, help=help, description=description, usage=usage,
                               epilog=f"{epilog.rstrip()}\n\nreference: {DOCS}#{name}\n",
                               formatter_class=argparse.RawDescriptionHelpFormatter)
