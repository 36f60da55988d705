"""Findings at the measured points themselves, where no model is asked what happens between or beyond them.

- measured (`measured_findings`, `measured_round_findings`): a slowdown at the points both commits measured.
- overhead (`overhead_findings`): more of the candidate's repetitions above the baseline's t_max than chance allows.
- the largest measured scale (`top_point_finding`) and a new last segment too short to model
  (`top_segment_finding`), both reported as predictions: what the models miss at the top of the range is still
  measured there.

Each returns `PendingFinding`s: the p-value of its test and the finding, for the false-discovery adjustment of
`compare`, which also says when each test runs (module docstring there). For series measured in rounds (two or
more a side) a round, not a repetition, is the unit that noise hits: their levels are compared round against round
(`round_levels`), and how far rounds disagree across a comparison (`between_rounds`) bounds a kernel's spread.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from scalecheck.core.exceedance import ExceedanceOptions, exceedance_tests
from scalecheck.core.search import nan_median, out_of_range, outliers
from scalecheck.data.measurement import Series, distinct, is_time_metric, name_hash
from scalecheck.data.outcome import Segment
from scalecheck.data.verdict import Finding, PendingFinding

Key = tuple[str, str]  # (kernel, metric)
LAST_SEGMENT = "the measured points of the last segment"  # the basis of `top_segment_finding`'s findings
MEASURED_POINTS = "the measured points both commits share"  # the basis of `unmodeled_finding`'s findings
_LARGEST_LOG = math.log(np.finfo(float).max)  # of the largest float: `ratio_of` caps a ratio there


@dataclass(frozen=True, kw_only=True, eq=False)
class SeriesPair:
    """The baseline's and the candidate's series of one (kernel, metric)."""

    baseline: Series
    candidate: Series

    @property
    def key(self) -> Key:
        return (self.candidate.kernel, self.candidate.metric)

    @property
    def in_rounds(self) -> bool:
        """Both sides measured in two rounds or more."""
        return self.baseline.round_count >= 2 and self.candidate.round_count >= 2

    def shared(self) -> list[tuple[int, int]]:
        """(baseline row, candidate row) of every point both measured, in the candidate's order."""
        rows = {tuple(p): i for i, p in enumerate(self.baseline.points.tolist())}
        return [(rows[tuple(p)], j) for j, p in enumerate(self.candidate.points.tolist()) if tuple(p) in rows]


@dataclass(frozen=True, kw_only=True)
class RoundLevels:
    """The log level of each round of each side at the points both measured (`round_levels`)."""

    baseline: np.ndarray  # (R_b,)
    candidate: np.ndarray  # (R_c,)


def measured_findings(pairs: Sequence[SeriesPair], threshold: float) -> dict[Key, PendingFinding]:
    """Rank tests of a slowdown at the points both sides measured (one-sided Mann-Whitney U per point), combined
    over each kernel's points with Stouffer's method; the condition is a geometric mean slowdown of the medians
    beyond 1 + `threshold`. Points with equal repetition counts are tested in one vectorized call."""
    from scalecheck.core import special

    # per (candidate, baseline) repetition count: blocks of points (kernel, its rows, the candidate's values (S,
    # n1), the baseline's (S, n2)), each kernel's points in its candidate's order
    cells: dict[tuple[int, int], list[tuple[int, np.ndarray, np.ndarray]]] = {}
    ratios: list[list[float]] = [[] for _ in pairs]  # log ratios of the medians, per kernel
    base_medians = nan_medians([pair.baseline.values for pair in pairs])
    cand_medians = nan_medians([pair.candidate.values for pair in pairs])
    for index, pair in enumerate(pairs):
        base, cand = pair.baseline, pair.candidate
        base_reps, cand_reps = base.repetitions.tolist(), cand.repetitions.tolist()
        base_median, cand_median = base_medians[index].tolist(), cand_medians[index].tolist()
        tested = [(i, j) for i, j in pair.shared() if base_reps[i] >= 2 and cand_reps[j] >= 2]
        sizes = {(cand_reps[j], base_reps[i]) for i, j in tested}
        if len(sizes) == 1:  # the usual case: one block of all the kernel's points
            (size_c, size_b), = sizes
            rows_b, rows_c = [i for i, _ in tested], [j for _, j in tested]
            cells.setdefault((size_c, size_b), []).append(
                (index, cand.values[rows_c, :size_c], base.values[rows_b, :size_b]))  # NaN padding is at the end
        else:
            for i, j in tested:
                cells.setdefault((cand_reps[j], base_reps[i]), []).append(
                    (index, cand.values[j : j + 1, : cand_reps[j]], base.values[i : i + 1, : base_reps[i]]))
        ratios[index] = [log_ratio(cand_median[j], base_median[i]) for i, j in tested
                         if base_median[i] > 0 and cand_median[j] > 0]
    z_sums, counts = np.zeros(len(pairs)), np.zeros(len(pairs), dtype=int)
    for group in cells.values():
        owners = np.concatenate([np.full(g[1].shape[0], g[0]) for g in group])
        p_values = mann_whitney_greater(np.concatenate([g[1] for g in group]), np.concatenate([g[2] for g in group]))
        np.add.at(z_sums, owners, -special.ndtri(np.clip(p_values, 1e-300, 1.0)))  # the normal quantiles above
        np.add.at(counts, owners, 1)
    out = {}
    for index, pair in enumerate(pairs):
        if counts[index] == 0 or not ratios[index]:
            continue
        p_value = float(special.ndtr(-(z_sums[index] / math.sqrt(counts[index]))))  # the normal tail above
        effect = ratio_of(float(np.mean(ratios[index])))
        kernel, metric = pair.key
        finding = Finding(kernel=kernel, metric=metric, kind="measured",
                          message=f"{effect:.3g}x the baseline at the {counts[index]} measured point(s) both "
                                  "commits share (median of the repetitions)",
                          ratio=effect, evidence={"points": int(counts[index])})
        out[pair.key] = PendingFinding(test="measured", p_value=p_value, finding=finding,
                                       condition=effect > 1 + threshold)
    return out


