"""Decision quality and cost of the CI check (`compare` + `verdict`) on seeded synthetic pairs of measurements.

    python benchmarks/check_quality.py [--kernels 1000] [--seed 11] [--points 6,8] [--target 4096] [--quick]
                                       [--repetitions 5] [--scenarios ABCDEFGHI]

Measures the check against its targets. Kernels have one parameter, p = 2, 4, ..., 2^n (n points, 6 and 8
by default), 5 repetitions per point (`--repetitions`), and multiplicative Gaussian noise: every repetition is
f(p) * (1 + 0.05 z), z ~ N(0, 1). Baseline and candidate are measured independently (fresh noise each).

Functions f(p) = c0 + a * g(p) (+ b * h(p)): c0 log-uniform in [1, 100]; the lead term reaches r * c0 at the
largest p, r log-uniform in [0.5, 50]; a second, lower term reaches s times the lead term there, s log-uniform
in [0.2, 1], so both terms are visible. The unchanged family: constant, log p, p^(1/2), p, p log p, p^1.5, p^2,
log p + p, p + p^2, p^(1/2) + p^1.5 (in equal numbers).

Scenarios, mixed in ONE comparison per point count as CI sees them (Benjamini-Hochberg adjusts over all kernels
of a call), then a second comparison where the planted kernels are only 1% of the kernels (the hardest case for
the FDR control):

- A unchanged: baseline and candidate from the same function. Counted: kernels with a failing finding (severity
  "error" under the default gate: growth, prediction, expectation), with a 95% Wilson interval; and any finding.
- B planted growth: p -> p^1.5, p log p -> p^2, log p -> p, same constant, the new term's coefficient matched so
  that both functions agree at p = 2 (a growth change, not a jump). Counted: a failing "growth" finding (found),
  and any failing finding.
- C uniform 5% slowdown: candidate = 1.05 x baseline function, growth unchanged. Counted: any failing finding
  (the target: none), and "measured" warnings for information.

Scenarios under real noise, each its own comparison per point count (Benjamini-Hochberg over its kernels), each
reported with its counts, a 95% Wilson interval and whether its target is met:

- D rounds slowed at random: every series measured in rounds (5 rounds of 1 repetition, and 3 rounds of 2),
  recorded in `Series.rounds`; each round of each kernel, baseline and candidate independently, is 30% slower at
  every size with probability 0.3 (a burst of load). Unchanged kernels (<= 1% failing) and planted growth
  changes (>= 95% failing).
- E outliers: 5% of the repetitions multiplied by a factor uniform in 2-10. Unchanged, planted growth, and a
  quadratic term worth 20% of the candidate's total at the largest p.
- F replays of saved measurements (benchmarks/data/, made by benchmarks/data/make_replays.py): flat baselines
  that the search modeled as p^2 and beyond through two cancelling terms, against candidates twice as slow at
  the two top sizes (each must fail, none may read as an improvement); real `sorted()` timings under two busy
  loops, n = 2^11..2^16, unchanged (none may fail) and with a quadratic term worth 20% of the total at the
  largest n added to the candidate (each must fail). For the `sorted()` timings it also prints whether their
  rounds move every size together (`round_effect`), against the same data with repetitions shuffled within sizes,
  and beside the quadratic row what a test that knows where the term was added finds (`round_oracle`).
- G step: a flat kernel twice as slow at the two top sizes (>= 95% failing).
- H quadratic: a term c * p^2 worth 5% (and 20%) of the candidate's total at the largest p added to an unchanged
  function (a regression that only shows at the top of the range): found (a failing finding) in >= 50% (5%) and
  >= 95% (20%) of the kernels. Beside each row, the best possible: the mean power of the most powerful test that
  knows each kernel's true change and the noise exactly (a z-test of the mean log ratios candidate / baseline
  against a constant factor, along the true change's shape, one-sided at 1 - confidence, no false-discovery
  adjustment): no test the check could run finds more.
- I rename: a kernel disappears and one with a similar name appears that grows faster (p -> p^1.5, p log p ->
  p^2, log p -> p). Detected when a failing finding names either kernel; without a rename detection in
  scalecheck (`rename_findings`) the scenario says "not detected".

Cost: wall time of compare() + verdict() on the mixed 8-point comparison (default bootstrap, in-process), against
the 30 s budget for 1,000 kernels, beside the plain modeling of the same series (`fit_kernels` on
baseline and candidate) measured in the same run.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scalecheck.core.compare import CompareOptions, compare  # noqa: E402
from scalecheck.core.gate import verdict  # noqa: E402
from scalecheck.core.modeler import fit_kernels  # noqa: E402
from scalecheck.data.measurement import Series  # noqa: E402
from scalecheck.data.spec import Exponents  # noqa: E402
from scalecheck.data.verdict import Comparison, Finding, KernelComparison, Verdict  # noqa: E402
from scalecheck.formats import read_measurements  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"

REPETITIONS = 5
NOISE = 0.05  # standard deviation of the multiplicative Gaussian noise per repetition
SLOWDOWN = 1.05
BUDGET = 30.0  # seconds for 1,000 kernels on 2 cores (the target)
MIXED_PLANTED, MIXED_SLOWED, SPARSE_PLANTED = 0.15, 0.15, 0.01  # shares of the kernels of a comparison

Block = tuple[float, int]  # (i, j) of p^i * log2(p)^j
UNCHANGED: dict[str, tuple[Block, ...]] = {  # lower term first, lead term last
    "constant": (),
    "log p": ((0, 1),),
    "p^(1/2)": ((0.5, 0),),
    "p": ((1, 0),),
    "p log p": ((1, 1),),
    "p^1.5": ((1.5, 0),),
    "p^2": ((2, 0),),
    "log p + p": ((0, 1), (1, 0)),
    "p + p^2": ((1, 0), (2, 0)),
    "p^(1/2) + p^1.5": ((0.5, 0), (1.5, 0)),
}
PLANTED: dict[str, tuple[Block, Block]] = {  # before, after
    "p -> p^1.5": ((1, 0), (1.5, 0)),
    "p log p -> p^2": ((1, 1), (2, 0)),
    "log p -> p": ((0, 1), (1, 0)),
}


def _basis(block: Block, p: np.ndarray | float) -> np.ndarray:
    i, j = block
    return np.asarray(np.power(p, i) * np.log2(p) ** j, dtype=float)


def _block_text(block: Block) -> str:
    i, j = block
    power = "" if i == 0 else "p" if i == 1 else f"p^{i:g}"
    log = "" if j == 0 else "log2(p)" if j == 1 else f"log2(p)^{j}"
    return " * ".join(x for x in (power, log) if x)


@dataclass(frozen=True)
class Function:
    """c0 + sum of coef * p^i * log2(p)^j: the truth of one side of a kernel."""

    constant: float
    terms: tuple[tuple[float, Block], ...]

    def __call__(self, p: np.ndarray) -> np.ndarray:
        return self.constant + sum((c * _basis(b, p) for c, b in self.terms), np.zeros_like(p))

    def scaled(self, factor: float) -> Function:
        return Function(self.constant * factor, tuple((c * factor, b) for c, b in self.terms))

    def lead_share(self, p_max: float) -> float:
        """The lead term's value at `p_max` over the constant (r of the module docstring)."""
        coef, block = self.terms[-1]
        return coef * float(_basis(block, p_max)) / self.constant

    def text(self) -> str:
        return " + ".join([f"{self.constant:.4g}"] + [f"{c:.4g} * {_block_text(b)}" for c, b in self.terms])

    def plus_quadratic(self, share: float, p_max: float) -> Function:
        """This function plus c * p^2 worth `share` of the new total at `p_max`."""
        coef = share / (1 - share) * float(self(np.array([p_max]))[0]) / p_max**2
        return Function(self.constant, self.terms + ((coef, (2, 0)),))


