"""One path matcher: a `measurements` pattern selects the same files from the working tree (the candidate) and from
a commit's tree (the baseline read from the committed-files store)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from scalecheck.formats.paths import select_files
from scalecheck.history.store import Store

from .conftest import GitRepo
from .test_store import native

LAYOUT = ("bench/a.json", "bench/x/b.json", "bench/x/y/c.json", ".hidden/d.json", "top.json")


@pytest.fixture
def layout(git_repo: Callable[..., GitRepo]) -> GitRepo:
    """LAYOUT in the working tree and committed; each file's one kernel is named by the file's path."""
    return git_repo([("commit", "c1", {name: native(name) for name in LAYOUT})])


@pytest.mark.parametrize("patterns, expected", [
    (["bench/*.json"], ["bench/a.json"]),
    (["bench/**/*.json"], ["bench/a.json", "bench/x/b.json", "bench/x/y/c.json"]),
    (["**/*.json"], ["bench/a.json", "bench/x/b.json", "bench/x/y/c.json", "top.json"]),  # no hidden folder
    (["bench/x/*.json"], ["bench/x/b.json"]),
    (["*/*/*.json"], ["bench/x/b.json"]),
    ([".hidden/*.json", "*.json"], [".hidden/d.json", "top.json"]),
    (["./bench/{a,x/y/c}.json"], ["bench/a.json", "bench/x/y/c.json"]),
])
def test_a_pattern_selects_the_same_files_in_the_working_tree_and_in_history(
        layout: GitRepo, patterns: list[str], expected: list[str]) -> None:
    in_tree = [path.relative_to(layout.path).as_posix() for path in select_files(layout.path, patterns)]
    store = Store(layout.path, measurements=patterns, kind="repo")
    try:
        run = store.read("HEAD")
    finally:
        store.close()
    assert run is not None
    in_history = sorted(s.kernel for s in run.series)
    assert in_tree == sorted(expected)
    assert in_history == sorted(expected)
