"""Decision quality and cost of the CI check (`compare` + `verdict`) on seeded synthetic pairs of measurements.

    python benchmarks/check_quality.py [--kernels 1000] [--seed 11] [--points 6,8] [--target 4096] [--quick]

Measures the check the way the issue judges it. Kernels have one parameter, p = 2, 4, ..., 2^n (n points, 6 and 8
by default), 5 repetitions per point, and multiplicative Gaussian noise: every repetition is f(p) * (1 + 0.05 z),
z ~ N(0, 1). Baseline and candidate are measured independently (fresh noise each).

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
  (the issue's bar: none), and "measured" warnings for information.

Cost: wall time of compare() + verdict() on the mixed 8-point comparison (default bootstrap, in-process), against
the issue's 30 s budget for 1,000 kernels, beside the plain modeling of the same series (`fit_kernels` on
baseline and candidate) measured in the same run.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
from scalecheck.data.verdict import KernelComparison, Verdict  # noqa: E402

REPETITIONS = 5
NOISE = 0.05  # standard deviation of the multiplicative Gaussian noise per repetition
SLOWDOWN = 1.05
BUDGET = 30.0  # seconds for 1,000 kernels on 2 cores (the bar)
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


@dataclass(frozen=True)
class Kernel:
    name: str
    scenario: str  # "unchanged", "planted", "slowdown"
    label: str  # function family, or planted change
    baseline: Function
    candidate: Function


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


def measure(rng: np.random.Generator, kernels: Sequence[Kernel], p: np.ndarray) -> tuple[list[Series], list[Series]]:
    """Baseline and candidate series, each repetition f(p) * (1 + NOISE * z)."""
    sides: tuple[list[Series], list[Series]] = ([], [])
    for kernel in kernels:
        for side, f in zip(sides, (kernel.baseline, kernel.candidate)):
            values = f(p)[:, None] * (1 + NOISE * rng.standard_normal((p.size, REPETITIONS)))
            side.append(Series(kernel.name, "time", ("p",), p[:, None], values))
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
    result = verdict(compare(base, cand, {"p": target}, settings=CompareOptions()))
    seconds = time.perf_counter() - start
    kinds: dict[str, dict[str, str]] = defaultdict(dict)
    for f in result.findings:  # worst first, so the first severity per kind is kept
        kinds[f.kernel].setdefault(f.kind, f.severity)
    compared = {kc.kernel: kc for kc in result.comparison.kernels}
    outcomes = [Outcome(k, kinds.get(k.name, {}), compared.get(k.name)) for k in kernels]
    return Check(outcomes, seconds, result)


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernels", type=int, default=None,
                        help="kernels per comparison (default 1000; 200 with --quick)")
    parser.add_argument("--seed", type=int, default=11, help="random seed (default 11)")
    parser.add_argument("--points", default="6,8", help="point counts n, comma separated: p = 2..2^n (default 6,8)")
    parser.add_argument("--target", type=float, default=4096.0, help="target scale p of the predictions (default 4096)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 200 kernels per comparison")
    parser.add_argument("--examples", type=int, default=3, help="example kernels printed per problem (default 3)")
    args = parser.parse_args(argv)
    count = args.kernels or (200 if args.quick else 1000)
    point_counts = [int(x) for x in args.points.split(",")]
    if count < 20 or min(point_counts) < 3:
        parser.error("need --kernels >= 20 and point counts >= 3")
    rng = np.random.default_rng(args.seed)
    print(f"seed {args.seed}; {count} kernels per comparison; {REPETITIONS} repetitions; noise: each repetition "
          f"f(p) * (1 + {NOISE:g} z), z ~ N(0,1); target p={args.target:g}; default CompareOptions "
          f"({CompareOptions().resamples} resamples, threshold {CompareOptions().threshold:.0%}, confidence "
          f"{CompareOptions().confidence:.0%}), default gate; {os.cpu_count()} CPUs")
    print(f"mixed comparison: {MIXED_PLANTED:.0%} planted, {MIXED_SLOWED:.0%} slowed 5%, rest unchanged; "
          f"sparse comparison: {SPARSE_PLANTED:.0%} planted (at least 3), rest unchanged")
    criteria: list[tuple[str, bool, str]] = []
    timing: tuple[int, float, float, tuple[float, float, float]] | None = None
    for n in point_counts:
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

    print("\n== criteria (the issue's bars) ==")
    for name, passed, detail in criteria:
        print(f"  {'PASS' if passed else 'FAIL'}  {name}: {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