@dataclass(frozen=True)
class Stepped(Function):
    """A function `factor` times as slow from `start` on (a jump at the top sizes)."""

    start: float = math.inf
    factor: float = 1.0

    def __call__(self, p: np.ndarray) -> np.ndarray:
        return Function.__call__(self, p) * np.where(p >= self.start, self.factor, 1.0)

    def text(self) -> str:
        return f"({Function.text(self)}) * ({self.factor:g} from p={self.start:g})"


@dataclass(frozen=True)
class Kernel:
    name: str
    scenario: str  # "unchanged", "planted", "slowdown", "quadratic 5%", ...: the row of the report
    label: str  # function family, or planted change
    baseline: Function
    candidate: Function
    renamed: str = ""  # the candidate's name when it differs from the baseline's (scenario I)

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, self.renamed) if self.renamed else (self.name,)


def _loguniform(rng: np.random.Generator, low: float, high: float) -> float:
    return float(np.exp(rng.uniform(math.log(low), math.log(high))))


def draw_function(rng: np.random.Generator, blocks: Sequence[Block], p_max: float) -> Function:
    """A function of the family `blocks` (module docstring: c0, r and s)."""
    c0 = _loguniform(rng, 1.0, 100.0)
    if not blocks:
        return Function(c0, ())
    lead = c0 * _loguniform(rng, 0.5, 50.0) / float(_basis(blocks[-1], p_max))
    terms = [(lead, blocks[-1])]
    if len(blocks) == 2:
        share = _loguniform(rng, 0.2, 1.0)
        low = share * lead * float(_basis(blocks[-1], p_max)) / float(_basis(blocks[0], p_max))
        terms.insert(0, (low, blocks[0]))
    return Function(c0, tuple(terms))


def make_kernels(rng: np.random.Generator, count: int, planted_share: float, slowed_share: float,
                 p_max: float, prefix: str) -> list[Kernel]:
    """`count` kernels: planted and slowed ones by their shares (at least 3 planted), the rest unchanged."""
    n_planted = max(len(PLANTED), round(planted_share * count))
    n_slowed = round(slowed_share * count)
    families, changes = list(UNCHANGED), list(PLANTED)
    kernels = []
    for k in range(count - n_planted - n_slowed):
        label = families[k % len(families)]
        f = draw_function(rng, UNCHANGED[label], p_max)
        kernels.append(Kernel(f"{prefix}/unchanged/{label}/{k}", "unchanged", label, f, f))
    for k in range(n_planted):
        label = changes[k % len(changes)]
        before, after = PLANTED[label]
        f = draw_function(rng, (before,), p_max)
        (coef, _), = f.terms
        g = Function(f.constant, ((coef * float(_basis(before, 2.0)) / float(_basis(after, 2.0)), after),))
        kernels.append(Kernel(f"{prefix}/planted/{label}/{k}", "planted", label, f, g))
    for k in range(n_slowed):
        label = families[k % len(families)]
        f = draw_function(rng, UNCHANGED[label], p_max)
        kernels.append(Kernel(f"{prefix}/slowdown/{label}/{k}", "slowdown", label, f, f.scaled(SLOWDOWN)))
    return kernels


@dataclass(frozen=True)
class Noise:
    """How one side of a kernel is measured beyond the Gaussian noise: rounds, bursts of load, outliers."""

    rounds: int = 0  # rounds recorded in Series.rounds (0: one session, not recorded)
    per_round: int = REPETITIONS  # repetitions per point in each round
    burst: float = 0.0  # probability that a round is slowed at every size
    burst_factor: float = 1.3
    outliers: float = 0.0  # share of repetitions multiplied by a factor uniform in `outlier_range`
    outlier_range: tuple[float, float] = (2.0, 10.0)

    def text(self) -> str:
        parts = []
        if self.rounds:
            parts.append(f"{self.rounds} rounds x {self.per_round} repetition(s), each round of each kernel x"
                         f"{self.burst_factor:g} with probability {self.burst:g}")
        if self.outliers:
            low, high = self.outlier_range
            parts.append(f"{self.outliers:.0%} of the repetitions x U({low:g}, {high:g})")
        return "; ".join(parts) or "plain"


