"""Fit outcomes as data: `Scores`, `FittedModel` (a spec with coefficients), `KernelModel` (one per kernel and metric)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from scalecheck.data.spec import Exponents, ModelSpec, format_growth


@dataclass(frozen=True)
class Scores:
    """How well a model describes the per-point aggregates it was fitted to."""

    smape: float  # symmetric mean absolute percentage error, in-sample, percent
    cv_smape: float  # the same for leave-one-out predictions, percent
    rss: float  # residual sum of squares, in the metric's unit squared
    ar2: float  # adjusted coefficient of determination (1.0 for a perfect fit; NaN when undefined)
    n_points: int


@dataclass(frozen=True, eq=False)
class FittedModel:
    """A `ModelSpec` with its least-squares coefficients: constant first, then one per term."""

    spec: ModelSpec
    parameters: tuple[str, ...]
    coefficients: np.ndarray  # shape (1 + n_terms,)
    scores: Scores

    def __post_init__(self) -> None:
        coef = np.array(self.coefficients, dtype=float)
        coef.setflags(write=False)
        object.__setattr__(self, "coefficients", coef)
        if coef.shape != (1 + self.spec.n_terms,):
            raise ValueError(f"coefficients must have shape ({1 + self.spec.n_terms},), got {coef.shape}")

    @property
    def constant(self) -> float:
        return float(self.coefficients[0])

    def predict(self, points: np.ndarray | Mapping[str, float]) -> np.ndarray:
        """Model values at `points`: an array of shape (n, m) in `parameters` order, or one point as a mapping.
        A value beyond the range of floats is inf or NaN (without a warning): the callers check."""
        if isinstance(points, Mapping):
            points = np.array([[float(points[name]) for name in self.parameters]])
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(self.spec.basis(np.asarray(points, dtype=float)) @ self.coefficients)

    def growth(self) -> dict[str, Exponents]:
        """Lead-order (i, j) per parameter, e.g. {'p': (Fraction(3, 2), 1)}."""
        return {name: self.spec.lead_order(k) for k, name in enumerate(self.parameters)}

    def growth_text(self) -> str:
        return format_growth(self.growth())

    def formula(self, digits: int = 4) -> str:
        """The model as text, e.g. `2.1 + 0.003 * p^(3/2) * log2(p)`."""
        text = _number(self.constant, digits)
        for coef, term in zip(self.coefficients[1:], self.spec.terms):
            sign = "-" if coef < 0 else "+"
            text += f" {sign} {_number(abs(coef), digits)} * {term.format(self.parameters)}"
        return text

    def to_dict(self) -> dict[str, object]:
        """The JSON shape of `scalecheck model --json`: constant and terms with their factors."""
        return {
            "formula": self.formula(),
            "constant": self.constant,
            "terms": [
                {
                    "coefficient": float(coef),
                    "factors": [
                        {"parameter": self.parameters[f.param], "exponent": _exponent_value(f.exponent),
                         "log_exponent": _exponent_value(Fraction(f.log_exponent))}
                        for f in term.factors
                    ],
                }
                for coef, term in zip(self.coefficients[1:], self.spec.terms)
            ],
        }


def _number(value: float, digits: int) -> str:
    return f"{value:.{digits}g}"


def _exponent_value(value: Fraction) -> int | float:
    return int(value) if value.denominator == 1 else float(value)


@dataclass(frozen=True)
class ChangePoint:
    """Where a kernel's trend changes: between two measured values of a parameter, or at one shared value."""

    parameter: str
    low: float  # last value of the segment before
    high: float  # first value of the segment after (equal to `low` for a point both segments share)

    @property
    def shared(self) -> bool:
        return self.low == self.high

    def text(self) -> str:
        """`p=6`, or `between p=5 and p=6`."""
        if self.shared:
            return f"{self.parameter}={self.low:g}"
        return f"between {self.parameter}={self.low:g} and {self.parameter}={self.high:g}"


@dataclass(frozen=True)
class Segment:
    """One piece of a segmented kernel: the model of the measured values `start` .. `end` of the parameter.

    status is "ok", or "insufficient" when the segment has fewer points than a reliable model needs (`note` says
    where to measure more); `change_point` is the change that begins it (None for the first segment).
    """

    start: float
    end: float
    model: FittedModel
    n_points: int
    status: str = "ok"
    change_point: ChangePoint | None = None
    note: str = ""


@dataclass(frozen=True)
class KernelModel:
    """The modeling outcome for one (kernel, metric): a model, or why there is none.

    status is "ok", "insufficient" (too few distinct parameter values), "inseparable" (parameters that only
    grow together) or "out of range" (values beyond the magnitudes a fit handles, or a fit that overflowed);
    `note` explains anything the user should know (a decreasing trend modeled as constant, ...).
    A segmented kernel has two or more `segments`; its `model` is the last segment's, the behaviour at scale, so
    predictions and growth describe what happens beyond the measured range.
    """

    kernel: str
    metric: str
    unit: str
    status: str
    model: FittedModel | None
    n_points: int
    noise: float  # relative standard deviation of one repetition (pooled over points); NaN without repetitions
    note: str = ""
    segments: tuple[Segment, ...] = ()

    @property
    def ok(self) -> bool:
        return self.model is not None

    @property
    def segmented(self) -> bool:
        return len(self.segments) > 1

    @property
    def change_points(self) -> tuple[ChangePoint, ...]:
        return tuple(s.change_point for s in self.segments if s.change_point is not None)


@dataclass(frozen=True)
class ModelTable:
    """The models of every selected (kernel, metric), with the target scale they are ranked at."""

    parameters: tuple[str, ...]
    models: tuple[KernelModel, ...]
    target: Mapping[str, float] | None = None
    notes: tuple[str, ...] = ()  # about the whole input, e.g. parameters left out because they never vary

    def prediction(self, km: KernelModel) -> float | None:
        """The model's value at the target scale (None without a target or a model, or when the value is beyond
        the range of floats: `beyond_target` says so)."""
        value = self._at_target(km)
        return value if value is not None and math.isfinite(value) else None

    def beyond_target(self, km: KernelModel) -> bool:
        """The model's value at the target is beyond the range of floats (p^3 at p = 1e200)."""
        value = self._at_target(km)
        return value is not None and not math.isfinite(value)

    def _at_target(self, km: KernelModel) -> float | None:
        if self.target is None or km.model is None:
            return None
        return float(km.model.predict(self.target)[0])

    def ranked(self) -> list[KernelModel]:
        """Models first, most expensive at the target (or fastest-growing without one; a value beyond the range of
        floats first, one that is undefined last); then kernels without one."""
        def key(km: KernelModel) -> tuple[object, ...]:
            if km.model is None:
                return (1, (), 0.0, km.kernel, km.metric)
            growth = sorted(km.model.growth().values(), reverse=True)
            value = self._at_target(km)
            if value is None:
                # floats order these small fractions exactly, at a tenth of Fraction's comparison cost
                return (0, tuple((-float(i), -float(j)) for i, j in growth), -km.model.constant, km.kernel,
                        km.metric)
            return (0, (), math.inf if math.isnan(value) else -value, km.kernel, km.metric)

        return sorted(self.models, key=key)
