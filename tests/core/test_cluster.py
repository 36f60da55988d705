"""Process clustering: the seed's weather example with and without closure, closure on recursion, the lattice
against brute force, threshold grouping, the caps, and process ranges."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from scalecheck.core.cluster import (ClusterOptions, cluster, distinct_sets, jaccard, process_ranges,
                                     transitive_closure)
from scalecheck.data.processes import Pair, Process, pairs_of_path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "cluster"

# The seed's weather simulation: 4 MPI ranks x 3 threads (thread 0 is the rank's own). The worker threads call no
# MPI or I/O, and their recorded stacks start at the function that opened the parallel region (a recording
# technicality: dynamics->column_dynamics, where the rank records dynamics->omp_parallel->column_dynamics).
# Rank 0 also does I/O.
RANK = ["main->timestep->dynamics->omp_parallel->column_dynamics->advect->flux_limiter",
        "main->timestep->dynamics->omp_parallel->column_dynamics->diffuse->laplacian",
        "main->timestep->dynamics->halo_exchange->MPI_Isend",
        "main->timestep->dynamics->halo_exchange->MPI_Irecv",
        "main->timestep->dynamics->halo_exchange->MPI_Waitall",
        "main->timestep->physics->omp_parallel->column_physics->microphysics->saturation_adjust",
        "main->timestep->physics->omp_parallel->column_physics->radiation->shortwave",
        "main->timestep->physics->omp_parallel->column_physics->radiation->longwave",
        "main->timestep->physics->omp_parallel->column_physics->turbulence"]
IO = ["main->timestep->write_output->nc_put_vara", "main->timestep->write_checkpoint->pwrite"]
THREAD = ["dynamics->column_dynamics->advect->flux_limiter", "dynamics->column_dynamics->diffuse->laplacian",
          "physics->column_physics->microphysics->saturation_adjust", "physics->column_physics->radiation->shortwave",
          "physics->column_physics->radiation->longwave", "physics->column_physics->turbulence"]


def pairs(paths: list[str]) -> frozenset[Pair]:
    return frozenset(p for path in paths for p in pairs_of_path(path.split("->")))


def weather() -> list[Process]:
    out = []
    for rank in range(4):
        out.append(Process(f"rank {rank}", "", pairs(RANK + (IO if rank == 0 else []))))
        out += [Process(f"rank {rank} thread {t}", "", pairs(THREAD)) for t in (1, 2)]
    return out


def test_weather_example_file_is_the_seed_example() -> None:
    from scalecheck.formats.processes import read_processes

    assert list(read_processes(EXAMPLES / "weather.json")) == weather()


def test_weather_without_closure_groups_threads_ranks_1_to_3_and_rank_0() -> None:
    result = cluster(weather(), ClusterOptions(closure=False))
    assert [g.label for g in result.groups] == ["rank 0-3 thread 1-2", "rank 1-3", "rank 0"]
    assert [len(g.processes) for g in result.groups] == [8, 3, 1]
    assert result.total_pairs == 27 and result.lattice and result.note == ""
    top, threads, ranks, rank0 = result.concepts
    # the seed: "37% of the pairs are shared between all processes and threads. 41% are unique to processes 1-3."
    assert (top.label, top.group, len(top.own_pairs), f"{top.share:.0%}") == ("all 12 processes", None, 10, "37%")
    assert (ranks.label, len(ranks.own_pairs), f"{ranks.share:.0%}") == ("rank 1-3", 11, "41%")
    assert (threads.label, len(threads.own_pairs)) == ("rank 0-3 thread 1-2", 2)
    assert (rank0.label, rank0.own_pairs) == ("rank 0", pairs(RANK + IO) - pairs(RANK))
    # not a chain: threads and ranks only share the top; rank 0 does all that ranks 1-3 do
    assert top.children == (1, 2) and threads.parents == (0,) and threads.children == ()
    assert ranks.children == (3,) and rank0.parents == (2,)
    assert result.subsumes == ((2, 1),)
    assert sum(c.share for c in result.concepts) == pytest.approx(1.0)


def test_weather_with_closure_is_a_chain_threads_below_ranks_1_to_3_below_rank_0() -> None:
    result = cluster(weather())
    threads, ranks, rank0 = result.groups
    assert [g.label for g in result.groups] == ["rank 0-3 thread 1-2", "rank 1-3", "rank 0"]
    assert threads.pairs < ranks.pairs < rank0.pairs  # rank 0 subsumes ranks 1-3, which subsume the threads
    assert result.subsumes == ((1, 0), (2, 1))
    assert [(c.label, c.group, c.parents, c.children) for c in result.concepts] == [
        ("rank 0-3 thread 1-2", 0, (), (1,)), ("rank 1-3", 1, (0,), (2,)), ("rank 0", 2, (1,), ())]
    assert result.concepts[0].groups == (0, 1, 2)  # the top: every process does what the threads do
    assert sum(c.share for c in result.concepts) == pytest.approx(1.0)
    assert result.similarity.shape == (3, 3) and np.allclose(np.diag(result.similarity), 1.0)
    assert result.similarity[1, 2] == pytest.approx(jaccard(ranks.pairs, rank0.pairs))
    assert result.group_of("rank 2 thread 1") is threads and result.group_of("rank 0") is rank0


@pytest.mark.parametrize("edges, expected", [
    ([("f", "f")], {("f", "f")}),
    ([("main", "f"), ("f", "g"), ("g", "f")],
     {("main", "f"), ("main", "g"), ("f", "g"), ("g", "f"), ("f", "f"), ("g", "g")}),
    ([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")],
     {(x, y) for x in "abc" for y in "abcd"}),
], ids=["self-recursion", "mutual recursion", "cycle with an exit"])
def test_transitive_closure_terminates_on_recursion(edges: list[Pair], expected: set[Pair]) -> None:
    assert transitive_closure(edges) == expected


def _reachability(edges: set[Pair]) -> frozenset[Pair]:
    """Independent answer: Warshall's algorithm on a boolean matrix."""
    names = sorted({n for e in edges for n in e})
    at = {n: i for i, n in enumerate(names)}
    m = np.zeros((len(names), len(names)), dtype=bool)
    for a, b in edges:
        m[at[a], at[b]] = True
    for k in range(len(names)):
        m |= m[:, k:k + 1] & m[k:k + 1, :]
    return frozenset((names[i], names[j]) for i, j in zip(*np.nonzero(m)))


