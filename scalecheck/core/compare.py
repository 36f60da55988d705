"""Compare a candidate's measurements against its baseline's, per (kernel, metric), with honest statistics.

Each test yields a p-value; all p-values of a comparison are adjusted together (Benjamini-Hochberg), so that a
thousand unchanged kernels do not produce a handful of false alarms by chance. Only tests that were run count: a
kernel whose fitted growth did not rise, or that stays within its expectation, adds no test.

- growth: the candidate's lead-order growth is higher than the baseline's (exponents (i, j) compared
  lexicographically per parameter). Test (`change_test`, symmetric): can one model class, with its own
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
  prediction at the target exceeds 1 + threshold too, or the models claim an improvement that this rise
  contradicts (a t-test that the slowdown rises at all, or round against round): what the models miss at the top
  of the range is still measured there.
- expectation: the candidate against the configured growth (also for new kernels): no hypothesis growing at most
  as allowed (including the chosen model capped at the bound) fits its data as well (`side.restricted_test`).
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
- improvement: growth or prediction down with the same confidence; reported, never failing, and not at all for a
  kernel whose largest measured scale fails the build.
- a kernel that a side's values put beyond the magnitudes a fit handles (status "out of range",
  `search.out_of_range`) has no model to predict with, but its measured points are still compared with the other
  side's (`measured.unmodeled_finding`), as a prediction: a slowdown by 1e300 times fails like any other.

When a side's repetitions carry their rounds (two rounds or more), its bootstrap draws whole rounds
(`bootstrap.resample_rounds`), so that the bounds carry the disagreement between rounds; and a prediction's
spread is at least what rounds disagree by across the comparison's kernels (`measured.between_rounds`), since a
kernel's few rounds can agree by chance (all of a candidate's rounds hit by the same kind of burst).

Each kernel draws its resamples from its own generator, seeded by the comparison's seed and the kernel's name, so
a verdict is reproducible and does not depend on which other kernels were measured.

How it is built: `compare` reads each kernel on its own (`Setup` holds what all kernels share), in blocks of
kernels (`compare_kernels`): each kernel draws its resamples from its own generator, the model selections of the
whole block are re-run together (`side.fit_sides`, `bootstrap.reselect_many`: the same arithmetic as for a kernel
alone, in a few large numpy calls instead of many small ones), then each kernel is assessed. A kernel both
commits modeled becomes a `pair.KernelPair` (each side's data and its selection among the same hypotheses, on the
data and on resamples: `side.SideFit`), then an `Assessment` (`pair.growth_change`, `pair.predict_ratio`,
`pair.ratio_rise`, and the template every finding of the kernel starts from). One function per finding kind reads
the assessment: `growth_finding`, `prediction_finding`, `expectation_finding`, `segmentation_finding`,
`improvement_finding`; the findings at the measured points come from `core.measured`. A tested finding is a
`PendingFinding` until the false-discovery adjustment (`_adjust`) keeps it or not. The tests enter the adjustment
in a fixed order: per kernel, growth, prediction, expectation, the new last segment or else the largest measured
scale, measured, overhead.
"""

from __future__ import annotations

import fnmatch
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from scalecheck.core.bootstrap import (Designs, expectation_spec, hypotheses, jitter, neighbourhood, resample,
                                       reselect, residual_spread)
from scalecheck.core.measured import (Key, SeriesPair, between_rounds, measured_findings, measured_round_findings,
                                      overhead_findings, top_point_finding, top_segment_finding, unmodeled_finding)
from scalecheck.core.modeler import fit_kernels
from scalecheck.core.options import CompareOptions as CompareOptions  # re-exported: the comparison's options
from scalecheck.core.pair import GrowthChange, KernelPair, Prediction, growth_change, predict_ratio, ratio_rise
from scalecheck.core.search import OUT_OF_RANGE, FitOptions, design, point_stats, score
from scalecheck.core.segment import SegmentOptions
from scalecheck.core.side import Side, SideFit, draw, fit_sides, prepare_side, prepare_sides, restricted_test
from scalecheck.data.growth import exceeds
from scalecheck.data.measurement import Series, name_hash
from scalecheck.data.outcome import KernelModel
from scalecheck.data.spec import Exponents, ModelSpec, format_growth
from scalecheck.data.verdict import Comparison, Finding, KernelComparison, PendingFinding

