"""Compare a candidate's measurements against its baseline's, per (kernel, metric), with honest statistics.

Each test yields a p-value; all p-values of a comparison are adjusted together (Benjamini-Hochberg), so that a
thousand unchanged kernels do not produce a handful of false alarms by chance. Only tests that were run count: a
kernel whose fitted growth did not rise, or that stays within its expectation, adds no test.

- growth: the candidate's lead-order growth is higher than the baseline's (exponents (i, j) compared
  lexicographically per parameter). Test (`_change_test`, symmetric): can one model class, with its own
  coefficients per commit, describe both? The extra weighted residual of the best common class over each side's own
  choice, in units of each side's noise, against F(1, dof), Bonferroni-corrected for the classes each side chose
  from. Evidence: the bootstrap probability that a resampled candidate grows faster than a resampled baseline; a
  finding needs it to reach the confidence level too.
- prediction: the ratio candidate / baseline of the predictions at the target scale, both in the class that
  describes both commits at once, unless one commit's data reject that class (then both in that commit's class:
  a term only one of them shows is not absorbed), or the growth differs (each its own model). Its spread comes
  from the bootstrap (log ratio, selection re-run on every resample; the semi-deviation below the median, which
  the few resamples that pick a faster-growing class do not widen); a finding when the one-sided lower
  confidence bound exceeds 1 + threshold. Also a prediction: the largest scale both commits measured, compared
  point for point, when the slowdown there rises above the slowdown below it by more than the threshold and the
  prediction at the target exceeds 1 + threshold too (a t-test that the slowdown rises at all, or round against
  round): what the models miss at the top of the range is still measured there.
- expectation: the candidate against the configured growth (also for new kernels): no hypothesis growing at most
  as allowed (including the chosen model capped at the bound) fits its data as well (`_restricted_test`).
- measured: a slowdown at the measured points themselves (one-sided Mann-Whitney rank test per common point,
  combined with Stouffer's method), when the median slowdown exceeds the threshold. For series measured in rounds
  (two or more a side), the rank test compares the rounds' levels instead: a round is the unit that noise hits.
- overhead: at the points where the baseline has at least 10 repetitions of a time metric, more of the
  candidate's repetitions lie above the baseline's t_max (its noise model's quantile q, `core.tmax`) than chance
  allows: the exceedances, summed over the points, against a beta-binomial null whose mean and spread come from
  permutations of the pooled repetitions (`core.exceedance`; the plain Binomial(n, 1 - q) tail, which ignores
  that t_max is estimated, is reported beside it). A warning by default; not for series measured in rounds,
  whose repetitions are not exchangeable.
- segmentation: the candidate's trend changes at a scale where the baseline's did not. When its last segment is too
  short to model (a jump at the top sizes), those measured points are compared with the baseline's directly
  (one-sided Welch t-tests of the logs per point, combined with Stouffer's method, or round against round), as a
  prediction: no model can say what the new trend does beyond them.
- improvement: growth or prediction down with the same confidence; reported, never failing.

When a side's repetitions carry their rounds (two rounds or more), its bootstrap draws whole rounds
(`bootstrap.resample_rounds`), so that the bounds carry the disagreement between rounds; and a prediction's
spread is at least what rounds disagree by across the comparison's kernels (`_between_rounds`), since a kernel's
few rounds can agree by chance (all of a candidate's rounds hit by the same kind of burst).

Each kernel draws its resamples from its own generator, seeded by the comparison's seed and the kernel's name, so
a verdict is reproducible and does not depend on which other kernels were measured.
"""

from __future__ import annotations

import fnmatch
import math
import warnings
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from scalecheck.core.bootstrap import (Resampled, capped, common_choice, expectation_spec, hypotheses, jitter, neighbourhood,
                                       resample, resample_rounds, reselect, residual_spread)
from scalecheck.core.exceedance import ExceedanceOptions, exceedance_tests
from scalecheck.core.modeler import fit_kernels
from scalecheck.core.search import FitOptions, PointStats, design, noise_and_penalty, outliers, point_stats, score
from scalecheck.core.segment import SegmentOptions
from scalecheck.data.growth import exceeds
from scalecheck.data.measurement import Series, is_time_metric
from scalecheck.data.outcome import FittedModel, KernelModel
from scalecheck.data.spec import Exponents, ModelSpec, format_growth
from scalecheck.data.verdict import Comparison, Finding, KernelComparison

Key = tuple[str, str]  # (kernel, metric)
_LAST_SEGMENT = "the measured points of the last segment"  # the basis of `_top_segment_test`'s findings


@dataclass(frozen=True)
class CompareOptions:
    """Thresholds of the comparison, with their documented defaults."""

    threshold: float = 0.10  # relative slowdown at the target (and at the measured points) that counts
    confidence: float = 0.95  # one-sided level of the bounds, bootstrap probability required, 1 - FDR level
    resamples: int = 200  # bootstrap resamples per kernel and side
    seed: int = 0
    quantile: float = 0.95  # q of the baseline's t_max in the exceedance (overhead) test
    permutations: int = 50  # permutations behind the exceedance test's null distribution

    def __post_init__(self) -> None:
        if not self.threshold > 0:
            raise ValueError(f"threshold must be > 0, got {self.threshold}")
        if not 0.5 <= self.confidence < 1:
            raise ValueError(f"confidence must be in [0.5, 1), got {self.confidence}")
        if self.resamples < 1:
            raise ValueError(f"resamples must be at least 1, got {self.resamples}")
        ExceedanceOptions(self.quantile, self.permutations)  # checks both


@dataclass(frozen=True)
class Expectation:
    """Kernels matching `pattern` must grow no faster than `growth` (written as `text`)."""

    pattern: str
    growth: Mapping[str, Exponents]
    text: str


@dataclass(frozen=True, eq=False)
class _Side:
    """One side's data over the range its growth is read from (the last segment of a segmented kernel)."""

    model: KernelModel
    fitted: FittedModel  # the model its growth is read from: the last segment's, or the whole series'
    points: np.ndarray  # (n, m)
    values: np.ndarray  # (n, r)
    stats: PointStats  # of this one kernel on `points`
    rounds: np.ndarray | None = None  # (n, r) the round of each value, when every value has one


@dataclass
class _Test:
    key: Key
    kind: str
    p_value: float
    finding: Finding  # complete but for q_value; kept only if the adjusted test and its own condition pass
    condition: bool


