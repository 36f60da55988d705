"""Cost and size of the reports of a check with 1,000 kernels.

    python benchmarks/report_scale.py [--kernels 1000] [--planted 0.05] [--max-plots 20] [--seed 5]

Seeded synthetic pair: every kernel f(p) = c0 + a * p (p = 2 .. 256, 5 repetitions, 5% noise); in the candidate a
share of them (`--planted`, default 5%) grows as p^(3/2) instead. The check runs once (bootstrap 200, as in CI);
then the HTML report (table of all kernels, plots of the `--max-plots` worst), the comment Markdown and the job
summary are rendered and timed, and written under benchmarks/out/.

Targets: the HTML report of 1,000 kernels renders in under 10 s and is under 5 MB. The reference,
measured in the same run, is the check itself: the report's time is printed as a share of it. A second render
with every kernel failing (the worst case for the table and the Markdown) is timed too.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scalecheck.api import check, check_plots  # noqa: E402
from scalecheck.config import Config  # noqa: E402
from scalecheck.data.measurement import RunBuilder  # noqa: E402
from scalecheck.data.verdict import Verdict  # noqa: E402
from scalecheck.errors import Location  # noqa: E402
from scalecheck.report.html_report import render_check_html  # noqa: E402
from scalecheck.report.markdown import COMMENT_LIMIT, SUMMARY_LIMIT, render_check_markdown  # noqa: E402

P = (2, 4, 8, 16, 32, 64, 128, 256)
OUT = Path(__file__).resolve().parent / "out"


def runs(kernels: int, planted: float, seed: int):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    c0 = 10 ** rng.uniform(0, 2, kernels)
    a = c0 * 10 ** rng.uniform(-0.3, 1.7, kernels) / 256
    worse = rng.random(kernels) < planted
    sides = []
    for side in ("baseline", "candidate"):
        builder = RunBuilder(("p",), Path(f"{side}.json"))
        for k in range(kernels):
            for p in P:
                grow = p**1.5 / 2**0.5 if side == "candidate" and worse[k] else p
                values = (c0[k] + a[k] * grow) * (1 + 0.05 * rng.standard_normal(5))
                builder.add(f"app->phase{k // 100}->kernel{k:04d}", "time", (float(p),),
                            [float(v) for v in values], Location(Path(f"{side}.json")), "s")
        sides.append(builder.build())
    return sides[0], sides[1], int(worse.sum())


def timed(function):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1000)
    parser.add_argument("--planted", type=float, default=0.05)
    parser.add_argument("--max-plots", type=int, default=20)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    base, cand, planted = runs(args.kernels, args.planted, args.seed)
    result, check_time = timed(lambda: check(cand, base, Config()))
    verdict, context = result.verdict, result.context
    print(f"{args.kernels} kernels, {planted} with planted p -> p^(3/2) growth; check (bootstrap 200): "
          f"{check_time:.1f} s, {len(verdict.failures)} failing findings on "
          f"{len({f.kernel for f in verdict.failures})} kernels")
    OUT.mkdir(exist_ok=True)
    worst = Verdict(verdict.comparison, tuple(replace(f, kernel=k.kernel) for k in verdict.comparison.kernels
                                              for f in verdict.failures[:1]), verdict.fail_on)
    rows = []
    for label, v in (("as measured", verdict), ("every kernel failing", worst)):
        # the bands (check_plots) and the rendering together: what --html adds to a check
        page, html_time = timed(lambda: render_check_html(v, context, plots=check_plots(replace(result, verdict=v),
                                                                                        args.max_plots)))
        comment, md_time = timed(lambda: render_check_markdown(v, context, limit=COMMENT_LIMIT,
                                                               artifact_url="https://example.test/run"))
        summary, _ = timed(lambda: render_check_markdown(v, context, limit=SUMMARY_LIMIT))
        name = label.replace(" ", "-")
        (OUT / f"report-{name}.html").write_text(page, encoding="utf-8")
        size = len(page.encode("utf-8"))
        rows.append((label, len(v.findings), html_time, size, md_time, len(comment), len(summary.encode())))
    print()
    print(f"{'case':<22} {'findings':>8} {'HTML s':>7} {'of check':>8} {'HTML MB':>8} {'target':>16} "
          f"{'MD s':>6} {'comment chars':>13} {'summary bytes':>13}")
    ok = True
    for label, n, html_time, size, md_time, comment, summary in rows:
        passed = html_time < 10 and size < 5e6 and comment <= COMMENT_LIMIT and summary <= SUMMARY_LIMIT
        ok &= passed
        print(f"{label:<22} {n:>8} {html_time:>7.2f} {html_time / check_time:>8.0%} {size / 1e6:>8.2f} "
              f"{'PASS' if passed else 'FAIL':>4} (<10 s, <5 MB) {md_time:>6.2f} {comment:>13,} {summary:>13,}")
    print(f"\nplots: the {args.max_plots} worst kernels, each with two bootstrap confidence bands (100 resamples)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