# Resampled columns (both sides' data and resamples) whose selections are held at once: kernels are compared in
# blocks of about BLOCK_COLUMNS / (resamples + 1), 248 at the default 200 resamples, some 50 MB of selections.
BLOCK_COLUMNS = 50_000


@dataclass(frozen=True)
class Expectation:
    """Kernels matching `pattern` must grow no faster than `growth` (written as `text`)."""

    pattern: str
    growth: Mapping[str, Exponents]
    text: str


@dataclass(frozen=True, kw_only=True, eq=False)
class Setup:
    """What every kernel of one comparison shares."""

    target: np.ndarray  # (m,) the scale of the predictions, one value per parameter
    options: FitOptions
    settings: CompareOptions
    between: float  # how far rounds disagree across the comparison (`measured.between_rounds`); 0 without rounds
    designs: Designs = field(default_factory=Designs)  # the hypotheses' design matrices, evaluated once
    neighbours: dict[ModelSpec, tuple[ModelSpec, ...]] = field(default_factory=dict)  # found once (`_neighbours`)
    # the hypotheses of a kernel by its sides' models, expected growth and point sets, found once (`_hypotheses`)
    hypotheses: dict[tuple[object, ...], tuple[ModelSpec, ...]] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, eq=False)
class KernelInput:
    """One (kernel, metric) as the two commits measured and modeled it; None where a commit has none."""

    key: Key
    baseline: Series | None
    candidate: Series | None
    baseline_model: KernelModel | None
    candidate_model: KernelModel | None
    expected: Expectation | None  # the first expectation whose pattern matches the kernel

    @property
    def expectation_text(self) -> str | None:
        return self.expected.text if self.expected else None


@dataclass(frozen=True, kw_only=True)
class KernelOutcome:
    """The comparison of one kernel: its row, its tested findings, and the findings reported without a test."""

    comparison: KernelComparison
    pending: tuple[PendingFinding, ...] = ()  # in the order they enter the false-discovery adjustment
    plain: tuple[Finding, ...] = ()  # improvement and segmentation findings


