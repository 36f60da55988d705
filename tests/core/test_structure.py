"""Structure findings: processes of a baseline and a candidate clustered together, matched by id."""

from __future__ import annotations

from dataclasses import replace

from scalecheck.core.cluster import ClusterOptions
from scalecheck.core.structure import structure_findings
from scalecheck.data.processes import Process
from tests.core.test_cluster import RANK, pairs, weather


def with_pairs(processes: list[Process], ids: set[str], added: set[tuple[str, str]] = frozenset(),
               removed: set[tuple[str, str]] = frozenset()) -> list[Process]:
    return [replace(p, pairs=(p.pairs | added) - removed) if p.id in ids else p for p in processes]


def test_unchanged_processes_give_no_finding() -> None:
    assert structure_findings(weather(), weather()) == ()


def test_rank_0_now_also_calls_fsync() -> None:
    candidate = with_pairs(weather(), {"rank 0"}, {("write_checkpoint", "fsync")})
    [finding] = structure_findings(weather(), candidate)
    assert (finding.kind, finding.kernel, finding.metric) == ("structure", "rank 0", "call pairs")
    assert finding.message == "rank 0 now also calls write_checkpoint->fsync"
    assert finding.evidence["baseline"] == "group rank 0 (1 process, 109 pairs with the closure)"
    assert finding.evidence["candidate"] == "group rank 0 (1 process, 112 pairs with the closure)"
    assert finding.evidence["added"] == "write_checkpoint->fsync" and finding.evidence["removed"] == ""


def test_processes_that_change_alike_are_one_finding_with_their_range() -> None:
    candidate = with_pairs(weather(), {"rank 1", "rank 2", "rank 3"}, removed={("halo_exchange", "MPI_Waitall")},
                           added={("halo_exchange", "MPI_Wait")})
    [finding] = structure_findings(weather(), candidate)
    assert finding.message == ("rank 1-3 now also calls halo_exchange->MPI_Wait, and no longer calls "
                               "halo_exchange->MPI_Waitall")


def test_a_pair_the_closure_implies_is_no_change_unless_closure_is_off() -> None:
    candidate = with_pairs(weather(), {"rank 2"}, {("timestep", "halo_exchange")})  # a skipped frame
    assert structure_findings(weather(), candidate) == ()
    [finding] = structure_findings(weather(), candidate, ClusterOptions(closure=False))
    assert finding.message == "rank 2 now also calls timestep->halo_exchange"


def test_more_ranks_doing_known_work_are_no_change() -> None:
    bigger = weather() + [Process(f"rank {r}", "", pairs(RANK)) for r in range(4, 8)]
    assert structure_findings(weather(), bigger) == ()
    assert structure_findings(bigger, weather()) == ()


def test_a_group_appears_and_a_group_disappears() -> None:
    server = Process("io server", "", frozenset({("main", "io_loop"), ("io_loop", "pwrite")}))
    candidate = [p for p in weather() if p.id != "rank 0"] + [server]
    gone, new = sorted(structure_findings(weather(), candidate), key=lambda f: f.kernel, reverse=True)
    assert new.kernel == "io server" and new.message.startswith(
        "new group io server (1 process) with a pair set no baseline process has; compared with rank 0, it also "
        "calls io_loop->pwrite, main->io_loop, and does not call ")
    assert gone.kernel == "rank 0" and gone.message == (
        "group rank 0 (1 process) is gone: no candidate process has its pair set; the closest, rank 1-3, does not "
        "call timestep->write_checkpoint, timestep->write_output, write_checkpoint->pwrite, "
        "write_output->nc_put_vara")


def test_tags_keep_runs_apart() -> None:
    base = [replace(p, tag="run") for p in weather()]
    cand = [replace(p, tag="run") for p in with_pairs(weather(), {"rank 0 thread 1"}, {("physics", "MPI_Barrier")})]
    [finding] = structure_findings(base, cand)
    assert finding.message == "run: rank 0 thread 1 now also calls physics->MPI_Barrier"
