"""Score-P CUBE profiles (.cubex), through the optional pycubexr: one profile, or the folder-per-run layout."""

from __future__ import annotations

from pathlib import Path

from scalecheck.data.measurement import Run


def is_cube_directory(path: Path) -> bool:
    """Whether the folder `path` holds Score-P profiles in the folder-per-run layout."""
    return False  # not yet written


def read_cube_bytes(raw: bytes, source: Path) -> Run:
    """Read `raw`, the bytes of the CUBE profile `source`."""
    raise NotImplementedError


def read_cube_directory(path: Path) -> Run:
    """Read the folder `path` of Score-P profiles, one run per sub-folder."""
    raise NotImplementedError
