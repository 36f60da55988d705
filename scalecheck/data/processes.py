"""Processes as sets of caller->callee pairs (`Process`, `ProcessSet`), and their clustering as data (`Group`,
`Concept`, `Clustering`).

A *process* is any thread of execution: an MPI rank, a thread, a process of another run. It is characterized by
the set of function pairs (who calls whom) it executed, regardless of counts and timing (seed
`process-clustering-function-pairs.txt`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from scalecheck.errors import Location

Pair = tuple[str, str]  # (caller, callee)


def pair_text(pair: Pair) -> str:
    """`caller->callee`, as call paths are written."""
    return f"{pair[0]}->{pair[1]}"


@dataclass(frozen=True)
class Process:
    """One thread of execution: its id (`rank 3 thread 1`), an optional tag (a run or group name; "" for none), and
    the caller->callee pairs it executed (never empty)."""

    id: str
    tag: str
    pairs: frozenset[Pair]
    source: Location | None = field(default=None, compare=False)  # where it was read, for messages

    def __post_init__(self) -> None:  # caller bugs; the readers check user data with locations first
        if not self.id:
            raise ValueError("a process needs a non-empty id")
        if not self.pairs:
            raise ValueError(f"process {self.id!r} has no pairs")
        if not isinstance(self.pairs, frozenset):
            object.__setattr__(self, "pairs", frozenset(self.pairs))

    @property
    def key(self) -> tuple[str, str]:
        """(tag, id): what identifies a process; ids repeat across runs, which their tags tell apart."""
        return self.tag, self.id

    @property
    def name(self) -> str:
        """`id`, or `tag: id` for a tagged process."""
        return f"{self.tag}: {self.id}" if self.tag else self.id


@dataclass(frozen=True)
class ProcessSet:
    """The processes of one input (a file, or a run's `processes` section), in input order, keys distinct."""

    processes: tuple[Process, ...]
    source: Location | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "processes", tuple(self.processes))
        seen: set[tuple[str, str]] = set()
        for process in self.processes:
            if process.key in seen:
                raise ValueError(f"duplicate process {process.name!r}")
            seen.add(process.key)

    def __len__(self) -> int:
        return len(self.processes)

    def __iter__(self) -> Iterator[Process]:
        return iter(self.processes)


@dataclass(frozen=True)
class Group:
    """Processes that execute the same pair set (after closure, and within the similarity threshold if one is set).

    `pairs` is that set; with a similarity threshold, the set of the group's most common member.
    """

    label: str  # the processes as ranges: "rank 1-3", "rank 0-3 thread 1-2"
    processes: tuple[Process, ...]
    pairs: frozenset[Pair]
    variants: int = 1  # distinct (closed) sets merged into this group by the similarity threshold


@dataclass(frozen=True)
class Concept:
    """One node of the concept lattice: the pairs all its processes share (`pairs`, the intent) and the groups that
    execute them all (`groups`, the extent, indices into `Clustering.groups`).

    Reduced labelling, as in the seed's figures: `group` is the group whose set is exactly `pairs` (None for a node
    no process sits at), `own_pairs` the pairs that first appear here (in no concept above), and `share` their
    number over all pairs of all processes. `parents` and `children` are the covering concepts (indices into
    `Clustering.concepts`): a child's processes do everything the parent's do, and more.
    """

    pairs: frozenset[Pair]
    groups: tuple[int, ...]
    group: int | None
    own_pairs: frozenset[Pair]
    share: float
    parents: tuple[int, ...]
    children: tuple[int, ...]
    label: str  # the group's processes, or the processes the node's pairs are common to


@dataclass(frozen=True, eq=False)  # eq=False: similarity is an ndarray
class Clustering:
    """Processes grouped by their pair sets, with the subsumption order, similarities and (when within the caps)
    the concept lattice.

    `groups` come most processes first. `subsumes` holds the covering pairs (a, b) of the subsumption order: group
    a does everything group b does, and more, with no group in between. `similarity` is the Jaccard index between
    the first `similarity.shape[0]` groups, shape (g, g). `concepts` is empty when the lattice was not built; `note`
    then says why.
    """

    groups: tuple[Group, ...]
    concepts: tuple[Concept, ...]
    subsumes: tuple[tuple[int, int], ...]
    similarity: np.ndarray  # shape (g, g), g <= len(groups); 1.0 on the diagonal
    processes: int
    total_pairs: int  # distinct pairs over all processes (after closure when closure is on)
    closure: bool
    threshold: float | None = None
    note: str = ""

    def __post_init__(self) -> None:
        sim = np.array(self.similarity, dtype=float)
        if sim.ndim != 2 or sim.shape[0] != sim.shape[1] or sim.shape[0] > len(self.groups):
            raise ValueError(f"similarity must have shape (g, g) with g <= {len(self.groups)}, got {sim.shape}")
        sim.setflags(write=False)
        object.__setattr__(self, "similarity", sim)

    @property
    def lattice(self) -> bool:
        """True when the concept lattice was built (distinct sets and concepts within the caps)."""
        return bool(self.concepts)

    def group_of(self, process_id: str, tag: str = "") -> Group:
        """The group holding the process with this id (and tag)."""
        for group in self.groups:
            if any(p.id == process_id and p.tag == tag for p in group.processes):
                return group
        raise KeyError(f"no process {process_id!r}" + (f" tagged {tag!r}" if tag else ""))


def pairs_of_path(frames: Sequence[str]) -> list[Pair]:
    """The consecutive pairs of a call path: (main, solve, MPI_Send) -> (main, solve), (solve, MPI_Send)."""
    return list(zip(frames[:-1], frames[1:]))
