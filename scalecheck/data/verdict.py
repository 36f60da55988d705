"""Comparison outcomes as data: `Finding` (one thing that changed), `PendingFinding` (a finding before the
false-discovery adjustment), `KernelComparison`, `Comparison`, `Verdict`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from scalecheck.data.outcome import KernelModel
from scalecheck.names import FINDING_KINDS

# Every kind of finding, in the order a report lists them (declared once, in `scalecheck.names`). "renamed",
# "replaced" and "improvement" never fail a build: "renamed" (a kernel that looks renamed grows faster than under its
# old name) and "replaced" (a new kernel grows faster than every removed one) rest on a guess from names
# (`core.renames`).
KINDS = FINDING_KINDS
SEVERITIES = ("error", "warning", "notice")  # error: fails the build; warning: reported; notice: good news or a hint


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One change in one (kernel, metric), with the evidence for it.

    `probability` is the bootstrap share of resamples that show the change; `p_value` the test's p-value before
    and `q_value` after the Benjamini-Hochberg adjustment over every test of the comparison; `ratio` and `bound`
    the candidate/baseline prediction at the target scale and its one-sided confidence bound. For growth and
    prediction findings, `rise` is how much the ratio candidate/baseline grows across the measured range both
    sides share (1: a constant factor, which is what a slower machine gives), and `span` how many times larger the
    largest shared scale is than the smallest. `held` says why the gate reported a finding of a failing kind as a
    warning (the two sides were measured on different machines); "" otherwise.
    """

    kernel: str
    metric: str
    kind: str
    message: str
    severity: str = "warning"  # set by the gate from the kinds that fail the build
    probability: float | None = None
    p_value: float | None = None
    q_value: float | None = None
    ratio: float | None = None
    bound: float | None = None
    baseline_growth: str | None = None
    candidate_growth: str | None = None
    evidence: Mapping[str, object] = field(default_factory=dict)
    rise: float | None = None
    span: float | None = None
    held: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, got {self.severity!r}")


@dataclass(frozen=True, kw_only=True)
class PendingFinding:
    """A finding with the test behind it, before the Benjamini-Hochberg adjustment over every test of a comparison.

    `test` names the test: a finding kind, or "top" (the largest scale both commits measured, reported as a
    prediction). The finding is kept when the adjusted p-value passes the level and `condition` holds (the effect
    exceeds the threshold, or the bootstrap agrees); it then gets `p_value` and its q-value.
    """

    test: str
    p_value: float
    finding: Finding  # complete but for p_value and q_value
    condition: bool

    @property
    def key(self) -> tuple[str, str]:
        """(kernel, metric) of the finding."""
        return (self.finding.kernel, self.finding.metric)


@dataclass(frozen=True, kw_only=True)
class KernelComparison:
    """Baseline and candidate models of one (kernel, metric), and the statistics that compare them.

    status: "compared" (both sides modeled), "new" (no baseline), "removed" (no candidate), or "unmodeled" (a side
    has no model; `note` says why). `ratio` is candidate / baseline at the target scale, `bound` its lower and
    `upper` its upper one-sided confidence bound; `growth_up` and `growth_down` the bootstrap probabilities that
    the candidate's lead-order growth is higher / lower than the baseline's.
    """

    kernel: str
    metric: str
    unit: str
    status: str
    baseline: KernelModel | None = None
    candidate: KernelModel | None = None
    ratio: float | None = None
    bound: float | None = None
    upper: float | None = None
    growth_up: float | None = None
    growth_down: float | None = None
    expectation: str | None = None  # the growth the kernel must not exceed, as configured
    basis: str = ""  # how the ratio was predicted: each commit's own model, or one model class for both
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """Every kernel of a candidate compared against its baseline, at one target scale, with the findings."""

    parameters: tuple[str, ...]
    target: Mapping[str, float]
    kernels: tuple[KernelComparison, ...]
    findings: tuple[Finding, ...]
    resamples: int  # bootstrap resamples per kernel and side
    seed: int


@dataclass(frozen=True)
class Verdict:
    """The gate's decision: failed when a finding's kind is one that fails the build."""

    comparison: Comparison
    findings: tuple[Finding, ...]  # with severities, worst first
    fail_on: tuple[str, ...]

    @property
    def failed(self) -> bool:
        return any(f.severity == "error" for f in self.findings)

    @property
    def failures(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")