@dataclass(frozen=True, kw_only=True, eq=False)
class Assessment:
    """What comparing a kernel both commits modeled establishes, before any finding is made of it."""

    pair: KernelPair
    growth: GrowthChange
    prediction: Prediction
    template: Finding  # what every finding of the kernel states; each kind sets its own kind and message


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
    `settings.resamples` resamples, batched over blocks of kernels (`compare_kernels`); memory is bounded by the
    block (`BLOCK_COLUMNS`) and the batch (`bootstrap.CHUNK_ELEMENTS`), not by the number of kernels.
    """
    parameters = (candidate or baseline)[0].parameters
    base = {(s.kernel, s.metric): s for s in baseline}
    cand = {(s.kernel, s.metric): s for s in candidate}
    base_models = {(m.kernel, m.metric): m for m in fit_kernels(list(baseline), options, segmentation)}
    cand_models = {(m.kernel, m.metric): m for m in fit_kernels(list(candidate), options, segmentation)}
    common = [SeriesPair(baseline=base[key], candidate=cand[key]) for key in cand if key in base]
    # measured in rounds (two or more a side): a round, not a repetition, is the unit that noise hits
    in_rounds = [pair for pair in common if pair.in_rounds]
    unrounded = [pair for pair in common if not pair.in_rounds]
    measured = {**measured_findings(unrounded, settings.threshold),
                **measured_round_findings(in_rounds, settings.threshold)}
    setup = Setup(target=np.array([float(target[name]) for name in parameters]), options=options,
                  settings=settings, between=between_rounds(in_rounds))
    overhead = overhead_findings(unrounded, settings.exceedance, settings.seed)  # needs exchangeable repetitions
    kernels: list[KernelComparison] = []
    pending: list[PendingFinding] = []
    plain: list[Finding] = []
    keys = list(cand) + [k for k in base if k not in cand]
    block = max(1, BLOCK_COLUMNS // (settings.resamples + 1))
    for start in range(0, len(keys), block):
        inputs = [(KernelInput(key=key, baseline=base.get(key), candidate=cand.get(key),
                               baseline_model=base_models.get(key), candidate_model=cand_models.get(key),
                               expected=next((e for e in expectations if fnmatch.fnmatchcase(key[0], e.pattern)),
                                             None)),
                   np.random.default_rng([settings.seed, name_hash(*key)])) for key in keys[start:start + block]]
        for (kernel, _), outcome in zip(inputs, compare_kernels(inputs, setup)):
            kernels.append(outcome.comparison)
            pending += [*outcome.pending, *(found[kernel.key] for found in (measured, overhead)
                                            if kernel.key in found)]
            plain += outcome.plain
    kept = _adjust(pending, settings.confidence)
    # an improvement the models claim while the top measured scale fails (`top_point_finding`) is not news
    slower = {(f.kernel, f.metric) for f in kept if f.kind == "prediction"}
    findings = kept + [f for f in plain if f.kind != "improvement" or (f.kernel, f.metric) not in slower]
    return Comparison(parameters=parameters, target=dict(target), kernels=tuple(kernels), findings=tuple(findings),
                      resamples=settings.resamples, seed=settings.seed)


def compare_kernel(kernel: KernelInput, setup: Setup, rng: np.random.Generator) -> KernelOutcome:
    """The comparison of one kernel: its row and the findings of its models (not those at the measured points).

    A kernel the candidate lacks is "removed"; one it could not model is listed with the reason. A kernel new in
    the candidate (or whose baseline has no model) is only held against its expectation. `rng` draws both sides'
    resamples, the baseline's first.
    """
    return compare_kernels([(kernel, rng)], setup)[0]


def compare_kernels(kernels: Sequence[tuple[KernelInput, np.random.Generator]], setup: Setup
                    ) -> list[KernelOutcome]:
    """`compare_kernel` of many kernels, each with its generator; each outcome equals that kernel's alone.

    Each kernel draws its resamples as `compare_kernel` does; then the selections of all of them are re-run in
    batches (`side.fit_sides`), and each kernel is assessed on its own.
    """
    wanted = [_modeled_sides(kernel) for kernel, _ in kernels]
    prepared = iter(prepare_sides([(_series(kernel, name), _model(kernel, name))
                                   for (kernel, _), names in zip(kernels, wanted) for name in names], setup.options))
    plans = [_plan(kernel, setup, rng, {name: next(prepared) for name in names})
             for (kernel, rng), names in zip(kernels, wanted)]
    drawn = [plan for plan in plans if isinstance(plan, _Drawn)]
    fits = iter(fit_sides([side for plan in drawn for side in plan.sides],
                          [plan.specs for plan in drawn for _ in plan.sides],
                          [samples for plan in drawn for samples in plan.samples],
                          setup.target, setup.options, setup.designs))
    return [_assessed(plan, tuple(next(fits) for _ in plan.sides), setup) if isinstance(plan, _Drawn) else plan
            for plan in plans]


@dataclass(frozen=True, kw_only=True, eq=False)
class _Drawn:
    """A kernel whose resamples are drawn, waiting for its selections (`compare_kernels`)."""

    kernel: KernelInput
    sides: tuple[Side, ...]  # (baseline, candidate), or (candidate,) for a kernel held against its expectation only
    specs: tuple[ModelSpec, ...]  # the hypotheses both sides select among
    samples: tuple[np.ndarray, ...]  # per side, from `side.draw`
    row: KernelComparison | None = None  # the row of a kernel held against its expectation only


def _modeled_sides(kernel: KernelInput) -> tuple[str, ...]:
    """The sides of a kernel that `_plan` reads: the candidate's when it was modeled, then the baseline's too when
    both were."""
    if kernel.candidate is None or kernel.candidate_model is None or not kernel.candidate_model.ok:
        return ()
    if kernel.baseline is None or kernel.baseline_model is None or not kernel.baseline_model.ok:
        return ("candidate",)
    return ("candidate", "baseline")


def _series(kernel: KernelInput, side: str) -> Series:
    found = kernel.candidate if side == "candidate" else kernel.baseline
    assert found is not None
    return found


def _model(kernel: KernelInput, side: str) -> KernelModel:
    found = kernel.candidate_model if side == "candidate" else kernel.baseline_model
    assert found is not None
    return found


def _plan(kernel: KernelInput, setup: Setup, rng: np.random.Generator, sides: Mapping[str, Side]
          ) -> KernelOutcome | _Drawn:
    """The outcome of a kernel that needs no bootstrap, else its sides (`sides`, by `_modeled_sides`' names) with
    their resamples drawn from `rng`."""
    base, cand = kernel.baseline, kernel.candidate
    base_model, cand_model = kernel.baseline_model, kernel.candidate_model
    present = cand if cand is not None else base
    unit = present.unit if present is not None else ""
    name, metric, text = kernel.key[0], kernel.key[1], kernel.expectation_text
    if cand is None or cand_model is None:
        return KernelOutcome(comparison=KernelComparison(
            kernel=name, metric=metric, unit=unit, status="removed", baseline=base_model, expectation=text,
            note="measured in the baseline only"))
    if not cand_model.ok:
        both = base_model is not None and base_model.status == OUT_OF_RANGE  # say why neither side has a model
        return KernelOutcome(comparison=KernelComparison(
            kernel=name, metric=metric, unit=unit, status="new" if base is None else "unmodeled", baseline=base_model,
            candidate=cand_model, expectation=text,
            note=f"candidate: {cand_model.note}" + (f"; baseline: {base_model.note}" if both and base_model else "")),
            pending=_unmodeled(kernel, setup))
    resamples = setup.settings.resamples
    c = sides["candidate"]
    expected = None if kernel.expected is None else expectation_spec(kernel.expected.growth, cand.parameters)
    if base is None or base_model is None or not base_model.ok:
        row = KernelComparison(kernel=name, metric=metric, unit=unit, status="new" if base is None else "unmodeled",
                               baseline=base_model, candidate=cand_model, expectation=text,
                               note="" if base_model is None else f"baseline: {base_model.note}")
        if kernel.expected is None:
            return KernelOutcome(comparison=row, pending=_unmodeled(kernel, setup))
        alone = _hypotheses(setup, c, expected, None)
        return _Drawn(kernel=kernel, sides=(c,), specs=alone, samples=(draw(c, resamples, rng),), row=row)
    b = sides["baseline"]
    union = _hypotheses(setup, c, expected, b)
    return _Drawn(kernel=kernel, sides=(b, c), specs=union,
                  samples=(draw(b, resamples, rng), draw(c, resamples, rng)))


def _hypotheses(setup: Setup, c: Side, expected: ModelSpec | None, b: Side | None) -> tuple[ModelSpec, ...]:
    """The hypotheses a kernel's sides select among (`bootstrap.hypotheses`): the candidate's model and its
    neighbours, the expected growth, then the baseline's model and its neighbours, when `b` is given. Found once
    per combination of models, expectation and point sets: a comparison's kernels repeat a few of them."""
    sides = (c,) if b is None else (b, c)
    key = (c.fitted.spec, expected, None if b is None else b.fitted.spec,
           *((side.points.shape, side.points.tobytes()) for side in sides))
    found = setup.hypotheses.get(key)
    if found is None:
        specs = list(_neighbours(c.fitted.spec, setup))
        if expected is not None:
            specs.append(expected)
        if b is not None:
            specs += _neighbours(b.fitted.spec, setup)
        points = c.points if b is None else [side.points for side in sides]
        found = setup.hypotheses[key] = tuple(hypotheses(specs, points, setup.target, setup.designs))
    return found


def _neighbours(spec: ModelSpec, setup: Setup) -> tuple[ModelSpec, ...]:
    """`bootstrap.neighbourhood` of `spec` among the comparison's building blocks, found once per comparison."""
    found = setup.neighbours.get(spec)
    if found is None:
        found = setup.neighbours[spec] = tuple(neighbourhood(spec, setup.options.building_blocks))
    return found


def _assessed(drawn: _Drawn, fits: tuple[SideFit, ...], setup: Setup) -> KernelOutcome:
    """The outcome of a kernel once its sides' selections are made."""
    kernel = drawn.kernel
    if drawn.row is not None:  # held against its expectation only
        (alone,) = fits
        assert kernel.expected is not None
        found = expectation_finding(alone, kernel.expected, alone.resampled.specs, setup)
        return KernelOutcome(comparison=drawn.row,
                             pending=(*_unmodeled(kernel, setup), *(() if found is None else (found,))))
    fit_b, fit_c = fits
    assessment = assess(KernelPair(key=kernel.key, baseline=fit_b, candidate=fit_c, specs=drawn.specs,
                                   target=setup.target, searched=len(setup.options.building_blocks)), setup)
    growth, prediction = assessment.growth, assessment.prediction
    row = KernelComparison(kernel=kernel.key[0], metric=kernel.key[1], unit=fit_c.side.series.unit,
                           status="compared", baseline=kernel.baseline_model, candidate=kernel.candidate_model,
                           ratio=prediction.ratio, bound=prediction.bound, upper=prediction.upper,
                           growth_up=growth.up, growth_down=growth.down, expectation=kernel.expectation_text,
                           basis=prediction.basis, note=prediction.note)
    return _findings(row, assessment, kernel.expected, setup)


def _unmodeled(kernel: KernelInput, setup: Setup) -> tuple[PendingFinding, ...]:
    """When a side's values are beyond what a model can be fitted to (`search.out_of_range`) and both commits
    measured the kernel, the test of their measured points (`measured.unmodeled_finding`), as a prediction: a
    slowdown by any factor, 1e300 times included, must fail the build like a predicted one."""
    base, cand = kernel.baseline, kernel.candidate
    models = {"baseline": kernel.baseline_model, "candidate": kernel.candidate_model}
    beyond = [side for side, km in models.items() if km is not None and km.status == OUT_OF_RANGE]
    if base is None or cand is None or not beyond:
        return ()
    whose = "'s and the ".join(beyond)
    found = unmodeled_finding(SeriesPair(baseline=base, candidate=cand), setup.settings.threshold,
                              f"the {whose}'s values are beyond the magnitudes a model can be fitted to")
    return () if found is None else (found,)


def _findings(row: KernelComparison, assessment: Assessment, expected: Expectation | None, setup: Setup
              ) -> KernelOutcome:
    """The findings of a kernel both commits modeled, tested ones in the order they enter the adjustment."""
    pair, threshold = assessment.pair, setup.settings.threshold
    pending = [growth_finding(assessment, setup), prediction_finding(assessment, setup)]
    if expected is not None:
        pending.append(expectation_finding(pair.candidate, expected, pair.specs, setup))
    segmentation = segmentation_finding(assessment)
    top_segment = None
    if segmentation is not None:  # its last segment may be too short to model: then its points are compared
        top_segment = top_segment_finding(pair.series, pair.candidate.side.model.segments[-1], assessment.template,
                                          threshold)
        pending.append(top_segment)
    improvement = improvement_finding(assessment, setup)
    if top_segment is None:
        pending.append(top_point_finding(pair.series, assessment.template, threshold, assessment.prediction.ratio,
                                         improved=improvement is not None))
    plain = (improvement, segmentation)
    return KernelOutcome(comparison=row, pending=tuple(p for p in pending if p is not None),
                         plain=tuple(f for f in plain if f is not None))


def assess(pair: KernelPair, setup: Setup) -> Assessment:
    """The growth change, the prediction at the target, and the template of the kernel's findings."""
    b, c = pair.baseline.side, pair.candidate.side
    settings = setup.settings
    growth = growth_change(pair, confidence=settings.confidence)
    prediction = predict_ratio(pair, differs=growth.differs, confidence=settings.confidence,
                               threshold=settings.threshold, between=setup.between)
    rise = ratio_rise(b, c)
    kernel, metric = pair.key
    template = Finding(kernel=kernel, metric=metric, kind="growth", message="",
                       baseline_growth=format_growth(growth.baseline), candidate_growth=format_growth(growth.candidate),
                       ratio=prediction.ratio, bound=prediction.bound,
                       evidence={"baseline": b.fitted.formula(), "candidate": c.fitted.formula()},
                       rise=rise.factor, span=rise.span)
    return Assessment(pair=pair, growth=growth, prediction=prediction, template=template)


def growth_finding(assessment: Assessment, setup: Setup) -> PendingFinding | None:
    """The candidate grows faster than the baseline: tested by `pair.change_test`, kept when the bootstrap agrees at the
    confidence level too. None when the fitted growth did not rise (no test, so nothing for the adjustment)."""
    growth = assessment.growth
    if not growth.rose:
        return None
    finding = replace(assessment.template, probability=growth.up,
                      message=f"grows as {format_growth(growth.candidate)}, the baseline as "
                              f"{format_growth(growth.baseline)}")
    return PendingFinding(test="growth", p_value=growth.p_value, finding=finding,
                          condition=growth.up >= setup.settings.confidence)


def prediction_finding(assessment: Assessment, setup: Setup) -> PendingFinding | None:
    """The prediction at the target exceeds the baseline's by more than the threshold (`predict_ratio`'s test).
    None without a ratio and its bound."""
    prediction = assessment.prediction
    ratio, bound = prediction.ratio, prediction.bound
    if ratio is None or bound is None:
        return None
    template = assessment.template
    finding = replace(template, kind="prediction", evidence={**template.evidence, "basis": prediction.basis},
                      message=f"predicted {ratio:.3g}x the baseline at {_where(assessment.pair)} (at least "
                              f"{bound:.3g}x at {_confidence(setup)})")
    return PendingFinding(test="prediction", p_value=prediction.p_value, finding=finding, condition=True)


def improvement_finding(assessment: Assessment, setup: Setup) -> Finding | None:
    """Good news, never tested nor failing: the growth fell (with the confidence a rise needs), or else the upper
    bound of the prediction ratio is below 1 / (1 + threshold)."""
    growth, prediction, template = assessment.growth, assessment.prediction, assessment.template
    if growth.improved:
        return replace(template, kind="improvement", severity="notice", probability=growth.down,
                       message=f"grows as {format_growth(growth.candidate)}, slower than the baseline's "
                               f"{format_growth(growth.baseline)}")
    ratio, upper = prediction.ratio, prediction.upper
    if ratio is not None and upper is not None and upper < 1 / (1 + setup.settings.threshold):
        return replace(template, kind="improvement", severity="notice",
                       message=f"predicted {ratio:.3g}x the baseline at {_where(assessment.pair)} (at most "
                               f"{upper:.3g}x at {_confidence(setup)})")
    return None


def segmentation_finding(assessment: Assessment) -> Finding | None:
    """The candidate's trend changes at a scale where the baseline's did not (reported without a test; a last
    segment too short to model is tested by `measured.top_segment_finding`)."""
    base_model = assessment.pair.baseline.side.model
    cand_model = assessment.pair.candidate.side.model
    if not cand_model.segmented or (base_model.segmented and base_model.change_points == cand_model.change_points):
        return None
    now = ", ".join(cp.text() for cp in cand_model.change_points)
    was = ", ".join(cp.text() for cp in base_model.change_points) or "none"
    return replace(assessment.template, kind="segmentation",
                   message=f"the trend now changes at {now} (baseline: {was})")


def expectation_finding(fit: SideFit, expected: Expectation, specs: Sequence[ModelSpec], setup: Setup
                        ) -> PendingFinding | None:
    """The candidate grows faster than the configured expectation: no hypothesis of `specs` growing at most as
    allowed fits as well (`side.restricted_test`), kept when the bootstrap agrees at the confidence level. None
    within the expectation (no test, so nothing for the false-discovery adjustment to count)."""
    side = fit.side
    names = side.fitted.parameters
    growth = side.fitted.growth()
    if not exceeds(growth, expected.growth):
        return None
    p_value = restricted_test(side, specs, expected.growth, setup.options)
    share = float(np.mean([exceeds(g, expected.growth) for g in fit.resampled.growth(names)]))
    finding = Finding(kernel=side.series.kernel, metric=side.series.metric, kind="expectation",
                      message=f"grows as {format_growth(growth)}, faster than the expected {expected.text} (pattern "
                              f"'{expected.pattern}')",
                      probability=share, candidate_growth=format_growth(growth),
                      evidence={"candidate": side.fitted.formula(), "expected": expected.text})
    return PendingFinding(test="expectation", p_value=p_value, finding=finding,
                          condition=share >= setup.settings.confidence)


def _where(pair: KernelPair) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in zip(pair.parameters, pair.target))


