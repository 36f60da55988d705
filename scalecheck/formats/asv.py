"""asv's results files (.asv/results/MACHINE/COMMIT-ENV.json)."""

from __future__ import annotations

from pathlib import Path

from scalecheck.data.measurement import Run


def is_asv(doc: object) -> bool:
    """Whether `doc`, a decoded JSON document, is a asv file."""
    return False  # not yet written


def read_asv_text(text: str, source: Path) -> Run:
    """Read `text`, the content of the asv file `source`."""
    raise NotImplementedError