def compare(baseline: Sequence[Series], candidate: Sequence[Series], target: Mapping[str, float],
            options: FitOptions = FitOptions(), segmentation: SegmentOptions | None = SegmentOptions(),
            settings: CompareOptions = CompareOptions(),
            expectations: Sequence[Expectation] = ()) -> Comparison:
    """Compare every (kernel, metric) of `candidate` with the same in `baseline` (module docstring).

    Parameters
    ----------
    baseline, candidate : series of the two commits, with the same parameters
    target : the scale of the predictions, one value per parameter
    expectations : growth bounds by kernel pattern; the first matching pattern applies

    Cost: two `fit_kernels` calls, then per kernel and side one re-selection over about 10-20 hypotheses on
    `settings.resamples` resamples.
    """
    parameters = (candidate or baseline)[0].parameters
    point = np.array([float(target[name]) for name in parameters])
    base = {(s.kernel, s.metric): s for s in baseline}
    cand = {(s.kernel, s.metric): s for s in candidate}
    base_models = {(m.kernel, m.metric): m for m in fit_kernels(list(baseline), options, segmentation)}
    cand_models = {(m.kernel, m.metric): m for m in fit_kernels(list(candidate), options, segmentation)}
    common = [(key, base[key], cand[key]) for key in cand if key in base]
    # measured in rounds (two or more a side): a round, not a repetition, is the unit that noise hits
    in_rounds = [(key, b, c) for key, b, c in common if b.round_count >= 2 and c.round_count >= 2]
    unrounded = [(key, b, c) for key, b, c in common if not (b.round_count >= 2 and c.round_count >= 2)]
    measured = {**_measured_tests(unrounded, settings), **_measured_round_tests(in_rounds, settings)}
    between = _between_rounds(in_rounds)
    overhead = _exceedance_tests(unrounded, settings)  # its null model needs exchangeable repetitions
    kernels, tests, plain = [], [], []
    for key in list(cand) + [k for k in base if k not in cand]:
        rng = np.random.default_rng([settings.seed, zlib.crc32("\0".join(key).encode())])
        expected = next((e for e in expectations if fnmatch.fnmatchcase(key[0], e.pattern)), None)
        kc, found, other = _compare_kernel(key, base.get(key), cand.get(key), base_models.get(key),
                                           cand_models.get(key), point, options, settings, expected, rng, between)
        kernels.append(kc)
        tests += found + [t[key] for t in (measured, overhead) if key in t]
        plain += other
    findings = _adjust(tests, settings) + plain
    return Comparison(parameters, dict(target), tuple(kernels), tuple(findings), settings.resamples, settings.seed)


def _compare_kernel(key: Key, base: Series | None, cand: Series | None, base_model: KernelModel | None,
                    cand_model: KernelModel | None, target: np.ndarray, options: FitOptions,
                    settings: CompareOptions, expected: Expectation | None, rng: np.random.Generator,
                    between: float = 0.0) -> tuple[KernelComparison, list[_Test], list[Finding]]:
    present = cand if cand is not None else base
    unit = present.unit if present is not None else ""
    text = expected.text if expected else None
    if cand is None or cand_model is None:
        return KernelComparison(*key, unit, "removed", base_model, None, expectation=text,
                                note="measured in the baseline only"), [], []
    tests: list[_Test] = []
    plain: list[Finding] = []
    if not cand_model.ok:
        status = "new" if base is None else "unmodeled"
        return KernelComparison(*key, unit, status, base_model, cand_model, expectation=text,
                                note=f"candidate: {cand_model.note}"), tests, plain
    c = _side(cand, cand_model, options)
    specs = neighbourhood(c.fitted.spec, options.building_blocks)
    if expected is not None:
        specs.append(expectation_spec(expected.growth, cand.parameters))
    if base is None or base_model is None or not base_model.ok:
        note = "" if base_model is None else f"baseline: {base_model.note}"
        kc = KernelComparison(*key, unit, "new" if base is None else "unmodeled", base_model, cand_model,
                              expectation=text, note=note)
        if expected is not None:
            _, boot = _bootstrap(c, hypotheses(specs, c.points, target), target, options, settings, rng)
            tests += _expectation_test(key, c, boot, expected, options, settings)
        return kc, tests, plain
    b = _side(base, base_model, options)
    specs += neighbourhood(b.fitted.spec, options.building_blocks)
    union = hypotheses(specs, np.vstack([b.points, c.points]), target)
    one_b, boot_b = _bootstrap(b, union, target, options, settings, rng)
    one_c, boot_c = _bootstrap(c, union, target, options, settings, rng)
    names = cand.parameters
    up, down = _growth_shares(boot_b, boot_c, names)
    g_b, g_c = b.fitted.growth(), c.fitted.growth()
    p_change = _change_test(one_b, one_c, union, b.fitted, c.fitted, len(options.building_blocks))
    level = 1 - settings.confidence
    improved = exceeds(g_b, g_c) and down >= settings.confidence and p_change <= level
    differs = (exceeds(g_c, g_b) and up >= settings.confidence and p_change <= level) or improved
    ratio, bound, upper, p_pred, basis = _prediction(b, c, union, one_b, one_c, boot_b, boot_c, target, differs,
                                                     settings, len(options.building_blocks), between)
    kc = KernelComparison(*key, unit, "compared", base_model, cand_model, ratio, bound, upper, up, down, text,
                          basis=basis)
    where = ", ".join(f"{k}={v:g}" for k, v in zip(names, target))
    confidence = f"{settings.confidence:.0%} confidence"
    evidence = {"baseline": b.fitted.formula(), "candidate": c.fitted.formula()}
    rise, span = _rise(b, c)
    template = Finding(*key, "growth", "", baseline_growth=format_growth(g_b), candidate_growth=format_growth(g_c),
                       ratio=ratio, bound=bound, evidence=evidence, rise=rise, span=span)
    if exceeds(g_c, g_b):  # only a test that was run enters the false-discovery adjustment
        tests.append(_Test(key, "growth", p_change, replace(
            template, message=f"grows as {format_growth(g_c)}, the baseline as {format_growth(g_b)}",
            probability=up), up >= settings.confidence))
    if ratio is not None and bound is not None:
        tests.append(_Test(key, "prediction", p_pred, replace(
            template, kind="prediction", evidence={**evidence, "basis": basis},
            message=f"predicted {ratio:.3g}x the baseline at {where} (at least {bound:.3g}x at {confidence})"), True))
    if improved:
        plain.append(replace(template, kind="improvement", severity="notice", probability=down,
                             message=f"grows as {format_growth(g_c)}, slower than the baseline's {format_growth(g_b)}"))
    elif ratio is not None and upper is not None and upper < 1 / (1 + settings.threshold):
        plain.append(replace(template, kind="improvement", severity="notice",
                             message=f"predicted {ratio:.3g}x the baseline at {where} (at most {upper:.3g}x at "
                                     f"{confidence})"))
    if expected is not None:
        tests += _expectation_test(key, c, boot_c, expected, options, settings, union)
    if cand_model.segmented and (not base_model.segmented or base_model.change_points != cand_model.change_points):
        now = ", ".join(cp.text() for cp in cand_model.change_points)
        was = ", ".join(cp.text() for cp in base_model.change_points) or "none"
        plain.append(replace(template, kind="segmentation", message=f"the trend now changes at {now} (baseline: {was})"))
        tests += _top_segment_test(key, base, cand, cand_model, template, settings)
    if not any(t.kind == "prediction" and t.finding.evidence.get("basis") == _LAST_SEGMENT for t in tests):
        tests += _top_point_test(key, base, cand, template, settings, ratio)
    return kc, tests, plain


