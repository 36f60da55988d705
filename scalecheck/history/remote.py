"""L4: the data branch on the remote (``origin``): look it up, fetch it, push it, and tell a lost race apart.

A push of the data branch fails either because another CI run pushed the branch first (ours is no longer a
fast-forward; the caller records again on top of theirs) or for any other reason: no permission, a protected
branch, no network. `DataRemote.push` tells the two apart by git's exit status and the state of the remote's ref,
never by git's messages, which are translated and change between versions: after a failed push it asks the remote
for the branch again, and the push lost a race exactly when the branch moved since the fetch the caller built on.

Every git call passes an argument list (gitpython, never a shell); the branch name reaches git only inside full
refs (``refs/heads/NAME``), so it cannot be read as an option, and nothing waits for a password
(GIT_TERMINAL_PROMPT=0).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import git
from git.exc import GitCommandError

from scalecheck.errors import HistoryError, Location

REMOTE = "origin"
_NO_MATCH = 2  # `git ls-remote --exit-code`: the remote has no ref of that name
_NO_PROMPT = {"GIT_TERMINAL_PROMPT": "0"}


@dataclass(frozen=True)
class PushResult:
    """What one push of the data branch did."""

    pushed: bool  # the remote's branch is now our local branch
    raced: bool  # refused, and the remote's branch moved since the fetch: another run pushed first
    output: str  # what git printed, for the log


class DataRemote:
    """The data branch `branch` of the repository around `path`, locally and on the remote `remote`."""

    def __init__(self, path: Path, branch: str, remote: str = REMOTE) -> None:
        if not branch or branch.startswith("-"):
            raise ValueError(f"not a branch name: {branch!r}")
        try:
            self.repo = git.Repo(path, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as err:
            raise HistoryError("not inside a git repository", where=Location(Path(path)),
                               fix="run scalecheck in a clone of your project") from err
        self.root = Path(self.repo.working_tree_dir or self.repo.git_dir)
        self.branch = branch
        self.remote = remote
        self.local_ref = f"refs/heads/{branch}"
        self.tracking_ref = f"refs/remotes/{remote}/{branch}"

    def __enter__(self) -> DataRemote:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """End the git processes gitpython keeps for reading objects."""
        self.repo.close()

    def configured(self) -> bool:
        """Whether the repository has the remote at all (a local repository may have none)."""
        status, _, _ = self._git("remote", "get-url", self.remote)
        return status == 0

    def head(self) -> str | None:
        """The commit the remote's branch points to now, or None when the remote has no such branch."""
        status, out, err = self._git("ls-remote", "--exit-code", "--heads", self.remote, self.local_ref,
                                     env=_NO_PROMPT)
        if status == _NO_MATCH:
            return None
        if status != 0:
            raise self._failed("ls-remote", status, err)
        for line in out.splitlines():
            sha, _, name = line.partition("\t")
            if name == self.local_ref:  # ls-remote matches the pattern at the end of longer names too
                return sha
        return None

    def fetch(self) -> str | None:
        """Update the remote-tracking ref from the remote's branch; return the commit it now points to, or None
        when the remote has no data branch yet (a first run)."""
        if self.head() is None:
            return None
        status, _, err = self._git("fetch", "--quiet", "--no-tags", self.remote,
                                   f"+{self.local_ref}:{self.tracking_ref}", env=_NO_PROMPT)
        if status != 0:
            raise self._failed("fetch", status, err)
        return self._commit_of(self.tracking_ref)

    def push(self, expected: str | None) -> PushResult:
        """Push the local branch to the remote's; `expected` is the remote's commit the local branch was built on
        (what `fetch` returned). A refused push counts as a lost race when the remote's branch is no longer
        `expected`; a remote that cannot be asked again counts as a refusal."""
        status, out, err = self._git("push", "--porcelain", self.remote, f"{self.local_ref}:{self.local_ref}",
                                     env=_NO_PROMPT)
        output = "\n".join(text for text in (out, err) if text)
        if status == 0:
            return PushResult(pushed=True, raced=False, output=output)
        try:
            now = self.head()
        except HistoryError:
            return PushResult(pushed=False, raced=False, output=output)
        if now is not None and now == self._commit_of(self.local_ref):
            return PushResult(pushed=True, raced=False, output=output)  # it arrived, whatever the status said
        return PushResult(pushed=False, raced=now != expected, output=output)

    def drop_local(self) -> None:
        """Delete the local branch, so that the next record starts from the remote-tracking ref."""
        status, _, err = self._git("update-ref", "-d", self.local_ref)
        if status != 0:
            raise self._failed("update-ref", status, err)

    def _commit_of(self, full_ref: str) -> str | None:
        status, out, _ = self._git("rev-parse", "--verify", "--quiet", f"{full_ref}^{{commit}}")
        return out.strip() if status == 0 and out.strip() else None

    def _git(self, command: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
        """(exit status, stdout, stderr) of `git command args`, an argument list run in the repository."""
        try:
            done: Any = getattr(self.repo.git, command.replace("-", "_"))(
                *args, with_extended_output=True, with_exceptions=False, env=env)
        except GitCommandError as err:  # git could not be started at all
            return int(err.status) if isinstance(err.status, int) else 128, "", str(err.stderr or err)
        status, out, stderr = done
        return int(status), str(out or ""), str(stderr or "")

    def _failed(self, command: str, status: int, stderr: str) -> HistoryError:
        lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit status {status}"
        return HistoryError(f"`git {command}` with {self.remote} failed: {reason}", where=Location(self.root),
                            fix=f"check that the remote '{self.remote}' exists and that this job may read it "
                                "(in GitHub Actions, actions/checkout keeps the credentials by default)")
