"""--scalecheck-save: the session's measurements as scalecheck JSON files, for `scalecheck check`."""

from __future__ import annotations

import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scalecheck.errors import Location, ScalecheckError
from scalecheck.files import write_atomic
from scalecheck.formats.writer import dumps_run
from scalecheck.machine import fingerprint


def save(path: Path, records: Sequence[dict[str, Any]]) -> list[str]:
    """Write `records` (measurement objects) to `path`, one file per set of parameter names; lines to print.

    A scalecheck file declares one list of parameters, so tests measured over different names (n; n and m) go to
    separate files: `path` itself for the set most measurements use, `<stem>.<names><suffix>` for the others.
    Records of one kernel, metric and point from several workers add repetitions. `meta.machine` is the machine's
    fingerprint with the Python version (`scalecheck.machine`), or the user's name for it and then `meta.python`
    the Python version; `meta.source` is "pytest".
    """
    from scalecheck.data.measurement import RunBuilder

    if not records:
        return [f"scalecheck: no measurements in this session; {path} not written"]
    machine = fingerprint(python=True)  # the interpreter is part of what the tests measure
    # a fingerprint names the interpreter; a user's name for the machine (SCALECHECK_MACHINE) does not
    python = {} if machine.startswith("{") else {"python": platform.python_version()}
    by_names: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for record in records:
        by_names.setdefault(tuple(record["point"]), []).append(record)
    ordered = sorted(by_names, key=lambda names: -len(by_names[names]))
    lines = []
    for rank, names in enumerate(ordered):
        target = path if rank == 0 else path.with_name(f"{path.stem}.{'-'.join(names)}{path.suffix}")
        builder = RunBuilder(names, target)
        for index, record in enumerate(by_names[names]):
            builder.add(record["kernel"], record["metric"], [float(record["point"][n]) for n in names],
                        record["values"], Location(target, record=str(index + 1)), record["unit"],
                        record.get("rounds"))
        meta = {"source": "pytest", "machine": machine} | python
        try:
            write_atomic(target, dumps_run(builder.build(), meta))
        except ScalecheckError as err:
            lines.append(f"scalecheck: cannot save the measurements: {err}")
            continue
        kernels = len({r["kernel"] for r in by_names[names]})
        lines.append(f"scalecheck: saved {len(by_names[names])} measurements of {kernels} test(s) over "
                     f"{', '.join(names)} to {target}")
    return lines
