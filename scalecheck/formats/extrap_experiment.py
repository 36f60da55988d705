"""Extra-P experiment files (.extra-p): the ZIP archive that Extra-P saves."""

from __future__ import annotations

from pathlib import Path

from scalecheck.data.measurement import Run


def read_extrap_experiment_bytes(raw: bytes, source: Path) -> Run:
    """Read `raw`, the bytes of the Extra-P experiment `source`."""
    raise NotImplementedError
