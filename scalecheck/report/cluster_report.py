"""Render a process `Clustering`: an indented tree of the concept lattice for the terminal, JSON, and Graphviz dot."""

from __future__ import annotations

import json
from collections.abc import Iterable

from scalecheck.data.processes import Clustering, Group, Pair, pair_text
from scalecheck.text import visible

SHOWN_PAIRS = 6  # own pairs listed per node in the text; --json has them all
SHOWN_GROUPS = 50  # rows of the groups table in the text
LABEL_WIDTH = 100  # a label of thousands of scattered processes is cut in the text and dot outputs


def render_cluster_text(result: Clustering, source: str = "") -> str:
    """The summary line, the lattice as an indented tree (each node under its first parent), then the groups."""
    closure = "with transitive closure" if result.closure else "without transitive closure"
    lines = [f"{source + ': ' if source else ''}{_count(result.processes)} in {len(result.groups)} "
             f"group{'s' if len(result.groups) != 1 else ''}, {result.total_pairs} distinct caller->callee pairs "
             f"({closure})"]
    merged = sum(g.variants for g in result.groups)
    if result.threshold is not None and merged > len(result.groups):
        lines.append(f"similarity >= {result.threshold:g}: {merged} distinct pair sets merged into "
                     f"{len(result.groups)} groups (each shows its most common set)")
    if result.note:
        lines.append(f"note: {result.note}")
    if result.concepts:
        lines += ["", "concept lattice: a node's processes do everything the nodes above it do, and more;",
                  f"the share is that of the node's own pairs (those first appearing there) among all "
                  f"{result.total_pairs} pairs", ""]
        lines += _tree(result)
    lines += ["", "groups (most processes first):"] + _group_table(result)
    return "\n".join(visible(line) for line in lines) + "\n"


def _tree(result: Clustering) -> list[str]:
    concepts = result.concepts
    direct = [frozenset().union(*(p.pairs for p in g.processes)) for g in result.groups] if result.closure else []
    lines: list[str] = []
    placed: set[int] = set()
    stack = [(0, 0)]  # (concept, depth); concept 0 is the top: every set contains its pairs
    while stack:
        n, depth = stack.pop()
        if n in placed:
            continue
        placed.add(n)
        c = concepts[n]
        indent = "  " * depth
        who = _short(c.label)
        if c.group is not None:
            who += f" ({_count(len(result.groups[c.group].processes))})"
        also = [concepts[p].label for p in c.parents[1:]]
        tail = f"  (also under {', '.join(_short(a, 40) for a in also)})" if also else ""
        lines.append(f"{indent}{who}: {c.share:.0%} ({_pairs(len(c.own_pairs))}){tail}")
        if c.own_pairs:
            lines.append(f"{indent}    + {_own(c.own_pairs, direct, c.groups)}")
        stack.extend((child, depth + 1) for child in reversed(c.children) if concepts[child].parents[0] == n)
    return lines


def _own(own: frozenset[Pair], direct: list[frozenset[Pair]], groups: tuple[int, ...]) -> str:
    """A node's own pairs; with the closure, the pairs its processes call directly first, then a count of those
    the closure added."""
    if not direct:
        return _listed(own)
    called = own & frozenset().union(*(direct[g] for g in groups))
    implied = len(own) - len(called)
    if not called:
        return f"{implied} pairs implied by the closure: {_listed(own)}"
    return _listed(called) + (f" (and {implied} implied by the closure)" if implied else "")