def _random_graph(rng: np.random.Generator, n: int, m: int) -> set[Pair]:
    return {(f"f{a}", f"f{b}") for a, b in rng.integers(0, n, (m, 2))}


def test_transitive_closure_matches_warshall_on_random_graphs_with_cycles(rng: np.random.Generator) -> None:
    for _ in range(50):
        edges = _random_graph(rng, 12, 20)
        assert transitive_closure(edges) == _reachability(edges)


def test_distinct_sets_with_closure_match_hashing_the_closures(rng: np.random.Generator) -> None:
    """The core shortcut (core <= S <= C) must give exactly the groups of closing every set on its own."""
    roles = [_random_graph(rng, 10, 14) for _ in range(4)]
    processes = []
    for i in range(300):
        role = roles[int(rng.integers(4))]
        implied = sorted(_reachability(role) - role)
        extra = {implied[k] for k in rng.choice(len(implied), size=min(2, len(implied)), replace=False)}
        stray = _random_graph(rng, 10, 1) if rng.random() < 0.2 else set()  # sometimes a real difference
        dropped = set(list(role)[:1]) if rng.random() < 0.1 else set()
        processes.append(Process(f"p{i}", "", frozenset((role | extra | stray) - dropped) or frozenset(role)))
    sets, owners = distinct_sets(processes, closure=True)
    expected: dict[frozenset[Pair], list[int]] = {}
    for i, p in enumerate(processes):
        expected.setdefault(_reachability(set(p.pairs)), []).append(i)
    assert sorted(map(sorted, owners)) == sorted(map(sorted, expected.values()))
    assert all(sets[n] == _reachability(set(processes[o[0]].pairs)) for n, o in enumerate(owners))


