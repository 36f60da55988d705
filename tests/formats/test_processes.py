"""Reading processes: the `processes` section, JSON Lines, kernels named `[process] call path`; exact errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from scalecheck.core.cluster import cluster
from scalecheck.errors import InputError
from scalecheck.formats import read_measurements
from scalecheck.formats.processes import (group_measurements, read_processes, read_processes_section,
                                          read_processes_sections, split_process)

MakeFile = Callable[[str, str], Path]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "cluster"


def test_section_reads_paths_and_pairs_in_both_spellings(make_file: MakeFile) -> None:
    path = make_file("p.json", """\
        {"scalecheck": 1,
         "processes": [
          {"id": "rank 0", "paths": ["main->solve->MPI_Send", "main / init", ["main", "io", "write"]]},
          {"id": 1, "tag": "run 2", "pairs": [["main", "solve"], "solve -> compute"], "paths": ["main"]}
         ]}
        """)
    first, second = read_processes(path)
    assert (first.id, first.tag) == ("rank 0", "")
    assert first.pairs == {("main", "solve"), ("solve", "MPI_Send"), ("main", "init"), ("main", "io"),
                           ("io", "write")}
    assert (second.id, second.tag, second.pairs) == ("1", "run 2", {("main", "solve"), ("solve", "compute")})
    assert second.source is not None and str(second.source) == f"{path}: processes[1]"


def test_section_stands_beside_measurements_which_still_read(make_file: MakeFile) -> None:
    path = make_file("m.json", """\
        {"scalecheck": 1, "parameters": ["p"],
         "measurements": [{"kernel": "main->solve", "point": {"p": 2}, "values": [1.0]}],
         "processes": [{"id": "rank 0", "paths": ["main->solve"]}]}
        """)
    assert [p.id for p in read_processes(path)] == ["rank 0"]
    assert [p.id for p in read_processes_section(path) or ()] == ["rank 0"]
    assert [s.kernel for s in read_measurements(path).series] == ["main->solve"]


def test_read_processes_section_is_none_without_one() -> None:
    assert read_processes_section(EXAMPLES.parents[0] / "check" / "baseline.json") is None
    assert read_processes_section(EXAMPLES.parents[0] / "mpi_data_mean.txt") is None


def test_sections_of_several_files_join_and_a_process_in_two_is_an_error(make_file: MakeFile) -> None:
    a = make_file("a.json", '{"scalecheck": 1, "processes": [{"id": "rank 0", "paths": ["main->a"]}]}')
    b = make_file("b.json", '{"scalecheck": 1, "processes": [{"id": "rank 1", "paths": ["main->a"]}]}')
    joined = read_processes_sections([a, b])
    assert joined is not None and [p.id for p in joined] == ["rank 0", "rank 1"]
    with pytest.raises(InputError) as info:
        read_processes_sections([a, b, a])
    assert str(info.value) == (f"{a}: processes[0]: process 'rank 0' is also in the processes section of {a}"
                               "; fix: give each run's processes a \"tag\", or keep them in one file")


def test_json_lines_with_and_without_header(make_file: MakeFile) -> None:
    lines = '{"id": "rank 0", "paths": ["main->solve"]}\n{"id": "rank 1", "pairs": [["main", "solve"]]}\n'
    for text in (lines, '{"scalecheck": 1}\n' + lines):
        processes = read_processes(make_file("p.jsonl", text))
        assert [(p.id, p.pairs) for p in processes] == [("rank 0", {("main", "solve")}),
                                                        ("rank 1", {("main", "solve")})]
    assert len(read_processes(make_file("p.json", lines))) == 2  # JSON Lines in a .json file
    assert [p.id for p in read_processes(make_file("one.json", lines.split("\n")[0]))] == ["rank 0"]


def test_kernels_named_with_a_process_give_processes(make_file: MakeFile) -> None:
    path = make_file("m.jsonl", """\
        {"kernel": "[rank 0] main->solve->MPI_Send", "point": {"p": 2}, "value": 1.0}
        {"kernel": "[rank 0] main->io", "point": {"p": 2}, "value": 2.0}
        {"kernel": "[rank 1] main->solve->MPI_Send", "point": {"p": 2}, "value": 1.5}
        {"kernel": "main->total", "point": {"p": 2}, "value": 9.0}
        """)
    processes = read_processes(path)
    assert [(p.id, sorted(p.pairs)) for p in processes] == [
        ("rank 0", [("main", "io"), ("main", "solve"), ("solve", "MPI_Send")]),
        ("rank 1", [("main", "solve"), ("solve", "MPI_Send")])]
    assert split_process("[rank 3]  main/solve") == ("rank 3", ("main", "solve"))
    assert split_process("main->solve") is None and split_process("[] main") is None


def test_measurements_pool_per_group(make_file: MakeFile) -> None:
    rows = ["kernel,p,value"]
    rows += [f"[rank {r}] main->solve,{p},{p * (2 if r == 0 else 1) + r / 100}" for r in range(4) for p in (2, 4)]
    rows += [f"[rank {r}] main->{'io' if r == 0 else 'solve'}->write,{p},1" for r in range(4) for p in (2, 4)]
    path = make_file("m.csv", "\n".join(rows) + "\n")
    run = read_measurements(path)
    pooled = group_measurements(run, cluster(read_processes(path)))
    series = {s.kernel: s for s in pooled.series}
    assert sorted(series) == ["[rank 0] main->io->write", "[rank 0] main->solve", "[rank 1-3] main->solve",
                              "[rank 1-3] main->solve->write"]
    np.testing.assert_allclose(np.sort(series["[rank 1-3] main->solve"].values, axis=1),
                               [[2.01, 2.02, 2.03], [4.01, 4.02, 4.03]])


@pytest.mark.parametrize("process, message", [
    ('{"id": "rank 3", "paths": ["main"]}', "process 'rank 3' has no pairs"),
    ('{"id": "rank 3", "pairs": []}', "process 'rank 3' has no pairs"),
    ('{"id": "rank 3"}', "process 'rank 3' has no pairs"),
    ('{"id": "rank 3", "pairs": [["main", "solve"], ["main"]]}',
     "process 'rank 3': pair 2 must be two names, got [\"main\"]"),
    ('{"id": "rank 3", "pairs": [["a", "b", "c"]]}',
     "process 'rank 3': pair 1 must be two names, got [\"a\", \"b\", \"c\"]"),
    ('{"id": "rank 3", "pairs": ["a->b->c"]}', "process 'rank 3': pair 1 must be two names, got \"a->b->c\""),
    ('{"id": "rank 3", "pairs": [[1, 2]]}', "process 'rank 3': pair 1 must be two names, got [1, 2]"),
    ('{"id": "rank 3", "pairs": [["main", " "]]}', "process 'rank 3': pair 1 must be two names, got [\"main\", \" \"]"),
    ('{"id": "rank 3", "pairs": {"main": "solve"}}', "process 'rank 3': 'pairs' must be a list, got an object"),
    ('{"id": "rank 3", "paths": ["main->->solve"]}',
     "process 'rank 3': path 1 must be a call path of names, got \"main->->solve\""),
    ('{"paths": ["main->solve"]}', "missing key 'id'"),
    ('{"id": "", "paths": ["main->solve"]}', "'id' must be a non-empty string or a whole number, got \"\""),
    ('{"id": "rank 3", "path": ["main->solve"]}', "unknown key 'path'"),
    ('"rank 3"', "a process must be an object, got a string"),
])
def test_section_errors_name_file_line_and_record(make_file: MakeFile, process: str, message: str) -> None:
    path = make_file("p.json", '{"scalecheck": 1,\n "processes": [\n  {"id": "rank 0", "paths": ["main->a"]},\n'
                               f"  {process}\n]}}\n")
    with pytest.raises(InputError) as info:
        read_processes(path)
    assert f"{info.value.where}: {info.value.problem}" == f"{path}:4: processes[1]: {message}"
    assert info.value.fix


def test_error_messages_and_fixes_in_full(make_file: MakeFile) -> None:
    empty = make_file("e.json", '{"scalecheck": 1, "processes": [{"id": "rank 0", "paths": ["main"]}]}')
    with pytest.raises(InputError) as info:
        read_processes(empty)
    assert str(info.value) == (
        f"{empty}:1: processes[0]: process 'rank 0' has no pairs"
        '; fix: give it "pairs": [["caller", "callee"], ...] or "paths": ["main->solve->MPI_Send", ...] '
        "(a path needs at least two names)")
    pair = make_file("b.jsonl", '{"id": "rank 0", "pairs": [["main"]]}\n')
    with pytest.raises(InputError) as info:
        read_processes(pair)
    assert str(info.value) == (f"{pair}:1: process 'rank 0': pair 1 must be two names, got [\"main\"]"
                               "; fix: write each pair as [\"caller\", \"callee\"] or \"caller->callee\"")


def test_duplicate_process_ids_name_both_places(make_file: MakeFile) -> None:
    path = make_file("d.json", """\
        {"scalecheck": 1,
         "processes": [
          {"id": "rank 0", "paths": ["main->a"]},
          {"id": "rank 0", "tag": "run 2", "paths": ["main->a"]},
          {"id": "rank 0", "paths": ["main->b"]}
         ]}
        """)
    with pytest.raises(InputError) as info:
        read_processes(path)
    assert str(info.value) == (
        f"{path}:5: processes[2]: duplicate process id 'rank 0' (first at processes[0], line 3)"
        '; fix: give every process its own id, or a "tag" naming its run to tell runs apart')
    lines = make_file("d.jsonl", '{"id": 7, "tag": "a", "paths": ["main->a"]}\n\n{"id": "7", "tag": "a", '
                                 '"paths": ["main->b"]}\n')
    with pytest.raises(InputError) as info:
        read_processes(lines)
    assert f"{info.value.where}: {info.value.problem}" == \
        f"{lines}:3: duplicate process id '7' in tag 'a' (first at line 1)"


@pytest.mark.parametrize("text, message", [
    ('{"scalecheck": 1, "processes": []}', ':1: processes: "processes" must be a non-empty list of processes, '
                                           "got an empty list"),
    ('{"scalecheck": 1, "processes": {"rank 0": []}}', ':1: processes: "processes" must be a non-empty list of '
                                                       "processes, got an object"),
    ('{"processes": [{"id": "rank 0", "paths": ["main->a"]}]}', ": missing key 'scalecheck' (the format version)"),
    ('{"scalecheck": 2, "processes": [{"id": "rank 0", "paths": ["main->a"]}]}',
     ":1: unsupported scalecheck format version 2; this scalecheck reads version 1"),
])
def test_section_shape_errors(make_file: MakeFile, text: str, message: str) -> None:
    path = make_file("s.json", text)
    with pytest.raises(InputError) as info:
        read_processes(path)
    assert f"{info.value.where}: {info.value.problem}" == f"{path}{message}"


def test_measurements_without_processes_say_how_to_add_them() -> None:
    path = EXAMPLES.parents[0] / "mpi_data_mean.txt"
    with pytest.raises(InputError) as info:
        read_processes(path)
    assert str(info.value) == (
        f"{path}: no processes: the file has no \"processes\" section and no kernel named '[process] call path'"
        "; fix: add a \"processes\" section ({\"id\": \"rank 0\", \"paths\": [\"main->solve\"]}, ...), or name "
        "kernels with the process in brackets, e.g. '[rank 3] main->solve->MPI_Send'")


def test_a_process_whose_kernels_are_single_names_has_no_pairs(make_file: MakeFile) -> None:
    path = make_file("m.csv", "kernel,p,value\n[rank 0] main,2,1.0\n[rank 1] main->solve,2,1.0\n")
    with pytest.raises(InputError) as info:
        read_processes(path)
    assert str(info.value) == (f"{path}: kernel '[rank 0] main': process 'rank 0' has no pairs: its kernels are "
                               "single names; fix: name kernels by their call path, e.g. '[rank 3] main->solve'")
