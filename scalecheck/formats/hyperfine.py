"""hyperfine's JSON export (hyperfine --export-json FILE)."""

from __future__ import annotations

from pathlib import Path

from scalecheck.data.measurement import Run


def is_hyperfine(doc: object) -> bool:
    """Whether `doc`, a decoded JSON document, is a hyperfine file."""
    return False  # not yet written


def read_hyperfine_text(text: str, source: Path) -> Run:
    """Read `text`, the content of the hyperfine file `source`."""
    raise NotImplementedError
