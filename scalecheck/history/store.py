"""L4: measurements per commit, read from git without a checkout and recorded without touching the work tree.

Two stores, tried in this order when `kind` is "auto":

- "branch": a data branch (default ``scalecheck-data``) holding one native JSON file per measured commit, named
  ``<40-hex sha>.json``. `Store.record` writes it with git plumbing (hash-object, mktree, commit-tree, update-ref),
  so the work tree, the index and the checked-out branch never change. The local branch is read first, then
  ``origin/<branch>``, so a fresh CI clone finds what other runs pushed.
- "repo": measurement files committed with the code, named by the config's ``measurements`` paths or globs
  relative to the repository root and read from each commit's tree.

Globs mean what they mean for the working tree (`scalecheck.formats.paths`, bash with globstar): ``*`` stays within
one folder (``bench/*.json`` does not match ``bench/x/y.json``), ``**`` matches any number of folders, none included
(``**/results.json`` matches ``results.json``), and hidden names need an explicit ``.``.

Refs come from untrusted pull requests: every git call passes an argument list (never a shell), and a ref that
starts with ``-`` is refused before it could be read as an option.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

import git
from git.exc import GitCommandError

from scalecheck.data.measurement import Run, merge_runs
from scalecheck.errors import ConfigError, HistoryError, Location, NoBaselineError
from scalecheck.formats import read_measurements_bytes
from scalecheck.formats.limits import MAX_ARCHIVE_BYTES, check_merged_cells, too_large
from scalecheck.formats.paths import is_pattern, normalised, search_start, select_paths
from scalecheck.formats.writer import dumps_run
from scalecheck.names import STORES

DEFAULT_BRANCH = "scalecheck-data"
IDENTITY = {"NAME": "scalecheck", "EMAIL": "scalecheck@localhost"}  # for CI runners without a git user
_NO_SHA = "0" * 40  # update-ref's old value for "the ref must not exist yet"
_FETCH_FIX = ("fetch the whole history (in GitHub Actions, actions/checkout with `fetch-depth: 0`; "
              "elsewhere `git fetch --unshallow`)")

RECORD_TRIES = 16  # builds of the data branch's new commit, each on the tip another record moved the branch to
_STUCK_TRIES = 3  # failed swaps while the branch did not move: a stale lock or a broken repository, not a race
_BACK_OFF = (0.01, 1.0)  # seconds: the first wait's upper bound, doubled each try up to the second
_FILE_MODES = {"100644", "100755"}  # a regular file in a git tree, plain or executable
_KINDS = {"040000": "a folder (git tree)", "160000": "a submodule (git commit link)", "120000": "a symbolic link"}


@dataclass(frozen=True)
class _Entry:
    """One top-level entry of a data-branch commit's tree, as `git ls-tree` shows it."""

    mode: str  # "100644"
    kind: str  # "blob", "tree" or "commit"
    sha: str


# (display name, {file name: entry}) of each data-branch ref that exists: the local branch, then origin's
Snapshot = list[tuple[str, dict[str, _Entry]]]


