"""L3: write output files atomically: a temp file in the same folder, then a rename, so no reader sees half a file.

Every file scalecheck writes (reports, measurement files, JSON) goes through `write_atomic`; stdlib only.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from scalecheck.errors import ConfigError


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` in one step; a failure leaves any previous file untouched."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ConfigError(f"cannot write {path}: folder {folder} does not exist", fix="create the folder first")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as err:
        raise ConfigError(f"cannot write {path}: {err.strerror}", fix="choose a folder you can write to") from None
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes the file private; a report is an ordinary file
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise ConfigError(f"cannot write {path}: {err.strerror}", fix="choose a path you can write to") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
