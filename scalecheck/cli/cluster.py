"""L6: `scalecheck cluster`: group processes by the caller->callee pairs they execute."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scalecheck.cli._common import OK, command
from scalecheck.errors import ConfigError

EPILOG = """\
examples:
  scalecheck cluster examples/cluster/weather.json
  scalecheck cluster examples/cluster/weather.json --no-closure
  scalecheck cluster processes.jsonl --similarity 0.9 --dot lattice.dot --json groups.json
  dot -Tsvg lattice.dot -o lattice.svg          (Graphviz draws the lattice)

Each process (an MPI rank, a thread) is characterized by the set of caller->callee
pairs it executed, regardless of counts and timing. Processes with equal sets form a
group. The concept lattice orders the groups: a node's processes do everything the
nodes above it do, and more; each node shows only its own processes and the pairs
that first appear there, with their share of all pairs.

By default every set is transitively closed first (a->b and b->c add a->c), so that
recording technicalities, such as a thread whose stack starts below the function that
spawned it, do not split groups. Recursion is fine. --similarity T puts a set into
the group of a more common set when their Jaccard index is at least T.

FILE holds the processes as
  scalecheck JSON  {"scalecheck": 1, "processes": [
                     {"id": "rank 0", "paths": ["main->solve->MPI_Send"]},
                     {"id": "rank 0 thread 1", "tag": "run 2", "pairs": [["solve", "compute"]]}]}
                   beside "measurements" or alone; a path gives its consecutive pairs;
                   "tag" (optional) names the run, ids are distinct within a tag
  JSON Lines       one process object per line
  measurements     in any format, with kernels named '[rank 3] main->solve->MPI_Send'

The lattice is built for at most 100 distinct pair sets and 1000 nodes (its size can
grow exponentially with the sets); beyond that the groups are listed with their
subsumption order and similarities among the 100 largest, and the output says so.

`scalecheck check` compares the processes too when the candidate's and the baseline's
files both have a processes section: a group that appears, disappears or changes its
pairs is a `structure` finding (add structure to --fail-on to fail the build on it).

exit status: 0 success, 2 bad input or usage, 3 internal error."""


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    cluster = command(
        commands, "cluster", help="group processes (ranks, threads) by the caller->callee pairs they execute",
        description="Group processes by the sets of caller->callee pairs they execute and print the hierarchy of "
                    "the groups (a concept lattice) as an indented tree, with process ranges and shares of pairs.",
        epilog=EPILOG)
    cluster.add_argument("file", metavar="FILE", type=Path,
                         help="processes: a scalecheck JSON file with a processes section, JSON Lines of processes, "
                              "or measurements with kernels named '[process] call path'")
    cluster.add_argument("--no-closure", action="store_true",
                         help="compare the pair sets as recorded, without their transitive closure")
    cluster.add_argument("--similarity", type=float, metavar="T",
                         help="also group sets whose Jaccard index with a more common set is at least T, in (0, 1] "
                              "(default: only equal sets)")
    cluster.add_argument("--dot", type=Path, metavar="OUT", help="also write the lattice as Graphviz dot (atomically)")
    cluster.add_argument("--json", type=Path, metavar="OUT",
                         help="also write groups, lattice, order and similarities as JSON (atomically)")
    cluster.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from scalecheck.api import cluster
    from scalecheck.report.cluster_report import render_cluster_dot, render_cluster_json, render_cluster_text
    from scalecheck.files import check_outputs, write_all

    if args.similarity is not None and not 0 < args.similarity <= 1:
        raise ConfigError(f"--similarity must be a Jaccard index in (0, 1], got {args.similarity:g}",
                          fix="use for example --similarity 0.9 (1 keeps only equal sets together)")
    check_outputs({"--json": args.json, "--dot": args.dot})  # before the work
    result = cluster(args.file, closure=not args.no_closure, similarity=args.similarity)
    outputs: list[tuple[Path, str]] = []  # all rendered before any is written: replaced as a set
    if args.json is not None:
        outputs.append((args.json, render_cluster_json(result, str(args.file))))
    if args.dot is not None:
        outputs.append((args.dot, render_cluster_dot(result)))
    write_all(outputs)
    sys.stdout.write(render_cluster_text(result, str(args.file)))
    return OK
