"""The self-contained HTML reports: `render_check_html` (a check's verdict) and `render_model_html` (a model table).

One file with inline CSS, an inline script (sorting and filtering of the kernel table) and inline SVG plots; its
Content-Security-Policy allows nothing from the network. Every name from the measurements is made visible and
autoescaped (`templating.html_value`).

The plots come computed (`scalecheck.data.views.Plots`, from `scalecheck.api`: bootstrap bands cost time, so only
the worst `limit` kernels have one, each left out with a note); this module only renders them. The table lists
every kernel.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from markupsafe import Markup

from scalecheck.data.outcome import KernelModel, ModelTable
from scalecheck.data.verdict import KINDS, SEVERITIES, Finding, KernelComparison, Verdict
from scalecheck.data.views import CheckContext, Key, Plots, findings_by_kernel, report_order
from scalecheck.report.check_report import headline, q_text
from scalecheck.report.plots import kernel_svg
from scalecheck.report.templating import render_html


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    type: str = "text"  # "text" or "number" (how the table sorts it)
    css: str = ""


@dataclass(frozen=True)
class Cell:
    text: str
    value: object  # what the table sorts by


@dataclass
class Row:
    severity: str
    cells: dict[str, Cell]
    anchor: str = ""


@dataclass
class Detail:
    anchor: str
    kernel: str
    metric: str
    unit: str
    findings: list[dict[str, str]] = field(default_factory=list)
    facts: list[tuple[str, str]] = field(default_factory=list)
    plot: Markup | None = None
    no_plot: str = ""


_CHECK_COLUMNS = (Column("rank", "#", "number", "num"), Column("severity", "severity"), Column("kind", "finding"),
                  Column("kernel", "kernel", css="kernel"), Column("metric", "metric"),
                  Column("baseline", "baseline growth"), Column("candidate", "candidate growth"),
                  Column("ratio", "ratio at target", "number", "num"), Column("bound", "lower bound", "number", "num"),
                  Column("status", "status"))


def render_check_html(verdict: Verdict, context: CheckContext, *, plots: Plots = Plots()) -> str:
    """The check report: verdict and why, every kernel (worst first, sortable and filterable), the plot of each
    kernel with a finding that `plots` has (the `plots.limit` worst: `scalecheck.api.check(..., plots=N)`), the
    commits compared and the configuration."""
    comparison = verdict.comparison
    by_kernel = findings_by_kernel(verdict)
    kernels = report_order(verdict)
    anchors = {(k.kernel, k.metric): f"kernel-{i}" for i, k in enumerate(kernels)}
    rows = [_check_row(i + 1, k, by_kernel.get((k.kernel, k.metric), []), anchors) for i, k in enumerate(kernels)]
    confidence = float(context.settings.get("confidence", 0.95))  # type: ignore[arg-type]
    details = []
    plotted = 0
    for k in kernels:
        key = (k.kernel, k.metric)
        if key not in by_kernel:
            continue
        detail = _check_detail(k, by_kernel[key], anchors[key])
        plot = plots.kernels.get(key)
        if plot is not None:
            detail.plot = Markup(kernel_svg(plot, salt=detail.anchor))  # its texts made visible and escaped
            plotted += 1
        elif plotted >= plots.limit:
            detail.no_plot = f"Not plotted: only the {plots.limit} worst kernels are (--max-plots)."
        else:
            detail.no_plot = "Not plotted: " + (k.note or "no side has a model")
        details.append(detail)
    why = [{"anchor": anchors.get((f.kernel, f.metric), ""), "kernel": f.kernel, "metric": f.metric,
            "kind": f.kind, "message": f.message} for f in verdict.failures]
    counts = Counter(k.status for k in comparison.kernels)
    settings = {**context.settings, "fail_on": ", ".join(verdict.fail_on) or "(report only)",
                "bootstrap": comparison.resamples, "seed": comparison.seed}
    return render_html("check.html.j2", failed=verdict.failed, headline=headline(verdict), why=why,
                       baseline=context.baseline, candidate=context.candidate_text, target=_where(comparison.target),
                       target_note=context.target_note, notices=context.notices, measured=context.measured(),
                       counts=", ".join(f"{counts[s]} {s}" for s in ("compared", "new", "removed", "unmodeled")
                                        if counts[s]) or "none",
                       columns=_CHECK_COLUMNS, rows=rows, severities=(*SEVERITIES, "none"), details=details,
                       settings=[(name, _setting(value)) for name, value in settings.items()],
                       confidence=f"{confidence:.0%}")


def _check_row(rank: int, k: KernelComparison, findings: list[Finding], anchors: Mapping[Key, str]) -> Row:
    severity = findings[0].severity if findings else "none"
    kinds = ", ".join(dict.fromkeys(f.kind for f in findings))
    first_kind = KINDS.index(findings[0].kind) if findings else len(KINDS)
    cells = {
        "rank": Cell(str(rank), rank),
        "severity": Cell(severity, SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES)),
        "kind": Cell(kinds or "-", first_kind),
        "kernel": Cell(k.kernel, k.kernel), "metric": Cell(k.metric, k.metric),
        "baseline": _growth_cell(k.baseline), "candidate": _growth_cell(k.candidate),
        "ratio": Cell(_ratio(k.ratio), _number(k.ratio)), "bound": Cell(_bound(k), _number(k.bound)),
        "status": Cell(k.status + (f": {k.note}" if k.note else ""), k.status),
    }
    return Row(severity, cells, anchors[(k.kernel, k.metric)] if findings else "")


def _check_detail(k: KernelComparison, findings: list[Finding], anchor: str) -> Detail:
    detail = Detail(anchor, k.kernel, k.metric, k.unit)
    for f in findings:
        stats = [f"P = {f.probability:.0%}" if f.probability is not None else "",
                 f"q = {q_text(f.q_value)}" if f.q_value is not None else ""]
        detail.findings.append({"severity": f.severity, "kind": f.kind, "message": f.message,
                                "stats": ", ".join(s for s in stats if s), "held": f.held})
    for f in findings:
        if f.kind == "renamed" and f.evidence.get("renamed from"):
            detail.facts += [("renamed from?", str(f.evidence["renamed from"])),
                             ("old name's baseline model", str(f.evidence.get("baseline") or "-"))]
    for role, km in (("baseline", k.baseline), ("candidate", k.candidate)):
        detail.facts.append((f"{role} model", _formula(km)))
        if km is not None and km.segmented:
            detail.facts.append((f"{role} change points", ", ".join(cp.text() for cp in km.change_points)))
    if k.ratio is not None:
        detail.facts.append(("ratio at target", f"{_ratio(k.ratio)} (confidence bounds {_ratio(k.bound)} and "
                                                f"{_ratio(k.upper)})"))
    if k.basis:
        detail.facts.append(("prediction basis", k.basis))
    if k.expectation:
        detail.facts.append(("expected growth", f"at most {k.expectation}"))
    return detail


# --- the model report ---------------------------------------------------------------------------------------------

_MODEL_COLUMNS = (Column("rank", "#", "number", "num"), Column("kernel", "kernel", css="kernel"),
                  Column("metric", "metric"), Column("model", "model"), Column("growth", "growth"),
                  Column("prediction", "at target", "number", "num"), Column("cv", "CV SMAPE %", "number", "num"),
                  Column("status", "status"))


def render_model_html(table: ModelTable, plots: Plots = Plots(), *, sources: str = "",
                      settings: Mapping[str, object] | None = None) -> str:
    """The model report: every kernel ranked as `scalecheck model` ranks them, and the plots of the first
    `plots.limit` with their confidence bands (`scalecheck.api.model(..., plots=N)`)."""
    ranked = table.ranked()
    rows, details = [], []
    for i, km in enumerate(ranked):
        anchor = f"kernel-{i}"
        prediction = table.prediction(km)
        cells = {"rank": Cell(str(i + 1), i + 1), "kernel": Cell(km.kernel, km.kernel),
                 "metric": Cell(km.metric, km.metric), "model": Cell(_formula(km), _formula(km)),
                 "growth": Cell(km.model.growth_text() if km.model else "-", km.model.growth_text() if km.model
                                else ""),
                 "prediction": Cell(_value(prediction), _number(prediction)),
                 "cv": Cell(f"{km.model.scores.cv_smape:.2f}" if km.model else "-",
                            _number(km.model.scores.cv_smape if km.model else None)),
                 "status": Cell(km.status + (f": {km.note}" if km.note else ""), km.status)}
        detail = Detail(anchor, km.kernel, km.metric, km.unit, facts=[("model", _formula(km))])
        if km.segmented:
            detail.facts.append(("change points", ", ".join(cp.text() for cp in km.change_points)))
        if i >= plots.limit:
            rows.append(Row("none", cells))
            continue
        plot = plots.kernels.get((km.kernel, km.metric))
        if plot is not None:
            detail.plot = Markup(kernel_svg(plot, salt=anchor))
        else:
            detail.no_plot = "Not plotted: " + (km.note or "no model")
        rows.append(Row("none", cells, anchor))
        details.append(detail)
    counts = Counter(km.status for km in table.models)
    return render_html("model.html.j2", sources=sources, parameters=", ".join(table.parameters),
                       target=_where(table.target) if table.target else "none (ranked by growth)",
                       counts=", ".join(f"{n} {status}" for status, n in counts.items()), columns=_MODEL_COLUMNS,
                       rows=rows, severities=(), details=details, confidence="95%", notices=table.notes,
                       settings=[(name, _setting(value)) for name, value in (settings or {}).items()])


# --- formatting ---------------------------------------------------------------------------------------------------

def _growth_cell(km: KernelModel | None) -> Cell:
    text = km.model.growth_text() if km is not None and km.model is not None else "-"
    return Cell(text, text)


def _formula(km: KernelModel | None) -> str:
    if km is None:
        return "-"
    if km.model is None:
        return f"none ({km.note})" if km.note else "none"
    return km.model.formula()


def _ratio(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.3g}x"


def _bound(k: KernelComparison) -> str:
    return "-" if k.bound is None or not math.isfinite(k.bound) else f">= {k.bound:.3g}x"


def _value(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.4g}"


def _number(value: float | None) -> str:
    return "" if value is None or not math.isfinite(value) else repr(float(value))


def _where(target: Mapping[str, float]) -> str:
    return ", ".join(f"{name}={value:g}" for name, value in target.items())


def _setting(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(_setting(v) for v in value) or "(none)"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} = {_setting(v)}" for k, v in value.items()) or "(none)"
    return "(none)" if value is None else str(value)
