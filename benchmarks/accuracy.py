"""Accuracy on synthetic kernels with known truth: scalecheck beside Extra-P (when installed), same files.

    python benchmarks/accuracy.py [--single 1000] [--multi 400] [--seed 7] [--extrap PATH]

Single parameter: the share of kernels whose exact lead-order term (i, j) is recovered, among kernels whose true
term contributes at least 10% of the value at the largest point; and the share of constant kernels modeled as
constant. Two parameters: the share of kernels (every true term >= 10%) modeled with exactly the true terms
(same exponents, same sum or product shape).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import synthetic  # noqa: E402
from extrap_reference import find_extrap, run_extrap  # noqa: E402

from scalecheck.core.modeler import fit_kernels  # noqa: E402
from scalecheck.core.search import FitOptions  # noqa: E402
from scalecheck.data.measurement import Series  # noqa: E402

TermSet = frozenset  # of frozensets of (parameter name, Fraction i, Fraction j)


def truth_terms(kernel: synthetic.Kernel, names: tuple[str, ...]) -> TermSet:
    return frozenset(frozenset((names[p], Fraction(i), Fraction(j)) for p, i, j in term) for term in kernel.truth)


def scalecheck_terms(kernels: list[synthetic.Kernel], names: tuple[str, ...], options: FitOptions) -> list[TermSet]:
    series = [Series(k.name, "time", names, k.points, k.values) for k in kernels]
    out = []
    for km in fit_kernels(series, options):
        terms = km.model.spec.terms if km.model else ()
        out.append(frozenset(frozenset((names[f.param], Fraction(f.exponent), Fraction(f.log_exponent))
                                       for f in t.factors) for t in terms))
    return out


def lead(terms: TermSet, name: str) -> tuple[Fraction, Fraction]:
    return max(((i, j) for term in terms for (p, i, j) in term if p == name), default=(Fraction(0), Fraction(0)))


def score_single(kernels: list[synthetic.Kernel], found: list[TermSet]) -> tuple[float, int, float, int]:
    eligible = [(k, f) for k, f in zip(kernels, found) if k.truth and k.term_shares()[0] >= 0.1]
    hits = sum(lead(truth_terms(k, ("p",)), "p") == lead(f, "p") for k, f in eligible)
    constants = [(k, f) for k, f in zip(kernels, found) if not k.truth]
    const_hits = sum(not f for _, f in constants)
    return hits / max(1, len(eligible)), len(eligible), const_hits / max(1, len(constants)), len(constants)


def score_multi(kernels: list[synthetic.Kernel], found: list[TermSet]) -> tuple[float, int]:
    eligible = [(k, f) for k, f in zip(kernels, found) if min(k.term_shares()) >= 0.1]
    hits = sum(truth_terms(k, ("x", "y")) == f for k, f in eligible)
    return hits / max(1, len(eligible)), len(eligible)


def extrap_terms(exe: Path, path: Path, kernels: list[synthetic.Kernel]) -> tuple[list[TermSet], float]:
    result = run_extrap(exe, path, "text")
    found = []
    for k in kernels:
        model = result.models.get((k.name, "time"))
        terms = model.terms if model is not None else ()
        found.append(frozenset(frozenset((p, Fraction(i).limit_denominator(12), Fraction(j).limit_denominator(12))
                                         for p, (i, j) in term.factors.items() if i or j) for term in terms))
    return found, result.seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--single", type=int, default=1000, help="single-parameter kernels (default 1000)")
    parser.add_argument("--multi", type=int, default=400, help="two-parameter kernels (default 400)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    parser.add_argument("--noise", type=float, default=0.02, help="uniform relative noise (default 0.02)")
    parser.add_argument("--extrap", help="path of Extra-P's `extrap` command (default: found automatically)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    single = synthetic.single_parameter(rng, args.single, noise=args.noise)
    multi = synthetic.two_parameter(rng, args.multi, noise=args.noise)
    options = FitOptions()
    rows = [("scalecheck", score_single(single, scalecheck_terms(single, ("p",), options)),
             score_multi(multi, scalecheck_terms(multi, ("x", "y"), options)))]
    exe = find_extrap(args.extrap)
    if exe is not None:
        with tempfile.TemporaryDirectory() as tmp:
            found_single = found_multi = []
            if single:
                one = synthetic.write_extrap_text(single, ("p",), Path(tmp) / "single.txt")
                found_single = extrap_terms(exe, one, single)[0]
            if multi:
                two = synthetic.write_extrap_text(multi, ("x", "y"), Path(tmp) / "multi.txt")
                found_multi = extrap_terms(exe, two, multi)[0]
            rows.append(("Extra-P", score_single(single, found_single), score_multi(multi, found_multi)))
    print(f"seed {args.seed}, noise +-{args.noise:.0%}, 5 repetitions, p in {{4..64}}")
    print(f"{'tool':<12} {'1-param lead term':>18} {'constant kept':>14} {'2-param exact':>14}")
    for tool, (lead_rate, n_lead, const_rate, n_const), (multi_rate, n_multi) in rows:
        print(f"{tool:<12} {lead_rate:>12.1%} of {n_lead:<4} {const_rate:>7.1%} of {n_const:<3} "
              f"{multi_rate:>7.1%} of {n_multi}")
    if exe is None:
        print("Extra-P not found: install it as benchmarks/README.md says to print its rates beside these")
    return 0


if __name__ == "__main__":
    sys.exit(main())
