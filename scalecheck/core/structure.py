"""Which processes changed what they do between a baseline and a candidate: `structure` findings of the check.

The processes of both sides are clustered together (the same hashing and closure as `cluster`), so a set both sides
share is one set. Processes are matched by (tag, id):

- a process whose (closed) set changed: "rank 0 now also calls write_checkpoint->fsync" (or "no longer calls"),
  one finding per pair of old and new set, naming the processes as ranges;
- new processes whose set no baseline process has: a group that appeared (new ids with a set the baseline knows,
  such as ranks 4-7 of a larger run doing what ranks 1-3 did, are no change);
- baseline processes gone, whose set no candidate process has: a group that disappeared.

The pairs named are the raw pairs on one side that the other side's closed set lacks, so a pair the closure
implies anyway (a recording technicality) is never reported as a change.
"""

from __future__ import annotations

from collections.abc import Sequence

from scalecheck.core.cluster import ClusterOptions, distinct_sets, jaccard, process_ranges
from scalecheck.data.processes import Pair, Process, ProcessSet, pair_text
from scalecheck.data.verdict import Finding

METRIC = "call pairs"  # the metric column of structure findings
SHOWN_PAIRS = 5  # pairs named in a message; the evidence lists them all


def structure_findings(baseline: ProcessSet | Sequence[Process], candidate: ProcessSet | Sequence[Process],
                       options: ClusterOptions = ClusterOptions()) -> tuple[Finding, ...]:
    """Findings of kind "structure" for processes whose pair sets changed, groups that appeared and groups that
    disappeared, in the order of the processes they name.

    Cost: that of `distinct_sets` on both sides together, plus O(changed processes * pairs).
    """
    base, cand = tuple(baseline), tuple(candidate)
    sets, owners = distinct_sets(base + cand, options.closure)
    set_of = [0] * (len(base) + len(cand))
    for s, indices in enumerate(owners):
        for i in indices:
            set_of[i] = s
    base_set = {p.key: set_of[i] for i, p in enumerate(base)}
    cand_set = {p.key: set_of[len(base) + i] for i, p in enumerate(cand)}
    base_sets, cand_sets = set(base_set.values()), set(cand_set.values())
    base_by_key = {p.key: p for p in base}

    changed: dict[tuple[int, int], list[tuple[Process, Process]]] = {}
    appeared: dict[int, list[Process]] = {}
    for p in cand:
        s = cand_set[p.key]
        if p.key in base_set:
            if base_set[p.key] != s:
                changed.setdefault((base_set[p.key], s), []).append((base_by_key[p.key], p))
        elif s not in base_sets:
            appeared.setdefault(s, []).append(p)
    disappeared: dict[int, list[Process]] = {}
    for p in base:
        s = base_set[p.key]
        if p.key not in cand_set and s not in cand_sets:
            disappeared.setdefault(s, []).append(p)

    def members(side: dict[tuple[str, str], int], processes: tuple[Process, ...], s: int) -> str:
        group = [p for p in processes if side[p.key] == s]
        closed = " with the closure" if options.closure else ""
        return f"group {process_ranges(group)} ({_count(len(group))}, {len(sets[s])} pairs{closed})"

    out = []
    for (b, c), moved in changed.items():
        added = {pair for _, new in moved for pair in new.pairs - sets[b]}
        removed = {pair for old, _ in moved for pair in old.pairs - sets[c]}
        label = process_ranges(new for _, new in moved)
        out.append(_finding(label, _delta(label, added, removed), added, removed, jaccard(sets[b], sets[c]),
                            members(base_set, base, b), members(cand_set, cand, c)))
    for s, news in appeared.items():
        label = process_ranges(news)
        near = max(sorted(base_sets), key=lambda t: jaccard(sets[s], sets[t]))
        added = {pair for p in news for pair in p.pairs - sets[near]}
        removed = {pair for p in base if base_set[p.key] == near for pair in p.pairs - sets[s]}
        like = process_ranges(p for p in base if base_set[p.key] == near)
        message = (f"new group {label} ({_count(len(news))}) with a pair set no baseline process has; "
                   f"compared with {like}, it {_calls(added, removed, changed=False)}")
        out.append(_finding(label, message, added, removed, jaccard(sets[s], sets[near]),
                            members(base_set, base, near), members(cand_set, cand, s)))
    for s, gone in disappeared.items():
        label = process_ranges(gone)
        near = max(sorted(cand_sets), key=lambda t: jaccard(sets[s], sets[t]))
        added = {pair for p in cand if cand_set[p.key] == near for pair in p.pairs - sets[s]}
        removed = {pair for p in gone for pair in p.pairs - sets[near]}
        like = process_ranges(p for p in cand if cand_set[p.key] == near)
        message = (f"group {label} ({_count(len(gone))}) is gone: no candidate process has its pair set; "
                   f"the closest, {like}, {_calls(added, removed, changed=False)}")
        out.append(_finding(label, message, added, removed, jaccard(sets[s], sets[near]),
                            members(base_set, base, s), members(cand_set, cand, near)))
    return tuple(out)


def _finding(label: str, message: str, added: set[Pair], removed: set[Pair], similarity: float, baseline: str,
             candidate: str) -> Finding:
    evidence: dict[str, object] = {"baseline": baseline, "candidate": candidate, "similarity": round(similarity, 4),
                                   "added": ", ".join(sorted(map(pair_text, added))),
                                   "removed": ", ".join(sorted(map(pair_text, removed)))}
    return Finding(kernel=label, metric=METRIC, kind="structure", message=message, evidence=evidence)


def _delta(label: str, added: set[Pair], removed: set[Pair]) -> str:
    return f"{label} {_calls(added, removed)}"


def _calls(added: set[Pair], removed: set[Pair], *, changed: bool = True) -> str:
    """"now also calls a->b, and no longer calls c->d" (a change), or "also calls a->b, and does not call c->d" (a
    comparison with another group)."""
    parts = []
    if added:
        parts.append(f"{'now also' if changed else 'also'} calls {_listed(added)}")
    if removed:
        parts.append(f"{'no longer calls' if changed else 'does not call'} {_listed(removed)}")
    return ", and ".join(parts) if parts else "calls the same pairs in another way"


def _listed(pairs: set[Pair]) -> str:
    names = sorted(map(pair_text, pairs))
    more = len(names) - SHOWN_PAIRS
    return ", ".join(names[:SHOWN_PAIRS]) + (f" and {more} more" if more > 0 else "")


def _count(n: int) -> str:
    return f"{n} process" if n == 1 else f"{n} processes"