def _top_segment_test(key: Key, base: Series, cand: Series, cand_model: KernelModel, template: Finding,
                      settings: CompareOptions) -> list[_Test]:
    """A new last segment too short to model (a jump at the top sizes): its measured points against the
    baseline's at the same points, as a prediction, since no model can say what the new trend does beyond them.

    The test is the measured-point test (`_measured_tests`, or round against round) on those points only.
    """
    last = cand_model.segments[-1]
    if last.status == "ok":
        return []  # a modeled last segment: the prediction above already extrapolates it
    top = (cand.points[:, 0] >= last.start) & (cand.points[:, 0] <= last.end)
    rows = (base.points[:, 0] >= last.start) & (base.points[:, 0] <= last.end)
    if not (top.any() and rows.any()):
        return []
    b_top, c_top = _restricted(base, rows), _restricted(cand, top)
    if b_top.round_count >= 2 and c_top.round_count >= 2:
        found = _measured_round_tests([(key, b_top, c_top)], settings).get(key)
    else:
        found = _level_test(key, b_top, c_top, settings)
    if found is None or found.finding.ratio is None:
        return []
    where = ", ".join(f"{p:g}" for p in c_top.points[:, 0])
    name = cand.parameters[0]
    finding = replace(template, kind="prediction", ratio=found.finding.ratio, bound=None,
                      message=f"{found.finding.ratio:.3g}x the baseline at {name} = {where}, after the change at "
                              f"{last.change_point.text() if last.change_point else 'the last segment'}: too few "
                              "points there to model the new trend, so the measured points are compared",
                      evidence={**template.evidence, "basis": _LAST_SEGMENT})
    return [_Test(key, "prediction", found.p_value, finding, found.condition)]


