"""L2: the options of the model search, of segmentation detection and of the comparison: the sections of the
settings.

Plain records with their documented defaults, free of numpy: the option table (`scalecheck.config`) takes its
defaults from here, and `scalecheck --help` builds without loading the numerics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scalecheck.data.exponents import DEFAULT_BUILDING_BLOCKS, Exponents
from scalecheck.names import AGGREGATE_NAMES, NEGATIVE_EXPONENTS

if TYPE_CHECKING:
    from scalecheck.core.exceedance import ExceedanceOptions


@dataclass(frozen=True, kw_only=True)
class FitOptions:
    """Hyper-parameters of the search (kept apart from fitted state). Defaults follow Extra-P where it has one."""

    building_blocks: tuple[Exponents, ...] = DEFAULT_BUILDING_BLOCKS  # (i, j) of x^i * log2(x)^j
    max_terms: int = 2  # terms per parameter beyond the constant, when the points allow (see terms_allowed)
    allow_decreasing: bool = False  # accept falling terms (negative coefficients); else every term coefficient > 0
    negative_exponents: str = "auto"  # search x^-i * log2(x)^-j too: for falling kernels (auto), always, or never
    min_term_contribution: float = 0.01  # share of the model value a term always may reach; less if the noise allows
    aggregate: str = "mean"  # per-point statistic of the repetitions
    alpha: float = 0.01  # level of the constant test and of the per-term penalty
    noise_floor: float = 1e-4  # smallest relative noise assumed (timers and machines are never exact)
    candidates_per_parameter: int = 3  # multi-parameter search: best single-parameter terms kept per parameter
    min_distinct_values: int = 3  # fewer distinct values of a parameter is "insufficient data"
    refine: bool = False  # search-space refinement (Reisert et al.) for single-parameter kernels
    bonferroni: bool = True  # a further term pays the penalty at alpha / len(building_blocks), a refined exponent too

    def __post_init__(self) -> None:
        if self.aggregate not in AGGREGATE_NAMES:
            raise ValueError(f"aggregate must be one of {AGGREGATE_NAMES}, got {self.aggregate!r}")
        if self.negative_exponents not in NEGATIVE_EXPONENTS:
            raise ValueError(f"negative_exponents must be one of {NEGATIVE_EXPONENTS}, got {self.negative_exponents!r}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha}")
        if self.max_terms < 1:
            raise ValueError(f"max_terms must be at least 1, got {self.max_terms}")


@dataclass(frozen=True, kw_only=True)
class SegmentOptions:
    """Thresholds of segmentation detection; the defaults are the paper's."""

    window: int = 5  # consecutive points per window
    theta: float = 0.5  # a window nRSS above this marks the series segmented
    low: float = 0.1  # a window nRSS above this tags the window heterogeneous (lower end of the ratio band)
    ratio: float = 4.0  # relative nRSS above this marks the series segmented, when e[k+1] is in [low, theta]
    eta: float = 1e-12  # keeps the relative nRSS finite after a perfect fit
    min_points: int = 6  # fewest distinct values searched for a change point (also to recurse into a segment)
    min_segment_points: int = 5  # a segment with fewer points is fitted but marked insufficient
    confirm: bool = True  # keep a detection only if the segments fit significantly better than one model

    def __post_init__(self) -> None:
        if self.window < 3:
            raise ValueError(f"window must be at least 3, got {self.window}")
        if not 0 < self.low <= self.theta:
            raise ValueError(f"need 0 < low <= theta, got low={self.low}, theta={self.theta}")
        if self.ratio <= 1 or self.eta <= 0:
            raise ValueError(f"need ratio > 1 and eta > 0, got ratio={self.ratio}, eta={self.eta}")
        if self.min_points < self.window + 1:
            raise ValueError(f"min_points must exceed the window ({self.window}), got {self.min_points}")


@dataclass(frozen=True, kw_only=True)
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
        self.exceedance  # checks both

    @property
    def exceedance(self) -> ExceedanceOptions:
        """The settings of the overhead (exceedance) test."""
        from scalecheck.core.exceedance import ExceedanceOptions  # numpy: only when a comparison runs

        return ExceedanceOptions(quantile=self.quantile, permutations=self.permutations)
