"""L3: write output files atomically, one or a set: every text goes to a temp file beside its target first, and only
when all of them are written are the temp files renamed over their targets. No reader sees half a file, and a
failure (a missing folder, a full disk, Ctrl-C) leaves every target as it was.

Temp files are named ``<target name>.scalecheck-<8 hex digits>.tmp``, beside their target and not hidden, so that
one left by a killed process is recognised. They are removed on every way out that runs Python code: an error,
KeyboardInterrupt, and SIGTERM or SIGHUP, which the CLI turns into an exception (`scalecheck.cli.main`). While the
set is renamed into place (and while temp files are removed) SIGINT, SIGTERM and SIGHUP wait (POSIX), so that an
interruption there does not leave a set half replaced. Only SIGKILL can leave a temp file behind.

Every file scalecheck writes (reports, measurement files, JSON) goes through `write_atomic` or `write_all`; the
commands check their outputs with `check_outputs` before they start working. stdlib only.
"""

from __future__ import annotations

import os
import signal
import stat
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from scalecheck.errors import ConfigError

TEMP_MARK = ".scalecheck-"  # temp files: <target name>.scalecheck-<8 hex digits>.tmp
TEMP_SUFFIX = ".tmp"
_NAME_ROOM = 200  # bytes of a target's name kept in its temp file's name: file systems allow 255 in all
_HELD = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def check_outputs(outputs: Mapping[str, Path | None]) -> None:
    """Refuse outputs that cannot be written, before the command does its work: for each option (``--json``) and
    its path (None: not asked for), the folder must exist and be writable, the path must not be a folder, and no
    two options may name the same file."""
    seen: dict[str, str] = {}
    for option, path in outputs.items():
        if path is None:
            continue
        _check_output(path, option)
        same = seen.setdefault(os.path.normcase(os.path.realpath(path)), option)
        if same != option:
            raise ConfigError(f"{same} and {option} both name {path}", fix="give each output a file of its own")


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` in one step; a failure leaves any previous file untouched."""
    write_all([(path, text)])


def write_all(files: Sequence[tuple[Path, str]]) -> None:
    """Replace each path with its text, as a set: none is replaced until every text is written beside its target.

    A failure or an interruption before the renames leaves every target as it was, and no temp file.
    """
    temps: list[Path] = []
    try:
        for path, text in files:
            _write_temp(path, text, temps)
        with _signals_held():
            for temp, (path, _) in zip(temps, files):
                try:
                    os.replace(temp, path)
                except OSError as err:
                    raise _cannot_write(path, err) from None
    finally:
        with _signals_held():
            for temp in temps:  # those renamed into place are gone already
                try:
                    temp.unlink(missing_ok=True)
                except OSError:
                    pass  # its folder vanished or became read-only: nothing is left to do


def _write_temp(path: Path, text: str, temps: list[Path]) -> None:
    """Write `text` to a new temp file beside `path`, listed in `temps` before it exists, so that whatever stops
    this function, the caller removes it."""
    _check_output(path, None)
    folder = path.parent
    for _ in range(100):
        temp = folder / f"{_shortened(path.name)}{TEMP_MARK}{os.urandom(4).hex()}{TEMP_SUFFIX}"
        temps.append(temp)
        try:  # 0o666 less the umask, as for any file a program creates: a report is an ordinary file
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except FileExistsError:
            temps.pop()  # another process's file: not ours to remove
            continue
        except OSError as err:
            raise _cannot_write(path, err) from None
        break
    else:
        raise _cannot_write(path, FileExistsError(f"100 temp file names beside {path} are taken"))
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
    except OSError as err:
        raise _cannot_write(path, err) from None


def _shortened(name: str) -> str:
    """`name` cut to at most `_NAME_ROOM` bytes in the file system's encoding, at a character's end."""
    name = name[:_NAME_ROOM]  # a character takes one byte or more
    while len(os.fsencode(name)) > _NAME_ROOM:
        name = name[:-1]
    return name


def _check_output(path: Path, option: str | None) -> None:
    """A `ConfigError` when `path` cannot be written: no folder, a read-only folder, a folder of that name, or a
    device, pipe or socket (which replacing would swap out for a file: /dev/null would become one)."""
    another = f"choose another {option}" if option else "choose another path"
    folder = path.parent
    try:
        if not stat.S_ISDIR(os.stat(folder).st_mode):
            raise ConfigError(f"cannot write {path}: {folder} is a file, not a folder", fix=another)
    except (FileNotFoundError, NotADirectoryError):
        raise ConfigError(f"cannot write {path}: folder {folder} does not exist",
                          fix=f"create the folder first, or {another}") from None
    except OSError as err:
        raise _cannot_write(path, err, another) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(f"cannot write {path}: folder {folder} is not writable", fix=another)
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            raise ConfigError(f"cannot write {path}: it is a folder", fix=f"name a file in it, or {another}")
        if not stat.S_ISREG(mode):
            raise ConfigError(f"cannot write {path}: it is not a regular file (a device, pipe or socket), which "
                              "scalecheck would replace", fix=another)
    except FileNotFoundError:
        pass  # a new file
    except OSError as err:
        raise _cannot_write(path, err, another) from None


def _cannot_write(path: Path, err: OSError, fix: str = "choose a path you can write to") -> ConfigError:
    reason = err.strerror or str(err)
    return ConfigError(f"cannot write {path}: {reason}", fix=fix)


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP wait until the block ends (POSIX; elsewhere the block runs as it is)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
