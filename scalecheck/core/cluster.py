"""Process clustering by caller->callee pairs (Weber's diploma thesis, seed `process-clustering-function-pairs.txt`).

Each process is the set of function pairs it executed. The steps, each bounded:

1. **Hashing first**: processes with equal pair sets are one set from here on, so every later step costs in the
   number of *distinct* sets k, not in the number of processes.
2. **Transitive closure** (default) of each distinct set, so that small recording technicalities (a skipped frame,
   a thread whose stack starts below the function that spawned it) vanish: (a, c) is in the closure when c is
   reachable from a. Reachability is a fixpoint over bitsets of callees, so recursion (cycles) cannot loop.
   Equal closed sets are hashed together again.
3. **Threshold grouping** (optional): a set whose Jaccard index with the set of a group with more processes is at
   least `similarity` joins that group (the most similar one), for sets that differ by a few stray pairs.
4. **Concept lattice** of the k group sets: its intents are the intersections of the sets, built incrementally
   (each new set intersected with every intent so far), so the work is O(k * concepts); node labels are reduced as
   in formal concept analysis (a node shows only the processes that sit exactly there and the pairs that first
   appear there, with their share of all pairs). The lattice can grow exponentially in k for adversarial sets; it
   is built only for at most `max_sets` distinct sets and `max_concepts` nodes. Beyond that the result falls back
   to the groups alone, with their subsumption order and Jaccard similarities among the `max_sets` largest
   groups, and a note saying so.

Sets are Python ints (bit i = pair i) inside this module: intersection, subset test and popcount are single
machine-word loops in C.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from scalecheck.data.processes import Clustering, Concept, Group, Pair, Process, ProcessSet

MAX_SETS = 100  # distinct pair sets for which the lattice is built
MAX_CONCEPTS = 1000  # lattice nodes; beyond this the lattice is dropped (worst case: exponential in the sets)
_PROBES = 8  # known closures a new raw set is tested against before its own closure is computed


@dataclass(frozen=True)
class ClusterOptions:
    """How processes are grouped.

    closure: compare transitive closures of the pair sets (the seed's way to iron out recording technicalities).
    similarity: None for exact groups; else a Jaccard index in (0, 1] at or above which a set joins a bigger group.
    max_sets, max_concepts: caps of the concept lattice (see the module's docstring).
    """

    closure: bool = True
    similarity: float | None = None
    max_sets: int = MAX_SETS
    max_concepts: int = MAX_CONCEPTS

    def __post_init__(self) -> None:
        if self.similarity is not None and not 0 < self.similarity <= 1:
            raise ValueError(f"similarity must be in (0, 1], got {self.similarity}")
        if self.max_sets < 1 or self.max_concepts < 1:
            raise ValueError("max_sets and max_concepts must be at least 1")


def cluster(processes: ProcessSet | Sequence[Process], options: ClusterOptions = ClusterOptions()) -> Clustering:
    """Group `processes` by their (closed) pair sets and build the concept lattice of the groups.

    Parameters
    ----------
    processes : the processes, each with a non-empty pair set.
    options : closure, similarity threshold and the caps of the lattice.

    Returns
    -------
    Clustering with the groups (most processes first), the subsumption order and Jaccard similarities between
    groups, and the lattice's concepts (top first) unless a cap was reached (then `note` says so).

    Cost: O(total pairs) for hashing; O(edges * depth) per distinct set for the closure; O(k^2) for the order
    and similarities and O(k * concepts + concepts^2) for the lattice, with k and concepts capped.
    """
    members = tuple(processes)
    if not members:
        raise ValueError("cluster needs at least one process")
    distinct, owners = distinct_sets(members, options.closure)
    index: dict[Pair, int] = {}
    masks = [_mask(s, index) for s in distinct]
    pairs = list(index)
    counts = [len(o) for o in owners]
    leaders, variants = _threshold_groups(masks, counts, options.similarity)
    order = sorted(range(len(leaders)), key=lambda g: (-sum(counts[s] for s in leaders[g]), min(
        min(owners[s]) for s in leaders[g])))
    groups: list[Group] = []
    group_masks: list[int] = []
    for g in order:
        procs = tuple(members[i] for i in sorted(i for s in leaders[g] for i in owners[s]))
        head = leaders[g][0]
        groups.append(Group(process_ranges(procs), procs, distinct[head], variants[g]))
        group_masks.append(masks[head])
    total = 0
    for m in group_masks:
        total |= m
    shown = min(len(groups), options.max_sets)
    similarity = _jaccard_matrix(group_masks[:shown])
    subsumes = _covers(group_masks[:shown])
    note = ""
    concepts: tuple[Concept, ...] = ()
    if len(groups) > options.max_sets:
        note = (f"{len(groups)} distinct pair sets exceed the lattice cap of {options.max_sets}: the groups are "
                f"listed without a lattice; subsumption and similarity cover the {shown} largest groups")
    else:
        built = _lattice(group_masks, groups, pairs, total.bit_count(), options.max_concepts, len(members))
        if built is None:
            note = (f"the lattice of the {len(groups)} distinct pair sets has more than {options.max_concepts} "
                    "nodes: the groups are listed without a lattice, with their subsumption order and similarity")
        else:
            concepts = built
    return Clustering(tuple(groups), concepts, subsumes, similarity, len(members), total.bit_count(),
                      options.closure, options.similarity, note)


def transitive_closure(pairs: Iterable[Pair]) -> frozenset[Pair]:
    """All (a, c) with c reachable from a over `pairs`; a cycle makes its functions reach themselves.

    Cost: O(edges * depth) big-int ORs; terminates on any graph, recursion included.
    """
    names: dict[str, int] = {}
    decoded: list[str] = []
    return _pairs_of_reach(_reach(frozenset(pairs), names, decoded), decoded)


def jaccard(a: frozenset[Pair], b: frozenset[Pair]) -> float:
    """|a & b| / |a | b|; 1.0 for two empty sets."""
    union = len(a | b)
    return len(a & b) / union if union else 1.0


# --- hashing and closure ------------------------------------------------------------------------------------------

def distinct_sets(members: Sequence[Process], closure: bool) -> tuple[list[frozenset[Pair]], list[list[int]]]:
    """The distinct pair sets of `members` (their transitive closures when `closure`), in order of first appearance,
    and for each the indices of the processes holding it.

    Cost: one hash per process. With the closure, each distinct raw set S is first tested against the closed sets C
    found so far, each kept with a *core*: a set whose closure is C. If core <= S <= C, the closure of S is C
    (closure(core) <= closure(S) <= closure(C) = C), at the cost of two subset tests. Only sets that pass no test
    are closed by graph search; a set that turns out to share a known closure narrows that closure's core to the
    common pairs, when those still close to C. Processes of one role that differ by a few stray pairs thus cost one
    graph search per role, not per process.
    """
    by_raw: dict[frozenset[Pair], list[int]] = {}
    for i, process in enumerate(members):
        by_raw.setdefault(process.pairs, []).append(i)
    if not closure:
        return list(by_raw), list(by_raw.values())
    names: dict[str, int] = {}
    decoded: list[str] = []
    closed: list[frozenset[Pair]] = []
    cores: list[frozenset[Pair]] = []
    owners: list[list[int]] = []
    by_key: dict[frozenset[tuple[int, int]], int] = {}
    recent: list[int] = []  # the closures that matched last, tested first; at most _PROBES of them
    for raw, holders in by_raw.items():
        found = next((c for c in recent if cores[c] <= raw <= closed[c]), None)
        if found is None:
            reach = _reach(raw, names, decoded)
            key = frozenset(reach.items())  # canonical: the same closure gives the same callers and reachable sets
            found = by_key.get(key)
            if found is None:
                found = by_key[key] = len(closed)
                closed.append(_pairs_of_reach(reach, decoded))
                cores.append(raw)
                owners.append([])
            else:
                narrower = cores[found] & raw
                if narrower != cores[found] and frozenset(_reach(narrower, names, decoded).items()) == key:
                    cores[found] = narrower
        owners[found].extend(holders)
        if found in recent:
            recent.remove(found)
        recent.insert(0, found)
        del recent[_PROBES:]
    return closed, [sorted(o) for o in owners]


def _reach(pairs: frozenset[Pair], names: dict[str, int], decoded: list[str]) -> dict[int, int]:
    """For each caller, the bitset of the functions it reaches; functions are numbered by `names` (bit i is
    `decoded[i]`), both grown here, so that numbers are shared by every set."""
    kids: dict[int, list[int]] = {}
    reach: dict[int, int] = {}
    for caller, callee in pairs:
        a = names.get(caller)
        if a is None:
            a = names[caller] = len(decoded)
            decoded.append(caller)
        b = names.get(callee)
        if b is None:
            b = names[callee] = len(decoded)
            decoded.append(callee)
        kids.setdefault(a, []).append(b)
        reach[a] = reach.get(a, 0) | (1 << b)
    order = _postorder(kids)
    changed = True
    while changed:  # monotone and bounded by the number of functions: no recursion can make it loop
        changed = False
        for v in order:
            got = reach[v]
            for u in kids[v]:
                got |= reach.get(u, 0)
            if got != reach[v]:
                reach[v] = got
                changed = True
    return reach


def _postorder(kids: dict[int, list[int]]) -> list[int]:
    """Callers with callees visited first, so that one pass settles a call graph without cycles."""
    seen: set[int] = set()
    order: list[int] = []
    for root in kids:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(kids[root]))]
        while stack:
            node, rest = stack[-1]
            for child in rest:
                if child not in seen and child in kids:
                    seen.add(child)
                    stack.append((child, iter(kids[child])))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def _pairs_of_reach(reach: dict[int, int], names: list[str]) -> frozenset[Pair]:
    out = []
    for a, bits in reach.items():
        while bits:
            low = bits & -bits
            out.append((names[a], names[low.bit_length() - 1]))
            bits ^= low
    return frozenset(out)


def _mask(pairs: frozenset[Pair], index: dict[Pair, int]) -> int:
    bits = 0
    for pair in pairs:
        bits |= 1 << index.setdefault(pair, len(index))
    return bits


# --- groups, order, similarity --------------------------------------------------------------------------------------

def _threshold_groups(masks: list[int], counts: list[int], similarity: float | None
                      ) -> tuple[list[list[int]], list[int]]:
    """Sets merged into groups: each group's first set is its leader (the set of the group's most processes)."""
    if similarity is None or similarity >= 1:
        return [[s] for s in range(len(masks))], [1] * len(masks)
    order = sorted(range(len(masks)), key=lambda s: (-counts[s], s))
    sizes = [m.bit_count() for m in masks]
    leaders: list[int] = []
    groups: dict[int, list[int]] = {}
    for s in order:
        best, best_j = -1, -1.0
        for lead in leaders:
            small, big = sorted((sizes[s], sizes[lead]))
            if small < similarity * big:  # the Jaccard index cannot reach the threshold: skip the set operations
                continue
            j = _jaccard_bits(masks[s], masks[lead])
            if j >= similarity and j > best_j:
                best, best_j = lead, j
        if best < 0:
            leaders.append(s)
            groups[s] = [s]
        else:
            groups[best].append(s)
    return [groups[lead] for lead in leaders], [len(groups[lead]) for lead in leaders]


def _jaccard_bits(a: int, b: int) -> float:
    union = (a | b).bit_count()
    return (a & b).bit_count() / union if union else 1.0


def _jaccard_matrix(masks: list[int]) -> np.ndarray:
    g = len(masks)
    out = np.eye(g)
    for i in range(g):
        for j in range(i + 1, g):
            out[i, j] = out[j, i] = _jaccard_bits(masks[i], masks[j])
    return out


def _covers(masks: list[int]) -> tuple[tuple[int, int], ...]:
    """(a, b) for every b whose set is a proper subset of a's with no set in between (the Hasse diagram)."""
    below = [[b for b in range(len(masks)) if b != a and masks[b] & masks[a] == masks[b]] for a in range(len(masks))]
    out = []
    for a, subsets in enumerate(below):
        for b in subsets:
            if not any(c != b and masks[b] & masks[c] == masks[b] for c in subsets):
                out.append((a, b))
    return tuple(out)


# --- the concept lattice --------------------------------------------------------------------------------------------

def _lattice(masks: list[int], groups: list[Group], pairs: list[Pair], total: int, max_concepts: int,
             n_processes: int) -> tuple[Concept, ...] | None:
    """The concepts of the group sets, top first, or None when there are more than `max_concepts`."""
    intents: dict[int, None] = {}
    for m in masks:
        found = {m: None}
        for intent in intents:
            found[intent & m] = None
        intents.update(found)
        if len(intents) > max_concepts:
            return None
    # top first: fewest pairs, then the larger extent; ties broken by the first group in the extent
    extents = {i: tuple(g for g, m in enumerate(masks) if m & i == i) for i in intents}
    ordered = sorted(intents, key=lambda i: (i.bit_count(), -len(extents[i]), extents[i]))
    children: list[list[int]] = [[] for _ in ordered]
    parents: list[list[int]] = [[] for _ in ordered]
    for n, intent in enumerate(ordered):
        for m, other in enumerate(ordered[n + 1:], start=n + 1):
            if other & intent != intent or other == intent:
                continue
            if any(ordered[c] & other == ordered[c] for c in children[n]):
                continue  # a child already lies between: not a cover
            children[n].append(m)
            parents[m].append(n)
    own_group = {m: g for g, m in enumerate(masks)}
    out = []
    for n, intent in enumerate(ordered):
        above = 0
        for p in parents[n]:
            above |= ordered[p]
        own = intent & ~above
        group = own_group.get(intent)
        extent = extents[intent]
        if group is not None:
            label = groups[group].label
        elif len(extent) == len(groups):
            label = f"all {n_processes} processes"
        else:
            label = "common to " + process_ranges([p for g in extent for p in groups[g].processes])
        out.append(Concept(_unmask(intent, pairs), extent, group, _unmask(own, pairs),
                           own.bit_count() / total if total else 0.0, tuple(parents[n]), tuple(children[n]), label))
    return tuple(out)


def _unmask(bits: int, pairs: list[Pair]) -> frozenset[Pair]:
    out = []
    while bits:
        low = bits & -bits
        out.append(pairs[low.bit_length() - 1])
        bits ^= low
    return frozenset(out)


# --- process ranges ---------------------------------------------------------------------------------------------------

_DIGITS = re.compile(r"([0-9]+)")  # ASCII digits: int() would read other scripts' digits as 0-9 and show them so
_MAX_DIGITS = 18  # longer numbers in ids are kept as text: Python refuses to convert 4,300 digits and more


def process_ranges(processes: Iterable[Process]) -> str:
    """The processes as compact ranges: `rank 1-3`, `rank 0-3 thread 1-2`, `rank 0,2,5-7`; tagged processes as
    `run1: rank 0-3; run2: rank 0`.

    Numbers in ids are compressed field by field; ids without numbers, or with zero-padded numbers (`node007`) or
    numbers of more than 18 digits, are listed as they are.
    """
    by_tag: dict[str, list[str]] = {}
    for p in processes:
        by_tag.setdefault(p.tag, []).append(p.id)
    parts = []
    for tag in sorted(by_tag):
        text = _ranges_of_ids(by_tag[tag])
        parts.append(f"{tag}: {text}" if tag else text)
    return "; ".join(parts)


def _ranges_of_ids(ids: Sequence[str]) -> str:
    by_skeleton: dict[tuple[str, ...], list[tuple[int, ...]]] = {}
    for pid in ids:
        skeleton, numbers = _split_id(pid)
        by_skeleton.setdefault(skeleton, []).append(numbers)
    out: list[str] = []
    for skeleton in sorted(by_skeleton, key=lambda s: (s, min(by_skeleton[s]))):
        out.extend(_compress(skeleton, set(by_skeleton[skeleton])))
    return ", ".join(out)


def _split_id(pid: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """`rank 0 thread 1` -> (("rank ", " thread ", ""), (0, 1)): texts around the numbers, and the numbers."""
    texts = [""]
    numbers: list[int] = []
    for n, token in enumerate(_DIGITS.split(pid)):
        if n % 2 == 1 and (token == "0" or not token.startswith("0")) and len(token) <= _MAX_DIGITS:
            numbers.append(int(token))
            texts.append("")
        else:
            texts[-1] += token
    return tuple(texts), tuple(numbers)


def _compress(skeleton: tuple[str, ...], numbers: set[tuple[int, ...]]) -> list[str]:
    """The ids of one skeleton as few range expressions: the first number's values that share the same set of
    remaining numbers become one range, recursively."""
    if len(skeleton) == 1:
        return [skeleton[0]]
    rests: dict[int, set[tuple[int, ...]]] = {}
    for numbers_ in numbers:
        rests.setdefault(numbers_[0], set()).add(numbers_[1:])
    by_rest: dict[frozenset[tuple[int, ...]], list[int]] = {}
    for first in sorted(rests):
        by_rest.setdefault(frozenset(rests[first]), []).append(first)
    out: list[str] = []
    for rest, firsts in by_rest.items():
        head = skeleton[0] + _runs(firsts)
        out.extend(head + tail for tail in _compress(skeleton[1:], set(rest)))
    return out


def _runs(values: list[int]) -> str:
    """Sorted integers as `0-3,5,7-9`."""
    runs: list[list[int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
