"""`scalecheck cluster` through main(argv), and structure findings through `scalecheck check`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scalecheck.cli import OK, REGRESSION, USAGE_ERROR, main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "cluster"
WEATHER = EXAMPLES / "weather.json"


def test_cluster_prints_the_seed_example_without_closure(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", str(WEATHER), "--no-closure"]) == OK
    out = capsys.readouterr().out
    assert out.splitlines()[0] == (f"{WEATHER}: 12 processes in 3 groups, 27 distinct caller->callee pairs "
                                   "(without transitive closure)")
    tree = [line for line in out.splitlines() if re.match(r"\s*(all|rank)", line)]
    assert tree == ["all 12 processes: 37% (10 pairs)",
                    "  rank 0-3 thread 1-2 (8 processes): 7% (2 pairs)",
                    "  rank 1-3 (3 processes): 41% (11 pairs)",
                    "    rank 0 (1 process): 15% (4 pairs)"]
    assert "        + timestep->write_checkpoint, timestep->write_output, write_checkpoint->pwrite, " \
           "write_output->nc_put_vara\n" in out
    assert "  3  rank 0                   1     25  rank 1-3  rank 1-3 (0.84)\n" in out


def test_cluster_with_closure_prints_a_chain(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", str(WEATHER)]) == OK
    out = capsys.readouterr().out
    tree = [line for line in out.splitlines() if re.match(r"\s*rank", line)]
    assert tree == ["rank 0-3 thread 1-2 (8 processes): 25% (27 pairs)",
                    "  rank 1-3 (3 processes): 66% (72 pairs)",
                    "    rank 0 (1 process): 9% (10 pairs)"]
    assert ("        + timestep->write_checkpoint, timestep->write_output, write_checkpoint->pwrite, "
            "write_output->nc_put_vara (and 6 implied by the closure)\n") in out


def test_cluster_writes_json_and_dot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_json, out_dot = tmp_path / "groups.json", tmp_path / "lattice.dot"
    assert main(["cluster", str(WEATHER), "--json", str(out_json), "--dot", str(out_dot)]) == OK
    doc = json.loads(out_json.read_text())
    assert (doc["processes"], doc["closure"], doc["lattice"], doc["total_pairs"]) == (12, True, True, 109)
    assert [g["label"] for g in doc["groups"]] == ["rank 0-3 thread 1-2", "rank 1-3", "rank 0"]
    assert doc["groups"][2]["processes"] == [{"id": "rank 0", "tag": ""}]
    assert [(c["label"], c["parents"], c["children"]) for c in doc["concepts"]] == [
        ("rank 0-3 thread 1-2", [], [1]), ("rank 1-3", [0], [2]), ("rank 0", [1], [])]
    assert doc["subsumes"] == [[1, 0], [2, 1]] and len(doc["similarity"]) == 3
    assert "timestep->write_output" in doc["concepts"][2]["own_pairs"]
    dot = out_dot.read_text()
    assert dot.startswith("digraph processes {\n") and dot.endswith("}\n")
    assert '  c2 [label="rank 0 (1 process)\\n9% (10 pairs)"];\n' in dot
    assert "  c0 -> c1;\n  c1 -> c2;\n" in dot
    assert sorted(p.name for p in tmp_path.iterdir()) == ["groups.json", "lattice.dot"]  # no temp files left


def test_dot_labels_of_hostile_ids_are_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "p.jsonl"
    hostile = 'x"];\nevil [label="\\N'
    data.write_text(json.dumps({"id": hostile, "paths": ["main->a"]}) + "\n" +
                    json.dumps({"id": "rank 1", "paths": ["main->b"]}) + "\n")
    out_dot = tmp_path / "l.dot"
    assert main(["cluster", str(data), "--dot", str(out_dot)]) == OK
    lines = out_dot.read_text().splitlines()
    labels = [line for line in lines if "[label=" in line]
    assert len(labels) == 3 and len(lines) == 3 + 3 + 2 + 1  # header, nodes, edges, closing brace
    for line in labels:  # each label one dot string: quotes and backslashes escaped, no raw newline
        assert re.fullmatch(r'  c\d \[label="(?:[^"\\\n]|\\.)*"(, style=dashed)?\];', line), line
    assert '\\"];\\\\nevil [label=\\"\\\\N' in out_dot.read_text()
    assert "\n" not in capsys.readouterr().out.split("\n", 1)[0]


@pytest.mark.parametrize("body, message", [
    ('{"id": "rank 3"}\n', ":1: process 'rank 3' has no pairs; fix: give it \"pairs\""),
    ('{"id": "rank 3", "pairs": [["main"]]}\n', ":1: process 'rank 3': pair 1 must be two names, got [\"main\"]; fix: "),
    ('{"id": "rank 3", "paths": ["a->b"]}\n{"id": "rank 3", "paths": ["a->c"]}\n',
     ":2: duplicate process id 'rank 3' (first at line 1); fix: "),
])
def test_bad_input_is_one_error_with_a_fix_and_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       body: str, message: str) -> None:
    data = tmp_path / "p.jsonl"
    data.write_text(body)
    assert main(["cluster", str(data)]) == USAGE_ERROR
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"scalecheck: error: {data}{message}")
    assert "; fix: " in captured.err and "Traceback" not in captured.err


@pytest.mark.parametrize("value", ["0", "1.5", "-0.2"])
def test_similarity_outside_0_1_is_a_usage_error(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", str(WEATHER), "--similarity", value]) == USAGE_ERROR
    assert capsys.readouterr().err.startswith(f"scalecheck: error: --similarity must be a Jaccard index in (0, 1], "
                                              f"got {float(value):g}; fix: ")


def test_similarity_merges_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "p.jsonl"
    paths = ["main->solve->MPI_Send", "main->solve->compute->dgemm", "main->init->MPI_Init", "main->io->write"]
    rows = [{"id": f"rank {r}", "paths": paths + (["solve->timer"] if r == 5 else [])} for r in range(8)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["cluster", str(data), "--similarity", "0.85"]) == OK  # 14 of 16 closed pairs shared: 0.875
    out = capsys.readouterr().out
    assert "8 processes in 1 group," in out
    assert "similarity >= 0.85: 2 distinct pair sets merged into 1 groups (each shows its most common set)" in out


def test_cluster_without_lattice_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "p.jsonl"
    data.write_text("".join(json.dumps({"id": f"p{i}", "pairs": [["main", f"f{i}"]]}) + "\n" for i in range(120)))
    assert main(["cluster", str(data)]) == OK
    out = capsys.readouterr().out
    assert ("note: 120 distinct pair sets exceed the lattice cap of 100: the groups are listed without a lattice; "
            "subsumption and similarity cover the 100 largest groups") in out
    assert "concept lattice" not in out and "  ... and 70 more groups (--json lists them all)" in out


def test_help_lists_cluster_and_explains_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "cluster" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["cluster", "--help"])
    out = capsys.readouterr().out
    for text in ("--no-closure", "--similarity T", "--dot OUT", "--json OUT", "'[rank 3] main->solve->MPI_Send'",
                 "at most 100 distinct pair sets and 1000 nodes", "exit status: 0 success, 2 bad input"):
        assert text in out


def test_check_reports_a_structure_finding(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["check", str(EXAMPLES / "candidate.json"), "--baseline", str(EXAMPLES / "baseline.json"),
            "--bootstrap", "20", "--no-github"]
    assert main(args) == OK  # a structure finding warns by default
    out = capsys.readouterr().out
    assert re.search(r"\nwarning +structure +rank 0 +call pairs\n    rank 0 now also calls write_checkpoint->fsync\n",
                     out)
    assert main([*args, "--fail-on", "growth,structure"]) == REGRESSION
    assert "FAIL" in capsys.readouterr().out


def test_check_needs_processes_on_both_sides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads((EXAMPLES / "candidate.json").read_text())
    del doc["processes"]
    candidate = tmp_path / "candidate.json"
    candidate.write_text(json.dumps(doc))
    args = ["check", str(candidate), "--baseline", str(EXAMPLES / "baseline.json"), "--bootstrap", "20",
            "--no-github", "--fail-on", "structure"]
    assert main(args) == OK  # only the baseline has processes: no structure finding
    assert capsys.readouterr().out.startswith("PASS: no new scalability problem\n")
