"""Real git repositories built from an operations list (asv's approach), for the history store tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import git
import pytest

USER = {"user.name": "Test Author", "user.email": "author@example.com"}

# One operation per tuple:
#   ("commit", label, {path: text or None to delete})   write/delete files, `git add -A`, commit with message `label`
#   ("branch", name)                                   create branch `name` at HEAD and check it out
#   ("checkout", name)                                 check out an existing branch
#   ("merge", name, label)                             merge `name` into the current branch with a merge commit
Operation = tuple[object, ...]


@dataclass
class GitRepo:
    """A test repository: its gitpython handle and the sha of each commit by its label."""

    path: Path
    repo: git.Repo
    commits: dict[str, str] = field(default_factory=dict)

    def apply(self, operations: Sequence[Operation]) -> GitRepo:
        for op in operations:
            kind, *args = op
            if kind == "commit":
                label = args[0]
                files: dict[str, str | None] = args[1] if len(args) > 1 else {}  # type: ignore[assignment]
                for name, text in files.items():
                    target = self.path / name
                    if text is None:
                        target.unlink()
                    else:
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_text(text, encoding="utf-8")
                self.repo.git.add("-A")
                self.repo.git.commit("--allow-empty", "-q", "-m", str(label))
                self.commits[str(label)] = self.repo.head.commit.hexsha
            elif kind == "branch":
                self.repo.git.checkout("-q", "-b", str(args[0]))
            elif kind == "checkout":
                self.repo.git.checkout("-q", str(args[0]))
            elif kind == "merge":
                self.repo.git.merge("--no-ff", "-q", "-m", str(args[1]), str(args[0]))
                self.commits[str(args[1])] = self.repo.head.commit.hexsha
            else:
                raise ValueError(f"unknown operation {op!r}")
        return self

    def status(self) -> str:
        """`git status --porcelain`: empty when the work tree and the index are clean."""
        return str(self.repo.git.status("--porcelain", "--untracked-files=all"))

    def branch(self) -> str:
        return str(self.repo.git.symbolic_ref("HEAD"))


@pytest.fixture
def git_repo(tmp_path: Path) -> Iterator[Callable[..., GitRepo]]:
    """A factory: git_repo(operations, name="repo") makes a repository on branch main with a configured user."""
    made: list[GitRepo] = []

    def make(operations: Sequence[Operation] = (), name: str = "repo") -> GitRepo:
        path = tmp_path / name
        repo = git.Repo.init(path, initial_branch="main")
        with repo.config_writer() as config:
            for key, value in USER.items():
                section, option = key.split(".")
                config.set_value(section, option, value)
            config.set_value("commit", "gpgsign", "false")
        made.append(GitRepo(path, repo))
        return made[-1].apply(operations)

    yield make
    for item in made:
        item.repo.close()