def _confidence(setup: Setup) -> str:
    return f"{setup.settings.confidence:.0%} confidence"


def benjamini_hochberg(p_values: np.ndarray) -> np.ndarray:
    """The Benjamini-Hochberg adjusted p-values (q-values) of `p_values` (m,), in their order.

    Sorted ascending, the i-th p-value (1-based) becomes min over j >= i of p_(j) m / j, at most 1: a test is kept
    at false-discovery rate q when its q-value is at most q (Benjamini and Hochberg, "Controlling the false
    discovery rate", J. R. Statist. Soc. B 57 (1995), with the adjusted values of Yekutieli and Benjamini, 1999).
    The values of `scipy.stats.false_discovery_control(p_values, method="bh")` (a single p-value is returned as
    it is). Raises ValueError for a value outside [0, 1] (NaN included): a test that produced one is broken.
    """
    p_values = np.asarray(p_values, dtype=float)
    if not np.all((p_values >= 0) & (p_values <= 1)):
        raise ValueError(f"p-values must lie in [0, 1], got {p_values[~((p_values >= 0) & (p_values <= 1))][:5]}")
    m = p_values.size
    if m <= 1:
        return p_values.copy()
    order = np.argsort(p_values)
    adjusted = p_values[order] * (m / np.arange(1.0, m + 1))
    adjusted = np.minimum.accumulate(adjusted[::-1])[::-1]
    out = np.empty(m)
    out[order] = adjusted
    return np.asarray(np.clip(out, 0.0, 1.0))


