"""Speed of process clustering on 10,000 processes, and whether the roles are recovered after closure.

    python benchmarks/cluster_speed.py [--processes 10000] [--roles 5] [--seed 8]

Seeded synthetic processes: `--roles` roles, each a random call tree of about 40-70 functions below a shared
`main` (a common part every role calls, plus a role-specific part with one recursive cycle). Every process takes
one role at random and gets 1 to 4 random "technicality" pairs: (a, c) with c two or more calls below a, as a
recording that skips a frame produces. So nearly every raw pair set is distinct, and the closure of each equals
its role's closure.

Target: the clustering, closure included, in under 2 s, with the roles recovered as the groups.
The references, measured in the same run: the plain hashing step (grouping equal raw sets: the seed's "you can
get pretty far by just hashing", a lower bound of any clustering), and a naive closure (a breadth-first search from
every function of every process, then hashing) on the same processes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scalecheck.core.cluster import ClusterOptions, cluster  # noqa: E402
from scalecheck.data.processes import Pair, Process, ProcessSet  # noqa: E402
from scalecheck.formats.processes import read_processes  # noqa: E402


def role_tree(role: int, rng: np.random.Generator) -> list[Pair]:
    """A call tree: main -> a shared part (the same for every role) and a role-specific part with a cycle."""
    shared = [("main", "init"), ("main", "timestep"), ("init", "MPI_Init"), ("init", "read_config")]
    shared += [("timestep", f"common{k}") for k in range(4)]
    shared += [(f"common{k}", f"common{k}_{j}") for k in range(4) for j in range(3)]
    pairs = list(shared)
    nodes = [f"role{role}_f0"]
    pairs.append((f"common{role % 4}", nodes[0]))
    for n in range(1, int(rng.integers(25, 55))):
        parent = nodes[int(rng.integers(max(0, len(nodes) - 8), len(nodes)))]  # deep trees, not flat ones
        nodes.append(f"role{role}_f{n}")
        pairs.append((parent, nodes[-1]))
    pairs.append((nodes[-1], nodes[len(nodes) // 2]))  # recursion: the closure must not loop on it
    return pairs


def skipped_frames(pairs: list[Pair]) -> list[Pair]:
    """Every (a, c) with c exactly two calls below a: the pairs a recording that skips a frame would write."""
    kids: dict[str, list[str]] = {}
    for a, b in pairs:
        kids.setdefault(a, []).append(b)
    return sorted({(a, c) for a, bs in kids.items() for b in bs for c in kids.get(b, []) if c != a})


def synthetic(processes: int, roles: int, seed: int) -> tuple[list[Process], list[int]]:
    rng = np.random.default_rng(seed)
    trees = [role_tree(r, rng) for r in range(roles)]
    skips = [skipped_frames(t) for t in trees]
    out, truth = [], []
    for i in range(processes):
        role = int(rng.integers(roles))
        extra = rng.choice(len(skips[role]), size=int(rng.integers(1, 5)), replace=False)
        out.append(Process(f"rank {i}", "", frozenset(trees[role]) | {skips[role][k] for k in extra}))
        truth.append(role)
    return out, truth


def naive_closure(pairs: frozenset[Pair]) -> frozenset[Pair]:
    kids: dict[str, set[str]] = {}
    for a, b in pairs:
        kids.setdefault(a, set()).add(b)
    closed = set()
    for start in kids:
        seen: set[str] = set()
        todo = list(kids[start])
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(kids.get(node, ()))
        closed.update((start, node) for node in seen)
    return frozenset(closed)


def timed(function):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=10_000)
    parser.add_argument("--roles", type=int, default=5)
    parser.add_argument("--seed", type=int, default=8)
    args = parser.parse_args()
    processes, truth = synthetic(args.processes, args.roles, args.seed)
    pairs = np.mean([len(p.pairs) for p in processes])
    print(f"{args.processes:,} processes, {args.roles} roles, {pairs:.1f} pairs per process on average "
          f"(1 to 4 of them technicality pairs)")

    groups, t_hash = timed(lambda: Counter(p.pairs for p in processes))
    print(f"  hashing the raw sets (reference)            {t_hash:7.3f} s   {len(groups):,} distinct raw sets")
    naive, t_naive = timed(lambda: Counter(naive_closure(p.pairs) for p in processes))
    print(f"  naive closure per process, then hashing     {t_naive:7.3f} s   {len(naive):,} distinct closed sets")

    result, t_closed = timed(lambda: cluster(processes, ClusterOptions(closure=True)))
    found = sorted(tuple(sorted(truth[int(p.id.split()[1])] for p in g.processes)) for g in result.groups)
    expected = sorted(tuple(sorted(r for r in truth if r == role)) for role in set(truth))
    recovered = found == expected
    lattice = f"lattice of {len(result.concepts)} nodes" if result.lattice else "no lattice"
    print(f"  scalecheck cluster, with closure            {t_closed:7.3f} s   {len(result.groups)} groups, {lattice}; "
          f"{t_closed / t_hash:.1f}x the hashing, {t_naive / t_closed:.1f}x faster than the naive closure")
    print(f"    roles recovered as the groups: {'yes' if recovered else 'NO'}; under the 2 s target: "
          f"{'yes' if t_closed < 2 else 'NO'}")

    raw, t_raw = timed(lambda: cluster(processes, ClusterOptions(closure=False)))
    print(f"  scalecheck cluster, without closure         {t_raw:7.3f} s   {len(raw.groups):,} groups "
          f"({'lattice' if raw.lattice else 'no lattice: ' + raw.note.split(':')[0]})")
    merged, t_sim = timed(lambda: cluster(processes, ClusterOptions(closure=False, similarity=0.9)))
    print(f"  without closure, --similarity 0.9           {t_sim:7.3f} s   {len(merged.groups):,} groups")

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "processes.jsonl"
        import json

        path.write_text("".join(json.dumps({"id": p.id, "pairs": sorted(map(list, p.pairs))}) + "\n"
                                for p in processes))
        read, t_read = timed(lambda: read_processes(path))
        assert isinstance(read, ProcessSet) and len(read) == len(processes)
        print(f"  reading them from JSON Lines ({path.stat().st_size / 1e6:.1f} MB)        {t_read:7.3f} s")


if __name__ == "__main__":
    main()
