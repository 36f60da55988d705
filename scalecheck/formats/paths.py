"""Which files the `measurements` patterns select: one matcher for the working tree and for paths listed from git.

The patterns are bash globs with ``globstar`` on and ``dotglob`` off, as the GitHub Action's shell reads them,
matched by wcmatch with the same flags on both sides, so that a comparison never pairs different files:

- a pattern is relative to the project root; a leading ``./`` or ``/`` is dropped, and on Windows ``\\`` is ``/``;
- ``*``, ``?`` and ``[abc]`` match within one folder or file name, never across ``/``: ``bench/*.json`` matches
  ``bench/a.json`` but not ``bench/x/b.json``;
- ``**`` as a whole path segment matches any number of folders, none included: ``bench/**/*.json`` matches
  ``bench/a.json`` and ``bench/x/y/c.json``;
- ``{a,b}`` expands as in bash: ``bench/{small,large}/*.json``;
- a file or folder whose name starts with ``.`` is matched only by a segment that starts with ``.`` itself:
  ``**/*.json`` never looks into ``.git/`` or ``.venv/``, ``.bench/*.json`` does;
- matching is case-sensitive on every system, as git is, and selects files only, never folders;
- ``**`` does not enter symbolic links to folders (as bash >= 4.3); in git history a committed symbolic link is
  skipped, since it holds the name of its target, not measurements.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from wcmatch import glob

FLAGS = glob.GLOBSTAR | glob.BRACE | glob.CASE  # no DOTGLOB: hidden names need an explicit leading '.'
_FILES = FLAGS | glob.NODIR  # the working tree: files only
_GIT = FLAGS | glob.FORCEUNIX  # paths listed from git always use '/', also on Windows


def normalised(pattern: str) -> str:
    """`pattern` as paths relative to the root are spelt: '/' between names, no leading './' or '/'."""
    if os.sep != "/":
        pattern = pattern.replace(os.sep, "/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return pattern.lstrip("/")


def select_files(root: Path, patterns: Sequence[str]) -> list[Path]:
    """The files below `root` that `patterns` match, as ``root / relative path``, sorted and without duplicates."""
    if not patterns:
        return []
    found = glob.glob([normalised(p) for p in patterns], flags=_FILES, root_dir=root)
    return sorted({root / name for name in found})


def matches(path: str, patterns: Sequence[str]) -> bool:
    """Whether `path` (relative to the root, '/' between names, as git lists it) matches one of `patterns`."""
    return bool(patterns) and glob.globmatch(path, [normalised(p) for p in patterns], flags=_GIT)


def select_paths(paths: Iterable[str], patterns: Sequence[str]) -> list[str]:
    """The paths of `paths` (relative to the root, as git lists them) that `patterns` match, sorted."""
    if not patterns:
        return []
    chosen = glob.globfilter(list(paths), [normalised(p) for p in patterns], flags=_GIT)
    return sorted({str(path) for path in chosen})


def is_pattern(pattern: str) -> bool:
    """Whether `pattern` has wildcards or braces, rather than naming one path."""
    return bool(glob.is_magic(normalised(pattern), flags=FLAGS))


def search_start(pattern: str) -> tuple[str, int | None]:
    """Where files matching `pattern` can be: the folder before its first wildcard ('' for the root), and how many
    folders deep below it (1: the folder's own files), or None when ``**`` or braces allow any depth."""
    parts = normalised(pattern).split("/")
    fixed = 0
    while fixed < len(parts) - 1 and not glob.is_magic(parts[fixed], flags=FLAGS):
        fixed += 1
    rest = parts[fixed:]
    unbounded = "**" in rest or any("{" in part for part in rest)  # a brace may hold '/' or '**'
    return "/".join(parts[:fixed]), None if unbounded else len(rest)


def escape(path: str) -> str:
    """A pattern that matches exactly the file `path`, even when its name holds wildcard characters."""
    return str(glob.escape(normalised(path)))
