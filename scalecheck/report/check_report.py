"""Render a check's `Verdict` as terminal text (every line made visible) and as scalecheck's check JSON."""

from __future__ import annotations

import json
import math
from collections import Counter

from scalecheck.data.outcome import KernelModel
from scalecheck.data.verdict import Finding, KernelComparison, Verdict
from scalecheck.data.views import CheckContext
from scalecheck.text import visible


def render_check_text(verdict: Verdict, context: CheckContext) -> str:
    """The verdict first, then one row per finding (worst first) with its evidence, then what was compared."""
    comparison = verdict.comparison
    where = ", ".join(f"{k}={v:g}" for k, v in comparison.target.items())
    lines = [headline(verdict)] + [f"notice: {text}" for text in context.notices]
    lines += ["", f"baseline:  {context.baseline}", f"candidate: {context.candidate_text}"]
    lines += [f"{label + ':':<10} {text}" for label, text in context.measured()]
    lines.append(f"target:    {where}" + (f" ({context.target_note})" if context.target_note else ""))
    if verdict.findings:
        head = ("severity", "kind", "kernel", "metric", "baseline", "candidate", f"ratio at {where}", "P", "q")
        rows = [head] + [_row(f) for f in verdict.findings]
        widths = [max(len(r[c]) for r in rows) for c in range(len(head))]
        lines += [""] + ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows[:1]]
        lines.append("  ".join("-" * w for w in widths))
        for f, r in zip(verdict.findings, rows[1:]):
            lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
            lines.append(f"    {f.message}")
            if f.held:
                lines.append(f"    {f.held}")
            for name in ("baseline", "candidate", "basis"):
                if f.evidence.get(name):
                    lines.append(f"    {name}: {f.evidence[name]}")
    counts = Counter(k.status for k in comparison.kernels)
    parts = [f"{counts[s]} {s}" for s in ("compared", "new", "removed", "unmodeled") if counts[s]]
    lines += ["", f"{len(comparison.kernels)} kernel(s): {', '.join(parts)}; {comparison.resamples} bootstrap "
              f"resamples per side, seed {comparison.seed}; failing kinds: {', '.join(verdict.fail_on) or 'none'}"]
    notes = [f"  {k.kernel} [{k.metric}]: {k.note}" for k in comparison.kernels if k.note]
    if notes:
        lines += ["notes:"] + notes
    return "\n".join(visible(line) for line in lines) + "\n"


def headline(verdict: Verdict) -> str:
    failures = verdict.failures
    if failures:
        kinds = Counter(f.kind for f in failures)
        what = ", ".join(f"{kind} {n}" for kind, n in kinds.items())
        kernels = len({(f.kernel, f.metric) for f in failures})
        return f"FAIL: {kernels} kernel(s) with a new scalability problem ({what})"
    others = len(verdict.findings)
    return "PASS: no new scalability problem" + (f" ({others} finding(s) reported below)" if others else "")


def _row(f: Finding) -> tuple[str, ...]:
    ratio = "" if f.ratio is None else f"{f.ratio:.3g}x" + ("" if f.bound is None else f" (>= {f.bound:.3g}x)")
    return (f.severity, f.kind, f.kernel, f.metric, f.baseline_growth or "", f.candidate_growth or "", ratio,
            _share(f.probability), q_text(f.q_value))


def q_text(value: float | None) -> str:
    """A q-value for people: two digits, and '<1e-300' for one that underflowed to 0."""
    return "" if value is None else f"{value:.2g}" if value > 0 else "<1e-300"


def _share(value: float | None) -> str:
    return "" if value is None else f"{value:.0%}"


def render_check_json(verdict: Verdict, context: CheckContext) -> str:
    """`{"scalecheck": 1, "verdict": "pass"|"fail", "findings": [...], "kernels": [...], ...}`."""
    comparison = verdict.comparison
    doc = {
        "scalecheck": 1,
        "verdict": "fail" if verdict.failed else "pass",
        "baseline": context.baseline,
        "candidate": context.candidate,
        "candidate_commit": context.candidate_commit or None,
        "same_job": context.same_job or None,
        "machines": {"baseline": context.baseline_machine or None, "candidate": context.candidate_machine or None,
                     "held_back": context.held_reason or None},
        "notices": list(context.notices),
        "target": dict(comparison.target),
        "settings": {**context.settings, "fail_on": list(verdict.fail_on), "bootstrap": comparison.resamples,
                     "seed": comparison.seed},
        "findings": [_finding(f) for f in verdict.findings],
        "kernels": [_kernel(k) for k in comparison.kernels],
    }
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


def _finding(f: Finding) -> dict[str, object]:
    return {"kernel": f.kernel, "metric": f.metric, "kind": f.kind, "severity": f.severity, "message": f.message,
            "probability": _num(f.probability), "p_value": _num(f.p_value), "q_value": _num(f.q_value),
            "ratio": _num(f.ratio), "bound": _num(f.bound), "baseline_growth": f.baseline_growth,
            "candidate_growth": f.candidate_growth, "evidence": {k: _plain(v) for k, v in f.evidence.items()},
            "rise": _num(f.rise), "span": _num(f.span), "held": f.held or None}


def _kernel(k: KernelComparison) -> dict[str, object]:
    return {"kernel": k.kernel, "metric": k.metric, "unit": k.unit, "status": k.status,
            "baseline": _model(k.baseline), "candidate": _model(k.candidate), "ratio": _num(k.ratio),
            "bound": _num(k.bound), "upper": _num(k.upper), "growth_up": _num(k.growth_up),
            "growth_down": _num(k.growth_down), "expectation": k.expectation, "basis": k.basis, "note": k.note}


def _model(km: KernelModel | None) -> dict[str, object] | None:
    if km is None:
        return None
    out: dict[str, object] = {"status": km.status, "points": km.n_points, "note": km.note}
    if km.model is not None:
        out.update(formula=km.model.formula(), growth=km.model.growth_text(), segmented=km.segmented,
                   change_points=[cp.text() for cp in km.change_points])
    return out


def _num(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _plain(value: object) -> object:
    if isinstance(value, float):
        return _num(value)
    return value if isinstance(value, (int, str, bool, type(None))) else str(value)
