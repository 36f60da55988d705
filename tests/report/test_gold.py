"""Gold files: the exact text and Markdown reports of the README's example check, and the `model` table of the
README's example model run, rendered through the command line (`scalecheck.cli.main`) as a user sees them.

The runs are deterministic (the bootstrap resamples are seeded), so the output is compared byte for byte with
tests/gold/. The examples are copied to a temporary folder and named by relative paths, as in the README, so
that no path of this checkout and no settings file of the folders above it reach the output.

When a report changes on purpose, regenerate the gold files and review their diff:

    SCALECHECK_UPDATE_GOLD=1 python -m pytest tests/report/test_gold.py

On a mismatch the actual output is saved under tests/actual/ (git-ignored) beside a diff in the failure message.
"""

from __future__ import annotations

import difflib
import os
import shutil
from pathlib import Path

import pytest

from scalecheck.cli import OK, REGRESSION, main

ROOT = Path(__file__).resolve().parents[2]
GOLD = ROOT / "tests" / "gold"
ACTUAL = ROOT / "tests" / "actual"
UPDATE = os.environ.get("SCALECHECK_UPDATE_GOLD") == "1"  # read at import: the tests' environment is cleaned
EXAMPLE_FILES = ("examples/check/candidate.json", "examples/check/baseline.json", "examples/mpi_data_mean.txt")
CHECK = ["check", "examples/check/candidate.json", "--baseline", "examples/check/baseline.json", "--target", "p=4096"]
MODEL = ["model", "examples/mpi_data_mean.txt", "--target", "p=65536"]
REGENERATE = "SCALECHECK_UPDATE_GOLD=1 python -m pytest tests/report/test_gold.py"

# gold file: (command line, exit status, the file the command writes, or None for its standard output)
CASES = {
    "text/check_example.txt": (CHECK, REGRESSION, None),
    "markdown/check_example.md": ([*CHECK, "--markdown", "comment.md"], REGRESSION, "comment.md"),
    "text/model_mpi_data_mean.txt": (MODEL, OK, None),
}


@pytest.fixture
def examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder holding copies of the example files at their paths in the repository, and an empty
    scalecheck.toml, so that the built-in defaults apply whatever lies above the folder."""
    for name in EXAMPLE_FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, tmp_path / name)
    (tmp_path / "scalecheck.toml").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def compare_with_gold(name: str, actual: str) -> None:
    """`actual` equals tests/gold/NAME byte for byte, or (with SCALECHECK_UPDATE_GOLD=1) becomes it."""
    gold = GOLD / name
    if UPDATE:
        gold.parent.mkdir(parents=True, exist_ok=True)
        gold.write_bytes(actual.encode("utf-8"))
        return
    if not gold.exists():
        pytest.fail(f"no gold file {gold.relative_to(ROOT)}: {REGENERATE}", pytrace=False)
    expected = gold.read_bytes().decode("utf-8")
    if actual != expected:
        saved = ACTUAL / name
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_bytes(actual.encode("utf-8"))
        diff = "".join(difflib.unified_diff(expected.splitlines(keepends=True), actual.splitlines(keepends=True),
                                            f"gold/{name}", f"actual/{name}"))
        pytest.fail(f"{name} differs from its gold file (actual output in {saved.relative_to(ROOT)}); if the "
                    f"change is intended: {REGENERATE}\n{diff}", pytrace=False)


@pytest.mark.parametrize("name", CASES)
def test_report_matches_its_gold_file(name: str, examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args, status, written = CASES[name]
    code = main(args)
    out, err = capsys.readouterr()
    assert (code, err) == (status, ""), err
    compare_with_gold(name, out if written is None else (examples / written).read_bytes().decode("utf-8"))


def test_markdown_report_is_written_beside_the_same_text_report(examples: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Writing the Markdown does not change what is printed: the text gold file holds for both command lines."""
    main(CASES["markdown/check_example.md"][0])
    compare_with_gold("text/check_example.txt", capsys.readouterr().out)


def test_gold_files_are_the_ones_the_cases_write() -> None:
    """No stale gold file: every file under tests/gold/ belongs to a case here."""
    found = sorted(p.relative_to(GOLD).as_posix() for p in GOLD.rglob("*") if p.is_file())
    assert found == sorted(CASES)


def test_a_difference_is_reported_with_a_diff_and_the_actual_output(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    monkeypatch.setattr(f"{__name__}.GOLD", tmp_path / "gold")
    monkeypatch.setattr(f"{__name__}.ACTUAL", tmp_path / "actual")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    monkeypatch.setattr(f"{__name__}.UPDATE", False)
    (tmp_path / "gold" / "text").mkdir(parents=True)
    (tmp_path / "gold" / "text" / "case.txt").write_text("PASS\nsame\n", encoding="utf-8")
    with pytest.raises(pytest.fail.Exception) as info:
        compare_with_gold("text/case.txt", "FAIL\nsame\n")
    assert "-PASS\n+FAIL\n" in str(info.value) and "SCALECHECK_UPDATE_GOLD=1" in str(info.value)
    assert (tmp_path / "actual" / "text" / "case.txt").read_text(encoding="utf-8") == "FAIL\nsame\n"
    compare_with_gold("text/case.txt", "PASS\nsame\n")  # equal: no failure
