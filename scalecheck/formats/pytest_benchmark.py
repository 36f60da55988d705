"""pytest-benchmark's JSON (pytest --benchmark-json FILE, or --benchmark-save)."""

from __future__ import annotations

from pathlib import Path

from scalecheck.data.measurement import Run


def is_pytest_benchmark(doc: object) -> bool:
    """Whether `doc`, a decoded JSON document, is a pytest-benchmark file."""
    return False  # not yet written


def read_pytest_benchmark_text(text: str, source: Path) -> Run:
    """Read `text`, the content of the pytest-benchmark file `source`."""
    raise NotImplementedError
