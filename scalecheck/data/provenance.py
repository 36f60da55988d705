"""How the two sides of a check were measured: in the same job (alternating rounds), or apart.

A check compares like with like only when both sides come from one machine under one load. `SameJob` records a
same-job run (both commits measured here, round by round); `MachineMatch` (see `scalecheck.data.machine`) says
whether two stored runs come from the same machine.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class SameJob:
    """Both sides were measured in this job: `rounds` rounds, each running the command once per side, the order
    alternating (baseline first in odd rounds, candidate first in even ones: ABBA), so that drift, load and cache
    state hit both sides alike."""

    rounds: int
    baseline_commit: str  # full sha of the baseline commit measured in a worktree
    candidate_commit: str  # full sha of HEAD (the candidate is the working tree as it is)
    command: str  # the measurement command as run, for the reader of a report

    def __post_init__(self) -> None:
        if self.rounds < 1:
            raise ValueError(f"rounds must be at least 1, got {self.rounds}")

    def text(self) -> str:
        """One sentence for the reports."""
        return (f"both sides measured in this job, {self.rounds} round{'s' if self.rounds != 1 else ''} "
                "alternating baseline and candidate")
