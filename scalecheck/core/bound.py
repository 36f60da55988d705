"""Does one kernel grow no faster than a stated bound? The decision behind `assert_no_worse_than` (pytest plugin).

Three outcomes, so that a caller can measure more instead of guessing:

- within: the bootstrap (repetitions resampled per point, model selection re-run on every resample among the
  chosen model's neighbourhood and the bound itself) selects a model growing at most as the bound in at least
  `confidence` of the resamples.
- exceeds: the fitted growth is above the bound, no model growing at most as the bound describes the data as well
  (the restricted test of `compare`: p <= 1 - confidence), the bootstrap agrees in at least `confidence` of the
  resamples, and the excess is visible in the measured range: the model's cost per unit of the bound (f / g)
  rises from its lowest value to the largest size by at least `needed`. For exact metrics (counts, allocated
  bytes) that is three quarters of one logarithmic factor over the range, (log2 b / log2 a)^0.75 for sizes a to
  b, so n log n against n fails. Times carry the memory hierarchy: a list outgrowing the caches makes a linear
  function 30-60% dearer per element over two or three decades of sizes, as much as a log factor, and a busy
  machine bends a short series. For times (`tolerance` 1/8, `floor` 2) a failure needs (b / a)^(1/8) and at
  least 2x: 2.4x over three decades, which such effects do not reach; a growth a polynomial step above the bound
  does (n^2 against n^1.5 over three decades: 32x), a single log factor often does not (inconclusive).
  With per-point machine factors M (`machine`: how much dearer per byte this machine is at each point than at the
  smallest, from a reference operation of linear cost timed beside the kernel), the rise of f / g from its lowest
  point to the largest is divided by the rise of M between the same points: the memory hierarchy of this machine
  does not count as growth. Each factor must be >= 1. The rise is read both
  from the model and from the measured per-point aggregates, and the smaller counts: a model bent at the top by a
  stray point (a busy machine) does not fail a bound that the measurements keep. Conversely a model within the
  bound does not make it "within" when the measurements themselves rise as much as a failure needs (the model
  does not describe them): that is inconclusive.
- A failure must also hold on each half of the rounds (series with rounds, 4 rounds or more; the first half and
  the second half in time): refitted on that half alone, the model still grows faster than the bound, the
  restricted test still rejects the bound and the rise still reaches `needed`. A burst of load slowing a stretch
  of rounds lands in one half, and the other half does not confirm it: the outcome is inconclusive (measure
  more), not a failure. Series without rounds skip this check; their bootstrap resamples repetitions.
- inconclusive: neither; more repetitions or a wider range of sizes would tell.

It is the same modeling (`fit_kernels`, segmentation included: a segmented kernel is judged on its last segment,
the behaviour at scale) and the same tests as the expectation check of `scalecheck check`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from scalecheck.core.bootstrap import capped, expectation_spec, hypotheses, neighbourhood
from scalecheck.core.compare import CompareOptions
from scalecheck.core.modeler import fit_kernels
from scalecheck.core.search import FitOptions
from scalecheck.core.segment import SegmentOptions
from scalecheck.core.side import Side, fit_side, prepare_side, restricted_test
from scalecheck.data.growth import exceeds
from scalecheck.data.measurement import AGGREGATES, Series, distinct, name_hash
from scalecheck.data.outcome import FittedModel, KernelModel
from scalecheck.data.spec import Exponents, ModelSpec

OUTCOMES = ("within", "exceeds", "inconclusive", "unmodeled")


@dataclass(frozen=True)
class BoundOptions:
    """Settings of the decision, with their defaults."""

    confidence: float = 0.95  # bootstrap share required either way; 1 - level of the restricted test
    resamples: int = 200
    seed: int = 0
    share: float = 0.75  # of one log factor over the measured range that the excess must reach (in log scale)
    tolerance: float = 0.0  # or an excess of (b / a)^tolerance for sizes a to b, whichever is more: 1/8 for times
    floor: float = 1.0  # and at least this rise: 2 for times

    def __post_init__(self) -> None:
        CompareOptions(confidence=self.confidence, resamples=self.resamples)  # checks both
        if not (self.share >= 0 and self.tolerance >= 0):
            raise ValueError(f"share and tolerance must be >= 0, got {self.share}, {self.tolerance}")


@dataclass(frozen=True)
class BoundCheck:
    """The outcome for one kernel against one bound, with the evidence a failure message shows."""

    outcome: str  # one of OUTCOMES
    model: KernelModel
    growth: Mapping[str, Exponents] | None  # lead order of the model judged (the last segment's)
    fitted: FittedModel | None  # that model
    within: float  # bootstrap share of resamples growing at most as the bound
    p_value: float  # restricted test: no model within the bound fits as well (1.0 when the growth is within)
    rise: float  # how much the model's cost per unit of the bound rises over the measured sizes (1.0: none)
    needed: float  # the rise a failure needs over these sizes
    above: bool = False  # the fitted growth is above the bound (whatever the evidence)
    note: str = ""
    machine: float = 1.0  # the machine factor at the largest point, by which the rise there was divided
    halves: bool | None = None  # the excess held on each half of the rounds (None: not checked)


def check_bound(series: Series, bound: Mapping[str, Exponents], options: FitOptions = FitOptions(),
                settings: BoundOptions = BoundOptions(),
                segmentation: SegmentOptions | None = SegmentOptions(),
                machine: np.ndarray | None = None) -> BoundCheck:
    """Decide whether `series` grows no faster than `bound` (exponents per parameter, `growth.parse_growth`).

    Parameters
    ----------
    machine : ndarray, shape (n,), optional
        Per point of `series.points`, the machine factor (>= 1) the cost per unit of the bound is divided by
        before its rise is read (module docstring); None: 1 everywhere.

    Cost: one `fit_kernels` call and one re-selection over about 10-20 hypotheses on `settings.resamples`
    resamples, a few tens of milliseconds; a failure with rounds adds two more fits (its halves).
    """
    if machine is not None:
        machine = np.asarray(machine, dtype=float)
        if machine.shape != (series.points.shape[0],) or not np.all(machine >= 1):
            raise ValueError(f"machine must hold one factor >= 1 per point, shape ({series.points.shape[0]},), "
                             f"got {machine.tolist()}")
    model = fit_kernels([series], options, segmentation)[0]
    if not model.ok:
        return BoundCheck("unmodeled", model, None, None, 0.0, 1.0, 1.0, 1.0, note=model.note)
    side = prepare_side(series, model, options)
    names = series.parameters
    growth = side.fitted.growth()
    far = np.max(side.points, axis=0) * 10  # hypotheses must stay defined a little beyond the measured range
    specs = neighbourhood(side.fitted.spec, options.building_blocks)
    specs.append(expectation_spec(bound, names))
    specs.append(capped(side.fitted.spec, bound, names))
    rng = np.random.default_rng([settings.seed, name_hash(series.kernel, series.metric)])
    boot = fit_side(side, hypotheses(specs, side.points, far), far, options, settings.resamples, rng).resampled
    within = float(np.mean([not exceeds(g, bound) for g in boot.growth(names)]))
    factors = _at(series, side.points, machine)
    rises, needed = _rise(side, bound, settings.share, settings.tolerance, factors, options)
    rise, observed = min(rises), rises[1]
    needed = max(needed, settings.floor)
    top = float(factors[int(np.argmax(np.prod(side.points, axis=1)))])
    if not exceeds(growth, bound):
        outcome = "within" if within >= settings.confidence else "inconclusive"
        note = ""
        if outcome == "within" and observed >= needed:
            outcome = "inconclusive"  # the model is within the bound, but the measurements themselves are not
            note = (f"the measured cost per unit of the bound rises {observed:.3g}x over the measured sizes, as much "
                    f"as a failure needs, while the model within the bound says it does not: the model does not "
                    f"describe the measurements")
        return BoundCheck(outcome, model, growth, side.fitted, within, 1.0, observed if note else rise, needed,
                          note=note, machine=top)
    p_value = restricted_test(side, list(boot.specs), bound, options)
    decided = p_value <= 1 - settings.confidence and 1 - within >= settings.confidence and rise >= needed
    halves = None
    note = ""
    if decided and series.round_count >= 4:
        halves = all(_confirms(half, bound, options, settings, segmentation, machine, list(boot.specs))
                     for half in _halves(series))
        if not halves:
            decided = False
            note = ("the excess does not hold on both halves of the rounds (a burst of load while measuring?): "
                    "measure more")
    return BoundCheck("exceeds" if decided else "inconclusive", model, growth, side.fitted, within, p_value, rise,
                      needed, above=True, note=note, machine=top, halves=halves)


def _at(series: Series, points: np.ndarray, machine: np.ndarray | None) -> np.ndarray:
    """The machine factors of `points` (a subset of the series' points), shape (len(points),)."""
    if machine is None:
        return np.ones(points.shape[0])
    rows = {tuple(p): i for i, p in enumerate(series.points.tolist())}
    return np.array([machine[rows[tuple(p)]] for p in points.tolist()], dtype=float)


def _halves(series: Series) -> list[tuple[Series, np.ndarray]]:
    """`series` restricted to the first and to the second half of its rounds (in the order of their numbers),
    each with the rows it keeps (values packed to the left, NaN-padded)."""
    assert series.rounds is not None
    ids = distinct(series.rounds[~np.isnan(series.rounds)])
    out = []
    for half in (ids[: ids.size // 2], ids[ids.size // 2:]):
        mask = np.isin(series.rounds, half) & ~np.isnan(series.values)
        rows = np.flatnonzero(mask.any(axis=1))
        width = int(mask.sum(axis=1).max())
        values = np.full((rows.size, width), np.nan)
        rounds = np.full((rows.size, width), np.nan)
        for k, row in enumerate(rows):
            kept = mask[row]
            values[k, : kept.sum()] = series.values[row][kept]
            rounds[k, : kept.sum()] = series.rounds[row][kept]
        out.append((Series(series.kernel, series.metric, series.parameters, series.points[rows], values, series.unit,
                           series.source, rounds), rows))
    return out


def _confirms(half: tuple[Series, np.ndarray], bound: Mapping[str, Exponents], options: FitOptions,
              settings: BoundOptions, segmentation: SegmentOptions | None, machine: np.ndarray | None,
              specs: list[ModelSpec]) -> bool:
    """Whether one half of the rounds alone shows the excess: a model above the bound, the restricted test
    rejecting the bound, and the rise reaching what a failure needs."""
    series, rows = half
    if series.points.shape[0] < 3:
        return False
    model = fit_kernels([series], options, segmentation)[0]
    if not model.ok:
        return False
    side = prepare_side(series, model, options)
    if not exceeds(side.fitted.growth(), bound):
        return False
    factors = _at(series, side.points, None if machine is None else machine[rows])
    rises, needed = _rise(side, bound, settings.share, settings.tolerance, factors, options)
    if min(rises) < max(needed, settings.floor):
        return False
    return restricted_test(side, specs, bound, options) <= 1 - settings.confidence


def _rise(side: Side, bound: Mapping[str, Exponents], share: float, tolerance: float, factors: np.ndarray,
          options: FitOptions) -> tuple[tuple[float, float], float]:
    """((of the model, of the measurements), needed): the cost over the bound (f / g) at the largest point against
    its lowest value over the points, divided by how much the machine factor rose between those two points, read
    from the model and from the measured per-point aggregates; `share` of one log factor across the points' sizes
    (the product of the parameters), or their ratio to the power `tolerance`, whichever is larger.

    The machine's rise is taken between the same two points, not point by point (f / (g M) at its lowest): a
    function whose cost steps up one size later than the reference's (its output outgrowing a cache, say) would
    otherwise show a dip of f / (g M) just before its own step, and the step would count against it."""
    points = side.points
    names = side.fitted.parameters
    g = np.ones(points.shape[0])
    for k, name in enumerate(names):
        i, j = bound.get(name, (0, 0))
        x = points[:, k]
        g = g * x ** float(i) * np.log2(np.maximum(x, 2.0)) ** float(j)
    observed = AGGREGATES.get(options.aggregate, np.nanmedian)(side.values, axis=1)
    size = np.prod(points, axis=1)
    top = int(np.argmax(size))
    rises = []
    for f in (side.fitted.predict(points), observed):
        with np.errstate(all="ignore"):
            h = f / g
        if np.all(np.isnan(h)):
            rises.append(math.inf)
            continue
        lowest = int(np.nanargmin(h))
        low = float(h[lowest])
        machine = float(factors[top] / factors[lowest])  # how much dearer the machine got over the same sizes
        rises.append(float(h[top] / low) / machine if low > 0 and math.isfinite(float(h[top])) else math.inf)
    logs = np.log2(np.maximum(size, 2.0))
    needed = max(float((np.max(logs) / np.min(logs)) ** share), float((np.max(size) / np.min(size)) ** tolerance))
    return (rises[0], rises[1]), needed
