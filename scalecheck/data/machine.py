"""Whether two runs were measured on the same machine, from their `meta.machine` (see `scalecheck.machine`).

A value is what a `Run`'s ``meta["machine"]`` holds: the JSON text of a fingerprint object (the reader spells a
JSON object in a file that way), a user's own name for the machine (SCALECHECK_MACHINE), or None when not recorded.

Rules of `match`: both sides must be recorded. Two fingerprints are the same machine when every key present in both
has the same value (a key on one side only, such as ``python`` of the pytest plugin, is ignored; values compare as
text, so 4 and "4" are equal); fingerprints without a key in common cannot be compared. A name equals only the
same name, and a name never equals a fingerprint. JSON text that is not an object counts as a name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

UNKNOWN = "unknown (not recorded)"
# the order in which keys are described and reported; other keys follow, sorted
KEYS = ("cpu", "cores", "os", "host", "python", "runner", "runner_environment", "image")
MAX_LISTED = 3  # differing keys named in a reason
_SHOWN_CHARS = 80  # a value quoted in a reason is cut here


@dataclass(frozen=True)
class MachineMatch:
    """The outcome of comparing the baseline's machine with the candidate's."""

    same: bool  # both sides known and the same machine
    baseline: str  # one line naming the baseline's machine, UNKNOWN when missing
    candidate: str
    reason: str  # "" when same; else a sentence saying why not


def describe(value: str | None) -> str:
    """One line for people: "AMD EPYC 7763, 4 cores, Linux-x86_64, host fv-az1, runner GitHub Actions 3, image
    ubuntu24/20241201.1, CPython 3.12.4"; a user's name as it is; UNKNOWN for None or blank."""
    parsed = _parse(value)
    if parsed is None:
        return UNKNOWN
    if isinstance(parsed, str):
        return parsed
    facts = dict(parsed)
    parts = []
    if "cpu" in facts:
        parts.append(facts.pop("cpu"))
    if "cores" in facts:
        cores = facts.pop("cores")
        parts.append(f"{cores} core{'' if cores == '1' else 's'}")
    if "os" in facts:
        parts.append(facts.pop("os"))
    if "host" in facts:
        parts.append(f"host {facts.pop('host')}")
    where = facts.pop("runner_environment", "")
    if "runner" in facts:
        # github-hosted goes without saying next to the image it implies; self-hosted is worth a word
        parts.append(f"runner {facts.pop('runner')}" + (f" ({where})" if where and where != "github-hosted" else ""))
    elif where:
        parts.append(f"{where} runner")
    if "image" in facts:
        parts.append(f"image {facts.pop('image')}")
    if "python" in facts:
        parts.append(facts.pop("python"))
    parts.extend(f"{key} {facts[key]}" for key in sorted(facts))
    return ", ".join(parts)


def match(baseline: str | None, candidate: str | None) -> MachineMatch:
    """Compare the machines of two runs (the rules are in the module docstring)."""
    base, cand = _parse(baseline), _parse(candidate)
    result = MachineMatch(False, describe(baseline), describe(candidate), "")

    def differ(reason: str) -> MachineMatch:
        return MachineMatch(False, result.baseline, result.candidate, reason)

    if base is None or cand is None:
        if base is None and cand is None:
            return differ("neither side's machine is recorded")
        return differ(f"the {'baseline' if base is None else 'candidate'}'s machine is not recorded")
    if isinstance(base, str) and isinstance(cand, str):
        if base == cand:
            return MachineMatch(True, result.baseline, result.candidate, "")
        return differ(f"the machines differ: {_quote(base)} vs {_quote(cand)}")
    if isinstance(base, str) or isinstance(cand, str):
        named, side = (base, "baseline") if isinstance(base, str) else (cand, "candidate")
        return differ(f"the {side}'s machine is named {_quote(str(named))} and the other side's is a fingerprint, "
                      "so they cannot be compared")
    common = _ordered(set(base) & set(cand))
    if not common:
        return differ("the machines cannot be compared: their fingerprints have no key in common")
    differing = [key for key in common if base[key] != cand[key]]
    if not differing:
        return MachineMatch(True, result.baseline, result.candidate, "")
    listed = ", ".join(f"{key} {_quote(base[key])} vs {_quote(cand[key])}" for key in differing[:MAX_LISTED])
    more = len(differing) - MAX_LISTED
    return differ(f"the machines differ: {listed}" + (f" and {more} more key{'s' if more > 1 else ''}"
                                                       if more > 0 else ""))


def _parse(value: str | None) -> dict[str, str] | str | None:
    """A fingerprint as {key: text}, a user's name as a string, or None when not recorded (None, blank, {})."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.startswith("{"):
        try:
            loaded: object = json.loads(text)
        except ValueError:  # not JSON after all: a name that happens to start with a brace
            return _one_line(text)
        if isinstance(loaded, dict):
            facts = {str(key): _one_line(item if isinstance(item, str) else json.dumps(item, sort_keys=True))
                     for key, item in loaded.items()}
            facts = {key: item for key, item in facts.items() if item}
            return facts or None
    return _one_line(text)


def _ordered(keys: set[str]) -> list[str]:
    return [key for key in KEYS if key in keys] + sorted(keys - set(KEYS))


def _one_line(text: str) -> str:
    """`text` with line breaks, tabs and other control characters as single spaces."""
    return " ".join("".join(" " if ord(char) < 32 or 127 <= ord(char) < 160 else char for char in text).split())


def _quote(text: str) -> str:
    """`text` in quotes, as repr would quote it, cut to _SHOWN_CHARS characters."""
    return repr(text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "...")
