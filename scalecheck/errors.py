"""L0: where a problem is (`Location`), the error tree users can fix, and the warnings.

An error prints as one line: where, what is wrong, each detail and the fix, joined by "; ", every part made visible
(`scalecheck.text.visible`): a file name, a record or a message that quotes a file can neither break the line,
nor hide or reorder text, nor start a GitHub workflow command.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scalecheck.text import visible


@dataclass(frozen=True)
class Location:
    """A place in a user's input: a file, optionally a 1-based line and a record (``measurements[3]``)."""

    path: Path
    line: int | None = None
    record: str | None = None

    def __str__(self) -> str:
        path = visible(str(self.path))
        where = f"{path}:{self.line}" if self.line else path
        return f"{where}: {visible(self.record)}" if self.record else where


class ScalecheckError(Exception):
    """Something the user can fix. The CLI and the pytest plugin print it without a traceback."""

    def __init__(self, problem: str, *, where: Location | None = None, fix: str | None = None,
                 details: Sequence[str] = ()) -> None:
        super().__init__(problem)
        self.problem, self.where, self.fix = problem, where, fix
        self.details = tuple(details)  # parts shown between the problem and the fix, e.g. the offending input

    def __str__(self) -> str:
        problem = visible(self.problem)
        parts = [f"{self.where}: {problem}" if self.where else problem]
        parts += [visible(detail) for detail in self.details]
        if self.fix:
            parts.append(f"fix: {visible(self.fix)}")
        return "; ".join(parts)


class InputError(ScalecheckError):
    """A measurement file is missing, unreadable or malformed."""


class ConfigError(ScalecheckError):
    """A command-line option or configuration value is wrong."""


class HistoryError(ScalecheckError):
    """The git history cannot give what was asked: no repository, an unknown ref, no recorded baseline."""


class NoBaselineError(HistoryError):
    """No commit on the baseline side has measurements yet (a first pull request): a check passes with a notice
    unless the settings make it fail."""


class ModelingError(ScalecheckError):
    """The data cannot be modeled as asked (for example a target names an unknown parameter)."""


class GitHubError(ScalecheckError):
    """The GitHub environment or API cannot do what was asked: no token, a read-only token, no pull request."""


class ScalecheckWarning(UserWarning):
    """Base of scalecheck's warnings."""


class PoorFitWarning(ScalecheckWarning):
    """A model was fitted but describes the data badly."""