def measured_round_findings(pairs: Sequence[SeriesPair], threshold: float) -> dict[Key, PendingFinding]:
    """A slowdown at the measured points, for series measured in rounds: each round's level (`round_levels`),
    candidate rounds against baseline rounds in a one-sided Mann-Whitney U test. Its p-value cannot be small with
    few rounds (at least 1/6 with two a side): a difference between two runs is not told apart from the runs' own
    disagreement."""
    out = {}
    for pair in pairs:
        shared = pair.shared()
        if not shared:
            continue
        levels = round_levels(pair, shared)
        levels_b, levels_c = levels.baseline, levels.candidate
        if levels_b.size < 2 or levels_c.size < 2:
            continue
        p_value = float(mann_whitney_greater(levels_c[None], levels_b[None])[0])
        effect = ratio_of(float(np.mean(levels_c) - np.mean(levels_b)))
        kernel, metric = pair.key
        finding = Finding(kernel=kernel, metric=metric, kind="measured",
                          message=f"{effect:.3g}x the baseline at the {len(shared)} measured point(s) both commits "
                                  f"share ({levels_c.size} candidate rounds against {levels_b.size} baseline rounds)",
                          ratio=effect,
                          evidence={"points": len(shared), "rounds": f"{levels_b.size} + {levels_c.size}"})
        out[pair.key] = PendingFinding(test="measured", p_value=p_value, finding=finding,
                                       condition=effect > 1 + threshold)
    return out


def welch_greater(x: np.ndarray, y: np.ndarray) -> float:
    """p-value of a one-sided Welch t-test that the mean of `x` (n1,) exceeds the mean of `y` (n2,) (each with two
    values or more): t = (mean x - mean y) / sqrt(v1 / n1 + v2 / n2) against Student's t with the
    Welch-Satterthwaite degrees of freedom (1 when both variances are 0). NaN when neither the means nor the
    values differ. The values of `scipy.stats.ttest_ind(x, y, equal_var=False, alternative="greater")`, computed
    the same way (SciPy 1.17).

    Welch, "The generalization of 'Student's' problem when several different population variances are involved",
    Biometrika 34 (1947).
    """
    from scalecheck.core import special

    n1, n2 = x.size, y.size
    with np.errstate(divide="ignore", invalid="ignore"):
        vn1 = float(np.mean((x - np.mean(x)) ** 2) * (n1 / (n1 - 1))) / n1  # the unbiased variance over n
        vn2 = float(np.mean((y - np.mean(y)) ** 2) * (n2 / (n2 - 1))) / n2
        dof = np.float64(vn1 + vn2) ** 2 / (np.float64(vn1) ** 2 / (n1 - 1) + np.float64(vn2) ** 2 / (n2 - 1))
        t = np.float64(np.mean(x) - np.mean(y)) / np.sqrt(np.float64(vn1 + vn2))
    return float(special.stdtr(1.0 if np.isnan(dof) else dof, -t))


