"""The gate: the only place where a comparison becomes pass or fail.

Like with like: when the two sides were measured on different machines (or one side's machine is not known), a
level difference says more about the machines than about the code. A slower runner shifts every kernel by a
constant factor; a different cache hierarchy shifts the sizes beyond a cache by a bounded factor. So across
machines (`machines_differ`, the reason):

- `measured`, `overhead` and `segmentation` findings are reported but held back (a warning);
- a `growth` or `prediction` finding still fails when the change is far beyond what a memory hierarchy does
  (`CrossMachine`): the ratio candidate / baseline rose at least `min_rise` times across the measured range both
  sides share, and at least as fast as span^`min_slope` (span: how many times larger the largest shared scale is
  than the smallest), so a logarithm factor over a very wide range does not pass for a new complexity class;
  otherwise it is held back too;
- `expectation` and `structure` findings fail as always: they compare the candidate with a stated bound or with
  call pairs, not with the other machine's timings.

Findings about renamed kernels (`core.renames`) rest on a guess from the names: a `renamed` finding is always a
warning and a `replaced` finding a notice, and neither kind can be listed in `fail_on`. A renamed kernel fails the
build through the expectation that covers its new name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from scalecheck.data.verdict import KINDS, Comparison, Finding, Verdict
from scalecheck.names import DEFAULT_FAIL_ON as DEFAULT_FAIL_ON  # re-exported: the kinds that fail by default

MACHINE_KINDS = ("growth", "prediction", "measured", "overhead", "segmentation")  # a machine can explain them
NEVER_FAIL = {"renamed": "warning", "replaced": "notice", "improvement": "notice"}  # kind -> its fixed severity
_ORDER = {"error": 0, "warning": 1, "notice": 2}


@dataclass(frozen=True)
class CrossMachine:
    """How far beyond a memory hierarchy a growth change must go to fail a build across machines.

    A cache or memory level changes the cost per element by a bounded factor (a few times from L1 to main memory
    for streaming access), once per level, so the ratio of two machines' timings stays within such a factor over
    any range; a higher complexity class keeps growing with the scale. p -> p^(3/2) over sizes 1k..128k rises
    11x (slope 1/2); a log factor there rises 1.7x, and 20x over 1..10^6 (slope 0.22).
    """

    min_rise: float = 4.0  # the ratio candidate/baseline must grow at least this much across the shared range
    min_slope: float = 0.25  # and at least as fast as span^min_slope

    def __post_init__(self) -> None:
        if not self.min_rise > 1 or not self.min_slope > 0:
            raise ValueError(f"min_rise must be > 1 and min_slope > 0, got {self.min_rise}, {self.min_slope}")

    def beyond_hierarchy(self, finding: Finding) -> bool:
        rise, span = finding.rise, finding.span
        return (finding.kind in ("growth", "prediction") and rise is not None and span is not None and span > 1
                and rise >= self.min_rise and math.log(rise) >= self.min_slope * math.log(span))


def verdict(comparison: Comparison, fail_on: Sequence[str] = DEFAULT_FAIL_ON,
            extra: Sequence[Finding] = (), *, machines_differ: str = "",
            cross_machine: CrossMachine = CrossMachine()) -> Verdict:
    """Give every finding its severity and decide: failed when any finding's kind is in `fail_on`.

    `extra` holds findings of other analyses (overhead, process structure) that take part in the same decision.
    `machines_differ` says why the two sides are not like with like ("" when they are): findings that a machine
    difference can explain are then held back (module docstring). Improvements and replacements are notices and
    renames warnings (`NEVER_FAIL`): they never fail.
    Findings come out worst first: severity, then kind (in `KINDS` order), then kernel.
    """
    unknown = [kind for kind in fail_on if kind not in KINDS or kind in NEVER_FAIL]
    if unknown:
        raise ValueError(f"fail_on holds kinds that cannot fail a build: {unknown}")
    graded = [_grade(f, fail_on, machines_differ, cross_machine) for f in (*comparison.findings, *extra)]
    graded.sort(key=lambda f: (_ORDER[f.severity], KINDS.index(f.kind), f.kernel, f.metric))
    return Verdict(comparison, tuple(graded), tuple(fail_on))


def _grade(f: Finding, fail_on: Sequence[str], machines_differ: str, cross_machine: CrossMachine) -> Finding:
    if f.kind in NEVER_FAIL:
        return replace(f, severity=NEVER_FAIL[f.kind])
    if f.kind not in fail_on:
        return replace(f, severity="warning")
    if machines_differ and f.kind in MACHINE_KINDS and not cross_machine.beyond_hierarchy(f):
        why = "a level difference" if f.rise is None else (
            f"a difference within what a memory hierarchy does (the ratio rises {f.rise:.3g}x across the measured "
            "range)")
        return replace(f, severity="warning", held=f"held back: {machines_differ}, and this can be {why}")
    return replace(f, severity="error")