def measure(rng: np.random.Generator, kernels: Sequence[Kernel], p: np.ndarray,
            noise: Noise | None = None) -> tuple[list[Series], list[Series]]:
    """Baseline and candidate series, each repetition f(p) * (1 + NOISE * z), then `noise`."""
    sides: tuple[list[Series], list[Series]] = ([], [])
    for kernel in kernels:
        names = (kernel.name, kernel.renamed or kernel.name)
        for side, f, name in zip(sides, (kernel.baseline, kernel.candidate), names):
            if noise is None:
                values = f(p)[:, None] * (1 + NOISE * rng.standard_normal((p.size, REPETITIONS)))
                side.append(Series(name, "time", ("p",), p[:, None], values))
                continue
            reps = max(1, noise.rounds) * noise.per_round
            values = f(p)[:, None] * (1 + NOISE * rng.standard_normal((p.size, reps)))
            rounds = None
            if noise.rounds:
                slowed = np.where(rng.random(noise.rounds) < noise.burst, noise.burst_factor, 1.0)
                values *= np.repeat(slowed, noise.per_round)[None, :]
                rounds = np.broadcast_to(np.repeat(np.arange(1.0, noise.rounds + 1), noise.per_round), values.shape)
            if noise.outliers:
                hit = rng.random(values.shape) < noise.outliers
                values *= np.where(hit, rng.uniform(*noise.outlier_range, values.shape), 1.0)
            side.append(Series(name, "time", ("p",), p[:, None], values, rounds=rounds))
    return sides


@dataclass(frozen=True)
class Outcome:
    """What the check said about one kernel."""

    kernel: Kernel
    kinds: dict[str, str]  # finding kind -> severity
    compared: KernelComparison | None

    @property
    def failing(self) -> bool:
        return "error" in self.kinds.values()


@dataclass(frozen=True)
class Check:
    outcomes: list[Outcome]
    seconds: float  # compare() + verdict()
    verdict: Verdict


def run_check(kernels: Sequence[Kernel], base: list[Series], cand: list[Series], target: float) -> Check:
    start = time.perf_counter()
    comparison = compare(base, cand, {"p": target}, settings=CompareOptions())
    result = verdict(comparison, extra=rename_findings(comparison, base, cand))
    seconds = time.perf_counter() - start
    kinds: dict[str, dict[str, str]] = defaultdict(dict)
    for f in result.findings:  # worst first, so the first severity per kind is kept
        kinds[f.kernel].setdefault(f.kind, f.severity)
    compared = {kc.kernel: kc for kc in result.comparison.kernels}
    outcomes = []
    for k in kernels:
        merged: dict[str, str] = {}
        for name in k.names:
            for kind, severity in kinds.get(name, {}).items():
                merged[kind] = "error" if "error" in (severity, merged.get(kind)) else severity
        outcomes.append(Outcome(k, merged, compared.get(k.renamed or k.name)))
    return Check(outcomes, seconds, result)


RenameEntry = Callable[[Comparison, Sequence[Series], Sequence[Series]], list[Finding]]


def rename_entry() -> RenameEntry | None:
    """scalecheck's rename detection, `core.renames.renamed_findings(comparison, baseline, candidate)`, as the check
    runs it; None in a scalecheck without it (scenario I then reports "not detected")."""
    try:
        module = importlib.import_module("scalecheck.core.renames")
    except ModuleNotFoundError:
        return None
    entry = getattr(module, "renamed_findings", None)
    return entry if callable(entry) else None


def rename_findings(comparison: Comparison, base: list[Series], cand: list[Series]) -> list[Finding]:
    """The findings of the rename detection on this comparison (none without a rename detection)."""
    entry = rename_entry()
    return [] if entry is None else entry(comparison, base, cand)


def rate(hits: int, total: int) -> str:
    """'1.2% [0.6, 2.1]': share with its 95% Wilson interval, in percent."""
    if total == 0:
        return "-"
    ci = stats.binomtest(hits, total).proportion_ci(0.95, method="wilson")
    return f"{hits / total:6.1%} [{100 * ci.low:.1f}, {100 * ci.high:.1f}]"


def upper(hits: int, total: int) -> float:
    return float(stats.binomtest(hits, total).proportion_ci(0.95, method="wilson").high) if total else math.nan


def example(outcome: Outcome, check: Check) -> str:
    """One kernel as its truth, its fitted models and its findings."""
    kc = outcome.compared
    fitted = ["?", "?"]
    if kc is not None:
        fitted = [km.model.formula() if km is not None and km.model is not None
                  else f"no model ({km.note if km else ''})" for km in (kc.baseline, kc.candidate)]
    found = [f"{f.kind}/{f.severity} q={f.q_value if f.q_value is not None else float('nan'):.2g}: {f.message}"
             for f in check.verdict.findings if f.kernel == outcome.kernel.name]
    k = outcome.kernel
    lines = [f"    {k.name}",
             f"      truth     {k.baseline.text()}  ->  {k.candidate.text()}",
             f"      baseline  {fitted[0]}",
             f"      candidate {fitted[1]}"]
    if kc is not None and kc.ratio is not None:
        bound = kc.bound if kc.bound is not None else math.nan
        up = kc.growth_up if kc.growth_up is not None else math.nan
        lines.append(f"      ratio at target {kc.ratio:.3g} (bound {bound:.3g}), P(growth up) {up:.2f}, "
                     f"basis: {kc.basis}")
    lines += [f"      {text}" for text in found] or ["      no finding"]
    return "\n".join(lines)


