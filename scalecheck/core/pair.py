"""Both commits' sides of one kernel, and the statistics that compare them: whether the growth changed, the
ratio of the predictions at the target with its confidence bounds, and how the ratio rises across the measured range.

`compare` turns these into findings (module docstring there). The two sides were selected among the same hypotheses
(`side.fit_side`), on their data and on resamples drawn from one generator per kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scalecheck.core.bootstrap import Resampled, common_choice
from scalecheck.core.measured import Key, SeriesPair, log_sizes, ratio_of, row_medians
from scalecheck.core.side import Side, SideFit
from scalecheck.data.growth import exceeds
from scalecheck.data.measurement import distinct
from scalecheck.data.spec import Exponents, ModelSpec


@dataclass(frozen=True, kw_only=True, eq=False)
class KernelPair:
    """Both commits' sides of a kernel that both modeled, each selected among the same hypotheses `specs`."""

    key: Key
    baseline: SideFit
    candidate: SideFit
    specs: tuple[ModelSpec, ...]  # from `bootstrap.hypotheses`: constant first, each defined at `target`
    target: np.ndarray  # (m,) the scale the selections predict
    searched: int  # terms each side's own choice was the best of (the building blocks): a Bonferroni factor

    @property
    def parameters(self) -> tuple[str, ...]:
        return self.candidate.side.series.parameters

    @property
    def series(self) -> SeriesPair:
        return SeriesPair(baseline=self.baseline.side.series, candidate=self.candidate.side.series)


@dataclass(frozen=True, kw_only=True)
class GrowthChange:
    """The lead-order growth of both commits' models, and the evidence that it changed."""

    baseline: dict[str, Exponents]
    candidate: dict[str, Exponents]
    up: float  # bootstrap share of paired resamples in which the candidate grows faster than the baseline
    down: float  # ... slower
    p_value: float  # `change_test`: the two commits need different model classes
    improved: bool  # slower growth, with the bootstrap and the test agreeing at the confidence level
    differs: bool  # faster or slower growth, likewise: each commit is then predicted with its own model

    @property
    def rose(self) -> bool:
        """The candidate's fitted growth is above the baseline's (whatever the evidence)."""
        return exceeds(self.candidate, self.baseline)


@dataclass(frozen=True, kw_only=True)
class Prediction:
    """The ratio candidate / baseline of the predictions at the target, with its one-sided confidence bounds."""

    ratio: float | None  # None when a prediction is not positive
    bound: float | None  # lower bound; None (as `upper`) when too few resamples give a finite ratio
    upper: float | None
    p_value: float  # that the ratio exceeds 1 + threshold
    basis: str  # how both commits were predicted: each its own model, or one model class for both
    note: str = ""  # why there is no ratio, when the reader should know (a prediction beyond the range of floats)


@dataclass(frozen=True, kw_only=True)
class Rise:
    """How much the ratio candidate / baseline grows across the range both commits measured (`ratio_rise`)."""

    factor: float | None  # from the smallest to the largest shared scale; 1: a constant factor
    span: float | None  # how many times larger the largest shared scale is than the smallest


@dataclass(frozen=True, kw_only=True)
class Spread:
    """The spread of resampled log ratios below and above their median (`tail_spreads`)."""

    below: float
    above: float


@dataclass(frozen=True, kw_only=True)
class _RoundsCorrection:
    """How a bound from a bootstrap of few whole rounds is widened (`_few_rounds`)."""

    factor: float  # applied to the spread
    dof: int | None  # of Student's t for the quantile; None: the normal law (no rounds)


