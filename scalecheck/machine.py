"""L3: the fingerprint of the machine that measures, stored as `meta.machine` of every measurement file written.

A check compares a candidate with a baseline fairly only when both were measured on the same machine;
`scalecheck.data.machine.match` compares two fingerprints. Standard library only: the pytest plugin imports this
module, and numpy must stay out of a pytest start-up.

- ``SCALECHECK_MACHINE`` set and not blank: that name, stripped (a self-hosted runner called "perf-box-1", say).
- Otherwise the JSON text of an object, keys sorted, with string values: ``cpu`` (the model: Linux's
  /proc/cpuinfo, else `platform.processor()`, else `platform.machine()`), ``cores`` (logical), ``os``
  ("Linux-x86_64"), ``host`` (`platform.node()`), ``python`` ("CPython 3.12.4", only when asked: the pytest plugin
  measures the interpreter too) and, in GitHub Actions, ``runner``, ``runner_environment`` and ``image``.
  `json.dumps`'s default spelling is kept, so the text the writer stores as an object reads back identical.
- The environment is not trusted: control characters become spaces, whitespace runs collapse to one space, and a
  value is cut at `MAX_CHARS` characters. Empty values are left out.
"""

from __future__ import annotations

import json
import os
import platform
import unicodedata
from collections.abc import Mapping
from pathlib import Path

USER_VARIABLE = "SCALECHECK_MACHINE"
MAX_CHARS = 200
CPUINFO = Path("/proc/cpuinfo")
# /proc/cpuinfo keys naming the CPU model, best first: x86 and most others have "model name"; older ARM kernels
# "Hardware" (the SoC) or "Processor"; MIPS "cpu model". Case matters: x86's "processor" is just the CPU number.
_CPUINFO_KEYS = ("model name", "Hardware", "Processor", "cpu model")


def fingerprint(env: Mapping[str, str] | None = None, *, python: bool = False) -> str:
    """The text to store in `meta.machine`: the user's own name for the machine, or a JSON object describing it.

    `env` defaults to `os.environ`; `python` adds the interpreter ("CPython 3.12.4").
    """
    env = os.environ if env is None else env
    named = _clean(env.get(USER_VARIABLE, ""))
    if named:
        return named
    facts = {
        "cpu": cpu_model(),
        "cores": str(os.cpu_count() or ""),
        "os": f"{platform.system()}-{platform.machine()}",
        "host": platform.node(),
    }
    if python:
        facts["python"] = f"{platform.python_implementation()} {platform.python_version()}"
    if env.get("GITHUB_ACTIONS") == "true":
        facts["runner"] = env.get("RUNNER_NAME", "")
        facts["runner_environment"] = env.get("RUNNER_ENVIRONMENT", "")
        image, version = _clean(env.get("ImageOS", "")), _clean(env.get("ImageVersion", ""))
        facts["image"] = f"{image}/{version}" if image and version else ""
    cleaned = {key: _clean(value) for key, value in facts.items()}
    return json.dumps({key: value for key, value in cleaned.items() if value}, sort_keys=True)


def cpu_model(cpuinfo: Path = CPUINFO) -> str:
    """The CPU model: from `cpuinfo` on Linux, else `platform.processor()`, else `platform.machine()`. Never raises."""
    if platform.system() == "Linux":
        try:
            text = cpuinfo.read_text(encoding="utf-8", errors="replace")
        except (OSError, ValueError):  # no /proc (a container, a sandbox), no permission
            text = ""
        found = cpu_from_cpuinfo(text)
        if found:
            return found
    return _clean(platform.processor()) or _clean(platform.machine())


def cpu_from_cpuinfo(text: str) -> str:
    """The CPU model named in the text of /proc/cpuinfo (first core, best key first), or "" if none is."""
    first: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key = key.strip()
        if sep and key in _CPUINFO_KEYS and key not in first and value.strip():
            first[key] = value
    return next((_clean(first[key]) for key in _CPUINFO_KEYS if key in first), "")


def _clean(text: str) -> str:
    """`text` on one line: control and format characters as spaces, whitespace collapsed, at most MAX_CHARS."""
    spaced = "".join(" " if unicodedata.category(char) in ("Cc", "Cf") else char for char in text)
    return " ".join(spaced.split())[:MAX_CHARS].rstrip()