def _group_table(result: Clustering) -> list[str]:
    g = result.similarity.shape[0]
    subsumes: dict[int, list[int]] = {}
    for a, b in result.subsumes:
        subsumes.setdefault(a, []).append(b)
    head = ("#", "processes", "count", "pairs", "subsumes", "most similar (Jaccard)")
    rows = [head]
    for i, group in enumerate(result.groups[:SHOWN_GROUPS]):
        near = ""
        if i < g and g > 1:
            j = max((j for j in range(g) if j != i), key=lambda j: result.similarity[i, j])  # first of equals
            near = f"{_short(result.groups[j].label, 40)} ({result.similarity[i, j]:.2f})"
        below = ", ".join(_short(result.groups[b].label, 40) for b in subsumes.get(i, []))
        rows.append((str(i + 1), _short(group.label, 60), str(len(group.processes)), str(len(group.pairs)), below,
                     near))
    widths = [max(len(r[c]) for r in rows) for c in range(len(head))]
    right = {0, 2, 3}
    out = ["  " + "  ".join(cell.rjust(w) if c in right else cell.ljust(w)
                            for c, (cell, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
    if len(result.groups) > SHOWN_GROUPS:
        out.append(f"  ... and {len(result.groups) - SHOWN_GROUPS} more groups (--json lists them all)")
    return out


def render_cluster_json(result: Clustering, source: str = "") -> str:
    """`{"scalecheck": 1, "groups": [...], "concepts": [...], "subsumes": [...], "similarity": [[...]], ...}`."""
    doc = {
        "scalecheck": 1,
        "source": source,
        "processes": result.processes,
        "closure": result.closure,
        "threshold": result.threshold,
        "total_pairs": result.total_pairs,
        "lattice": result.lattice,
        "note": result.note,
        "groups": [_group(g) for g in result.groups],
        "concepts": [{"label": c.label, "group": c.group, "groups": list(c.groups), "pairs": len(c.pairs),
                      "own_pairs": _sorted(c.own_pairs), "share": c.share, "parents": list(c.parents),
                      "children": list(c.children)} for c in result.concepts],
        "subsumes": [list(edge) for edge in result.subsumes],
        "similarity": [[round(float(v), 6) for v in row] for row in result.similarity],
    }
    return json.dumps(doc, indent=1) + "\n"  # ASCII escapes: a name may hold a lone surrogate


def _group(g: Group) -> dict[str, object]:
    return {"label": g.label, "processes": [{"id": p.id, "tag": p.tag} for p in g.processes],
            "pairs": _sorted(g.pairs), "variants": g.variants}


def render_cluster_dot(result: Clustering) -> str:
    """Graphviz: the lattice's nodes with their processes and shares, edges from general to specific; without a
    lattice, the groups with their subsumption order."""
    lines = ["digraph processes {", "  rankdir=TB;", '  node [shape=box, fontname="Helvetica"];']
    if result.concepts:
        for n, c in enumerate(result.concepts):
            who = c.label if c.group is None else f"{c.label} ({_count(len(result.groups[c.group].processes))})"
            lines.append(f'  c{n} [label="{_dot(_short(who))}\\n{c.share:.0%} ({_pairs(len(c.own_pairs))})"'
                         f'{"" if c.group is not None else ", style=dashed"}];')
        lines += [f"  c{n} -> c{child};" for n, c in enumerate(result.concepts) for child in c.children]
    else:
        for i, g in enumerate(result.groups):
            lines.append(f'  g{i} [label="{_dot(_short(g.label))}\\n{_count(len(g.processes))}, '
                         f'{_pairs(len(g.pairs))}"];')
        lines += [f"  g{b} -> g{a};" for a, b in result.subsumes]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot(text: str) -> str:
    """Text for a double-quoted dot label: no control characters, backslashes and quotes escaped."""
    return visible(text).replace("\\", "\\\\").replace('"', '\\"')


def _sorted(pairs: Iterable[Pair]) -> list[str]:
    return sorted(pair_text(p) for p in pairs)


def _listed(pairs: Iterable[Pair]) -> str:
    names = _sorted(pairs)
    more = len(names) - SHOWN_PAIRS
    return ", ".join(names[:SHOWN_PAIRS]) + (f" and {more} more" if more > 0 else "")


def _short(text: str, width: int = LABEL_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _count(n: int) -> str:
    return f"{n} process" if n == 1 else f"{n} processes"


def _pairs(n: int) -> str:
    return f"{n} pair" if n == 1 else f"{n} pairs"
