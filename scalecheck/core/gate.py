"""The gate: the only place where a comparison becomes pass or fail."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from scalecheck.data.verdict import KINDS, Comparison, Finding, Verdict

DEFAULT_FAIL_ON = ("growth", "prediction", "expectation")
_ORDER = {"error": 0, "warning": 1, "notice": 2}


def verdict(comparison: Comparison, fail_on: Sequence[str] = DEFAULT_FAIL_ON,
            extra: Sequence[Finding] = ()) -> Verdict:
    """Give every finding its severity and decide: failed when any finding's kind is in `fail_on`.

    `extra` holds findings of other analyses (overhead, process structure) that take part in the same decision.
    Improvements are notices and never fail. Findings come out worst first: severity, then kind (in `KINDS`
    order), then kernel.
    """
    unknown = [kind for kind in fail_on if kind not in KINDS or kind == "improvement"]
    if unknown:
        raise ValueError(f"fail_on holds kinds that cannot fail a build: {unknown}")
    graded = [replace(f, severity="notice" if f.kind == "improvement" else "error" if f.kind in fail_on
                      else "warning") for f in (*comparison.findings, *extra)]
    graded.sort(key=lambda f: (_ORDER[f.severity], KINDS.index(f.kind), f.kernel, f.metric))
    return Verdict(comparison, tuple(graded), tuple(fail_on))
