"""Necessary time versus overhead as data: calibration samples, event traces, t_max profiles and the ranking.

A *calibration* holds samples of repeated timings of each operation (an MPI call, say) at process counts p and
message sizes b; their noise models give a *profile* T_f(p, b) -> t_max per operation. A *trace* holds events
(source location, operation, p, bytes, time); the overhead of an event is max(0, t - T_f(p, b)), summed per
location and operation in an `OverheadTable` (Kluge, Knuepfer and Nagel, Table 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scalecheck.data.noise import NoiseModel
from scalecheck.errors import Location

INTERPOLATIONS = ("linear", "log")  # bilinear in (p, b, t), or in (log p, log(1 + b), log t)


def _frozen(value: object) -> np.ndarray:
    arr = np.array(value, dtype=float)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class CalibrationSample:
    """Repeated timings of one operation at p processes and b bytes, in seconds."""

    operation: str
    processes: int
    size: int  # bytes
    times: np.ndarray  # (N,) seconds
    resolution: float | None = None  # timer resolution in seconds (None: unknown)
    source: Location | None = None  # where its first timing was read

    def __post_init__(self) -> None:
        object.__setattr__(self, "times", _frozen(self.times))
        if self.times.ndim != 1:
            raise ValueError(f"times must have shape (N,), got {self.times.shape}")

    @property
    def label(self) -> str:
        return f"{self.operation} p={self.processes} bytes={self.size}"


@dataclass(frozen=True)
class Calibration:
    """Every sample of a calibration file."""

    samples: tuple[CalibrationSample, ...]
    source: Path | None = None

    @property
    def operations(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.operation for s in self.samples))


@dataclass(frozen=True, eq=False)
class EventTrace:
    """E events: where each happened, which operation, at which scale, and how long it took (seconds).

    Names are stored once (`locations`, `operations`) and referenced by index, so a trace of millions of events is
    a handful of arrays.
    """

    locations: tuple[str, ...]
    operations: tuple[str, ...]
    location: np.ndarray  # (E,) index into locations
    operation: np.ndarray  # (E,) index into operations
    processes: np.ndarray  # (E,)
    size: np.ndarray  # (E,) bytes
    time: np.ndarray  # (E,) seconds
    line: np.ndarray  # (E,) 1-based line of each event in `source` (0: unknown)
    source: Path | None = None

    def __post_init__(self) -> None:
        for name in ("processes", "size", "time"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        for name in ("location", "operation", "line"):
            arr = np.array(getattr(self, name), dtype=np.int64)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        sizes = {getattr(self, name).shape for name in ("location", "operation", "processes", "size", "time", "line")}
        if len(sizes) != 1 or next(iter(sizes)) != (self.time.size,):
            raise ValueError(f"every event array must have shape (E,), got {sorted(sizes)}")

    def __len__(self) -> int:
        return int(self.time.size)


@dataclass(frozen=True, eq=False)
class Profile:
    """T_f(p, b) of one operation: t_max on a complete grid of process counts and message sizes."""

    operation: str
    processes: np.ndarray  # (P,) ascending
    sizes: np.ndarray  # (S,) ascending, bytes
    t_max: np.ndarray  # (P, S) seconds
    models: tuple[NoiseModel, ...]  # P * S noise models, processes-major (models[i * S + j] is at p_i, b_j)

    def __post_init__(self) -> None:
        for name in ("processes", "sizes", "t_max"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        if self.t_max.shape != (self.processes.size, self.sizes.size):
            raise ValueError(f"t_max must have shape ({self.processes.size}, {self.sizes.size}), "
                             f"got {self.t_max.shape}")
        if len(self.models) != self.t_max.size:
            raise ValueError(f"need {self.t_max.size} noise models, got {len(self.models)}")

    def model(self, processes: float, size: float) -> NoiseModel:
        """The noise model at a grid point."""
        i = int(np.flatnonzero(self.processes == processes)[0])
        j = int(np.flatnonzero(self.sizes == size)[0])
        return self.models[i * self.sizes.size + j]


@dataclass(frozen=True)
class OverheadRow:
    """Events of one (location, operation), or totals ("" for all locations or all operations)."""

    location: str
    operation: str
    events: int
    time: float  # seconds, all events
    overhead: float  # seconds above t_max
    clamped: int  # events outside the calibration grid, evaluated at its edge
    by_processes: tuple[tuple[float, float], ...]  # (p, overhead seconds), ascending p

    @property
    def share(self) -> float:
        """Overhead as a share of the time (0 when there is no time)."""
        return self.overhead / self.time if self.time > 0 else 0.0


@dataclass(frozen=True, eq=False)
class OverheadTable:
    """The overhead ranking: rows per (location, operation), per location and per operation, most overhead first.

    `event_t_max`, `event_overhead` and `clamped` hold the per-event values (E,), in trace order.
    """

    rows: tuple[OverheadRow, ...]
    locations: tuple[OverheadRow, ...]
    operations: tuple[OverheadRow, ...]
    total: OverheadRow
    profiles: tuple[Profile, ...]
    interpolation: str
    quantile: float
    event_t_max: np.ndarray
    event_overhead: np.ndarray
    clamped: np.ndarray  # (E,) bool

    def __post_init__(self) -> None:
        if self.interpolation not in INTERPOLATIONS:
            raise ValueError(f"interpolation must be one of {INTERPOLATIONS}, got {self.interpolation!r}")