def _top_point_test(key: Key, base: Series, cand: Series, template: Finding, settings: CompareOptions,
                    predicted: float | None = None) -> list[_Test]:
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
    only shows at the top bends the models upward and passes this. It reports as a prediction: the measured point
    closest to the target. A kernel with a growth or prediction finding does not get this one too (`_adjust`).

    Why half the threshold (measured with benchmarks/check_quality.py and benchmarks/ci_drift.py, seeded): a
    quadratic term worth 20% at the largest size rises about 1.18x there under 5% noise and 5 repetitions, some 2
    standard errors above a null rise of the full threshold, which the false-discovery adjustment over a thousand
    kernels does not keep (88% of them found); with no margin at all, flukes among unchanged kernels whose rise
    passes the threshold come with p-values the adjustment keeps (2 of 100 unchanged builds failed on one runner).
    """
    from scipy import stats

    rows = {tuple(p): i for i, p in enumerate(base.points.tolist())}
    shared = [(rows[tuple(p)], j) for j, p in enumerate(cand.points.tolist()) if tuple(p) in rows]
    if len(shared) < 2 or np.any(cand.points <= 0):
        return []
    kept = [np.where(outliers(s.values[None])[0], np.nan, s.values) for s in (base, cand)]
    logs: list[list[np.ndarray]] = [[], []]  # per side, per shared point: the logs of the repetitions kept
    medians = []  # per shared point: log of the ratio of the medians (of all repetitions)
    for i, j in shared:
        b, c = base.values[i][~np.isnan(base.values[i])], cand.values[j][~np.isnan(cand.values[j])]
        kb, kc = kept[0][i][~np.isnan(kept[0][i])], kept[1][j][~np.isnan(kept[1][j])]
        if kb.size < 2 or kc.size < 2 or np.any(b <= 0) or np.any(c <= 0):
            return []
        logs[0].append(np.log(kb))
        logs[1].append(np.log(kc))
        medians.append(float(np.log(np.median(c) / np.median(b))))
    dof = sum(x.size - 1 for side in logs for x in side)
    pooled = [sum(float(np.sum((x - x.mean()) ** 2)) for x in side) / sum(x.size - 1 for x in side) for side in logs]
    cells = [(medians[k], float(logs[1][k].mean() - logs[0][k].mean()),
              sum(max(pooled[s], float(np.var(logs[s][k], ddof=1))) / logs[s][k].size for s in (0, 1)), dof)
             for k in range(len(shared))]  # (log median ratio, mean log ratio, its variance, dof)
    top = int(np.argmax([float(np.sum(np.log(cand.points[j]))) for _, j in shared]))
    others = cells[:top] + cells[top + 1:]
    margin = math.log1p(settings.threshold)
    below_median = float(np.mean([cell[0] for cell in others]))
    below = float(np.mean([cell[1] for cell in others]))
    if cells[top][0] - below_median <= margin:
        return []
    i, j = shared[top]
    b_top = _restricted(base, np.arange(base.points.shape[0]) == i)
    c_top = _restricted(cand, np.arange(cand.points.shape[0]) == j)
    if b_top.round_count >= 2 and c_top.round_count >= 2:
        shifted = replace(c_top, values=c_top.values / math.exp(below_median + margin / 2))
        found = _measured_round_tests([(key, b_top, shifted)], settings).get(key)
        if found is None:
            return []
        p_value = found.p_value
    else:
        spread = math.sqrt(cells[top][2] + sum(cell[2] for cell in others) / len(others) ** 2)
        statistic = (cells[top][1] - below - margin / 2) / spread if spread > 0 else math.inf
        p_value = float(stats.t.sf(statistic, cells[top][3]))
    ratio, rise = math.exp(cells[top][0]), math.exp(cells[top][0] - below_median)
    where = ", ".join(f"{name}={v:g}" for name, v in zip(cand.parameters, cand.points[j]))
    finding = replace(template, kind="prediction", ratio=ratio, bound=None,
                      message=f"{ratio:.3g}x the baseline at {where}, the largest scale both commits measured "
                              f"({math.exp(below_median):.3g}x below it)",
                      evidence={**template.evidence, "basis": "the largest measured scale", "rise": round(rise, 4)})
    agrees = predicted is None or predicted > 1 + settings.threshold
    return [_Test(key, "top", p_value, finding, agrees)]


def _level_test(key: Key, base: Series, cand: Series, settings: CompareOptions) -> _Test | None:
    """A one-sided Welch t-test of the log values at each point both measured (a few points, each with
    repetitions), combined with Stouffer's method; the effect is the geometric mean ratio of the medians. Unlike
    the rank test, its p-value is not bounded below by the number of repetitions (5 against 5: 1/252)."""
    from scipy import stats

    rows = {tuple(p): i for i, p in enumerate(base.points.tolist())}
    z_scores, ratios = [], []
    for j, p in enumerate(cand.points.tolist()):
        i = rows.get(tuple(p))
        if i is None:
            continue
        b, c = base.values[i][~np.isnan(base.values[i])], cand.values[j][~np.isnan(cand.values[j])]
        if b.size < 2 or c.size < 2 or np.any(b <= 0) or np.any(c <= 0):
            continue
        test = stats.ttest_ind(np.log(c), np.log(b), equal_var=False, alternative="greater")
        if np.isfinite(test.pvalue):
            z_scores.append(float(stats.norm.isf(np.clip(test.pvalue, 1e-300, 1.0))))
            ratios.append(float(np.median(c) / np.median(b)))
    if not z_scores:
        return None
    p_value = float(stats.norm.sf(sum(z_scores) / math.sqrt(len(z_scores))))
    effect = float(np.exp(np.mean(np.log(ratios))))
    return _Test(key, "measured", p_value, Finding(*key, "measured", "", ratio=effect), effect > 1 + settings.threshold)


def _restricted(series: Series, rows: np.ndarray) -> Series:
    """`series` at the points `rows` selects."""
    return Series(series.kernel, series.metric, series.parameters, series.points[rows], series.values[rows],
                  series.unit, series.source, None if series.rounds is None else series.rounds[rows])


def _side(series: Series, model: KernelModel, options: FitOptions) -> _Side:
    """The data a side's growth is read from: all points, or the last segment's of a segmented kernel.

    A last segment with too few points for a reliable model (status "insufficient") says little about the growth
    at scale, so such a kernel is compared over all its points, with one model.
    """
    keep = np.ones(series.points.shape[0], dtype=bool)
    fitted = model.model
    if model.segmented and model.segments[-1].status == "ok":
        last = model.segments[-1]
        keep = (series.points[:, 0] >= last.start) & (series.points[:, 0] <= last.end)
    elif model.segmented:
        fitted = fit_kernels([series], options, None)[0].model
    if fitted is None:
        raise ValueError(f"kernel {series.kernel!r} has no model to compare")
    width = max(1, int(np.max(np.sum(~np.isnan(series.values[keep]), axis=1))))
    values = series.values[keep][:, :width]
    rounds = None if series.rounds is None else series.rounds[keep][:, :width]
    if rounds is not None and (np.any(np.isnan(rounds) & ~np.isnan(values)) or series.round_count < 2):
        rounds = None  # resampling rounds needs every value's round, and two rounds at least
    return _Side(model, fitted, series.points[keep], values, point_stats(values[None]), rounds)


def _rise(b: _Side, c: _Side) -> tuple[float | None, float | None]:
    """(rise, span): how much the ratio candidate / baseline grows from the smallest to the largest scale both
    sides measured, and how many times larger that largest scale is (the product over the parameters).

    From the medians at the points both measured when they share at least two, else from the two models at the
    ends of the range they share. A rise of 1 is a constant factor (a slower machine); a growth change that a
    memory hierarchy could not fake keeps rising with the scale. None when a value is not positive.
    """
    rows = {tuple(p): i for i, p in enumerate(b.points.tolist())}
    shared = [(rows[tuple(p)], j) for j, p in enumerate(c.points.tolist()) if tuple(p) in rows]
    if len(shared) >= 2:
        size = [float(np.sum(np.log(c.points[j]))) for _, j in shared]
        (i_lo, j_lo), (i_hi, j_hi) = shared[int(np.argmin(size))], shared[int(np.argmax(size))]
        base = np.nanmedian(b.values, axis=1)[[i_lo, i_hi]]
        cand = np.nanmedian(c.values, axis=1)[[j_lo, j_hi]]
        span = float(np.exp(max(size) - min(size)))
    else:
        lo = np.maximum(b.points.min(axis=0), c.points.min(axis=0))
        hi = np.minimum(b.points.max(axis=0), c.points.max(axis=0))
        if np.any(hi <= lo) or np.any(lo <= 0):
            return None, None
        ends = np.vstack([lo, hi])
        base, cand = b.fitted.predict(ends), c.fitted.predict(ends)
        span = float(np.prod(hi / lo))
    if not (np.all(base > 0) and np.all(cand > 0)) or not span > 1:
        return None, None
    return float((cand[1] / base[1]) / (cand[0] / base[0])), span


def _bootstrap(side: _Side, specs: list[ModelSpec], target: np.ndarray, options: FitOptions,
               settings: CompareOptions, rng: np.random.Generator) -> tuple[Resampled, Resampled]:
    """Selection among `specs` on the data itself and re-run on resamples of it (parametric when there are no
    repetitions), in one batch: (on the data, on the resamples)."""
    if side.rounds is not None:
        samples = resample_rounds(side.values, side.rounds, settings.resamples, rng)
    elif side.values.shape[1] > 1:
        samples = resample(side.values, settings.resamples, rng)
    else:
        fitted = side.fitted.predict(side.points)
        samples = jitter(fitted, residual_spread(side.stats, fitted), settings.resamples, rng)
    data = side.values[None]
    width = max(data.shape[2], samples.shape[2])  # whole rounds drawn twice make a wider resample
    pad = [np.pad(a, ((0, 0), (0, 0), (0, width - a.shape[2])), constant_values=np.nan) for a in (data, samples)]
    both = reselect(side.points, np.concatenate(pad), specs, target, options)
    return both.take(slice(0, 1)), both.take(slice(1, None))


@dataclass(frozen=True)
class Band:
    """A kernel's model along a grid of points, with a pointwise confidence band from the bootstrap."""

    grid: np.ndarray  # (g, m) points
    model: np.ndarray  # (g,) the model chosen on the data
    low: np.ndarray  # (g,) lower bound
    high: np.ndarray  # (g,) upper bound


