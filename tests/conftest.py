"""Shared fixtures: a seeded generator and planted series with known PMNF truth; and the rule that tests that time
real calls (marked `wall_clock`) take turns: under `pytest -n N` they hold one lock file of the session while they
run, so that two timed tests never compete for the machine's cores."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: timed tests are not kept apart
    fcntl = None  # type: ignore[assignment]

from scalecheck.data.measurement import Series

SEED = 20240601
REQUIRE_TOOLS = "SCALECHECK_REQUIRE_TOOLS"  # set by .ci/run: a missing browser or node fails the tests needing it
WALL_CLOCK = "wall_clock"  # the marker of tests that time real calls (registered in pyproject.toml)
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(autouse=True)
def _timed_tests_take_turns(request: pytest.FixtureRequest,
                            tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A `wall_clock` test holds a lock shared by every pytest-xdist worker of the session while it runs, so that
    no two timed tests run at once (the other worker goes on with untimed tests)."""
    if request.node.get_closest_marker(WALL_CLOCK) is None or fcntl is None:
        yield
        return
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # each worker's base folder lies in the session's
    with open(shared / "wall_clock.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def missing_tool(message: str, *, module: bool = False) -> None:
    """A test's tool (browser, node, shellcheck, C compiler) is missing: skip it (the whole module when `module`),
    or fail where the tools are required, as in CI (SCALECHECK_REQUIRE_TOOLS=1)."""
    import os

    if os.environ.get(REQUIRE_TOOLS) == "1":
        pytest.fail(f"{message} ({REQUIRE_TOOLS}=1)", pytrace=False)
    pytest.skip(message, allow_module_level=module)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(SEED)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No SCALECHECK_* variable of the developer's shell and no GITHUB_* variable of a CI runner leaks into a test
    (in GitHub Actions, GITHUB_ACTIONS=true would turn on `check --github`). SCALECHECK_REQUIRE_TOOLS stays: it
    tells the tests that need chromium or node to fail rather than skip without them."""
    import os

    for name in list(os.environ):
        if (name.startswith("SCALECHECK_") and name != REQUIRE_TOOLS) or name.startswith("GITHUB_"):
            monkeypatch.delenv(name)


def planted_series(
    function: Callable[..., np.ndarray],
    points: Sequence[Sequence[float]] | np.ndarray,
    rng: np.random.Generator,
    *,
    noise: float = 0.02,
    repetitions: int = 5,
    parameters: tuple[str, ...] = ("p",),
    kernel: str = "k",
) -> Series:
    """Series of f(points) * (1 + U(-noise, noise)) with `repetitions` values per point."""
    pts = np.asarray(points, dtype=float).reshape(len(points), len(parameters))
    exact = np.asarray(function(*pts.T), dtype=float) * np.ones(pts.shape[0])
    values = exact[:, None] * (1 + rng.uniform(-noise, noise, (pts.shape[0], repetitions)))
    return Series(kernel, "time", parameters, pts, values)


def load_benchmark(name: str) -> ModuleType:
    """benchmarks/`name`.py, loaded from its file as module `name` (sys.path as before, once its own imports are
    done: a benchmark puts the project's folders first)."""
    saved = list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module
