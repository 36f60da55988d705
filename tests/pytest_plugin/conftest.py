"""The plugin tests' marker for tests that time real calls."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "wall_clock: times real calls on the wall clock (slower; a heavily loaded "
                                       "machine stretches it); deselect with -m 'not wall_clock'")