def prediction_band(series: Series, model: KernelModel, grid: np.ndarray, options: FitOptions = FitOptions(),
                    confidence: float = 0.95, resamples: int = 100, seed: int = 0) -> Band:
    """The model of `series` (its last segment's, if segmented) evaluated on `grid`, with a two-sided band.

    The band comes from the same bootstrap as the comparison: the repetitions are resampled within each point
    (parametric resamples without repetitions), the selection is re-run among the model's neighbourhood on every
    resample, and each resample's selected model is evaluated along the grid; the band is the pointwise
    ((1 - confidence) / 2, (1 + confidence) / 2) quantiles. So it shows the uncertainty of the model class as well
    as of the coefficients, growing with the distance of the extrapolation.
    """
    side = _side(series, model, options)
    rng = np.random.default_rng([seed, zlib.crc32("\0".join((series.kernel, series.metric)).encode())])
    far = grid[np.argmax(np.sum(np.log(grid), axis=1))]
    specs = hypotheses(neighbourhood(side.fitted.spec, options.building_blocks), side.points, far)
    if side.values.shape[1] > 1:
        samples = resample(side.values, resamples, rng)
    else:
        fitted = side.fitted.predict(side.points)
        samples = jitter(fitted, residual_spread(side.stats, fitted), resamples, rng)
    chosen = reselect(side.points, samples, specs, far, options).chosen
    stats = point_stats(samples, options.aggregate)
    curves = np.full((resamples, grid.shape[0]), np.nan)
    for h in np.unique(chosen):
        X, lead = design([specs[int(h)]], side.points)
        coef = score(X, lead, stats, options).batch.coef[0]  # (B, k)
        columns = chosen == h
        curves[columns] = coef[columns] @ specs[int(h)].basis(grid).T
    tail = (1 - confidence) / 2
    low, high = np.nanquantile(curves, [tail, 1 - tail], axis=0)
    return Band(grid, side.fitted.predict(grid), low, high)


def _growth_shares(boot_b: Resampled, boot_c: Resampled, names: Sequence[str]) -> tuple[float, float]:
    """Shares of paired resamples in which the candidate grows faster / slower than the baseline."""
    orders = [{name: spec.lead_order(k) for k, name in enumerate(names)} for spec in boot_b.specs]
    pairs, counts = np.unique(np.stack([boot_b.chosen, boot_c.chosen]), axis=1, return_counts=True)
    up = sum(int(n) for (hb, hc), n in zip(pairs.T, counts) if exceeds(orders[hc], orders[hb]))
    down = sum(int(n) for (hb, hc), n in zip(pairs.T, counts) if exceeds(orders[hb], orders[hc]))
    total = boot_b.chosen.size
    return up / total, down / total


def _restricted_test(side: _Side, specs: list[ModelSpec], bound: Mapping[str, Exponents],
                     options: FitOptions) -> float:
    """p-value that no hypothesis growing at most as `bound` explains the side's data as well as its model.

    The hypotheses growing at most as `bound` are those of `specs` that do, and the chosen model capped at the
    bound (`bootstrap.capped`: same shape, slower lead). Test: the extra sum of squares of the best of them over
    the chosen model, in units of the noise, against F(1, dof) (chi^2(1) without repetitions).
    """
    from scipy import special

    names, chosen = side.fitted.parameters, side.fitted.spec
    allowed = [s for s in specs if not exceeds(_orders(s, names), bound)]
    allowed += [capped(chosen, bound, names)]
    wrss: dict[ModelSpec, float] = {}
    for size in sorted({s.n_terms for s in allowed + [chosen]}):
        group = list(dict.fromkeys(s for s in allowed + [chosen] if s.n_terms == size))
        scored = score(*design(group, side.points), side.stats, options)
        wrss.update({s: float(v) for s, v in zip(group, scored.wrss[:, 0])})
    best_allowed = min((wrss[s] for s in allowed), default=math.inf)  # the constant is always allowed
    if not math.isfinite(wrss[chosen]) or not math.isfinite(best_allowed):
        return 1.0
    n = side.points.shape[0]
    one_term = np.array([[v if s.n_terms == 1 else math.inf for s, v in wrss.items()]]).T
    sigma2, _ = noise_and_penalty(side.stats, one_term, n, options)
    statistic = max(0.0, best_allowed - wrss[chosen]) / float(sigma2[0])
    dof = int(side.stats.dof[0])
    return float(special.fdtrc(1.0, dof, statistic) if dof > 0 else special.chdtrc(1.0, statistic))


def _change_test(one_b: Resampled, one_c: Resampled, specs: list[ModelSpec], base: FittedModel,
                 cand: FittedModel, searched: int) -> float:
    """p-value that the two commits need different model classes (the growth changed).

    Null hypothesis: one hypothesis, with its own coefficients on each side, describes both commits. Statistic:
    the least summed weighted residuals (each side in units of its own noise) of any common hypothesis minus the
    sum of each side's own choice, against F(1, dof of both noises) (chi^2(1) without repetitions). Symmetric: an
    error in the baseline's model counts as much as one in the candidate's. Each side's own choice is the best of
    `searched` candidate terms, so by chance alone it beats the common one by more than one F(1, dof) variable
    would: the p-value is multiplied by `searched` (Bonferroni).
    """
    from scipy import special

    try:
        own_b, own_c = specs.index(base.spec), specs.index(cand.spec)
    except ValueError:
        return 1.0
    s_b, s_c = one_b.wrss[:, 0] / one_b.noise[0], one_c.wrss[:, 0] / one_c.noise[0]
    separate = s_b[own_b] + s_c[own_c]
    if not np.isfinite(separate):
        return 1.0
    statistic = max(0.0, float(np.min(s_b + s_c)) - float(separate))
    dof = int(one_b.dof[0] + one_c.dof[0])
    p_value = float(special.fdtrc(1.0, dof, statistic) if dof > 0 else special.chdtrc(1.0, statistic))
    return min(1.0, p_value * searched)


