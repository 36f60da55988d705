"""Google Benchmark's JSON (--benchmark_format=json, or --benchmark_out=FILE)."""

from __future__ import annotations

from pathlib import Path

from scalecheck.data.measurement import Run


def is_google_benchmark(doc: object) -> bool:
    """Whether `doc`, a decoded JSON document, is a google-benchmark file."""
    return False  # not yet written


def read_google_benchmark_text(text: str, source: Path) -> Run:
    """Read `text`, the content of the google-benchmark file `source`."""
    raise NotImplementedError