def _adjust(pending: list[PendingFinding], confidence: float) -> list[Finding]:
    """Findings whose test survives the Benjamini-Hochberg adjustment over all tests and whose condition holds,
    in the order of `pending`.

    A measured slowdown, an overhead or a slowdown at the largest measured scale is not repeated for a kernel that
    already has a growth or prediction finding: a kernel that got slower at scale also exceeds the baseline there.
    """
    if not pending:
        return []
    q_values = benjamini_hochberg(np.array([t.p_value for t in pending]))
    level = 1 - confidence
    kept = [(t, float(q)) for t, q in zip(pending, q_values) if q <= level and t.condition]
    explained = {t.key for t, _ in kept if t.test in ("growth", "prediction")}
    out = []
    for t, q in kept:
        if t.test in ("measured", "overhead", "top") and t.key in explained:
            continue
        out.append(replace(t.finding, p_value=t.p_value, q_value=q))
    return out

# A band's legend says which models the resamples select when at least this share of them select another.
OTHER_MODELS = 0.2


@dataclass(frozen=True, kw_only=True)
class Band:
    """A kernel's model along a grid of points, with a pointwise confidence band from the bootstrap."""

    grid: np.ndarray  # (g, m) points
    model: np.ndarray  # (g,) the model chosen on the data
    low: np.ndarray  # (g,) lower bound
    high: np.ndarray  # (g,) upper bound
    note: str = ""  # how often the resamples select another model, when they often do


