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
- inconclusive: neither; more repetitions or a wider range of sizes would tell.

It is the same modeling (`fit_kernels`, segmentation included: a segmented kernel is judged on its last segment,
the behaviour at scale) and the same tests as the expectation check of `scalecheck check`.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from scalecheck.core.bootstrap import capped, expectation_spec, hypotheses, neighbourhood
from scalecheck.core.compare import CompareOptions, _bootstrap, _restricted_test, _side, _Side
from scalecheck.core.modeler import fit_kernels
from scalecheck.core.search import FitOptions
from scalecheck.core.segment import SegmentOptions
from scalecheck.data.growth import exceeds
from scalecheck.data.measurement import Series
from scalecheck.data.outcome import FittedModel, KernelModel
from scalecheck.data.spec import Exponents

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


def check_bound(series: Series, bound: Mapping[str, Exponents], options: FitOptions = FitOptions(),
                settings: BoundOptions = BoundOptions(),
                segmentation: SegmentOptions | None = SegmentOptions()) -> BoundCheck:
    """Decide whether `series` grows no faster than `bound` (exponents per parameter, `growth.parse_growth`).

    Cost: one `fit_kernels` call and one re-selection over about 10-20 hypotheses on `settings.resamples`
    resamples, a few tens of milliseconds.
    """
    model = fit_kernels([series], options, segmentation)[0]
    if not model.ok:
        return BoundCheck("unmodeled", model, None, None, 0.0, 1.0, 1.0, 1.0, note=model.note)
    side = _side(series, model, options)
    names = series.parameters
    growth = side.fitted.growth()
    far = np.max(side.points, axis=0) * 10  # hypotheses must stay defined a little beyond the measured range
    specs = neighbourhood(side.fitted.spec, options.building_blocks)
    specs.append(expectation_spec(bound, names))
    specs.append(capped(side.fitted.spec, bound, names))
    rng = np.random.default_rng([settings.seed, zlib.crc32("\0".join((series.kernel, series.metric)).encode())])
    compare_settings = CompareOptions(confidence=settings.confidence, resamples=settings.resamples, seed=settings.seed)
    _, boot = _bootstrap(side, hypotheses(specs, side.points, far), far, options, compare_settings, rng)
    within = float(np.mean([not exceeds(g, bound) for g in boot.growth(names)]))
    rise, needed = _rise(side.fitted, side.points, bound, settings.share, settings.tolerance)
    needed = max(needed, settings.floor)
    if not exceeds(growth, bound):
        outcome = "within" if within >= settings.confidence else "inconclusive"
        return BoundCheck(outcome, model, growth, side.fitted, within, 1.0, rise, needed)
    p_value = _restricted_test(side, list(boot.specs), bound, options)
    decided = p_value <= 1 - settings.confidence and 1 - within >= settings.confidence and rise >= needed
    return BoundCheck("exceeds" if decided else "inconclusive", model, growth, side.fitted, within, p_value, rise,
                      needed, above=True)


def _rise(fitted: FittedModel, points: np.ndarray, bound: Mapping[str, Exponents], share: float,
          tolerance: float) -> tuple[float, float]:
    """(rise, needed): the model over the bound (f / g) at the largest point against its lowest value over the
    points; `share` of one log factor across the points' sizes (the product of the parameters), or their ratio to
    the power `tolerance`, whichever is larger."""
    names = fitted.parameters
    g = np.ones(points.shape[0])
    for k, name in enumerate(names):
        i, j = bound.get(name, (0, 0))
        x = points[:, k]
        g = g * x ** float(i) * np.log2(np.maximum(x, 2.0)) ** float(j)
    with np.errstate(all="ignore"):
        h = fitted.predict(points) / g
    size = np.prod(points, axis=1)
    top = int(np.argmax(size))
    low = float(np.min(h))
    rise = float(h[top] / low) if low > 0 and math.isfinite(float(h[top])) else math.inf
    logs = np.log2(np.maximum(size, 2.0))
    needed = max(float((np.max(logs) / np.min(logs)) ** share), float((np.max(size) / np.min(size)) ** tolerance))
    return rise, needed


