"""A check's verdict as GitHub Markdown, for the job summary and the sticky pull-request comment.

The verdict comes first, then the findings table; the evidence and the list of all kernels are folded in
`<details>`. GitHub limits a job summary to 1 MiB and a comment to 65,536 characters: when the full text is too
long, the list of all kernels goes first, then the evidence and rows of the findings table are cut (worst kept),
and a line says so, with a link to the full report when one is given.

Every value from the measurements is inert: names are code spans, other text is escaped (`templating.md_text`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from markupsafe import Markup, escape

from scalecheck.data.verdict import Finding, KernelComparison, Verdict
from scalecheck.data.views import CheckContext
from scalecheck.report.check_report import headline, q_text
from scalecheck.report.templating import markdown_environment

SUMMARY_LIMIT = 1024 * 1024  # bytes, GitHub's limit of a step summary
COMMENT_LIMIT = 65536  # characters, GitHub's limit of an issue comment
ICONS = {"error": ":x:", "warning": ":warning:", "notice": ":information_source:"}


@dataclass(frozen=True)
class _Cut:
    rows: int | None = None  # findings listed (None: all)
    details: int | None = None  # findings with evidence (None: all)
    kernels: bool = True  # the folded list of all kernels


def render_check_markdown(verdict: Verdict, context: CheckContext, *, limit: int = COMMENT_LIMIT,
                          artifact_url: str | None = None) -> str:
    """The Markdown of a check, at most `limit` UTF-8 bytes (so also at most `limit` characters). `scalecheck
    comment` adds the hidden marker by which a later run finds the comment to update."""
    findings = verdict.findings
    cut = _Cut()
    text = _render(verdict, context, cut, artifact_url)
    if _size(text) <= limit:
        return text
    steps = [_Cut(kernels=False)]
    keep = len(findings)
    while keep > 0:
        keep //= 2
        steps += [_Cut(details=keep, kernels=False), _Cut(rows=max(keep, 1), details=keep, kernels=False)]
    steps.append(_Cut(rows=0, details=0, kernels=False))  # a finding whose kernel name alone is too long
    for cut in steps:
        text = _render(verdict, context, cut, artifact_url)
        if _size(text) <= limit:
            return text
    # only the labels are left (file names given on the command line): cut them too, at a character
    return text.encode("utf-8")[: limit - 4].decode("utf-8", "ignore").rsplit("\n", 1)[0] + "\n…\n"


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _render(verdict: Verdict, context: CheckContext, cut: _Cut, artifact_url: str | None) -> str:
    comparison = verdict.comparison
    findings = list(verdict.findings)
    listed = findings if cut.rows is None else findings[: cut.rows]  # rows=0: the count only
    detailed = findings if cut.details is None else findings[: cut.details]
    truncated = cut != _Cut()
    link = Markup(f"[Full report]({escape(artifact_url)})") if artifact_url else ""
    return markdown_environment().get_template("check.md.j2").render(
        icon=Markup(":x:" if verdict.failed else ":white_check_mark:"),
        headline=headline(verdict), baseline=context.baseline, candidate=context.candidate_text,
        notices=context.notices, measured=context.measured(),
        target=", ".join(f"{k}={v:g}" for k, v in comparison.target.items()),
        findings=[_row(f) for f in listed], hidden_rows=len(findings) - len(listed),
        details=[_detail(f) for f in detailed], kernels=[_kernel(k) for k in comparison.kernels] if cut.kernels
        else [], truncated=truncated, artifact_url=artifact_url or "", link=link)


def _row(f: Finding) -> dict[str, object]:
    return {"icon": Markup(ICONS[f.severity]), "severity": f.severity, "kind": f.kind, "kernel": f.kernel,
            "metric": f.metric, "baseline": f.baseline_growth or "-", "candidate": f.candidate_growth or "-",
            "ratio": _ratio(f.ratio, f.bound)}


def _detail(f: Finding) -> dict[str, object]:
    stats = [f"P = {f.probability:.0%}" if f.probability is not None else "",
             f"q = {q_text(f.q_value)}" if f.q_value is not None else ""]
    evidence = [(name, str(value)) for name, value in f.evidence.items() if value not in (None, "")]
    return {"kernel": f.kernel, "metric": f.metric, "kind": f.kind, "message": f.message,
            "stats": ", ".join(s for s in stats if s), "evidence": evidence, "held": f.held}


def _kernel(k: KernelComparison) -> dict[str, object]:
    def growth(km: object) -> str:
        model = getattr(km, "model", None)
        return model.growth_text() if model is not None else "-"

    return {"kernel": k.kernel, "metric": k.metric, "status": k.status, "baseline": growth(k.baseline),
            "candidate": growth(k.candidate), "ratio": _ratio(k.ratio, None)}


def _ratio(ratio: float | None, bound: float | None) -> str:
    if ratio is None or not math.isfinite(ratio):
        return "-"
    text = f"{ratio:.3g}x"
    return text + (f" (>= {bound:.3g}x)" if bound is not None and math.isfinite(bound) else "")
