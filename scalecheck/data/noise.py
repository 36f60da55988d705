"""Noise models of repeated timings as data: `FamilyFit` (one distribution fitted to one sample) and `NoiseModel`.

A sample S of repeated timings of one operation is read as t = min(S) + width * k + (less than one width): the
timings are binned into classes of `width` above the sample's minimum, and the class k follows a distribution
fitted to the sample (Kluge, Knuepfer and Nagel, *Statistical methods for automatic performance bottleneck
detection in MPI based programs*). t_max, the longest time the operation may take without overhead, is the upper
edge of the class holding the chosen distribution's `quantile`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

FAMILIES = ("poisson", "exponential")  # the paper's two models; "exponential" is discretized (scipy's planck)
EMPIRICAL = "empirical"  # every family rejected: the sample's own quantile stands in
WIDTH_SOURCES = ("resolution", "grid", "spread", "none")


@dataclass(frozen=True)
class FamilyFit:
    """One family fitted to the classes of one sample by maximum likelihood (refined by minimum chi^2 if asked).

    `parameter` is in class units: the Poisson mean, or the exponential's rate per class (scipy's planck
    `lambda_`, so that P(k) = (1 - exp(-lambda)) exp(-lambda k)). `chi2`, `dof` and `p_value` are the chi-square
    goodness-of-fit test after pooling adjacent classes to an expected count of at least 5; a sample too small for
    any degree of freedom is untested (NaN, 0, NaN). `log_likelihood` is taken at the maximum-likelihood parameter,
    before any refinement.
    """

    family: str
    parameter: float
    log_likelihood: float
    chi2: float
    dof: int
    p_value: float

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {self.family!r}")

    @property
    def tested(self) -> bool:
        return self.dof > 0 and math.isfinite(self.p_value)


@dataclass(frozen=True)
class NoiseModel:
    """The noise model of one sample and the t_max it gives.

    `width` is the class width used (in the sample's unit), `width_source` where it came from: "resolution" (the
    timer resolution given), "grid" (the step every value of the sample lies on, e.g. the timer's tick), "spread"
    (no resolution known and no grid: a sixteenth of the interquartile range) or "none" (all values equal).
    `chosen` is the accepted family with the lowest chi^2, or "empirical" when every tested family was rejected at
    level `alpha`; without a test (fewer than 15 values) the family with the higher likelihood.
    """

    n: int
    minimum: float
    width: float
    width_source: str
    step: float  # the grid every value lies on (a timer's tick), 0 when none
    quantile: float
    alpha: float
    fits: tuple[FamilyFit, ...]
    chosen: str
    t_max: float

    def __post_init__(self) -> None:
        if self.chosen not in FAMILIES + (EMPIRICAL,):
            raise ValueError(f"chosen must be one of {FAMILIES + (EMPIRICAL,)}, got {self.chosen!r}")
        if self.width_source not in WIDTH_SOURCES:
            raise ValueError(f"width_source must be one of {WIDTH_SOURCES}, got {self.width_source!r}")

    @property
    def t_err_max(self) -> float:
        """The largest error accepted: t_max - min(S)."""
        return self.t_max - self.minimum

    @property
    def fallback(self) -> bool:
        """True when every family was rejected and the empirical quantile was used."""
        return self.chosen == EMPIRICAL

    @property
    def tested(self) -> bool:
        """True when at least one family could be tested by chi-square."""
        return any(f.tested for f in self.fits)

    def fit(self, family: str) -> FamilyFit:
        """The fit of `family`."""
        for f in self.fits:
            if f.family == family:
                return f
        raise KeyError(family)

    @property
    def best(self) -> FamilyFit:
        """The chosen family's fit; for the empirical fallback, the family with the lowest chi^2 (rejected)."""
        if self.chosen != EMPIRICAL:
            return self.fit(self.chosen)
        return min(self.fits, key=lambda f: f.chi2 if math.isfinite(f.chi2) else math.inf)

    @property
    def p_value(self) -> float:
        """The chi-square p-value of `best` (NaN when untested)."""
        return self.best.p_value