def mann_whitney_greater(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """p-values of one-sided Mann-Whitney U tests that the values of `x` tend to exceed those of `y`, row by row.

    Parameters
    ----------
    x : ndarray, shape (G, n1)
    y : ndarray, shape (G, n2)
        G pairs of samples without NaN.

    Returns
    -------
    ndarray, shape (G,)
        P(U >= U1) for U1 = R1 - n1 (n1 + 1) / 2, R1 the sum of x's mid-ranks among both samples. As
        `scipy.stats.mannwhitneyu(x, y, alternative="greater", axis=1)` computes them (SciPy 1.17): from the
        exact distribution of U when a sample has 8 values or fewer and no row has ties (one choice for the whole
        call, as SciPy makes it); else from the normal approximation with the tie correction of the variance and a
        continuity correction of 1/2.

    Notes
    -----
    Mann and Whitney, "On a test of whether one of two random variables is stochastically larger than the other",
    Ann. Math. Statist. 18 (1947). The exact law counts the arrangements of the two samples with each value of U:
    the coefficients of the Gaussian binomial coefficient [n1 + n2 choose n1] in q. Cost O(G n log n) with
    n = n1 + n2, plus O(n1^2 n2^2) for the exact law.
    """
    from scalecheck.core import special

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n1, n2 = x.shape[1], y.shape[1]
    n = n1 + n2
    both = np.concatenate([x, y], axis=1)  # (G, n)
    order = np.argsort(both, axis=1, kind="stable")
    ordered = np.take_along_axis(both, order, axis=1)
    position = np.broadcast_to(np.arange(1.0, n + 1), ordered.shape)  # 1-based ranks in sorted order
    new = np.ones(ordered.shape, dtype=bool)  # the first of each run of equal values
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    last = np.ones(ordered.shape, dtype=bool)  # the last of each run
    last[:, :-1] = new[:, 1:]
    first_rank = np.maximum.accumulate(np.where(new, position, 0.0), axis=1)
    last_rank = np.minimum.accumulate(np.where(last, position, np.inf)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty_like(ordered)
    np.put_along_axis(ranks, order, first_rank + (last_rank - first_rank) / 2, axis=1)  # mid-ranks
    u1 = np.sum(ranks[:, :n1], axis=1) - n1 * (n1 + 1) / 2
    ties = np.where(new, last_rank - first_rank + 1, 0.0)  # (G, n): each run's length at its first value
    if (n1 > 8 and n2 > 8) or np.any(ties > 1):
        tie_term = np.sum(ties**3 - ties, axis=1)
        spread = np.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
        with np.errstate(divide="ignore", invalid="ignore"):  # every value tied: no spread, z infinite
            z = (u1 - n1 * n2 / 2 - 0.5) / spread
        p_values = special.ndtr(-z)
    else:
        p_values = _exact_u_tail(u1.astype(np.int64), n1, n2)
    return np.asarray(np.clip(p_values, 0.0, 1.0))


def _exact_u_tail(u: np.ndarray, n1: int, n2: int) -> np.ndarray:
    """P(U >= u) under the null hypothesis, for samples of n1 and n2 values without ties (`mann_whitney_greater`).

    The law is symmetric about n1 n2 / 2; the tail is summed from the nearer end, as the distribution function
    there, so that a small p-value keeps its relative precision."""
    counts = [1] + [0] * (n1 * n2)  # arrangements with each value of U: [n1 + n2 choose n1] in q, built up
    for i in range(1, min(n1, n2) + 1):
        step = max(n1, n2) + i
        for k in range(len(counts) - 1, step - 1, -1):  # times (1 - q^(n + i))
            counts[k] -= counts[k - step]
        for k in range(i, len(counts)):  # divided by (1 - q^i)
            counts[k] += counts[k - i]
    pmf = np.array([float(c) for c in counts]) / float(math.comb(n1 + n2, n1))
    cdf = np.cumsum(pmf)
    mirrored = n1 * n2 - u
    low = u < mirrored  # the upper tail from below: 1 - P(U < u)
    at = np.where(low, u, mirrored)
    return np.asarray(np.where(low, 1.0 - cdf[at] + pmf[at], cdf[at]))


def overhead_findings(pairs: Sequence[SeriesPair], options: ExceedanceOptions, seed: int
                      ) -> dict[Key, PendingFinding]:
    """The exceedance test (`core.exceedance`) of every time metric, over the points both sides measured where the
    baseline has enough repetitions for a noise model; one batch for all kernels, each with its own generator
    (seeded by `seed` and the kernel's name). The condition is the test's own: an excess of exceedances."""
    keys: list[Key] = []
    kernels: list[list[tuple[np.ndarray, np.ndarray]]] = []
    for pair in pairs:
        base, cand = pair.baseline, pair.candidate
        if not (is_time_metric(cand.metric, cand.unit) or is_time_metric(base.metric, base.unit)):
            continue  # t_max is a model of timings: t = t_min + positive errors
        base_reps = base.repetitions.tolist()
        if max(base_reps, default=0) < options.min_baseline:
            continue  # no point with a noise model (the usual case: a few repetitions)
        if out_of_range(base.values) or out_of_range(cand.values):
            continue  # nor can a noise model be fitted to them; `unmodeled_finding` compares them
        points = [(base.values[i], cand.values[j]) for i, j in pair.shared() if base_reps[i] >= options.min_baseline]
        if points:
            keys.append(pair.key)
            kernels.append(points)
    rngs = [np.random.default_rng([seed, name_hash(*key), 1]) for key in keys]
    out = {}
    for key, result in zip(keys, exceedance_tests(kernels, options, rngs)):
        if result is None:
            continue
        share = result.exceedances / result.repetitions
        expected = result.expected / result.repetitions
        finding = Finding(
            kernel=key[0], metric=key[1], kind="overhead",
            message=f"{result.exceedances} of {result.repetitions} repetitions ({share:.0%}) above the baseline's "
                    f"t_max (its noise model's {result.quantile:g} quantile) at {result.points} point(s); "
                    f"{result.expected:.1f} ({expected:.0%}) expected if nothing changed",
            evidence={"points": result.points, "exceedances": result.exceedances,
                      "repetitions": result.repetitions, "expected": float(f"{result.expected:.3g}"),
                      "binomial_p": float(f"{result.binomial_p:.2g}"),
                      "time_above_t_max": float(f"{result.overhead:.4g}"),
                      "noise": ", ".join(sorted(set(result.models)))})
        out[key] = PendingFinding(test="overhead", p_value=result.p_value, finding=finding, condition=result.excess)
    return out


def top_segment_finding(pair: SeriesPair, last: Segment, template: Finding, threshold: float
                        ) -> PendingFinding | None:
    """A new last segment `last` of the candidate too short to model (a jump at the top sizes): its measured points
    against the baseline's at the same points, as a prediction, since no model can say what the new trend does
    beyond them. None when the segment is modeled (the prediction extrapolates it) or has nothing to compare.

    The test is the measured-point test on those points only: round against round (`measured_round_findings`)
    or, without rounds, `_level_test`. The finding is `template` (what every finding of the kernel states) with
    the measured ratio and the basis `LAST_SEGMENT`.
    """
    if last.status == "ok":
        return None  # a modeled last segment: the prediction above already extrapolates it
    base, cand = pair.baseline, pair.candidate
    top = (cand.points[:, 0] >= last.start) & (cand.points[:, 0] <= last.end)
    rows = (base.points[:, 0] >= last.start) & (base.points[:, 0] <= last.end)
    if not (top.any() and rows.any()):
        return None
    at_top = SeriesPair(baseline=_series_at(base, rows), candidate=_series_at(cand, top))
    if at_top.in_rounds:
        found = measured_round_findings([at_top], threshold).get(pair.key)
    else:
        found = _level_test(at_top, threshold)
    if found is None or found.finding.ratio is None:
        return None
    where = ", ".join(f"{p:g}" for p in at_top.candidate.points[:, 0])
    name = cand.parameters[0]
    finding = replace(template, kind="prediction", ratio=found.finding.ratio, bound=None,
                      message=f"{found.finding.ratio:.3g}x the baseline at {name} = {where}, after the change at "
                              f"{last.change_point.text() if last.change_point else 'the last segment'}: too few "
                              "points there to model the new trend, so the measured points are compared",
                      evidence={**template.evidence, "basis": LAST_SEGMENT})
    return PendingFinding(test="prediction", p_value=found.p_value, finding=finding, condition=found.condition)


def unmodeled_finding(pair: SeriesPair, threshold: float, why: str) -> PendingFinding | None:
    """The measured points of a kernel that cannot be modeled on one side (`why` says which; values beyond the
    magnitudes a fit handles: `search.out_of_range`), compared with the other side's at the points both measured,
    as a prediction: the measured ratio stands in for the predicted one, so that a slowdown by any factor fails
    the build. None when no point both measured can be compared (values <= 0 have no ratio).

    The test: for series measured in rounds, a Welch t-test of the rounds' levels (`_round_level_test`: unlike the
    rank test of `measured_round_findings`, its p-value is not bounded below by the few rounds, so that a slowdown
    of many orders of magnitude is found with two rounds a side); else `_level_test` (a Welch t-test of the logs
    per point, combined), or, where no point has repetitions that vary on both sides, `_across_points`. The
    condition: the geometric mean ratio beyond 1 + `threshold`.
    """
    if pair.in_rounds:
        found = _round_level_test(pair, threshold)
    else:
        found = _level_test(pair, threshold) or _across_points(pair, threshold)
    if found is None or found.finding.ratio is None:
        return None
    kernel, metric = pair.key
    ratio, points = found.finding.ratio, len(pair.shared())
    finding = Finding(kernel=kernel, metric=metric, kind="prediction", ratio=ratio,
                      message=f"{ratio:.3g}x the baseline at the {points} measured point(s) both commits share, "
                              f"compared as measured: {why}",
                      evidence={"basis": MEASURED_POINTS, "points": points})
    return PendingFinding(test="prediction", p_value=found.p_value, finding=finding, condition=found.condition)


def _round_level_test(pair: SeriesPair, threshold: float) -> PendingFinding | None:
    """A one-sided Welch t-test that the candidate's round levels (`round_levels`) lie above the baseline's; with
    no spread on either side, the difference is exact: p is 0 for a slowdown and 1 otherwise."""
    shared = pair.shared()
    if not shared:
        return None
    levels = round_levels(pair, shared)
    b, c = levels.baseline, levels.candidate
    if b.size < 2 or c.size < 2:
        return None
    difference = float(np.mean(c) - np.mean(b))
    spread = math.sqrt(float(np.var(c, ddof=1)) / c.size + float(np.var(b, ddof=1)) / b.size)
    if spread > 0:
        p_value = welch_greater(c, b)
    else:
        p_value = 0.0 if difference > 0 else 1.0
    return _measured(pair, p_value, ratio_of(difference), threshold)


def _across_points(pair: SeriesPair, threshold: float) -> PendingFinding | None:
    """A one-sided t-test that the log ratio of the medians, over the points both measured (two or more with
    positive medians), is above 0; for points whose repetitions do not vary (or without repetitions). When the
    log ratios do not vary either, the ratio is exact: p is 0 for a slowdown and 1 otherwise."""
    from scalecheck.core import special

    base, cand = pair.baseline, pair.candidate
    b_median, c_median = nan_median(base.values), nan_median(cand.values)
    logs = np.array([log_ratio(float(c_median[j]), float(b_median[i])) for i, j in pair.shared()
                     if b_median[i] > 0 and c_median[j] > 0])
    if logs.size < 2:
        return None
    mean, spread = float(np.mean(logs)), float(np.std(logs, ddof=1))
    if spread > 0:
        p_value = float(special.stdtr(logs.size - 1, -(mean / (spread / math.sqrt(logs.size)))))  # the t tail above
    else:
        p_value = 0.0 if mean > 0 else 1.0
    return _measured(pair, p_value, ratio_of(mean), threshold)


def _measured(pair: SeriesPair, p_value: float, effect: float, threshold: float) -> PendingFinding:
    """The pending `measured` finding of `pair`: its ratio `effect` fails the build above 1 + threshold once the
    test's `p_value` survives the false-discovery control."""
    kernel, metric = pair.key
    return PendingFinding(test="measured", p_value=p_value,
                          finding=Finding(kernel=kernel, metric=metric, kind="measured", message="", ratio=effect),
                          condition=effect > 1 + threshold)


def top_point_finding(pair: SeriesPair, template: Finding, threshold: float, predicted: float | None = None,
                      improved: bool = False) -> PendingFinding | None:
    """The largest scale both commits measured, compared point for point: a slowdown there beyond the threshold
    is a regression at scale whatever the models say (a term that shows only at the top of the range, a jump at
    the top sizes that no segment was found for).

    Only the part of the slowdown that rises toward the top counts: the log ratio candidate / baseline there minus
    its mean over the other points both measured, so a fixed cost added everywhere, which the models say fades at
    scale, does not fail here. It runs only when the rise of the medians exceeds the threshold (only a test that
    can find something enters the false-discovery adjustment). Null hypothesis: a rise of at most half the
    threshold. Test: the rise of the mean logs, minus log(1 + threshold) / 2, over its standard error, against
    Student's t. Outlying repetitions are set aside first (`search.outliers`, as the modeling does). The
    variance of a log repetition is each side's, pooled over the points both measured (the modeling's relative
    noise, with its degrees of freedom), but never less than the point's own; the standard error adds that of the
    mean below. For series measured in rounds: the rank test of the rounds' levels at the top point, shifted by
    the rise below and that margin.

    A finding also needs the prediction at the target (`predicted`, the ratio of the prediction test; None when
    there is none) to exceed 1 + threshold: a rise at the top that the models say stays below the threshold at
    scale, such as a lead coefficient 8% larger (its ratio climbs toward 1.08), is not a regression; a term that
    only shows at the top bends the models upward and passes this. Unless the models claim an improvement
    (`improved`: the candidate's growth fell, or its prediction is below the baseline's beyond the threshold):
    a rise at the top measured significantly says otherwise, and what is measured wins. Over a few points a
    quadratic term at the top can be fitted as p^(1/2) * log2(p)^2, a class below the baseline's p that rises
    faster than p over the measured range and falls behind it only far beyond (benchmarks/check_quality.py,
    scenario H: 3 of 150 such regressions passed with an improvement notice). It reports as a prediction (test
    "top"): the measured point closest to the target. A kernel with a growth or prediction finding does not get
    this one too (`compare`'s adjustment).

    Why half the threshold (measured with benchmarks/check_quality.py and benchmarks/ci_drift.py, seeded): a
    quadratic term worth 20% at the largest size rises about 1.18x there under 5% noise and 5 repetitions, some 2
    standard errors above a null rise of the full threshold, which the false-discovery adjustment over a thousand
    kernels does not keep (88% of them found); with no margin at all, flukes among unchanged kernels whose rise
    passes the threshold come with p-values the adjustment keeps (2 of 100 unchanged builds failed on one runner).
    """
    from scalecheck.core import special

    base, cand = pair.baseline, pair.candidate
    shared = pair.shared()
    if len(shared) < 2 or np.any(cand.points <= 0) or not _rises(pair, shared, threshold):
        return None
    kept = [np.where(outliers(s.values[None])[0], np.nan, s.values) for s in (base, cand)]
    logs: list[list[np.ndarray]] = [[], []]  # per side, per shared point: the logs of the repetitions kept
    medians = []  # per shared point: log of the ratio of the medians (of all repetitions)
    for i, j in shared:
        b, c = base.values[i][~np.isnan(base.values[i])], cand.values[j][~np.isnan(cand.values[j])]
        kb, kc = kept[0][i][~np.isnan(kept[0][i])], kept[1][j][~np.isnan(kept[1][j])]
        if kb.size < 2 or kc.size < 2 or np.any(b <= 0) or np.any(c <= 0):
            return None
        logs[0].append(np.log(kb))
        logs[1].append(np.log(kc))
        medians.append(log_ratio(_median(c.tolist()), _median(b.tolist())))
    dof = sum(x.size - 1 for side in logs for x in side)
    pooled = [sum(float(np.sum((x - x.mean()) ** 2)) for x in side) / sum(x.size - 1 for x in side) for side in logs]
    cells = [_Cell(log_median_ratio=medians[k], mean_log_ratio=float(logs[1][k].mean() - logs[0][k].mean()),
                   variance=sum(max(pooled[s], float(np.var(logs[s][k], ddof=1))) / logs[s][k].size for s in (0, 1)),
                   dof=dof)
             for k in range(len(shared))]
    top = int(np.argmax(log_sizes(cand.points, [j for _, j in shared])))
    others = cells[:top] + cells[top + 1:]
    margin = math.log1p(threshold)
    below_median = float(np.mean([cell.log_median_ratio for cell in others]))
    below = float(np.mean([cell.mean_log_ratio for cell in others]))
    if cells[top].log_median_ratio - below_median <= margin:
        return None
    i, j = shared[top]
    at_top = SeriesPair(baseline=_series_at(base, np.arange(base.points.shape[0]) == i),
                        candidate=_series_at(cand, np.arange(cand.points.shape[0]) == j))
    if at_top.in_rounds:
        c_top = at_top.candidate
        shifted = replace(c_top, values=c_top.values / math.exp(below_median + margin / 2))
        found = measured_round_findings([replace(at_top, candidate=shifted)], threshold).get(pair.key)
        if found is None:
            return None
        p_value = found.p_value
    else:
        spread = math.sqrt(cells[top].variance + sum(cell.variance for cell in others) / len(others) ** 2)
        statistic = (cells[top].mean_log_ratio - below - margin / 2) / spread if spread > 0 else math.inf
        p_value = float(special.stdtr(cells[top].dof, -statistic))  # Student's t above `statistic`
    ratio, rise = ratio_of(cells[top].log_median_ratio), ratio_of(cells[top].log_median_ratio - below_median)
    where = ", ".join(f"{name}={v:g}" for name, v in zip(cand.parameters, cand.points[j]))
    agrees = predicted is None or predicted > 1 + threshold
    contradicted = "" if agrees or not improved else (
        f"; the models claim an improvement ({predicted:.3g}x at the target), which this rise contradicts")
    finding = replace(template, kind="prediction", ratio=ratio, bound=None,
                      message=f"{ratio:.3g}x the baseline at {where}, the largest scale both commits measured "
                              f"({ratio_of(below_median):.3g}x below it){contradicted}",
                      evidence={**template.evidence, "basis": "the largest measured scale", "rise": round(rise, 4)})
    return PendingFinding(test="top", p_value=p_value, finding=finding, condition=agrees or improved)


def _rises(pair: SeriesPair, shared: list[tuple[int, int]], threshold: float) -> bool:
    """Whether `top_point_finding` can find anything: every shared point has two repetitions or more a side, all
    positive, and the log ratio of the medians at the largest shared scale exceeds its mean over the other shared
    points by more than log(1 + threshold). The same values as the test computes, without its outlier screening,
    so that the test runs only for the few kernels it concerns."""
    base, cand = pair.baseline, pair.candidate
    rows_b, rows_c = [i for i, _ in shared], [j for _, j in shared]
    b, c = (_row_medians(base.values.tolist(), rows_b, True), _row_medians(cand.values.tolist(), rows_c, True))
    if b is None or c is None:
        return False
    medians = [log_ratio(mc, mb) for mb, mc in zip(b, c)]
    top = int(np.argmax(log_sizes(cand.points, rows_c)))
    below = float(np.mean(medians[:top] + medians[top + 1:]))
    return not medians[top] - below <= math.log1p(threshold)  # as the test: NaN goes on to it


def row_medians(values: np.ndarray, rows: Sequence[int]) -> list[float]:
    """`search.nan_median(values[rows])` of a series' values (n, r), the same floats, from sorted lists: numpy's
    fixed cost per call outweighs the work on a few values."""
    found = _row_medians(values.tolist(), rows, usable_only=False)
    assert found is not None
    return found


def _row_medians(values: list[list[float]], rows: Sequence[int], usable_only: bool) -> list[float] | None:
    """`row_medians` of `values` as lists; with `usable_only`, None as soon as a row has fewer than two values or
    one that is not positive. As `nan_median` decides for the whole array: np.median's value when no row has NaN
    and no mean overflows, else the halves of the middle values added (NaN for a row without values)."""
    plain, halved = [], []
    padded = False
    for i in rows:
        row = values[i]
        present = sorted(v for v in row if v == v)  # NaN is not equal to itself
        if usable_only and (len(present) < 2 or present[0] <= 0):
            return None
        padded = padded or len(present) < len(row)
        median, halves = _middle(present) if present else (math.nan, math.nan)
        plain.append(median)
        halved.append(halves)
    return plain if not padded and all(math.isfinite(m) for m in plain) else halved


def _median(values: list[float]) -> float:
    """`search.nan_median` of values without NaN, the same float, from a sorted list (`_middle`)."""
    if not values:
        return math.nan
    median, halves = _middle(sorted(values))
    return median if math.isfinite(median) else halves


def _middle(ordered: list[float]) -> tuple[float, float]:
    """np.median of the sorted values `ordered` (the mean of the middle value or two, a sum from 0.0), and the
    halves of the two middle values added (what `search.nan_median` takes when that mean overflows)."""
    size = len(ordered)
    low, high = ordered[(size - 1) // 2], ordered[size // 2]
    return (0.0 + low if size % 2 else (0.0 + low + high) / 2), low / 2 + high / 2


def log_sizes(points: np.ndarray, rows: Sequence[int]) -> np.ndarray | list[float]:
    """The sum of the logs of each point (n, m) of `rows`: the largest is the point nearest the target. Each as
    `float(np.sum(np.log(points[row])))` gives it, in one call for single-parameter points."""
    logs = np.log(points[list(rows)])  # (S, m)
    return logs[:, 0] if logs.shape[1] == 1 else [float(np.sum(row)) for row in logs]


@dataclass(frozen=True, kw_only=True)
class _Cell:
    """One point both commits measured, in `top_point_finding`."""

    log_median_ratio: float  # log of the ratio candidate / baseline of the medians
    mean_log_ratio: float  # the mean log repetition of the candidate minus the baseline's (outliers set aside)
    variance: float  # of `mean_log_ratio`
    dof: int  # of the pooled variances


def _level_test(pair: SeriesPair, threshold: float) -> PendingFinding | None:
    """A one-sided Welch t-test of the log values at each point both measured (a few points, each with
    repetitions), combined with Stouffer's method; the effect is the geometric mean ratio of the medians. Unlike
    the rank test, its p-value is not bounded below by the number of repetitions (5 against 5: 1/252)."""
    from scalecheck.core import special

    base, cand = pair.baseline, pair.candidate
    rows = {tuple(p): i for i, p in enumerate(base.points.tolist())}
    z_scores, ratios = [], []
    for j, p in enumerate(cand.points.tolist()):
        i = rows.get(tuple(p))
        if i is None:
            continue
        b, c = base.values[i][~np.isnan(base.values[i])], cand.values[j][~np.isnan(cand.values[j])]
        if b.size < 2 or c.size < 2 or np.any(b <= 0) or np.any(c <= 0):
            continue
        p_value = welch_greater(np.log(c), np.log(b))  # NaN for repetitions that agree exactly (a coarse timer)
        if np.isfinite(p_value):
            z_scores.append(float(-special.ndtri(np.clip(p_value, 1e-300, 1.0))))  # the normal quantile above
            ratios.append(log_ratio(_median(c.tolist()), _median(b.tolist())))
    if not z_scores:
        return None
    p_value = float(special.ndtr(-(sum(z_scores) / math.sqrt(len(z_scores)))))  # the normal tail above
    return _measured(pair, p_value, ratio_of(float(np.mean(ratios))), threshold)


def round_levels(pair: SeriesPair, shared: list[tuple[int, int]]) -> RoundLevels:
    """The log level of each round of each side over the `shared` (baseline row, candidate row) points: the mean,
    over the points the round measured, of log(its median there / both sides' median there). Both series must
    carry their rounds."""
    sides = []
    for series, column in ((pair.baseline, 0), (pair.candidate, 1)):
        rows = [point[column] for point in shared]
        sides.append((series.values[rows], series.rounds[rows] if series.rounds is not None else None))
    with np.errstate(divide="ignore", invalid="ignore"):  # a median <= 0 has no log: its point is left out below
        pooled = np.log(nan_median(np.hstack([sides[0][0], sides[1][0]])))  # (k,) log of both sides' median
    levels = []
    for values, rounds in sides:
        assert rounds is not None
        per_round = []
        for number in distinct(rounds[~np.isnan(rounds) & ~np.isnan(values)]):
            with np.errstate(all="ignore"):  # a point this round did not measure: NaN; a value <= 0: no log
                logs = np.log(nan_median(np.where(rounds == number, values, np.nan))) - pooled
            logs = logs[np.isfinite(logs)]
            if logs.size:
                per_round.append(float(np.mean(logs)))
        levels.append(np.array(per_round))
    return RoundLevels(baseline=levels[0], candidate=levels[1])


def between_rounds(pairs: Sequence[SeriesPair]) -> float:
    """The variance of a round's log level between the rounds of one side, averaged over every side of `pairs`
    (each measured in rounds: `SeriesPair.in_rounds`) with two rounds or more (0 without such sides): how much the
    machine moves a whole round.

    Each kernel's own estimate rests on a few rounds (the variance of 3 rounds has 2 degrees of freedom, and is
    near 0 in a tenth of the kernels); bursts of load hit whichever kernel is running, so the comparison's kernels
    together tell how far rounds disagree. The mean, not the median, of the kernels' variances: it is unbiased for
    the average variance, which the median of a few degrees of freedom is not.
    """
    variances = []
    for pair in pairs:
        shared = pair.shared()
        if not shared:
            continue
        levels = round_levels(pair, shared)
        for side in (levels.baseline, levels.candidate):
            if side.size >= 2:
                variances.append(float(np.var(side, ddof=1)))
    return float(np.mean(variances)) if variances else 0.0


def nan_medians(arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """`search.nan_median` of each array of `arrays` (each (n, r), NaN-padded), the same floats, with one numpy
    call per shape instead of one per array (numpy's fixed cost per call outweighs the work on a few values).

    As `nan_median` decides per array: the median of each row when the array has no NaN and every median is
    finite, else the halves of the two middle values added (NaN for a row without values)."""
    out: list[np.ndarray] = [np.empty(0)] * len(arrays)
    groups: dict[tuple[int, ...], list[int]] = {}
    for index, values in enumerate(arrays):
        groups.setdefault(values.shape, []).append(index)
    for shape, members in groups.items():
        if shape[-1] == 0:
            for index in members:
                out[index] = nan_median(arrays[index])
            continue
        stack = np.stack([arrays[index] for index in members])  # (K, n, r)
        missing = np.isnan(stack)
        with np.errstate(over="ignore", invalid="ignore"):
            median = np.median(stack, axis=-1)  # (K, n); NaN in a row with NaN, not used there
        plain = ~missing.any(axis=(1, 2)) & np.all(np.isfinite(median), axis=1)  # (K,) as nan_median's first try
        if not plain.all():
            ordered = np.sort(stack, axis=-1)  # NaN last
            count = np.sum(~missing, axis=-1)
            low = np.take_along_axis(ordered, np.maximum((count - 1) // 2, 0)[..., None], axis=-1)[..., 0]
            high = np.take_along_axis(ordered, np.minimum(count // 2, shape[-1] - 1)[..., None], axis=-1)[..., 0]
            median = np.where(plain[:, None], median, np.where(count > 0, low / 2 + high / 2, np.nan))
        for row, index in enumerate(members):
            out[index] = median[row]
    return out


def log_ratio(candidate: float, baseline: float) -> float:
    """log(candidate / baseline) of two positive values, without the ratio itself (which can overflow)."""
    return float(math.log(candidate) - math.log(baseline))


def ratio_of(log: float) -> float:
    """exp(`log`), a ratio, capped at the largest float (a ratio beyond it, of values near 1e308 and 1e-308, is
    shown as that largest float rather than as infinity)."""
    return math.exp(min(log, _LARGEST_LOG))


def _series_at(series: Series, rows: np.ndarray) -> Series:
    """`series` at the points `rows` selects."""
    return Series(kernel=series.kernel, metric=series.metric, parameters=series.parameters,
                  points=series.points[rows], values=series.values[rows], unit=series.unit, source=series.source,
                  rounds=None if series.rounds is None else series.rounds[rows])
