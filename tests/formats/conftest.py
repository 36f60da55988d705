"""Helpers for the reader tests: where the input files are, small files written on the fly, series by key."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from scalecheck.data.measurement import Run, Series

INPUTS = Path(__file__).parent.parent / "inputs"


@pytest.fixture
def inputs() -> Path:
    """tests/inputs, found from this file, never from the working directory."""
    return INPUTS


@pytest.fixture
def real_extrap_data() -> Path:
    """tests/inputs/extrap: real files from Extra-P's test data (see its README)."""
    return INPUTS / "extrap"


@pytest.fixture
def series_of() -> Callable[[Run], dict[tuple[str, str], Series]]:
    """A function mapping a run to its series by (kernel, metric)."""

    def table(run: Run) -> dict[tuple[str, str], Series]:
        return {(s.kernel, s.metric): s for s in run.series}

    return table


@pytest.fixture
def make_file(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a dedented UTF-8 text file under tmp_path and return its path (coverage.py's make_file)."""

    def make(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return make