def prediction_band(series: Series, model: KernelModel, grid: np.ndarray, options: FitOptions = FitOptions(),
                    confidence: float = 0.95, resamples: int = 100, seed: int = 0) -> Band:
    """The model of `series` (its last segment's, if segmented) evaluated on `grid`, with a two-sided band.

    The band comes from the same bootstrap as the comparison: the repetitions are resampled within each point
    (parametric resamples without repetitions), the model is fitted again to every resample and evaluated along the
    grid; the band is the pointwise ((1 - confidence) / 2, (1 + confidence) / 2) quantiles, so it belongs to the
    model drawn and contains its line. The selection is also re-run among the model's neighbourhood on every
    resample: when at least `OTHER_MODELS` of them select another model, `note` says how often and which one most
    often, so that a band that looks narrow is not read as certainty about the class.
    """
    side = prepare_side(series, model, options)
    rng = np.random.default_rng([seed, name_hash(series.kernel, series.metric)])
    far = grid[np.argmax(np.sum(np.log(grid), axis=1))]
    own = side.fitted.spec
    specs = hypotheses(neighbourhood(own, options.building_blocks), side.points, far)
    if side.values.shape[1] > 1:
        samples = resample(side.values, resamples, rng)
    else:
        fitted = side.fitted.predict(side.points)
        samples = jitter(fitted, residual_spread(side.stats, fitted), resamples, rng)
    chosen = reselect(side.points, samples, specs, far, options).chosen
    stats = point_stats(samples, options.aggregate)
    X, lead = design([own], side.points)
    coef = score(X, lead, stats, options).batch.coef[0]  # (B, k)
    with np.errstate(over="ignore", invalid="ignore"):  # beyond the range of floats far out: inf, not drawn
        curves = coef @ own.basis(grid).T
    tail = (1 - confidence) / 2
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a grid point where every curve overflowed: NaN
        low, high = np.nanquantile(curves, [tail, 1 - tail], axis=0)
    return Band(grid=grid, model=side.fitted.predict(grid), low=low, high=high,
                note=_other_models(chosen, specs, own, series.parameters))


def _other_models(chosen: np.ndarray, specs: Sequence[ModelSpec], own: ModelSpec, names: tuple[str, ...]) -> str:
    """What the band's legend says when resamples (`chosen`: index into `specs`) often select another model."""
    picks = [specs[int(h)] for h in chosen]
    others = [spec for spec in picks if spec != own]
    if len(others) < OTHER_MODELS * max(1, len(picks)):
        return ""
    common = max(set(others), key=others.count)
    return (f"the resamples select another model in {len(others) / len(picks):.0%} of draws, most often "
            f"{common.format(names)}")
