"""This machine's factors: how much dearer per byte (per read) it is at each measured size than at the smallest,
from the reference timings `Measurer` takes beside the function (`Measured.copy_seconds`, `gather_seconds`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scalecheck.pytest_plugin._measure import Measured, number_text

MACHINE_CAP = 0.5  # a machine factor never exceeds (size / smallest size)^MACHINE_CAP: half a polynomial degree


@dataclass(frozen=True)
class MachineFactors:
    """How much dearer per byte (per read) this machine's reference is at each point than at the smallest."""

    factors: dict[tuple[float, ...], float]  # >= 1, nondecreasing with the footprint; 1 where not measured
    base: tuple[float, ...]  # the point of smallest footprint
    copy: dict[tuple[float, ...], float]  # reference copy: seconds per byte relative to `base`
    gather: dict[tuple[float, ...], float]  # reference random reads: seconds per read relative to `base`
    capped: dict[tuple[float, ...], float]  # points where the cap (half a degree) applied: the uncapped factor

    def text(self, point: tuple[float, ...], parameters: Sequence[str]) -> str:
        """One sentence on the factor at `point` for a failure message ("" when it is 1)."""
        factor = self.factors.get(point, 1.0)
        if factor <= 1.0:
            return ""

        def at(p: tuple[float, ...]) -> str:
            return ", ".join(f"{name}={number_text(x)}" for name, x in zip(parameters, p))

        which = ("reference copy costs {:.2g}x more per byte" if self.copy.get(point, 1.0) >= self.gather.get(point, 1.0)
                 else "reference random reads cost {:.2g}x more per read")
        raw = max(self.copy.get(point, 1.0), self.gather.get(point, 1.0))
        text = f"this machine's {which.format(raw)} at {at(point)} than at {at(self.base)}; judged relative to it"
        if point in self.capped:
            text += f" (counted as {factor:.2g}x: at most half a degree of growth over these sizes)"
        return text


def machine_factors(measured: Measured) -> MachineFactors | None:
    """The machine factor M >= 1 of each measured point from the reference timings (medians over the rounds).

    M = max(copy, gather, 1): the reference copy's seconds per byte, or the reference gather's seconds per read,
    relative to those at the point of smallest footprint; made nondecreasing with the footprint (a memory
    hierarchy only gets dearer further out) and capped at (size / smallest size)^MACHINE_CAP, so that it can
    explain a memory hierarchy but never a whole degree of growth. None without reference timings at 2 points.
    """
    timed = [p for p in measured.copy_seconds if measured.copy_seconds[p] and measured.footprint.get(p, 0) > 0]
    if len(timed) < 2:
        return None
    timed.sort(key=lambda p: (measured.footprint[p], math.prod(p)))
    per_byte = {p: float(np.median(measured.copy_seconds[p])) / measured.footprint[p] for p in timed}
    per_read = {p: float(np.median(measured.gather_seconds[p])) for p in timed}
    base = timed[0]
    if not (per_byte[base] > 0 and per_read[base] > 0):
        return None
    copy = {p: per_byte[p] / per_byte[base] for p in timed}
    gather = {p: per_read[p] / per_read[base] for p in timed}
    factors: dict[tuple[float, ...], float] = {}
    capped: dict[tuple[float, ...], float] = {}
    running = 1.0
    for p in timed:
        running = max(running, copy[p], gather[p])
        cap = (math.prod(p) / math.prod(base)) ** MACHINE_CAP if math.prod(p) > math.prod(base) else 1.0
        factors[p] = min(running, max(1.0, cap))
        if running > factors[p]:
            capped[p] = running
    for p in measured.values:
        factors.setdefault(p, 1.0)
    return MachineFactors(factors, base, copy, gather, capped)
