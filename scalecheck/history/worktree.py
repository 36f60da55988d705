"""L4: the baseline commit of a same-job run, checked out in a temporary git worktree (see `scalecheck.samejob`).

`baseline_worktree(cwd, ref)` finds the repository around `cwd`, takes the merge-base of HEAD and `ref` (HEAD
itself when HEAD is an ancestor of `ref` or equal to it: both sides then run the same code, an A/A run), checks it
out with ``git worktree add --detach`` in a fresh temporary folder, and removes the worktree again (``git worktree
remove --force``, then ``git worktree prune``) when the ``with`` block ends, also on an error or Ctrl-C. The
caller's work tree, index and HEAD are never touched.

Refs come from untrusted pull requests: they are checked by `Store.resolve` (no leading ``-``, no control
characters) and every git call passes an argument list, never a shell.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import git
from git.exc import GitCommandError

from scalecheck.errors import ConfigError, HistoryError, Location
from scalecheck.history.store import _FETCH_FIX, Store


@dataclass(frozen=True)
class Worktree:
    """A temporary worktree holding the baseline commit, and what a same-job run needs to know about both sides."""

    root: Path  # top folder of the temporary worktree (the baseline's tree)
    workdir: Path  # the caller's working folder, the same path relative to the top, inside the worktree
    sha: str  # full sha of the baseline commit checked out in it
    head_sha: str  # full sha of HEAD in the caller's repository (the candidate's commit)
    label: str  # "commit 1a2b3c4 (merge-base of HEAD and origin/main)"
    repo_root: Path  # top folder of the caller's work tree (the candidate's tree)


@contextmanager
def baseline_worktree(cwd: Path, ref: str | None, *, env: Mapping[str, str] | None = None) -> Iterator[Worktree]:
    """The merge-base of HEAD and `ref` checked out in a temporary worktree, removed when the block ends.

    `ref` None means the pull request's base branch in GitHub Actions (GITHUB_BASE_REF in `env`, as
    ``origin/<name>`` when that remote ref exists); outside a pull request that is a `ConfigError`.
    """
    store = _open(cwd)
    try:
        ref = ref if ref is not None else store.default_base(env or {})
        if ref is None:
            raise ConfigError("no baseline given: --same-job measures the merge-base of HEAD and a git ref",
                              fix="pass the base branch, e.g. --baseline origin/main (in GitHub Actions pull "
                                  "requests the base branch is the default)")
        head_sha = store.resolve("HEAD")
        sha, label = _merge_base(store, head_sha, ref)
        repo_root = Path(store.repo.working_tree_dir or "").resolve()
        relative = _relative(Path(cwd).resolve(), repo_root)
        folder = Path(tempfile.mkdtemp(prefix="scalecheck-baseline-"))
        root = folder / "baseline"
        try:
            try:
                store.repo.git.worktree("add", "--detach", str(root), sha)
            except GitCommandError as err:
                raise _failed("worktree add", err, repo_root) from err
            workdir = root / relative
            if not _is_dir(workdir):
                raise HistoryError(f"the folder '{relative.as_posix()}' does not exist in the baseline, {label}",
                                   where=Location(repo_root),
                                   fix="run scalecheck check --same-job from a folder both commits have, such as "
                                       "the repository's top folder")
            yield Worktree(root=root, workdir=workdir, sha=sha, head_sha=head_sha, label=label,
                           repo_root=repo_root)
        finally:
            _remove(store.repo, root)
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        store.close()


def _open(cwd: Path) -> Store:
    """The store of the repository around `cwd`, with a same-job fix when there is none."""
    try:
        store = Store(Path(cwd))
    except HistoryError as err:
        raise HistoryError(err.problem, where=err.where,
                           fix="run scalecheck check --same-job inside a clone of your project: it checks out the "
                               "baseline commit in a temporary git worktree") from None
    if store.repo.working_tree_dir is None:
        store.close()
        raise HistoryError("a bare repository has no working tree to measure", where=Location(Path(cwd)),
                           fix="run scalecheck check --same-job inside a clone with a working tree")
    return store


def _merge_base(store: Store, head_sha: str, ref: str) -> tuple[str, str]:
    """The baseline commit (merge-base of HEAD and `ref`) and a label saying how it was chosen."""
    base_sha = store.resolve(ref)  # refuses refs starting with '-' or holding control characters
    root = Path(store.repo.working_tree_dir or "")
    try:
        bases = store.repo.merge_base(head_sha, base_sha)
    except GitCommandError as err:
        raise _failed("merge-base", err, root) from err
    if not bases:
        if _is_shallow(store.repo):
            raise HistoryError(f"no merge-base of HEAD and {ref} in this shallow clone", where=Location(root),
                               fix=_FETCH_FIX)
        raise HistoryError(f"HEAD and {ref} have no common history (no merge-base)", where=Location(root),
                           fix=f"check that {ref} is a branch of this project; in CI, {_FETCH_FIX}")
    sha = bases[0].hexsha
    how = f"merge-base of HEAD and {ref}"
    if sha == head_sha:
        how += ": HEAD itself, so both sides are the same commit"
    return sha, f"commit {sha[:7]} ({how})"


def _relative(cwd: Path, repo_root: Path) -> Path:
    try:
        return cwd.relative_to(repo_root)
    except ValueError:
        raise HistoryError(f"the working folder is not inside the repository's work tree {repo_root}",
                           where=Location(cwd), fix="run scalecheck check --same-job inside the work tree") from None


def _remove(repo: git.Repo, root: Path) -> None:
    """Remove the worktree at `root` and git's record of it, whatever state the measurement left it in."""
    try:
        repo.git.worktree("remove", "--force", str(root))
    except GitCommandError:
        shutil.rmtree(root, ignore_errors=True)  # a half-made or damaged worktree: prune drops its record below
    try:
        repo.git.worktree("prune")
    except GitCommandError:
        pass  # a stale record is harmless: git prunes it itself later


def _is_dir(path: Path) -> bool:
    """Whether `path` is a folder; a path the system cannot look up (too long for it, say) is none."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _is_shallow(repo: git.Repo) -> bool:
    """Asked of git, not read from `git_dir`: in a linked worktree the shallow file is in the common folder."""
    try:
        return str(repo.git.rev_parse("--is-shallow-repository")).strip() == "true"
    except GitCommandError:
        return False


def _failed(command: str, err: GitCommandError, root: Path) -> HistoryError:
    detail = str(err.stderr or "").strip().splitlines()
    reason = detail[-1].removeprefix("stderr: ").strip(" '") if detail else f"exit status {err.status}"
    return HistoryError(f"`git {command}` failed: {reason}", where=Location(root),
                        fix="check that the repository is intact (`git fsck`) and that the temporary folder is "
                            "writable (TMPDIR)")