class Store:
    """Measurements per commit of the git repository that contains `path`."""

    def __init__(self, path: Path, *, data_branch: str = DEFAULT_BRANCH, measurements: Sequence[str] = (),
                 fmt: str | None = None, kind: str = "auto", scaling: str = "weak") -> None:
        if kind not in STORES:
            raise ConfigError(f"unknown history store '{kind}'", fix=f"use one of: {', '.join(STORES)}")
        try:
            self.repo = git.Repo(path, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as err:
            raise HistoryError("not inside a git repository", where=Location(Path(path)),
                               fix="run scalecheck in a clone of your project, or pass --baseline FILE") from err
        self.root = Path(self.repo.working_tree_dir or self.repo.git_dir)
        self._git = self.repo.git
        self.data_branch = data_branch
        self.measurements = tuple(normalised(pattern) for pattern in measurements)
        self.fmt = fmt
        self.scaling = scaling  # how Score-P profiles combine their processes' values
        self.kind = kind
        self._entries: dict[str, dict[str, _Entry]] = {}  # data-branch commit sha -> its top-level entries
        if not data_branch or data_branch.startswith("-") or not self._ok_ref_name(f"refs/heads/{data_branch}"):
            raise ConfigError(f"'{data_branch}' is not a valid branch name for the data branch",
                              fix=f"name the data branch like a git branch, e.g. '{DEFAULT_BRANCH}'")
        if kind == "repo" and not self.measurements:
            raise ConfigError("the history store 'repo' reads committed measurement files, but none are configured",
                              fix="list them in the `measurements` setting (paths or globs relative to the "
                                  "repository root), or use the store 'branch'")

    def close(self) -> None:
        """End the git processes gitpython keeps for reading objects."""
        self.repo.close()

    # -- refs -----------------------------------------------------------------------------------------------------

    def resolve(self, ref: str) -> str:
        """The full sha of the commit `ref` names (a branch, tag, sha or rev expression such as ``HEAD~2``)."""
        if not ref or ref.startswith("-") or any(ord(ch) < 32 or ord(ch) == 127 for ch in ref):
            raise HistoryError(f"refusing the git ref {ref!r}: a ref must not be empty, start with '-' or hold "
                               "control characters", where=Location(self.root),
                               fix="name a branch, a tag or a commit sha")
        try:
            # "^{commit}" peels tags and refuses trees and blobs; with no leading '-', it cannot be an option
            return str(self._git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}"))
        except GitCommandError:
            shallow = " (this clone is shallow: the commit may not have been fetched)" if self._is_shallow() else ""
            raise HistoryError(f"unknown git ref '{ref}': no branch, tag or commit of that name{shallow}",
                               where=Location(self.root),
                               fix=f"check the name with `git rev-parse --verify {ref}`; in CI, {_FETCH_FIX}") from None

    def default_base(self, env: Mapping[str, str]) -> str | None:
        """The base branch of a GitHub pull request (GITHUB_BASE_REF), as ``origin/<name>`` when that ref exists."""
        name = env.get("GITHUB_BASE_REF", "").strip()
        if not name:
            return None
        return f"origin/{name}" if self._commit_of(f"refs/remotes/origin/{name}") else name

    def describe(self, sha: str) -> str:
        """One line naming a commit for people: ``1a2b3c4 subject line (author date ISO)``."""
        commit = self.repo.commit(self.resolve(sha))
        return f"{commit.hexsha[:7]} {commit.summary!s} ({commit.authored_datetime.isoformat()})"

    # -- reading --------------------------------------------------------------------------------------------------

    def read(self, sha: str) -> Run | None:
        """The measurements recorded for commit `sha`, or None when it has none; a corrupt file is an `InputError`."""
        return self._read(self.resolve(sha), self._snapshot())

    def baseline(self, base_ref: str, head: str = "HEAD", max_walk: int = 1000) -> tuple[str, str]:
        """The commit to compare `head` with, and a sentence saying how it was chosen.

        It is the merge-base of `head` and `base_ref` or, when that has no measurements, its nearest first-parent
        ancestor that has some (at most `max_walk` commits are looked at). The first-parent line is the history of
        the base branch itself, so a measured commit of a merged side branch is never picked.
        """
        if max_walk < 1:
            raise ValueError(f"max_walk must be at least 1, got {max_walk}")
        head_sha, base_sha = self.resolve(head), self.resolve(base_ref)
        try:
            bases = self.repo.merge_base(head_sha, base_sha)
        except GitCommandError as err:
            raise self._failed("merge-base", err) from err
        if not bases:
            if self._is_shallow():
                raise HistoryError(f"no merge-base of {head} and {base_ref} in this shallow clone",
                                   where=Location(self.root), fix=_FETCH_FIX)
            raise HistoryError(f"{head} and {base_ref} have no common history (no merge-base)",
                               where=Location(self.root),
                               fix=f"check that {base_ref} is a branch of this project; in CI, {_FETCH_FIX}")
        start = bases[0].hexsha
        walked = self._first_parents(start, max_walk)
        snapshot = self._snapshot()
        for back, sha in enumerate(walked):
            if self._read(sha, snapshot) is not None:
                how = f"merge-base of {head} and {base_ref}"
                if back:
                    how += f", {back} commit{'s' if back > 1 else ''} back on the first-parent line"
                return sha, f"commit {sha[:7]} ({how})"
        raise self._nothing_found(start, len(walked), max_walk, snapshot)

    def commits_with_measurements(self, ref: str = "HEAD", limit: int = 50,
                                  max_walk: int = 1000) -> list[tuple[str, Run]]:
        """Up to `limit` commits of the first-parent line from `ref` that have measurements, newest first."""
        snapshot = self._snapshot()
        found: list[tuple[str, Run]] = []
        for sha in self._first_parents(self.resolve(ref), max_walk):
            run = self._read(sha, snapshot)
            if run is not None:
                found.append((sha, run))
                if len(found) >= limit:
                    break
        return found

    def _read(self, sha: str, snapshot: Snapshot) -> Run | None:
        """`read` of a resolved sha, with the data-branch files looked up once per walk."""
        if self.kind in ("auto", "branch"):
            run = self._read_branch(sha, snapshot)
            if run is not None or self.kind == "branch":
                return run
        return self._read_files(sha) if self.measurements else None

    def _read_branch(self, sha: str, snapshot: Snapshot) -> Run | None:
        """The run recorded for `sha`; an entry of its name that is not a regular file is corrupt, never skipped
        (skipping it would take the baseline from an older commit without a word)."""
        name = f"{sha}.json"
        for display, entries in snapshot:
            entry = entries.get(name)
            if entry is None:
                continue
            if entry.mode not in _FILE_MODES:
                what = _KINDS.get(entry.mode, f"a git {entry.kind} of mode {entry.mode}")
                raise HistoryError(f"the data branch '{display}' holds {what} named {name}, not a measurement file",
                                   where=Location(Path(f"{display}:{name}")),
                                   fix=f"replace it by recording that commit again (`scalecheck record FILE --commit "
                                       f"{sha[:7]}`, then `git push origin {self.data_branch}` to share it), or "
                                       "remove the entry from the branch")
            blob = git.Blob(self.repo, bytes.fromhex(entry.sha), int(entry.mode, 8), name)
            return _read_blob(blob, f"{display}:{name}", "scalecheck-json")
        return None

    def _read_files(self, sha: str) -> Run | None:
        blobs = _matching_blobs(self.repo.commit(sha).tree, self.measurements)
        if not blobs:
            return None
        displays = [f"{sha[:7]}:{blob.path}" for blob in blobs]
        runs = [_read_blob(blob, display, self.fmt, self.scaling) for blob, display in zip(blobs, displays)]
        check_merged_cells(runs, [Path(display) for display in displays])
        return merge_runs(runs)  # its errors name the sources the runs were read under

    def _snapshot(self) -> Snapshot:
        """The files of the local data branch and of origin's, those that exist, looked up once per call."""
        if self.kind == "repo":
            return []
        snapshot: Snapshot = []
        for ref, display in self._data_refs():
            commit = self._commit_of(ref)
            if commit is None:
                continue
            if commit not in self._entries:
                self._entries[commit] = {name: _Entry(*fields.split()) for fields, _, name in
                                         (line.partition("\t") for line in self._tree_entries(commit))}
            snapshot.append((display, self._entries[commit]))
        return snapshot

    def _data_refs(self) -> tuple[tuple[str, str], tuple[str, str]]:
        """(full ref, display name) of the local data branch and of its remote-tracking ref."""
        branch = self.data_branch
        return (f"refs/heads/{branch}", branch), (f"refs/remotes/origin/{branch}", f"origin/{branch}")

    # -- recording ------------------------------------------------------------------------------------------------

    def record(self, run: Run, commit: str = "HEAD") -> str:
        """Write `run` as ``<sha>.json`` of `commit` to the data branch; return the data branch's new commit.

        Only objects and the branch ref are written: the work tree, the index and HEAD stay as they are. A file
        already recorded for the same commit is replaced. Pushing the branch is left to the caller.

        The branch moves by compare-and-swap: when another record (another process) moved it since it was read,
        the new commit is built again on the new tip and the swap tried again, after a random wait that grows with
        each try (at most `RECORD_TRIES` tries), so that records running at the same time all land.
        """
        if self.kind == "repo":
            raise ConfigError("the history store 'repo' reads committed files, so a recorded run would never be read",
                              fix="commit the measurement files instead, or use the store 'auto' or 'branch'")
        sha = self.resolve(commit)
        branch_ref = f"refs/heads/{self.data_branch}"
        if self._checked_out() == branch_ref:
            raise HistoryError(f"the data branch '{self.data_branch}' is checked out", where=Location(self.root),
                               fix="check out your project's branch; scalecheck writes the data branch itself")
        name = f"{sha}.json"
        blob = self._call("hash_object", "-w", "--stdin", stdin=dumps_run(run, {"commit": sha}).encode())
        identity = self._identity()
        rng = random.Random()  # not seeded: racing processes must wait different times
        moved = stuck = 0
        for attempt in range(RECORD_TRIES):
            if attempt:
                time.sleep(rng.uniform(0, min(_BACK_OFF[1], _BACK_OFF[0] * 2 ** attempt)))
            local, remote = (self._commit_of(ref) for ref, _ in self._data_refs())
            parent = local
            if remote and (local is None or self._is_ancestor(local, remote)):
                parent = remote  # start from what others pushed, so that the branch can be pushed without a merge
            new = self._data_commit(parent, name, blob, sha, identity)
            try:
                # compare-and-swap: the old value makes git refuse, instead of losing a commit, if another
                # process moved the branch (or holds its lock) since it was read
                self._git.update_ref("-m", f"scalecheck record {sha[:7]}", branch_ref, new, local or _NO_SHA)
            except GitCommandError as err:
                if self._commit_of(branch_ref) != local:
                    moved += 1  # another record came first: build again on top of it
                    continue
                stuck += 1
                if stuck < _STUCK_TRIES:
                    continue  # another process may still hold the branch's lock while it writes
                raise self._stuck(branch_ref, err) from err
            return new
        raise HistoryError(f"the data branch '{self.data_branch}' kept moving: other records updated it {moved} "
                           f"times in {RECORD_TRIES} tries to record commit {sha[:7]}", where=Location(self.root),
                           fix="run scalecheck record again when fewer records run at the same time")

    def _stuck(self, branch_ref: str, err: GitCommandError) -> HistoryError:
        """The error for a branch that could not be moved although nobody else moved it either."""
        try:
            lock = Path(self.root, str(self._git.rev_parse("--git-path", f"{branch_ref}.lock")))
        except GitCommandError:
            lock = None
        if lock is not None and lock.is_file():
            return HistoryError(f"the data branch '{self.data_branch}' stays locked by {lock}: a git process "
                                "is updating it, or one that was stopped left the lock behind",
                                where=Location(self.root),
                                fix=f"if no git process runs in this repository, delete {lock} and record again")
        return self._failed("update-ref", err)

    def _data_commit(self, parent: str | None, name: str, blob: str, sha: str, identity: Mapping[str, str]) -> str:
        """A new data-branch commit on `parent` whose tree is the parent's with `name` set to `blob`."""
        entries = [entry for entry in self._tree_entries(parent) if entry.split("\t", 1)[1] != name]
        entries.append(f"100644 blob {blob}\t{name}")
        tree = self._call("mktree", "-z", stdin="".join(entry + "\0" for entry in entries).encode())
        parents = ["-p", parent] if parent else []
        return self._call("commit_tree", tree, *parents, "-m", f"scalecheck: measurements of {sha[:7]}",
                          env=identity)

    def _tree_entries(self, commit: str | None) -> list[str]:
        """The top-level entries of `commit`'s tree as `git ls-tree` prints them (mode type sha TAB name)."""
        if commit is None:
            return []
        return [entry for entry in self._call("ls_tree", "-z", commit).split("\0") if entry]

    def _identity(self) -> dict[str, str]:
        """Environment giving commit-tree an author and committer where git would not know one (fresh CI runners)."""
        env: dict[str, str] = {}
        for role in ("AUTHOR", "COMMITTER"):
            try:
                self._git.var(f"GIT_{role}_IDENT")
            except GitCommandError:
                for part, config in (("NAME", "user.name"), ("EMAIL", "user.email")):
                    env[f"GIT_{role}_{part}"] = (os.environ.get(f"GIT_{role}_{part}") or self._config(config)
                                                 or IDENTITY[part])
        return env

    # -- git helpers ----------------------------------------------------------------------------------------------

    def _call(self, command: str, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None) -> str:
        """Run `git <command> args` (an argument list, no shell); a failure becomes a `HistoryError`."""
        try:
            if stdin is None:
                return str(getattr(self._git, command)(*args, env=env))
            with tempfile.TemporaryFile() as stream:  # subprocess needs a real file for stdin
                stream.write(stdin)
                stream.seek(0)
                return str(getattr(self._git, command)(*args, istream=stream, env=env))
        except GitCommandError as err:
            raise self._failed(command.replace("_", "-"), err) from err

    def _failed(self, command: str, err: GitCommandError) -> HistoryError:
        detail = [line.strip().removeprefix("stderr: ").strip(" '") for line in str(err.stderr or "").splitlines()]
        detail = [line for line in detail if line]
        # git's own error line, not the advice it may print after it
        said = [line.split(": ", 1)[1] for line in detail if line.startswith(("fatal: ", "error: "))]
        reason = said[0] if said else detail[-1] if detail else f"exit status {err.status}"
        if "dubious ownership" in str(err.stderr):
            fix = f"mark the clone as safe: git config --global --add safe.directory {self.root}"
        else:
            fix = "check that the repository is intact (`git fsck`) and writable"
        return HistoryError(f"`git {command}` failed: {reason}", where=Location(self.root), fix=fix)

    def _commit_of(self, full_ref: str) -> str | None:
        """The commit sha `full_ref` (``refs/...``, so never an option) points to, or None."""
        try:
            return str(self._git.rev_parse("--verify", "--quiet", f"{full_ref}^{{commit}}"))
        except GitCommandError:
            return None

    def _ok_ref_name(self, full_ref: str) -> bool:
        try:
            self._git.check_ref_format(full_ref)
        except GitCommandError:
            return False
        return True

    def _is_ancestor(self, older: str, newer: str) -> bool:
        try:
            self._git.merge_base("--is-ancestor", older, newer)
        except GitCommandError:
            return False
        return True

    def _is_shallow(self) -> bool:
        """Asked of git, not read from `git_dir`: in a linked worktree the shallow file is in the common folder."""
        try:
            return str(self._git.rev_parse("--is-shallow-repository")).strip() == "true"
        except GitCommandError:
            return False

    def _checked_out(self) -> str | None:
        try:
            return str(self._git.symbolic_ref("-q", "HEAD"))
        except GitCommandError:
            return None  # detached HEAD

    def _config(self, key: str) -> str:
        try:
            return str(self._git.config("--get", key))
        except GitCommandError:
            return ""

    def _first_parents(self, sha: str, max_walk: int) -> list[str]:
        """`sha` and its first-parent ancestors, newest first, at most `max_walk` of them."""
        return self._call("rev_list", "--first-parent", f"--max-count={max_walk}", sha).split()

    def _nothing_found(self, start: str, walked: int, max_walk: int, snapshot: Snapshot) -> NoBaselineError:
        """The error for a walk from `start` over `walked` commits that found no measurements."""
        where = f"at {start[:7]}" + (f" or its {walked - 1} first-parent ancestor{'s' if walked > 2 else ''}"
                                     if walked > 1 else "")
        stores = []
        if self.kind in ("auto", "branch"):
            stores.append(f"data branch '{self.data_branch}'")
        if self.kind in ("auto", "repo") and self.measurements:
            stores.append(f"files {', '.join(self.measurements)}")
        if self.kind == "repo":
            fixes = ["commit the measurement files on the base branch, or pass --baseline FILE"]
        else:
            fixes = [f"record a baseline with `scalecheck record FILE --commit {start[:7]}` on the base branch, "
                     "name measurement files committed with the code in the `measurements` setting, "
                     "measure both commits in this job with `scalecheck check --same-job`, or pass --baseline FILE"]
            if not snapshot:
                fixes.append(f"the data branch exists neither as '{self.data_branch}' nor as "
                             f"'origin/{self.data_branch}': fetch it with `git fetch origin {self.data_branch}` "
                             "if it was pushed")
        if walked < max_walk and self._is_shallow():
            fixes.append(f"the walk stopped at the end of this shallow clone: {_FETCH_FIX}")
        return NoBaselineError(f"no measurements recorded {where} (store: {' and '.join(stores)})",
                               where=Location(self.root), fix="; ".join(fixes))


def _matching_blobs(tree: git.Tree, patterns: Sequence[str]) -> list[git.Blob]:
    """The files of `tree` that `patterns` name, sorted by path; symbolic links and submodules are skipped."""
    found: dict[str, git.Blob] = {}
    for pattern in patterns:
        if not is_pattern(pattern):  # a plain path: looked up, not searched for
            item = _lookup(tree, pattern)
            if _is_file(item):
                found[str(item.path)] = item
            continue
        folder, depth = search_start(pattern)  # only where the pattern can match is read from git
        top = _lookup(tree, folder) if folder else tree
        if not isinstance(top, git.Tree):
            continue
        blobs: dict[str, git.Blob] = {}
        for item in top.traverse(depth=-1 if depth is None else depth):
            if _is_file(item):
                blobs[str(item.path)] = item
        found.update((path, blobs[path]) for path in select_paths(blobs, [pattern]))
    return [found[path] for path in sorted(found)]


def _is_file(item: object) -> TypeGuard[git.Blob]:
    """Whether `item` is a file of a git tree, not a folder, a submodule or a symbolic link."""
    return isinstance(item, git.Blob) and item.mode != git.Blob.link_mode


def _lookup(tree: git.Tree, path: str) -> object:
    try:
        return tree / path
    except KeyError:
        return None


def _read_blob(blob: git.Blob, display: str, fmt: str | None, scaling: str = "weak") -> Run:
    """Read a committed file in memory; locations in the run and in errors name `display` (``1a2b3c4:path``)."""
    source = Path(display)
    if blob.size > MAX_ARCHIVE_BYTES:  # refused before it is read into memory, as a file on disk is
        raise too_large(source, MAX_ARCHIVE_BYTES)
    return read_measurements_bytes(blob.data_stream.read(), source, fmt, scaling)