def growth_change(pair: KernelPair, *, confidence: float) -> GrowthChange:
    """Both commits' lead-order growth, the bootstrap shares of a rise and a fall (paired resamples), and
    `change_test`; a change counts when the bootstrap share reaches `confidence` and the test its level."""
    boot_b, boot_c = pair.baseline.resampled, pair.candidate.resampled
    H = len(boot_b.specs)
    tally = np.bincount(boot_b.chosen * H + boot_c.chosen, minlength=H * H)  # each (baseline, candidate)
    codes = np.flatnonzero(tally)
    pairs = [(code // H, code % H, n) for code, n in zip(codes.tolist(), tally[codes].tolist())]
    orders = {h: {name: boot_b.specs[h].lead_order(k) for k, name in enumerate(pair.parameters)}
              for h in {h for hb, hc, _ in pairs for h in (hb, hc)}}  # of the hypotheses selected
    up = sum(n for hb, hc, n in pairs if exceeds(orders[hc], orders[hb]))
    down = sum(n for hb, hc, n in pairs if exceeds(orders[hb], orders[hc]))
    total = boot_b.chosen.size
    up_share, down_share = up / total, down / total
    g_b, g_c = pair.baseline.side.fitted.growth(), pair.candidate.side.fitted.growth()
    p_change = change_test(pair)
    level = 1 - confidence
    improved = exceeds(g_b, g_c) and down_share >= confidence and p_change <= level
    differs = (exceeds(g_c, g_b) and up_share >= confidence and p_change <= level) or improved
    return GrowthChange(baseline=g_b, candidate=g_c, up=up_share, down=down_share, p_value=p_change,
                        improved=improved, differs=differs)


def change_test(pair: KernelPair) -> float:
    """p-value that the two commits need different model classes (the growth changed).

    Null hypothesis: one hypothesis, with its own coefficients on each side, describes both commits. Statistic:
    the least summed weighted residuals (each side in units of its own noise) of any common hypothesis minus the
    sum of each side's own choice, against F(1, dof of both noises) (chi^2(1) without repetitions). Symmetric: an
    error in the baseline's model counts as much as one in the candidate's. Each side's own choice is the best of
    `pair.searched` candidate terms, so by chance alone it beats the common one by more than one F(1, dof)
    variable would: the p-value is multiplied by `pair.searched` (Bonferroni).
    """
    from scalecheck.core import special

    one_b, one_c = pair.baseline.observed, pair.candidate.observed
    try:
        own_b = pair.specs.index(pair.baseline.side.fitted.spec)
        own_c = pair.specs.index(pair.candidate.side.fitted.spec)
    except ValueError:
        return 1.0
    s_b, s_c = one_b.wrss[:, 0] / one_b.noise[0], one_c.wrss[:, 0] / one_c.noise[0]
    separate = s_b[own_b] + s_c[own_c]
    if not np.isfinite(separate):
        return 1.0
    statistic = max(0.0, float(np.min(s_b + s_c)) - float(separate))
    dof = int(one_b.dof[0] + one_c.dof[0])
    p_value = float(special.fdtrc(1.0, dof, statistic) if dof > 0 else special.chdtrc(1.0, statistic))
    return min(1.0, p_value * pair.searched)


def predict_ratio(pair: KernelPair, *, differs: bool, confidence: float, threshold: float, between: float = 0.0
                  ) -> Prediction:
    """The ratio candidate / baseline at the target, its one-sided bounds at `confidence`, and the p-value that it
    exceeds 1 + `threshold`.

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
    (`between`, `measured.between_rounds`): a kernel whose few rounds happen to agree (all of the
    candidate's slowed by the same burst of load) cannot claim less disagreement between rounds than the machine
    shows.
    """
    from scalecheck.core import special

    b, c = pair.baseline.side, pair.candidate.side
    one_b, one_c = pair.baseline.observed, pair.candidate.observed
    boot_b, boot_c = pair.baseline.resampled, pair.candidate.resampled
    target, specs = pair.target, pair.specs
    names = b.fitted.parameters
    if differs:
        at_b = float(b.fitted.predict(target[None])[0])
        at_c = float(c.fitted.predict(target[None])[0])
        resampled_b, resampled_c = boot_b.prediction, boot_c.prediction
        basis = "each commit's own model"
    else:
        h = int(common_choice(one_b, one_c)[0])
        level = 1 - confidence
        rejects_b, rejects_c = (_rejects(one, h, pair.searched) <= level for one in (one_b, one_c))
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
    if not (math.isfinite(at_b) and math.isfinite(at_c)):
        beyond = [side for side, at in (("baseline", at_b), ("candidate", at_c)) if not math.isfinite(at)]
        whose = f"the {beyond[0]}'s prediction there is" if len(beyond) == 1 else "both predictions there are"
        return Prediction(ratio=None, bound=None, upper=None, p_value=1.0, basis=basis,
                          note=f"no ratio at the target: {whose} beyond the range of floating-point numbers (choose "
                               "a smaller target)")
    if not (at_b > 0 and at_c > 0):
        return Prediction(ratio=None, bound=None, upper=None, p_value=1.0, basis=basis)
    ratio = at_c / at_b
    estimate = math.log(ratio) if 0 < ratio < math.inf else math.log(at_c) - math.log(at_b)  # no overflow
    with np.errstate(all="ignore"):
        logs = np.log(resampled_c) - np.log(resampled_b)
    logs = logs[np.isfinite(logs)]
    if logs.size < max(2, resampled_b.size // 2):
        return Prediction(ratio=ratio if 0 < ratio < math.inf else ratio_of(estimate), bound=None, upper=None,
                          p_value=1.0, basis=basis)
    spread = tail_spreads(logs)
    rounds = _few_rounds(b, c)
    low, high = spread.below * rounds.factor, spread.above * rounds.factor
    if rounds.dof is not None and between > 0:
        counts = _round_counts(b, c)
        floor = math.sqrt(between * sum(1 / k for k in counts)) if len(counts) == 2 else 0.0
        low, high = max(low, floor), max(high, floor)
    # the quantile and tail of the normal law, or of Student's t with the rounds' degrees of freedom
    z = float(special.ndtri(confidence) if rounds.dof is None else special.stdtrit(rounds.dof, confidence))
    margin = math.log1p(threshold)
    if low > 0:
        statistic = -((estimate - margin) / low)  # the tail above: the distribution function at minus
        p_value = float(special.ndtr(statistic) if rounds.dof is None else special.stdtr(rounds.dof, statistic))
    else:
        p_value = 0.0 if estimate > margin else 1.0
    return Prediction(ratio=ratio_of(estimate), bound=ratio_of(estimate - z * low),
                      upper=ratio_of(estimate + z * high), p_value=p_value, basis=basis)


def tail_spreads(logs: np.ndarray) -> Spread:
    """The spread of the resampled log ratios below and above their median: their semi-deviations,
    sqrt(2 mean(min(0, x - median)^2)) and the same above (the standard deviation for a symmetric law).

    An extrapolation's resamples are skewed: the few that select a faster-growing class reach far above the rest.
    A one-sided bound below needs the spread below; a standard deviation would let that upper tail widen it, and
    hide a regression whose every resample is slower than the threshold. Unlike quantiles, the semi-deviations
    stay as wide as the standard deviation on the few distinct values a bootstrap of two or three rounds gives.
    """
    deviation = logs - float(np.median(logs))
    below, above = np.minimum(deviation, 0.0), np.maximum(deviation, 0.0)
    return Spread(below=float(np.sqrt(2 * np.mean(below**2))), above=float(np.sqrt(2 * np.mean(above**2))))


def _rejects(one: Resampled, common: int, searched: int) -> float:
    """p-value that one side's own choice describes its data better than the `common` hypothesis does.

    Test: the common hypothesis's extra weighted residual over the side's own choice, in units of the side's noise,
    against F(1, dof) (chi^2(1) without repetitions); the side's choice is the best of `searched` candidate terms,
    so the p-value is multiplied by `searched` (Bonferroni, as in `change_test`). A common hypothesis not
    eligible on this side (inf residual) is rejected.
    """
    from scalecheck.core import special

    own = int(one.chosen[0])
    if own == common:
        return 1.0
    with np.errstate(invalid="ignore"):
        gain = float((one.wrss[common, 0] - one.wrss[own, 0]) / one.noise[0])
    gain = 0.0 if math.isnan(gain) else max(gain, 0.0)
    dof = int(one.dof[0])
    p_value = float(special.fdtrc(1.0, dof, gain) if dof > 0 else special.chdtrc(1.0, gain))
    return min(1.0, p_value * searched)


def _round_counts(b: Side, c: Side) -> list[int]:
    """Rounds of each side that has them."""
    return [int(distinct(s.rounds[~np.isnan(s.rounds)]).size) for s in (b, c) if s.rounds is not None]


def _few_rounds(b: Side, c: Side) -> _RoundsCorrection:
    """The spread factor and degrees of freedom of a bound from a bootstrap of whole rounds.

    With few rounds a round bootstrap underestimates the spread (by (R - 1) / R in variance, and it sees only a
    few distinct combinations), and the normal quantile is too optimistic: the spread is scaled by
    sqrt(R / (R - 1)) of the side with fewer rounds and the quantile taken from Student's t with the rounds'
    degrees of freedom, sum(R - 1), as for a mean of R values. Factor 1 and the normal law without rounds.
    """
    counts = _round_counts(b, c)
    if not counts:
        return _RoundsCorrection(factor=1.0, dof=None)
    return _RoundsCorrection(factor=math.sqrt(max(k / (k - 1) for k in counts)), dof=sum(k - 1 for k in counts))


def ratio_rise(b: Side, c: Side) -> Rise:
    """How much the ratio candidate / baseline grows from the smallest to the largest scale both sides measured,
    and how many times larger that largest scale is (the product over the parameters).

    From the medians at the points both measured when they share at least two, else from the two models at the
    ends of the range they share. A rise of 1 is a constant factor (a slower machine); a growth change that a
    memory hierarchy could not fake keeps rising with the scale. Both None when a value is not positive.
    """
    rows = {tuple(p): i for i, p in enumerate(b.points.tolist())}
    shared = [(rows[tuple(p)], j) for j, p in enumerate(c.points.tolist()) if tuple(p) in rows]
    if len(shared) >= 2:
        size = log_sizes(c.points, [j for _, j in shared])
        (i_lo, j_lo), (i_hi, j_hi) = shared[int(np.argmin(size))], shared[int(np.argmax(size))]
        base = np.array(row_medians(b.values, [i_lo, i_hi]))
        cand = np.array(row_medians(c.values, [j_lo, j_hi]))
        span = float(np.exp(max(size) - min(size)))
    else:
        lo = np.maximum(b.points.min(axis=0), c.points.min(axis=0))
        hi = np.minimum(b.points.max(axis=0), c.points.max(axis=0))
        if np.any(hi <= lo) or np.any(lo <= 0):
            return Rise(factor=None, span=None)
        ends = np.vstack([lo, hi])
        base, cand = b.fitted.predict(ends), c.fitted.predict(ends)
        span = float(np.prod(hi / lo))
    if not (np.all(base > 0) and np.all(cand > 0)) or not span > 1:
        return Rise(factor=None, span=None)
    return Rise(factor=float((cand[1] / base[1]) / (cand[0] / base[0])), span=span)
