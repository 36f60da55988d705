"""Does the CI check stay quiet when only the runner differs, and still catch real growth?

    python benchmarks/ci_drift.py [--kernels 1000] [--seed 5] [--quick] [--rows 1,2,8]

A CI check compares a baseline measured at one time on one machine with a candidate measured later, often on
another. Each row of the table is ONE call of `scalecheck.api.check(candidate, baseline, Config())` (default
settings; target 4x the largest size) on `--kernels` unchanged kernels plus 10% planted-growth kernels, where the
candidate is measured under one kind of runner drift, and where each side's `Run.meta["machine"]` carries a
machine fingerprint (JSON object text: cores, cpu, host, os) that is equal, different, or missing on the baseline.

Measurements: one parameter n = 1k, 2k, ..., 128k (1024 * 2^k, 8 points), 5 repetitions, each repetition
f(n) * exp(0.05 z) (lognormal noise, 5%), z ~ N(0, 1); baseline and candidate drawn independently. Unchanged
functions: the family of `check_quality.py` (constant, log n, n^(1/2), n, n log n, n^1.5, n^2, log n + n,
n + n^2, n^(1/2) + n^1.5 in equal numbers, its coefficients). Planted growth (10% extra, the three changes in
turn): n -> n^1.5, n log n -> n^2, log n -> n, the new term's coefficient matched so that both functions agree
at n = 1k. The row's drift is applied to the candidate's true values of every kernel, planted ones included
(planted growth must still be caught when the runner also differs), before the noise:

  1 same runner, fingerprints equal, nothing changed
  2 / 3 / 4 a runner 10% / 15% / 25% slower (x factor; another cpu and host)
  5 +20% constant overhead: f(n) + 0.2 f(1k) (another machine)
  6 a smaller cache: x1.15 at n above 16k (another machine)
  7 the baseline has no fingerprint (no meta.machine), the candidate runs 10% slower
  8 the same machine, a real 25% slowdown of every kernel: here the unchanged kernels SHOULD fail (prediction)
  9 the same machine, the smaller-cache change (informational: on one machine this is a change of behaviour)

Counted per row: unchanged kernels with a failing finding (severity "error"); "builds": the unchanged kernels in
groups of 10 by index, a build failing when any of its kernels has a failing finding; planted kernels with any
failing finding and with a failing growth finding; the kinds of the failing findings of unchanged kernels; the
findings held back (a non-empty `held` attribute, when the Finding has one); the wall time of the check.

Targets: rows whose machines differ (or are unknown) fail no build of unchanged kernels; row 8 fails every build
(the share of its kernels that fail is printed too); in every row at least 95% of the planted kernels fail. The
script is a measurement: it exits 0 unless it breaks itself, and ends with `targets: all met` or
`targets: missed: ...`.

Cost: one row (1,100 kernels) takes about 8 s of one core, the full run of 9 rows about 75 s; `--quick` (100
kernels + 10 planted per row) about 10 s. Everything is seeded (truths from `--seed`, each row's
noise from (seed, row), the check's bootstrap from its default seed), so a row's figures do not depend on which
other rows run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import check_quality  # noqa: E402
from check_quality import PLANTED, UNCHANGED, Function, Kernel, _basis, draw_function, rate  # noqa: E402

from scalecheck.api import CheckResult, check  # noqa: E402
from scalecheck.config import Config  # noqa: E402
from scalecheck.data.measurement import Run, Series  # noqa: E402
from scalecheck.data.verdict import Finding  # noqa: E402

SIZES = 1024.0 * 2.0 ** np.arange(8)  # n = 1k .. 128k
REPETITIONS = 5
NOISE = 0.05  # sigma of the lognormal noise per repetition
PLANTED_SHARE = 0.10  # planted kernels, as a share of the unchanged ones
BUILD = 10  # unchanged kernels per simulated build
CACHE_FROM = 16384.0  # the smaller cache slows sizes above this n
GOAL = 0.95

MACHINE = {"cores": "4", "cpu": "AMD EPYC 7763 64-Core Processor", "host": "fv-az1", "os": "Linux-x86_64"}
OTHER = {"cores": "4", "cpu": "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz", "host": "fv-az7", "os": "Linux-x86_64"}

Drift = Callable[[np.ndarray, np.ndarray, float], np.ndarray]  # (sizes, true values, value at 1k) -> drifted


def _factor(x: float) -> Drift:
    return lambda n, v, v0: v * x


def _overhead(share: float) -> Drift:
    return lambda n, v, v0: v + share * v0


def _cache(x: float) -> Drift:
    return lambda n, v, v0: np.where(n > CACHE_FROM, v * x, v)


@dataclass(frozen=True)
class Row:
    number: int
    text: str  # "the same code, candidate measured ..."
    machines: str  # same, differ, unknown (the baseline has no fingerprint)
    drift: Drift
    expect: str  # quiet: no failing build of unchanged kernels; fail: the build must fail; info: no target


ROWS = (
    Row(1, "on the same runner", "same", _factor(1.0), "info"),
    Row(2, "on a runner 10% slower", "differ", _factor(1.10), "quiet"),
    Row(3, "on a runner 15% slower", "differ", _factor(1.15), "quiet"),
    Row(4, "on a runner 25% slower", "differ", _factor(1.25), "quiet"),
    Row(5, "on a runner with +20% constant overhead", "differ", _overhead(0.20), "quiet"),
    Row(6, "on a runner with a smaller cache (x1.15 above 16k)", "differ", _cache(1.15), "quiet"),
    Row(7, "10% slower, baseline's machine unknown", "unknown", _factor(1.10), "quiet"),
    Row(8, "25% slower on the same runner (real slowdown)", "same", _factor(1.25), "fail"),
    Row(9, "with the smaller cache on the same runner", "same", _cache(1.15), "info"),
)


def fingerprint(machine: dict[str, str]) -> str:
    return json.dumps(machine, sort_keys=True)


def make_kernels(rng: np.random.Generator, count: int) -> list[Kernel]:
    """`count` unchanged kernels (the family of check_quality.py in turn), then 10% planted growth changes."""
    n_max, n_min = float(SIZES[-1]), float(SIZES[0])
    families, changes = list(UNCHANGED), list(PLANTED)
    kernels = []
    for k in range(count):
        label = families[k % len(families)]
        f = draw_function(rng, UNCHANGED[label], n_max)
        kernels.append(Kernel(f"unchanged/{label}/{k}", "unchanged", label, f, f))
    for k in range(max(len(changes), round(PLANTED_SHARE * count))):
        label = changes[k % len(changes)]
        before, after = PLANTED[label]
        f = draw_function(rng, (before,), n_max)
        (coef, _), = f.terms
        g = Function(f.constant, ((coef * float(_basis(before, n_min)) / float(_basis(after, n_min)), after),))
        kernels.append(Kernel(f"planted/{label}/{k}", "planted", label, f, g))
    return kernels


def measure(rng: np.random.Generator, kernels: Sequence[Kernel], row: Row) -> tuple[Run, Run]:
    """(candidate, baseline) runs of one row: the row's drift on the candidate's truth, then lognormal noise."""
    n = SIZES
    base: list[Series] = []
    cand: list[Series] = []
    for kernel in kernels:
        truth = kernel.baseline(n)
        drifted = row.drift(n, kernel.candidate(n), float(kernel.candidate(n[:1])[0]))
        for side, exact in ((base, truth), (cand, drifted)):
            values = exact[:, None] * rng.lognormal(0.0, NOISE, (n.size, REPETITIONS))
            side.append(Series(kernel.name, "time", ("n",), n[:, None], values, unit="s"))
    base_meta = {} if row.machines == "unknown" else {"machine": fingerprint(MACHINE)}
    cand_meta = {"machine": fingerprint(MACHINE if row.machines == "same" else OTHER)}
    return Run(("n",), tuple(cand), meta=cand_meta), Run(("n",), tuple(base), meta=base_meta)


@dataclass(frozen=True)
class Outcome:
    row: Row
    kernels: list[Kernel]
    result: CheckResult
    seconds: float  # the check() call


def run_row(row: Row, kernels: list[Kernel], seed: int) -> Outcome:
    cand, base = measure(np.random.default_rng([seed, row.number]), kernels, row)
    start = time.perf_counter()
    result = check(cand, base, Config())
    return Outcome(row, kernels, result, time.perf_counter() - start)


@dataclass(frozen=True)
class Counts:
    unchanged: int
    unchanged_failing: int
    builds: int
    builds_failing: int
    planted: int
    planted_failing: int
    planted_growth: int
    kinds: Counter[str]  # kind of the failing findings of unchanged kernels
    warned: Counter[str]  # kind of the other findings of unchanged kernels (warning / notice)
    held: Counter[str]  # held-back findings by kind ("held" attribute non-empty)
    families: Counter[str]  # unchanged kernels failing, by function family
    missed: Counter[str]  # planted kernels not failing, by change
    no_growth: Counter[str]  # planted kernels without a failing growth finding, by why (check_quality.miss_reason)
    failed: bool  # the check's verdict


def count(o: Outcome) -> Counts:
    errors: dict[str, list[Finding]] = {}
    for f in o.result.verdict.findings:
        if f.severity == "error":
            errors.setdefault(f.kernel, []).append(f)
    unchanged = [k for k in o.kernels if k.scenario == "unchanged"]
    planted = [k for k in o.kernels if k.scenario == "planted"]
    failing = [k.name in errors for k in unchanged]
    builds = [any(failing[i:i + BUILD]) for i in range(0, len(failing), BUILD)]
    names = {k.name for k in unchanged}
    kinds = Counter(f.kind for name in names for f in errors.get(name, []))
    warned = Counter(f"{f.kind} ({f.severity})" for f in o.result.verdict.findings
                     if f.kernel in names and f.severity != "error")
    held = Counter(f"{f.kind} ({'planted' if f.kernel not in names else 'unchanged'})"
                   for f in o.result.verdict.findings if getattr(f, "held", ""))
    grew = [any(f.kind == "growth" for f in errors.get(k.name, [])) for k in planted]
    return Counts(len(unchanged), sum(failing), len(builds), sum(builds), len(planted),
                  sum(k.name in errors for k in planted), sum(grew),
                  kinds, warned, held, Counter(k.label for k, bad in zip(unchanged, failing) if bad),
                  Counter(k.label for k in planted if k.name not in errors),
                  Counter(f"{k.label}: {_why(o, k)}" for k, found in zip(planted, grew) if not found),
                  bool(o.result.verdict.failed))


def _why(o: Outcome, kernel: Kernel) -> str:
    """Why a planted kernel has no failing growth finding (check_quality's reasons, or the finding's severity)."""
    growth = [f for f in o.result.verdict.findings if f.kernel == kernel.name and f.kind == "growth"]
    if growth:
        return f"growth finding is a {growth[0].severity}" + (" (held)" if getattr(growth[0], "held", "") else "")
    compared = {kc.kernel: kc for kc in o.result.verdict.comparison.kernels}.get(kernel.name)
    try:
        return check_quality.miss_reason(check_quality.Outcome(kernel, {}, compared))
    except AttributeError:  # the comparison's fields changed
        return "?"


def table(rows: Sequence[tuple[Row, Counts]]) -> str:
    width = max(len("the same code, candidate measured ..."), *(len(f"{r.number} {r.text}") for r, _ in rows))
    lines = [f"| {'the same code, candidate measured ...':<{width}} | machines | unchanged kernels failing | "
             f"builds failing ({BUILD} kernels each) | planted growth failing | by a growth finding |",
             f"|{'-' * (width + 2)}|---|---|---|---|---|"]
    for r, c in rows:
        lines.append(f"| {f'{r.number} {r.text}':<{width}} | {r.machines:<8} | {c.unchanged_failing}/{c.unchanged} | "
                     f"{c.builds_failing}/{c.builds} | {c.planted_failing}/{c.planted} "
                     f"({c.planted_failing / max(1, c.planted):.0%}) | {c.planted_growth}/{c.planted} |")
    return "\n".join(lines)


def _show(counter: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items())) or "none"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernels", type=int, default=None,
                        help="unchanged kernels per row (default 1000; 100 with --quick), plus 10%% planted")
    parser.add_argument("--seed", type=int, default=5, help="random seed (default 5)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 100 unchanged kernels per row")
    parser.add_argument("--rows", default=",".join(str(r.number) for r in ROWS),
                        help="rows to run, comma separated (default all: 1-9)")
    args = parser.parse_args(argv)
    count_ = args.kernels or (100 if args.quick else 1000)
    if count_ < BUILD:
        parser.error(f"need --kernels >= {BUILD}")
    try:
        wanted = {int(x) for x in args.rows.split(",") if x.strip()}
    except ValueError:
        parser.error(f"--rows: cannot read '{args.rows}'")
    rows = [r for r in ROWS if r.number in wanted]
    if not rows or wanted - {r.number for r in ROWS}:
        parser.error(f"--rows: choose among {', '.join(str(r.number) for r in ROWS)}")

    kernels = make_kernels(np.random.default_rng(args.seed), count_)
    planted = sum(k.scenario == "planted" for k in kernels)
    changes = Counter(k.label for k in kernels if k.scenario == "planted")
    print(f"seed {args.seed}; {count_} unchanged + {planted} planted kernels per row "
          f"({', '.join(f'{v} {k}' for k, v in changes.items())}); "
          f"n = {', '.join(f'{int(n) // 1024}k' for n in SIZES)}; {REPETITIONS} repetitions, lognormal noise "
          f"sigma {NOISE:g}; scalecheck.api.check with Config() defaults (target 4x the largest n); "
          f"{os.cpu_count()} CPUs, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"fingerprints: baseline {fingerprint(MACHINE)}; other machine {fingerprint(OTHER)}")

    done: list[tuple[Row, Counts]] = []
    total = time.perf_counter()
    for row in rows:
        start = time.perf_counter()
        outcome = run_row(row, kernels, args.seed)
        c = count(outcome)
        done.append((row, c))
        print(f"\nrow {row.number}: candidate measured {row.text} (machines {row.machines})")
        print(f"  verdict (planted kernels included) {'FAILED' if c.failed else 'passed'}; "
              f"check() {outcome.seconds:.1f} s (with measuring {time.perf_counter() - start:.1f} s)")
        print(f"  unchanged kernels failing {rate(c.unchanged_failing, c.unchanged).strip()}; builds failing "
              f"{c.builds_failing}/{c.builds}")
        print(f"  failing findings of unchanged kernels by kind: {_show(c.kinds)}")
        if c.families:
            print("  unchanged kernels failing by function: " + ", ".join(
                f"{f} {c.families[f]}/{c.unchanged // len(UNCHANGED) + (i < c.unchanged % len(UNCHANGED))}"
                for i, f in enumerate(UNCHANGED) if c.families[f]))
        print(f"  other findings of unchanged kernels: {_show(c.warned)}")
        print(f"  held back (Finding.held): {sum(c.held.values())}" + (f" ({_show(c.held)})" if c.held else ""))
        print(f"  planted failing {c.planted_failing}/{c.planted}, by growth {c.planted_growth}/{c.planted}"
              + (f"; not failing: {_show(c.missed)}" if c.missed else ""))
        if c.no_growth:
            print(f"  planted without a failing growth finding: {_show(c.no_growth)}")
        sys.stdout.flush()
    elapsed = time.perf_counter() - total

    print(f"\n{table(done)}\n")
    print(f"wall time: {elapsed:.0f} s for {len(done)} rows")

    print("\n== targets ==")
    missed = []
    for row, c in done:
        checks = []
        if row.expect == "quiet":
            checks.append((f"row {row.number} (machines {row.machines}): no failing build of unchanged kernels",
                           c.builds_failing == 0, f"{c.builds_failing}/{c.builds} builds, "
                                                  f"{c.unchanged_failing}/{c.unchanged} kernels"))
        elif row.expect == "fail":
            checks.append((f"row {row.number} (real slowdown): every build of unchanged kernels fails",
                           c.builds_failing == c.builds, f"builds failing {c.builds_failing}/{c.builds}"))
            print(f"  info  row {row.number} (real slowdown): unchanged kernels failing {c.unchanged_failing}/"
                  f"{c.unchanged} ({c.unchanged_failing / c.unchanged:.1%}; the others' lower bound at the target "
                  "stays under 1 + threshold)")
        else:
            print(f"  info  row {row.number} ({row.text}): unchanged kernels failing {c.unchanged_failing}/"
                  f"{c.unchanged}, builds {c.builds_failing}/{c.builds}")
        checks.append((f"row {row.number}: planted growth fails >= {GOAL:.0%}", c.planted_failing >= GOAL * c.planted,
                       f"{c.planted_failing}/{c.planted} (growth finding {c.planted_growth})"))
        for name, passed, detail in checks:
            print(f"  {'PASS' if passed else 'FAIL'}  {name}: {detail}")
            if not passed:
                missed.append(name)
    print("targets: all met" if not missed else "targets: missed: " + "; ".join(missed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
