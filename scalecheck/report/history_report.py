"""Render the models of measured commits (`scalecheck history`) as terminal text and as JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence

from scalecheck.data.outcome import KernelModel
from scalecheck.data.views import HistoryEntry
from scalecheck.text import visible


def growth_changes(entries: Sequence[HistoryEntry]) -> dict[tuple[str, str], list[tuple[int, str, str]]]:
    """Per (kernel, metric): (entry index, growth before, growth after) at each commit where the growth changed."""
    changes: dict[tuple[str, str], list[tuple[int, str, str]]] = {}
    last: dict[tuple[str, str], str] = {}
    for index, entry in enumerate(entries):
        for km in entry.table.models:
            key, growth = (km.kernel, km.metric), _growth(km)
            if key in last and last[key] != growth:
                changes.setdefault(key, []).append((index, last[key], growth))
            last[key] = growth
    return changes


def render_history_text(entries: Sequence[HistoryEntry]) -> str:
    """The commits where a growth changed first, then each kernel's growth and model per commit, oldest first."""
    changes = growth_changes(entries)
    lines = [f"{len(entries)} measured commit(s), oldest first: {entries[0].sha[:7]} .. {entries[-1].sha[:7]}"]
    if changes:
        lines += ["", "growth changed:"]
        for (kernel, metric), found in sorted(changes.items()):
            for index, before, after in found:
                lines.append(f"  {kernel} [{metric}]: {before} -> {after} at {entries[index].description}")
    else:
        lines += ["", "no kernel's growth changed"]
    keys = sorted({(km.kernel, km.metric) for e in entries for km in e.table.models})
    for key in keys:
        lines += ["", f"{key[0]} [{key[1]}]"]
        for entry in entries:
            km = next((m for m in entry.table.models if (m.kernel, m.metric) == key), None)
            if km is None:
                continue
            formula = km.model.formula() if km.model is not None else f"({km.status})"
            lines.append(f"  {entry.sha[:7]}  {_growth(km):<22} {formula}")
    return "\n".join(visible(line) for line in lines) + "\n"


def render_history_json(entries: Sequence[HistoryEntry]) -> str:
    """`{"scalecheck": 1, "commits": [...], "changes": [...]}`, commits oldest first."""
    changes = growth_changes(entries)
    doc = {
        "scalecheck": 1,
        "commits": [{"commit": e.sha, "description": e.description,
                     "kernels": [{"kernel": km.kernel, "metric": km.metric, "status": km.status,
                                  "growth": _growth(km),
                                  "formula": km.model.formula() if km.model is not None else None}
                                 for km in e.table.models]} for e in entries],
        "changes": [{"kernel": k, "metric": m, "commit": entries[i].sha, "before": before, "after": after}
                    for (k, m), found in sorted(changes.items()) for i, before, after in found],
    }
    return json.dumps(doc, indent=1) + "\n"


def _growth(km: KernelModel) -> str:
    return km.model.growth_text() if km.model is not None else km.status
