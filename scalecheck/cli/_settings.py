"""L6: the flags of the settings, generated from the option table (`scalecheck.config.OPTIONS`), and the
settings a command runs with: the settings file, then its flags."""

from __future__ import annotations

import argparse
from pathlib import Path

from scalecheck.config import FLAGS, OPTIONS, Config, load_config

_GROUPS = {"": None, "search": "model search", "gate": "gate", "expectations": "gate"}


def add_settings(parser: argparse.ArgumentParser, command: str) -> None:
    """--config, and a flag for every setting that `command` takes (default None: keep the file's value)."""
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="settings file (pyproject.toml with [tool.scalecheck], or scalecheck.toml; default: the "
                             "one found from the working folder upwards)")
    groups: dict[str | None, argparse._ActionsContainer] = {None: parser}
    for name, option in OPTIONS.items():
        if command not in option.commands:
            continue
        title = _GROUPS[option.table]
        if title not in groups:
            groups[title] = parser.add_argument_group(title)
        shown = option.form not in ("on", "off") and option.default not in (None, ())  # else the help says it
        default = f" (default: {option.default_text})" if shown else ""
        if option.form in ("on", "off"):
            groups[title].add_argument(FLAGS[name], dest=name, action="store_true", default=None,
                                       help=option.help + default)
        else:
            groups[title].add_argument(FLAGS[name], dest=name, metavar=option.metavar,
                                       action="append" if option.form in ("list", "expect") else "store",
                                       choices=option.choices, help=option.help + default)


def settings(args: argparse.Namespace, command: str) -> Config:
    """The settings file's values (`--config`, or the file found from the working folder) with the flags given."""
    config = load_config(getattr(args, "config", None))
    return config.with_flags({name: getattr(args, name, None) for name, option in OPTIONS.items()
                              if command in option.commands})
