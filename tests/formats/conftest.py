"""Helpers for the reader tests: where the input files are, small files written on the fly, series by key."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from scalecheck.data.measurement import Run, Series

INPUTS = Path(__file__).parent.parent / "inputs"
# the shared data next to the checkout holds the larger Extra-P files that are not copied into tests/inputs
SHARED_EXTRAP_DATA = Path(__file__).resolve().parents[3] / "shared" / "extrap-data"


@pytest.fixture
def inputs() -> Path:
    """tests/inputs, found from this file, never from the working directory."""
    return INPUTS


@pytest.fixture
def shared_extrap_data() -> Path:
    """../shared/extrap-data beside the checkout; the test is skipped where it does not exist."""
    if not SHARED_EXTRAP_DATA.is_dir():
        pytest.skip(f"{SHARED_EXTRAP_DATA} is not available")
    return SHARED_EXTRAP_DATA


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