def _orders(spec: ModelSpec, names: Sequence[str]) -> dict[str, Exponents]:
    return {name: spec.lead_order(k) for k, name in enumerate(names)}


def _expectation_test(key: Key, side: _Side, boot: Resampled, expected: Expectation, options: FitOptions,
                      settings: CompareOptions, specs: list[ModelSpec] | None = None) -> list[_Test]:
    """The candidate grows faster than the configured expectation."""
    names = side.fitted.parameters
    growth = side.fitted.growth()
    if not exceeds(growth, expected.growth):
        return []  # within the expectation: no test, so nothing for the false-discovery adjustment to count
    specs = list(boot.specs) if specs is None else specs
    p_value = _restricted_test(side, specs, expected.growth, options)
    share = float(np.mean([exceeds(g, expected.growth) for g in boot.growth(names)]))
    finding = Finding(*key, "expectation", f"grows as {format_growth(growth)}, faster than the expected "
                      f"{expected.text} (pattern '{expected.pattern}')", probability=share,
                      candidate_growth=format_growth(growth),
                      evidence={"candidate": side.fitted.formula(), "expected": expected.text})
    return [_Test(key, "expectation", p_value, finding, share >= settings.confidence)]


def _prediction(b: _Side, c: _Side, specs: list[ModelSpec], one_b: Resampled, one_c: Resampled,
                boot_b: Resampled, boot_c: Resampled, target: np.ndarray, differs: bool, settings: CompareOptions,
                searched: int, between: float = 0.0) -> tuple[float | None, float | None, float | None, float, str]:
    """(ratio, lower bound, upper bound, p-value that the ratio exceeds 1 + threshold, basis) at the target.

    When the growth differs (significantly, by the growth test and the bootstrap), each side is predicted with
    its own model. Otherwise both are predicted with the hypothesis that describes both best at once
    (`common_choice`, re-chosen on every pair of resamples): a flip between neighbouring classes (p against
    p^(2/3) log p), which extrapolation to a large target would turn into a factor of two, is then not mistaken
    for a slowdown. Unless one side's data reject that hypothesis (`_rejects`: its own choice describes them
    significantly better): a term that only one commit's data show (a quadratic term worth a few percent at the
    top of the range, a jump at the top sizes) must not be absorbed by a class chosen for both. Then both sides
    are predicted with that side's own class, each with its own coefficients, on the data and on every resample,
    so the ratio compares like with like and the bound carries the uncertainty of the extrapolated term. When
    both sides reject the common hypothesis, or the other side cannot be fitted in that class (a lead
    coefficient that is not positive), each side is predicted with its own model, as when the growth differs.

    For series measured in rounds, the spread is at least what the rounds' levels vary by across the comparison
    (`between`, `_between_rounds`): a kernel whose few rounds happen to agree (all of the candidate's slowed by the
    same burst of load) cannot claim less disagreement between rounds than the machine shows.
    """
    from scipy import stats

    names = b.fitted.parameters
    if differs:
        at_b = float(b.fitted.predict(target[None])[0])
        at_c = float(c.fitted.predict(target[None])[0])
        resampled_b, resampled_c = boot_b.prediction, boot_c.prediction
        basis = "each commit's own model"
    else:
        h = int(common_choice(one_b, one_c)[0])
        level = 1 - settings.confidence
        rejects_b, rejects_c = (_rejects(one, h, searched) <= level for one in (one_b, one_c))
        shared, other = None, one_b
        if rejects_c != rejects_b:  # one side's class, fitted to the other side too
            shared, other = (int(one_c.chosen[0]), one_b) if rejects_c else (int(one_b.chosen[0]), one_c)
        if (rejects_b and rejects_c) or (shared is not None and not np.isfinite(other.wrss[shared, 0])):
            # neither class describes both commits: each its own model, re-selected on every resample
            at_b, at_c = float(one_b.prediction[0]), float(one_c.prediction[0])
            resampled_b, resampled_c = boot_b.prediction, boot_c.prediction
            basis = "each commit's own model"
        elif shared is not None:
            # one commit's data need their own class (a term the other's do not show): both in that class
            at_b, at_c = float(one_b.predictions[shared, 0]), float(one_c.predictions[shared, 0])
            resampled_b, resampled_c = boot_b.predictions[shared], boot_c.predictions[shared]
            whose = "candidate" if rejects_c else "baseline"
            basis = f"both commits modeled as {specs[shared].format(names)}, the {whose}'s model"
        else:
            at_b, at_c = float(one_b.predictions[h, 0]), float(one_c.predictions[h, 0])
            joint = common_choice(boot_b, boot_c)
            columns = np.arange(joint.size)
            resampled_b, resampled_c = boot_b.predictions[joint, columns], boot_c.predictions[joint, columns]
            basis = f"both commits modeled as {specs[h].format(names)}"
    if not (at_b > 0 and at_c > 0):
        return None, None, None, 1.0, basis
    with np.errstate(all="ignore"):
        logs = np.log(resampled_c) - np.log(resampled_b)
    logs = logs[np.isfinite(logs)]
    if logs.size < max(2, resampled_b.size // 2):
        return at_c / at_b, None, None, 1.0, basis
    estimate = math.log(at_c / at_b)
    low, high = _tail_spreads(logs)
    factor, dof = _few_rounds(b, c)
    low, high = low * factor, high * factor
    if dof is not None and between > 0:
        counts = _round_counts(b, c)
        floor = math.sqrt(between * sum(1 / k for k in counts)) if len(counts) == 2 else 0.0
        low, high = max(low, floor), max(high, floor)
    law = stats.norm if dof is None else stats.t(dof)
    z = float(law.ppf(settings.confidence))
    margin = math.log1p(settings.threshold)
    if low > 0:
        p_value = float(law.sf((estimate - margin) / low))
    else:
        p_value = 0.0 if estimate > margin else 1.0
    return (math.exp(estimate), math.exp(estimate - z * low), math.exp(estimate + z * high), p_value, basis)


def _tail_spreads(logs: np.ndarray) -> tuple[float, float]:
    """(lower, upper) spread of the resampled log ratios: their semi-deviations below and above the median,
    sqrt(2 mean(min(0, x - median)^2)) and the same above (the standard deviation for a symmetric law).

    An extrapolation's resamples are skewed: the few that select a faster-growing class reach far above the rest.
    A one-sided bound below needs the spread below; a standard deviation would let that upper tail widen it, and
    hide a regression whose every resample is slower than the threshold. Unlike quantiles, the semi-deviations
    stay as wide as the standard deviation on the few distinct values a bootstrap of two or three rounds gives.
    """
    deviation = logs - float(np.median(logs))
    below, above = np.minimum(deviation, 0.0), np.maximum(deviation, 0.0)
    return float(np.sqrt(2 * np.mean(below**2))), float(np.sqrt(2 * np.mean(above**2)))


def _rejects(one: Resampled, common: int, searched: int) -> float:
    """p-value that one side's own choice describes its data better than the `common` hypothesis does.

    Test: the common hypothesis's extra weighted residual over the side's own choice, in units of the side's noise,
    against F(1, dof) (chi^2(1) without repetitions); the side's choice is the best of `searched` candidate terms,
    so the p-value is multiplied by `searched` (Bonferroni, as in `_change_test`). A common hypothesis not
    eligible on this side (inf residual) is rejected.
    """
    from scipy import special

    own = int(one.chosen[0])
    if own == common:
        return 1.0
    with np.errstate(invalid="ignore"):
        gain = float((one.wrss[common, 0] - one.wrss[own, 0]) / one.noise[0])
    gain = 0.0 if math.isnan(gain) else max(gain, 0.0)
    dof = int(one.dof[0])
    p_value = float(special.fdtrc(1.0, dof, gain) if dof > 0 else special.chdtrc(1.0, gain))
    return min(1.0, p_value * searched)


def _round_counts(b: _Side, c: _Side) -> list[int]:
    """Rounds of each side that has them."""
    return [int(np.unique(s.rounds[~np.isnan(s.rounds)]).size) for s in (b, c) if s.rounds is not None]


def _between_rounds(pairs: Sequence[tuple[Key, Series, Series]]) -> float:
    """The variance of a round's log level between the rounds of one side, averaged over every side of `pairs`
    with two rounds or more (0 without such sides): how much the machine moves a whole round.

    Each kernel's own estimate rests on a few rounds (the variance of 3 rounds has 2 degrees of freedom, and is
    near 0 in a tenth of the kernels); bursts of load hit whichever kernel is running, so the comparison's kernels
    together tell how far rounds disagree. The mean, not the median, of the kernels' variances: it is unbiased for
    the average variance, which the median of a few degrees of freedom is not.
    """
    variances = []
    for _, base, cand in pairs:
        rows = {tuple(p): i for i, p in enumerate(base.points.tolist())}
        shared = [(rows[tuple(p)], j) for j, p in enumerate(cand.points.tolist()) if tuple(p) in rows]
        if not shared:
            continue
        for levels in _round_levels(base, cand, shared):
            if levels.size >= 2:
                variances.append(float(np.var(levels, ddof=1)))
    return float(np.mean(variances)) if variances else 0.0


def _few_rounds(b: _Side, c: _Side) -> tuple[float, int | None]:
    """(spread factor, degrees of freedom) of a bound from a bootstrap of whole rounds.

    With few rounds a round bootstrap underestimates the spread (by (R - 1) / R in variance, and it sees only a
    few distinct combinations), and the normal quantile is too optimistic: the spread is scaled by
    sqrt(R / (R - 1)) of the side with fewer rounds and the quantile taken from Student's t with the rounds'
    degrees of freedom, sum(R - 1), as for a mean of R values. (1, None) without rounds.
    """
    counts = _round_counts(b, c)
    if not counts:
        return 1.0, None
    return math.sqrt(max(k / (k - 1) for k in counts)), sum(k - 1 for k in counts)


def _measured_tests(pairs: Sequence[tuple[Key, Series, Series]], settings: CompareOptions) -> dict[Key, _Test]:
    """Rank tests of a slowdown at the points both sides measured (one-sided Mann-Whitney U per point), combined
    over each kernel's points with Stouffer's method. Points with equal repetition counts are tested in one
    vectorized call."""
    from scipy import stats

    cells: dict[tuple[int, int], list[tuple[int, np.ndarray, np.ndarray]]] = {}
    ratios: list[list[float]] = [[] for _ in pairs]
    for index, (_, base, cand) in enumerate(pairs):
        rows = {tuple(p): i for i, p in enumerate(base.points.tolist())}
        base_median, cand_median = np.nanmedian(base.values, axis=1), np.nanmedian(cand.values, axis=1)
        base_reps, cand_reps = base.repetitions, cand.repetitions
        for j, p in enumerate(cand.points.tolist()):
            i = rows.get(tuple(p))
            if i is None or base_reps[i] < 2 or cand_reps[j] < 2:
                continue
            b, c = base.values[i, : base_reps[i]], cand.values[j, : cand_reps[j]]  # NaN padding is at the end
            cells.setdefault((c.size, b.size), []).append((index, c, b))
            if base_median[i] > 0 and cand_median[j] > 0:
                ratios[index].append(float(cand_median[j] / base_median[i]))
    z_sums, counts = np.zeros(len(pairs)), np.zeros(len(pairs), dtype=int)
    for group in cells.values():
        owners = np.array([g[0] for g in group])
        p_values = stats.mannwhitneyu(np.array([g[1] for g in group]), np.array([g[2] for g in group]),
                                      alternative="greater", axis=1).pvalue
        np.add.at(z_sums, owners, stats.norm.isf(np.clip(p_values, 1e-300, 1.0)))
        np.add.at(counts, owners, 1)
    out = {}
    for index, (key, _, _) in enumerate(pairs):
        if counts[index] == 0 or not ratios[index]:
            continue
        p_value = float(stats.norm.sf(z_sums[index] / math.sqrt(counts[index])))
        effect = float(np.exp(np.mean(np.log(ratios[index]))))
        finding = Finding(*key, "measured", f"{effect:.3g}x the baseline at the {counts[index]} measured point(s) "
                          "both commits share (median of the repetitions)", ratio=effect,
                          evidence={"points": int(counts[index])})
        out[key] = _Test(key, "measured", p_value, finding, effect > 1 + settings.threshold)
    return out


def _measured_round_tests(pairs: Sequence[tuple[Key, Series, Series]], settings: CompareOptions
                           ) -> dict[Key, _Test]:
    """A slowdown at the measured points, for series measured in rounds: each round's level (the mean over the
    points both sides measured of the log of its median there, relative to both sides' median), candidate rounds
    against baseline rounds in a one-sided Mann-Whitney U test. Its p-value cannot be small with few rounds (at
    least 1/6 with two a side): a difference between two runs is not told apart from the runs' own disagreement."""
    from scipy import stats

    out = {}
    for key, base, cand in pairs:
        rows = {tuple(p): i for i, p in enumerate(base.points.tolist())}
        shared = [(rows[tuple(p)], j) for j, p in enumerate(cand.points.tolist()) if tuple(p) in rows]
        if not shared:
            continue
        levels_b, levels_c = _round_levels(base, cand, shared)
        if levels_b.size < 2 or levels_c.size < 2:
            continue
        p_value = float(stats.mannwhitneyu(levels_c, levels_b, alternative="greater").pvalue)
        effect = float(np.exp(np.mean(levels_c) - np.mean(levels_b)))
        finding = Finding(*key, "measured", f"{effect:.3g}x the baseline at the {len(shared)} measured point(s) both "
                          f"commits share ({levels_c.size} candidate rounds against {levels_b.size} baseline rounds)",
                          ratio=effect, evidence={"points": len(shared), "rounds": f"{levels_b.size} + {levels_c.size}"})
        out[key] = _Test(key, "measured", p_value, finding, effect > 1 + settings.threshold)
    return out


def _round_levels(base: Series, cand: Series, shared: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """The log level of each round of each side over the `shared` (base row, candidate row) points: the mean, over
    the points the round measured, of log(its median there / both sides' median there)."""
    sides = []
    for series, column in ((base, 0), (cand, 1)):
        rows = [pair[column] for pair in shared]
        sides.append((series.values[rows], series.rounds[rows] if series.rounds is not None else None))
    pooled = np.nanmedian(np.hstack([sides[0][0], sides[1][0]]), axis=1)  # (k,) both sides' median per point
    levels = []
    for values, rounds in sides:
        assert rounds is not None
        per_round = []
        for number in np.unique(rounds[~np.isnan(rounds) & ~np.isnan(values)]):
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a point this round did not measure
                medians = np.nanmedian(np.where(rounds == number, values, np.nan), axis=1)
                logs = np.log(medians / pooled)
            logs = logs[np.isfinite(logs)]
            if logs.size:
                per_round.append(float(np.mean(logs)))
        levels.append(np.array(per_round))
    return levels[0], levels[1]


def _exceedance_tests(pairs: Sequence[tuple[Key, Series, Series]], settings: CompareOptions) -> dict[Key, _Test]:
    """The exceedance test (`core.exceedance`) of every time metric, over the points both sides measured where the
    baseline has enough repetitions for a noise model; one batch for all kernels, each with its own generator."""
    options = ExceedanceOptions(settings.quantile, settings.permutations)
    keys: list[Key] = []
    kernels: list[list[tuple[np.ndarray, np.ndarray]]] = []
    for key, base, cand in pairs:
        if not (is_time_metric(cand.metric, cand.unit) or is_time_metric(base.metric, base.unit)):
            continue  # t_max is a model of timings: t = t_min + positive errors
        rows = {tuple(p): i for i, p in enumerate(base.points.tolist())}
        points = [(base.values[rows[tuple(p)]], cand.values[j]) for j, p in enumerate(cand.points.tolist())
                  if tuple(p) in rows and base.repetitions[rows[tuple(p)]] >= options.min_baseline]
        if points:
            keys.append(key)
            kernels.append(points)
    rngs = [np.random.default_rng([settings.seed, zlib.crc32("\0".join(key).encode()), 1]) for key in keys]
    out = {}
    for key, result in zip(keys, exceedance_tests(kernels, options, rngs)):
        if result is None:
            continue
        share = result.exceedances / result.repetitions
        expected = result.expected / result.repetitions
        finding = Finding(
            *key, "overhead",
            f"{result.exceedances} of {result.repetitions} repetitions ({share:.0%}) above the baseline's t_max "
            f"(its noise model's {result.quantile:g} quantile) at {result.points} point(s); {result.expected:.1f} "
            f"({expected:.0%}) expected if nothing changed",
            evidence={"points": result.points, "exceedances": result.exceedances,
                      "repetitions": result.repetitions, "expected": float(f"{result.expected:.3g}"),
                      "binomial_p": float(f"{result.binomial_p:.2g}"),
                      "time_above_t_max": float(f"{result.overhead:.4g}"),
                      "noise": ", ".join(sorted(set(result.models)))})
        out[key] = _Test(key, "overhead", result.p_value, finding, result.excess)
    return out


def _adjust(tests: list[_Test], settings: CompareOptions) -> list[Finding]:
    """Findings whose test survives the Benjamini-Hochberg adjustment over all tests and whose condition holds.

    A measured slowdown, an overhead or a slowdown at the largest measured scale is not repeated for a kernel that
    already has a growth or prediction finding: a kernel that got slower at scale also exceeds the baseline there.
    """
    if not tests:
        return []
    from scipy import stats

    q_values = stats.false_discovery_control([t.p_value for t in tests], method="bh")
    level = 1 - settings.confidence
    kept = [(t, float(q)) for t, q in zip(tests, q_values) if q <= level and t.condition]
    explained = {t.key for t, _ in kept if t.kind in ("growth", "prediction")}
    out = []
    for t, q in kept:
        if t.kind in ("measured", "overhead", "top") and t.key in explained:
            continue
        f = t.finding
        out.append(replace(t.finding, p_value=t.p_value, q_value=q))
    return out
