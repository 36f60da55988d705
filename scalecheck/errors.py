"""L0: where a problem is (`Location`), the error tree users can fix, and the warnings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Location:
    """A place in a user's input: a file, optionally a 1-based line and a record (``measurements[3]``)."""

    path: Path
    line: int | None = None
    record: str | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.record}" if self.record else where


class ScalecheckError(Exception):
    """Something the user can fix. The CLI and the pytest plugin print it without a traceback."""

    def __init__(self, problem: str, *, where: Location | None = None, fix: str | None = None) -> None:
        super().__init__(problem)
        self.problem, self.where, self.fix = problem, where, fix

    def __str__(self) -> str:
        text = f"{self.where}: {self.problem}" if self.where else self.problem
        return f"{text}\n  fix: {self.fix}" if self.fix else text


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
