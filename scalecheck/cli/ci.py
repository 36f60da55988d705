"""L6: `scalecheck ci`, what the GitHub Action runs (placeholder until the command is written)."""

from __future__ import annotations

import argparse


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register `scalecheck ci`."""
