"""The one path matcher: which files the `measurements` patterns select in a folder and among paths listed from git."""

from __future__ import annotations

from pathlib import Path

import pytest

from scalecheck.formats.paths import escape, is_pattern, matches, search_start, select_files, select_paths

FILES = ("bench/a.json", "bench/x/b.json", "bench/x/y/c.json", "bench/B.JSON", "bench/notes.txt",
         ".hidden/d.json", "bench/.e.json", "top.json")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A folder holding FILES, and an empty folder whose name ends in .json."""
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}\n", encoding="utf-8")
    (tmp_path / "bench" / "folder.json").mkdir()
    return tmp_path


@pytest.mark.parametrize("patterns, expected", [
    (["bench/*.json"], ["bench/a.json"]),  # '*' never crosses '/'; hidden names and folders are left out
    (["bench/*/*.json"], ["bench/x/b.json"]),
    (["bench/**/*.json"], ["bench/a.json", "bench/x/b.json", "bench/x/y/c.json"]),  # '**': any folders, none too
    (["**/*.json"], ["bench/a.json", "bench/x/b.json", "bench/x/y/c.json", "top.json"]),
    (["**/c.json"], ["bench/x/y/c.json"]),
    (["bench/{a,x/b}.json"], ["bench/a.json", "bench/x/b.json"]),  # braces expand as in bash
    (["bench/?.json"], ["bench/a.json"]),
    (["bench/[ab].json"], ["bench/a.json"]),
    (["bench/*.JSON"], ["bench/B.JSON"]),  # case-sensitive everywhere, as git is
    ([".hidden/*.json", "bench/.*.json"], [".hidden/d.json", "bench/.e.json"]),  # hidden: named explicitly
    (["./bench/a.json", "/top.json"], ["bench/a.json", "top.json"]),  # './' and '/' anchor at the root
    (["bench/a.json", "bench/*.json"], ["bench/a.json"]),  # once, however many patterns match
    (["bench/x"], []),  # folders are never selected
    (["nowhere/*.json"], []),
    ([], []),
])
def test_select_files_and_select_paths_agree(tree: Path, patterns: list[str], expected: list[str]) -> None:
    assert select_files(tree, patterns) == [tree / name for name in expected]
    assert select_paths(FILES, patterns) == expected  # git lists files only
    assert [name for name in FILES if matches(name, patterns)] == [n for n in FILES if n in expected]


def test_select_files_does_not_follow_symbolic_links_to_folders_with_globstar(tree: Path) -> None:
    (tree / "link").symlink_to(tree / "bench" / "x", target_is_directory=True)
    assert tree / "link" / "b.json" not in select_files(tree, ["**/*.json"])
    assert select_files(tree, ["link/*.json"]) == [tree / "link" / "b.json"]  # named, the link is followed


@pytest.mark.parametrize("pattern, start", [
    ("bench/*.json", ("bench", 1)),
    ("bench/x/*/*.json", ("bench/x", 2)),
    ("bench/**/*.json", ("bench", None)),
    ("**/*.json", ("", None)),
    ("*.json", ("", 1)),
    ("./bench/{a,x/b}.json", ("bench", None)),  # a brace may hold '/': any depth
    ("bench/a.json", ("bench", 1)),
])
def test_search_start_is_the_folder_before_the_first_wildcard(pattern: str, start: tuple[str, int | None]) -> None:
    assert search_start(pattern) == start


def test_escape_makes_a_file_name_with_wildcards_literal() -> None:
    name = "bench/run[1]{a,b}*.json"
    assert is_pattern(name) and not matches("bench/run1a.json", [escape(name)])
    assert matches(name, [escape(name)])
    assert not is_pattern("bench/results.json")
