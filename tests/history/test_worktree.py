"""The baseline's temporary worktree of a same-job run, in real git repositories built by the `git_repo` fixture."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from scalecheck.errors import ConfigError, HistoryError
from scalecheck.history.worktree import Worktree, baseline_worktree

from .conftest import GitRepo

MakeRepo = Callable[..., GitRepo]


@pytest.fixture
def feature(git_repo: MakeRepo) -> GitRepo:
    """main: c1, c2 (src/a.py, docs/); branch feature from c1 with f1 checked out, so the merge-base is c1."""
    return git_repo([("commit", "c1", {"src/a.py": "x = 1\n", "docs/readme.txt": "one\n"}),
                     ("branch", "feature"), ("commit", "f1", {"src/a.py": "x = 3\n", "new/b.py": "y = 1\n"}),
                     ("checkout", "main"), ("commit", "c2", {"src/a.py": "x = 2\n"}),
                     ("checkout", "feature")])


def worktrees(repo: GitRepo) -> list[str]:
    """The worktree folders git knows of (the main one first)."""
    text = str(repo.repo.git.worktree("list", "--porcelain"))
    return [line.removeprefix("worktree ") for line in text.splitlines() if line.startswith("worktree ")]


def test_worktree_holds_the_merge_base_and_is_removed_afterwards(feature: GitRepo) -> None:
    (feature.path / "src" / "a.py").write_text("x = 4  # uncommitted\n")  # the candidate's, not the baseline's
    status = feature.status()

    with baseline_worktree(feature.path, "main") as tree:
        assert isinstance(tree, Worktree)
        assert tree.sha == feature.commits["c1"]  # the merge-base, not main's tip c2
        assert tree.head_sha == feature.commits["f1"]
        assert tree.label == f"commit {feature.commits['c1'][:7]} (merge-base of HEAD and main)"
        assert tree.repo_root == feature.path.resolve()
        assert tree.workdir == tree.root
        assert (tree.root / "src" / "a.py").read_text() == "x = 1\n"
        assert not (tree.root / "new").exists()
        assert len(worktrees(feature)) == 2
        root = tree.root

    assert not root.exists() and not root.parent.exists()
    assert worktrees(feature) == [str(feature.path.resolve())]
    assert feature.status() == status  # the caller's work tree and index are as they were
    assert feature.repo.head.commit.hexsha == feature.commits["f1"]


def test_worktree_is_removed_when_the_block_raises(feature: GitRepo) -> None:
    with pytest.raises(KeyboardInterrupt):
        with baseline_worktree(feature.path, "main") as tree:
            (tree.root / "src" / "a.py").write_text("changed by the measurement\n")
            (tree.root / "build").mkdir()
            raise KeyboardInterrupt
    assert not tree.root.exists()
    assert worktrees(feature) == [str(feature.path.resolve())]


def test_worktree_is_removed_even_when_the_command_deleted_it(feature: GitRepo) -> None:
    import shutil

    with baseline_worktree(feature.path, "main") as tree:
        shutil.rmtree(tree.root)
    assert worktrees(feature) == [str(feature.path.resolve())]


def test_workdir_is_the_same_subfolder_inside_the_worktree(feature: GitRepo) -> None:
    with baseline_worktree(feature.path / "docs", "main") as tree:
        assert tree.workdir == tree.root / "docs"
        assert (tree.workdir / "readme.txt").read_text() == "one\n"


def test_subfolder_missing_in_the_baseline(feature: GitRepo) -> None:
    with pytest.raises(HistoryError, match=r"the folder 'new' does not exist in the baseline, commit") as info:
        with baseline_worktree(feature.path / "new", "main"):
            pytest.fail("must not get here")
    assert "top folder" in (info.value.fix or "")
    assert worktrees(feature) == [str(feature.path.resolve())]


def test_head_an_ancestor_of_the_ref_is_an_a_a_run(feature: GitRepo) -> None:
    feature.repo.git.checkout("-q", "main")
    feature.repo.git.checkout("-q", "--detach", "HEAD~1")  # c1, an ancestor of main
    with baseline_worktree(feature.path, "main") as tree:
        assert tree.sha == tree.head_sha == feature.commits["c1"]
        assert "HEAD itself, so both sides are the same commit" in tree.label
    with baseline_worktree(feature.path, "HEAD") as tree:
        assert tree.sha == tree.head_sha


def test_default_is_the_pull_requests_base_branch(feature: GitRepo) -> None:
    with baseline_worktree(feature.path, None, env={"GITHUB_BASE_REF": "main"}) as tree:
        assert tree.sha == feature.commits["c1"]
        assert "merge-base of HEAD and main" in tree.label


def test_no_baseline_outside_a_pull_request(feature: GitRepo) -> None:
    with pytest.raises(ConfigError, match="no baseline given") as info:
        with baseline_worktree(feature.path, None, env={}):
            pass
    assert "--baseline origin/main" in (info.value.fix or "")


@pytest.mark.parametrize("ref, message", [("nosuch", "unknown git ref 'nosuch'"),
                                          ("--output=x", "refusing the git ref '--output=x'"),
                                          ("main\x1b[2J", "refusing the git ref")])
def test_bad_refs_are_refused_before_any_checkout(feature: GitRepo, ref: str, message: str) -> None:
    with pytest.raises(HistoryError, match=message):
        with baseline_worktree(feature.path, ref):
            pass
    assert worktrees(feature) == [str(feature.path.resolve())]


def test_not_a_git_repository(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="not inside a git repository") as info:
        with baseline_worktree(tmp_path, "main"):
            pass
    assert "--same-job" in (info.value.fix or "")


def test_unrelated_histories_have_no_merge_base(feature: GitRepo) -> None:
    feature.repo.git.checkout("-q", "--orphan", "other")
    feature.apply([("commit", "o1", {"other.txt": "o\n"})])
    with pytest.raises(HistoryError, match="have no common history") as info:
        with baseline_worktree(feature.path, "main"):
            pass
    assert "fetch-depth: 0" in (info.value.fix or "")


def test_shallow_clone_without_the_merge_base_says_fetch_everything(feature: GitRepo, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--no-single-branch", f"file://{feature.path}",
                    str(clone)], check=True)
    with pytest.raises(HistoryError, match="no merge-base of HEAD and origin/main in this shallow clone") as info:
        with baseline_worktree(clone, None, env={"GITHUB_BASE_REF": "main"}):  # origin/main, as in Actions
            pass
    assert "fetch-depth: 0" in (info.value.fix or "")


def test_a_folder_the_system_cannot_look_up_is_not_a_working_folder(tmp_path: Path) -> None:
    from scalecheck.history.worktree import _is_dir

    assert _is_dir(tmp_path) and not _is_dir(tmp_path / ("a" * 300))  # too long a name: ENAMETOOLONG, no crash
