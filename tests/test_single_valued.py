"""Parameters with a single value in every measurement (a Score-P layout such as `mm.x1000y1z1` names y and z, which
never vary) are left out of the models with a note, as Extra-P does, instead of making every kernel insufficient."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scalecheck import cli
from scalecheck.api import fit_models
from scalecheck.data.measurement import Run, Series, single_valued, without_parameters

NOTE = "parameter y = 1 has a single value in every measurement, so the models leave it out"


def extrap_text(path: Path, ys: list[int], slope: float = 1.0, kernel: str = "k") -> Path:
    """An Extra-P text file of `kernel` at p = 2..32 with y taking the values `ys` in turn, linear in p."""
    ps = [2, 4, 8, 16, 32]
    points = " ".join(f"( {p} {ys[i % len(ys)]} )" for i, p in enumerate(ps))
    data = "\n".join(f"DATA {slope * p:g} {slope * p * 1.01:g}" for p in ps)
    path.write_text(f"PARAMETER p\nPARAMETER y\nPOINTS {points}\nREGION {kernel}\n{data}\n", encoding="utf-8")
    return path


def series(points: list[list[float]]) -> Series:
    return Series("k", "time", ("p", "y"), np.array(points, dtype=float), np.ones((len(points), 1)))


def test_single_valued_finds_the_parameters_that_never_vary_across_all_runs() -> None:
    one = Run(("p", "y"), (series([[2, 1], [4, 1]]),))
    other = Run(("p", "y"), (series([[8, 1]]),))
    assert single_valued([one, other]) == {"y": 1.0}
    assert single_valued([one, Run(("p", "y"), (series([[8, 3]]),))]) == {}  # y differs between the runs
    assert single_valued([one, Run(("p", "y"), ())]) == {"y": 1.0}  # a side without measurements does not count
    assert single_valued([Run(("p", "y"), (series([[2, 1]]),))]) == {}  # nothing varies: all kept


def test_without_parameters_keeps_values_rounds_and_notes() -> None:
    s = Series("k", "time", ("p", "y"), np.array([[2.0, 1.0], [4.0, 1.0]]), np.array([[1.0, 2.0], [3.0, 4.0]]),
               "s", None, np.array([[1.0, 2.0], [1.0, 2.0]]), "tool note")
    out = without_parameters(Run(("p", "y"), (s,), {"commit": "abc"}), ["y"]).series[0]
    assert out.parameters == ("p",)
    assert out.points.tolist() == [[2.0], [4.0]]
    assert out.values.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert out.rounds is not None and out.rounds.tolist() == [[1.0, 2.0], [1.0, 2.0]]
    assert (out.unit, out.note) == ("s", "tool note")


def test_model_leaves_out_a_single_valued_parameter_with_a_note(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = extrap_text(tmp_path / "run.txt", [1])
    out = tmp_path / "models.json"
    assert cli.main(["model", str(path), "--target", "p=64,y=1", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "+ 1.005 * p " in text  # modeled in p alone
    assert text.rstrip().endswith(f"notes:\n  {NOTE}")
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["parameters"] == ["p"] and doc["notes"] == [NOTE]
    assert doc["models"][0]["status"] == "ok"


def test_a_target_at_another_value_of_the_dropped_parameter_is_an_error(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = extrap_text(tmp_path / "run.txt", [1])
    assert cli.main(["model", str(path), "--target", "p=64,y=2"]) == 2
    assert capsys.readouterr().err == ("scalecheck: error: the target gives y=2, but every measurement has y=1; "
                                       "fix: leave y out of the target, or measure several values of y\n")


def test_a_parameter_that_varies_is_kept(tmp_path: Path) -> None:
    table = fit_models([extrap_text(tmp_path / "run.txt", [1, 2])])
    assert table.parameters == ("p", "y") and table.notes == ()


def test_check_leaves_out_a_parameter_single_valued_on_both_sides_with_a_notice(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = extrap_text(tmp_path / "base.txt", [1])
    cand = extrap_text(tmp_path / "cand.txt", [1], slope=1.02)
    out = tmp_path / "verdict.json"
    assert cli.main(["check", "--baseline", str(base), str(cand), "--json", str(out)]) == 0
    assert f"notice: {NOTE}" in capsys.readouterr().out
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert NOTE in doc["notices"]


def test_check_of_a_profile_layout_against_an_export_without_its_single_valued_parameters(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / "base.txt"  # the export names p alone
    base.write_text("PARAMETER p\nPOINTS 2 4 8 16 32\nREGION k\n"
                    + "".join(f"DATA {p:g} {p * 1.01:g}\n" for p in (2, 4, 8, 16, 32)), encoding="utf-8")
    cand = extrap_text(tmp_path / "cand.txt", [1])  # p and y = 1, as a folder name such as mm.p8y1 gives
    assert cli.main(["check", "--baseline", str(base), str(cand)]) == 0
    assert f"notice: {NOTE}" in capsys.readouterr().out
    cand2 = extrap_text(tmp_path / "cand2.txt", [1, 2])  # y varies: not the same experiment
    assert cli.main(["check", "--baseline", str(base), str(cand2)]) == 2
    assert "the candidate's parameters (p, y) differ from those of the baseline" in capsys.readouterr().err


CUBE_RUNS = Path(__file__).resolve().parent / "inputs" / "cube" / "single_parameter"


def test_check_of_a_folder_of_score_p_runs_against_a_commit_reads_the_committed_profiles(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pycubexr")
    import shutil
    import subprocess

    repo = tmp_path / "repo"
    shutil.copytree(CUBE_RUNS, repo / "runs", ignore=shutil.ignore_patterns("README*"))
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "c1"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    monkeypatch.chdir(repo)
    out = tmp_path / "verdict.json"
    assert cli.main(["check", "--baseline", "HEAD", "runs", "--json", str(out)]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert not any(text.startswith("no baseline yet") for text in doc["notices"])  # the profiles were compared
    assert "parameters y = 1, z = 1 have a single value in every measurement" in capsys.readouterr().out