def test_lattice_matches_brute_force_on_random_families(rng: np.random.Generator) -> None:
    for _ in range(20):
        family = list({frozenset(_random_graph(rng, 5, int(rng.integers(2, 8)))) for _ in range(5)})
        processes = [Process(f"p{i}", "", s) for i, s in enumerate(family)]
        result = cluster(processes, ClusterOptions(closure=False))
        intents = {frozenset.intersection(*c) for r in range(1, len(family) + 1)
                   for c in itertools.combinations(family, r)}
        assert {c.pairs for c in result.concepts} == intents
        for c in result.concepts:
            above = [d.pairs for d in result.concepts if d.pairs < c.pairs]
            covers = {d for d in above if not any(d < e < c.pairs for e in above)}
            assert {result.concepts[p].pairs for p in c.parents} == covers
            assert c.own_pairs == c.pairs - frozenset().union(*covers)
            assert {result.groups[g].pairs for g in c.groups} == {s for s in family if c.pairs <= s}
        assert sum(c.share for c in result.concepts) == pytest.approx(1.0)


def test_similarity_threshold_merges_near_identical_sets_into_the_most_common() -> None:
    base = pairs(RANK)
    processes = [Process(f"rank {r}", "", base) for r in range(6)]
    processes += [Process("rank 6", "", base | {("main", "stray")}), Process("rank 7", "", pairs(THREAD))]
    assert len(cluster(processes).groups) == 3
    result = cluster(processes, ClusterOptions(similarity=0.9))
    assert [(g.label, g.variants) for g in result.groups] == [("rank 0-6", 2), ("rank 7", 1)]
    assert result.groups[0].pairs == transitive_closure(base)  # the most common set represents the group
    assert len(cluster(processes, ClusterOptions(similarity=1.0)).groups) == 3


def test_too_many_distinct_sets_fall_back_to_groups_with_order_and_similarity() -> None:
    result = cluster(weather(), ClusterOptions(closure=False, max_sets=2))
    assert not result.lattice and result.concepts == ()
    assert result.note == ("3 distinct pair sets exceed the lattice cap of 2: the groups are listed without a "
                           "lattice; subsumption and similarity cover the 2 largest groups")
    assert len(result.groups) == 3 and result.similarity.shape == (2, 2) and result.subsumes == ()


def test_a_lattice_over_its_node_cap_is_dropped() -> None:
    # each set lacks another of 8 pairs: the intersections of k sets lack k pairs, 2^8 - 1 nodes in all
    universe = [(f"f{i}", f"g{i}") for i in range(8)]
    processes = [Process(f"p{i}", "", frozenset(universe[:i] + universe[i + 1:])) for i in range(8)]
    result = cluster(processes, ClusterOptions(closure=False, max_concepts=50))
    assert not result.lattice and len(result.groups) == 8
    assert result.note == ("the lattice of the 8 distinct pair sets has more than 50 nodes: the groups are listed "
                           "without a lattice, with their subsumption order and similarity")
    assert len(cluster(processes, ClusterOptions(closure=False)).concepts) == 2**8 - 1


@pytest.mark.parametrize("ids, text", [
    (["rank 1", "rank 2", "rank 3"], "rank 1-3"),
    ([f"rank {r} thread {t}" for r in range(4) for t in (1, 2)], "rank 0-3 thread 1-2"),
    (["rank 0", "rank 2", "rank 5", "rank 6", "rank 7"], "rank 0,2,5-7"),
    (["rank 0 thread 1", "rank 0 thread 2", "rank 1 thread 1"], "rank 0 thread 1-2, rank 1 thread 1"),
    (["rank 3", "rank 0 thread 1", "io-server"], "io-server, rank 3, rank 0 thread 1"),
    (["node007", "node008"], "node007, node008"),
    (["0", "1", "2"], "0-2"),
    (["rank 1", "rank 2", "rank 1" + "0" * 5000], "rank 1-2, rank 1" + "0" * 5000),  # beyond int(): as text
    (["rank \u0663", "rank 3"], "rank 3, rank \u0663"),  # another script's digit stays as written
])
def test_process_ranges(ids: list[str], text: str) -> None:
    assert process_ranges(Process(i, "", frozenset({("a", "b")})) for i in ids) == text


def test_process_ranges_name_tags() -> None:
    procs = [Process(f"rank {r}", tag, frozenset({("a", "b")})) for tag in ("run2", "run1") for r in range(2)]
    assert process_ranges(procs) == "run1: rank 0-1; run2: rank 0-1"


def test_options_reject_bad_thresholds() -> None:
    with pytest.raises(ValueError, match="similarity"):
        ClusterOptions(similarity=0.0)
    with pytest.raises(ValueError, match="at least 1"):
        ClusterOptions(max_sets=0)