def _higher(a: Mapping[str, Exponents], b: Mapping[str, Exponents]) -> bool:
    """Growth `a` above `b` in some parameter, (i, j) compared lexicographically (as the check compares them)."""
    zero: Exponents = (Fraction(0), 0)
    return any(a.get(name, zero) > b.get(name, zero) for name in set(a) | set(b))


def miss_reason(outcome: Outcome) -> str:
    """Why a planted kernel has no failing growth finding: which of the finding's conditions did not hold."""
    kc = outcome.compared
    if kc is None or kc.status != "compared" or kc.baseline is None or kc.candidate is None:
        return "not compared"
    if kc.baseline.segmented or kc.candidate.segmented:
        return "a side segmented"
    if not _higher(kc.candidate.model.growth(), kc.baseline.model.growth()):  # type: ignore[union-attr]
        return "fitted growth not higher"
    if kc.growth_up is None or kc.growth_up < CompareOptions().confidence:
        return "bootstrap P(up) < 95%"
    return "change test not significant (q > 5%)"


def by_scenario(checks: Sequence[Check], scenario: str) -> list[tuple[Outcome, Check]]:
    return [(o, c) for c in checks for o in c.outcomes if o.kernel.scenario == scenario]


def report_points(n: int, mixed: Check, sparse: Check, criteria: list[tuple[str, bool, str]],
                  show_examples: int) -> None:
    """The table of one point count; appends its criteria as (name, passed, detail)."""
    print(f"\n== {n} points (p = 2..{2 ** n}) ==")
    for name, c in (("mixed", mixed), ("sparse", sparse)):
        cnt = Counter(o.kernel.scenario for o in c.outcomes)
        print(f"  {name:<6} comparison: {len(c.outcomes)} kernels ({cnt['unchanged']} unchanged, {cnt['planted']} "
              f"planted, {cnt['slowdown']} slowed 5%), compare+verdict {c.seconds:.1f} s, "
              f"{sum(o.compared is not None and o.compared.status != 'compared' for o in c.outcomes)} not compared")

    print("\n  A unchanged        kernels  failing (error) [95% CI]  any finding [95% CI]")
    for name, checks in (("mixed", [mixed]), ("sparse", [sparse]), ("both", [mixed, sparse])):
        rows = by_scenario(checks, "unchanged")
        fail = sum(o.failing for o, _ in rows)
        anything = sum(bool(o.kinds) for o, _ in rows)
        print(f"    {name:<16} {len(rows):>7}  {rate(fail, len(rows)):<25} {rate(anything, len(rows))}")
    rows = by_scenario([mixed, sparse], "unchanged")
    kinds = Counter(f"{kind} ({sev})" for o, _ in rows for kind, sev in o.kinds.items())
    print("    findings by kind: " + (", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "none"))
    per_family = Counter(o.kernel.label for o, _ in rows if o.failing)
    totals = Counter(o.kernel.label for o, _ in rows)
    if per_family:
        print("    failing by function: " + ", ".join(f"{f} {per_family[f]}/{totals[f]}" for f in UNCHANGED
                                                    if per_family[f]))
    fail = sum(o.failing for o, _ in rows)
    criteria.append((f"{n} points: unchanged kernels failing <= 1%", fail / max(1, len(rows)) <= 0.01,
                     f"{fail}/{len(rows)} = {fail / max(1, len(rows)):.2%}, Wilson upper bound "
                     f"{upper(fail, len(rows)):.2%}"))
    bad_unchanged = [(o, c) for o, c in rows if o.failing]

    print("\n  B planted          comparison  kernels  growth (error) found [95% CI]  any failing")
    missed = []
    for label in PLANTED:
        for name, c in (("mixed", mixed), ("sparse", sparse)):
            planted = [o for o in c.outcomes if o.kernel.scenario == "planted" and o.kernel.label == label]
            found = sum(o.kinds.get("growth") == "error" for o in planted)
            anyfail = sum(o.failing for o in planted)
            print(f"    {label:<16} {name:<10} {len(planted):>8}  {rate(found, len(planted)):<30} "
                  f"{anyfail / max(1, len(planted)):.1%}")
            missed += [(o, c) for o in planted if o.kinds.get("growth") != "error"]
            if name == "mixed":
                criteria.append((f"{n} points: {label} found (build fails) >= 95% (mixed)",
                                 anyfail >= 0.95 * len(planted),
                                 f"growth finding {found}/{len(planted)}; build fails {anyfail}/{len(planted)}"))
    sparse_planted = [o for o in sparse.outcomes if o.kernel.scenario == "planted"]
    found = sum(o.kinds.get("growth") == "error" for o in sparse_planted)
    anyfail = sum(o.failing for o in sparse_planted)
    print(f"    {'all changes':<16} {'sparse':<10} {len(sparse_planted):>8}  {rate(found, len(sparse_planted)):<30} "
          f"{anyfail / max(1, len(sparse_planted)):.1%}")
    criteria.append((f"{n} points: planted found (build fails) >= 95% when 1% of the comparison",
                     anyfail >= 0.95 * len(sparse_planted),
                     f"growth finding {found}/{len(sparse_planted)}; build fails {anyfail}/{len(sparse_planted)}"))

    planted = [o for c in (mixed, sparse) for o in c.outcomes if o.kernel.scenario == "planted"]
    bands = ((0.5, 2.5), (2.5, 11.0), (11.0, 50.0))
    parts = []
    for low, high in bands:
        band = [o for o in planted if low <= o.kernel.baseline.lead_share(2.0 ** n) < high]
        parts.append(f"r {low:g}-{high:g}: {sum(o.kinds.get('growth') == 'error' for o in band)}/{len(band)}")
    print("    growth found by lead share r (lead term / c0 at the largest p, baseline): " + ", ".join(parts))
    reasons = Counter(miss_reason(o) for o, _ in missed)
    if reasons:
        print("    why growth was not found: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common()))
    slowed = [o for o in mixed.outcomes if o.kernel.scenario == "slowdown"]
    fail = sum(o.failing for o in slowed)
    warned = sum("measured" in o.kinds for o in slowed)
    print("\n  C slowdown 5%      kernels  failing [95% CI]           measured warning")
    print(f"    {'mixed':<16} {len(slowed):>7}  {rate(fail, len(slowed)):<26} {rate(warned, len(slowed))}")
    criteria.append((f"{n} points: 5% slowdown fails nothing", fail == 0, f"{fail}/{len(slowed)} failing"))
    bad_slowed = [(o, mixed) for o in slowed if o.failing]

    for title, group in (("unchanged kernels that fail", bad_unchanged), ("planted kernels missed", missed),
                         ("slowed kernels that fail", bad_slowed)):
        if group and show_examples:
            print(f"\n  examples, {title} ({len(group)}):")
            for o, c in group[:show_examples]:
                print(example(o, c))


@dataclass(frozen=True)
class Target:
    """A scenario row's bar: the share of its kernels that may (`at_most`) or must fail the build."""

    share: float
    at_most: bool

    def met(self, hits: int, total: int) -> bool:
        return total > 0 and (hits <= self.share * total if self.at_most else hits >= self.share * total)

    def text(self) -> str:
        return f"{'<=' if self.at_most else '>='} {self.share:.0%}"


NOT_FAILING, MUST_FAIL, HALF_FOUND = Target(0.01, True), Target(0.95, False), Target(0.50, False)


def unchanged_kernels(rng: np.random.Generator, count: int, p_max: float, prefix: str) -> list[Kernel]:
    families = list(UNCHANGED)
    out = []
    for k in range(count):
        label = families[k % len(families)]
        f = draw_function(rng, UNCHANGED[label], p_max)
        out.append(Kernel(f"{prefix}/unchanged/{label}/{k}", "unchanged", label, f, f))
    return out


def planted_kernels(rng: np.random.Generator, count: int, p_max: float, prefix: str) -> list[Kernel]:
    """Growth changes of PLANTED (scenario B), labelled as the row "planted growth"."""
    return [replace(k, scenario="planted growth") for k in make_kernels(rng, count, 1.0, 0.0, p_max, prefix)[:count]]


def quadratic_kernels(rng: np.random.Generator, count: int, share: float, p_max: float, prefix: str) -> list[Kernel]:
    """Unchanged functions plus c * p^2 worth `share` of the candidate's total at `p_max`."""
    return [replace(k, name=k.name.replace("/unchanged/", f"/quadratic {share:.0%}/"),
                    scenario=f"quadratic {share:.0%}", candidate=k.baseline.plus_quadratic(share, p_max))
            for k in unchanged_kernels(rng, count, p_max, prefix)]


def step_kernels(rng: np.random.Generator, count: int, p: np.ndarray, prefix: str) -> list[Kernel]:
    """Flat kernels twice as slow at the two top sizes."""
    out = []
    for k in range(count):
        f = draw_function(rng, (), p[-1])
        out.append(Kernel(f"{prefix}/step/{k}", "2x step at the top two sizes", "constant", f,
                          Stepped(f.constant, (), start=float(p[-2]), factor=2.0)))
    return out


def renamed_kernels(rng: np.random.Generator, count: int, p_max: float, prefix: str) -> list[Kernel]:
    """Planted growth changes whose candidate carries a similar name (`solve` -> `solve_v2`)."""
    return [replace(k, name=f"{prefix}/solver/solve_{i}", renamed=f"{prefix}/solver/solve_{i}_v2",
                    scenario="renamed, grows faster")
            for i, k in enumerate(planted_kernels(rng, count, p_max, prefix))]


@dataclass(frozen=True)
class Row:
    scenario: str
    group: str
    kernels: int
    hits: int
    target: Target | None
    what: str = "failing"

    best: float | None = None  # the best possible share found (`best_possible`)

    def line(self) -> str:
        met = "" if self.target is None else (
            f"target {self.target.text()}: {'met' if self.target.met(self.hits, self.kernels) else 'MISSED'}")
        return (f"    {self.group:<34} {self.kernels:>6}  {self.what:<12} {rate(self.hits, self.kernels):<24} {met}"
                + self.best_text())

    def best_text(self) -> str:
        return "" if self.best is None else f" (best possible {self.best:.0%})"


def best_possible(kernels: Sequence[Kernel], p: np.ndarray, confidence: float) -> float:
    """The mean power, over `kernels`, of the most powerful test that knows each kernel's true change and the noise
    (module docstring, scenario H): the true log ratios d(p) = log(candidate(p) / baseline(p)), less their mean (a
    constant factor is not a change of shape), are the direction; the mean log of REPETITIONS repetitions of each
    side has variance NOISE^2 / REPETITIONS, so the z-test along d has the noncentrality |d - mean(d)| /
    (NOISE sqrt(2 / REPETITIONS)) and the power Phi(noncentrality - z(confidence))."""
    z = float(stats.norm.ppf(confidence))
    sd = NOISE * math.sqrt(2 / REPETITIONS)
    powers = []
    for k in kernels:
        d = np.log(k.candidate(p) / k.baseline(p))
        powers.append(float(stats.norm.sf(z - float(np.linalg.norm(d - d.mean())) / sd)))
    return float(np.mean(powers))


def scenario_rows(scenario: str, check: Check, targets: Mapping[str, Target]) -> list[Row]:
    """One row per kernel group of `check`: failing kernels against the group's target."""
    rows = []
    for group in dict.fromkeys(o.kernel.scenario for o in check.outcomes):
        members = [o for o in check.outcomes if o.kernel.scenario == group]
        target = targets.get(group, MUST_FAIL)
        rows.append(Row(scenario, group, len(members), sum(o.failing for o in members), target,
                        "failing" if target.at_most else "found"))
    return rows


def print_scenario(title: str, check: Check, rows: list[Row], show_examples: int, extra: Sequence[str] = ()) -> None:
    print(f"\n  {title}  ({len(check.outcomes)} kernels, compare+verdict {check.seconds:.1f} s)")
    print(f"    {'kernels':<34} {'count':>6}  {'counted':<12} {'share [95% CI]':<24} target")
    for row in rows:
        print(row.line())
    for line in extra:
        print(f"    {line}")
    kinds = Counter(f"{kind} ({sev})" for o in check.outcomes for kind, sev in o.kinds.items())
    print("    findings by kind: " + (", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "none"))
    wrong = [o for o in check.outcomes
             if o.failing is (o.kernel.scenario == "unchanged" or o.kernel.scenario.endswith("unchanged"))]
    if wrong and show_examples:
        print(f"    examples of wrong decisions ({len(wrong)}):")
        seen: Counter[str] = Counter()
        for o in wrong:
            seen[o.kernel.scenario] += 1
            if seen[o.kernel.scenario] <= show_examples:
                print(example(o, check))


def run_scenario(key: str, n: int, title: str, kernels: list[Kernel], rng: np.random.Generator, p: np.ndarray,
                 noise: Noise | None, target: float, targets: Mapping[str, Target], show_examples: int,
                 rows: list[Row]) -> Check:
    check = run_check(kernels, *measure(rng, kernels, p, noise), target)
    found = scenario_rows(f"{key} {n} points", check, {"unchanged": NOT_FAILING, **targets})
    print_scenario(f"{key} {title}, {n} points", check, found, show_examples)
    rows += found
    return check


def noise_scenarios(args: argparse.Namespace, count: int, n: int, rng: np.random.Generator,
                    rows: list[Row]) -> None:
    """Scenarios D, E, G, H and I at n points (module docstring)."""
    p = 2.0 ** np.arange(1, n + 1)
    planted = max(30, round(0.15 * count))
    rest = count - planted
    if "D" in args.scenarios:
        for rounds, per_round in ((5, 1), (3, 2)):
            noise = Noise(rounds=rounds, per_round=per_round, burst=0.3, burst_factor=1.3)
            kernels = (unchanged_kernels(rng, rest, p[-1], f"D{n}.{rounds}")
                       + planted_kernels(rng, planted, p[-1], f"D{n}.{rounds}"))
            run_scenario(f"D{rounds}x{per_round}", n, f"rounds slowed at random: {noise.text()}", kernels, rng, p,
                         noise, args.target, {}, args.examples, rows)
    if "E" in args.scenarios:
        noise = Noise(outliers=0.05, per_round=REPETITIONS)
        kernels = (unchanged_kernels(rng, count - 2 * planted, p[-1], f"E{n}")
                   + planted_kernels(rng, planted, p[-1], f"E{n}")
                   + quadratic_kernels(rng, planted, 0.20, p[-1], f"E{n}"))
        run_scenario("E", n, f"outliers: {noise.text()}", kernels, rng, p, noise, args.target, {}, args.examples,
                     rows)
    if "G" in args.scenarios:
        kernels = unchanged_kernels(rng, rest, p[-1], f"G{n}") + step_kernels(rng, planted, p, f"G{n}")
        run_scenario("G", n, "2x step at the top two sizes of a flat kernel", kernels, rng, p, None, args.target,
                     {}, args.examples, rows)
    if "H" in args.scenarios:
        kernels = (unchanged_kernels(rng, count - 2 * planted, p[-1], f"H{n}")
                   + quadratic_kernels(rng, planted, 0.05, p[-1], f"H{n}")
                   + quadratic_kernels(rng, planted, 0.20, p[-1], f"H{n}"))
        start = len(rows)
        run_scenario("H", n, "a quadratic term worth 5% / 20% of the total at the largest p", kernels, rng, p, None,
                     args.target, {"quadratic 5%": HALF_FOUND}, args.examples, rows)
        confidence = CompareOptions().confidence
        for index in range(start, len(rows)):
            group = [k for k in kernels if k.scenario == rows[index].group]
            if rows[index].group.startswith("quadratic"):
                rows[index] = replace(rows[index], best=best_possible(group, p, confidence))
                print(f"    {rows[index].group}: best possible {rows[index].best:.1%} (function best_possible)")
    if "I" in args.scenarios:
        kernels = (unchanged_kernels(rng, count - planted // 3, p[-1], f"I{n}")
                   + renamed_kernels(rng, planted // 3, p[-1], f"I{n}"))
        check = run_check(kernels, *measure(rng, kernels, p), args.target)
        found = [replace(row, target=None) if row.group != "unchanged" else row  # a guess never fails by design
                 for row in scenario_rows(f"I {n} points", check, {"unchanged": NOT_FAILING})]
        renamed = [o for o in check.outcomes if o.kernel.renamed]
        found.append(Row(f"I {n} points", "renamed, a 'renamed' finding", len(renamed),
                         sum("renamed" in o.kinds for o in renamed), MUST_FAIL, "detected"))
        detection = ("scalecheck has no rename detection: not detected" if rename_entry() is None else
                     "rename detection: core.renames.renamed_findings; its 'renamed' findings are warnings by design "
                     "(a name similarity is a guess), so 'found' (failing) stays 0")
        print_scenario(f"I rename with a regression, {n} points", check, found, args.examples, [detection])
        rows += found


def replay_scenario(args: argparse.Namespace, rows: list[Row]) -> None:
    """Scenario F: the saved measurements of benchmarks/data/ (module docstring)."""
    cases = (("cancelling_terms", "p", 4096.0, "flat, modeled with cancelling terms; candidate 2x at the top 2"),
             ("sorted_under_load", "n", 2.0**20, "sorted() under two busy loops"))
    for case, name, target, title in cases:
        base = list(read_measurements(DATA / f"{case}.baseline.json").series)
        cand = list(read_measurements(DATA / f"{case}.candidate.json").series)
        groups = {case: (cand, "cancelled baseline, 2x step" if case == "cancelling_terms" else "unchanged")}
        if case == "sorted_under_load":
            groups["sorted + quadratic 20%"] = ([_plus_quadratic(s, 0.20) for s in cand], "quadratic 20%")
            f, dof_r, dof_e = round_effect(base + cand)
            shuffle = np.random.default_rng(args.seed)
            shuffled = [round_effect([replace(s, values=np.array([shuffle.permutation(row) for row in s.values]))
                                      for s in base + cand])[0] for _ in range(200)]
            print(f"\n  F replay {case}: do rounds move every size together? Two-way analysis of the ranks within "
                  f"each size (sizes x rounds, both sides): F = {f:.2f} on ({dof_r}, {dof_e}) degrees of freedom, "
                  f"p = {stats.f.sf(f, dof_r, dof_e):.1e}; with the repetitions shuffled within each size, 200 times: "
                  f"F {np.mean(shuffled):.2f} on average, 95% of them below {np.quantile(shuffled, 0.95):.2f} "
                  "(F near 1: rounds agree as repetitions do)")
        for series, group in groups.values():
            if group == "quadratic 20%":
                baselines = {b.kernel: b for b in base}
                oracle = [round_oracle(baselines[c.kernel], c, q) for c, q in zip(cand, series)]
                unchanged = [round_oracle(baselines[c.kernel], c, q, compare_with=c) for c, q in zip(cand, series)]
                print(f"\n  F replay {case}: a test that knows where the term was added (`round_oracle`: Welch's t on "
                      f"the {len(np.unique(cand[0].rounds))} rounds a side, one-sided at 5%, no false-discovery "
                      f"adjustment) finds {sum(p < 0.05 for p in oracle)} of {len(oracle)} kernels; on the unchanged "
                      f"candidates {sum(p < 0.05 for p in unchanged)} of {len(unchanged)}")
            start = time.perf_counter()
            result = verdict(compare(base, series, {name: target}, settings=CompareOptions()))
            seconds = time.perf_counter() - start
            failing = {f.kernel for f in result.findings if f.severity == "error"}
            improved = {f.kernel for f in result.findings if f.kind == "improvement"}
            models = {kc.kernel: kc for kc in result.comparison.kernels}
            constant = sum(any(km is not None and km.model is not None and km.model.spec.n_terms == 0
                               for km in (kc.baseline, kc.candidate)) for kc in models.values())
            target_ = NOT_FAILING if group == "unchanged" else MUST_FAIL
            row = Row(f"F {case}", group, len(series), len(failing), target_,
                      "failing" if target_.at_most else "found")
            print(f"\n  F replay {case}: {title}, target {name}={target:g} (compare+verdict {seconds:.1f} s)")
            print(row.line())
            rows.append(row)
            if case == "cancelling_terms":
                improvement = Row(f"F {case}", "read as an improvement", len(series), len(improved), Target(0.0, True),
                                  "improvement")
                print(improvement.line())
                rows.append(improvement)
            print(f"    kernels modeled as constant on a side: {constant} of {len(series)}")
            for kc in list(models.values())[:args.examples]:
                formulas = [km.model.formula() if km is not None and km.model is not None else "-"
                            for km in (kc.baseline, kc.candidate)]
                kinds = sorted({f"{f.kind}/{f.severity}" for f in result.findings if f.kernel == kc.kernel})
                print(f"      {kc.kernel}: {formulas[0]}  ->  {formulas[1]}; {', '.join(kinds) or 'no finding'}")


def round_effect(series: Sequence[Series]) -> tuple[float, int, int]:
    """(F, its degrees of freedom) of the rounds' effect over all of `series` (each with every round at every
    point): per series, the ranks of the values within each point, averaged per (point, round), in a two-way
    analysis with the points as blocks; the rounds' and the residual sums of squares pooled over the series.
    Without a round effect both mean squares have the same expectation; a round that moves every point together
    (a burst of load, a machine whose speed drifts between rounds) makes F exceed 1."""
    ss_r = ss_e = 0.0
    dof_r = dof_e = 0
    for s in series:
        assert s.rounds is not None
        ranks = stats.rankdata(s.values, axis=1)
        labels = np.unique(s.rounds)
        cells = np.stack([np.array([row[r == k].mean() for row, r in zip(ranks, s.rounds)]) for k in labels], axis=1)
        residual = cells - cells.mean(axis=1, keepdims=True) - cells.mean(axis=0) + cells.mean()
        ss_r += cells.shape[0] * float(np.sum((cells.mean(axis=0) - cells.mean()) ** 2))
        ss_e += float(np.sum(residual ** 2))
        dof_r += labels.size - 1
        dof_e += (cells.shape[0] - 1) * (labels.size - 1)
    return (ss_r / dof_r) / (ss_e / dof_e), dof_r, dof_e


def round_oracle(baseline: Series, candidate: Series, changed: Series, compare_with: Series | None = None) -> float:
    """The one-sided p-value of a test that knows the shape of the change from `candidate` to `changed` and takes
    a round as the unit of noise: per round, the log of each size's median projected on that shape (the log ratios
    of the medians of `changed` to those of `candidate`, less their mean: a constant factor is no change of
    shape); Welch's t of the projections of `compare_with` (default `changed`) against those of `baseline`, with no
    false-discovery adjustment. With `compare_with=candidate` it measures how often the test fails unchanged code."""
    shape = np.log(np.nanmedian(changed.values, axis=1) / np.nanmedian(candidate.values, axis=1))
    shape -= shape.mean()

    def projections(series: Series) -> np.ndarray:
        assert series.rounds is not None
        labels = np.unique(series.rounds[~np.isnan(series.rounds)])
        medians = np.array([[np.nanmedian(row[r == k]) for row, r in zip(series.values, series.rounds)]
                            for k in labels])  # (rounds, sizes)
        return np.asarray(np.log(medians) @ shape)

    side = changed if compare_with is None else compare_with
    return float(stats.ttest_ind(projections(side), projections(baseline), equal_var=False,
                                 alternative="greater").pvalue)


def _plus_quadratic(series: Series, share: float) -> Series:
    """`series` plus c * x^2 worth `share` of the new median at the largest x (added to every repetition)."""
    x = series.points[:, 0]
    top = float(np.nanmedian(series.values[np.argmax(x)]))
    coef = share / (1 - share) * top / float(x.max()) ** 2
    return replace(series, values=series.values + coef * x[:, None] ** 2)


def main(argv: list[str] | None = None) -> int:
    global REPETITIONS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernels", type=int, default=None,
                        help="kernels per comparison (default 1000; 200 with --quick)")
    parser.add_argument("--seed", type=int, default=11, help="random seed (default 11)")
    parser.add_argument("--points", default="6,8", help="point counts n, comma separated: p = 2..2^n (default 6,8)")
    parser.add_argument("--target", type=float, default=4096.0, help="target scale p of the predictions (default 4096)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 200 kernels per comparison")
    parser.add_argument("--examples", type=int, default=3, help="example kernels printed per problem (default 3)")
    parser.add_argument("--repetitions", type=int, default=REPETITIONS,
                        help=f"repetitions per point and side (default {REPETITIONS}; scenario D keeps its rounds)")
    parser.add_argument("--scenarios", default="ABCDEFGHI",
                        help="scenarios to run, letters of the module docstring (default ABCDEFGHI)")
    args = parser.parse_args(argv)
    REPETITIONS = args.repetitions
    count = args.kernels or (200 if args.quick else 1000)
    point_counts = [int(x) for x in args.points.split(",")]
    if count < 20 or min(point_counts) < 3 or REPETITIONS < 1:
        parser.error("need --kernels >= 20, point counts >= 3 and --repetitions >= 1")
    rng = np.random.default_rng(args.seed)
    print(f"seed {args.seed}; {count} kernels per comparison; {REPETITIONS} repetitions; noise: each repetition "
          f"f(p) * (1 + {NOISE:g} z), z ~ N(0,1); target p={args.target:g}; default CompareOptions "
          f"({CompareOptions().resamples} resamples, threshold {CompareOptions().threshold:.0%}, confidence "
          f"{CompareOptions().confidence:.0%}), default gate; {os.cpu_count()} CPUs")
    print(f"mixed comparison: {MIXED_PLANTED:.0%} planted, {MIXED_SLOWED:.0%} slowed 5%, rest unchanged; "
          f"sparse comparison: {SPARSE_PLANTED:.0%} planted (at least 3), rest unchanged")
    criteria: list[tuple[str, bool, str]] = []
    rows: list[Row] = []
    timing: tuple[int, float, float, tuple[float, float, float]] | None = None
    for n in point_counts:
        if set("DEGHI") & set(args.scenarios):
            print(f"\n== scenarios under real noise, {n} points (p = 2..{2 ** n}) ==")
            noise_scenarios(args, count, n, np.random.default_rng([args.seed, n]), rows)
        if not set("ABC") & set(args.scenarios):
            continue
        p = 2.0 ** np.arange(1, n + 1)
        mixed_kernels = make_kernels(rng, count, MIXED_PLANTED, MIXED_SLOWED, p[-1], f"n{n}m")
        sparse_kernels = make_kernels(rng, count, SPARSE_PLANTED, 0.0, p[-1], f"n{n}s")
        mixed_series, sparse_series = measure(rng, mixed_kernels, p), measure(rng, sparse_kernels, p)
        load = os.getloadavg()
        mixed = run_check(mixed_kernels, *mixed_series, args.target)
        if n == max(point_counts):
            start = time.perf_counter()
            fit_kernels(mixed_series[0])
            fit_kernels(mixed_series[1])
            timing = (n, mixed.seconds, time.perf_counter() - start, load)
        sparse = run_check(sparse_kernels, *sparse_series, args.target)
        report_points(n, mixed, sparse, criteria, args.examples)

    if "F" in args.scenarios:
        print("\n== F replays of saved measurements (benchmarks/data/) ==")
        replay_scenario(args, rows)

    if timing is not None:
        n, seconds, modeling, load = timing
        scaled = seconds * 1000 / count
        print(f"\n== cost: mixed comparison, {count} kernels, {n} points, in-process, one process ==")
        print(f"  compare()+verdict()            {seconds:7.1f} s   ({seconds / BUDGET:.2f} x the {BUDGET:.0f} s budget"
              + (f"; scaled to 1,000 kernels: {scaled:.1f} s" if count != 1000 else "") + ")")
        print(f"  fit_kernels baseline+candidate {modeling:7.1f} s   ({2 * count} series; reference measured in the "
              f"same run)")
        print(f"  compare / modeling             {seconds / modeling:7.1f} x")
        print(f"  load average before the run: {', '.join(f'{x:.2f}' for x in load)} (1, 5, 15 min)")
        criteria.append((f"compare+verdict on 1,000 kernels within {BUDGET:.0f} s", scaled <= BUDGET,
                         f"{scaled:.1f} s" + (" (scaled from a smaller run)" if count != 1000 else "")))

    if rows:
        print("\n== scenarios: targets ==")
        for row in rows:
            if row.target is None:
                continue
            met = row.target.met(row.hits, row.kernels)
            print(f"  {'met   ' if met else 'MISSED'}  {row.scenario:<22} {row.group:<32} {row.what} "
                  f"{row.hits}/{row.kernels} {rate(row.hits, row.kernels).strip()}, target {row.target.text()}"
                  + row.best_text())
    print("\n== criteria (the targets) ==")
    for name, passed, detail in criteria:
        print(f"  {'PASS' if passed else 'FAIL'}  {name}: {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
